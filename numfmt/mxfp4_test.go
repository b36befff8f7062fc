package numfmt_test

import (
	"bytes"
	"math"
	"testing"

	"inferno/gguf"
	"inferno/numfmt"
)

// TestE8M0Half checks the scale against its definition, 2^(e-128), for
// every byte, and the subnormal and top ones by their bits.
func TestE8M0Half(t *testing.T) {
	for e := range 256 {
		if got, want := numfmt.E8M0Half(uint8(e)), float32(math.Ldexp(1, e-128)); got != want {
			t.Errorf("E8M0Half(%d) = %g, want 2^%d = %g", e, got, e-128, want)
		}
	}
	for _, c := range []struct {
		e    uint8
		bits uint32
	}{{0, 0x00200000}, {1, 0x00400000}, {2, 0x00800000}, {127, 0x3f000000}, {128, 0x3f800000}, {254, 0x7e800000}, {255, 0x7f000000}} {
		if got := math.Float32bits(numfmt.E8M0Half(c.e)); got != c.bits {
			t.Errorf("E8M0Half(%d) bits %#08x, want %#08x", c.e, got, c.bits)
		}
	}
}

// TestMXFP4Dequantize decodes blocks whose values follow from the
// definition: value j is E2M1 code q (0, 0.5, 1, 1.5, 2, 3, 4, 6, then
// the same negated) times the block's scale 2^(e-127).
func TestMXFP4Dequantize(t *testing.T) {
	e2m1 := [16]float64{0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6}
	f, _ := numfmt.FormatOf(gguf.TensorMXFP4)
	for _, e := range []uint8{0, 1, 2, 100, 127, 128, 130, 250, 254} {
		blk := make([]byte, numfmt.BlockMXFP4Bytes)
		blk[0] = e
		for j := range 16 {
			blk[1+j] = byte(j) | byte(15-j)<<4 // value j: code j; value j+16: code 15-j
		}
		got := make([]float32, 32)
		f.Dequantize(got, blk)
		scale := math.Ldexp(1, int(e)-127)
		for j := range 32 {
			code := j
			if j >= 16 {
				code = 15 - (j - 16)
			}
			if want := float32(e2m1[code] * scale); got[j] != want {
				t.Errorf("e=%d value %d (code %d): %g, want %g", e, j, code, got[j], want)
			}
		}
	}
	// A worked block: e = 129 (scale 4), codes 7, 15, 1, 10 at values 0,
	// 16, 1, 17: 6*4 = 24, -24, 0.5*4 = 2, -1*4 = -4.
	blk := []byte{129, 0xf7, 0xa1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	got := make([]float32, 32)
	f.Dequantize(got, blk)
	if got[0] != 24 || got[16] != -24 || got[1] != 2 || got[17] != -4 || got[2] != 0 {
		t.Errorf("worked block: %v", got)
	}
}

// mxfp4Case is a block of 32 values and the bytes ggml's
// quantize_row_mxfp4_ref writes for it, derived by hand from its
// algorithm: e = (uint8_t)(floorf(log2f(amax)) - 2 + 127) (0 for amax 0),
// d = 2^(e-128), and per value the first code of least |level*d - x|,
// the levels being 0, 1, 2, 3, 4, 6, 8, 12 (codes 0..7) and their
// negations (8..15); byte 1+j holds value j's code low and value j+16's
// high.
type mxfp4Case struct {
	name string
	x    map[int]float32 // the nonzero values
	want []byte
}

var mxfp4Cases = []mxfp4Case{
	{"zeros", map[int]float32{3: float32(math.Copysign(0, -1))}, make([]byte, 17)},
	// amax 6: floor(log2 6) = 2, e = 127, d = 0.5: levels 0, .5, 1, 1.5,
	// 2, 3, 4, 6. 6 and -6: codes 7, 15. 0.25, -0.25: tie 0/.5, code 0.
	// 0.75: tie .5/1, code 1; -0.75: code 9. 5: tie 4/6, code 6; -5: 14.
	// 2.6: 3, code 5; -2.4: -2, code 12. 1.25: tie, code 2; 1.75: tie,
	// code 3. 0.1: code 0; 3.5: tie 3/4, code 5.
	{"ties", map[int]float32{0: 6, 16: -6, 1: 0.25, 17: -0.25, 2: 0.75, 18: -0.75, 3: 5, 19: -5,
		4: 2.6, 20: -2.4, 5: 1.25, 21: 1.75, 6: 0.1, 22: 3.5},
		[]byte{127, 0xf7, 0x00, 0x91, 0xe6, 0xc5, 0x32, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	// All negative, amax 4 (exactly 2^2): e = 127, d = 0.5. -1, -2, -3,
	// -4, -0.5: levels -2, -4, -6, -8, -1, codes 10, 12, 13, 14, 9; -0.1:
	// nearer 0 than -0.5, code 0.
	{"negative", map[int]float32{0: -1, 16: -2, 1: -3, 17: -4, 2: -0.5, 18: -0.1},
		[]byte{127, 0xca, 0xed, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	// amax 3e38: floor(log2) = 127, e = 252, d = 2^124 (2.13e37). 3e38 =
	// 14.1d: code 7 (12); -1e38 = -4.7d: -4, code 12; 2e38 = 9.4d: 8,
	// code 6.
	{"large", map[int]float32{0: 3e38, 1: -1e38, 2: 2e38},
		[]byte{252, 0x07, 0x0c, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	// FLT_MAX: log2f rounds to 128, e = 253, d = 2^125; 8d and 12d
	// overflow to infinity, so FLT_MAX gets 6d (code 5).
	{"FLT_MAX", map[int]float32{0: math.MaxFloat32},
		[]byte{253, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	// amax 1e-40 (subnormal): floor(log2) = -133, -133-2+127 = -8, which
	// uint8_t wraps to 248 (d = 2^120): every value is nearest 0.
	{"tiny", map[int]float32{0: 1e-40, 1: -5e-41},
		[]byte{248, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	// amax 2^-124 exactly: e = 1, d = 2^-127 (subnormal). 2^-124 = 8d:
	// code 6; -3*2^-127 = -3d: code 11.
	{"subnormal scale", map[int]float32{0: 0x1p-124, 16: -0x3p-127},
		[]byte{1, 0xb6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	// 8(1-2^-24): log2 is 3 - 8.6e-8, which log2f rounds to 3 (the
	// float32 below 3 is 3 - 2.4e-7): e = 128, d = 1, and the value is
	// nearest 8 (code 6), not 12*0.5 as e = 127 would give; 4.5: 4, code 4.
	{"log2f rounds up", map[int]float32{0: 0x1.fffffep2, 16: 4.5},
		[]byte{128, 0x46, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	// +Inf: log2f(Inf) - 2 + 127 is Inf, which (uint8_t) turns into 0 on
	// x86-64 (cvttss2si's 0x80000000): d = 2^-128, so Inf, 1 and -1 are
	// all as far from every level as from 0 (the first), and NaN never
	// compares: all codes 0.
	{"Inf and NaN", map[int]float32{0: float32(math.Inf(1)), 1: 1, 17: -1, 2: float32(math.NaN())},
		make([]byte, 17)},
}

// TestMXFP4QuantizeKnown checks Quantize against the hand-derived bytes,
// each block alone and all of them as one row.
func TestMXFP4QuantizeKnown(t *testing.T) {
	f, _ := numfmt.FormatOf(gguf.TensorMXFP4)
	var row []float32
	var wantRow []byte
	for _, c := range mxfp4Cases {
		x := make([]float32, 32)
		for i, v := range c.x {
			x[i] = v
		}
		got := make([]byte, numfmt.BlockMXFP4Bytes)
		f.Quantize(got, x)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: % x, want % x", c.name, got, c.want)
		}
		row = append(row, x...)
		wantRow = append(wantRow, c.want...)
	}
	got, err := numfmt.QuantizeRow(nil, row, gguf.TensorMXFP4)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantRow) {
		t.Errorf("the blocks as one row differ from the blocks alone")
	}
}

// TestMXFP4RoundTripExact checks that values on the grid come back
// exactly: a block whose values are levels times a power of two, its
// largest 12 or 8 or 6 times that scale (the scale follows amax), decodes
// to itself.
func TestMXFP4RoundTripExact(t *testing.T) {
	levels := []float32{0, 1, 2, 3, 4, 6, 8, 12, -1, -2, -3, -4, -6, -8, -12}
	f, _ := numfmt.FormatOf(gguf.TensorMXFP4)
	for _, p := range []int{-120, -20, -3, 0, 5, 100} {
		for _, top := range []float32{12, 8, -12, -8} {
			// amax = 12*2^p or 8*2^p: floor(log2) = p+3, d = 2^(p+3-3) = 2^p.
			d := float32(math.Ldexp(1, p))
			x := make([]float32, 32)
			for i := range x {
				x[i] = levels[(i*5)%len(levels)] * d
			}
			x[7] = top * d
			for i := range x {
				if math.Abs(float64(x[i])) > math.Abs(float64(top*d)) {
					x[i] = 0
				}
			}
			q := make([]byte, numfmt.BlockMXFP4Bytes)
			f.Quantize(q, x)
			y := make([]float32, 32)
			f.Dequantize(y, q)
			for i := range x {
				if y[i] != x[i] {
					t.Fatalf("2^%d, top %g: value %d = %g back as %g (e=%d)", p, top, i, x[i], y[i], q[0])
				}
			}
		}
	}
}
