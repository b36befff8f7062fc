package cuda

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"inferno/sampling"
)

// Sampling on the GPU (kernels/sample.cuh): a BatchRunner given rows'
// sampling parameters (SetSamples, engine.DeviceSampler) chooses their
// tokens after the step's logits, reading back an id a row (and the
// log-probabilities asked for) instead of the logits.

// Constants shared with kernels/sample.cuh.
const (
	sampChunks = 64           // SAMP_CHUNKS
	sampTopLP  = 20           // SAMP_TOPLP
	sampOut    = 44           // SAMP_OUT: ints of a row's log-probabilities in the host results
	sampFlag   = MaxBatch + 2 // where in a slot's host results samp_final writes the step number
)

// sampRow is SampRow of kernels/sample.cuh: one row's parameters.
type sampRow struct {
	seedLo, seedHi uint32
	pos            int32
	invT           float32
	topk           int32
	topp           float32
	lnMinP         float32
	flags          int32
	ntop           int32
	mask           int32
	prep, nprep    int32
	rep, pres      float32
	freq           float32
	pad            int32
}

const sampRowBytes = int(unsafe.Sizeof(sampRow{}))

// sampPatch is SampPatch of kernels/sample.cuh.
type sampPatch struct {
	id, bias, count, prompt int32
}

// devSampler holds the GPU sampling's buffers and the parameters of the
// rows of the next step.
type devSampler struct {
	g    *device
	have bool // the module has the sampling kernels (not an older INFERNO_CUDA_PTX)
	// old selects the sampling as it was before the kernels' fast paths
	// (rows copied apart, the step's argmax kept, topk_fast's bound by
	// counting, launched after the step's graph); apart the fast paths
	// launched after the graph rather than captured into it; block top_k
	// by samp_topk's blocks of 4,096 logits, not samp_topkw's warps. All
	// false but in this package's tests and benchmarks, which compare
	// them. Synth 0.6B Q8_0, S_TG against greedy at B = 1 / 8 / 64 / 256
	// (H200, 2026-12-02): Qwen3's settings (0.6, top_p 0.95, top_k 20)
	// 0.958 / 1.009 / 0.993 / 0.973 with the fast paths, 0.934 / 0.964 /
	// 0.954 / 0.927 old; temperature 1 0.982 / 1.019 / 0.995 / 0.974, old
	// 0.977 / 0.986 / 0.977 / 0.964.
	old, apart, block bool

	vocab  int
	gk     int // samp_topk's chunks (of at most topkSmem)
	kmax   int // the largest top_k sampled here (and the stride of samp_topk's partials)
	gw, kw int // samp_topkw's chunks (of at most 1,024) and the largest top_k it takes

	// The parameters set for the next step (host), and what they need.
	rows      []sampRow
	patches   []sampPatch
	masks     []uint64
	active    bool // rows were set for the next step
	aheadOK   bool // no row has patches or a mask: a lookahead step may sample too
	needRaw   bool // some row wants log-probabilities
	needTopLP bool
	needPost  bool // some row has min_p or top_p without top_k: the mode-1 stats
	needTopK  bool
	warpTopK  bool // every top_k row has one of at most kw, and no row top_p alone: samp_topkw
	needRace  bool // some row has no top_k (or is greedy)

	// Page-locked copies per slot, copied to the device before the slot's
	// kernels: rows (MaxBatch), patches and masks (grown).
	hrows, hpatch, hmask [2]uintptr
	drows, dpatch, dmask [2]uint64
	patchCap, maskCap    int // entries, words
	nrows                [2]int
	rowsAt               [2]uint64 // where the slot's rows travelled with the step's inputs (0: not)
	orig                 uint64    // patched tokens' raw logits, by entry
	race                 uint64
	statsRaw, statsPost  uint64
	kval, kidx           uint64
	lval, lidx           uint64
	counter              uint64
	hout                 uintptr // two slots of MaxBatch*sampOut ints (logprobs), mapped
	houtD                uint64
	owned                []uint64
	ready                bool

	tokens []sampling.Token
}

