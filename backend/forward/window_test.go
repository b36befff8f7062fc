package forward_test

import (
	"fmt"
	"slices"
	"testing"

	"inferno/arch"
	"inferno/backend/forward"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/simd"
	"inferno/batch"
	"inferno/engine"
	"inferno/internal/floatbits"
	"inferno/kvcache"
)

// TestWindowPool runs sequences of Gemma 3's and gpt-oss's options (a
// window of 5 positions, blocks of 4) on a runner whose sliding-window
// layers keep their keys and values in a window pool of their own, too
// small for the sequences' whole contexts, through a kvcache.Manager that
// frees the blocks falling out of the window and caches prefixes: chunked
// prompts, decode steps far past the window, a later prompt reusing a
// finished sequence's prefix (the window before its cut included) and
// one whose window was evicted. Every output's logits have the bits of
// the sequence alone, in one pass, with every layer in one pool.
func TestWindowPool(t *testing.T) {
	for name, config := range map[string]func() arch.Config{"gemma3": gemmaLike, "gpt-oss": gptOSSLike} {
		t.Run(name, func(t *testing.T) {
			c := config()
			m := newModel(c, 77)
			ops := simd.New()
			const bs, chunk = 4, 4
			lb := kvcache.WindowBlocks(2, c.Window, chunk, bs)
			br, err := forward.NewWindowBatched(m, ops, 0, 40, lb, bs, kvcache.F32)
			if err != nil {
				t.Fatal(err)
			}
			defer br.Close()
			if got, w := br.WindowPool(); got != lb || w != c.Window {
				t.Fatalf("WindowPool() = %d, %d; want %d, %d", got, w, lb, c.Window)
			}
			mgr := kvcache.NewWindowManager(40, bs, true, br, kvcache.WindowPool{Blocks: lb, Window: c.Window, Copy: br.CopyLocalBlock})
			type seq struct {
				kv   *kvcache.Seq
				toks []int32 // all its tokens: run, then to run
				n    int     // run so far
			}
			tokens := func(seed, n int) []int32 {
				t := make([]int32, n)
				for i := range t {
					t[i] = int32((seed*7 + i*13 + i*i) % c.Vocab)
				}
				return t
			}
			start := func(toks []int32) *seq {
				s, err := mgr.Start(toks)
				if err != nil {
					t.Fatal(err)
				}
				return &seq{kv: s, toks: toks, n: s.Cached()}
			}
			var b batch.Batch
			// step runs every live sequence's next chunk (or token) in one
			// batch and checks each output against the sequence alone.
			step := func(live []*seq) {
				b.Reset()
				var outs []*seq
				for _, s := range live {
					k := min(chunk, len(s.toks)-s.n)
					if k == 0 {
						continue
					}
					if !mgr.Reserve(s.kv, s.n+k) {
						t.Fatalf("Reserve of %d positions refused: %+v %+v", s.n+k, mgr.Stats(), mgr.LocalStats())
					}
					b.Add(b.AddWindowSeq(s.kv.Table(), s.kv.LocalTable()), s.toks[s.n:s.n+k], s.n, true)
					outs = append(outs, s)
				}
				if len(outs) == 0 {
					return
				}
				if err := br.Forward(&b); err != nil {
					t.Fatal(err)
				}
				for i, s := range outs {
					k := min(chunk, len(s.toks)-s.n)
					got, err := br.Logits(i)
					if err != nil {
						t.Fatal(err)
					}
					want := alone(t, m, s.toks[:s.n+k])
					if err := floatbits.Check(got, want); err != nil {
						t.Fatalf("position %d of a sequence of %d tokens: %v", s.n+k-1, len(s.toks), err)
					}
					mgr.Commit(s.kv, s.toks[s.n:s.n+k])
					s.n += k
				}
			}
			a, bq := start(tokens(1, 31)), start(tokens(2, 23))
			for a.n < len(a.toks) || bq.n < len(bq.toks) {
				step([]*seq{a, bq})
			}
			if h := a.kv.LocalTable(); h[0] != kvcache.Hole || slices.Contains(h[len(h)-2:], kvcache.Hole) {
				t.Errorf("local table %v: want holes before the window only", h)
			}
			if u := mgr.LocalStats().Used; u > 2*((c.Window+bs-1)/bs+1) {
				t.Errorf("%d window blocks held by two sequences of a window of %d", u, c.Window)
			}
			mgr.Release(a.kv)
			// A prompt that continues a's first 26 tokens: the prefix (and
			// its window) comes from the cache.
			d := start(append(slices.Clone(a.toks[:26]), tokens(3, 9)...))
			if d.n < 20 {
				t.Errorf("a continued prompt reuses %d positions", d.n)
			}
			for d.n < len(d.toks) || bq.n < len(bq.toks) {
				step([]*seq{d, bq})
			}
			mgr.Release(bq.kv)
			mgr.Release(d.kv)
			// b's first 10 tokens: their window was dropped long ago and
			// evicted since, unless the pool kept it; either way the bits
			// hold.
			e := start(append(slices.Clone(bq.toks[:10]), tokens(4, 6)...))
			for e.n < len(e.toks) {
				step([]*seq{e})
			}
			mgr.Release(e.kv)
			if s := mgr.LocalStats(); s.Used != 0 {
				t.Errorf("after releasing all: %+v", s)
			}
			t.Log(fmt.Sprintf("%+v", mgr.Stats()))
		})
	}
}

