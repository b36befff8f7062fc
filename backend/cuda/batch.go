package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"inferno/arch"
	"inferno/batch"
)

// MaxBatch is the most tokens one BatchRunner.Forward takes: decode tokens
// and prompt chunks together (and so the most sequences and outputs). The
// activations of that many tokens, their attention partials and their
// logits (4*Vocab bytes each: 622 MB for Qwen3's vocabulary) are
// allocated up front.
const MaxBatch = 1024

// batchBuckets are the batch sizes of the captured decode graphs: a batch
// of B decode tokens replays the graph of the smallest bucket >= B, padded
// with dummy tokens that write into the reserved scratch block.
var batchBuckets = [...]int{1, 2, 4, 8, 16, 32, 64, 128, 256}

// BatchRunner runs one forward pass over the tokens of many sequences
// (continuous batching) on the GPU, their keys and values in a pool of
// fixed-size blocks that it owns (two pools for a model with
// sliding-window layers: batch_pool.go). It implements engine.BatchRunner
// and engine.WindowRunner. It
// shares the weights (and device, kernels and stream) of the Model it was
// made from; the weights are freed with the last of them closed. A
// BatchRunner must be used by one goroutine at a time, and not at the same
// time as the runners it shares the weights with.
type BatchRunner struct {
	base   *Model // weights, configuration and matvec launch choices
	dev    *device
	cfg    arch.Config
	bt     batchTuning // launch choices (tuning.go)
	preOcc int         // pattn_pre blocks an SM holds (attn.go; 0: not read yet)
	closed bool

	blocks, bs int
	bsh        int   // log2(bs) when bs is a power of two, else -1 (the kernels divide)
	scratch    int32 // the reserved block the padding tokens of decode graphs write into
	blockHalfs int   // f16 values of one block in one layer's K (or V) pool
	kc, vc     []uint64
	poolPtrs   uint64 // device array of the pool pointers (kv_block_copy): K and V of each global layer, then of each local one
	// A model with sliding-window layers keeps their keys and values in a
	// window pool of their own (win): localBlocks blocks and a scratch
	// block (lscratch) of the same size; the main pool (blocks, scratch)
	// then holds the global layers' only. kc[i], vc[i] are layer i's
	// buffers in its pool; nglobal layers are global.
	win         bool
	localBlocks int
	lscratch    int32
	nglobal     int

	// scratch for MaxBatch tokens (npad rows)
	npad                          int
	px, pqkv, pq, patt, pact, pxo uint64
	praw                          uint64 // raw gate/up products (Model.rawGateUp: options.go), else 0
	phi, plo, psx, pxq            uint64
	mws, mcnt                     uint64 // mmh's split workspace and counts (mmhSplits)
	logits, pval, pidx, dres      uint64
	pm, pl, pacc, counter, acnt   uint64
	partCap                       int // tokens x splits the attention partials hold
	moe                           moeScratch
	dmeta                         uint64
	hmeta                         uintptr // page-locked host copies of the inputs (mapped): two slots of metaCap ints
	hmetaD                        uint64
	metaCap                       int     // ints of dmeta and of each slot of hmeta
	metaLen                       [2]int  // ints of each slot's inputs last copied
	hres                          uintptr // page-locked results, two slots: argmax ids, then the step number
	hresD                         uint64
	owned                         []uint64
	graphs                        [len(batchBuckets)][2][2][2]uintptr // graph, exec per bucket, variant (see variantFor) and slot
	sgraphs                       map[sgraphKey]*[2][2]uintptr        // the same with a step's sampling captured, per slot
	cluster                       bool                                // pattn_decc is there (sm_90 PTX)
	maxSplit                      int
	step                          int32
	pending                       bool
	nout                          int
	hid                           hiddenRows // the final hidden states of the last Forward's Hidden tokens (batch_hidden.go)
	lastB                         int        // the bucket of the last Forward when a graph ran it, else 0
	lastV                         int        // and the graph's variant
	lastTok                       []int32
	slot                          int // the slot (logits, results, inputs) of the last Forward
	ahead                         lookahead
	noAhead                       bool         // SetLookahead(false)
	noGraph                       bool         // Options.NoGraph: decode steps launch their kernels one by one, a synchronization after each, and queue no lookahead
	prompts                       *promptTrace // Options.TracePrompts: the kernels' times of the passes general runs
	logitsRead                    bool         // Logits was called since the last Forward
	ids                           []int32
	valid                         bool
	hostLogits                    []float32
	runs                          []batch.Run
	stats                         BatchStats
	samp                          *devSampler // sampling on the GPU (sample.go), made by the first SetSamples
	sampNow                       bool        // this Forward samples its outputs on the GPU
	sampledLast                   bool        // the last Forward did
	sampIn                        bool        // its sampling was captured into its decode graph
}