// Limits of the top-k selection (TOPK_MAX and TOPK_SMEM in kernels/topk.cuh):
// the largest k, and the logits one block of samp_topk takes.
const (
	topkMax  = 128
	topkSmem = 4096
)

// newDevSampler returns a sampler for rows of vocab logits; its buffers
// are allocated by the first step that samples.
func newDevSampler(g *device, vocab int) *devSampler {
	gk := (vocab + topkSmem - 1) / topkSmem
	gw := (vocab + 1023) / 1024
	return &devSampler{g: g, vocab: vocab, gk: gk, kmax: min(topkMax, topkSmem/gk), gw: gw, kw: min(32, topkSmem/gw)}
}

// canSample reports whether the GPU samples under p: every setting but
// top_k above kmax, and top_p without top_k together with a logit bias or
// a penalty; greedy and top_k 1 always; nothing when the loaded kernels
// lack the sampling ones. top_p without top_k is drawn among the kmax best
// tokens when its nucleus ends there; a row whose nucleus is larger is
// left to the host (sampling.ErrNotDrawn), which needs its logits as the
// model gave them: no patches.
func (s *devSampler) canSample(p sampling.Params) bool {
	if !s.have || p.Validate() != nil {
		return false
	}
	if p.Argmax() {
		return true
	}
	if p.TopK > s.kmax {
		return false
	}
	return !(p.TopK == 0 && p.TopPOn() > 0 && p.Patched())
}

func (s *devSampler) alloc() error {
	if s.ready {
		return nil
	}
	g := s.g
	var err error
	a := func(dst *uint64, n int, what string) {
		if err == nil {
			if *dst, err = g.alloc(uint64(n), what); err == nil {
				s.owned = append(s.owned, *dst)
			}
		}
	}
	for i := range 2 {
		a(&s.drows[i], MaxBatch*sampRowBytes, "sampling parameters")
	}
	a(&s.race, 16*MaxBatch*sampChunks, "sampling partials")
	a(&s.statsRaw, 8*MaxBatch*sampChunks, "sampling partials")
	a(&s.statsPost, 8*MaxBatch*sampChunks, "sampling partials")
	part := max(s.gk*s.kmax, s.gw*s.kw) // samp_topk's or samp_topkw's partials of a row
	a(&s.kval, 4*MaxBatch*part, "top-k partials")
	a(&s.kidx, 4*MaxBatch*part, "top-k partials")
	a(&s.lval, 4*MaxBatch*s.gk*sampTopLP, "top-logprob partials")
	a(&s.lidx, 4*MaxBatch*s.gk*sampTopLP, "top-logprob partials")
	a(&s.counter, 64, "sampling counter")
	if err != nil {
		return err
	}
	if err := g.memsetAsync(s.counter, 64); err != nil {
		return err
	}
	for i := range 2 {
		if s.hrows[i], _, err = g.allocHost(MaxBatch * sampRowBytes); err != nil {
			return err
		}
	}
	if s.hout, s.houtD, err = g.allocHost(2 * 4 * MaxBatch * sampOut); err != nil {
		return err
	}
	s.ready = true
	return nil
}

// grow makes the patch and mask buffers hold the rows set; the caller has
// waited for every step that used them.
func (s *devSampler) grow(patches, words int) error {
	g := s.g
	if patches > s.patchCap {
		n := max(patches, 2*s.patchCap, 1024)
		for i := range 2 {
			g.free(s.dpatch[i])
			g.freeHost(s.hpatch[i])
			s.dpatch[i], s.hpatch[i] = 0, 0
		}
		g.free(s.orig)
		s.orig, s.patchCap = 0, 0
		var err error
		for i := range 2 {
			if s.dpatch[i], err = g.alloc(uint64(16*n), "sampling patches"); err != nil {
				return err
			}
			if s.hpatch[i], _, err = g.allocHost(16 * n); err != nil {
				return err
			}
		}
		if s.orig, err = g.alloc(uint64(4*n), "sampling patches"); err != nil {
			return err
		}
		s.patchCap = n
	}
	if words > s.maskCap {
		n := max(words, 2*s.maskCap)
		for i := range 2 {
			g.free(s.dmask[i])
			g.freeHost(s.hmask[i])
			s.dmask[i], s.hmask[i] = 0, 0
		}
		s.maskCap = 0
		var err error
		for i := range 2 {
			if s.dmask[i], err = g.alloc(uint64(8*n), "sampling masks"); err != nil {
				return err
			}
			if s.hmask[i], _, err = g.allocHost(8 * n); err != nil {
				return err
			}
		}
		s.maskCap = n
	}
	return nil
}

