package cuda

import (
	"errors"
	"io"
	"runtime"
	"time"

	"inferno/arch"
)

// Options configure a Model.
type Options struct {
	// MaxLen is the most positions a sequence may hold: 0 (or more than the
	// model's context length) means the model's context length.
	MaxLen int
	// NoGraph makes the batched runners launch a decode step's kernels one
	// by one with a synchronization after each, instead of replaying a
	// captured graph (to measure what the graph buys), and queue no
	// lookahead.
	NoGraph bool
	// Device is the GPU ordinal.
	Device int
	// Progress, when not nil, receives a progress bar while the weights
	// upload (redrawn in place with \r: pass a terminal).
	Progress io.Writer
	// TracePrompts makes the batched runners time every kernel of their
	// passes that are no decode step (prompts, mixed batches: an event
	// after each kernel), for BatchRunner.PromptProfile.
	TracePrompts bool
	// Memory is the share of the device's memory the process may take,
	// weights, KV pools and scratch together, as vLLM's
	// gpu_memory_utilization: 0 means DefaultMemory; MemoryBytes, when
	// not 0, is the budget in bytes instead. A KV pool sized from the
	// free memory (NewBatchRunner with blocks 0) takes what the budget
	// leaves, and no runner's pool may pass it.
	Memory      float64
	MemoryBytes uint64

	// tune and batchTune, when set, change the launch choices Load and
	// NewBatchRunner take (defaultTuning, batchTuningFor): this package's
	// tests and benchmarks run variants of them.
	tune      func(*tuning)
	batchTune func(*batchTuning)
}

// Model is a model's weights on an NVIDIA GPU (the forward pass package
// arch describes, with the options of Features), with the device, its
// context, stream and kernels: what the batched runners made from it
// (NewBatchRunner) share. It runs nothing itself. The device and weights
// are freed when the Model and every runner made from it are closed,
// whichever closes last. A Model and its runners must be used by one
// goroutine at a time.
type Model struct {
	m     arch.Model
	cfg   arch.Config
	opts  Options
	dev   *device
	prog  *progress
	tune  tuning    // launch choices (tuning.go)
	shape attnShape // how the attention kernels cut the heads

	maxLen int
	refs   int  // the Model itself (until Close) and its open runners
	closed bool // Close was called

	embed, out gpuWeight // the same when the embedding is tied
	outNorm    uint64
	layers     []gpuLayer
	rope       uint64 // (cos, sin) per position and pair, float32
	ropeLocal  uint64 // the same for the local layers with a RoPE of their own (LocalRope), else 0
	ext        bool   // the attention takes the extended kernels (_ws: windows, sinks; options.go)
	rawGateUp  bool   // some layer's gate/up product is stored raw, its activation by glu_rows (options.go)
	weightRead int64  // bytes of weights a decode step reads
	qkvRows    int
	grids      map[string]int // most blocks at once of each persistent matvec
	mmhTiles   bool           // some product of a block format takes mmh's tiles (quantSetup)
	headBlocks int            // blocks of the one-token output head (its argmax partials)
	stats      Stats
}

type gpuLayer struct {
	qkv, o, gateUp, down            gpuWeight
	attnNorm, ffnNorm, qNorm, kNorm uint64      // qNorm, kNorm: 0 without QK-norm
	bias                            uint64      // Q, K and V biases, 0 without (uploadAttnVectors)
	moe                             *moeWeights // a mixture-of-experts layer's router and experts (gateUp, down unused)
	// The options of options.go, each 0 without: the attention's sinks,
	// the output bias, the post-norms' gains; the layer's rope table (the
	// Model's rope or ropeLocal) and sliding window (0: none).
	sinks, oBias, attnPost, ffnPost uint64
	rope                            uint64
	window                          int
}

// Stats describe a Model.
type Stats struct {
	Device       string // the GPU's name
	SMs          int
	ComputeCap   int    // major*10+minor
	PTX          string // where the kernels came from
	GPUBytes     uint64 // device memory held: the weights and every open runner's pool and scratch
	WeightBytes  int64  // weight bytes one decode step reads
	PDL          bool   // kernels may use programmatic dependent launch
	Upload       time.Duration
	HostReleased int64 // bytes of the mapped model file dropped from the process after the upload
}