// lookahead describes a decode step queued on the device's own argmax
// (tokens of the last step's argmax, positions + 1, the same tables) before
// the next Forward: taken when that Forward brings exactly that batch.
type lookahead struct {
	on   bool
	slot int   // its slot: its inputs in hmeta, results in hres, logits
	step int32 // its step number
	n, B int   // tokens, bucket
	v    int   // graph variant
	// sampled: its tokens were sampled on the GPU (its rows in the slot's
	// sampling parameters), not the argmax
	sampled bool
	// deferred: its forward pass was queued without the sampling its rows
	// need (masks, patches); the Forward that takes it launches the
	// sampling with the rows set for it (SetSamples), else its tokens are
	// the argmax
	deferred bool
	// inGraph: its sampling was captured into its graph
	inGraph bool
}

// Decode graphs write the logits of their (at most 256) tokens at row
// decodeRows*slot of the logits buffer, and their argmax ids and step
// number at hresSlotBytes*slot of hres.
const (
	decodeRows    = 256
	hresSlotBytes = 4 * (MaxBatch + 4)
)

// BatchStats describe a BatchRunner and what it has run.
type BatchStats struct {
	Blocks, BlockSize int
	LocalBlocks       int    // the window pool's blocks (sliding-window layers; 0: none)
	PoolBytes         uint64 // the KV pools (both K and V, every layer, the scratch blocks included)
	GraphCaptures     int
	GraphSteps        int64 // pure decode batches replayed from a graph
	Steps             int64 // other batches (kernels launched one by one)
	Tokens            int64
	LookaheadHits     int64 // decode batches whose lookahead step, queued before, was taken
	LookaheadMisses   int64 // lookahead steps discarded (the next batch was another)
}

// NewBatchRunner returns a runner of batches over a pool of blocks blocks
// of blockSize positions (K and V of every layer, f16), sharing r's
// device, kernels and weights. blocks 0 sizes the pool from the free GPU
// memory (leaving about 1.5 GiB for graphs and other users), at most what
// 256 sequences of MaxLen positions need; Blocks tells how many. One more
// block is reserved as scratch. A pool and scratch that do not fit in the
// free memory are refused, in one line, before anything is allocated.
//
// A model with sliding-window layers (and others) gets a window pool of
// as many blocks (NewWindowBatchRunner), so that batches without
// LocalTables, which use Tables for both pools, run as on one pool.
func (r *Model) NewBatchRunner(blocks, blockSize int) (*BatchRunner, error) {
	return r.newBatchRunner(blocks, 0, blockSize)
}