func (s *devSampler) close() {
	g := s.g
	for _, p := range s.owned {
		g.free(p)
	}
	s.owned = nil
	for i := range 2 {
		g.free(s.dpatch[i])
		g.free(s.dmask[i])
		g.freeHost(s.hrows[i])
		g.freeHost(s.hpatch[i])
		g.freeHost(s.hmask[i])
		s.dpatch[i], s.dmask[i], s.hrows[i], s.hpatch[i], s.hmask[i] = 0, 0, 0, 0, 0
	}
	g.free(s.orig)
	g.freeHost(s.hout)
	s.orig, s.hout, s.patchCap, s.maskCap, s.ready = 0, 0, 0, 0, false
}

// set records the rows of the next step (engine.DeviceSampler's SetSamples).
func (s *devSampler) set(rows []sampling.Row) error {
	if len(rows) > MaxBatch {
		return fmt.Errorf("cuda: %d sampling rows, at most %d", len(rows), MaxBatch)
	}
	s.rows, s.patches, s.masks = s.rows[:0], s.patches[:0], s.masks[:0]
	s.needRaw, s.needTopLP, s.needPost, s.needTopK, s.needRace = false, false, false, false, false
	s.warpTopK = !s.old && !s.block
	s.aheadOK = true
	words := (s.vocab + 63) / 64
	for i := range rows {
		r := &rows[i]
		row := sampRow{rep: 1, lnMinP: float32(math.Inf(-1)), mask: -1}
		if !r.On {
			s.rows = append(s.rows, row) // greedy: the argmax
			s.needRace = true
			continue
		}
		p := r.Params
		if !s.canSample(p) {
			return fmt.Errorf("cuda: output %d: sampling parameters the GPU does not sample under", i)
		}
		row.seedLo, row.seedHi = uint32(r.Seed), uint32(r.Seed>>32)
		row.pos = int32(r.Index)
		if !p.Argmax() {
			row.invT = float32(1 / float64(p.Temperature))
			row.topk = int32(p.TopK)
			row.topp = p.TopPOn()
			row.lnMinP = p.LnMinP()
		}
		if p.Logprobs {
			row.flags |= 1
			row.ntop = int32(p.TopLogprobs)
			s.needRaw = true
			s.needTopLP = s.needTopLP || p.TopLogprobs > 0
		}
		if len(r.Patches) > 0 {
			row.prep, row.nprep = int32(len(s.patches)), int32(len(r.Patches))
			for _, pt := range r.Patches {
				if pt.ID < 0 || int(pt.ID) >= s.vocab {
					return fmt.Errorf("cuda: output %d: patched token %d outside the vocabulary of %d", i, pt.ID, s.vocab)
				}
				pr := int32(0)
				if pt.InPrompt {
					pr = 1
				}
				s.patches = append(s.patches, sampPatch{id: pt.ID, bias: int32(math.Float32bits(pt.Bias)), count: pt.Count, prompt: pr})
			}
			if p.Penalized() {
				if pe := p.RepetitionPenalty; pe != 0 {
					row.rep = pe
				}
				row.pres, row.freq = p.PresencePenalty, p.FrequencyPenalty
			}
			s.aheadOK = false
		}
		if r.Mask != nil {
			if len(r.Mask) != words {
				return fmt.Errorf("cuda: output %d: a mask of %d words for a vocabulary of %d tokens (want %d)", i, len(r.Mask), s.vocab, words)
			}
			row.mask = int32(2 * len(s.masks)) // in 32-bit words
			s.masks = append(s.masks, r.Mask...)
			s.aheadOK = false
		}
		switch {
		case row.invT == 0:
			s.needRace = true
		case row.topk > 0:
			s.needTopK = true
			s.warpTopK = s.warpTopK && int(row.topk) <= s.kw
		case row.topp > 0:
			s.needTopK, s.needPost = true, true
			s.warpTopK = false
		default:
			s.needRace = true
			s.needPost = s.needPost || row.lnMinP > float32(math.Inf(-1))
		}
		s.rows = append(s.rows, row)
	}
	s.active = true
	return nil
}

