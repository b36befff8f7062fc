package cuda

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"inferno/backend"
	"inferno/model/qwen3"
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

// Runner runs a Qwen3 model on an NVIDIA GPU for one sequence. It
// implements engine.Runner. A Runner is not safe for concurrent use.
type Runner struct {
	m    *qwen3.Model
	cfg  qwen3.Config
	opts Options
	dev  *device
	prog *progress
	tune tuning

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
	Capture         time.Duration // the last graph capture and instantiation
}

// attnThreads is the block size of attn_decode (ATTN_THREADS in kernels.cu).
const attnThreads = 256

// mvCfg chooses a matvec kernel: rows per warp, warps splitting a row
// (float path only), and float activations (mvf_q8) or int16 activation
// planes with dp4a (mv_q8).
type mvCfg struct {
	rpw, ks int
	fl      bool
}

// name returns the kernel's name for epilogue kind.
func (m mvCfg) name(kind string) string {
	if m.fl {
		return fmt.Sprintf("mvf_q8_%s_r%d_k%d", kind, m.rpw, m.ks)
	}
	return fmt.Sprintf("mv_q8_%s_r%d", kind, m.rpw)
}

// smem is the dynamic shared memory for width K.
func (m mvCfg) smem(K int) int {
	if m.fl {
		return 4 * K
	}
	return 2*K + K/8
}

// tiles returns the number of row tiles over rows (the largest useful grid).
func (m mvCfg) tiles(kind string, rows int) int {
	units := (rows + m.rpw - 1) / m.rpw
	if kind == "swiglu" {
		units = rows / 2
	}
	per := 8
	if m.fl {
		per = 8 / m.ks
	}
	return (units + per - 1) / per
}

// tuning holds launch choices: the matvec kernel of each matrix, the
// fewest attention splits and the positions per split they aim at,
// whether decode kernels use programmatic dependent launch, and the shared
// memory carveout. INFERNO_CUDA_TUNE overrides them, e.g.
// "qkv=1,qkvk=1,o=1,ok=4,down=1,downk=4,gu=2,guk=1,head=2,headf=0,nsplit=16,chunk=64,pdl=0"
// (X=rows per warp, Xk=warps per row, Xf=float activations).
//
// Decode attention: afd=1 (default) is the flash-decoding kernel attn_fd:
// asplit splits (0: as many as make one block per SM, SMs/KV heads), tiles
// of ar scoring passes, ast cp.async stages, at threads a block; afd=0 is
// the older attn_decode, whose splits follow the KV capacity (nsplit, chunk).
type tuning struct {
	qkv, o, gu, down, head mvCfg
	nsplit, chunk          int
	minchunk               int  // fewest positions per attention split (one split, no combine, below it)
	afd                    bool // flash-decoding attention kernel (attn_fd)
	asplit, ar, ast, at    int  // attn_fd: splits (0: SMs/KV heads), passes per tile, stages, threads
	ahead                  bool // queue the next decode step on the device's own argmax (lookahead)
	pdl                    bool
	carveout               int // shared memory carveout percent for every kernel; -1: the driver's choice
}

func defaultTuning() tuning {
	return tuning{
		qkv: mvCfg{2, 1, true}, o: mvCfg{1, 1, true}, gu: mvCfg{2, 1, true}, down: mvCfg{1, 1, true},
		head: mvCfg{2, 1, false}, nsplit: 16, chunk: 64, minchunk: 128, ahead: true, carveout: -1,
		afd: true, ar: 1, ast: 3, at: 256,
	}
}

func parseTuning(s string) (tuning, error) {
	t := defaultTuning()
	if s == "" {
		return t, nil
	}
	mats := map[string]*mvCfg{"qkv": &t.qkv, "o": &t.o, "gu": &t.gu, "down": &t.down, "head": &t.head}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: bad entry %q", kv)
		}
		switch {
		case k == "nsplit":
			t.nsplit = n
		case k == "chunk":
			t.chunk = n
		case k == "pdl":
			t.pdl = n != 0
		case k == "minchunk":
			t.minchunk = n
		case k == "ahead":
			t.ahead = n != 0
		case k == "carveout":
			t.carveout = n
		case k == "afd":
			t.afd = n != 0
		case k == "asplit":
			t.asplit = n
		case k == "ar":
			t.ar = n
		case k == "ast":
			t.ast = n
		case k == "at":
			t.at = n
		case mats[k] != nil:
			mats[k].rpw = n
		case strings.HasSuffix(k, "k") && mats[strings.TrimSuffix(k, "k")] != nil:
			mats[strings.TrimSuffix(k, "k")].ks = n
		case strings.HasSuffix(k, "f") && mats[strings.TrimSuffix(k, "f")] != nil:
			mats[strings.TrimSuffix(k, "f")].fl = n != 0
		default:
			return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: unknown key %q", k)
		}
	}
	for name, m := range mats {
		if m.rpw != 1 && m.rpw != 2 || m.ks != 1 && m.ks != 2 && m.ks != 4 {
			return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: %s: rows per warp must be 1 or 2, warps per row 1, 2 or 4", name)
		}
	}
	if t.gu.rpw != 2 {
		return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: gu must be 2 (a gate row and its up row)")
	}
	if t.nsplit < 1 || t.nsplit > 1024 || t.chunk < 1 {
		return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: nsplit or chunk out of range")
	}
	if t.asplit < 0 || t.asplit > 1024 || t.ar < 1 || t.ast < 2 || t.at != 256 && t.at != 512 || t.minchunk < 1 {
		return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: asplit, ar, ast, at or minchunk out of range")
	}
	return t, nil
}

