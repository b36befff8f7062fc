package vulkan

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/gguf"
	"inferno/numfmt"
)

// runActH runs act_h over the n tokens of cols float32 values in x and
// returns its float16 activations and their scales, freed when the test
// ends.
func runActH(t *testing.T, d *Device, x *Buffer, n, cols int) (xh, sx *Buffer) {
	t.Helper()
	xh, err := d.NewBuffer(int64(2 * n * cols))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(xh.Free)
	if sx, err = d.NewBuffer(int64(4 * n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sx.Free)
	p, err := d.Pipeline("act_h", rowWG(cols/4, d.SubgroupSize))
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	gx, gy := groups2D(n, 1)
	r.Dispatch(p, gx, gy, 1, PushBytes(&pushActH{X: x.Addr(), XH: xh.Addr(), SX: sx.Addr(), Cols: uint32(cols), N: uint32(n)}))
	if err := d.Submit(r); err != nil {
		t.Fatal(err)
	}
	return xh, sx
}

// actHScale returns act_h's scale of a token whose largest |value| is
// amax: 2^(e-12), 2^e the least power of two above amax (e = 0 for 0 or
// a value that is not finite, at least -100).
func actHScale(amax float32) float32 {
	e := 0
	if amax > 0 && amax <= math.MaxFloat32 {
		_, e = math.Frexp(float64(amax))
		e = max(e, -100)
	}
	return float32(math.Ldexp(1, e-12))
}

// TestActH checks act_h: each token's scale is actHScale's, and its
// values are the token's divided by the scale, rounded to float16 (within
// one unit in the last place: a device may round toward zero), whatever
// their range: normal values, a million times larger (past float16's
// 65,504 unscaled) and smaller (in its subnormals), a row of zeros, a
// power of two (the scale's edge), near float32's largest, and 1e-33
// (where the scale's exponent is clamped); rows shorter than a workgroup,
// and more tokens than a grid's row of workgroups.
func TestActH(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewPCG(5, 6))
	ranges := []float64{1, 1e6, 1e-6, 0, -1, 3e38, 1e-33}
	for _, c := range []struct{ n, cols int }{{len(ranges), 1000}, {len(ranges), 4}, {maxGroups + 5, 4}} {
		x := make([]float32, c.n*c.cols)
		for tok := range c.n {
			row := x[tok*c.cols : (tok+1)*c.cols]
			switch s := ranges[tok%len(ranges)]; {
			case s < 0: // one power of two, 2^20, the rest zeros
				row[rng.IntN(c.cols)] = 1 << 20
			default:
				for i := range row {
					row[i] = float32((2*rng.Float64() - 1) * s)
				}
			}
		}
		xh, sx := runActH(t, d, upload(t, d, F32Bytes(x)), c.n, c.cols)
		hb := make([]byte, 2*c.n*c.cols)
		if err := d.Read(xh, 0, hb); err != nil {
			t.Fatal(err)
		}
		scales := make([]float32, c.n)
		if err := d.Read(sx, 0, F32Bytes(scales)); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for tok := range c.n {
			row := x[tok*c.cols : (tok+1)*c.cols]
			var amax float32
			for _, v := range row {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			want := actHScale(amax)
			if scales[tok] != want {
				t.Errorf("n %d, cols %d, token %d (largest %g): scale %g, want %g", c.n, c.cols, tok, amax, scales[tok], want)
				bad++
			}
			for i, v := range row {
				got := numfmt.F16ToF32(uint16(hb[2*(tok*c.cols+i)]) | uint16(hb[2*(tok*c.cols+i)+1])<<8)
				exact := float64(v) / float64(want)
				if math.Abs(float64(got)-exact) > math.Abs(exact)/1024+1.0/(1<<24) || math.Abs(float64(got)) > 4096 {
					t.Errorf("n %d, cols %d, token %d, value %d: %g scaled by %g to %g, want %g", c.n, c.cols, tok, i, v, 1/want, got, exact)
					bad++
				}
				if bad > 5 {
					t.FailNow()
				}
			}
		}
	}
}

// TestMulMMCMRange checks mul_mm_cm over act_h's activations where the
// tokens' magnitudes span twelve orders (1e-6 to 1e6, a token's values of
// one order): within mulMMCMTol of the magnitudes' sum for every token, as
// at magnitude 1, where float16 activations unscaled would overflow
// (infinite sums) or sink into float16's subnormals (errors of percents).
func TestMulMMCMRange(t *testing.T) {
	d := testDevice(t)
	if !d.CoopMatrix {
		t.Skip("no cooperative matrices")
	}
	for _, typ := range []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorQ4_K, gguf.TensorF16} {
		rng := rand.New(rand.NewPCG(uint64(typ), 12))
		cols := testCols(typ)
		w := newWeightMatrix(t, d, rng, typ, 100, cols)
		x := make([]float32, 512*cols)
		for tok := range 512 {
			s := math.Pow(10, float64(tok%13-6))
			for i := range cols {
				x[tok*cols+i] = float32((2*rng.Float64() - 1) * s)
			}
		}
		xh, sx := runActH(t, d, upload(t, d, F32Bytes(x)), 512, cols)
		name, _ := mulMMCMShader(typ)
		spec := mulMMCMSpec(d.SubgroupSize, d.SharedMemory, d.CoopShape)
		checkMulMM(t, d, rng, name, w, newMulMMRef(w, x, 512), xh, sx, spec[:], func(rows, n int) (uint32, uint32) { return mulMMCMGroups(rows, n, spec) }, mulMMCMTol)
	}
}