// fill writes the rows set, their positions + d, to slot slot's
// page-locked copies (patches and masks only for d = 0).
func (s *devSampler) fill(slot, d int) {
	h := unsafe.Slice((*sampRow)(hostPtr(s.hrows[slot])), MaxBatch)
	n := copy(h, s.rows)
	for i := range n {
		h[i].pos += int32(d)
	}
	s.nrows[slot] = n
	s.rowsAt[slot] = 0
	if len(s.patches) > 0 {
		copy(unsafe.Slice((*sampPatch)(hostPtr(s.hpatch[slot])), s.patchCap), s.patches)
	}
	if len(s.masks) > 0 {
		copy(unsafe.Slice((*uint64)(hostPtr(s.hmask[slot])), s.maskCap), s.masks)
	}
}

// matches reports whether slot slot's rows (a queued lookahead step's)
// are the rows set for the Forward running now (active is already
// cleared).
func (s *devSampler) matches(slot int) bool {
	if s.nrows[slot] != len(s.rows) {
		return false
	}
	h := unsafe.Slice((*sampRow)(hostPtr(s.hrows[slot])), len(s.rows))
	for i := range s.rows {
		if h[i] != s.rows[i] {
			return false
		}
	}
	return true
}

// copyAsync enqueues a copy of n bytes of page-locked host memory to the
// device on the stream.
func (g *device) copyAsync(dst uint64, src uintptr, n int) error {
	if n == 0 {
		return nil
	}
	return g.d.check("cuMemcpyHtoDAsync (sampling)", g.d.call(g.d.cuMemcpyHtoDAsync, uintptr(dst), src, uintptr(n), g.stream))
}

// rowInts is the size of a row's parameters in ints (in a step's inputs).
const rowInts = sampRowBytes / 4

// sampSkip is SAMP_SKIP: a padding row of a decode graph's bucket.
const sampSkip = 2

// inGraph reports whether a decode step's sampling under the rows set is
// captured into its graph: no patches and no masks (whose lists vary in
// length), the rows in the step's inputs at a place fixed by the bucket.
func (s *devSampler) inGraph() bool {
	return !s.old && !s.apart && len(s.patches) == 0 && len(s.masks) == 0
}

// kernelSet returns which sampling kernels the rows set need, as bits: a
// decode graph with its sampling captured is kept for each set.
func (s *devSampler) kernelSet() int {
	set := 0
	for i, on := range []bool{s.needRaw, s.needTopLP, s.needPost, s.needTopK, s.needRace, s.needTopK && s.warpTopK} {
		if on {
			set |= 1 << i
		}
	}
	return set
}

// putRowsPadded writes slot slot's rows (filled) to the page-locked ints
// at dst, then padding rows up to B.
func (s *devSampler) putRowsPadded(slot int, dst uintptr, B int) {
	s.putRows(slot, dst)
	h := unsafe.Slice((*sampRow)(hostPtr(dst)), B)
	for i := s.nrows[slot]; i < B; i++ {
		h[i] = sampRow{flags: sampSkip}
	}
}

// inMeta reports whether the rows' parameters travel with the step's
// inputs (one copy to the device for both) rather than apart.
func (s *devSampler) inMeta() bool { return !s.old }