// NewRunner uploads m's weights to the GPU, allocates the KV cache and the
// scratch activations, and captures the decode step as a CUDA graph.
func NewRunner(m *qwen3.Model, opts Options) (*Runner, error) {
	tune, err := parseTuning(os.Getenv("INFERNO_CUDA_TUNE"))
	if err != nil {
		return nil, err
	}
	c := m.Config
	if err := c.Validate(); err != nil {
		return nil, err
	}
	group := c.Heads / c.KVHeads
	switch {
	case c.HeadDim != 32 && c.HeadDim != 64 && c.HeadDim != 128:
		return nil, fmt.Errorf("cuda: head dimension %d is not supported (32, 64 or 128)", c.HeadDim)
	case group != 1 && group != 2 && group != 4:
		return nil, fmt.Errorf("cuda: %d query heads per KV head is not supported (1, 2 or 4)", group)
	case c.Hidden%32 != 0 || c.FFN%32 != 0:
		return nil, fmt.Errorf("cuda: widths must be multiples of 32 (hidden %d, ffn %d)", c.Hidden, c.FFN)
	}
	maxLen := opts.MaxLen
	if maxLen <= 0 || maxLen > c.ContextLength {
		maxLen = c.ContextLength
	}
	r := &Runner{m: m, cfg: c, opts: opts, tune: tune, maxLen: maxLen, hostBase: hostParamsOff}
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

func (r *Runner) uploadModel() error {
	m, c := r.m, &r.cfg
	var total int64 = int64(len(m.Embed.Data)) + 4*int64(len(m.OutputNorm))
	if m.Output != m.Embed {
		total += int64(len(m.Output.Data))
	}
	for _, l := range m.Layers {
		a, f := &l.Attention, &l.MLP
		total += int64(len(a.Q.Data)+len(a.K.Data)+len(a.V.Data)+len(a.O.Data)+len(f.Gate.Data)+len(f.Up.Data)+len(f.Down.Data)) +
			4*int64(len(l.AttnNorm)+len(l.FFNNorm)+len(a.QNorm)+len(a.KNorm))
	}
	r.prog = &progress{w: r.opts.Progress, total: total, start: time.Now()}
	r.weightRead = m.WeightBytes()

	var err error
	if r.embed, err = r.uploadWeight(m.Embed); err != nil {
		return err
	}
	if m.Output == m.Embed {
		r.out = r.embed
	} else if r.out, err = r.uploadWeight(m.Output); err != nil {
		return err
	}
	if r.out.rows != c.Vocab || r.out.cols != c.Hidden || r.embed.cols != c.Hidden {
		return fmt.Errorf("cuda: output head is %dx%d, want %dx%d", r.out.rows, r.out.cols, c.Vocab, c.Hidden)
	}
	if r.outNorm, err = r.uploadF32("output_norm", m.OutputNorm); err != nil {
		return err
	}
	r.layers = make([]gpuLayer, len(m.Layers))
	for i := range m.Layers {
		l, g := &m.Layers[i], &r.layers[i]
		a, f := &l.Attention, &l.MLP
		p := fmt.Sprintf("blk.%d.", i)
		if g.qkv, err = r.uploadConcat(p+"attn_qkv", a.Q, a.K, a.V); err != nil {
			return err
		}
		if g.o, err = r.uploadWeight(a.O); err != nil {
			return err
		}
		if g.gateUp, err = r.uploadGateUp(p+"ffn_gate_up", f.Gate, f.Up); err != nil {
			return err
		}
		if g.down, err = r.uploadWeight(f.Down); err != nil {
			return err
		}
		for _, v := range []struct {
			dst  *uint64
			src  []float32
			name string
		}{{&g.attnNorm, l.AttnNorm, "attn_norm"}, {&g.ffnNorm, l.FFNNorm, "ffn_norm"}, {&g.qNorm, a.QNorm, "attn_q_norm"}, {&g.kNorm, a.KNorm, "attn_k_norm"}} {
			if *v.dst, err = r.uploadF32(p+v.name, v.src); err != nil {
				return err
			}
		}
	}
	r.qkvRows = c.QDim() + 2*c.KVDim()
	tab := ropeTable(c.RopeTheta, c.HeadDim, r.maxLen)
	if r.rope, err = r.dev.alloc(uint64(4*len(tab)), "rope table"); err != nil {
		return err
	}
	return r.dev.upload(r.rope, f32Bytes(tab))
}

// ropeTable returns (cos, sin) of p * theta^(-2i/hd) for every position p
// < maxLen and pair i < hd/2, computed as the CPU reference computes them
// (float64, then rounded to float32).
func ropeTable(theta float64, hd, maxLen int) []float32 {
	half := hd / 2
	freq := make([]float64, half)
	for i := range freq {
		freq[i] = math.Pow(theta, -float64(2*i)/float64(hd))
	}
	tab := make([]float32, 2*half*maxLen)
	for p := 0; p < maxLen; p++ {
		for i, f := range freq {
			s, co := math.Sincos(float64(p) * f)
			tab[2*(p*half+i)] = float32(co)
			tab[2*(p*half+i)+1] = float32(s)
		}
	}
	return tab
}

func (r *Runner) allocScratch() error {
	c := &r.cfg
	g := r.dev
	var err error
	alloc := func(dst *uint64, n int, what string) {
		if err == nil {
			if *dst, err = g.alloc(uint64(n), what); err == nil {
				r.owned = append(r.owned, *dst)
			}
		}
	}
	// At most 1024 splits (the combine keeps a weight per split in shared
	// memory); past 64K positions the chunks grow instead.
	r.maxSplit = min(1024, max(r.tune.nsplit, (r.maxLen+r.tune.chunk-1)/r.tune.chunk))
	if r.tune.afd {
		r.maxSplit = r.tune.asplit
		if r.maxSplit == 0 {
			r.maxSplit = max(1, g.SMs/c.KVHeads)
		}
	}
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
		n, err := g.occupancy(k.name, 256, k.cfg.smem(maxK))
		if err != nil {
			return err
		}
		r.grids[k.name] = n * g.SMs
	}
	r.headBlocks = r.mvGrid(r.tune.head, "argmax", c.Vocab)
	alloc(&r.params, 64, "step parameters")
	alloc(&r.x, 4*c.Hidden, "residual")
	alloc(&r.qkv, 4*r.qkvRows, "qkv")
	alloc(&r.att, 4*c.QDim(), "attention output")
	alloc(&r.act, 4*c.FFN, "ffn activation")
	alloc(&r.logits[0], 4*c.Vocab, "logits")
	alloc(&r.logits[1], 4*c.Vocab, "logits")
	alloc(&r.pval, 4*r.headBlocks, "argmax partials")
	alloc(&r.pidx, 4*r.headBlocks, "argmax partials")
	alloc(&r.result, 64, "argmax")
	alloc(&r.pm, 4*c.Heads*r.maxSplit, "attention partials")
	alloc(&r.pl, 4*c.Heads*r.maxSplit, "attention partials")
	alloc(&r.pacc, 4*c.Heads*r.maxSplit*c.HeadDim, "attention partials")
	alloc(&r.counter, 4*c.KVHeads, "attention counters")
	np := r.npad
	alloc(&r.ptok, 4*np, "prefill tokens")
	alloc(&r.px, 4*np*c.Hidden, "prefill residual")
	alloc(&r.pqkv, 4*np*r.qkvRows, "prefill qkv")
	alloc(&r.pq, 4*np*c.QDim(), "prefill queries")
	alloc(&r.patt, 4*np*c.QDim(), "prefill attention output")
	alloc(&r.pact, 4*np*c.FFN, "prefill ffn activation")
	alloc(&r.phi, np*maxK, "prefill activation planes")
	alloc(&r.plo, np*maxK, "prefill activation planes")
	alloc(&r.psx, 4*np*maxK/32, "prefill activation scales")
	if err != nil {
		return err
	}
	for _, z := range []struct {
		p uint64
		n int
	}{{r.counter, 4 * c.KVHeads}, {r.phi, np * maxK}, {r.plo, np * maxK}, {r.psx, 4 * np * maxK / 32}, {r.ptok, 4 * np}} {
		if err := g.memsetAsync(z.p, uint64(z.n)); err != nil {
			return err
		}
	}
	// Kernels whose dynamic shared memory may pass the default limit.
	ad, smem := r.attnKernel(r.kvCap)
	if !r.tune.afd { // the most any capacity up to maxLen needs
		smem = 4 * (c.Heads / c.KVHeads) * max((r.maxLen+r.tune.nsplit-1)/r.tune.nsplit, r.tune.minchunk)
	}
	f, err := g.fn(ad)
	if err != nil {
		return err
	}
	if err := g.allowSmem(f, ad, smem); err != nil {
		return err
	}
	if r.tune.carveout >= 0 {
		names := []string{ad, "embed_step", "argmax_final"}
		for _, k := range r.mvKernels() {
			names = append(names, k.name)
		}
		for _, name := range names {
			f, err := g.fn(name)
			if err != nil {
				return err
			}
			if err := g.d.check("cuFuncSetAttribute carveout", g.d.call(g.d.cuFuncSetAttribute, f, 9, uintptr(r.tune.carveout))); err != nil {
				return err
			}
		}
	}
	return g.sync("scratch setup")
}

