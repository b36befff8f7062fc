// Package scheduler decides which request's sequence runs its next step.
//
// The server hands every generation to a Scheduler and reads the steps
// back from a Stream; how the steps of many sequences share the model is
// the Scheduler's business alone. Slots, the implementation here, keeps up
// to N sequences active, each on its own runner (its own KV cache, the
// model's weights shared), and runs one step of each in turn: a chunk of a
// prompt or one decode step, so a long prompt delays the others by one
// chunk at a time. Requests beyond N wait in a bounded first-in,
// first-out queue.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"inferno/engine"
	"inferno/kvcache"
	"inferno/sampling"
	"inferno/tokenizer"
)

// Errors Submit returns.
var (
	// ErrQueueFull: every slot is busy and the queue holds its most.
	ErrQueueFull = errors.New("scheduler: every slot is busy and the queue is full")
	// ErrClosed: the scheduler is shutting down.
	ErrClosed = errors.New("scheduler: shutting down")
)

// A Scheduler runs generation requests on a model.
type Scheduler interface {
	// Submit queues req. The request runs until it finishes, ctx is
	// cancelled (its slot is freed before the next step) or the scheduler
	// closes. Submit fails at once with ErrQueueFull or ErrClosed, or with
	// the error engine.NewSequence gives for a request that cannot run (a
	// prompt longer than the context, for example).
	Submit(ctx context.Context, req engine.Request) (*Stream, error)
	// Stats returns the current load.
	Stats() Stats
	// Close cancels every request, running or waiting, and waits for the
	// scheduler's work to stop. Submit fails afterwards.
	Close()
}

// Stats describe a scheduler's load at one moment.
type Stats struct {
	Slots   int // sequences that can run at once
	Running int // requests holding a slot
	Waiting int // requests in the queue
	// KVUsed and KVCapacity count the KV cache positions the running
	// sequences hold, and the positions all slots could hold.
	KVUsed, KVCapacity int
	// KV describes the block pool of a paged cache (zero for Slots).
	KV kvcache.Stats
	// Preemptions counts sequences whose KV blocks were taken back so
	// that others could go on; they ran their tokens again later.
	Preemptions int64
}

// KVUtilization returns the fraction of the KV cache in use, 0 to 1.
func (s Stats) KVUtilization() float64 {
	if s.KVCapacity == 0 {
		return 0
	}
	return float64(s.KVUsed) / float64(s.KVCapacity)
}

// An Event is one step's output, or the end of a stream.
type Event struct {
	// Token is the generated token (Token.Top owned by the event), when
	// HasToken.
	HasToken bool
	Token    sampling.Token
	// Text is the text that became safe to emit.
	Text string
	// Finish is set on the last event of a finished request:
	// engine.FinishStop or engine.FinishLength.
	Finish string
	// Err is set on the last event of a request that failed or was
	// cancelled.
	Err error
	// Metrics is set on the last event.
	Metrics engine.Metrics
}

// A Stream delivers the events of one request in order. Events are never
// dropped: a slow reader does not slow the scheduler, the events wait for
// it.
type Stream struct {
	mu     sync.Mutex
	events []Event
	closed bool          // the last event has been queued
	notify chan struct{} // a token when events were added
}

func newStream() *Stream { return &Stream{notify: make(chan struct{}, 1)} }

// Next returns the next event, waiting for it; ok is false after the last
// event has been returned, or when ctx is done first.
func (s *Stream) Next(ctx context.Context) (ev Event, ok bool) {
	for {
		s.mu.Lock()
		if len(s.events) > 0 {
			ev = s.events[0]
			s.events[0] = Event{}
			s.events = s.events[1:]
			s.mu.Unlock()
			return ev, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return Event{}, false
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return Event{}, false
		}
	}
}

