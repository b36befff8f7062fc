package pool

// The floors, for Qwen3-0.6B Q8_0 on the 2-core development machine:
//
//   - Decode reads every weight once per token: 28 layers of 16.6 MB (q 2.2,
//     k 1.1, v 1.1, o 2.2, gate, up and down 3.3 each) and the 165 MB output
//     matrix, 633 MB. BenchmarkMemRead (package simd) reads about 13 GB/s on
//     one thread and 23 GB/s on two: 48 ms and 28 ms per token at best. A
//     matrix-vector product of R rows and C columns moves R*C/32*34 bytes
//     and does 2*R*C flops, 0.06 flop per byte: bandwidth is all that counts.
//   - Attention at position p reads 2*p*8*128*4 bytes of float32 keys and
//     values per layer: 8.4 MB at p = 1024, 235 MB a token over 28 layers
//     (940 MB at p = 4096); half that with an F16 cache.
//   - A prompt token costs 2*0.44e9 flops in the layers' products (the
//     output matrix is applied to the last token only): 90 tokens/s needs
//     80 GFLOP/s sustained, while the weights (465 MB) are read once per
//     512-token batch.

import (
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/gguf"
)

// benchBackends are the backends compared: the scalar reference, simd on
// one thread, and the pool on one and two threads.
func benchBackends(b *testing.B, f func(b *testing.B, ops backend.Ops)) {
	for _, c := range []struct {
		name string
		new  func() backend.Ops
	}{
		{"scalar", func() backend.Ops { return scalar.NewScalar() }},
		{"simd", func() backend.Ops { return simd.New() }},
		{"pool1", func() backend.Ops { return New(1) }},
		{"pool2", func() backend.Ops { return New(2) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			ops := c.new()
			f(b, ops)
			if p, ok := ops.(*Ops); ok {
				p.Close()
			}
		})
	}
}

// Qwen3-0.6B shapes, rows x cols of the weight.
var shapes = []struct {
	name       string
	rows, cols int
}{
	{"1024to3072", 3072, 1024}, // gate, up
	{"3072to1024", 1024, 3072}, // down
	{"lm_head", 151936, 1024},  // output
}

// BenchmarkMatVecQ8 reports the weight bytes read per second (MB/s) of a
// single-token Q8_0 product, the decode step's work.
func BenchmarkMatVecQ8(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range shapes {
		w := randWeight(b, rng, gguf.TensorQ8_0, sh.rows, sh.cols)
		x := randVec(rng, sh.cols, 1)
		y := make([]float32, sh.rows)
		b.Run(sh.name, func(b *testing.B) {
			benchBackends(b, func(b *testing.B, ops backend.Ops) {
				b.SetBytes(int64(len(w.Data)))
				for b.Loop() {
					ops.MatMul(y, w, x, 1)
				}
			})
		})
	}
}