type mvKernel struct {
	name string
	cfg  mvCfg
}

func (r *Runner) mvKernels() []mvKernel {
	t := r.tune
	return []mvKernel{
		{t.qkv.name("store"), t.qkv}, {t.o.name("add"), t.o}, {t.gu.name("swiglu"), t.gu},
		{t.down.name("add"), t.down}, {t.head.name("argmax"), t.head},
	}
}

// mvGrid returns the blocks to launch of a matvec over rows: one per tile,
// at most as many as fit on the GPU at once (the kernel loops over tiles).
func (r *Runner) mvGrid(m mvCfg, kind string, rows int) int {
	tiles := m.tiles(kind, rows)
	if n := r.grids[m.name(kind)]; n > 0 {
		return min(tiles, n)
	}
	return tiles
}

// attnSplits returns the attention splits and the scores' capacity per
// split for the KV cache's current capacity. attn_fd: a fixed number of
// splits (maxSplit), no score capacity. attn_decode: chunks of about
// tune.chunk positions when the cache is full, at least tune.nsplit splits.
func (r *Runner) attnSplits() (nsplit, chcap int) {
	if r.tune.afd {
		return r.maxSplit, 0
	}
	nsplit = min(r.maxSplit, max(r.tune.nsplit, (r.kvCap+r.tune.chunk-1)/r.tune.chunk))
	return nsplit, max((r.kvCap+nsplit-1)/nsplit, r.tune.minchunk)
}

