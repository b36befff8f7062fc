package vulkan

import (
	"errors"
	"fmt"

	"inferno/arch"
	"inferno/batch"
)

// The window pool. A model with sliding-window layers (arch.Config.Window)
// and others keeps the former's keys and values in a pool of blocks of
// their own, so that a sequence needs there only the blocks of its last
// Window positions (a kvcache.Manager with a window pool frees the
// others, leaving batch.Hole in their entries of the sequence's
// LocalTables table). Each layer's buffers (kc[i], vc[i]) hold its pool's
// blocks. The inputs hold the window pool's tables after the main ones in
// the tables region, and their offsets, one a sequence, in ltabOff;
// rope_store and attn of a sliding-window layer take those offsets. attn
// reads the keys of a tile from its first token's window on (lo = pos -
// window + 1), rope_store and the fused store write the token's own
// position: no dispatch reads an entry before a sequence's window. Without
// LocalTables a batch's Tables name the blocks of both pools (ltabOff
// copies tabOff).

// windowPool reports whether a runner of c keeps the sliding-window
// layers' keys and values in a pool of their own: when some layers are
// sliding-window layers and some are not (every layer local: one pool,
// as without windows).
func windowPool(c *arch.Config) bool {
	local := 0
	for i := range c.Layers {
		if c.LayerWindow(i) > 0 {
			local++
		}
	}
	return local > 0 && local < c.Layers
}

// poolPages returns the bytes a block takes in the main pool and in the
// window pool (win; else 0): keys and values, f16, of their layers.
func poolPages(c *arch.Config, win bool, bs int) (page, lpage int64) {
	layer := int64(2*2*c.KVDim()) * int64(bs)
	local := 0
	if win {
		for i := range c.Layers {
			if c.LayerWindow(i) > 0 {
				local++
			}
		}
	}
	return int64(c.Layers-local) * layer, int64(local) * layer
}

// windowNote describes the window pool in an error's line: "" without one.
func windowNote(win bool, localBlocks int, lpage int64) string {
	switch {
	case !win:
		return ""
	case localBlocks == 0:
		return fmt.Sprintf(" and as many in the window pool (%s a block)", gib(lpage))
	}
	return fmt.Sprintf(" and a window pool of %d blocks (%s)", localBlocks, gib(int64(localBlocks)*lpage))
}

// local reports whether layer i keeps its keys and values in the window
// pool.
func (r *BatchRunner) local(i int) bool { return r.win && r.c.LayerWindow(i) > 0 }

// tabOff returns the address of the table offsets layer i reads: the
// window pool's for its sliding-window layers.
func (p *pass) tabOff(i int) uint64 {
	if p.r.local(i) {
		return p.in(p.r.lay.ltabOff)
	}
	return p.in(p.r.lay.tabOff)
}

// localTables appends b's window pool tables to r.tables and returns
// their offsets (in r.ltabOff's memory), or without LocalTables the main
// tables' (r.tabOff's copy).
func (r *BatchRunner) localTables(b *batch.Batch) []int32 {
	off := r.ltabOff[:0]
	if len(b.LocalTables) == 0 {
		return append(off, r.tabOff...)
	}
	for _, t := range b.LocalTables {
		off = append(off, int32(len(r.tables)))
		r.tables = append(r.tables, t...)
	}
	return off
}

// checkLocal checks b's tables against the window pool, when the runner
// has one: b.LocalTables (batch.CheckLocal), or without them b.Tables,
// which then name its blocks too.
func (r *BatchRunner) checkLocal(b *batch.Batch) error {
	switch {
	case !r.win:
		if len(b.LocalTables) != 0 {
			return errors.New("vulkan: a batch with window pool tables (LocalTables) on a runner without a window pool")
		}
	case len(b.LocalTables) != 0:
		if err := b.CheckLocal(r.bs, r.localBlocks, r.c.Window); err != nil {
			return fmt.Errorf("vulkan: window pool: %w", err)
		}
	case r.localBlocks < r.blocks:
		if err := b.Check(r.c.Vocab, r.md.maxLen, r.bs, r.localBlocks); err != nil {
			return fmt.Errorf("vulkan: %w (a batch without LocalTables names the window pool's blocks in its tables)", err)
		}
	}
	return nil
}

// CopyLocalBlock copies block src of the window pool into its block dst:
// keys and values of every sliding-window layer (engine.WindowRunner). A
// runner without a window pool (WindowPool 0, 0) refuses.
func (r *BatchRunner) CopyLocalBlock(dst, src int32) error {
	switch {
	case r.closed:
		return errors.New("vulkan: the runner is closed")
	case !r.win:
		return errors.New("vulkan: a window pool block copy on a runner without one (the model has no sliding-window layers, or no others)")
	case dst < 0 || src < 0 || int(dst) >= r.localBlocks || int(src) >= r.localBlocks:
		return fmt.Errorf("vulkan: copy of block %d to %d in a window pool of %d", src, dst, r.localBlocks)
	}
	return r.copyBlock(dst, src, true)
}

// WindowPool returns the window pool's blocks and its layers' window
// (engine.WindowRunner); 0, 0 without a window pool (a model without
// sliding-window layers, or without others).
func (r *BatchRunner) WindowPool() (blocks, window int) {
	if !r.win {
		return 0, 0
	}
	return r.localBlocks, r.c.Window
}

// PoolBytes returns the device memory of the KV pools (the main pool and
// the window pool) and what the main pool would take with every layer's
// keys and values in it, full attention's cost (engine.PoolSizer).
func (r *BatchRunner) PoolBytes() (pool, full int64) {
	page, lpage := poolPages(r.c, r.win, r.bs)
	return int64(r.blocks)*page + int64(r.localBlocks)*lpage, int64(r.blocks) * (page + lpage)
}
