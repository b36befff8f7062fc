package cuda

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"inferno/arch"
)

// Options configure a Runner.
type Options struct {
	// MaxLen is the most positions a sequence may hold: 0 (or more than the
	// model's context length) means the model's context length. The KV
	// cache starts small and grows up to it as the sequence does.
	MaxLen int
	// NoGraph launches the decode step's kernels one by one with a
	// synchronization after each, instead of replaying the captured graph
	// (to measure what the graph buys).
	NoGraph bool
	// Device is the GPU ordinal.
	Device int
	// Progress, when not nil, receives a progress bar while the weights
	// upload (redrawn in place with \r: pass a terminal).
	Progress io.Writer
	// PrefillChunk is the most prompt tokens one prefill pass takes (0:
	// 512); longer prompts run in chunks.
	PrefillChunk int
}

// Runner runs a model (the forward pass package arch describes, with the
// options of Features) on an NVIDIA GPU for one sequence. It implements
// engine.Runner. A Runner is not safe for concurrent use.
type Runner struct {
	m     arch.Model
	cfg   arch.Config
	opts  Options
	dev   *device
	prog  *progress
	tune  tuning
	shape attnShape // how the attention kernels cut the heads
	q8h   bool      // Q8_0 prompt products on f16 tensor cores (mmh_q8_0), not mm_q8 (q8hFor)

	maxLen int
	len    int  // positions in the sequence
	valid  bool // the last Forward succeeded: logits and argmax are ready
	closed bool

	// weights
	embed, out gpuWeight // the same when the embedding is tied
	outNorm    uint64
	layers     []gpuLayer
	rope       uint64 // (cos, sin) per position and pair, float32
	weightRead int64  // bytes of weights a decode step reads

	// KV cache
	kvCap  int
	kc, vc []uint64

	// decode scratch
	params, x, qkv, att, act, pval, pidx, result uint64
	logits                                       [2]uint64 // per slot
	pm, pl, pacc, counter                        uint64
	maxSplit, headBlocks                         int
	qkvRows                                      int
	grids                                        map[string]int // most blocks at once of each matvec

	// prefill scratch, for chunk tokens (npad = chunk rounded up to 64)
	chunk, npad                                   int
	ptok, px, pqkv, pq, patt, pact, phi, plo, psx uint64

	// Decode steps alternate between two slots, each with its graph, its
	// parameters and result in host memory and its logits, so that a step
	// can be queued while the previous one's results are read (lookahead).
	graph, exec [2]uintptr
	slot        int   // slot of the last step whose results are current
	step        int32 // decode steps launched, written beside the argmax by the GPU
	pending     bool  // a step may still be running on the GPU
	ahead       struct {
		on   bool // a step is queued at position pos on the device's argmax
		slot int
		pos  int
		seq  int32
	}
	noAhead    bool     // the caller samples: queue no lookahead steps
	hostBase   uintptr  // this runner's step parameters and results in the staging area
	shared     *shared  // the device and weights, shared with the runners of other sequences
	seqSlot    int      // this runner's slot in shared.slots
	owned      []uint64 // scratch allocations of this runner
	topk       topkState
	hostLogits []float32
	stats      Stats
}

type gpuLayer struct {
	qkv, o, gateUp, down            gpuWeight
	attnNorm, ffnNorm, qNorm, kNorm uint64
}

// Stats describe a Runner and what it has run.
type Stats struct {
	Device          string // the GPU's name
	SMs             int
	ComputeCap      int    // major*10+minor
	PTX             string // where the kernels came from
	GPUBytes        uint64 // device memory the runner holds
	WeightBytes     int64  // weight bytes one decode step reads
	KVCapacity      int    // positions the KV cache holds now
	KernelsPerStep  int    // kernels in one decode step
	Graph           bool   // decode steps replay a CUDA graph
	PDL             bool   // decode kernels use programmatic dependent launch
	GraphCaptures   int
	DecodeSteps     int64
	LookaheadHits   int64 // decode steps whose queued lookahead step was taken
	LookaheadMisses int64
	PrefillTokens   int64
	Upload          time.Duration // weight upload at load
	HostReleased    int64         // bytes of the mapped model file dropped from the process after the upload
	Capture         time.Duration // the last graph capture and instantiation
}