func (s *Stream) push(ev Event, last bool) {
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.closed = s.closed || last
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// job is one request in the scheduler.
type job struct {
	ctx    context.Context
	req    engine.Request
	stream *Stream
	seq    *engine.Sequence
	kv     int         // positions the sequence holds (guarded by Slots.mu)
	stopAF func() bool // unregisters the cancellation callback
}

// Slots is a Scheduler that interleaves the steps of up to len(runners)
// sequences, each on its own runner.
type Slots struct {
	tok      *tokenizer.Tokenizer
	runners  []engine.Runner
	maxQueue int

	mu      sync.Mutex
	cond    *sync.Cond
	active  []*job    // per runner; nil when free
	cached  [][]int32 // per runner: the ids its KV cache holds from its last request
	waiting []*job
	closed  bool
	done    chan struct{}
}

// NewSlots starts a scheduler over runners (one per slot, each used by the
// scheduler's goroutine alone from now on) with a queue of at most
// maxQueue waiting requests. tok decodes the generated text.
func NewSlots(runners []engine.Runner, tok *tokenizer.Tokenizer, maxQueue int) *Slots {
	s := &Slots{tok: tok, runners: runners, maxQueue: maxQueue, active: make([]*job, len(runners)),
		cached: make([][]int32, len(runners)), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.loop()
	return s
}

// Submit implements Scheduler. The request's prompt is checked against the
// context here, so a request that cannot run fails before it waits.
func (s *Slots) Submit(ctx context.Context, req engine.Request) (*Stream, error) {
	if len(s.runners) == 0 {
		return nil, ErrClosed
	}
	if max := s.runners[0].MaxLen(); len(req.Prompt) > max {
		return nil, &engine.ContextError{Prompt: len(req.Prompt), Context: max}
	}
	if len(req.Prompt) == 0 {
		return nil, errors.New("scheduler: empty prompt")
	}
	j := &job{ctx: ctx, req: req, stream: newStream()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if len(s.waiting) >= s.maxQueue+s.freeSlots() {
		return nil, ErrQueueFull
	}
	s.waiting = append(s.waiting, j)
	// A request cancelled while it waits leaves the queue at once; one
	// that runs is dropped by the loop before its next step.
	j.stopAF = context.AfterFunc(ctx, func() {
		s.mu.Lock()
		if i := slices.Index(s.waiting, j); i >= 0 {
			s.waiting = slices.Delete(s.waiting, i, i+1)
			j.stream.push(Event{Err: ctx.Err()}, true)
		}
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	s.cond.Broadcast()
	return j.stream, nil
}

// freeSlots counts the slots without a request. The caller holds s.mu.
func (s *Slots) freeSlots() int {
	free := 0
	for _, j := range s.active {
		if j == nil {
			free++
		}
	}
	return free
}

// Stats implements Scheduler.
func (s *Slots) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Slots: len(s.runners), Waiting: len(s.waiting)}
	for i, j := range s.active {
		st.KVCapacity += s.runners[i].MaxLen()
		if j != nil {
			st.Running++
			st.KVUsed += j.kv
		}
	}
	return st
}

// Close implements Scheduler.
func (s *Slots) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		for _, j := range s.waiting {
			j.stream.push(Event{Err: ErrClosed}, true)
			j.stopAF()
		}
		s.waiting = nil
		s.cond.Broadcast()
	}
	s.mu.Unlock()
	<-s.done
}

// loop admits waiting requests into free slots and runs one step of each
// active sequence in turn, until Close.
func (s *Slots) loop() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for !s.closed && len(s.waiting) == 0 && !s.anyActive() {
			s.cond.Wait()
		}
		if s.closed {
			for i, j := range s.active {
				if j != nil {
					s.finish(i, Event{Err: ErrClosed})
				}
			}
			s.mu.Unlock()
			return
		}
		s.admit()
		s.mu.Unlock()
		for i := range s.active {
			s.mu.Lock()
			j := s.active[i]
			s.mu.Unlock()
			if j == nil {
				continue
			}
			s.step(i, j)
		}
	}
}

func (s *Slots) anyActive() bool {
	return slices.ContainsFunc(s.active, func(j *job) bool { return j != nil })
}

// admit moves waiting requests into free slots, oldest first, each into
// the free slot whose KV cache shares the longest prefix with its prompt
// (the earlier turns of its conversation, most likely). The caller holds
// s.mu.
func (s *Slots) admit() {
	for len(s.waiting) > 0 {
		j := s.waiting[0]
		i, best := -1, -1
		for k, a := range s.active {
			if a == nil {
				if n := engine.CommonPrefix(s.cached[k], j.req.Prompt); n > best {
					i, best = k, n
				}
			}
		}
		if i < 0 {
			return
		}
		s.waiting = slices.Delete(s.waiting, 0, 1)
		j.req.Cached = s.cached[i]
		s.cached[i] = nil
		seq, err := engine.NewSequence(s.runners[i], s.tok, j.req)
		if err != nil {
			j.stopAF()
			j.stream.push(Event{Err: err}, true)
			continue
		}
		j.seq = seq
		s.active[i] = j
	}
}

// step runs one step of slot i's sequence and delivers what it produced;
// a cancelled request is dropped instead. A panic in the step (a bug
// reached by one request) ends that request with an error, empties the
// slot's runner and leaves the others running.
func (s *Slots) step(i int, j *job) {
	defer func() {
		if p := recover(); p != nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.active[i] == j {
				s.finish(i, Event{Err: fmt.Errorf("scheduler: internal error: %v", p)})
			}
			s.cached[i] = nil
			s.runners[i].Reset()
		}
	}()
	if err := j.ctx.Err(); err != nil {
		s.mu.Lock()
		s.finish(i, Event{Err: err})
		s.mu.Unlock()
		return
	}
	st, err := j.seq.Step()
	s.mu.Lock()
	j.kv = j.seq.Len()
	if err != nil {
		s.finish(i, Event{Err: err})
	}
	s.mu.Unlock()
	if err != nil || !st.HasToken {
		return
	}
	ev := Event{HasToken: true, Token: st.Token, Text: st.Text, Finish: st.Finish}
	ev.Token.Top = slices.Clone(st.Token.Top)
	if st.Finish == "" {
		j.stream.push(ev, false)
		return
	}
	s.mu.Lock()
	s.finish(i, ev)
	s.mu.Unlock()
}

// finish ends slot i's request with its last event and frees the slot.
// The caller holds s.mu.
func (s *Slots) finish(i int, last Event) {
	j := s.active[i]
	if j.seq != nil {
		last.Metrics = j.seq.Metrics()
		s.cached[i] = j.seq.Tokens()
		j.seq.Release()
	}
	j.stopAF()
	j.stream.push(last, true)
	s.active[i] = nil
}
