package vulkan

import (
	"errors"
	"fmt"
	"unsafe"

	"inferno/arch"
	"inferno/batch"
)

// BatchRunner runs a Model for many sequences at once (engine.BatchRunner):
// their keys and values in a pool of f16 blocks on the device, one pass a
// command buffer. A pass's inputs (token ids, positions, block tables, the
// attention's tiles, the output rows) are written to a host-visible buffer
// that the shaders read; so the command buffer of a pass depends only on
// its shape (tokens, sequences, tiles, outputs), and is recorded once for
// each shape and replayed (Options.NoGraph records every pass anew).
type BatchRunner struct {
	md     *Model
	d      *Device
	c      *arch.Config
	blocks int
	bs     int
	kc, vc []*Buffer // each layer's keys and values: blocks (localBlocks in the window pool) x bs x KVDim halves

	// The window pool (window.go): with win, the sliding-window layers'
	// keys and values are in localBlocks blocks of their own.
	win         bool
	localBlocks int

	cap    int     // tokens the scratch holds
	x, h   *Buffer // residual stream and normalized input, cap x Hidden
	qkv    *Buffer // cap packed rows of queries, keys and values (qkvDim)
	att    *Buffer // cap x QDim
	gateUp *Buffer // cap packed rows of gate and up, 2 FFN
	act    *Buffer // cap x FFN
	out    *Buffer // cap x Hidden, a sub-layer's output (post-norm models)
	part   *Buffer // the attention's partial results of runs of keys
	amax   *Buffer // argmax's chunks' results
	logits *Buffer // resCap x Vocab float32, on the device
	xq     *Buffer // the products' prepared activations, qcap tokens: quant_act's (intdot.go) or act_h's (mm.go)
	qcap   int

	moe moeScratch // a mixture of experts' buffers for cap tokens (moe.go)

	in     *Buffer // host: the pass's inputs (inputs' layout)
	lay    inputs
	res    *Buffer // host: logits (copied when asked for), greedy ids and hidden rows of the outputs
	resCap int     // outputs res holds
	copied bool    // res holds the last pass's logits

	graphs map[shape]*Recorder

	// The device sampler (runner_sample.go): rows set for the next
	// Forward, and whether the last one sampled.
	samp                    *devSampler
	sampleNext, sampledLast bool
	sampleRows              int

	// Host copies of the pass's inputs, reused.
	pos, seq, tabOff, ltabOff, tables, tiles, outIdx []int32
	runs                                             []batch.Run

	nOut, nHidden int
	last          shape // the last pass's (Profile)
	closed        bool
}

// shape is what a pass's command buffer depends on.
type shape struct {
	tokens, seqs, tiles, outs, hidden int
	prompt                            bool
	splits                            int  // the attention's runs of keys (attnSplits)
	sample                            bool // the sampler chooses the outputs' tokens
	// allOut: the outputs are every token, in order, and no hidden rows
	// (decode): the head reads the residual stream itself.
	allOut bool
}

// inputs is where each input lies in the host buffer, in bytes. ltabOff
// holds the offsets of the sequences' window pool tables (window.go),
// which tables holds after the main ones.
type inputs struct {
	ids, pos, seq, tabOff, ltabOff, tiles, outIdx, tables int64
	tokens                                                int // tokens (and sequences) the regions hold
	tablesCap                                             int // int32s the tables region holds
	size                                                  int64
}

// maxGraphs bounds the recorded command buffers kept (the distinct pass
// shapes of a server: decode batch sizes, prompt chunks).
const maxGraphs = 256

// NewBatchRunner returns a runner with a pool of blocks blocks of bs
// positions (blocks 0: as many as the memory budget leaves). A model with
// sliding-window layers and others gets a window pool of as many blocks
// (NewWindowBatchRunner), so that batches without LocalTables, which
// use Tables for both pools, run as on one pool.
func (md *Model) NewBatchRunner(blocks, bs int) (*BatchRunner, error) {
	return md.NewWindowBatchRunner(blocks, 0, bs)
}