// Features are the options of package arch the GPU kernels execute: those
// of arch.Dense, attention without QK-norm, Q/K/V biases, normal (adjacent
// pairs) and partial RoPE, linear, YaRN, Llama 3's and LongRoPE's RoPE
// scaling (rope.go's tables, from arch.Rope.Freq and Mscale), GeGLU and OpenAI's clamped SwiGLU, a scaled embedding, an
// attention scale, sliding windows and sinks, an attention output bias and
// post-norms (options.go), and mixtures of experts with softmax gating
// over all experts or the top k, with or without biases (moe.go).
const Features = arch.Dense | arch.FeatPlainQK | arch.FeatBias | arch.FeatRopeNormal | arch.FeatPartialRope |
	arch.FeatRopeLinear | arch.FeatRopeYaRN | arch.FeatRopeLlama3 | arch.FeatRopeLongRoPE | arch.FeatGeGLU | arch.FeatSwiGLUOAI |
	arch.FeatEmbedScale | arch.FeatAttnScale | arch.FeatSWA | arch.FeatSinks | arch.FeatOutBias | arch.FeatPostNorm |
	arch.FeatMoESoftmax | arch.FeatMoESoftmaxTopK | arch.FeatMoEBias

// Load uploads m's weights to the GPU and prepares the kernels. It fails,
// in one line and before it allocates, for a model that needs an option
// the kernels do not execute (Features) or whose weights, the scratch of
// a batched runner and a KV pool of one sequence of MaxLen positions do
// not fit in the device's free memory.
func Load(m arch.Model, opts Options) (*Model, error) {
	c := *m.Hyper()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := c.Check("cuda", Features); err != nil {
		return nil, err
	}
	if err := m.Tensors().Check(&c); err != nil {
		return nil, err
	}
	if err := checkShape(&c); err != nil {
		return nil, err
	}
	if err := checkMoE(&c); err != nil {
		return nil, err
	}
	maxLen := opts.MaxLen
	if maxLen <= 0 || maxLen > c.ContextLength {
		maxLen = c.ContextLength
	}
	tune := defaultTuning()
	tune.q8h = q8hFor(&c)
	if opts.tune != nil {
		opts.tune(&tune)
	}
	if err := tune.check(); err != nil {
		return nil, err
	}
	r := &Model{m: m, cfg: c, opts: opts, tune: tune, maxLen: maxLen, ext: needsExt(&c), refs: 1}
	r.shape = shapeOf(&c, r.ext)
	dev, err := newDeviceLocked(opts.Device)
	if err != nil {
		return nil, err
	}
	r.dev = dev
	if err := dev.enter(); err != nil {
		dev.close()
		return nil, err
	}
	defer dev.exit()
	ok := false
	defer func() {
		if !ok {
			r.closed, r.refs = true, 0
			dev.close()
		}
	}()
	r.stats = Stats{Device: dev.Name, SMs: dev.SMs, ComputeCap: dev.CC, PTX: dev.ptxWhat, PDL: dev.pdl}
	if err := r.checkKernels(); err != nil {
		return nil, err
	}
	if err := r.checkOptionKernels(); err != nil {
		return nil, err
	}
	if err := r.checkFit(); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := r.uploadModel(); err != nil {
		return nil, err
	}
	r.stats.Upload = time.Since(start)
	if err := r.kernelSetup(); err != nil {
		return nil, err
	}
	ok = true
	return r, nil
}

// newDeviceLocked opens the device on a locked thread.
func newDeviceLocked(ordinal int) (*device, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return newDevice(ordinal)
}

// residentGrid records in r.grids the blocks of kernel name (256 threads,
// smem bytes of dynamic shared memory) resident on the GPU at once, at
// least one an SM: the grid of a persistent kernel.
func (r *Model) residentGrid(name string, smem int) error {
	n, err := r.dev.occupancy(name, 256, smem)
	if err != nil {
		return err
	}
	r.grids[name] = max(1, n) * r.dev.SMs
	return nil
}

