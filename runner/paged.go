package runner

import (
	"fmt"

	"inferno/batch"
	"inferno/engine"
)

// Paged is one sequence on a BatchRunner: a batch of one sequence per
// forward pass, its positions in blocks 0, 1, 2, ... of the runner's
// pool in order. It implements engine.Runner, so single-sequence commands
// run on the paged cache as the server's batches do.
type Paged struct {
	br    engine.BatchRunner
	n     int // positions held
	table []int32
	b     batch.Batch
	ok    bool // the last Forward computed an output
}

// NewPaged returns a single-sequence runner over br, which it owns.
func NewPaged(br engine.BatchRunner) *Paged {
	p := &Paged{br: br}
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
	for len(tokens) > 0 {
		n := min(len(tokens), engine.PromptChunk)
		p.b.Reset()
		p.b.Add(p.b.AddSeq(p.table), tokens[:n], p.n, n == len(tokens))
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

// SplitInvariant reports whether the batched runner's logits do not
// depend on how the sequence was split into passes.
func (p *Paged) SplitInvariant() bool {
	si, ok := p.br.(engine.SplitInvariant)
	return ok && si.SplitInvariant()
}

// Close closes the batched runner.
func (p *Paged) Close() error { return p.br.Close() }