func (r *Model) newBatchRunner(blocks, localBlocks, blockSize int) (*BatchRunner, error) {
	if r.closed {
		return nil, errClosed
	}
	if blockSize < 1 || blockSize > 4096 {
		return nil, fmt.Errorf("cuda: block size %d (want 1 to 4096)", blockSize)
	}
	if blocks < 0 || blocks >= 1<<31-1 {
		return nil, fmt.Errorf("cuda: %d blocks", blocks)
	}
	if localBlocks < 0 || localBlocks >= 1<<31-1 {
		return nil, fmt.Errorf("cuda: a window pool of %d blocks", localBlocks)
	}
	bt := batchTuningFor(r.dev)
	if r.opts.batchTune != nil {
		r.opts.batchTune(&bt)
	}
	if err := bt.check(); err != nil {
		return nil, err
	}
	br := &BatchRunner{base: r, dev: r.dev, cfg: r.cfg, bt: bt, bs: blockSize, bsh: log2Exact(blockSize), npad: roundUp(MaxBatch, 64), noGraph: r.opts.NoGraph}
	br.nglobal, br.win = poolLayers(&br.cfg)
	if r.opts.TracePrompts {
		br.prompts = &promptTrace{}
	}
	g := r.dev
	if err := g.enter(); err != nil {
		return nil, err
	}
	defer g.exit()
	if blocks > 0 {
		lb := localBlocks
		if lb == 0 {
			lb = blocks
		}
		if err := br.checkFit(blocks, lb); err != nil {
			return nil, err
		}
	}
	r.refs++
	ok := false
	defer func() {
		if !ok {
			br.closeLocked()
		}
	}()
	if err := br.allocScratch(); err != nil {
		return nil, err
	}
	if err := br.allocPool(blocks, localBlocks); err != nil {
		return nil, err
	}
	if err := g.sync("batch runner setup"); err != nil {
		return nil, err
	}
	ok = true
	return br, nil
}

// log2Exact returns log2(n) when n is a power of two, else -1.
func log2Exact(n int) int {
	for s := 0; s < 31; s++ {
		if n == 1<<s {
			return s
		}
	}
	return -1
}

// nsplit returns the decode attention's splits for n decode tokens: about
// splitMul*SMs blocks, at most dcap blocks per SM for one token.
func (br *BatchRunner) nsplit(n int) int {
	hb := br.base.shape.dblocks // blocks a token and split
	return max(1, min(br.bt.dcap*br.dev.SMs/hb, br.bt.splitMul*br.dev.SMs/(hb*max(n, 1))))
}

