package pool

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/internal/attntest"
	"inferno/backend/internal/glutest"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/gguf"
	"inferno/internal/floatbits"
	"inferno/numfmt"
)

func randVec(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * scale)
	}
	return v
}

func randWeight(t testing.TB, rng *rand.Rand, typ gguf.TensorType, rows, cols int) *backend.Weight {
	t.Helper()
	var data []byte
	for range rows {
		var err error
		if data, err = numfmt.QuantizeRow(data, randVec(rng, cols, 0.05), typ); err != nil {
			t.Fatal(err)
		}
	}
	return &backend.Weight{Name: fmt.Sprintf("w%dx%d", rows, cols), Type: typ, Rows: rows, Cols: cols, Data: data}
}

// halves returns the bits of h as float32 values, to compare them bitwise.
func halves(h []uint16) []float32 {
	f := make([]float32, len(h))
	for i, b := range h {
		f[i] = math.Float32frombits(uint32(b))
	}
	return f
}

// script runs every operation on ops over fixed inputs, each result
// appended to the returned list. Sizes cover the single-threaded and the
// split paths of every operation.
func script(t *testing.T, ops backend.Ops) [][]float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	var res [][]float32
	keep := func(v []float32) { res = append(res, append([]float32(nil), v...)) }
	for _, typ := range []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16} {
		for _, sh := range []struct{ rows, cols int }{{37, 64}, {300, 256}, {1000, 96}} {
			w := randWeight(t, rng, typ, sh.rows, sh.cols)
			for _, n := range []int{1, 6, 21} {
				x := randVec(rng, n*sh.cols, 1)
				y := make([]float32, n*sh.rows)
				ops.MatMul(y, w, x, n)
				keep(y)
			}
		}
	}
	for _, typ := range []gguf.TensorType{
		gguf.TensorQ4_K, gguf.TensorQ6_K, gguf.TensorQ5_K, gguf.TensorQ3_K, gguf.TensorQ2_K, gguf.TensorIQ4_XS,
		gguf.TensorQ4_0, gguf.TensorQ5_0, gguf.TensorIQ4_NL, gguf.TensorMXFP4, gguf.TensorQ4_1, gguf.TensorQ5_1,
	} {
		for _, sh := range []struct{ rows, cols int }{{40, 256}, {300, 512}} {
			w := randWeight(t, rng, typ, sh.rows, sh.cols)
			for _, n := range []int{1, 6, 21} {
				x := randVec(rng, n*sh.cols, 1)
				y := make([]float32, n*sh.rows)
				ops.MatMul(y, w, x, n)
				keep(y)
			}
		}
	}
	for _, c := range []struct{ n, pos, heads, kv, dim int }{{1, 0, 4, 2, 32}, {1, 299, 16, 8, 128}, {7, 5, 16, 8, 128}, {40, 3, 4, 2, 32}} {
		q := randVec(rng, c.n*c.heads*c.dim, 1)
		k := randVec(rng, (c.pos+c.n)*c.kv*c.dim, 2)
		v := randVec(rng, (c.pos+c.n)*c.kv*c.dim, 1)
		out := make([]float32, len(q))
		seqs := []backend.SeqAttn{{N: c.n, Pos: c.pos, Table: []int32{0}}}
		ops.Attention(out, q, k, v, seqs, c.pos+c.n, c.heads, c.kv, c.dim, backend.AttnOpts{})
		keep(out)
		kh, vh := make([]uint16, len(k)), make([]uint16, len(v))
		ops.ToF16(kh, k)
		ops.ToF16(vh, v)
		ops.AttentionF16(out, q, kh, vh, seqs, c.pos+c.n, c.heads, c.kv, c.dim, backend.AttnOpts{})
		keep(out)
	}
	for k, bs := range []int{16, 100} {
		sh := attntest.Shape{Heads: 16, KV: 8, HeadDim: 128}
		b := attntest.NewBatch(rng, sh, bs)
		keep(b.Run(ops, false))
		keep(b.Run(ops, true))
		b.Opt = attntest.RandomOpts(rng, sh, 3*k) // a window; all three options
		keep(b.Run(ops, false))
		keep(b.Run(ops, true))
	}
	for _, n := range []int{100, 1 << 16, 100003} {
		x := randVec(rng, n, 2)
		y := randVec(rng, n, 1)
		g := randVec(rng, 128, 1)
		z := make([]float32, n/128*128)
		ops.RMSNorm(z, x[:len(z)], g, 1e-6)
		keep(z)
		pos := make([]int32, len(z)/1024)
		for i := range pos {
			pos[i] = int32(17 + rng.IntN(5000))
		}
		ops.RoPE(z, pos, 8, 128, 128, &arch.Rope{Theta: 1e6})
		keep(z)
		ops.RoPE(z, pos, 8, 128, 96, &arch.Rope{Theta: 1e4, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 512})
		keep(z)
		out := make([]float32, n)
		ops.SwiGLU(out, x, y)
		keep(out)
		ops.GeGLU(out, x, y)
		keep(out)
		ops.SwiGLUOAI(out, x, y)
		keep(out)
		ops.Add(x, y)
		keep(x)
		h := make([]uint16, n)
		ops.ToF16(h, x)
		keep(halves(h))
	}
	return res
}

