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
	// Backend names what the runner computes on ("scalar", "cuda", ...).
	Backend() string
	// Close releases the runner's resources.
	Close() error
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
	GeneratedTokens int
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
	var m Metrics
	if len(prompt) == 0 {
		return nil, m, fmt.Errorf("engine: empty prompt")
	}
	if len(prompt) > r.MaxLen() {
		return nil, m, fmt.Errorf("engine: the prompt's %d tokens do not fit the context of %d", len(prompt), r.MaxLen())
	}
	// The last token generated is never fed back, so the context holds
	// one more token than it has positions for.
	limit := opts.MaxTokens
	if room := r.MaxLen() - len(prompt) + 1; limit <= 0 || limit > room {
		limit = room
	}
	m.PromptTokens = len(prompt)
	r.Reset()

	start := time.Now()
	for rest := prompt; len(rest) > 0; {
		if err := ctx.Err(); err != nil {
			return nil, m, err
		}
		n := min(len(rest), PromptChunk)
		if err := r.Forward(rest[:n]); err != nil {
			return nil, m, err
		}
		rest = rest[n:]
	}
	out := make([]int32, 0, min(limit, 4096))
	step := make([]int32, 1)
	for {
		id, err := r.Greedy()
		if err != nil {
			return out, m, err
		}
		now := time.Now()
		if len(out) == 0 {
			m.TimeToFirst = now.Sub(start)
			m.Forward.Add(m.TimeToFirst)
		} else {
			d := now.Sub(start)
			m.Decode += d
			m.Forward.Add(d)
		}
		out = append(out, id)
		m.GeneratedTokens = len(out)
		if opts.OnToken != nil {
			if err := opts.OnToken(id); err != nil {
				return out, m, err
			}
		}
		if opts.Stop[id] || len(out) >= limit {
			return out, m, nil
		}
		if err := ctx.Err(); err != nil {
			return out, m, err
		}
		step[0] = id
		start = time.Now()
		if err := r.Forward(step); err != nil {
			return out, m, err
		}
	}
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