func (br *BatchRunner) allocScratch() error {
	c := &br.cfg
	g := br.dev
	var err error
	alloc := func(dst *uint64, n int, what string) {
		if err == nil {
			if *dst, err = g.alloc(uint64(n), what); err == nil {
				br.owned = append(br.owned, *dst)
			}
		}
	}
	np := br.npad
	maxK := max(c.Hidden, c.QDim(), c.FFN)
	for b := 1; b <= MaxBatch; b++ {
		br.partCap = max(br.partCap, b*br.nsplit(b))
	}
	br.partCap = max(br.partCap, prefillPartTokens)
	br.maxSplit = br.nsplit(1)
	alloc(&br.px, 4*np*c.Hidden, "batch residual")
	alloc(&br.pqkv, 4*np*br.base.qkvRows, "batch qkv")
	alloc(&br.pq, 4*np*c.QDim(), "batch queries")
	alloc(&br.patt, 4*np*c.QDim(), "batch attention output")
	alloc(&br.pact, 4*np*c.FFN, "batch ffn activation")
	if br.base.rawGateUp {
		alloc(&br.praw, 4*np*gateUpRows(c.FFN), "batch raw gate/up products")
	}
	alloc(&br.pxo, 4*np*c.Hidden, "batch output rows")
	alloc(&br.phi, np*maxK, "batch activation planes")
	alloc(&br.plo, np*maxK, "batch activation planes")
	alloc(&br.psx, 4*np*maxK/32, "batch activation scales")
	alloc(&br.pxq, 2*np*maxK, "batch activations, interleaved")
	if br.base.mmhTiles { // else no product splits (mmhSplits)
		alloc(&br.mws, mmhSplitMost*mmhSplitBytes, "split products' workspace")
		alloc(&br.mcnt, 4*mmhSplitMost, "split products' counts")
	}
	alloc(&br.logits, 4*MaxBatch*c.Vocab, "batch logits")
	alloc(&br.pval, 4*max(br.base.headBlocks, 1), "argmax partials")
	alloc(&br.pidx, 4*max(br.base.headBlocks, 1), "argmax partials")
	alloc(&br.dres, 4*(MaxBatch+4), "argmax ids")
	if decodeRows > MaxBatch/2 {
		panic("cuda: the logits buffer holds two slots of decode rows")
	}
	alloc(&br.pm, 4*br.partCap*c.Heads, "batch attention partials")
	alloc(&br.pl, 4*br.partCap*c.Heads, "batch attention partials")
	alloc(&br.pacc, 4*br.partCap*c.Heads*c.HeadDim, "batch attention partials")
	alloc(&br.counter, 4*MaxBatch*br.base.shape.dblocks, "batch attention counters")
	alloc(&br.acnt, 64, "argmax counter")
	br.allocMoE(alloc)
	if err != nil {
		return err
	}
	for _, z := range []struct {
		p uint64
		n int
	}{{br.counter, 4 * MaxBatch * br.base.shape.dblocks}, {br.acnt, 64}, {br.phi, np * maxK}, {br.plo, np * maxK}, {br.psx, 4 * np * maxK / 32}, {br.pxq, 2 * np * maxK}, {br.mcnt, 4 * mmhSplitMost}, {br.moe.counter, moeCounterBytes}} {
		if z.p == 0 {
			continue // not allocated (no experts, no split products)
		}
		if err := g.memsetAsync(z.p, uint64(z.n)); err != nil {
			return err
		}
	}
	if br.hres, br.hresD, err = g.allocHost(2 * hresSlotBytes); err != nil {
		return err
	}
	// Kernels whose shared memory may pass the default limit.
	for _, k := range []struct {
		name string
		smem int
	}{
		{br.base.attnKernel("pattn_dec"), attnFDSmem(1, 3, 256)},
		{br.base.attnKernel("pattn_decf"), attnFDSmem(1, 3, 256)},
		{br.base.attnKernel("pattn_pre"), pattnPreSmem(c.HeadDim)},
	} {
		f, err := g.fn(k.name)
		if err != nil {
			return err
		}
		if err := g.allowSmem(f, k.name, k.smem); err != nil {
			return err
		}
	}
	// The cluster attention is only in the compute_90 images (batchTuningFor
	// sets cb 0 below that).
	if name := br.clusterKernel(); br.bt.cb > 0 {
		if f, err := g.fn(name); err == nil {
			if err := g.allowSmem(f, name, attnFDSmem(1, 3, 256)); err != nil {
				return err
			}
			br.cluster = true
		}
	}
	return nil
}

// clusterKernel names the cluster decode attention for the model's shape
// and options.
func (br *BatchRunner) clusterKernel() string { return br.base.attnKernel("pattn_decc") }

// clusterFor tells whether decode graphs of n tokens may use the cluster
// attention, and with how many splits (a multiple of its 8-block clusters).
func (br *BatchRunner) clusterFor(n int) (bool, int) {
	if !br.cluster || n > br.bt.cb {
		return false, 0
	}
	return true, 8 * max(1, br.nsplit(n)/8)
}

// variantFor returns the variant of the decode graph of bucket B for b's
// tokens at their positions + d: 1 (the cluster attention, pattn_decc)
// when the bucket may use it and every sequence then holds at most
// 8*cmax positions (one cluster of splits takes it: measured 1,247 against
// 1,110 tok/s for B = 1 at 130..258 positions), else 0 (pattn_decf: at
// 4,160 positions B = 1 decoded at 974 tok/s with it, 913 with the
// cluster attention's two clusters).
func (br *BatchRunner) variantFor(b *batch.Batch, B, d int) int {
	if ok, _ := br.clusterFor(B); !ok {
		return 0
	}
	for _, p := range b.Pos {
		if int(p)+d+1 > 8*br.bt.cmax {
			return 0
		}
	}
	return 1
}

