package forward

import (
	"fmt"

	"inferno/arch"
	"inferno/backend"
	"inferno/batch"
	"inferno/kvcache"
	"inferno/sampling"
)

// maxBatch is the most prompt tokens one forward pass of a Runner
// processes at once; longer prompts run in chunks of this size with
// identical results.
const maxBatch = 512

// Runner runs a model on a CPU backend for one sequence, in a KV cache of
// its own that grows as the sequence does (kvcache.Basic, seen by the
// forward pass as one block): the "basic" cache. It implements
// engine.Runner. A decode step allocates nothing.
type Runner struct {
	m     *model
	err   error // why the model cannot run here (newModel), returned by Forward
	vocab int
	ops   backend.Ops
	cache *kvcache.Basic
	table [1]int32 // the cache's one block
	b     batch.Batch
	s     state
}

// NewRunner returns a runner of m on ops whose sequences may grow to maxLen
// positions (at most the model's context length; 0 means that length). Its
// KV cache stores float32 keys and values. If this package cannot run m
// (Check), Forward says why.
func NewRunner(m arch.Model, ops backend.Ops, maxLen int) *Runner {
	return NewRunnerKV(m, ops, maxLen, kvcache.F32)
}

// NewRunnerKV is NewRunner with a KV cache of element type kv. With
// kvcache.F16 the keys (after K-norm and RoPE) and values are rounded to
// half precision as they are stored, and attention reads them back widened,
// every position alike, so a prompt run at once or token by token gives
// the same bits.
func NewRunnerKV(m arch.Model, ops backend.Ops, maxLen int, kv kvcache.Type) *Runner {
	c := m.Hyper()
	if maxLen <= 0 || maxLen > c.ContextLength {
		maxLen = c.ContextLength
	}
	md, err := newModel(m)
	return &Runner{m: md, err: err, vocab: c.Vocab, ops: ops, cache: kvcache.NewBasic(c.Layers, c.KVDim(), maxLen, kv)}
}

// Backend returns the name of the backend the runner computes with.
func (r *Runner) Backend() string { return r.ops.Name() }

// KVType returns the element type of the KV cache.
func (r *Runner) KVType() kvcache.Type { return r.cache.Type() }

// SplitInvariant reports true: the logits of a position do not depend on
// how the sequence's positions were split into forward passes (the
// batched kernels give the bits of token-by-token ones), so a cached
// prefix may be kept. It implements engine.SplitInvariant.
func (r *Runner) SplitInvariant() bool { return true }

// Vocab returns the number of logits a position has.
func (r *Runner) Vocab() int { return r.vocab }

// Len returns the number of positions in the sequence so far.
func (r *Runner) Len() int { return r.cache.Len() }

// MaxLen returns the most positions the sequence may hold.
func (r *Runner) MaxLen() int { return r.cache.MaxLen() }

// Reset starts a new, empty sequence.
func (r *Runner) Reset() { r.cache.Reset() }

// Truncate keeps the first n positions of the sequence and drops the rest.
func (r *Runner) Truncate(n int) error {
	if n < 0 || n > r.cache.Len() {
		return fmt.Errorf("forward: cannot truncate a sequence of %d positions to %d", r.cache.Len(), n)
	}
	r.cache.SetLen(n)
	return nil
}

// Close stops the backend's workers, if it has any. The runner must not be
// used afterwards.
func (r *Runner) Close() error {
	if c, ok := r.ops.(interface{ Close() }); ok {
		c.Close()
	}
	return nil
}

// Logits returns the logits of the last position run. The slice is reused
// by the next Forward.
func (r *Runner) Logits() ([]float32, error) { return r.s.logits[:r.vocab], nil }

// Greedy returns the id with the largest logit of the last position, the
// lowest id among ties.
func (r *Runner) Greedy() (int32, error) { return sampling.Argmax(r.s.logits[:r.vocab]), nil }

// Forward appends tokens to the sequence, runs them through the model and
// leaves the logits of the last one ready for Logits and Greedy.
func (r *Runner) Forward(tokens []int32) error {
	if r.err != nil {
		return r.err
	}
	if len(tokens) == 0 {
		return fmt.Errorf("forward: forward of no tokens")
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= r.vocab {
			return fmt.Errorf("forward: token id %d is outside the vocabulary [0, %d)", t, r.vocab)
		}
	}
	pos := r.cache.Len()
	if err := r.cache.Reserve(pos + len(tokens)); err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	for len(tokens) > 0 {
		n := min(len(tokens), maxBatch)
		r.b.Reset()
		r.b.Add(r.b.AddSeq(r.table[:]), tokens[:n], pos, n == len(tokens))
		p := pass{m: r.m, ops: r.ops, kv: r.cache, bs: r.cache.Room(), b: &r.b, s: &r.s}
		p.forward()
		tokens, pos = tokens[n:], pos+n
		r.cache.SetLen(pos)
	}
	return nil
}