// alone returns the logits of the last of toks, run alone in one pass on
// a runner with every layer in one pool.
func alone(t *testing.T, m *model, toks []int32) []float32 {
	r := forwardtest.Single(t, m, simd.New(), 0, kvcache.F32)
	defer r.Close()
	if err := r.Forward(toks); err != nil {
		t.Fatal(err)
	}
	l, err := r.Logits()
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(l)
}

// TestWindowRing: engine.Single on a runner whose window pool is smaller
// than the sequence's blocks keeps the sliding-window layers' blocks in
// a ring; prompts in chunks, decode steps past several turns of the
// ring, and a step back (Truncate) within what the ring still holds give
// the bits of every layer in one pool, and a step back past it is refused.
func TestWindowRing(t *testing.T) {
	for name, config := range map[string]func() arch.Config{"gemma3": gemmaLike, "gpt-oss": gptOSSLike} {
		t.Run(name, func(t *testing.T) {
			c := config()
			m := newModel(c, 5)
			const bs = 4
			lb := kvcache.WindowBlocks(1, c.Window, 6, bs) // a chunk of 6 needs (6+5-2)/4+2 = 4
			br, err := forward.NewWindowBatched(m, simd.New(), 64, 16, lb, bs, kvcache.F32)
			if err != nil {
				t.Fatal(err)
			}
			r := engine.NewSingle(br)
			defer r.Close()
			toks := make([]int32, 40)
			for i := range toks {
				toks[i] = int32((i*11 + 3) % c.Vocab)
			}
			check := func(n int) {
				t.Helper()
				got, err := r.Logits()
				if err != nil {
					t.Fatal(err)
				}
				if err := floatbits.Check(got, alone(t, m, toks[:n])); err != nil {
					t.Fatalf("position %d: %v", n-1, err)
				}
			}
			if err := r.Forward(toks[:13]); err != nil { // chunks of at most 6 (the ring's)
				t.Fatal(err)
			}
			check(13)
			for n := 14; n <= 40; n++ {
				if err := r.Forward(toks[n-1 : n]); err != nil {
					t.Fatal(err)
				}
				check(n)
			}
			if err := r.Truncate(38); err != nil {
				t.Fatalf("a step back of 2 positions: %v", err)
			}
			if err := r.Forward(toks[38:40]); err != nil {
				t.Fatal(err)
			}
			check(40)
			if err := r.Truncate(8); err == nil {
				t.Error("a step back to position 8, past a ring of", lb, "blocks, was allowed")
			}
			if err := r.Truncate(20); err != nil { // the ring holds blocks 3.. of 40 positions
				t.Fatalf("a step back to position 20: %v", err)
			}
			if err := r.Forward(toks[20:27]); err != nil {
				t.Fatal(err)
			}
			check(27)
		})
	}
}
