// Package enginetest provides scripted runners (engine.Runner and
// engine.BatchRunner) for tests of what sits above the forward pass (the
// engine, the scheduler, the server): their logits put the next token of
// a script far above every other id, so greedy decoding and sampling at
// any temperature both replay the script.
package enginetest

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Runner is a scripted engine.Runner: the k-th pick (call of Greedy or
// Logits) after a Reset or Truncate gets Script[k] as the winner; past the
// end of the script, Fill. Its methods are
// safe for concurrent use, as far as counting calls goes.
type Runner struct {
	Script     []int32
	Fill       int32
	Vocabulary int
	Max        int           // MaxLen
	Delay      time.Duration // slept in every Forward, to simulate work

	mu       sync.Mutex
	n        int // positions held
	picks    int // Greedy and Logits calls since Reset or Truncate
	logits   []float32
	forwards int
	closed   bool
}

// New returns a Runner over a vocabulary of vocab ids with a context of
// max positions that replays script.
func New(script []int32, vocab, max int) *Runner {
	return &Runner{Script: script, Vocabulary: vocab, Max: max}
}

// Forward implements engine.Runner.
func (r *Runner) Forward(tokens []int32) error {
	if r.Delay > 0 {
		time.Sleep(r.Delay)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("enginetest: closed")
	}
	if len(tokens) == 0 {
		return errors.New("enginetest: forward of no tokens")
	}
	if r.n+len(tokens) > r.Max {
		return fmt.Errorf("enginetest: %d positions pass the context of %d", r.n+len(tokens), r.Max)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= r.Vocabulary {
			return fmt.Errorf("enginetest: token %d outside the vocabulary", t)
		}
	}
	r.n += len(tokens)
	r.forwards++
	return nil
}

// next returns the winner of the next pick.
func (r *Runner) next() int32 {
	k := r.picks
	r.picks++
	if k < len(r.Script) {
		return r.Script[k]
	}
	return r.Fill
}

// Logits implements engine.Runner: 0 everywhere but 40 at the script's
// next token.
func (r *Runner) Logits() ([]float32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.logits == nil {
		r.logits = make([]float32, r.Vocabulary)
	}
	clear(r.logits)
	r.logits[r.next()] = 40
	return r.logits, nil
}

// Greedy implements engine.Runner.
func (r *Runner) Greedy() (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next(), nil
}

// Len implements engine.Runner.
func (r *Runner) Len() int { r.mu.Lock(); defer r.mu.Unlock(); return r.n }

// MaxLen implements engine.Runner.
func (r *Runner) MaxLen() int { return r.Max }

// Vocab implements engine.Runner.
func (r *Runner) Vocab() int { return r.Vocabulary }

// Reset implements engine.Runner.
func (r *Runner) Reset() { r.mu.Lock(); r.n, r.picks = 0, 0; r.mu.Unlock() }

// Truncate implements engine.Runner.
func (r *Runner) Truncate(n int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 0 || n > r.n {
		return fmt.Errorf("enginetest: cannot truncate %d positions to %d", r.n, n)
	}
	r.n, r.picks = n, 0
	return nil
}

// SplitInvariant implements engine.SplitInvariant: a scripted runner keeps
// cached prefixes.
func (r *Runner) SplitInvariant() bool { return true }

// Backend implements engine.Runner.
func (r *Runner) Backend() string { return "scripted" }

// Close implements engine.Runner.
func (r *Runner) Close() error { r.mu.Lock(); r.closed = true; r.mu.Unlock(); return nil }

// Forwards returns the number of Forward calls so far.
func (r *Runner) Forwards() int { r.mu.Lock(); defer r.mu.Unlock(); return r.forwards }