// attnKernel returns the decode attention kernel's name and its dynamic
// shared memory for a KV capacity of kvCap positions.
func (r *Runner) attnKernel(kvCap int) (string, int) {
	c := &r.cfg
	group := c.Heads / c.KVHeads
	if r.tune.afd {
		return attnFDName(c.HeadDim, group, r.tune.ar, r.tune.ast, r.tune.at), attnFDSmem(r.tune.ar, r.tune.ast, r.tune.at)
	}
	nsplit := min(r.maxSplit, max(r.tune.nsplit, (kvCap+r.tune.chunk-1)/r.tune.chunk))
	return fmt.Sprintf("attn_decode_h%d_g%d", c.HeadDim, group), 4 * group * max((kvCap+nsplit-1)/nsplit, r.tune.minchunk)
}

// attnFDName is the name of attn_fd for a head dimension, query heads per
// KV head, scoring passes per tile, pipeline stages and threads a block.
func attnFDName(hd, group, ar, ast, at int) string {
	return fmt.Sprintf("attn_fd_h%d_g%d_r%d_s%d_t%d", hd, group, ar, ast, at)
}

// attnFDSmem is attn_fd's dynamic shared memory: at/32 warps x ast stages
// of a tile (2 x ar x 512/hd positions x hd f16 values = 2 KB x ar).
func attnFDSmem(ar, ast, at int) int { return at / 32 * ast * 2048 * ar }

// attn enqueues the decode attention of layer i.
func (r *Runner) attn(l *launcher, i int) {
	c := &r.cfg
	w := &r.layers[i]
	ad, smem := r.attnKernel(r.kvCap)
	nsplit, chcap := r.attnSplits()
	scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
	threads := attnThreads
	if r.tune.afd {
		threads = r.tune.at
	}
	l.launch(ad, [3]uint32{uint32(c.KVHeads), uint32(nsplit)}, uint32(threads), uint32(smem),
		r.qkv, i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, f32(c.Eps), r.rope, r.params,
		r.kc[i], r.vc[i], i32(r.kvCap), f32(scale), i32(nsplit), i32(chcap), i32(r.tune.minchunk), r.pm, r.pl, r.pacc, r.counter, r.att)
}

