package scheduler

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"inferno/engine"
	"inferno/engine/enginetest"
	"inferno/sampling"
)

const vocab = 64

func newSlots(t *testing.T, n, queue int, script []int32, delay time.Duration) (*Slots, []*enginetest.Runner) {
	t.Helper()
	var rs []engine.Runner
	var es []*enginetest.Runner
	for range n {
		r := enginetest.New(script, vocab, 256)
		r.Delay = delay
		rs = append(rs, r)
		es = append(es, r)
	}
	s := NewSlots(rs, nil, queue)
	t.Cleanup(s.Close)
	return s, es
}

// drain reads a stream to its end and returns its tokens and last event.
func drain(t *testing.T, st *Stream) ([]int32, Event) {
	t.Helper()
	var ids []int32
	var last Event
	for {
		ev, ok := st.Next(context.Background())
		if !ok {
			return ids, last
		}
		if ev.HasToken {
			ids = append(ids, ev.Token.ID)
		}
		last = ev
	}
}

func greedy(prompt []int32, n int) engine.Request {
	return engine.Request{Prompt: prompt, MaxTokens: n, Sampling: sampling.Params{}}
}

func TestRunsToTheEnd(t *testing.T) {
	s, _ := newSlots(t, 2, 4, []int32{5, 6, 7, 8}, 0)
	st, err := s.Submit(context.Background(), greedy([]int32{1, 2, 3}, 3))
	if err != nil {
		t.Fatal(err)
	}
	ids, last := drain(t, st)
	if !slices.Equal(ids, []int32{5, 6, 7}) || last.Finish != engine.FinishLength || last.Err != nil {
		t.Errorf("tokens %v, last %+v", ids, last)
	}
	if last.Metrics.GeneratedTokens != 3 || last.Metrics.PromptTokens != 3 {
		t.Errorf("metrics %+v", last.Metrics)
	}
	if st := s.Stats(); st.Running != 0 || st.Waiting != 0 || st.Slots != 2 {
		t.Errorf("stats after: %+v", st)
	}
}

// TestInterleaves: with one slot per request, the requests' steps take
// turns; all finish with their own tokens.
func TestInterleaves(t *testing.T) {
	s, rs := newSlots(t, 3, 0, []int32{9, 9, 9, 9, 9, 9, 9, 9}, time.Millisecond)
	var wg sync.WaitGroup
	for i := range 3 {
		st, err := s.Submit(context.Background(), greedy([]int32{int32(i + 1)}, 8))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids, last := drain(t, st)
			if len(ids) != 8 || last.Err != nil {
				t.Errorf("request %d: %v %+v", i, ids, last)
			}
		}()
	}
	wg.Wait()
	for i, r := range rs {
		if r.Forwards() != 8 {
			t.Errorf("runner %d ran %d forward passes, want 8", i, r.Forwards())
		}
	}
}