// kernelSetup prepares the kernels the weights' products use: shared
// memory limits, the persistent matvecs' grids (most blocks resident at
// once) and the output head's partials. The shared memory carveout is
// the driver's: 100 and 50 percent for the matvecs measured 30 tok/s
// slower on tg128 (H200, synth 0.6B Q8_0, 2026-11-29).
func (r *Model) kernelSetup() error {
	c := &r.cfg
	g := r.dev
	r.grids = map[string]int{}
	maxK := max(c.Hidden, c.QDim(), c.FFN)
	for _, k := range r.mvKernels() {
		f, err := g.fn(k.name)
		if err != nil {
			return err
		}
		if err := g.allowSmem(f, k.name, k.cfg.smem(maxK)); err != nil {
			return err
		}
		if err := r.residentGrid(k.name, k.cfg.smem(maxK)); err != nil {
			return err
		}
	}
	if err := r.quantSetup(); err != nil { // kernels of the other block types (quant.go)
		return err
	}
	if err := r.moeSetup(); err != nil {
		return err
	}
	r.headBlocks = r.headGrid()
	return g.sync("kernel setup")
}

// MaxLen returns the most positions a sequence may hold.
func (r *Model) MaxLen() int { return r.maxLen }

// Vocab returns the number of logits a position has.
func (r *Model) Vocab() int { return r.cfg.Vocab }

// Stats returns the model's description.
func (r *Model) Stats() Stats {
	s := r.stats
	if r.dev != nil {
		s.GPUBytes = r.dev.inUse
	}
	s.WeightBytes = r.weightRead
	return s
}

// PoolMemory returns the device memory the KV pools of a new runner may
// take now, in bytes: what the budget (Options.Memory) leaves beside the
// process's allocations, at most what the device has free, less
// poolReserve for the runner's graphs and inputs.
func (r *Model) PoolMemory() (uint64, error) {
	if r.closed {
		return 0, errClosed
	}
	g := r.dev
	if err := g.enter(); err != nil {
		return 0, err
	}
	defer g.exit()
	return r.poolMemory()
}

// DefaultMemory is the share of the device's memory a process takes
// unless Options say otherwise: 90%, as vLLM leaves 10% to others.
const DefaultMemory = 0.9

// poolReserve is the memory kept from a KV pool sized from the budget:
// the runner's graphs, its inputs, the driver's own allocations.
const poolReserve = 3 << 29 // 1.5 GiB

// poolMemory is PoolMemory with the device entered.
func (r *Model) poolMemory() (uint64, error) {
	free, total, err := r.dev.memoryInfo()
	if err != nil {
		return 0, err
	}
	return poolBudget(free, total, r.dev.inUse, r.opts.Memory, r.opts.MemoryBytes), nil
}

// poolBudget returns the bytes a KV pool may take on a device of total
// bytes, free of them free, this process holding inUse: the budget
// (fraction of total, or bytes when not 0; fraction 0 is DefaultMemory)
// less inUse, at most free, less poolReserve; 0 when nothing is left.
func poolBudget(free, total, inUse uint64, fraction float64, bytes uint64) uint64 {
	avail := budgetLeft(free, total, inUse, fraction, bytes)
	if avail <= poolReserve {
		return 0
	}
	return avail - poolReserve
}

// budgetLeft returns what the budget (fraction of total, or bytes when not
// 0; fraction 0 is DefaultMemory) leaves beside inUse, at most free.
func budgetLeft(free, total, inUse uint64, fraction float64, bytes uint64) uint64 {
	if fraction <= 0 {
		fraction = DefaultMemory
	}
	budget := uint64(fraction * float64(total))
	if bytes > 0 {
		budget = bytes
	}
	return min(free, max(budget, inUse)-inUse)
}

// StepBytes returns the bytes a decode step of one sequence at context
// length ctx must read at least: the weights and the KV cache (f16 keys
// and values).
func (r *Model) StepBytes(ctx int) int64 {
	c := &r.cfg
	return r.weightRead + int64(2*2*c.Layers*c.KVHeads*c.HeadDim)*int64(ctx)
}

// Close releases the Model: the device and the weights are freed now, or
// when the last runner made from it closes. It is safe to call twice.
func (r *Model) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	return r.unref()
}

// unref drops one reference and frees the device and weights with the
// last.
func (r *Model) unref() error {
	if r.refs--; r.refs > 0 || r.dev == nil {
		return nil
	}
	if err := r.dev.enter(); err != nil {
		return err
	}
	defer r.dev.exit()
	r.dev.close()
	return nil
}

// errClosed is the error of a Model used after Close.
var errClosed = errors.New("cuda: the model is closed")