// Features are the options of package arch the GPU kernels execute: those
// of arch.Dense.
const Features = arch.Dense

// NewRunner uploads m's weights to the GPU, allocates the KV cache and the
// scratch activations, and captures the decode step as a CUDA graph. It
// fails, in one line, for a model that needs an option the kernels do not
// execute (Features).
func NewRunner(m arch.Model, opts Options) (*Runner, error) {
	tune, err := parseTuning(os.Getenv("INFERNO_CUDA_TUNE"))
	if err != nil {
		return nil, err
	}
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
	maxLen := opts.MaxLen
	if maxLen <= 0 || maxLen > c.ContextLength {
		maxLen = c.ContextLength
	}
	r := &Runner{m: m, cfg: c, opts: opts, tune: tune, maxLen: maxLen, hostBase: hostParamsOff, shape: shapeOf(&c), q8h: q8hFor(&c)}
	if r.chunk = opts.PrefillChunk; r.chunk <= 0 {
		r.chunk = 512
	}
	r.npad = roundUp(r.chunk, 64)

	dev, err := newDeviceLocked(opts.Device)
	if err != nil {
		return nil, err
	}
	r.dev = dev
	r.shared = &shared{refs: 1}
	r.shared.slots[0] = true
	if err := dev.enter(); err != nil {
		return nil, err
	}
	defer dev.exit()
	ok := false
	defer func() {
		if !ok {
			r.closeLocked()
		}
	}()
	r.stats = Stats{Device: dev.Name, SMs: dev.SMs, ComputeCap: dev.CC, PTX: dev.ptxWhat, Graph: !opts.NoGraph, PDL: dev.pdl && tune.pdl}

	if err := r.checkFit(); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := r.uploadModel(); err != nil {
		return nil, err
	}
	r.stats.Upload = time.Since(start)
	if err := r.allocScratch(); err != nil {
		return nil, err
	}
	if err := r.reserve(min(maxLen, 1024)); err != nil {
		return nil, err
	}
	if !opts.NoGraph {
		if err := r.capture(); err != nil {
			return nil, err
		}
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

// Forward appends tokens to the sequence and runs them: one token replays
// the decode graph; more run the batched prefill. The last position's
// logits and argmax are then ready.
func (r *Runner) Forward(tokens []int32) error {
	if r.closed {
		return errors.New("cuda: runner is closed")
	}
	if len(tokens) == 0 {
		return errors.New("cuda: forward of no tokens")
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= r.cfg.Vocab {
			return fmt.Errorf("cuda: token id %d is outside the vocabulary [0, %d)", t, r.cfg.Vocab)
		}
	}
	if r.len+len(tokens) > r.maxLen {
		return fmt.Errorf("cuda: %d positions would pass the context of %d", r.len+len(tokens), r.maxLen)
	}
	if err := r.dev.enter(); err != nil {
		return err
	}
	defer r.dev.exit()
	r.valid = false
	if err := r.reserve(r.len + len(tokens)); err != nil {
		return err
	}
	var err error
	if len(tokens) == 1 {
		err = r.decode(tokens[0])
	} else {
		err = r.prefill(tokens)
	}
	if err != nil {
		return err
	}
	r.len += len(tokens)
	r.valid = true
	return nil
}

// Logits returns the last position's logits, copied from the GPU; the
// slice is reused by the next call. Sampling other than greedy reads them
// here (greedy decoding reads back only the argmax).
func (r *Runner) Logits() ([]float32, error) {
	if r.closed {
		return nil, errors.New("cuda: runner is closed")
	}
	if !r.valid {
		return nil, errors.New("cuda: no logits: run Forward first")
	}
	if err := r.dev.enter(); err != nil {
		return nil, err
	}
	defer r.dev.exit()
	// The current slot's logits are complete (its argmax, computed after
	// them, is in); a queued lookahead step writes the other slot's. The
	// copy runs on the legacy stream, concurrently with it.
	if r.hostLogits == nil {
		r.hostLogits = make([]float32, r.cfg.Vocab)
	}
	if err := r.dev.download(f32Bytes(r.hostLogits), r.logits[r.slot]); err != nil {
		return nil, err
	}
	return r.hostLogits, nil
}

// Greedy returns the last position's argmax, computed on the GPU (the
// lowest id among equal logits).
func (r *Runner) Greedy() (int32, error) {
	if r.closed {
		return 0, errors.New("cuda: runner is closed")
	}
	if !r.valid {
		return 0, errors.New("cuda: no argmax: run Forward first")
	}
	return *r.dev.hostI32(r.resultOff(r.slot)), nil
}

// Len returns the number of positions in the sequence.
func (r *Runner) Len() int { return r.len }

// MaxLen returns the most positions the sequence may hold.
func (r *Runner) MaxLen() int { return r.maxLen }

// Truncate keeps the first n positions of the sequence and drops the rest;
// their cache entries are overwritten as the sequence grows again.
func (r *Runner) Truncate(n int) error {
	if r.closed {
		return errors.New("cuda: runner is closed")
	}
	if n < 0 || n > r.len {
		return fmt.Errorf("cuda: cannot truncate a sequence of %d positions to %d", r.len, n)
	}
	if err := r.dev.enter(); err != nil {
		return err
	}
	defer r.dev.exit()
	if err := r.settle(); err != nil {
		return err
	}
	r.len = n
	r.valid = false
	return nil
}

// Reset empties the sequence (the KV cache keeps its memory).
func (r *Runner) Reset() {
	r.len = 0
	r.valid = false
	if r.closed || r.dev == nil {
		return
	}
	// Wait for a queued lookahead step; an error it had shows again at the
	// next call.
	if r.dev.enter() == nil {
		_ = r.settle()
		r.dev.exit()
	}
}

// Vocab returns the number of logits a position has.
func (r *Runner) Vocab() int { return r.cfg.Vocab }

// SetLookahead turns the lookahead on (the default) or off. A caller that
// picks tokens other than by Greedy (a sampler) turns it off: a queued step
// on the device's argmax would then mostly be discarded, and waiting for
// it would delay the next step. It implements engine.Lookaheader.
func (r *Runner) SetLookahead(on bool) {
	r.noAhead = !on
	if !on && r.ahead.on && !r.closed && r.dev.enter() == nil {
		_ = r.settle() // an error shows again at the next call
		r.dev.exit()
	}
}

// Backend returns "cuda".
func (r *Runner) Backend() string { return "cuda" }

// Stats returns the runner's description and counters.
func (r *Runner) Stats() Stats {
	s := r.stats
	if r.dev != nil {
		s.GPUBytes = r.dev.inUse
	}
	s.WeightBytes = r.weightRead
	return s
}

// StepBytes returns the bytes a decode step at context length ctx must
// read at least: the weights and the KV cache (f16 keys and values).
func (r *Runner) StepBytes(ctx int) int64 {
	c := &r.cfg
	return r.weightRead + int64(2*2*c.Layers*c.KVHeads*c.HeadDim)*int64(ctx)
}

// Close frees everything the runner holds on the GPU and releases the
// context. It is safe to call twice.
func (r *Runner) Close() error {
	if r.closed || r.dev == nil {
		r.closed = true
		return nil
	}
	if err := r.dev.enter(); err != nil {
		return err
	}
	defer r.dev.exit()
	r.closeLocked()
	return nil
}

func (r *Runner) closeLocked() {
	r.closed = true
	r.valid = false
	if r.dev == nil {
		return
	}
	r.destroyGraphs()
	r.release()
}