// TestQueue: beyond the slots, requests wait in order; beyond the queue,
// ErrQueueFull; a waiting request that is cancelled leaves at once.
func TestQueue(t *testing.T) {
	s, _ := newSlots(t, 1, 2, []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 5*time.Millisecond)
	first, err := s.Submit(context.Background(), greedy([]int32{1}, 10))
	if err != nil {
		t.Fatal(err)
	}
	// Let the loop admit the first request.
	for s.Stats().Running == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	second, err := s.Submit(ctx, greedy([]int32{2}, 2))
	if err != nil {
		t.Fatal(err)
	}
	third, err := s.Submit(context.Background(), greedy([]int32{3}, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(context.Background(), greedy([]int32{4}, 2)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("fourth request: %v, want ErrQueueFull", err)
	}
	if st := s.Stats(); st.Running != 1 || st.Waiting != 2 {
		t.Errorf("stats %+v", st)
	}
	cancel()
	if _, last := drain(t, second); !errors.Is(last.Err, context.Canceled) {
		t.Errorf("cancelled waiting request ended with %+v", last)
	}
	if st := s.Stats(); st.Waiting != 1 {
		t.Errorf("after the cancel: %d waiting", st.Waiting)
	}
	if ids, last := drain(t, first); len(ids) != 10 || last.Err != nil {
		t.Errorf("first: %v %+v", ids, last)
	}
	if ids, last := drain(t, third); len(ids) != 2 || last.Err != nil {
		t.Errorf("third: %v %+v", ids, last)
	}
}

// TestCancelRunning frees the slot within a step of the cancellation.
func TestCancelRunning(t *testing.T) {
	s, rs := newSlots(t, 1, 0, nil, 2*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := s.Submit(ctx, greedy([]int32{1}, 200))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, ok := st.Next(context.Background()); !ok {
			t.Fatal("stream ended early")
		}
	}
	cancel()
	at := rs[0].Forwards()
	_, last := drain(t, st)
	if !errors.Is(last.Err, context.Canceled) {
		t.Errorf("last event %+v", last)
	}
	if n := rs[0].Forwards() - at; n > 2 {
		t.Errorf("%d steps after the cancellation", n)
	}
	if s.Stats().Running != 0 {
		t.Error("slot still held")
	}
}

// TestPrefixReuse: a request whose prompt extends the last one of a slot
// goes to that slot and runs only the new tokens.
func TestPrefixReuse(t *testing.T) {
	s, rs := newSlots(t, 2, 0, []int32{7, 8}, 0)
	p1 := []int32{1, 2, 3, 4, 5, 6}
	st, _ := s.Submit(context.Background(), greedy(p1, 2))
	ids, last := drain(t, st)
	if last.Metrics.CachedTokens != 0 {
		t.Errorf("first request: %d cached", last.Metrics.CachedTokens)
	}
	// The next turn: the first prompt, the reply, more tokens.
	p2 := append(append(slices.Clone(p1), ids...), 10, 11)
	st, _ = s.Submit(context.Background(), greedy(p2, 2))
	_, last = drain(t, st)
	// The slot held p1 and the first reply token (the last one is never fed).
	if want := len(p1) + 1; last.Metrics.CachedTokens != want {
		t.Errorf("second request: %d cached tokens, want %d", last.Metrics.CachedTokens, want)
	}
	if rs[0].Forwards()+rs[1].Forwards() != 2+2 {
		t.Errorf("%d and %d forward passes", rs[0].Forwards(), rs[1].Forwards())
	}
	// An unrelated prompt goes to the other, empty slot... or any free one,
	// but never reuses a cache it shares nothing with.
	st, _ = s.Submit(context.Background(), greedy([]int32{40, 41}, 1))
	if _, last = drain(t, st); last.Metrics.CachedTokens != 0 {
		t.Errorf("unrelated prompt: %d cached", last.Metrics.CachedTokens)
	}
}

// TestRejects: a prompt longer than the context fails at Submit.
func TestRejects(t *testing.T) {
	s, _ := newSlots(t, 1, 0, nil, 0)
	_, err := s.Submit(context.Background(), greedy(make([]int32, 300), 1))
	var ce *engine.ContextError
	if !errors.As(err, &ce) || ce.Prompt != 300 || ce.Context != 256 {
		t.Errorf("long prompt: %v", err)
	}
	if _, err := s.Submit(context.Background(), greedy(nil, 1)); err == nil {
		t.Error("empty prompt accepted")
	}
}

// TestClose ends running and waiting requests with ErrClosed.
func TestClose(t *testing.T) {
	s, _ := newSlots(t, 1, 4, nil, time.Millisecond)
	a, _ := s.Submit(context.Background(), greedy([]int32{1}, 250))
	b, _ := s.Submit(context.Background(), greedy([]int32{1}, 250))
	for s.Stats().Running == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	for _, st := range []*Stream{a, b} {
		if _, last := drain(t, st); !errors.Is(last.Err, ErrClosed) {
			t.Errorf("last event %+v", last)
		}
	}
	if _, err := s.Submit(context.Background(), greedy([]int32{1}, 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("submit after close: %v", err)
	}
}

// panicky panics in its tenth forward pass.
type panicky struct {
	*enginetest.Runner
	n int
}

func (p *panicky) Forward(tokens []int32) error {
	if p.n++; p.n == 10 {
		panic("boom")
	}
	return p.Runner.Forward(tokens)
}

// TestPanicInStep: a panic in one request's step ends that request with an
// error; the scheduler goes on serving.
func TestPanicInStep(t *testing.T) {
	r := &panicky{Runner: enginetest.New(nil, vocab, 256)}
	s := NewSlots([]engine.Runner{r}, nil, 4)
	defer s.Close()
	st, _ := s.Submit(context.Background(), greedy([]int32{1}, 50))
	if _, last := drain(t, st); last.Err == nil {
		t.Fatal("no error after the panic")
	}
	st, _ = s.Submit(context.Background(), greedy([]int32{1}, 5))
	if ids, last := drain(t, st); len(ids) != 5 || last.Err != nil {
		t.Errorf("after the panic: %v %+v", ids, last)
	}
}