// pattnPreSmem is pattn_pre's dynamic shared memory: two stages of K and V
// tiles of 64 rows (32 for head dimension 256) of hd+8 halves.
func pattnPreSmem(hd int) int {
	kt := 64
	if hd > 128 {
		kt = 32
	}
	return 2 * 2 * kt * (hd + 8) * 2
}

// growMeta makes the inputs' buffers (device and page-locked host) hold
// at least n ints; the graphs, which hold their addresses, are dropped.
func (br *BatchRunner) growMeta(n int) error {
	if n <= br.metaCap {
		return nil
	}
	g := br.dev
	if err := br.settle(); err != nil {
		return err
	}
	br.destroyGraphs()
	n = max(n, 2*br.metaCap)
	if br.dmeta != 0 {
		g.free(br.dmeta)
		br.dmeta = 0
	}
	if br.hmeta != 0 {
		g.freeHost(br.hmeta)
		br.hmeta = 0
	}
	br.metaCap = 0
	var err error
	if br.dmeta, err = g.alloc(uint64(4*n), "batch inputs"); err != nil {
		return err
	}
	if br.hmeta, br.hmetaD, err = g.allocHost(2 * 4 * n); err != nil {
		g.free(br.dmeta)
		br.dmeta = 0
		return err
	}
	br.metaCap = n
	return nil
}

// allocHost allocates n bytes of page-locked host memory, mapped into the
// GPU's address space; it returns the host and the device addresses.
func (g *device) allocHost(n int) (uintptr, uint64, error) {
	var p uintptr
	if err := g.d.check("cuMemAllocHost", g.d.call(g.d.cuMemAllocHost, uintptr(unsafe.Pointer(&p)), uintptr(n))); err != nil {
		return 0, 0, err
	}
	var d uint64
	if err := g.d.check("cuMemHostGetDevicePointer", g.d.call(g.d.cuMemHostGetDevicePointer, uintptr(unsafe.Pointer(&d)), p, 0)); err != nil {
		g.d.call(g.d.cuMemFreeHost, p)
		return 0, 0, err
	}
	clear(unsafe.Slice((*byte)(hostPtr(p)), n))
	return p, d, nil
}

func (g *device) freeHost(p uintptr) {
	if p != 0 {
		g.d.call(g.d.cuMemFreeHost, p)
	}
}

// hostInts views n int32s of page-locked host memory at p.
func hostInts(p uintptr, n int) []int32 { return unsafe.Slice((*int32)(hostPtr(p)), n) }

// Slot s's inputs (host and mapped device address), results (host and
// device address) and logits.
func (br *BatchRunner) hmetaSlot(s int) uintptr { return br.hmeta + uintptr(4*s*br.metaCap) }
func (br *BatchRunner) hmetaDSlot(s int) uint64 { return br.hmetaD + uint64(4*s*br.metaCap) }
func (br *BatchRunner) hresSlot(s int) uintptr  { return br.hres + uintptr(s*hresSlotBytes) }
func (br *BatchRunner) hresDSlot(s int) uint64  { return br.hresD + uint64(s*hresSlotBytes) }
func (br *BatchRunner) logitsSlot(s int) uint64 {
	return br.logits + uint64(4*s*decodeRows*br.cfg.Vocab)
}

