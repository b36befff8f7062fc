package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/numfmt"
)

// randVec returns n normal values times scale.
func randVec(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * scale)
	}
	return v
}

// randWeight returns a rows x cols weight of type typ encoding normal
// values; some Q8_0 blocks are all zero, to test zero scales.
func randWeight(t testing.TB, rng *rand.Rand, typ gguf.TensorType, rows, cols int) *backend.Weight {
	t.Helper()
	var data []byte
	for r := range rows {
		row := randVec(rng, cols, 0.05)
		if typ == gguf.TensorQ8_0 && r%7 == 3 {
			clear(row[:numfmt.QK8_0])
		}
		var err error
		data, err = numfmt.QuantizeRow(data, row, typ)
		if err != nil {
			t.Fatal(err)
		}
	}
	return &backend.Weight{Name: fmt.Sprintf("w%dx%d", rows, cols), Type: typ, Rows: rows, Cols: cols, Data: data}
}

// refMatMul returns W x in float64, for the weights as decoded, and the
// sums of |W[r][c] x[c]|, the scale of each element's rounding error.
func refMatMul(w *backend.Weight, x []float32, n int) (y, abs []float64) {
	y = make([]float64, n*w.Rows)
	abs = make([]float64, n*w.Rows)
	row := make([]float32, w.Cols)
	for r := range w.Rows {
		if err := numfmt.DequantizeRow(row, w.Row(r), w.Type, w.Cols); err != nil {
			panic(err)
		}
		for t := range n {
			var s, a float64
			for c, v := range row {
				p := float64(v) * float64(x[t*w.Cols+c])
				s += p
				a += math.Abs(p)
			}
			y[t*w.Rows+r], abs[t*w.Rows+r] = s, a
		}
	}
	return y, abs
}

// checkClose fails unless |got-want| <= tol*abs elementwise.
func checkClose(t *testing.T, what string, got []float32, want, abs []float64, tol float64) {
	t.Helper()
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - w); !(d <= tol*abs[i]+1e-30) {
			t.Fatalf("%s: element %d = %g, want %g (error %.3g of scale %.3g, tolerance %g)", what, i, got[i], w, d, abs[i], tol)
		}
	}
}

// relL2 returns |got - want| / |want| in the L2 norm.
func relL2(got []float32, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		d := float64(got[i]) - w
		num += d * d
		den += w * w
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// maxRelErr returns the largest |got-want| / (|want| + floor).
func maxRelErr(got []float32, want []float64, floor float64) (float64, int) {
	worst, at := 0.0, -1
	for i, w := range want {
		e := math.Abs(float64(got[i])-w) / (math.Abs(w) + floor)
		if e > worst || math.IsNaN(e) {
			worst, at = e, i
		}
	}
	return worst, at
}

var allTypes = []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16}
