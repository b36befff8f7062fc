package simd

import (
	"math/rand/v2"
	"testing"

	"inferno/gguf"
)

// benchTypes are the types the kernel benchmarks compare.
var benchTypes = []gguf.TensorType{
	gguf.TensorQ4_K, gguf.TensorQ6_K, gguf.TensorQ5_K, gguf.TensorQ3_K, gguf.TensorQ2_K, gguf.TensorIQ4_XS,
	gguf.TensorQ4_0, gguf.TensorQ5_0, gguf.TensorIQ4_NL, gguf.TensorMXFP4, gguf.TensorQ4_1, gguf.TensorQ5_1, gguf.TensorQ8_0,
}

// BenchmarkMatVecTypes reports the weight bytes read per second by a
// single-token product of every block type: a 1024 -> 3072 matrix (in
// cache) and the 0.6B output head (1024 -> 151936, from memory).
func BenchmarkMatVecTypes(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, typ := range benchTypes {
		for _, sh := range []struct {
			name       string
			rows, cols int
		}{{"1024x3072", 3072, 1024}, {"lm_head", 151936, 1024}} {
			w := randBlockWeight(b, rng, typ, sh.rows, sh.cols, true)
			x := randVec(rng, sh.cols, 1)
			y := make([]float32, sh.rows)
			ops := New()
			b.Run(typ.String()+"/"+sh.name, func(b *testing.B) {
				b.SetBytes(int64(len(w.Data)))
				for b.Loop() {
					ops.MatMul(y, w, x, 1)
				}
			})
		}
	}
}

// BenchmarkMatMulTypes reports GFLOP/s (2 per multiply-add) of a 512-token
// product of every block type, 1024 -> 3072, on one thread.
func BenchmarkMatMulTypes(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 512
	for _, typ := range benchTypes {
		rows, cols := 3072, 1024
		w := randBlockWeight(b, rng, typ, rows, cols, true)
		x := randVec(rng, n*cols, 1)
		y := make([]float32, n*rows)
		ops := New()
		b.Run(typ.String(), func(b *testing.B) {
			for b.Loop() {
				ops.MatMul(y, w, x, n)
			}
			b.ReportMetric(2*float64(n*rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