// reserve grows the KV cache to hold need positions (doubling, at most
// maxLen), moving what it holds and re-capturing the graph.
func (r *Runner) reserve(need int) error {
	if need <= r.kvCap {
		return nil
	}
	c := &r.cfg
	if err := r.settle(); err != nil {
		return err
	}
	ncap := min(r.maxLen, max(need, roundUp(2*r.kvCap, 256)))
	if need > ncap {
		return fmt.Errorf("cuda: %d positions do not fit the context of %d", need, r.maxLen)
	}
	per := uint64(2 * c.KVHeads * ncap * c.HeadDim)
	kc := make([]uint64, c.Layers)
	vc := make([]uint64, c.Layers)
	fail := func(err error) error {
		for i := range kc {
			r.dev.free(kc[i])
			r.dev.free(vc[i])
		}
		return fmt.Errorf("%w (growing the KV cache to %d positions)", err, ncap)
	}
	var err error
	for i := range c.Layers {
		if kc[i], err = r.dev.alloc(per, "KV cache"); err != nil {
			return fail(err)
		}
		if vc[i], err = r.dev.alloc(per, "KV cache"); err != nil {
			return fail(err)
		}
	}
	if r.len > 0 && r.kvCap > 0 {
		n := c.KVHeads * r.len * c.HeadDim
		blocks := uint32(min((n+255)/256, 4096))
		for i := range c.Layers {
			for _, p := range [][2]uint64{{r.kc[i], kc[i]}, {r.vc[i], vc[i]}} {
				if err := r.dev.launch("kv_copy", [3]uint32{blocks}, 256, 0, p[0], p[1], i32(c.KVHeads), i32(r.len), i32(r.kvCap), i32(ncap), i32(c.HeadDim)); err != nil {
					return fail(err)
				}
			}
		}
		if err := r.dev.sync("kv_copy"); err != nil {
			return fail(err)
		}
	}
	for i := range r.kc {
		r.dev.free(r.kc[i])
		r.dev.free(r.vc[i])
	}
	r.kc, r.vc, r.kvCap = kc, vc, ncap
	r.stats.KVCapacity = ncap
	if r.exec[0] != 0 {
		r.destroyGraphs()
		if !r.opts.NoGraph {
			return r.capture()
		}
	}
	return nil
}

func (r *Runner) destroyGraphs() {
	for s := range r.exec {
		r.dev.destroyGraph(r.graph[s], r.exec[s])
		r.graph[s], r.exec[s] = 0, 0
	}
}

// capture records the decode step of each slot into a graph and
// instantiates it.
func (r *Runner) capture() error {
	start := time.Now()
	for s := range r.exec {
		if err := r.dev.beginCapture(); err != nil {
			return err
		}
		err := r.decodeLaunches(false, s)
		graph, exec, err2 := r.dev.endCapture()
		if err == nil {
			err = err2
		} else if err2 == nil {
			r.dev.destroyGraph(graph, exec)
		}
		if err != nil {
			r.destroyGraphs()
			return fmt.Errorf("capturing the decode graph: %w", err)
		}
		r.graph[s], r.exec[s] = graph, exec
	}
	r.stats.GraphCaptures++
	r.stats.Capture = time.Since(start)
	return nil
}

// Host staging offsets of a slot's step parameters (token, position,
// step number, take the token from the device) and result (id, step
// number), in the runner's own part of the staging area.
func (r *Runner) paramsOff(slot int) uintptr { return r.hostBase + 32*uintptr(slot) }
func (r *Runner) resultOff(slot int) uintptr {
	return r.hostBase + (hostResultOff - hostParamsOff) + 16*uintptr(slot)
}

// launcher issues kernels, synchronizing after each when sync is set,
// and recording an event after each when profiling.
type launcher struct {
	g      *device
	sync   bool
	pdl    bool // launch with programmatic dependent launch (not with sync)
	count  int
	err    error
	events []uintptr // when profiling: events[i+1] is recorded after op i
	names  []string
}

func (l *launcher) launch(name string, grid [3]uint32, block uint32, smem uint32, args ...uint64) {
	l.launchEx(l.pdl && !l.sync, name, grid, block, smem, args...)
}

func (l *launcher) launchEx(pdl bool, name string, grid [3]uint32, block uint32, smem uint32, args ...uint64) {
	if l.err != nil {
		return
	}
	l.count++
	if l.err = l.g.launchEx(pdl, name, grid, block, smem, args...); l.err == nil && l.sync {
		l.err = l.g.sync(name)
	}
	l.mark(name)
}

func (l *launcher) then(op string, err error) {
	if l.err != nil {
		return
	}
	if l.err = err; err == nil && l.sync {
		l.err = l.g.sync(op)
	}
	l.mark(op)
}

func (l *launcher) mark(name string) {
	if l.err != nil || l.events == nil {
		return
	}
	if len(l.names)+1 >= len(l.events) {
		l.err = errors.New("cuda: profiler ran out of events")
		return
	}
	l.names = append(l.names, name)
	l.err = l.g.recordExternal(l.events[len(l.names)])
}

