package vulkan

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/gguf"
)

// TestMulMVInputModes checks mul_mv's input modes (XMODE, specialization
// constant 3) for F32, Q8_0 and Q4_K weights on 1, 3 and 8 tokens, with
// mulMVSpec's shape for each, adding and storing: xNorm against
// RMSNorm(x) * gain (tokens of magnitudes 1e-2 to 1e2), xSwiGLU against
// silu(gate) * up of gate-and-up rows (packed, and rows apart), both in
// float64, then the product with numfmt's decoding in float64: within
// 1e-5 of the sum of the products' magnitudes, as TestMulMV. The adding
// dispatch runs on 2 workgroups of rows, which then stride over the row
// tiles (each tile's sums of squares its own); y's padding rows must be
// left alone, and a store must not read y.
func TestMulMVInputModes(t *testing.T) {
	d := testDevice(t)
	for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorQ8_0, gguf.TensorQ4_K} {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(typ), 17))
			cols := testCols(typ)
			w := newWeightMatrix(t, d, rng, typ, 37, cols)
			gain := make([]float32, cols)
			for i := range gain {
				gain[i] = float32(0.5 + rng.Float64())
			}
			gbuf := upload(t, d, F32Bytes(gain))
			const eps = 1e-6
			name, _ := mulMVShader(typ)
			for _, mode := range []uint32{xNorm, xSwiGLU} {
				for _, n := range []int{1, 3, 8, 19} {
					stride := cols
					if mode == xSwiGLU {
						stride = 2*cols + 8*(n%2) // packed for 8 tokens
					}
					x := make([]float32, n*stride)
					in := make([]float64, n*cols) // the product's input
					for tok := range n {
						row := x[tok*stride : (tok+1)*stride]
						scale := math.Pow(10, 4*rng.Float64()-2)
						for i := range row {
							row[i] = float32((2*rng.Float64() - 1) * scale)
						}
						if mode == xSwiGLU {
							for c := range cols {
								g, u := float64(row[c]), float64(row[cols+c])
								in[tok*cols+c] = g / (1 + math.Exp(-g)) * u
							}
							continue
						}
						var ss float64
						for _, v := range row {
							ss += float64(v) * float64(v)
						}
						f := 1 / math.Sqrt(ss/float64(cols)+eps)
						for c, v := range row {
							in[tok*cols+c] = float64(v) * f * float64(gain[c])
						}
					}
					spec := mulMVSpec(d.SubgroupSize, n)
					p, err := d.Pipeline(name, spec[0], spec[1], spec[2], mode)
					if err != nil {
						t.Fatal(err)
					}
					// Two regions of n tokens of ldy values: the store's,
					// then the add's.
					ldy := w.rows + 3
					y0 := make([]float32, 2*n*ldy)
					for i := range y0 {
						y0[i] = float32(rng.NormFloat64())
						if i < n*ldy && i%ldy < w.rows {
							y0[i] = float32(math.NaN())
						}
					}
					xbuf, ybuf := upload(t, d, F32Bytes(x)), upload(t, d, F32Bytes(y0))
					rec, err := d.Begin()
					if err != nil {
						t.Fatal(err)
					}
					for k := range 2 {
						push := pushMulMV{W: w.buf.Addr(), X: xbuf.Addr(), Y: ybuf.Addr() + uint64(4*k*n*ldy),
							Rows: uint32(w.rows), Cols: uint32(cols), N: uint32(n), RowBytes: uint32(w.rowBytes), LDY: uint32(ldy)}
						switch mode {
						case xNorm:
							push.Gain, push.Eps = gbuf.Addr(), eps
						case xSwiGLU:
							push.XStride = uint32(stride)
						}
						gx, gy := mulMVGroups(w.rows, n, spec)
						if k == 1 {
							push.Add, gx = 1, 2
						}
						rec.Dispatch(p, gx, gy, 1, PushBytes(&push))
					}
					if err := d.Submit(rec); err != nil {
						t.Fatal(err)
					}
					y := make([]float32, len(y0))
					if err := d.Read(ybuf, 0, F32Bytes(y)); err != nil {
						t.Fatal(err)
					}
					bad := 0
					for i := range y {
						k, tok, row := i/(n*ldy), i/ldy%n, i%ldy
						if row >= w.rows {
							if math.Float32bits(y[i]) != math.Float32bits(y0[i]) {
								t.Errorf("%s mode %d, %d tokens: y[%d] (padding) changed from %g to %g", name, mode, n, i, y0[i], y[i])
								bad++
							}
							continue
						}
						var want, mag float64
						for c := range cols {
							pr := float64(w.values[row*cols+c]) * in[tok*cols+c]
							want += pr
							mag += math.Abs(pr)
						}
						if k == 1 {
							want += float64(y0[i])
							mag += math.Abs(float64(y0[i]))
						}
						if diff := math.Abs(float64(y[i]) - want); !(diff <= 1e-5*mag+1e-30) {
							t.Errorf("%s mode %d, %d tokens, add %v: y[token %d, row %d] = %g, want %g (error %.3g of %.3g)", name, mode, n, k == 1, tok, row, y[i], want, diff, mag)
							bad++
						}
						if bad > 5 {
							t.FailNow()
						}
					}
				}
			}
		})
	}
}
