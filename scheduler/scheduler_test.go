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

// scripted returns a Batcher of up to n sequences and a queue of queue
// over a scripted runner (contexts of 256 positions, room for every
// sequence, no prefix cache) whose passes each take delay.
func scripted(t *testing.T, n, queue int, script []int32, delay time.Duration) (*Batcher, *enginetest.Batched) {
	t.Helper()
	r := enginetest.NewBatched(script, vocab, 256, n*16, 16)
	r.Delay = delay
	return scriptedOn(t, r, n, queue), r
}

func scriptedOn(t *testing.T, r *enginetest.Batched, n, queue int) *Batcher {
	t.Helper()
	s, err := NewBatcher(r, Config{Parallel: n, Queue: queue})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
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
	s, _ := scripted(t, 2, 4, []int32{5, 6, 7, 8}, 0)
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

// TestShares: requests that run together share forward passes; all
// finish with their own tokens.
func TestShares(t *testing.T) {
	s, r := scripted(t, 3, 0, []int32{9, 9, 9, 9, 9, 9, 9, 9}, time.Millisecond)
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
	if n := r.Forwards(); n >= 3*8 {
		t.Errorf("%d forward passes for 3 requests of 8 tokens: none shared", n)
	}
}

// TestQueue: beyond the slots, requests wait in order; beyond the queue,
// ErrQueueFull; a waiting request that is cancelled leaves at once.
func TestQueue(t *testing.T) {
	s, _ := scripted(t, 1, 2, []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 5*time.Millisecond)
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
	s, r := scripted(t, 1, 0, nil, 2*time.Millisecond)
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
	at := r.Forwards()
	_, last := drain(t, st)
	if !errors.Is(last.Err, context.Canceled) {
		t.Errorf("last event %+v", last)
	}
	if n := r.Forwards() - at; n > 2 {
		t.Errorf("%d steps after the cancellation", n)
	}
	if s.Stats().Running != 0 {
		t.Error("slot still held")
	}
}

// TestRejects: a prompt longer than the context fails at Submit.
func TestRejects(t *testing.T) {
	s, _ := scripted(t, 1, 0, nil, 0)
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
	s, _ := scripted(t, 1, 4, nil, time.Millisecond)
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

// TestPanicInStep: a panic in one request's step ends that request with an
// error; the scheduler goes on serving.
func TestPanicInStep(t *testing.T) {
	r := enginetest.NewBatched(nil, vocab, 256, 16, 16)
	r.PanicAt = 10
	s := scriptedOn(t, r, 1, 4)
	st, _ := s.Submit(context.Background(), greedy([]int32{1}, 50))
	if _, last := drain(t, st); last.Err == nil {
		t.Fatal("no error after the panic")
	}
	st, _ = s.Submit(context.Background(), greedy([]int32{1}, 5))
	if ids, last := drain(t, st); len(ids) != 5 || last.Err != nil {
		t.Errorf("after the panic: %v %+v", ids, last)
	}
}