// putRows writes slot slot's rows (filled) to the page-locked ints at dst.
func (s *devSampler) putRows(slot int, dst uintptr) {
	n := s.nrows[slot]
	copy(unsafe.Slice((*sampRow)(hostPtr(dst)), n), unsafe.Slice((*sampRow)(hostPtr(s.hrows[slot])), n))
}

// launch enqueues on l the sampling of the n rows of logits (vocab apart)
// with slot slot's parameters (filled), read on the device at rows when
// the step's inputs carried them there, else (rows 0) copied to the
// slot's buffer first: ids to dres[row] and to the page-locked results
// hres[row], log-probabilities to the slot's hout; the last block writes
// the step number to hres[sampFlag]: step, or head[2] when head is not 0
// (the inputs' header, read by a graph's launch).
func (s *devSampler) launch(l *launcher, slot int, rows uint64, logits uint64, n int, dres uint64, hres uint64, step int32, head uint64) {
	g := s.g
	if rows == 0 {
		rows = s.drows[slot]
		l.then("sampling rows", g.copyAsync(rows, s.hrows[slot], n*sampRowBytes))
	}
	if len(s.patches) > 0 {
		l.then("sampling patches", g.copyAsync(s.dpatch[slot], s.hpatch[slot], 16*len(s.patches)))
	}
	if len(s.masks) > 0 {
		l.then("sampling masks", g.copyAsync(s.dmask[slot], s.hmask[slot], 8*len(s.masks)))
	}
	V := s.vocab
	mask, patch := s.dmask[slot], s.dpatch[slot]
	hout := s.houtD + uint64(4*slot*MaxBatch*sampOut)
	fast := 1
	if s.old {
		fast = 0
	}
	if s.needRaw {
		l.launch("samp_stats", [3]uint32{sampChunks, uint32(n)}, 256, 0, logits, i32(V), rows, mask, i32(0), s.statsRaw)
	}
	if s.needTopLP {
		l.launch("samp_topk", [3]uint32{uint32(s.gk), uint32(n)}, 256, 0, logits, i32(V), rows, mask, i32(0|2*fast), i32(sampTopLP), s.lval, s.lidx)
	}
	if len(s.patches) > 0 {
		l.launch("samp_prep", [3]uint32{uint32(n)}, 256, 0, logits, i32(V), rows, patch, s.orig)
	}
	if s.needPost {
		l.launch("samp_stats", [3]uint32{sampChunks, uint32(n)}, 256, 0, logits, i32(V), rows, mask, i32(1), s.statsPost)
	}
	gk, kmax := s.gk, s.kmax // the top_k partials: chunks, stride
	if s.needTopK && s.warpTopK {
		gk, kmax = s.gw, s.kw
		l.launch("samp_topkw", [3]uint32{uint32((s.gw + 7) / 8), uint32(n)}, 256, 0, logits, i32(V), rows, mask, i32(s.gw), i32(s.kw), s.kval, s.kidx)
	} else if s.needTopK {
		l.launch("samp_topk", [3]uint32{uint32(s.gk), uint32(n)}, 256, 0, logits, i32(V), rows, mask, i32(1|2*fast), i32(s.kmax), s.kval, s.kidx)
	}
	if s.needRace {
		l.launch("samp_race", [3]uint32{sampChunks, uint32(n)}, 256, 0, logits, i32(V), rows, i32(0), mask, s.statsPost, s.race)
	}
	l.launch("samp_final", [3]uint32{uint32(n)}, 256, 0, logits, i32(V), rows, i32(0), s.race, i32(sampChunks),
		s.kval, s.kidx, i32(gk), i32(kmax), s.lval, s.lidx, i32(s.gk), s.statsRaw, s.statsPost, patch, s.orig,
		dres, hres, hout, i32(n), i32(sampFlag), i32(int(step)), s.counter, i32(fast), head)
}