// Batched runs a model on a CPU backend for many sequences at once: one
// forward pass takes the next tokens of all of them, so the weights are
// read once per step for the whole batch. Their keys and values live in a
// pool of blocks (kvcache.Pages) that a kvcache.Manager hands out. It
// implements engine.BatchRunner. A decode step allocates nothing once the
// runner has seen a batch as large.
type Batched struct {
	m      *model
	ops    backend.Ops
	pages  *kvcache.Pages
	maxLen int
	s      state
	outs   int // outputs of the last Forward
	valid  bool
	closed bool
}

// NewBatched returns a batched runner of m on ops whose KV pool holds
// blocks blocks of blockSize positions of element type kv; each sequence
// may hold up to maxLen positions (0 or more than the model's context
// length: that length). The pool's memory is mapped at once and backed
// as blocks fill; Close releases it.
func NewBatched(m arch.Model, ops backend.Ops, maxLen, blocks, blockSize int, kv kvcache.Type) (*Batched, error) {
	c := m.Hyper()
	if maxLen <= 0 || maxLen > c.ContextLength {
		maxLen = c.ContextLength
	}
	if err := Check(m, ops); err != nil {
		return nil, err
	}
	md, err := newModel(m)
	if err != nil {
		return nil, err
	}
	pages, err := kvcache.NewPages(c.Layers, c.KVDim(), blocks, blockSize, kv)
	if err != nil {
		return nil, fmt.Errorf("forward: %w", err)
	}
	return &Batched{m: md, ops: ops, maxLen: maxLen, pages: pages}, nil
}

// Forward runs b through the model. It implements engine.BatchRunner.
func (r *Batched) Forward(b *batch.Batch) error {
	r.valid = false
	if r.closed {
		return fmt.Errorf("forward: forward on a closed runner")
	}
	if err := b.Check(r.m.c.Vocab, r.maxLen, r.pages.BlockSize(), r.pages.Blocks()); err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	p := pass{m: r.m, ops: r.ops, kv: r.pages, bs: r.pages.BlockSize(), b: b, s: &r.s}
	p.forward()
	r.outs, r.valid = len(b.Outputs), true
	return nil
}

// Logits returns the logits of output i of the last Forward.
func (r *Batched) Logits(i int) ([]float32, error) {
	if !r.valid || i < 0 || i >= r.outs {
		return nil, fmt.Errorf("forward: no output %d (the last forward pass has %d)", i, r.outs)
	}
	v := r.m.c.Vocab
	return r.s.logits[i*v : (i+1)*v], nil
}

// Greedy returns the id of output i's largest logit, the lowest among ties.
func (r *Batched) Greedy(i int) (int32, error) {
	l, err := r.Logits(i)
	if err != nil {
		return 0, err
	}
	return sampling.Argmax(l), nil
}

// CopyBlock copies block src into block dst.
func (r *Batched) CopyBlock(dst, src int32) error {
	if r.closed {
		return fmt.Errorf("forward: copy on a closed runner")
	}
	return r.pages.CopyBlock(dst, src)
}

// Vocab returns the number of logits a position has.
func (r *Batched) Vocab() int { return r.m.c.Vocab }

// MaxLen returns the most positions a sequence may hold.
func (r *Batched) MaxLen() int { return r.maxLen }

// BlockSize returns the positions a block holds.
func (r *Batched) BlockSize() int { return r.pages.BlockSize() }

// Blocks returns the blocks of the KV pool.
func (r *Batched) Blocks() int { return r.pages.Blocks() }

// KVType returns the element type of the KV pool.
func (r *Batched) KVType() kvcache.Type { return r.pages.Type() }

// Backend returns the name of the backend the runner computes with.
func (r *Batched) Backend() string { return r.ops.Name() }

// SplitInvariant reports true: a position's logits do not depend on how
// its sequence was split into forward passes, nor on the other sequences
// of a batch, so a cached prefix gives the bits of computing it again.
func (r *Batched) SplitInvariant() bool { return true }

// Close releases the KV pool. The backend's workers belong to whoever
// made ops. Closing twice is a no-op.
func (r *Batched) Close() error {
	if r.closed {
		return nil
	}
	r.closed, r.valid = true, false
	return r.pages.Close()
}