// TestBitwiseAcrossThreads checks that every thread count gives the bits of
// the single-threaded simd backend.
func TestBitwiseAcrossThreads(t *testing.T) {
	t.Parallel()
	want := script(t, simd.New())
	for _, threads := range []int{1, 2, 3, 4, 8} {
		ops := New(threads)
		got := script(t, ops)
		ops.Close()
		for i := range want {
			if j := floatbits.FirstDiff(got[i], want[i]); j >= 0 {
				t.Fatalf("%d threads: result %d differs at %d: %g, want %g", threads, i, j, got[i][j], want[i][j])
			}
		}
	}
}

func TestClose(t *testing.T) {
	want := script(t, simd.New())
	ops := New(3)
	if ops.Threads() != 3 || ops.Name() != "pool" {
		t.Fatalf("Threads %d, Name %q", ops.Threads(), ops.Name())
	}
	ops.Close()
	ops.Close()
	if ops.Threads() != 1 {
		t.Fatalf("Threads %d after Close", ops.Threads())
	}
	got := script(t, ops)
	for i := range want {
		if j := floatbits.FirstDiff(got[i], want[i]); j >= 0 {
			t.Fatalf("after Close: result %d differs at %d", i, j)
		}
	}
	if New(0).Threads() < 1 {
		t.Fatal("New(0) has no threads")
	}
}

// TestAllocs checks that operations allocate nothing once their scratch
// buffers have grown, on one thread and on several.
func TestAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w := randWeight(t, rng, gguf.TensorQ8_0, 512, 256)
	wf := randWeight(t, rng, gguf.TensorF16, 64, 256)
	w4 := randWeight(t, rng, gguf.TensorQ4_K, 512, 256)
	w6 := randWeight(t, rng, gguf.TensorQ6_K, 512, 256)
	const n = 32
	x := randVec(rng, n*256, 1)
	y := make([]float32, n*512)
	q := randVec(rng, n*16*128, 1)
	k := randVec(rng, (40+n)*8*128, 1)
	v := randVec(rng, (40+n)*8*128, 1)
	one := []backend.SeqAttn{{N: 1, Pos: 40, Table: []int32{0}}}
	all := []backend.SeqAttn{{N: n, Pos: 40, Table: []int32{0}}}
	// Decode steps and a prefill run, in blocks of 8 positions.
	batch := []backend.SeqAttn{
		{Token: 0, N: 1, Pos: 50, Table: []int32{8, 7, 6, 5, 4, 3, 2}},
		{Token: 1, N: 1, Pos: 3, Table: []int32{0}},
		{Token: 2, N: 20, Pos: 10, Table: []int32{1, 2, 3, 4}},
		{Token: 22, N: 1, Pos: 70, Table: []int32{0, 1, 2, 3, 4, 5, 6, 7, 8}},
	}
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = int32(40 + 3*i)
	}
	att := make([]float32, len(q))
	kh, vh := make([]uint16, len(k)), make([]uint16, len(v))
	bigh := make([]uint16, 1<<16)
	big := randVec(rng, 1<<16, 1)
	big2 := randVec(rng, 1<<16, 1)
	g := randVec(rng, 128, 1)
	for _, threads := range []int{1, 2, 4} {
		var ops backend.Ops
		var closeFn func()
		if threads == 1 {
			ops = simd.New()
		} else {
			o := New(threads)
			ops, closeFn = o, o.Close
		}
		neox := &arch.Rope{Theta: 1e6}
		yarn := &arch.Rope{Theta: 1e4, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 512}
		opt := backend.AttnOpts{Scale: 0.1, Window: 20, Sinks: g[:16]}
		cases := []struct {
			name string
			f    func()
		}{
			{"MatMul n=1", func() { ops.MatMul(y, w, x, 1) }},
			{"MatMul n=8", func() { ops.MatMul(y, w, x, 8) }},
			{"MatMul n=32", func() { ops.MatMul(y, w, x, n) }},
			{"MatMul F16 n=8", func() { ops.MatMul(y, wf, x, 8) }},
			{"MatMul Q4_K n=1", func() { ops.MatMul(y, w4, x, 1) }},
			{"MatMul Q4_K n=32", func() { ops.MatMul(y, w4, x, n) }},
			{"MatMul Q6_K n=1", func() { ops.MatMul(y, w6, x, 1) }},
			{"MatMul Q6_K n=32", func() { ops.MatMul(y, w6, x, n) }},
			{"Attention n=1", func() { ops.Attention(att, q, k, v, one, 40+n, 16, 8, 128, backend.AttnOpts{}) }},
			{"Attention n=32", func() { ops.Attention(att, q, k, v, all, 40+n, 16, 8, 128, backend.AttnOpts{}) }},
			{"Attention batch", func() { ops.Attention(att, q, k, v, batch, 8, 16, 8, 128, backend.AttnOpts{}) }},
			{"ToF16", func() { ops.ToF16(kh, k); ops.ToF16(vh, v) }},
			{"ToF16 big", func() { ops.ToF16(bigh, big) }},
			{"AttentionF16 n=1", func() { ops.AttentionF16(att, q, kh, vh, one, 40+n, 16, 8, 128, backend.AttnOpts{}) }},
			{"AttentionF16 n=32", func() { ops.AttentionF16(att, q, kh, vh, all, 40+n, 16, 8, 128, backend.AttnOpts{}) }},
			{"AttentionF16 batch", func() { ops.AttentionF16(att, q, kh, vh, batch, 8, 16, 8, 128, backend.AttnOpts{}) }},
			{"Attention batch, options", func() { ops.Attention(att, q, k, v, batch, 8, 16, 8, 128, opt) }},
			{"AttentionF16 batch, options", func() { ops.AttentionF16(att, q, kh, vh, batch, 8, 16, 8, 128, opt) }},
			{"RMSNorm", func() { ops.RMSNorm(big2, big, g, 1e-6) }},
			{"RoPE", func() { ops.RoPE(q, pos, 16, 128, 128, neox) }},
			{"RoPE one", func() { ops.RoPE(q, pos[:1], 16, 128, 128, neox) }},
			{"RoPE YaRN, partial", func() { ops.RoPE(q, pos, 16, 128, 64, yarn); ops.RoPE(q, pos, 16, 128, 128, neox) }},
			{"SwiGLU", func() { ops.SwiGLU(big2, big, big) }},
			{"GeGLU", func() { ops.GeGLU(big2, big, big) }},
			{"SwiGLUOAI", func() { ops.SwiGLUOAI(big2, big, big) }},
			{"Add", func() { ops.Add(big2, big) }},
		}
		for _, c := range cases {
			if a := testing.AllocsPerRun(20, c.f); a != 0 {
				t.Errorf("%s, %d threads: %v allocations per run", c.name, threads, a)
			}
		}
		if closeFn != nil {
			closeFn()
		}
	}
}