// NewWindowBatchRunner returns a runner as NewBatchRunner does, whose
// sliding-window layers (for a model with such layers and others) keep
// their keys and values in a window pool of localBlocks blocks of their
// own (0: as many as the main pool's), the main pool of blocks blocks
// holding the other layers'. With blocks 0 a given window pool's bytes
// come off the memory budget first. The runner is an
// engine.WindowRunner: batches name the window pool's blocks in
// LocalTables. For other models localBlocks is not used: one pool holds
// every layer's, and WindowPool returns 0, 0.
func (md *Model) NewWindowBatchRunner(blocks, localBlocks, bs int) (*BatchRunner, error) {
	if md.closed {
		return nil, errors.New("vulkan: the model is closed")
	}
	if bs < 1 || bs > 4096 {
		return nil, fmt.Errorf("vulkan: KV block size %d: want 1 to 4096", bs)
	}
	if blocks < 0 || blocks >= 1<<31-1 || localBlocks < 0 || localBlocks >= 1<<31-1 {
		return nil, fmt.Errorf("vulkan: a KV pool of %d blocks and a window pool of %d", blocks, localBlocks)
	}
	c := md.c
	win := windowPool(c)
	page, lpage := poolPages(c, win, bs)
	scratch := md.scratchBytes(defaultCap)
	free, _ := md.PoolMemory()
	if blocks == 0 {
		avail, per := int64(free)-scratch, page
		if win && localBlocks > 0 {
			avail -= int64(localBlocks) * lpage // the window pool's, first
		} else {
			per += lpage // a block of each pool
		}
		blocks = int(max(avail, 0) / per)
		if perSeq := (md.maxLen + bs - 1) / bs; blocks < perSeq {
			return nil, fmt.Errorf("vulkan: the memory left on %s (%s) holds %d KV blocks%s; one sequence of %d positions needs %d",
				md.d.Name, gib(int64(free)), blocks, windowNote(win, localBlocks, lpage), md.maxLen, perSeq)
		}
	}
	if !win {
		localBlocks = 0
	} else if localBlocks == 0 {
		localBlocks = blocks
	}
	if need := int64(blocks)*page + int64(localBlocks)*lpage + scratch; need > int64(free) {
		return nil, fmt.Errorf("vulkan: a KV pool of %d blocks (%s)%s does not fit the %s left on %s",
			blocks, gib(int64(blocks)*page), windowNote(win, localBlocks, lpage), gib(int64(free)), md.d.Name)
	}
	r := &BatchRunner{md: md, d: md.d, c: c, blocks: blocks, bs: bs, win: win, localBlocks: localBlocks, graphs: map[shape]*Recorder{}}
	md.runners++
	for i := range c.Layers {
		n, what := blocks, "KV pool"
		if r.local(i) {
			n, what = localBlocks, "KV window pool"
		}
		layerBytes := int64(n) * int64(bs) * int64(c.KVDim()) * 2
		for _, kv := range []*[]*Buffer{&r.kc, &r.vc} {
			b, err := md.d.NewBuffer(layerBytes)
			if err != nil {
				r.Close()
				return nil, fmt.Errorf("vulkan: %s of %d blocks: %w", what, n, err)
			}
			*kv = append(*kv, b)
		}
	}
	if err := r.grow(defaultCap, 1, 64); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// defaultCap is the tokens a runner's scratch holds at first; a larger
// pass grows it.
const defaultCap = 512

// scratchBytes is the device memory of the scratch for n tokens.
func (md *Model) scratchBytes(n int) int64 {
	c := md.c
	b := 4*int64(n)*int64(3*c.Hidden+2*c.QDim()+2*c.KVDim()+3*c.FFN) + 4*moeScratchValues(c, n)
	return b + md.actBytes(n)
}

// grow makes the scratch hold n tokens, the results outs outputs and the
// inputs tables table entries, dropping the recorded passes (they name
// the buffers' addresses).
func (r *BatchRunner) grow(n, outs, tables int) error {
	c := r.c
	if n > r.cap {
		n = max(n, 2*r.cap)
		for _, b := range []*Buffer{r.x, r.h, r.qkv, r.att, r.gateUp, r.act, r.out} {
			b.Free()
		}
		var err error
		alloc := func(values int) *Buffer {
			if err != nil {
				return nil
			}
			var b *Buffer
			b, err = r.d.NewBuffer(4 * int64(n) * int64(values))
			return b
		}
		r.x, r.h, r.out = alloc(c.Hidden), alloc(c.Hidden), alloc(c.Hidden)
		r.qkv, r.att = alloc(qkvDim(c)), alloc(c.QDim())
		r.gateUp, r.act = alloc(2*c.FFN), alloc(c.FFN)
		if err == nil {
			err = r.moe.alloc(r.d, c, n)
		}
		if err != nil {
			r.cap = 0
			return fmt.Errorf("vulkan: scratch for %d tokens: %w", n, err)
		}
		r.cap = n
		r.resetGraphs()
		if err := r.growActs(n); err != nil {
			return err
		}
	}
	if n := max(n, r.cap); r.in == nil || tables > r.lay.tablesCap || n > r.lay.tokens {
		if r.in != nil {
			tables = max(tables, 2*r.lay.tablesCap)
		}
		var l inputs
		off := int64(0)
		region := func(values int) int64 {
			o := off
			off += 4 * int64(values)
			off = (off + 15) &^ 15
			return o
		}
		l.ids, l.pos, l.seq, l.tabOff, l.ltabOff = region(n), region(n), region(n), region(n), region(n)
		l.tiles, l.outIdx = region(2*n), region(n)
		l.tables, l.tablesCap, l.tokens = region(tables), tables, n
		l.size = off
		b, err := r.d.NewHostBuffer(l.size)
		if err != nil {
			return fmt.Errorf("vulkan: inputs for %d tokens: %w", n, err)
		}
		r.in.Free()
		r.in, r.lay = b, l
		r.resetGraphs()
	}
	if outs > r.resCap {
		outs = max(outs, 2*r.resCap)
		b, err := r.d.NewHostBuffer(int64(outs) * (4*int64(c.Vocab) + 4 + 4*int64(c.Hidden)))
		if err != nil {
			return fmt.Errorf("vulkan: results of %d outputs: %w", outs, err)
		}
		a, err := r.d.NewBuffer(8 * int64(outs) * 256)
		if err != nil {
			b.Free()
			return fmt.Errorf("vulkan: results of %d outputs: %w", outs, err)
		}
		l, err := r.d.NewBuffer(4 * int64(outs) * int64(c.Vocab))
		if err != nil {
			b.Free()
			a.Free()
			return fmt.Errorf("vulkan: logits of %d outputs: %w", outs, err)
		}
		r.res.Free()
		r.amax.Free()
		r.logits.Free()
		r.res, r.amax, r.logits, r.resCap = b, a, l, outs
		r.resetGraphs()
	}
	return nil
}

// growPart makes the attention's partial results hold a pass of shape
// sh's runs of keys.
func (r *BatchRunner) growPart(sh shape) error {
	need := 4 * int64(sh.tokens) * int64(r.c.Heads) * int64(sh.splits) * int64(r.c.HeadDim+2)
	if r.part != nil && r.part.Size() >= need {
		return nil
	}
	if r.part != nil {
		need = max(need, 2*r.part.Size())
	}
	b, err := r.d.NewBuffer(need)
	if err != nil {
		return fmt.Errorf("vulkan: attention scratch: %w", err)
	}
	r.part.Free()
	r.part = b
	r.resetGraphs()
	return nil
}

func (r *BatchRunner) resetGraphs() {
	for k, g := range r.graphs {
		g.Release()
		delete(r.graphs, k)
	}
}

// Result regions of res: logits (resCap x Vocab float32), then greedy ids
// (resCap int32), then hidden rows (resCap x Hidden float32).
func (r *BatchRunner) logitsOff() int64 { return 0 }
func (r *BatchRunner) greedyOff() int64 { return 4 * int64(r.resCap) * int64(r.c.Vocab) }
func (r *BatchRunner) hiddenOff() int64 { return r.greedyOff() + 4*int64(r.resCap) }

// Forward runs the tokens of b through the model (engine.BatchRunner).
func (r *BatchRunner) Forward(b *batch.Batch) error {
	if r.closed {
		return errors.New("vulkan: the runner is closed")
	}
	if err := b.Check(r.c.Vocab, r.md.maxLen, r.bs, r.blocks); err != nil {
		return fmt.Errorf("vulkan: %w", err)
	}
	if err := r.checkLocal(b); err != nil {
		return err
	}
	n := len(b.Tokens)
	r.nOut, r.nHidden, r.sampledLast, r.copied = 0, 0, false, false
	sample := r.sampleNext
	r.sampleNext = false
	if sample && r.sampleRows != len(b.Outputs) {
		return fmt.Errorf("vulkan: %d sampling rows for %d outputs", r.sampleRows, len(b.Outputs))
	}
	if n == 0 {
		return nil
	}
	tables := 0
	for _, t := range b.Tables {
		tables += len(t)
	}
	for _, t := range b.LocalTables {
		tables += len(t)
	}
	// The inputs hold an offset a sequence in regions of a token each.
	if err := r.grow(max(n, len(b.Tables)), max(len(b.Outputs), len(b.Hidden)), max(tables, 1)); err != nil {
		return err
	}
	sh, err := r.writeInputs(b)
	if err != nil {
		return err
	}
	sh.sample = sample
	if err := r.growPart(sh); err != nil {
		return err
	}
	g := r.graphs[sh]
	if g == nil || r.md.opts.NoGraph {
		if g, err = r.record(sh); err != nil {
			return err
		}
		if r.md.opts.NoGraph {
			defer g.Release()
		} else {
			if len(r.graphs) >= maxGraphs {
				r.resetGraphs()
			}
			r.graphs[sh] = g
		}
	}
	if err := r.d.Replay(g); err != nil {
		return fmt.Errorf("vulkan: forward pass of %d tokens: %w", n, err)
	}
	r.nOut, r.nHidden, r.last, r.sampledLast = len(b.Outputs), len(b.Hidden), sh, sample
	return nil
}

// writeInputs writes b's inputs into the host buffer and returns the
// pass's shape.
func (r *BatchRunner) writeInputs(b *batch.Batch) (shape, error) {
	n := len(b.Tokens)
	r.runs = b.Runs(r.runs)
	sh := shape{tokens: n, seqs: len(b.Tables), outs: len(b.Outputs), hidden: len(b.Hidden)}
	for _, run := range r.runs {
		if run.N > 1 {
			sh.prompt = true
		}
	}
	r.tabOff, r.tables = r.tabOff[:0], r.tables[:0]
	for _, t := range b.Tables {
		r.tabOff = append(r.tabOff, int32(len(r.tables)))
		r.tables = append(r.tables, t...)
	}
	r.ltabOff = r.localTables(b)
	tq := 1
	if sh.prompt {
		tq = int(r.md.attnShape(true).TQ)
	}
	r.tiles = r.tiles[:0]
	for _, run := range r.runs {
		r.tiles = appendTiles(r.tiles, run.Start, run.N, tq)
	}
	sh.tiles = len(r.tiles) / 2
	// The attention's runs of keys for the deepest sequence, in powers of
	// two of positions, so that the steps of a sequence replay one
	// command buffer for long stretches of its growth.
	deepest := 0
	for _, run := range r.runs {
		deepest = max(deepest, run.Pos+run.N)
	}
	keys := 256
	for keys < deepest {
		keys *= 2
	}
	sh.splits = attnSplits(sh.tiles, r.c.Heads, min(keys, r.md.maxLen), r.md.attnShape(sh.prompt))
	r.outIdx = append(append(r.outIdx[:0], b.Outputs...), b.Hidden...)
	sh.allOut = len(b.Hidden) == 0 && len(b.Outputs) == n
	for i, o := range b.Outputs {
		sh.allOut = sh.allOut && int(o) == i
	}
	host, l := r.in.Host(), &r.lay
	copy(host[l.ids:], I32Bytes(b.Tokens))
	copy(host[l.pos:], I32Bytes(b.Pos))
	copy(host[l.seq:], I32Bytes(b.Seq))
	copy(host[l.tabOff:], I32Bytes(r.tabOff))
	copy(host[l.ltabOff:], I32Bytes(r.ltabOff))
	copy(host[l.tables:], I32Bytes(r.tables))
	copy(host[l.tiles:], I32Bytes(r.tiles))
	copy(host[l.outIdx:], I32Bytes(r.outIdx))
	return sh, nil
}

// Logits returns output i's logits of the last Forward, valid until the
// next Forward. They stay on the device until asked for: the first call
// after a Forward copies every output's to host memory.
func (r *BatchRunner) Logits(i int) ([]float32, error) {
	if i < 0 || i >= r.nOut {
		return nil, fmt.Errorf("vulkan: output %d of %d", i, r.nOut)
	}
	v := r.c.Vocab
	if !r.copied {
		rec, err := r.d.Begin()
		if err != nil {
			return nil, err
		}
		rec.Copy(r.logits, r.res, 0, r.logitsOff(), 4*int64(r.nOut)*int64(v))
		if err := r.d.Submit(rec); err != nil {
			return nil, fmt.Errorf("vulkan: logits: %w", err)
		}
		r.copied = true
	}
	return hostF32(r.res.Host()[r.logitsOff()+4*int64(i*v):], v), nil
}

// Greedy returns output i's argmax (the lowest id among ties).
func (r *BatchRunner) Greedy(i int) (int32, error) {
	if i < 0 || i >= r.nOut {
		return 0, fmt.Errorf("vulkan: output %d of %d", i, r.nOut)
	}
	off := r.greedyOff() + 4*int64(i)
	return *(*int32)(unsafe.Pointer(&r.res.Host()[off])), nil
}

// Hidden returns hidden row i of the last Forward (engine.Embedder).
func (r *BatchRunner) Hidden(i int) ([]float32, error) {
	if i < 0 || i >= r.nHidden {
		return nil, fmt.Errorf("vulkan: hidden row %d of %d", i, r.nHidden)
	}
	h := r.c.Hidden
	return hostF32(r.res.Host()[r.hiddenOff()+4*int64(i*h):], h), nil
}

func hostF32(b []byte, n int) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n) }

