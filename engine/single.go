package engine

import (
	"errors"
	"fmt"

	"inferno/batch"
	"inferno/sampling"
)

// Single is one sequence on a BatchRunner: a batch of one sequence per
// forward pass, its positions in blocks 0, 1, 2, ... of the runner's pool
// in order (with one block as long as the context, the "basic" layout:
// one contiguous region). It is the Runner of the single-sequence
// commands (generate, chat, logits, bench), which so run the batched
// runner the server runs, a sequence being a batch of one. What
// the batched runner can do beyond BatchRunner it passes on: the
// lookahead of greedy steps (Lookaheader), sampling on the device
// (DeviceSampler, for output 0), a profile of a decode step
// (Profiler).
//
// On a WindowRunner whose window pool is smaller than the sequence's
// blocks, the sliding-window layers' blocks are a ring: block j of the
// sequence is the pool's block j mod its size. A pass of up to
// PromptChunk tokens never reads a ring block it overwrites, as long as
// the pool holds kvcache.WindowBlocks(1, window, PromptChunk) blocks.
type Single struct {
	br    BatchRunner
	n     int // positions held
	table []int32
	// local is the window pool's table (the ring; nil: table), ring its
	// blocks, window their layers' window, and high the most positions
	// held since the last Reset: ring block j still holds block j's rows
	// while high <= (j+ring)*BlockSize.
	local              []int32
	ring, window, high int
	chunk              int // the most tokens a pass takes
	b                  batch.Batch
	ok                 bool // the last Forward computed an output
	rows               []sampling.Row
	rowOn              bool // rows[0] applies to the next Forward's output
}

// NewSingle returns a single-sequence runner over br, which it owns.
func NewSingle(br BatchRunner) *Single {
	p := &Single{br: br, rows: make([]sampling.Row, 1), chunk: PromptChunk}
	blocks := min(br.Blocks(), (br.MaxLen()+br.BlockSize()-1)/br.BlockSize())
	p.table = make([]int32, blocks)
	for i := range p.table {
		p.table[i] = int32(i)
	}
	if wr, ok := br.(WindowRunner); ok {
		if lb, w := wr.WindowPool(); lb > 0 && lb < blocks {
			p.local, p.ring, p.window = make([]int32, blocks), lb, w
			for i := range p.local {
				p.local[i] = int32(i % lb)
			}
			// A pass of c tokens at position q reads and writes the blocks
			// of positions q-window+1 .. q+c-1: at most
			// (c+window-2)/BlockSize + 2, which must be distinct in the ring.
			p.chunk = min(PromptChunk, (lb-2)*br.BlockSize()-w+2)
		}
	}
	return p
}

// Forward runs tokens at the end of the sequence, in chunks of at most
// PromptChunk tokens.
func (p *Single) Forward(tokens []int32) error {
	if len(tokens) == 0 {
		return fmt.Errorf("engine: forward of no tokens")
	}
	if p.n+len(tokens) > p.MaxLen() {
		return &ContextError{Prompt: p.n + len(tokens), Context: p.MaxLen()}
	}
	if p.chunk < 1 {
		return fmt.Errorf("engine: a window pool of %d blocks of %d positions cannot hold a window of %d", p.ring, p.br.BlockSize(), p.window)
	}
	p.ok = false
	rowOn := p.rowOn
	p.rowOn = false
	for len(tokens) > 0 {
		n := min(len(tokens), p.chunk)
		last := n == len(tokens)
		p.b.Reset()
		seq := 0
		if p.local != nil {
			seq = p.b.AddWindowSeq(p.table, p.local)
		} else {
			seq = p.b.AddSeq(p.table)
		}
		p.b.Add(seq, tokens[:n], p.n, last)
		if last && rowOn {
			if err := p.br.(DeviceSampler).SetSamples(p.rows); err != nil {
				return err
			}
		}
		if err := p.br.Forward(&p.b); err != nil {
			return err
		}
		tokens, p.n = tokens[n:], p.n+n
		p.high = max(p.high, p.n)
	}
	p.ok = true
	return nil
}

// Logits returns the last position's logits.
func (p *Single) Logits() ([]float32, error) {
	if !p.ok {
		return nil, fmt.Errorf("engine: no logits before a forward pass")
	}
	return p.br.Logits(0)
}

// Greedy returns the last position's argmax.
func (p *Single) Greedy() (int32, error) {
	if !p.ok {
		return 0, fmt.Errorf("engine: no logits before a forward pass")
	}
	return p.br.Greedy(0)
}

// Len returns the positions held.
func (p *Single) Len() int { return p.n }

