// Package scheduler decides which request's sequence runs its next step.
//
// The server hands every generation to a Scheduler and reads the steps
// back from a Stream; how the steps of many sequences share the model is
// the Scheduler's business alone. Batcher, the implementation here, runs
// continuous batching over one engine.BatchRunner: every step is one
// forward pass over the next token of every running sequence and chunks
// of new prompts, their keys and values in a pool of blocks that a
// kvcache.Manager hands out. Requests beyond Config.Parallel wait in a
// bounded first-in, first-out queue.
package scheduler

import (
	"context"
	"errors"
	"sync"

	"inferno/engine"
	"inferno/kvcache"
	"inferno/sampling"
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
	// KVWindow describes the window pool of the sliding-window layers
	// (zero without one).
	KVWindow kvcache.LocalStats
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
	// Embedding is set on the last event of an embedding request
	// (engine.Request.Embed) that finished: the prompt's embedding, L2
	// normalized (or as Config.Pool pools it: a reranker's score), owned
	// by the event.
	Embedding []float32
}

// A Stream delivers the events of one request in order. Events are never
// dropped: a slow reader does not slow the scheduler, the events wait for
// it.
type Stream struct {
	mu     sync.Mutex
	events []Event // events[head:] wait; the array is reused once all are read
	head   int
	closed bool          // the last event has been queued
	notify chan struct{} // a token when events were added
}

func newStream() *Stream { return &Stream{notify: make(chan struct{}, 1)} }

// Next returns the next event, waiting for it; ok is false after the last
// event has been returned, or when ctx is done first.
func (s *Stream) Next(ctx context.Context) (ev Event, ok bool) {
	for {
		s.mu.Lock()
		if s.head < len(s.events) {
			ev = s.events[s.head]
			s.events[s.head] = Event{}
			if s.head++; s.head == len(s.events) {
				s.events, s.head = s.events[:0], 0
			}
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
	if s.head > 0 && len(s.events) == cap(s.events) {
		// Move the unread events to the front rather than grow.
		n := copy(s.events, s.events[s.head:])
		clear(s.events[n:])
		s.events, s.head = s.events[:n], 0
	}
	s.events = append(s.events, ev)
	s.closed = s.closed || last
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}