// CopyBlock copies block src into block dst, keys and values of every
// layer (of the main pool's layers only with a window pool;
// CopyLocalBlock copies the window pool's).
func (r *BatchRunner) CopyBlock(dst, src int32) error {
	if r.closed {
		return errors.New("vulkan: the runner is closed")
	}
	if dst < 0 || src < 0 || int(dst) >= r.blocks || int(src) >= r.blocks {
		return fmt.Errorf("vulkan: copy of block %d to %d in a pool of %d", src, dst, r.blocks)
	}
	return r.copyBlock(dst, src, false)
}

// copyBlock copies block src into block dst in the K and V buffers of the
// layers of the window pool (local) or of the main pool.
func (r *BatchRunner) copyBlock(dst, src int32, local bool) error {
	if dst == src {
		return nil
	}
	rec, err := r.d.Begin()
	if err != nil {
		return err
	}
	size := int64(r.bs) * int64(r.c.KVDim()) * 2
	for l := range r.kc {
		if r.local(l) != local {
			continue
		}
		rec.Copy(r.kc[l], r.kc[l], int64(src)*size, int64(dst)*size, size)
		rec.Copy(r.vc[l], r.vc[l], int64(src)*size, int64(dst)*size, size)
	}
	if err := r.d.Submit(rec); err != nil {
		return fmt.Errorf("vulkan: copy of block %d to %d: %w", src, dst, err)
	}
	return nil
}

// Vocab returns the number of logits a position has.
func (r *BatchRunner) Vocab() int { return r.c.Vocab }

// MaxLen returns the most positions one sequence may hold.
func (r *BatchRunner) MaxLen() int { return r.md.maxLen }

// BlockSize returns the positions a block holds.
func (r *BatchRunner) BlockSize() int { return r.bs }

// Blocks returns the number of blocks in the pool.
func (r *BatchRunner) Blocks() int { return r.blocks }

// Backend names the backend.
func (r *BatchRunner) Backend() string { return "vulkan" }

// Close releases the runner, and the model's device when the model is
// closed and this was its last runner.
func (r *BatchRunner) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.resetGraphs()
	if r.samp != nil {
		r.samp.close()
	}
	r.moe.free()
	for _, b := range append(append([]*Buffer{r.x, r.h, r.qkv, r.att, r.gateUp, r.act, r.out, r.part, r.amax, r.logits, r.in, r.res, r.xq}, r.kc...), r.vc...) {
		b.Free()
	}
	r.md.runners--
	if r.md.closed && r.md.runners == 0 {
		r.md.release()
	}
	return nil
}
