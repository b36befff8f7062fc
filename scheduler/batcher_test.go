package scheduler

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"inferno/backend/forward"
	"inferno/backend/simd"
	"inferno/engine"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/qwen3"
	"inferno/sampling"
)

// tinyModel opens the repository's tiny golden Qwen3 model.
func tinyModel(t *testing.T) *qwen3.Model {
	t.Helper()
	f, err := gguf.Open(filepath.Join("..", "testdata", "golden", "tiny-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// solo generates req alone, a batch of one in one block of the context
// (the basic layout): the transcript every batched run must reproduce.
func solo(t *testing.T, m *qwen3.Model, req engine.Request) []int32 {
	t.Helper()
	br, err := forward.NewBatched(m, simd.New(), 128, 1, 128, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	r := engine.NewSingle(br)
	defer r.Close()
	seq, err := engine.NewSequence(r, nil, req)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	for !seq.Done() {
		st, err := seq.Step()
		if err != nil {
			t.Fatal(err)
		}
		if st.HasToken {
			ids = append(ids, st.Token.ID)
		}
	}
	return ids
}

func newBatcher(t *testing.T, m *qwen3.Model, blocks, parallel, batchTokens int, prefix bool) *Batcher {
	t.Helper()
	br, err := forward.NewBatched(m, simd.New(), 128, blocks, 16, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Close() })
	s, err := NewBatcher(br, Config{Parallel: parallel, BatchTokens: batchTokens, Queue: 64, PrefixCache: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// requests returns n greedy requests whose prompts share prefixes (a
// common system prompt, some the continuation of others), of random
// lengths, each generating up to 24 tokens through end-of-sequence ids.
func requests(m *qwen3.Model, n int, seed uint64) []engine.Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	tok := func(k int) []int32 {
		p := make([]int32, k)
		for i := range p {
			p[i] = int32(rng.IntN(m.Config.Vocab))
		}
		return p
	}
	system := tok(21)
	var reqs []engine.Request
	for i := range n {
		var p []int32
		switch i % 3 {
		case 0:
			p = append(append([]int32(nil), system...), tok(1+rng.IntN(30))...)
		case 1:
			p = tok(1 + rng.IntN(50))
		default:
			prev := reqs[len(reqs)-1].Prompt
			p = append(append([]int32(nil), prev...), tok(1+rng.IntN(10))...)
		}
		reqs = append(reqs, engine.Request{Prompt: p, MaxTokens: 8 + rng.IntN(17), Sampling: sampling.Params{}, IgnoreEOS: true})
	}
	return reqs
}

// runAll submits reqs at once and returns every transcript.
func runAll(t *testing.T, s *Batcher, reqs []engine.Request) ([][]int32, []Event) {
	t.Helper()
	got := make([][]int32, len(reqs))
	last := make([]Event, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		st, err := s.Submit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], last[i] = drain(t, st)
		}()
	}
	wg.Wait()
	return got, last
}

// waitIdle waits until no request runs or waits.
func waitIdle(t *testing.T, s *Batcher) Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.Stats()
		if st.Running == 0 && st.Waiting == 0 {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("scheduler still busy: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBatcherMatchesSolo: many requests, sharing prefixes, batched with
// chunked prefill on a pool too small for all of them at once (so the
// scheduler preempts, and evicts cached blocks), each give the transcript
// of their request run alone; afterwards every block is back.
func TestBatcherMatchesSolo(t *testing.T) {
	m := tinyModel(t)
	reqs := requests(m, 15, 1)
	for _, tc := range []struct {
		name                          string
		blocks, parallel, batchTokens int
		prefix                        bool
	}{
		{"roomy", 200, 6, 64, true},
		{"tight", 9, 6, 24, true},
		{"tight-no-prefix", 9, 6, 24, false},
		{"one-at-a-time", 8, 1, 7, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newBatcher(t, m, tc.blocks, tc.parallel, tc.batchTokens, tc.prefix)
			got, last := runAll(t, s, reqs)
			for i, req := range reqs {
				if last[i].Err != nil {
					t.Fatalf("request %d: %v", i, last[i].Err)
				}
				want := solo(t, m, req)
				if !slicesEqual(got[i], want) {
					t.Errorf("request %d (prompt %d tokens): batched %v, alone %v", i, len(req.Prompt), got[i], want)
				}
			}
			st := waitIdle(t, s)
			if st.KV.Used != 0 || st.KV.Free+st.KV.Cached != st.KV.Blocks {
				t.Errorf("blocks after the run: %+v", st.KV)
			}
			if tc.name == "tight" && st.Preemptions == 0 {
				t.Errorf("a pool of %d blocks for %d sequences preempted none", tc.blocks, tc.parallel)
			}
			if tc.prefix && st.KV.CachedTokens == 0 {
				t.Errorf("no prefix cache hit among requests that share prefixes")
			}
			t.Logf("%+v, preemptions %d", st.KV, st.Preemptions)
		})
	}
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBatcherPrefixHit: the next turn of a conversation reuses the
// earlier turn's blocks, reports them as cached, and generates what it
// would have without them.
func TestBatcherPrefixHit(t *testing.T) {
	m := tinyModel(t)
	s := newBatcher(t, m, 64, 4, 64, true)
	first := engine.Request{Prompt: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, MaxTokens: 10, IgnoreEOS: true}
	got, last := runAll(t, s, []engine.Request{first})
	if last[0].Metrics.CachedTokens != 0 {
		t.Errorf("first request: %d cached tokens", last[0].Metrics.CachedTokens)
	}
	next := append(append(append([]int32(nil), first.Prompt...), got[0]...), 30, 31, 32)
	second := engine.Request{Prompt: next, MaxTokens: 10, IgnoreEOS: true}
	got2, last2 := runAll(t, s, []engine.Request{second})
	// The first turn's prompt and all but its last generated token (never
	// fed back) are in the cache.
	if c, want := last2[0].Metrics.CachedTokens, len(first.Prompt)+len(got[0])-1; c != want {
		t.Errorf("second turn: %d cached tokens, want %d", c, want)
	}
	if want := solo(t, m, second); !slicesEqual(got2[0], want) {
		t.Errorf("second turn: %v with the cache, %v without", got2[0], want)
	}
}

// TestBatcherCancel: clients that go away mid-stream (and while waiting)
// give every KV block back, and the others finish.
func TestBatcherCancel(t *testing.T) {
	m := tinyModel(t)
	s := newBatcher(t, m, 40, 4, 32, true)
	reqs := requests(m, 12, 2)
	var wg sync.WaitGroup
	for i, req := range reqs {
		req.MaxTokens = 60
		ctx, cancel := context.WithCancel(context.Background())
		st, err := s.Submit(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel()
			n := 0
			for {
				ev, ok := st.Next(context.Background())
				if !ok {
					return
				}
				n++
				if i%2 == 0 && n == 1+i%5 {
					cancel()
				}
				_ = ev
			}
		}()
	}
	wg.Wait()
	st := waitIdle(t, s)
	if st.KV.Used != 0 || st.KV.Free+st.KV.Cached != st.KV.Blocks {
		t.Errorf("blocks after cancellations: %+v", st.KV)
	}
}

// TestBatcherRejects: a prompt longer than the context fails at Submit.
func TestBatcherRejects(t *testing.T) {
	m := tinyModel(t)
	s := newBatcher(t, m, 16, 2, 16, true)
	if _, err := s.Submit(context.Background(), engine.Request{Prompt: make([]int32, 129)}); err == nil {
		t.Error("a 129-token prompt in a 128-token context was accepted")
	}
	if _, err := s.Submit(context.Background(), engine.Request{}); err == nil {
		t.Error("an empty prompt was accepted")
	}
	small, err := forward.NewBatched(m, simd.New(), 128, 4, 16, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if _, err := NewBatcher(small, Config{Parallel: 2}); err == nil {
		t.Error("a pool smaller than one context was accepted")
	}
}
