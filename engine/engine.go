// Package engine is the generation loop: it feeds a prompt to a Runner,
// picks tokens, stops at end-of-generation tokens or a limit, streams text
// and measures how long each step took.
package engine

import (
	"context"
	"fmt"
	"math"
	"time"
)

// OpStats are the totals of one operation of a traced forward pass
// (backend.Tracer on the CPU, the CUDA backend's kernel timings).
type OpStats struct {
	Name  string
	Calls int
	Total time.Duration
}

// A Runner runs a model for one sequence on some backend (CPU or GPU),
// keeping that sequence's KV cache.
type Runner interface {
	// Forward appends tokens to the sequence and runs them through the
	// model, leaving the last position's output ready for Logits and Greedy.
	Forward(tokens []int32) error
	// Logits returns the last position's logits; the slice is reused by
	// the next Forward.
	Logits() ([]float32, error)
	// Greedy returns the id of the last position's largest logit, the
	// lowest id among ties.
	Greedy() (int32, error)
	// Len returns the number of positions in the sequence.
	Len() int
	// MaxLen returns the most positions the sequence may hold.
	MaxLen() int
	// Reset empties the sequence.
	Reset()
	// Truncate drops the positions from n on, keeping the first n, so the
	// sequence can continue from there (n <= Len).
	Truncate(n int) error
	// Vocab returns the number of logits a position has.
	Vocab() int
	// Backend names what the runner computes on ("scalar", "cuda", ...).
	Backend() string
	// Close releases the runner's resources.
	Close() error
}

// SplitInvariant is implemented by runners whose results do not depend on
// how a sequence's positions were split into forward passes (a prompt at
// once, in chunks, or token by token), as the CPU runners' are, bit for
// bit. Only these keep a cached prefix (Request.Cached): elsewhere (the
// GPU, whose prefill and decode kernels round differently) a kept prefix
// would change the logits slightly, and a seeded request would not give
// the same text twice.
type SplitInvariant interface {
	SplitInvariant() bool
}

// Lookaheader is implemented by runners that can queue the next decode step
// on their own argmax before the caller has picked the token (the CUDA
// runner): a win for greedy decoding, a discarded step for a sampler. The
// engine turns it on for greedy requests only.
type Lookaheader interface {
	SetLookahead(on bool)
}

// Profiler is implemented by runners that can time one decode step per
// operation (the CUDA runner, replaying its graph with events between
// kernels). It returns the operations with their calls and time per
// step, largest total first, and the whole step's time in microseconds.
type Profiler interface {
	Profile(reps int) (ops []OpStats, stepMicros float64, err error)
}

// BatchProfiler is a batched runner that profiles a decode step of a
// batch of B tokens (the CUDA runner): the last Forward must have been
// one of that bucket.
type BatchProfiler interface {
	Profile(B, reps int) ([]OpStats, float64, error)
}

// PromptProfiler is implemented by runners that time every kernel of the
// passes that were no decode step (prompts), as opened for tracing: the
// operations with their calls and total time over those passes, largest
// first, the passes' total time in microseconds, their number and their
// tokens.
type PromptProfiler interface {
	PromptProfile() (ops []OpStats, micros float64, passes, tokens int, err error)
}

// Options control one generation.
type Options struct {
	MaxTokens int                  // most tokens to generate; <= 0 means until the context is full
	Stop      map[int32]bool       // end-of-generation ids: generation stops after producing one
	OnToken   func(id int32) error // called with every generated token, in order (the stop token too)
}

// Metrics describe the timing of one generation.
type Metrics struct {
	PromptTokens    int
	CachedTokens    int // prompt tokens kept in the KV cache from the runner's previous sequence
	GeneratedTokens int
	Stop            string        // the stop string that ended the generation, "" if none did
	TimeToFirst     time.Duration // from the start to the first generated token: the prompt's forward pass and pick
	Decode          time.Duration // all decode steps after the first token
	Forward         Stats         // every forward pass (prefill and decode)
}

// DecodeTokensPerSecond returns decode steps per second after the first
// token (each decode step produces one token).
func (m *Metrics) DecodeTokensPerSecond() float64 {
	steps := m.GeneratedTokens - 1
	if steps <= 0 || m.Decode <= 0 {
		return 0
	}
	return float64(steps) / m.Decode.Seconds()
}

// Stats summarize a series of durations.
type Stats struct {
	N             int
	Min, Max, Sum time.Duration
}

// Add records one duration.
func (s *Stats) Add(d time.Duration) {
	if s.N == 0 || d < s.Min {
		s.Min = d
	}
	s.Max = max(s.Max, d)
	s.Sum += d
	s.N++
}

// Mean returns the average duration.
func (s *Stats) Mean() time.Duration {
	if s.N == 0 {
		return 0
	}
	return s.Sum / time.Duration(s.N)
}

// PromptChunk is the most prompt tokens Generate hands a runner at once;
// between chunks it checks for cancellation, so a long prompt can be
// interrupted.
const PromptChunk = 512

// Generate runs prompt through r (which it resets first), then greedily
// produces tokens until a stop token, opts.MaxTokens tokens, the end of the
// context or ctx's cancellation. It returns the generated ids (a final
// stop token included) and the timing.
func Generate(ctx context.Context, r Runner, prompt []int32, opts Options) ([]int32, Metrics, error) {
	seq, err := NewSequence(r, nil, Request{Prompt: prompt, MaxTokens: opts.MaxTokens, EOG: opts.Stop})
	if err != nil {
		return nil, Metrics{}, err
	}
	defer seq.Release()
	var out []int32
	for !seq.Done() {
		if err := ctx.Err(); err != nil {
			return out, seq.Metrics(), err
		}
		st, err := seq.Step()
		if err != nil {
			return out, seq.Metrics(), err
		}
		if !st.HasToken {
			continue
		}
		out = append(out, st.Token.ID)
		if opts.OnToken != nil {
			if err := opts.OnToken(st.Token.ID); err != nil {
				return out, seq.Metrics(), err
			}
		}
	}
	return out, seq.Metrics(), nil
}

// FormatMetrics renders m in the form the CLI prints to stderr.
func FormatMetrics(m *Metrics) string {
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	tps := m.DecodeTokensPerSecond()
	if math.IsInf(tps, 0) || math.IsNaN(tps) {
		tps = 0
	}
	return fmt.Sprintf("metrics:\n  time_to_first_token_ms: %.3f\n  decode_tokens_per_second: %.3f\n  per_forward_ms: min %.3f  max %.3f  mean %.3f  (n=%d)\n",
		ms(m.TimeToFirst), tps, ms(m.Forward.Min), ms(m.Forward.Max), ms(m.Forward.Mean()), m.Forward.N)
}
