package scheduler

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"inferno/arch"
	"inferno/backend/forward"
	"inferno/backend/simd"
	"inferno/batch"
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
func solo(t *testing.T, m arch.Model, req engine.Request) []int32 {
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
	return startBatcher(t, cpuBatched(t, m, 128, blocks, 16), Config{Parallel: parallel, BatchTokens: batchTokens, Queue: 64, PrefixCache: prefix})
}

// cpuBatched returns a CPU batch runner of m (maxLen positions a
// sequence, a pool of blocks blocks of bs), closed when the test ends.
func cpuBatched(t *testing.T, m *qwen3.Model, maxLen, blocks, bs int) *forward.Batched {
	t.Helper()
	br, err := forward.NewBatched(m, simd.New(), maxLen, blocks, bs, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Close() })
	return br
}

// startBatcher returns a Batcher over r, closed when the test ends.
func startBatcher(t *testing.T, r engine.BatchRunner, cfg Config) *Batcher {
	t.Helper()
	s, err := NewBatcher(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// requests returns n greedy requests whose prompts share prefixes (a
// common system prompt, some the continuation of others), of random
// lengths, each generating up to 24 tokens through end-of-sequence ids.
func requests(vocab, n int, seed uint64) []engine.Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	tok := func(k int) []int32 {
		p := make([]int32, k)
		for i := range p {
			p[i] = int32(rng.IntN(vocab))
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
	t.Parallel()
	m := tinyModel(t)
	reqs := requests(m.Config.Vocab, 15, 1)
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
	reqs := requests(m.Config.Vocab, 12, 2)
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

// aheadRunner is a batched runner that takes lookahead hints
// (engine.Lookaheader) and records every pass with the hint it ran under.
type aheadRunner struct {
	engine.BatchRunner
	on     bool
	passes []aheadPass
	after  func(pass int) // called after each pass, from the scheduler's goroutine
}

// aheadPass is one recorded forward pass: per sequence its identity (the
// first block of its table), the positions it ran and the positions its
// table reaches.
type aheadPass struct {
	on     bool
	decode bool // every sequence ran one token
	seqs   []int32
	pos    []int32
	reach  []int
}

func (a *aheadRunner) SetLookahead(on bool) { a.on = on }

func (a *aheadRunner) Forward(b *batch.Batch) error {
	p := aheadPass{on: a.on, decode: b.Len() == len(b.Tables)}
	for s, tab := range b.Tables {
		p.seqs = append(p.seqs, tab[0])
		p.reach = append(p.reach, len(tab)*a.BlockSize())
		for t := range b.Len() {
			if int(b.Seq[t]) == s {
				p.pos = append(p.pos, b.Pos[t])
				break
			}
		}
	}
	a.passes = append(a.passes, p)
	err := a.BatchRunner.Forward(b)
	if a.after != nil {
		a.after(len(a.passes))
	}
	return err
}

// TestBatcherLookaheadHint: the scheduler lets a runner queue the next
// decode step only when that step is what runs next (every sequence goes
// on, one position further, and no waiting request joins it), and it
// reserves the block of that step's position; requests that arrive while
// such a step may be queued join the pass after it. Every transcript is
// still the request's alone.
func TestBatcherLookaheadHint(t *testing.T) {
	m := tinyModel(t)
	a := &aheadRunner{BatchRunner: cpuBatched(t, m, 128, 200, 4), on: true}
	s := startBatcher(t, a, Config{Parallel: 8, BatchTokens: 64, Queue: 64})
	reqs := requests(m.Config.Vocab, 9, 2)
	// Three end at an end-of-generation id of their transcript, which
	// the scheduler cannot see coming: each stays for the step the runner
	// may have queued (bjob.linger).
	for _, i := range []int{1, 3, 4} {
		ids := solo(t, m, reqs[i])
		reqs[i].EOG = map[int32]bool{ids[len(ids)/2]: true}
		reqs[i].IgnoreEOS = false
	}
	// Two requests arrive in the middle of the run, while a pass that let
	// the runner queue the next step runs (after it, from its goroutine:
	// they wait before the scheduler reads the pass).
	late := make(chan []Event, 1)
	lateAt := 0
	a.after = func(pass int) {
		if lateAt > 0 || pass < 10 || !a.passes[pass-1].on {
			return
		}
		lateAt = pass
		var sts []*Stream
		for _, req := range reqs[6:] {
			st, err := s.Submit(context.Background(), req)
			if err != nil {
				t.Error(err)
				late <- nil
				return
			}
			sts = append(sts, st)
		}
		go func() {
			var last []Event
			for _, st := range sts {
				_, ev := drain(t, st)
				last = append(last, ev)
			}
			late <- last
		}()
	}
	got, last := runAll(t, s, reqs[:6])
	lastLate := <-late
	waitIdle(t, s)
	stops := 0
	for i, req := range reqs[:6] {
		if last[i].Err != nil {
			t.Fatalf("request %d: %v", i, last[i].Err)
		}
		if last[i].Finish == engine.FinishStop {
			stops++
		}
		if want := solo(t, m, req); !slicesEqual(got[i], want) {
			t.Errorf("request %d: batched %v, alone %v", i, got[i], want)
		}
	}
	if lateAt == 0 {
		t.Fatal("no pass after the tenth let the runner queue the next step")
	}
	if q := a.passes[lateAt]; q.on || !q.decode {
		t.Errorf("pass %d, after the requests arrived: lookahead %v, decode only %v (want the step the runner may have queued, and no lookahead)", lateAt, q.on, q.decode)
	}
	if len(lastLate) != len(reqs[6:]) {
		t.Fatalf("%d late requests ended", len(lastLate))
	}
	for i, ev := range lastLate {
		if ev.Err != nil {
			t.Fatalf("late request %d: %v", i, ev.Err)
		}
	}
	on, off := 0, 0
	for k, p := range a.passes {
		if !p.on {
			off++
			continue
		}
		on++
		if !p.decode {
			t.Errorf("pass %d: lookahead on for a pass that runs a prompt chunk", k)
		}
		for i, pos := range p.pos {
			if p.reach[i] < int(pos)+2 {
				t.Errorf("pass %d: sequence %d at %d: its table reaches %d, not the next position", k, i, pos, p.reach[i])
			}
		}
		if k+1 == len(a.passes) {
			t.Errorf("pass %d, the last: lookahead on", k)
			continue
		}
		q := a.passes[k+1]
		if !slicesEqual(p.seqs, q.seqs) || !q.decode {
			t.Errorf("pass %d queued the next step, but pass %d runs other sequences (%v, then %v; decode %v)", k, k+1, p.seqs, q.seqs, q.decode)
			continue
		}
		for i := range p.pos {
			if q.pos[i] != p.pos[i]+1 {
				t.Errorf("pass %d: sequence %d at %d, then at %d", k, i, p.pos[i], q.pos[i])
			}
		}
	}
	if stops != 3 {
		t.Errorf("%d requests ended at an end-of-generation id, want 3", stops)
	}
	if on == 0 || off == 0 {
		t.Errorf("%d passes with the lookahead on, %d off: the run exercises only one", on, off)
	}
	t.Logf("%d passes: lookahead on for %d", len(a.passes), on)
}

// TestBatcherHostPicks: on a runner that leaves sampling to the host,
// seeded sampled requests (temperature, top_p, top_k, min_p, penalties)
// picked together on the helpers give the tokens they give alone.
func TestBatcherHostPicks(t *testing.T) {
	t.Parallel()
	m := tinyModel(t)
	reqs := requests(m.Config.Vocab, 8, 3)
	params := []sampling.Params{
		{Temperature: 1},
		{Temperature: 0.7, TopP: 0.8, TopK: 20},
		{Temperature: 1.3, MinP: 0.05},
		{Temperature: 0.9, TopP: 0.95, RepetitionPenalty: 1.3, PresencePenalty: 0.5},
		{Temperature: 1, FrequencyPenalty: 0.4},
		{},
		{Temperature: 0.6, TopK: 5},
		{Temperature: 1, Logprobs: true, TopLogprobs: 3},
	}
	for i := range reqs {
		reqs[i].Sampling = params[i]
		reqs[i].Sampling.Seed, reqs[i].Sampling.HasSeed = uint64(40+i), true
	}
	s := newBatcher(t, m, 200, len(reqs), 64, false)
	if !s.hostPicks {
		t.Fatal("the CPU runner's picks are not the host's")
	}
	got, last := runAll(t, s, reqs)
	for i, req := range reqs {
		if last[i].Err != nil {
			t.Fatalf("request %d: %v", i, last[i].Err)
		}
		if want := solo(t, m, req); !slicesEqual(got[i], want) {
			t.Errorf("request %d (%+v): batched %v, alone %v", i, req.Sampling, got[i], want)
		}
	}
}
