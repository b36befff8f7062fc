package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"inferno/arch"
	"inferno/batch"
)

// The KV pools. A model with sliding-window layers (arch.Config.Window) and
// others keeps the former's keys and values in a pool of blocks of their
// own, the window pool, so that a sequence needs there only the blocks of
// its last Window positions (a kvcache.Manager with a window pool frees
// the others, leaving batch.Hole in their entries of the sequence's
// LocalTables table). Each layer's buffers (kc[i], vc[i]) are in its pool;
// the kernels take, per token, the offset of its sequence's table in the
// inputs, and a local layer takes the window pool's table offsets (and
// never reads an entry before its window). Without LocalTables a batch's
// Tables name the blocks of both pools.

// NewWindowBatchRunner returns a runner as NewBatchRunner does for a
// model with sliding-window layers and others, whose sliding-window
// layers' keys and values live in a window pool of localBlocks blocks of
// their own (localBlocks 0: as many as the main pool's), the main pool of
// blocks blocks holding the global layers' only; each has a scratch
// block. With blocks 0 the window pool's bytes come off the free memory
// first. The runner is an engine.WindowRunner: batches name the window
// pool's blocks in LocalTables. For other models (no sliding-window
// layers, or no others) localBlocks is not used: one pool holds every
// layer's, and WindowPool returns 0, 0.
func (r *Model) NewWindowBatchRunner(blocks, localBlocks, blockSize int) (*BatchRunner, error) {
	return r.newBatchRunner(blocks, localBlocks, blockSize)
}

// poolLayers returns the layers whose keys and values a runner of c keeps
// in its main pool, and whether it has a window pool for the others: when
// some layers are sliding-window layers and some are not (every layer
// local: one pool, as without windows).
func poolLayers(c *arch.Config) (main int, win bool) {
	local := 0
	for i := range c.Layers {
		if c.LayerWindow(i) > 0 {
			local++
		}
	}
	if local == 0 || local == c.Layers {
		return c.Layers, false
	}
	return c.Layers - local, true
}

// localBlockBytes returns the bytes one block takes in the window pool
// (K and V of the sliding-window layers; 0 without).
func (br *BatchRunner) localBlockBytes() uint64 {
	c := &br.cfg
	return uint64(2*(c.Layers-br.nglobal)) * uint64(c.KVHeads*br.bs*c.HeadDim) * 2
}

// local reports whether layer i keeps its keys and values in the window
// pool.
func (br *BatchRunner) local(i int) bool { return br.win && br.cfg.LayerWindow(i) > 0 }

// blockBytes returns the bytes one block takes in the main pool (K and V
// of every layer, or of the global layers with a window pool).
func (br *BatchRunner) blockBytes() uint64 {
	c := &br.cfg
	return uint64(2*br.nglobal) * uint64(c.KVHeads*br.bs*c.HeadDim) * 2
}

// allocPool allocates the KV pool (blocks, or sized from free memory when
// 0) plus the scratch block, with a window pool (win) that pool
// (localBlocks, 0: as many as the main pool) plus its scratch block, and
// the inputs' buffers.
func (br *BatchRunner) allocPool(blocks, localBlocks int) error {
	c := &br.cfg
	g := br.dev
	br.blockHalfs = c.KVHeads * br.bs * c.HeadDim
	maxBlocks := 256 * ((br.base.maxLen + br.bs - 1) / br.bs)
	bb, lbb := br.blockBytes(), br.localBlockBytes()
	if blocks == 0 {
		pm, err := br.base.poolMemory()
		if err != nil {
			return err
		}
		avail := int64(pm)
		per := int64(bb)
		if br.win && localBlocks > 0 {
			avail -= int64(localBlocks+1) * int64(lbb) // the window pool's, first
		} else {
			per += int64(lbb) // a block of each pool
		}
		if avail > 0 {
			blocks = int(avail/per) - 1
		}
		blocks = min(blocks, maxBlocks)
		if blocks < 1 && br.win {
			win := fmt.Sprintf("as many of %.1f MiB in the window pool", mib(lbb))
			if localBlocks > 0 {
				win = fmt.Sprintf("a window pool of %d blocks of %.1f MiB", localBlocks, mib(lbb))
			}
			return fmt.Errorf("cuda: no room for a KV pool (%.0f MiB left for it within the GPU memory budget, --gpu-memory; %.1f MiB a block, %s)", mib(pm), mib(bb), win)
		}
		if blocks < 1 {
			return fmt.Errorf("cuda: no room for a KV pool (%.0f MiB left for it within the GPU memory budget, --gpu-memory; %.1f MiB a block)", mib(pm), mib(bb))
		}
	}
	if localBlocks == 0 {
		localBlocks = blocks
	}
	br.blocks, br.scratch = blocks, int32(blocks)
	if br.win {
		br.localBlocks, br.lscratch = localBlocks, int32(localBlocks)
	}
	per := uint64(blocks+1) * uint64(br.blockHalfs) * 2
	lper := uint64(localBlocks+1) * uint64(br.blockHalfs) * 2
	br.kc, br.vc = make([]uint64, c.Layers), make([]uint64, c.Layers)
	ptrs := make([]uint64, 0, 2*c.Layers)
	var poolBytes uint64
	for _, loc := range []bool{false, true} {
		for i := range c.Layers {
			if br.local(i) != loc {
				continue
			}
			n, what := per, "KV pool"
			if loc {
				n, what = lper, "KV window pool"
			}
			for _, p := range []*uint64{&br.kc[i], &br.vc[i]} {
				var err error
				if *p, err = g.alloc(n, what); err != nil {
					if loc {
						return fmt.Errorf("%w (a window pool of %d blocks of %d positions)", err, localBlocks, br.bs)
					}
					return fmt.Errorf("%w (a pool of %d blocks of %d positions)", err, blocks, br.bs)
				}
				br.owned = append(br.owned, *p)
				if err := g.memsetAsync(*p, n); err != nil {
					return err
				}
				ptrs = append(ptrs, *p)
				poolBytes += n
			}
		}
	}
	var err error
	if br.poolPtrs, err = g.alloc(uint64(8*len(ptrs)), "KV pool pointers"); err != nil {
		return err
	}
	br.owned = append(br.owned, br.poolPtrs)
	if err := g.upload(br.poolPtrs, unsafe.Slice((*byte)(unsafe.Pointer(&ptrs[0])), 8*len(ptrs))); err != nil {
		return err
	}
	br.stats = BatchStats{Blocks: blocks, BlockSize: br.bs, LocalBlocks: br.localBlocks, PoolBytes: poolBytes}
	// Inputs: room for MaxBatch tokens and a table of 64 blocks each to
	// start with; grown when a batch needs more.
	return br.growMeta(br.metaInts(MaxBatch, MaxBatch*64))
}