// TestAttentionPaged checks that, on 1, 2 and 3 threads, every sequence
// of a batch over a paged cache gets the bits it gets alone in one
// contiguous block, for F32 and F16 caches, every block size and random
// block tables.
func TestAttentionPaged(t *testing.T) {
	t.Parallel()
	for _, threads := range []int{1, 2, 3} {
		ops := New(threads)
		attntest.CheckPaged(t, ops, 61)
		ops.Close()
	}
}

// TestAttentionMatchesScalar checks batches over paged caches against the
// scalar backend.
func TestAttentionMatchesScalar(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(63, 64))
	scalar := scalar.NewScalar()
	for _, threads := range []int{1, 2, 3} {
		ops := New(threads)
		for _, sh := range attntest.Shapes {
			for _, bs := range []int{1, 16, 100} {
				b := attntest.NewBatch(rng, sh, bs)
				if bs != 16 {
					b.Opt = attntest.RandomOpts(rng, sh, bs)
				}
				for _, f16 := range []bool{false, true} {
					got, want := b.Run(ops, f16), b.Run(scalar, f16)
					for i := range want {
						if e := math.Abs(float64(got[i] - want[i])); !(e <= 2e-5) {
							t.Fatalf("%d threads, f16=%v, %v: value %d = %g, scalar %g", threads, f16, b, i, got[i], want[i])
						}
					}
				}
			}
		}
		ops.Close()
	}
}

// TestAttentionPanics checks that malformed calls panic, on the caller's
// goroutine, with a message.
func TestAttentionPanics(t *testing.T) {
	ops := New(3)
	defer ops.Close()
	attntest.CheckPanics(t, ops)
}

// TestGatedActivations checks GeGLU and SwiGLUOAI, on 1 and 3 threads,
// against float64.
func TestGatedActivations(t *testing.T) {
	for _, threads := range []int{1, 3} {
		ops := New(threads)
		glutest.Check(t, ops, 67)
		ops.Close()
	}
}

// TestRoPEPositions checks, on 1, 2 and 3 threads, RoPE over per-token
// positions against calls over consecutive positions.
func TestRoPEPositions(t *testing.T) {
	for _, threads := range []int{1, 2, 3} {
		ops := New(threads)
		attntest.CheckRoPE(t, ops, 65)
		ops.Close()
	}
}

// TestDefaultThreads checks that New(0) starts DefaultThreads threads,
// between 1 and the number of CPUs.
func TestDefaultThreads(t *testing.T) {
	n := DefaultThreads()
	if n < 1 || n > runtime.NumCPU() {
		t.Fatalf("DefaultThreads() = %d with %d CPUs", n, runtime.NumCPU())
	}
	o := New(0)
	defer o.Close()
	if o.Threads() != n {
		t.Fatalf("New(0) runs %d threads, DefaultThreads() %d", o.Threads(), n)
	}
}