// BenchmarkMatMulQ8 reports GFLOP/s (two per multiply-add) of a 512-token
// Q8_0 product, the prefill's work.
func BenchmarkMatMulQ8(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 512
	for _, sh := range shapes[:2] {
		w := randWeight(b, rng, gguf.TensorQ8_0, sh.rows, sh.cols)
		x := randVec(rng, n*sh.cols, 1)
		y := make([]float32, n*sh.rows)
		b.Run(sh.name, func(b *testing.B) {
			benchBackends(b, func(b *testing.B, ops backend.Ops) {
				for b.Loop() {
					ops.MatMul(y, w, x, n)
				}
				b.ReportMetric(2*float64(n*sh.rows*sh.cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

// BenchmarkAttention reports one decode step's attention at positions 1023
// and 4095 (and a 512-token prefill) with Qwen3-0.6B's heads, over float32
// keys and values (f32) and half-precision ones (f16), and the bytes of
// keys and values read per second. One layer's keys and values at 4095
// (34 MB in f32) may stay in a large L3; the x28 case cycles through 28
// layers' (940 MB, 470 MB in f16), as a decode step does, from memory.
func BenchmarkAttention(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name           string
		n, pos, layers int
	}{{"decode_pos1023", 1, 1023, 1}, {"decode_pos4095", 1, 4095, 1}, {"decode_pos4095_x28", 1, 4095, 28}, {"prefill512", 512, 0, 1}} {
		q := randVec(rng, c.n*16*128, 1)
		kv := (c.pos + c.n) * 8 * 128
		k0, v0 := randVec(rng, kv, 1), randVec(rng, kv, 1)
		k, v := make([][]float32, c.layers), make([][]float32, c.layers)
		kh, vh := make([][]uint16, c.layers), make([][]uint16, c.layers)
		for l := range c.layers {
			k[l], v[l] = append([]float32(nil), k0...), append([]float32(nil), v0...)
			kh[l], vh[l] = make([]uint16, kv), make([]uint16, kv)
			simd.New().ToF16(kh[l], k0)
			simd.New().ToF16(vh[l], v0)
		}
		out := make([]float32, len(q))
		seqs := []backend.SeqAttn{{N: c.n, Pos: c.pos, Table: []int32{0}}}
		b.Run(c.name+"/f32", func(b *testing.B) {
			benchBackends(b, func(b *testing.B, ops backend.Ops) {
				b.SetBytes(int64(2 * 4 * kv))
				l := 0
				for b.Loop() {
					ops.Attention(out, q, k[l], v[l], seqs, c.pos+c.n, 16, 8, 128, backend.AttnOpts{})
					l = (l + 1) % c.layers
				}
			})
		})
		b.Run(c.name+"/f16", func(b *testing.B) {
			benchBackends(b, func(b *testing.B, ops backend.Ops) {
				b.SetBytes(int64(2 * 2 * kv))
				l := 0
				for b.Loop() {
					ops.AttentionF16(out, q, kh[l], vh[l], seqs, c.pos+c.n, 16, 8, 128, backend.AttnOpts{})
					l = (l + 1) % c.layers
				}
			})
		})
	}
}

// BenchmarkAttentionBatch reports a decode step's attention for a batch of
// 8 sequences at positions 511 to 4095 with Qwen3-0.6B's heads, in a
// paged cache of blocks of 32 positions given out in random order, and the
// bytes of keys and values read per second.
func BenchmarkAttentionBatch(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const bs = 32
	var seqs []backend.SeqAttn
	blocks, kv := 0, 0
	for i := range 8 {
		p := 511 + i*512
		seqs = append(seqs, backend.SeqAttn{Token: i, N: 1, Pos: p})
		blocks += p/bs + 1
		kv += (p + 1) * 8 * 128
	}
	ids := rng.Perm(blocks)
	for i := range seqs {
		for range seqs[i].Pos/bs + 1 {
			seqs[i].Table = append(seqs[i].Table, int32(ids[0]))
			ids = ids[1:]
		}
	}
	q := randVec(rng, 8*16*128, 1)
	k, v := randVec(rng, blocks*bs*8*128, 1), randVec(rng, blocks*bs*8*128, 1)
	kh, vh := make([]uint16, len(k)), make([]uint16, len(v))
	simd.New().ToF16(kh, k)
	simd.New().ToF16(vh, v)
	out := make([]float32, len(q))
	b.Run("f32", func(b *testing.B) {
		benchBackends(b, func(b *testing.B, ops backend.Ops) {
			b.SetBytes(int64(2 * 4 * kv))
			for b.Loop() {
				ops.Attention(out, q, k, v, seqs, bs, 16, 8, 128, backend.AttnOpts{})
			}
		})
	})
	b.Run("f16", func(b *testing.B) {
		benchBackends(b, func(b *testing.B, ops backend.Ops) {
			b.SetBytes(int64(2 * 2 * kv))
			for b.Loop() {
				ops.AttentionF16(out, q, kh, vh, seqs, bs, 16, 8, 128, backend.AttnOpts{})
			}
		})
	})
}