// CopyBlock copies block src to block dst: keys and values of every layer
// (of the global layers only with a window pool: the main pool's;
// CopyLocalBlock copies the window pool's).
func (br *BatchRunner) CopyBlock(dst, src int32) error {
	if br.closed {
		return errors.New("cuda: batch runner is closed")
	}
	if dst < 0 || int(dst) >= br.blocks || src < 0 || int(src) >= br.blocks {
		return fmt.Errorf("cuda: copy of block %d to %d in a pool of %d", src, dst, br.blocks)
	}
	return br.copyBlock(dst, src, 0, br.nglobal)
}

// copyBlock copies block src to block dst in the K and V buffers of
// layers layers, from the first'th in poolPtrs' order (the global layers,
// then the local ones).
func (br *BatchRunner) copyBlock(dst, src int32, first, layers int) error {
	if dst == src || layers == 0 {
		return nil
	}
	g := br.dev
	if err := g.enter(); err != nil {
		return err
	}
	defer g.exit()
	grid := uint32(min((br.blockHalfs/8+255)/256, 64))
	// A lookahead step in flight read the blocks before the copy: it is
	// discarded (its writes, at positions past its sequences' lengths, are
	// harmless; see queueAhead).
	br.ahead.on = false
	if err := g.launch("kv_block_copy", [3]uint32{grid, uint32(2 * layers)}, 256, 0,
		br.poolPtrs+uint64(16*first), uint64(br.blockHalfs), i32(int(dst)), i32(int(src))); err != nil {
		return err
	}
	br.pending = false
	return g.sync("copying a KV block")
}

// CopyLocalBlock copies block src of the window pool to its block dst:
// keys and values of every sliding-window layer (engine.WindowRunner). A
// runner without a window pool (WindowPool 0, 0) refuses.
func (br *BatchRunner) CopyLocalBlock(dst, src int32) error {
	if br.closed {
		return errors.New("cuda: batch runner is closed")
	}
	if !br.win {
		return errors.New("cuda: a window pool block copy on a runner without one (the model has no sliding-window layers, or no others)")
	}
	if dst < 0 || int(dst) >= br.localBlocks || src < 0 || int(src) >= br.localBlocks {
		return fmt.Errorf("cuda: copy of block %d to %d in a window pool of %d", src, dst, br.localBlocks)
	}
	return br.copyBlock(dst, src, br.nglobal, br.cfg.Layers-br.nglobal)
}

// WindowPool returns the window pool's blocks and its layers' window
// (engine.WindowRunner); 0, 0 without a window pool (a model without
// sliding-window layers, or without others).
func (br *BatchRunner) WindowPool() (blocks, window int) {
	if !br.win {
		return 0, 0
	}
	return br.localBlocks, br.cfg.Window
}

// checkLocal checks b's tables against the window pool, when the model
// has one: b.LocalTables (batch.CheckLocal), or without them b.Tables,
// which then name its blocks too.
func (br *BatchRunner) checkLocal(b *batch.Batch) error {
	switch {
	case !br.win:
		if len(b.LocalTables) != 0 {
			return errors.New("cuda: a batch with window pool tables on a runner without a window pool")
		}
		return nil
	case len(b.LocalTables) != 0:
		return b.CheckLocal(br.bs, br.localBlocks, br.cfg.Window)
	case br.localBlocks < br.blocks:
		if err := b.Check(br.cfg.Vocab, br.base.maxLen, br.bs, br.localBlocks); err != nil {
			return fmt.Errorf("%w (a batch without local tables names the window pool's blocks in its tables)", err)
		}
	}
	return nil
}

// PoolBytes returns the device memory of the KV pools (the main pool and
// the window pool, their scratch blocks included: Stats' PoolBytes) and
// what the main pool would take with every layer's keys and values in it,
// full attention's cost (engine.PoolSizer).
func (br *BatchRunner) PoolBytes() (pool, full int64) {
	return int64(br.stats.PoolBytes), int64(br.blocks+1) * int64(br.blockBytes()+br.localBlockBytes())
}