// mv enqueues a decode matvec.
func (r *Runner) mv(l *launcher, kind string, m mvCfg, w *gpuWeight, x, gain, y uint64, nout int, pval, pidx uint64) {
	l.launch(m.name(kind), [3]uint32{uint32(r.mvGrid(m, kind, w.rows))}, 256, uint32(m.smem(w.cols)),
		w.q, w.drow, i32(w.rows), i32(w.cols), x, gain, f32(r.cfg.Eps), y, i32(nout), pval, pidx)
}

// decodeLaunches enqueues one decode step: the token and position come
// from the staging area (copied to the GPU first), the argmax goes back to it.
func (r *Runner) decodeLaunches(sync bool, slot int) error {
	return r.decodeOps(&launcher{g: r.dev, sync: sync, pdl: r.tune.pdl}, slot)
}

func (r *Runner) decodeOps(l *launcher, slot int) error {
	c := &r.cfg
	g := r.dev
	t := r.tune
	// The first kernel reads the step's token and position from host
	// memory; an ordinary launch (it follows the previous step, not a kernel).
	l.launchEx(false, "embed_step", [3]uint32{1}, 256, 0, r.embed.q, r.embed.drow, i32(c.Hidden), g.hostD+uint64(r.paramsOff(slot)), r.params, r.x, r.result)
	for i := range r.layers {
		w := &r.layers[i]
		r.mv(l, "store", t.qkv, &w.qkv, r.x, w.attnNorm, r.qkv, w.qkv.rows, 0, 0)
		r.attn(l, i)
		r.mv(l, "add", t.o, &w.o, r.att, 0, r.x, c.Hidden, 0, 0)
		r.mv(l, "swiglu", t.gu, &w.gateUp, r.x, w.ffnNorm, r.act, c.FFN, 0, 0)
		r.mv(l, "add", t.down, &w.down, r.act, 0, r.x, c.Hidden, 0, 0)
	}
	r.head(l, r.x, slot)
	r.stats.KernelsPerStep = l.count
	return l.err
}