// Forward runs the tokens of b through the model: keys and values into
// their sequences' blocks, logits and argmax of b's outputs. A batch of
// decode tokens only (one token per sequence, every token an output, at
// most 256) replays a captured graph; other batches (prompt chunks, mixed)
// launch the kernels one by one.
func (br *BatchRunner) Forward(b *batch.Batch) error {
	if br.closed {
		return errors.New("cuda: batch runner is closed")
	}
	br.valid, br.lastB = false, 0
	br.hid.n = 0
	sampled := br.logitsRead // the last step's logits were read: no lookahead now
	br.logitsRead = false
	br.sampNow, br.sampledLast, br.sampIn = br.samp != nil && br.samp.active, false, false
	if br.samp != nil {
		br.samp.active = false // the rows set are for this Forward only
	}
	if err := b.Check(br.cfg.Vocab, br.base.maxLen, br.bs, br.blocks); err != nil {
		return err
	}
	if err := br.checkLocal(b); err != nil {
		return err
	}
	if br.sampNow && len(br.samp.rows) != len(b.Outputs) {
		return fmt.Errorf("cuda: sampling parameters for %d outputs, the batch has %d", len(br.samp.rows), len(b.Outputs))
	}
	n := b.Len()
	if n > MaxBatch {
		return fmt.Errorf("cuda: a batch of %d tokens; at most %d", n, MaxBatch)
	}
	g := br.dev
	if err := g.enter(); err != nil {
		return err
	}
	defer g.exit()
	if br.sampNow {
		if err := br.samp.prepare(br.settle); err != nil {
			return err
		}
	}
	br.runs = b.Runs(br.runs)
	tab := 0
	for _, r := range br.runs {
		tab += (r.Pos+r.N-1)/br.bs + 1
	}
	tab += n // room for a lookahead's tables
	if br.win && len(b.LocalTables) != 0 {
		tab *= 2 // the window pool's, cut as the main pool's
	}
	need := br.metaInts(n, tab) + len(b.Hidden)
	if br.sampNow {
		need += rowInts * 2 * len(b.Outputs) // the rows, padded to the bucket
	}
	if err := br.growMeta(need); err != nil {
		return err
	}
	var err error
	if len(br.runs) == n && len(b.Outputs) == n && len(b.Hidden) == 0 && n <= batchBuckets[len(batchBuckets)-1] {
		err = br.decodeStep(b, sampled)
	} else {
		err = br.general(b)
	}
	if err != nil {
		br.ahead.on = false // a queued step, if any, is never taken
		return err
	}
	br.nout = len(b.Outputs)
	br.sampledLast = br.sampNow
	br.ids = append(br.ids[:0], hostInts(br.hresSlot(br.slot), br.nout)...)
	br.stats.Tokens += int64(n)
	br.valid = true
	return nil
}

// Logits returns the logits of output i of the last Forward, copied from
// the GPU; the slice is reused by the next call.
func (br *BatchRunner) Logits(i int) ([]float32, error) {
	if br.closed {
		return nil, errors.New("cuda: batch runner is closed")
	}
	if !br.valid {
		return nil, errors.New("cuda: no logits: run Forward first")
	}
	if i < 0 || i >= br.nout {
		return nil, fmt.Errorf("cuda: output %d of %d", i, br.nout)
	}
	if err := br.dev.enter(); err != nil {
		return nil, err
	}
	defer br.dev.exit()
	if br.hostLogits == nil {
		br.hostLogits = make([]float32, br.cfg.Vocab)
	}
	// The step is complete (its argmax, computed after the logits, is in);
	// a lookahead step queued after it writes the other slot's logits. The
	// copy runs on the legacy stream, concurrently with it. The next
	// Forward queues no lookahead: the caller samples.
	br.logitsRead = true
	if err := br.dev.download(f32Bytes(br.hostLogits), br.logitsSlot(br.slot)+uint64(4*i*br.cfg.Vocab)); err != nil {
		return nil, err
	}
	return br.hostLogits, nil
}

// SetLookahead turns the lookahead of decode batches on (the default) or
// off (engine.Lookaheader). With it on, a decode batch replayed from a
// graph queues the next one (the same sequences and tables, positions + 1,
// the tokens of the device's own argmax) before the host reads its
// results; a Forward that brings exactly that batch finds it done or
// running. It is also off for the step after one whose logits were read
// (a sampler's).
func (br *BatchRunner) SetLookahead(on bool) {
	br.noAhead = !on
	if !on && br.ahead.on && !br.closed && br.dev.enter() == nil {
		_ = br.settle() // an error shows again at the next call
		br.dev.exit()
	}
}

