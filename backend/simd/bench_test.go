package simd

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"inferno/gguf"
)

// BenchmarkMemRead measures the machine's read bandwidth, the floor of a
// decode step: it sums a 1 GiB buffer with 256-bit loads on 1 and 2
// threads, each reading its half.
func BenchmarkMemRead(b *testing.B) {
	buf := make([]byte, 1<<30)
	for i := range buf {
		buf[i] = byte(i)
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			var sink [2]uint64
			for b.Loop() {
				if threads == 1 {
					sink[0] = memSum(buf)
					continue
				}
				var wg sync.WaitGroup
				half := len(buf) / 2
				for i := range 2 {
					wg.Go(func() { sink[i] = memSum(buf[i*half : (i+1)*half]) })
				}
				wg.Wait()
			}
			_ = sink
		})
	}
}

// MatVec shapes of Qwen3-0.6B: rows x cols.
var matVecShapes = []struct {
	name       string
	rows, cols int
}{
	{"1024x3072", 3072, 1024}, // gate/up: 1024 -> 3072
	{"3072x1024", 1024, 3072}, // down: 3072 -> 1024
	{"lm_head", 151936, 1024}, // output: 1024 -> 151936
}

// BenchmarkMatVecQ8 reports the weight bytes read per second by a
// single-token product; see also the backend comparison in package pool.
func BenchmarkMatVecQ8(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range matVecShapes {
		w := randWeight(b, rng, gguf.TensorQ8_0, sh.rows, sh.cols)
		x := randVec(rng, sh.cols, 1)
		y := make([]float32, sh.rows)
		ops := New()
		b.Run(sh.name, func(b *testing.B) {
			b.SetBytes(int64(len(w.Data)))
			for b.Loop() {
				ops.MatMul(y, w, x, 1)
			}
		})
	}
}

// BenchmarkMatMulQ8 reports GFLOP/s (2 per multiply-add) of a 512-token
// product.
func BenchmarkMatMulQ8(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 512
	for _, sh := range matVecShapes[:2] {
		w := randWeight(b, rng, gguf.TensorQ8_0, sh.rows, sh.cols)
		x := randVec(rng, n*sh.cols, 1)
		y := make([]float32, n*sh.rows)
		ops := New()
		b.Run(sh.name, func(b *testing.B) {
			for b.Loop() {
				ops.MatMul(y, w, x, n)
			}
			b.ReportMetric(2*float64(n*sh.rows*sh.cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