// head enqueues the final norm, the output head over the token whose
// residual is at x, and the argmax.
func (r *Runner) head(l *launcher, x uint64, slot int) {
	r.mv(l, "argmax", r.tune.head, &r.out, x, r.outNorm, r.logits[slot], r.cfg.Vocab, r.pval, r.pidx)
	l.launch("argmax_final", [3]uint32{1}, 1024, 0, r.pval, r.pidx, i32(r.headBlocks), r.result, r.dev.hostD+uint64(r.resultOff(slot)), r.params)
	// head is also the end of a prefill, launched without PDL: harmless.
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

func (r *Runner) decode(tok int32) error {
	g := r.dev
	r.stats.DecodeSteps++
	if r.ahead.on {
		a := r.ahead
		r.ahead.on = false
		if a.pos == r.len && tok == *g.hostI32(r.resultOff(r.slot)) {
			// The queued step guessed the token: queue the one after it
			// (on its argmax, in the other slot), then wait for it.
			r.slot = a.slot
			r.stats.LookaheadHits++
			if err := r.launchAhead(r.len + 1); err != nil {
				return err
			}
			return r.waitStep(a.slot, a.seq)
		}
		r.stats.LookaheadMisses++
	}
	if err := r.settle(); err != nil {
		return err
	}
	slot := 1 - r.slot
	r.step++
	*g.hostI32(r.paramsOff(slot)) = tok
	*g.hostI32(r.paramsOff(slot) + 4) = int32(r.len)
	*g.hostI32(r.paramsOff(slot) + 8) = r.step
	*g.hostI32(r.paramsOff(slot) + 12) = 0
	if r.opts.NoGraph {
		if err := r.decodeLaunches(true, slot); err != nil {
			return err
		}
		r.slot = slot
		return nil
	}
	if r.exec[0] == 0 {
		if err := r.capture(); err != nil {
			return err
		}
	}
	if err := g.launchGraph(r.exec[slot]); err != nil {
		return err
	}
	seq := r.step
	r.slot = slot
	if err := r.launchAhead(r.len + 1); err != nil {
		return err
	}
	return r.waitStep(slot, seq)
}

// launchAhead queues a decode step at position pos (the one after the
// step or prompt just run) on the device's argmax, when the graph is in
// use and the cache has room: if the next Forward brings that token, as
// greedy decoding does, its results are ready or on their way; otherwise
// it is discarded (it wrote only the slot's logits and a cache position
// that the real step rewrites).
func (r *Runner) launchAhead(pos int) error {
	if r.opts.NoGraph || !r.tune.ahead || r.noAhead || r.exec[0] == 0 || pos+1 > r.kvCap {
		return nil
	}
	g := r.dev
	slot := 1 - r.slot
	r.step++
	*g.hostI32(r.paramsOff(slot)) = -1
	*g.hostI32(r.paramsOff(slot) + 4) = int32(pos)
	*g.hostI32(r.paramsOff(slot) + 8) = r.step
	*g.hostI32(r.paramsOff(slot) + 12) = 1
	if err := g.launchGraph(r.exec[slot]); err != nil {
		return err
	}
	r.ahead.on, r.ahead.slot, r.ahead.pos, r.ahead.seq = true, slot, pos, r.step
	r.pending = true
	return nil
}

// waitStep waits for the step of the given slot and number to write its
// number beside its argmax in host memory, polling it (lower latency than
// a stream synchronization); if that takes long, it synchronizes with the
// stream instead, which also reports a failed kernel. The step's tail may
// still be running on return: what must see it finished calls settle.
func (r *Runner) waitStep(slot int, seq int32) error {
	g := r.dev
	flag := g.hostI32(r.resultOff(slot) + 4)
	start := time.Now()
	r.pending = true
	for i := 1; ; i++ {
		if atomic.LoadInt32(flag) == seq {
			return nil
		}
		if i%4096 == 0 && time.Since(start) > 50*time.Millisecond {
			if err := r.settle(); err != nil {
				return err
			}
			if atomic.LoadInt32(flag) == seq {
				return nil
			}
			return fmt.Errorf("cuda: decode step %d finished without writing its result", seq)
		}
	}
}

// settle waits until nothing runs on the GPU: the last step's tail, or a
// queued lookahead step (then discarded).
func (r *Runner) settle() error {
	r.ahead.on = false
	if !r.pending {
		return nil
	}
	r.pending = false
	return r.dev.sync("decode step")
}

// prefill runs tokens (two or more) at positions r.len.. in chunks.
func (r *Runner) prefill(tokens []int32) error {
	if err := r.settle(); err != nil {
		return err
	}
	pos := r.len
	for len(tokens) > 0 {
		n := min(len(tokens), r.chunk)
		if err := r.prefillChunk(tokens[:n], pos, n == len(tokens)); err != nil {
			return err
		}
		tokens, pos = tokens[n:], pos+n
	}
	return r.launchAhead(pos)
}

func (r *Runner) prefillChunk(tokens []int32, pos0 int, last bool) error {
	c := &r.cfg
	g := r.dev
	n := len(tokens)
	if err := g.upload(r.ptok, i32Bytes(tokens)); err != nil {
		return err
	}
	r.stats.PrefillTokens += int64(n)
	l := &launcher{g: g}
	np := r.npad
	eps := f32(c.Eps)
	scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
	nt := uint32((n + 63) / 64)
	quant := func(x uint64, K int, gain uint64) {
		l.launch("quant_act", [3]uint32{uint32(n)}, 256, 0, x, i32(K), i32(K), gain, eps, r.phi, r.plo, r.psx, i32(np))
	}
	mm := func(kind string, w *gpuWeight, y uint64, ldy, nout int) {
		l.launch("mm_q8_"+kind, [3]uint32{uint32(w.mpad / 64), nt}, 128, 0,
			w.q, w.dcol, i32(w.rows), i32(w.mpad), i32(w.cols), r.phi, r.plo, r.psx, i32(n), i32(np), y, i32(ldy), i32(nout))
	}
	l.launch("embed_q8", [3]uint32{uint32(n)}, 256, 0, r.embed.q, r.embed.drow, i32(c.Hidden), r.ptok, r.px)
	for i := range r.layers {
		w := &r.layers[i]
		quant(r.px, c.Hidden, w.attnNorm)
		mm("store", &w.qkv, r.pqkv, r.qkvRows, 0)
		l.launch(fmt.Sprintf("qk_rope_n_h%d", c.HeadDim), [3]uint32{uint32(n)}, 128, 0,
			r.pqkv, i32(pos0), i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, eps, r.rope, r.pq, r.kc[i], r.vc[i], i32(r.kvCap))
		l.launch(fmt.Sprintf("attn_prefill_h%d", c.HeadDim), [3]uint32{uint32((n + 31) / 32), uint32(c.Heads)}, 256, 0,
			r.pq, i32(n), i32(pos0), i32(c.Heads), i32(c.KVHeads), r.kc[i], r.vc[i], i32(r.kvCap), f32(scale), r.patt)
		quant(r.patt, c.QDim(), 0)
		mm("add", &w.o, r.px, c.Hidden, 0)
		quant(r.px, c.Hidden, w.ffnNorm)
		mm("swiglu", &w.gateUp, r.pact, c.FFN, c.FFN)
		quant(r.pact, c.FFN, 0)
		mm("add", &w.down, r.px, c.Hidden, 0)
	}
	slot := 1 - r.slot
	if last {
		r.head(l, r.px+uint64(4*(n-1)*c.Hidden), slot)
	}
	if l.err != nil {
		return l.err
	}
	if err := g.sync("prefill"); err != nil {
		return err
	}
	if last {
		r.slot = slot
	}
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

// timeGraph captures what build enqueues into a graph, replays it reps
// times back to back (no host synchronization between replays) and
// returns the GPU time per replay in microseconds.
func (r *Runner) timeGraph(reps int, build func(l *launcher)) (float64, error) {
	g := r.dev
	if err := g.enter(); err != nil {
		return 0, err
	}
	defer g.exit()
	if err := r.settle(); err != nil {
		return 0, err
	}
	if err := g.beginCapture(); err != nil {
		return 0, err
	}
	l := &launcher{g: g, pdl: r.tune.pdl}
	build(l)
	graph, exec, err := g.endCapture()
	if l.err != nil {
		g.destroyGraph(graph, exec)
		return 0, l.err
	}
	if err != nil {
		return 0, err
	}
	defer g.destroyGraph(graph, exec)
	a, err := g.newEvent()
	if err != nil {
		return 0, err
	}
	defer g.destroyEvent(a)
	b, err := g.newEvent()
	if err != nil {
		return 0, err
	}
	defer g.destroyEvent(b)
	if err := g.launchGraph(exec); err != nil { // warm up
		return 0, err
	}
	if err := g.record(a); err != nil {
		return 0, err
	}
	for range reps {
		if err := g.launchGraph(exec); err != nil {
			return 0, err
		}
	}
	if err := g.record(b); err != nil {
		return 0, err
	}
	ms, err := g.elapsed(a, b)
	return float64(ms) * 1000 / float64(reps), err
}

// Profile replays the decode step reps times as a graph with an event
// after every kernel, and returns the time per kernel name (largest first)
// and the whole step's time, in microseconds. The step runs at position
// Len() with token 0 and leaves the sequence as it was.
func (r *Runner) Profile(reps int) ([]backend.OpStats, float64, error) {
	if r.closed {
		return nil, 0, errors.New("cuda: runner is closed")
	}
	if r.len >= r.maxLen {
		return nil, 0, errors.New("cuda: no room to profile a step")
	}
	g := r.dev
	if err := g.enter(); err != nil {
		return nil, 0, err
	}
	defer g.exit()
	if err := r.reserve(r.len + 1); err != nil {
		return nil, 0, err
	}
	if err := r.settle(); err != nil {
		return nil, 0, err
	}
	r.valid = false
	n := 5*len(r.layers) + 16
	events := make([]uintptr, n)
	defer func() {
		for _, e := range events {
			if e != 0 {
				g.destroyEvent(e)
			}
		}
	}()
	for i := range events {
		var err error
		if events[i], err = g.newEvent(); err != nil {
			return nil, 0, err
		}
	}
	*g.hostI32(r.paramsOff(0)) = 0
	*g.hostI32(r.paramsOff(0) + 4) = int32(r.len)
	*g.hostI32(r.paramsOff(0) + 8) = -1
	*g.hostI32(r.paramsOff(0) + 12) = 0
	if err := g.beginCapture(); err != nil {
		return nil, 0, err
	}
	// Events between kernels: no programmatic launches (a kernel's
	// predecessor is an event record node).
	l := &launcher{g: g, events: events}
	err := g.recordExternal(events[0])
	if err == nil {
		err = r.decodeOps(l, 0)
	}
	graph, exec, err2 := g.endCapture()
	if err == nil {
		err = err2
	}
	if err != nil {
		g.destroyGraph(graph, exec)
		return nil, 0, err
	}
	defer g.destroyGraph(graph, exec)
	per := make([]float64, len(l.names))
	var total float64
	for range reps {
		if err := g.launchGraph(exec); err != nil {
			return nil, 0, err
		}
		if err := g.sync("profiled decode step"); err != nil {
			return nil, 0, err
		}
		for i := range l.names {
			ms, err := g.elapsed(events[i], events[i+1])
			if err != nil {
				return nil, 0, err
			}
			per[i] += float64(ms) * 1000 / float64(reps)
		}
		ms, err := g.elapsed(events[0], events[len(l.names)])
		if err != nil {
			return nil, 0, err
		}
		total += float64(ms) * 1000 / float64(reps)
	}
	at := map[string]int{}
	var res []backend.OpStats
	for i, name := range l.names {
		j, ok := at[name]
		if !ok {
			j = len(res)
			at[name] = j
			res = append(res, backend.OpStats{Name: name})
		}
		res[j].Calls++
		res[j].Total += time.Duration(per[i] * 1e3)
	}
	sort.Slice(res, func(i, j int) bool { return res[i].Total > res[j].Total })
	return res, total, nil
}