// Settle waits for what the last Forward left running on the GPU: its
// step's tail, or a queued lookahead step, which it discards. A caller
// that drops the positions a lookahead step would run (a sequence
// truncated or reset) calls it so that the step's time is not charged to
// its next Forward (engine.Single does).
func (br *BatchRunner) Settle() error {
	if br.closed {
		return errors.New("cuda: batch runner is closed")
	}
	if err := br.dev.enter(); err != nil {
		return err
	}
	defer br.dev.exit()
	return br.settle()
}

// Greedy returns the id of output i's largest logit (the lowest id among
// ties), computed on the GPU.
func (br *BatchRunner) Greedy(i int) (int32, error) {
	if br.closed {
		return 0, errors.New("cuda: batch runner is closed")
	}
	if !br.valid {
		return 0, errors.New("cuda: no argmax: run Forward first")
	}
	if i < 0 || i >= br.nout {
		return 0, fmt.Errorf("cuda: output %d of %d", i, br.nout)
	}
	return br.ids[i], nil
}

// Vocab returns the number of logits a position has.
func (br *BatchRunner) Vocab() int { return br.cfg.Vocab }

// MaxLen returns the most positions one sequence may hold.
func (br *BatchRunner) MaxLen() int { return br.base.maxLen }

// BlockSize returns the positions a block holds.
func (br *BatchRunner) BlockSize() int { return br.bs }

// Blocks returns the number of blocks in the pool (the scratch block not
// counted).
func (br *BatchRunner) Blocks() int { return br.blocks }

// MaxBatch returns the most tokens a Forward takes.
func (br *BatchRunner) MaxBatch() int { return MaxBatch }

// Backend returns "cuda".
func (br *BatchRunner) Backend() string { return "cuda" }

// Stats returns the runner's description and counters.
func (br *BatchRunner) Stats() BatchStats { return br.stats }

// Close frees the pool, scratch and graphs, and the shared weights and
// device when it is the last user. It is safe to call twice.
func (br *BatchRunner) Close() error {
	if br.closed || br.dev == nil {
		br.closed = true
		return nil
	}
	if err := br.dev.enter(); err != nil {
		return err
	}
	defer br.dev.exit()
	br.closeLocked()
	return nil
}

func (br *BatchRunner) closeLocked() {
	br.closed = true
	br.valid = false
	g := br.dev
	_ = g.sync("closing a batch runner")
	br.pending, br.ahead.on = false, false
	br.destroyGraphs()
	br.prompts.close(g)
	for _, p := range br.owned {
		g.free(p)
	}
	br.owned = nil
	g.free(br.dmeta)
	br.dmeta = 0
	g.freeHost(br.hmeta)
	g.freeHost(br.hres)
	br.hmeta, br.hres, br.metaCap = 0, 0, 0
	if br.samp != nil {
		br.samp.close()
	}
	_ = br.base.unref()
}

func (br *BatchRunner) destroyGraphs() {
	for i := range br.graphs {
		for v := range br.graphs[i] {
			for s := range br.graphs[i][v] {
				br.dev.destroyGraph(br.graphs[i][v][s][0], br.graphs[i][v][s][1])
				br.graphs[i][v][s] = [2]uintptr{}
			}
		}
	}
	for k, gs := range br.sgraphs {
		for s := range gs {
			br.dev.destroyGraph(gs[s][0], gs[s][1])
		}
		delete(br.sgraphs, k)
	}
}

// settle waits for a step still finishing on the GPU, or a queued
// lookahead step (then discarded).
func (br *BatchRunner) settle() error {
	br.ahead.on = false
	if !br.pending {
		return nil
	}
	br.pending = false
	return br.dev.sync("batch step")
}
