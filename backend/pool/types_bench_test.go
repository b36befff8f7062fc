package pool

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/numfmt"
)

// rawWeight returns a rows x cols weight of type typ of random bytes with
// moderate float16 scales (the speed of a product does not depend on the
// values).
func rawWeight(rng *rand.Rand, typ gguf.TensorType, rows, cols int) *backend.Weight {
	f, _ := numfmt.FormatOf(typ)
	data := make([]byte, rows*cols/f.BlockSize*f.BlockBytes)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	// Every block format but the K ones starting with ql/qs/hmask/scales
	// keeps d at 0; overwriting a few more bytes is harmless for speed.
	offs := map[gguf.TensorType][]int{gguf.TensorQ6_K: {208}, gguf.TensorQ3_K: {108}, gguf.TensorQ2_K: {80, 82}}
	o, ok := offs[typ]
	if !ok {
		o = []int{0, 2}
	}
	for b := 0; b < len(data); b += f.BlockBytes {
		for _, off := range o {
			binary.LittleEndian.PutUint16(data[b+off:], numfmt.F32ToF16(0.001))
		}
	}
	return &backend.Weight{Name: "w", Type: typ, Rows: rows, Cols: cols, Data: data}
}

// BenchmarkDecodeStream reports the weight bytes read per second by
// single-token products of Qwen3-1.7B's shapes, cycling through enough
// matrices (about 300 MB) that they come from memory, as in a decode
// step: the pool on one and two threads.
func BenchmarkDecodeStream(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, typ := range []gguf.TensorType{gguf.TensorQ4_K, gguf.TensorQ6_K, gguf.TensorQ5_K, gguf.TensorQ8_0, gguf.TensorQ4_0} {
		for _, sh := range []struct {
			name       string
			rows, cols int
		}{{"2048to6144", 6144, 2048}, {"6144to2048", 2048, 6144}, {"2048to1024", 1024, 2048}} {
			var ws []*backend.Weight
			total := 0
			for total < 300<<20 {
				w := rawWeight(rng, typ, sh.rows, sh.cols)
				ws = append(ws, w)
				total += len(w.Data)
			}
			x := randVec(rng, sh.cols, 1)
			y := make([]float32, sh.rows)
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/t%d", typ, sh.name, threads), func(b *testing.B) {
					ops := New(threads)
					defer ops.Close()
					b.SetBytes(int64(len(ws[0].Data)))
					i := 0
					for b.Loop() {
						ops.MatMul(y, ws[i%len(ws)], x, 1)
						i++
					}
				})
			}
		}
	}
}

// BenchmarkBatchStream reports multiply-adds per second (GMAC/s) and
// weight bytes read per second of 8-token products of Qwen3-0.6B's Q8_0
// shapes (a batched decode step's), cycling through enough matrices
// (about 300 MB) that they come from memory, on one and two threads.
func BenchmarkBatchStream(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 8
	for _, sh := range []struct {
		name       string
		rows, cols int
	}{{"1024to3072", 3072, 1024}, {"3072to1024", 1024, 3072}, {"1024to1024", 1024, 1024}} {
		var ws []*backend.Weight
		total := 0
		for total < 300<<20 {
			w := rawWeight(rng, gguf.TensorQ8_0, sh.rows, sh.cols)
			ws = append(ws, w)
			total += len(w.Data)
		}
		x := randVec(rng, n*sh.cols, 1)
		y := make([]float32, n*sh.rows)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", sh.name, threads), func(b *testing.B) {
				ops := New(threads)
				defer ops.Close()
				b.SetBytes(int64(len(ws[0].Data)))
				i := 0
				for b.Loop() {
					ops.MatMul(y, ws[i%len(ws)], x, n)
					i++
				}
				b.ReportMetric(float64(n*sh.rows*sh.cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}