// MaxLen returns the most positions the sequence may hold.
func (p *Single) MaxLen() int { return min(p.br.MaxLen(), len(p.table)*p.br.BlockSize()) }

// Reset empties the sequence.
func (p *Single) Reset() {
	p.n, p.ok, p.high = 0, false, 0
	_ = p.settle() // an error shows again at the next Forward
}

// Truncate keeps the first n positions.
func (p *Single) Truncate(n int) error {
	if n < 0 || n > p.n {
		return fmt.Errorf("engine: cannot truncate a sequence of %d positions to %d", p.n, n)
	}
	if bs := p.br.BlockSize(); p.local != nil && n > 0 {
		// The ring must still hold the window before n: from the block
		// of position n-window+1 on.
		if first := max(0, n-p.window+1) / bs; p.high > (first+p.ring)*bs {
			return fmt.Errorf("engine: cannot truncate to %d positions: the window pool's ring of %d blocks no longer holds their window", n, p.ring)
		}
	}
	p.n, p.ok = n, false
	return p.settle()
}

// settler is a batched runner that may leave work queued on its device
// after a Forward (the CUDA runner's lookahead step): Settle waits for it.
type settler interface {
	Settle() error
}

// settle waits for the work the batched runner queued for positions the
// sequence no longer holds, so that it is not charged to the next Forward.
func (p *Single) settle() error {
	if s, ok := p.br.(settler); ok {
		return s.Settle()
	}
	return nil
}

// Vocab returns the number of logits a position has.
func (p *Single) Vocab() int { return p.br.Vocab() }

// Backend names the backend.
func (p *Single) Backend() string { return p.br.Backend() }

// BlockSize returns the positions a block of the batched runner holds.
func (p *Single) BlockSize() int { return p.br.BlockSize() }

// SplitInvariant reports whether the batched runner's logits do not
// depend on how the sequence was split into passes.
func (p *Single) SplitInvariant() bool {
	si, ok := p.br.(SplitInvariant)
	return ok && si.SplitInvariant()
}

// SetLookahead turns the batched runner's lookahead on or off, where it
// has one (Lookaheader).
func (p *Single) SetLookahead(on bool) {
	if la, ok := p.br.(Lookaheader); ok {
		la.SetLookahead(on)
	}
}

// CanSample reports whether the batched runner samples under params
// itself (DeviceSampler).
func (p *Single) CanSample(params sampling.Params) bool {
	ds, ok := p.br.(DeviceSampler)
	return ok && ds.CanSample(params)
}

// SetSamples sets how the next Forward's output is chosen: rows[0], for
// the one output of its last chunk (DeviceSampler).
func (p *Single) SetSamples(rows []sampling.Row) error {
	if len(rows) != 1 {
		return fmt.Errorf("engine: %d sampling rows for one output", len(rows))
	}
	if _, ok := p.br.(DeviceSampler); !ok {
		return errors.New("engine: the backend does not sample on the device")
	}
	p.rows[0], p.rowOn = rows[0], rows[0].On
	return nil
}

// Sampled returns the token the batched runner chose for the last
// position (DeviceSampler).
func (p *Single) Sampled(i int) (sampling.Token, error) {
	ds, ok := p.br.(DeviceSampler)
	if !ok || !p.ok || i != 0 {
		return sampling.Token{}, errors.New("engine: no token sampled on the device")
	}
	return ds.Sampled(0)
}

// Profile times the last decode step, replayed reps times, per operation
// (Profiler): the last Forward must have been one decode token.
func (p *Single) Profile(reps int) ([]OpStats, float64, error) {
	bp, ok := p.br.(BatchProfiler)
	if !ok {
		return nil, 0, fmt.Errorf("engine: the %s backend does not profile a step", p.br.Backend())
	}
	return bp.Profile(1, reps)
}

// PromptProfile returns the batched runner's times of the prompt passes
// (PromptProfiler), when it keeps them.
func (p *Single) PromptProfile() ([]OpStats, float64, int, int, error) {
	pp, ok := p.br.(PromptProfiler)
	if !ok {
		return nil, 0, 0, 0, fmt.Errorf("engine: the %s backend does not time its prompt passes", p.br.Backend())
	}
	return pp.PromptProfile()
}

// PoolBytes returns the memory of the batched runner's KV pools and what
// they would take with every layer in the main pool (PoolSizer); 0, 0
// when it does not tell.
func (p *Single) PoolBytes() (pool, full int64) {
	if ps, ok := p.br.(PoolSizer); ok {
		return ps.PoolBytes()
	}
	return 0, 0
}

// Close closes the batched runner.
func (p *Single) Close() error { return p.br.Close() }
