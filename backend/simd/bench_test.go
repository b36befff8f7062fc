package simd

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"inferno/backend"
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

// BenchmarkAttention reports a decode step's attention with Qwen3-0.6B's
// heads (see also the backend comparison in package pool), over float32
// and half-precision caches, and the bytes of keys and values read per
// second: at position 4095 in one contiguous block, and in blocks of 32
// positions in random order; and for a batch of 8 sequences at positions
// 511 to 4095 in blocks of 32 in random order, also with a sliding window
// of 128 positions and sinks (gpt-oss's local layers; the bytes are those
// of the windows). The blocks are drawn from a
// cache of 20480 positions: where one layer's keys and values would stay
// in a large L3 cache, scattering them costs more than the kernels' extra
// calls.
func BenchmarkAttention(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const pos, positions, bs = 4095, 20480, 32
	k, v := randVec(rng, positions*8*128, 1), randVec(rng, positions*8*128, 1)
	kh, vh := make([]uint16, len(k)), make([]uint16, len(v))
	toF16(kh, k)
	toF16(vh, v)
	var ids []int32
	for _, b := range rng.Perm(positions / bs) {
		ids = append(ids, int32(b))
	}
	var batch []backend.SeqAttn
	for i, used := 0, 0; i < 8; i++ {
		p := 511 + i*512
		nb := p/bs + 1
		batch = append(batch, backend.SeqAttn{Token: i, N: 1, Pos: p, Table: ids[used : used+nb]})
		used += nb
	}
	q := randVec(rng, 8*16*128, 1)
	out := make([]float32, len(q))
	for _, c := range []struct {
		name      string
		seqs      []backend.SeqAttn
		blockSize int
		opt       backend.AttnOpts
	}{
		{"decode_pos4095", []backend.SeqAttn{{N: 1, Pos: pos, Table: []int32{0}}}, pos + 1, backend.AttnOpts{}},
		{"decode_pos4095_paged", []backend.SeqAttn{{N: 1, Pos: pos, Table: ids}}, bs, backend.AttnOpts{}},
		{"decode_batch8_paged", batch, bs, backend.AttnOpts{}},
		// gpt-oss's local layers: a window of 128 positions, sinks.
		{"decode_batch8_paged_window128_sinks", batch, bs, backend.AttnOpts{Window: 128, Sinks: q[:16]}},
	} {
		kvValues := 0
		for _, sq := range c.seqs {
			n := sq.Pos + sq.N
			if c.opt.Window > 0 {
				n = min(n, c.opt.Window)
			}
			kvValues += 2 * n * 8 * 128
		}
		ops := New()
		b.Run(c.name+"/f32", func(b *testing.B) {
			b.SetBytes(int64(4 * kvValues))
			for b.Loop() {
				ops.Attention(out, q, k, v, c.seqs, c.blockSize, 16, 8, 128, c.opt)
			}
		})
		b.Run(c.name+"/f16", func(b *testing.B) {
			b.SetBytes(int64(2 * kvValues))
			for b.Loop() {
				ops.AttentionF16(out, q, kh, vh, c.seqs, c.blockSize, 16, 8, 128, c.opt)
			}
		})
	}
}
