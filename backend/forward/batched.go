package forward

import (
	"errors"
	"fmt"

	"inferno/arch"
	"inferno/backend"
	"inferno/batch"
	"inferno/kvcache"
	"inferno/sampling"
)

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
	win    *kvcache.Pages // the sliding-window layers' pool, or nil
	slot   []int          // per layer: its index in its pool (with win)
	maxLen int
	s      state
	outs   int // outputs of the last Forward
	hids   int // hidden rows of the last Forward
	valid  bool
	closed bool
}

// NewBatched returns a batched runner of m on ops whose KV pool holds
// blocks blocks of blockSize positions of element type kv; each sequence
// may hold up to maxLen positions (0 or more than the model's context
// length: that length). The pool's memory is mapped at once and backed
// as blocks fill; Close releases it. A LongRoPE model runs with the
// factors that maxLen chooses (arch.ForContext): the long ones when it
// exceeds the original context.
func NewBatched(m arch.Model, ops backend.Ops, maxLen, blocks, blockSize int, kv kvcache.Type) (*Batched, error) {
	return NewWindowBatched(m, ops, maxLen, blocks, blocks, blockSize, kv)
}

// NewWindowBatched is NewBatched with, for a model with sliding-window
// layers and others, a pool of localBlocks blocks of their own for the
// sliding-window layers (engine.WindowRunner), the main pool holding the
// other layers'. For other models localBlocks is not used.
func NewWindowBatched(m arch.Model, ops backend.Ops, maxLen, blocks, localBlocks, blockSize int, kv kvcache.Type) (*Batched, error) {
	c := m.Hyper()
	if maxLen <= 0 || maxLen > c.ContextLength {
		maxLen = c.ContextLength
	}
	m = arch.ForContext(m, maxLen)
	if err := Check(m, ops); err != nil {
		return nil, err
	}
	md, err := newModel(m)
	if err != nil {
		return nil, err
	}
	r := &Batched{m: md, ops: ops, maxLen: maxLen}
	local := 0
	for i := range c.Layers {
		if c.LayerWindow(i) > 0 {
			local++
		}
	}
	layers := c.Layers
	if local > 0 && local < c.Layers {
		if localBlocks < 1 {
			return nil, fmt.Errorf("forward: a window pool of %d blocks", localBlocks)
		}
		r.slot = make([]int, c.Layers)
		var n [2]int
		for i := range c.Layers {
			w := 0
			if c.LayerWindow(i) > 0 {
				w = 1
			}
			r.slot[i] = n[w]
			n[w]++
		}
		win, err := kvcache.NewPages(local, c.KVDim(), localBlocks, blockSize, kv)
		if err != nil {
			return nil, fmt.Errorf("forward: window pool: %w", err)
		}
		r.win, layers = win, c.Layers-local
	}
	pages, err := kvcache.NewPages(layers, c.KVDim(), blocks, blockSize, kv)
	if err != nil {
		if r.win != nil {
			r.win.Close()
		}
		return nil, fmt.Errorf("forward: %w", err)
	}
	r.pages = pages
	return r, nil
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
	if r.win != nil {
		if err := r.checkLocal(b); err != nil {
			return fmt.Errorf("forward: %w", err)
		}
		p.win, p.slot = r.win, r.slot
	}
	p.forward()
	r.outs, r.hids, r.valid = len(b.Outputs), len(b.Hidden), true
	return nil
}

// Hidden returns hidden row i of the last Forward: the final normed state
// of the batch's token Hidden[i] (engine.Embedder).
func (r *Batched) Hidden(i int) ([]float32, error) {
	if !r.valid || i < 0 || i >= r.hids {
		return nil, fmt.Errorf("forward: no hidden row %d (the last forward pass has %d)", i, r.hids)
	}
	h := r.m.c.Hidden
	return r.s.hidden[i*h : (i+1)*h], nil
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

// checkLocal checks b's tables of the window pool: its LocalTables or,
// without them, its Tables, which the pool must then hold.
func (r *Batched) checkLocal(b *batch.Batch) error {
	if b.LocalTables != nil {
		return b.CheckLocal(r.win.BlockSize(), r.win.Blocks(), r.m.c.Window)
	}
	if r.win.Blocks() < r.pages.Blocks() {
		return fmt.Errorf("a batch without window tables on a runner whose window pool (%d blocks) is smaller than its main pool (%d)", r.win.Blocks(), r.pages.Blocks())
	}
	return nil
}

// WindowPool returns the blocks of the sliding-window layers' pool and
// their window (engine.WindowRunner); 0, 0 when the model has no such
// pool (no sliding-window layers, or no others).
func (r *Batched) WindowPool() (blocks, window int) {
	if r.win == nil {
		return 0, 0
	}
	return r.win.Blocks(), r.m.c.Window
}

// CopyLocalBlock copies block src of the window pool into block dst.
func (r *Batched) CopyLocalBlock(dst, src int32) error {
	switch {
	case r.closed:
		return fmt.Errorf("forward: copy on a closed runner")
	case r.win == nil:
		return fmt.Errorf("forward: a window-pool copy on a runner without one")
	}
	return r.win.CopyBlock(dst, src)
}

// PoolBytes returns the memory the KV pools span (the main pool and the
// window pool; mapped at once, backed as blocks fill), and what the main
// pool would span with every layer's keys and values in it
// (engine.PoolSizer).
func (r *Batched) PoolBytes() (pool, full int64) {
	pool = r.pages.Bytes()
	if r.win != nil {
		pool += r.win.Bytes()
	}
	c := r.m.c
	return pool, int64(r.pages.Blocks()) * kvcache.PageBytes(c.Layers, c.KVDim(), r.pages.BlockSize(), r.pages.Type())
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
	err := r.pages.Close()
	if r.win != nil {
		err = errors.Join(err, r.win.Close())
	}
	return err
}