// prepare allocates what the rows set need (waiting for the device first
// when a buffer grows: settle).
func (s *devSampler) prepare(settle func() error) error {
	if err := s.alloc(); err != nil {
		return err
	}
	if len(s.patches) > s.patchCap || len(s.masks) > s.maskCap {
		if err := settle(); err != nil {
			return err
		}
		return s.grow(len(s.patches), len(s.masks))
	}
	return nil
}

// undrawn reports whether row i of slot slot was left to the host (a
// top_p nucleus larger than the candidates).
func (s *devSampler) undrawn(slot, i int) bool {
	return i < s.nrows[slot] && hostInts(s.hout+uintptr(4*(slot*MaxBatch+i)*sampOut), sampOut)[3] != 0
}

// token returns row i's token of slot slot: id, then the log-probabilities
// from the host results.
func (s *devSampler) token(slot, i int, id int32) sampling.Token {
	for len(s.tokens) <= i {
		s.tokens = append(s.tokens, sampling.Token{})
	}
	t := &s.tokens[i]
	t.ID, t.Logprob, t.Top = id, 0, t.Top[:0]
	if i >= s.nrows[slot] {
		return *t
	}
	row := unsafe.Slice((*sampRow)(hostPtr(s.hrows[slot])), s.nrows[slot])[i]
	if row.flags&1 == 0 {
		return *t
	}
	o := hostInts(s.hout+uintptr(4*(slot*MaxBatch+i)*sampOut), sampOut)
	t.Logprob = math.Float32frombits(uint32(o[1]))
	for j := range int(min(o[2], sampTopLP)) {
		t.Top = append(t.Top, sampling.TokenLogprob{ID: o[4+2*j], Logprob: math.Float32frombits(uint32(o[5+2*j]))})
	}
	return *t
}

// CanSample reports whether the GPU samples under p (engine.DeviceSampler):
// every setting but top_k above MaxTopK, and top_p without top_k together
// with a logit bias or a penalty.
func (br *BatchRunner) CanSample(p sampling.Params) bool { return br.sampler().canSample(p) }

func (br *BatchRunner) sampler() *devSampler {
	if br.samp == nil {
		br.samp = newDevSampler(br.dev, br.cfg.Vocab)
		br.samp.have = br.dev.enter() == nil
		if br.samp.have {
			for _, k := range []string{"samp_stats", "samp_topk", "samp_topkw", "samp_prep", "samp_race", "samp_final"} {
				if _, err := br.dev.fn(k); err != nil {
					br.samp.have = false
				}
			}
			br.dev.exit()
		}
	}
	return br.samp
}

// SetSamples sets how the outputs of the next Forward are chosen
// (engine.DeviceSampler): the rows On are sampled on the GPU after the
// step, the others take the argmax. A decode step queues the next step on
// the sampled tokens (the lookahead): when its rows have no patches (logit
// bias, penalties) and no mask, sampling it with the rows' next indexes;
// else its forward pass alone, whose sampling waits for the rows of the
// Forward that takes it (their masks computed on the host meanwhile).
func (br *BatchRunner) SetSamples(rows []sampling.Row) error {
	if br.closed {
		return errors.New("cuda: batch runner is closed")
	}
	return br.sampler().set(rows)
}

// Sampled returns output i's token chosen on the GPU by the last Forward
// (engine.DeviceSampler); Token.Top is reused by the next call for i.
// sampling.ErrNotDrawn reports a top_p row whose nucleus is larger than
// the MaxTopK candidates: Logits gives its logits, unchanged.
func (br *BatchRunner) Sampled(i int) (sampling.Token, error) {
	if br.closed {
		return sampling.Token{}, errors.New("cuda: batch runner is closed")
	}
	if !br.valid || !br.sampledLast {
		return sampling.Token{}, errors.New("cuda: the last Forward sampled nothing")
	}
	if i < 0 || i >= br.nout {
		return sampling.Token{}, fmt.Errorf("cuda: output %d of %d", i, br.nout)
	}
	if br.samp.undrawn(br.slot, i) {
		return sampling.Token{}, sampling.ErrNotDrawn
	}
	return br.samp.token(br.slot, i, br.ids[i]), nil
}
