package runner

import (
	"errors"
	"fmt"

	"inferno/backend"
	"inferno/batch"
	"inferno/engine"
	"inferno/sampling"
)

// Paged is one sequence on a BatchRunner: a batch of one sequence per
// forward pass, its positions in blocks 0, 1, 2, ... of the runner's pool
// in order (with one block as long as the context, the "basic" layout:
// one contiguous region). It implements engine.Runner, so the
// single-sequence commands (generate, chat, logits, bench) run the
// batched runner the server runs, a sequence being a batch of one. What
// the batched runner can do beyond engine.BatchRunner it passes on: the
// lookahead of greedy steps (engine.Lookaheader), sampling on the device
// (engine.DeviceSampler, for output 0), a profile of a decode step
// (engine.Profiler).
type Paged struct {
	br    engine.BatchRunner
	n     int // positions held
	table []int32
	b     batch.Batch
	ok    bool // the last Forward computed an output
	rows  []sampling.Row
	rowOn bool // rows[0] applies to the next Forward's output
}

// NewPaged returns a single-sequence runner over br, which it owns.
func NewPaged(br engine.BatchRunner) *Paged {
	p := &Paged{br: br, rows: make([]sampling.Row, 1)}
	blocks := min(br.Blocks(), (br.MaxLen()+br.BlockSize()-1)/br.BlockSize())
	p.table = make([]int32, blocks)
	for i := range p.table {
		p.table[i] = int32(i)
	}
	return p
}

// Forward runs tokens at the end of the sequence, in chunks of at most
// engine.PromptChunk tokens.
func (p *Paged) Forward(tokens []int32) error {
	if len(tokens) == 0 {
		return fmt.Errorf("runner: forward of no tokens")
	}
	if p.n+len(tokens) > p.MaxLen() {
		return &engine.ContextError{Prompt: p.n + len(tokens), Context: p.MaxLen()}
	}
	p.ok = false
	rowOn := p.rowOn
	p.rowOn = false
	for len(tokens) > 0 {
		n := min(len(tokens), engine.PromptChunk)
		last := n == len(tokens)
		p.b.Reset()
		p.b.Add(p.b.AddSeq(p.table), tokens[:n], p.n, last)
		if last && rowOn {
			if err := p.br.(engine.DeviceSampler).SetSamples(p.rows); err != nil {
				return err
			}
		}
		if err := p.br.Forward(&p.b); err != nil {
			return err
		}
		tokens, p.n = tokens[n:], p.n+n
	}
	p.ok = true
	return nil
}

// Logits returns the last position's logits.
func (p *Paged) Logits() ([]float32, error) {
	if !p.ok {
		return nil, fmt.Errorf("runner: no logits before a forward pass")
	}
	return p.br.Logits(0)
}

// Greedy returns the last position's argmax.
func (p *Paged) Greedy() (int32, error) {
	if !p.ok {
		return 0, fmt.Errorf("runner: no logits before a forward pass")
	}
	return p.br.Greedy(0)
}

// Len returns the positions held.
func (p *Paged) Len() int { return p.n }

// MaxLen returns the most positions the sequence may hold.
func (p *Paged) MaxLen() int { return min(p.br.MaxLen(), len(p.table)*p.br.BlockSize()) }

// Reset empties the sequence.
func (p *Paged) Reset() { p.n, p.ok = 0, false }

// Truncate keeps the first n positions.
func (p *Paged) Truncate(n int) error {
	if n < 0 || n > p.n {
		return fmt.Errorf("runner: cannot truncate a sequence of %d positions to %d", p.n, n)
	}
	p.n, p.ok = n, false
	return nil
}

// Vocab returns the number of logits a position has.
func (p *Paged) Vocab() int { return p.br.Vocab() }

// Backend names the backend.
func (p *Paged) Backend() string { return p.br.Backend() }

// BlockSize returns the positions a block of the batched runner holds.
func (p *Paged) BlockSize() int { return p.br.BlockSize() }

// SplitInvariant reports whether the batched runner's logits do not
// depend on how the sequence was split into passes.
func (p *Paged) SplitInvariant() bool {
	si, ok := p.br.(engine.SplitInvariant)
	return ok && si.SplitInvariant()
}

// SetLookahead turns the batched runner's lookahead on or off, where it
// has one (engine.Lookaheader).
func (p *Paged) SetLookahead(on bool) {
	if la, ok := p.br.(engine.Lookaheader); ok {
		la.SetLookahead(on)
	}
}

// CanSample reports whether the batched runner samples under params
// itself (engine.DeviceSampler).
func (p *Paged) CanSample(params sampling.Params) bool {
	ds, ok := p.br.(engine.DeviceSampler)
	return ok && ds.CanSample(params)
}

// SetSamples sets how the next Forward's output is chosen: rows[0], for
// the one output of its last chunk (engine.DeviceSampler).
func (p *Paged) SetSamples(rows []sampling.Row) error {
	if len(rows) != 1 {
		return fmt.Errorf("runner: %d sampling rows for one output", len(rows))
	}
	if _, ok := p.br.(engine.DeviceSampler); !ok {
		return errors.New("runner: the backend does not sample on the device")
	}
	p.rows[0], p.rowOn = rows[0], rows[0].On
	return nil
}

// Sampled returns the token the batched runner chose for the last
// position (engine.DeviceSampler).
func (p *Paged) Sampled(i int) (sampling.Token, error) {
	ds, ok := p.br.(engine.DeviceSampler)
	if !ok || !p.ok || i != 0 {
		return sampling.Token{}, errors.New("runner: no token sampled on the device")
	}
	return ds.Sampled(0)
}

// batchProfiler is a batched runner that profiles a decode step of a
// batch of B tokens (the CUDA runner).
type batchProfiler interface {
	Profile(B, reps int) ([]backend.OpStats, float64, error)
}

// Profile times the last decode step, replayed reps times, per operation
// (engine.Profiler): the last Forward must have been one decode token.
func (p *Paged) Profile(reps int) ([]backend.OpStats, float64, error) {
	bp, ok := p.br.(batchProfiler)
	if !ok {
		return nil, 0, fmt.Errorf("runner: the %s backend does not profile a step", p.br.Backend())
	}
	return bp.Profile(1, reps)
}

// Close closes the batched runner.
func (p *Paged) Close() error { return p.br.Close() }
