package simd

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/internal/floatbits"
	"inferno/numfmt"
)

// refMatMulQ8 returns W x in float64 with x quantized as MatMul quantizes
// it: the exact value the float32 kernels round, and the sums of the
// absolute block terms.
func refMatMulQ8(w *backend.Weight, x []float32, n int) (y, abs []float64) {
	nb := w.Cols / qk
	qs := make([]int8, w.Cols)
	ds := make([]float32, nb)
	cx := make([]int32, nb)
	y = make([]float64, n*w.Rows)
	abs = make([]float64, n*w.Rows)
	for t := range n {
		quantizeQ8Go(qs, qk, ds, cx, x[t*w.Cols:(t+1)*w.Cols])
		for r := range w.Rows {
			row := w.Row(r)
			var sum, a float64
			for b := range nb {
				blk := row[b*blockBytes:]
				var s int64
				for j := range qk {
					s += int64(int8(blk[2+j])) * int64(qs[b*qk+j])
				}
				dw := numfmt.F16ToF32(binary.LittleEndian.Uint16(blk))
				p := float64(dw) * float64(ds[b]) * float64(s)
				sum += p
				a += math.Abs(p)
			}
			y[t*w.Rows+r], abs[t*w.Rows+r] = sum, a
		}
	}
	return y, abs
}

var matMulShapes = []struct{ rows, cols int }{
	{1, 32}, {3, 64}, {8, 32}, {13, 96}, {37, 160}, {64, 256}, {100, 1024},
}

func TestMatMulQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ops := New()
	for _, sh := range matMulShapes {
		w := randWeight(t, rng, gguf.TensorQ8_0, sh.rows, sh.cols)
		for _, n := range []int{1, 2, 4, 5, 8, 11} {
			x := randVec(rng, n*sh.cols, 1)
			if n > 1 {
				clear(x[sh.cols : sh.cols+qk]) // a zero block of activations
			}
			y := make([]float32, n*sh.rows)
			ops.MatMul(y, w, x, n)
			what := fmt.Sprintf("%dx%d n=%d", sh.rows, sh.cols, n)
			want, abs := refMatMulQ8(w, x, n)
			checkClose(t, what+" vs quantized reference", y, want, abs, 1e-5)
			exact, _ := refMatMul(w, x, n)
			if e := relL2(y, exact); e > 2e-2 {
				t.Errorf("%s: relative L2 error %.3g against float64 activations", what, e)
			}
		}
	}
}

func TestMatMulFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ops := New()
	shapes := append([]struct{ rows, cols int }{{5, 7}, {6, 8}, {9, 24}, {7, 100}, {11, 1003}}, matMulShapes...)
	for _, typ := range allTypes[1:] {
		for _, sh := range shapes {
			w := randWeight(t, rng, typ, sh.rows, sh.cols)
			for _, n := range []int{1, 3, 4, 9} {
				x := randVec(rng, n*sh.cols, 1)
				y := make([]float32, n*sh.rows)
				ops.MatMul(y, w, x, n)
				want, abs := refMatMul(w, x, n)
				checkClose(t, fmt.Sprintf("%s %dx%d n=%d", typ, sh.rows, sh.cols, n), y, want, abs, 2e-6*math.Sqrt(float64(sh.cols))+1e-6)
			}
		}
	}
}

// TestMatMulTokensBitwise checks that a product over n tokens gives, bit
// for bit, the rows of n single-token products, and that any split of the
// rows gives the bits of the whole.
func TestMatMulTokensBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ops := New()
	for _, typ := range allTypes {
		for _, sh := range []struct{ rows, cols int }{{37, 96}, {64, 256}, {19, 512}} {
			w := randWeight(t, rng, typ, sh.rows, sh.cols)
			for _, n := range []int{2, 3, 4, 7, 9, 16} {
				x := randVec(rng, n*sh.cols, 1)
				all := make([]float32, n*sh.rows)
				ops.MatMul(all, w, x, n)
				one := make([]float32, sh.rows)
				for tok := range n {
					ops.MatMul(one, w, x[tok*sh.cols:(tok+1)*sh.cols], 1)
					if i := floatbits.FirstDiff(one, all[tok*sh.rows:(tok+1)*sh.rows]); i >= 0 {
						t.Fatalf("%s %dx%d: token %d of %d, row %d: %g alone, %g in the batch", typ, sh.rows, sh.cols, tok, n, i, one[i], all[tok*sh.rows+i])
					}
				}
				var a Acts
				a.Prepare(w, x, n)
				a.Quantize(0, n)
				split := make([]float32, n*sh.rows)
				for r0 := 0; r0 < sh.rows; r0 += 5 {
					ops.MatMulRows(split, w, &a, r0, min(r0+5, sh.rows))
				}
				if i := floatbits.FirstDiff(split, all); i >= 0 {
					t.Fatalf("%s %dx%d n=%d: rows in fives differ at %d", typ, sh.rows, sh.cols, n, i)
				}
			}
		}
	}
}

func TestQuantizeMatchesQuant(t *testing.T) {
	// The scales are those of numfmt.QuantizeRow; values may differ by one
	// where x/d is exactly half-way (ties go to even here).
	rng := rand.New(rand.NewPCG(7, 8))
	x := randVec(rng, 4096, 3)
	clear(x[64:96])
	ref, err := numfmt.QuantizeRow(nil, x, gguf.TensorQ8_0)
	if err != nil {
		t.Fatal(err)
	}
	qs := make([]int8, len(x))
	ds := make([]float32, len(x)/qk)
	cx := make([]int32, len(x)/qk)
	quantizeQ8(qs, qk, ds, cx, x)
	for b := range ds {
		blk := ref[b*blockBytes:]
		if got, want := numfmt.F32ToF16(ds[b]), binary.LittleEndian.Uint16(blk); got != want {
			t.Fatalf("block %d: scale %g, quant has %g", b, ds[b], numfmt.F16ToF32(want))
		}
		var sum int32
		for j := range qk {
			if d := int(qs[b*qk+j]) - int(int8(blk[2+j])); d < -1 || d > 1 {
				t.Fatalf("block %d value %d: %d, quant has %d", b, j, qs[b*qk+j], int8(blk[2+j]))
			}
			sum += int32(qs[b*qk+j])
		}
		if cx[b] != -128*sum {
			t.Fatalf("block %d: correction %d, want %d", b, cx[b], -128*sum)
		}
	}
}

func TestMatMulPanicsOnShortInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	w := randWeight(t, rng, gguf.TensorQ8_0, 8, 64)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for short x")
		}
	}()
	New().MatMul(make([]float32, 16), w, make([]float32, 64), 2)
}
