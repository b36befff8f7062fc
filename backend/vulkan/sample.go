package vulkan

import (
	"fmt"
	"math"
	"unsafe"

	"inferno/sampling"
)

// Sampling on the device (shaders/sample*.comp): the rows of a step's
// logits are sampled where they were computed, under each row's own
// parameters, and a step reads back an id a row (plus the
// log-probabilities asked for) instead of the logits. The definition is
// backend/cuda's (package gumbel is its Go reference): a Gumbel-max whose
// noise is a pure function of (seed, position, token id) through
// Philox4x32-10, so that a seed draws the same token on both backends
// given the same logits, up to float rounding of near ties: the noise is
// computed in float32 by a series (sample.glsl's samp_ln), not by CUDA's
// logf/log1pf (within 1e-6 of package gumbel's float64 noise), and a
// driver's division and exp need not round as CUDA's __fdiv_rn and expf
// do (the repetition penalty, the sums behind top_p and the
// log-probabilities).

// Constants shared with shaders/sample.glsl.
const (
	sampChunks = 64   // SAMP_CHUNKS
	sampTopLP  = 20   // SAMP_TOPLP
	sampOut    = 44   // SAMP_OUT: ints of a row's results
	sampSel    = 128  // SAMP_SEL: the largest top_k sampled here
	sampSmem   = 4096 // the logits of a chunk of sample_topk, at most
	sampPerC   = 2048 // the logits of a chunk of sample_stats and sample_race, at least (but for small rows)

	sampLogprobs = 1 // SAMP_LOGPROBS
	sampSkip     = 2 // SAMP_SKIP
)

// sampRow is SampRow of shaders/sample.glsl: one row's parameters.
type sampRow struct {
	patches, mask  uint64 // addresses of the row's patch entries and mask words (0: none)
	seedLo, seedHi uint32
	pos            int32
	invT           float32
	topk           int32
	topp           float32
	lnMinP         float32
	flags          int32
	ntop           int32
	nprep          int32
	rep, pres      float32
	freq           float32
	_              int32
}

const sampRowBytes = int(unsafe.Sizeof(sampRow{}))

// sampPatch is SampPatch of shaders/sample.glsl.
type sampPatch struct {
	id    int32
	bias  float32
	count int32
	prmpt int32
	orig  float32 // written by sample_prep
}

const sampPatchBytes = int(unsafe.Sizeof(sampPatch{}))

// Push blocks, one a shader (shaders/sample_<name>.comp).
type (
	// pushSampStats is sample_stats' push block.
	pushSampStats struct {
		logits, rows, out uint64
		V, mode, C        int32
		_                 int32
	}
	// pushSampPrep is sample_prep's push block.
	pushSampPrep struct {
		logits, rows uint64
		V            int32
		_            int32
	}
	// pushSampTopK is sample_topk's push block.
	pushSampTopK struct {
		logits, rows, val, idx uint64
		V, mode, G, stride     int32
	}
	// pushSampRace is sample_race's push block.
	pushSampRace struct {
		logits, rows, stats, part uint64
		V, C                      int32
	}
	// pushSampFinal is sample_final's push block.
	pushSampFinal struct {
		logits, rows, race, kval, kidx, lval, lidx, rawstats, poststats, out uint64
		V, G, kmax, C                                                        int32
	}
)

// devSampler holds the device sampling's buffers and the parameters of
// the rows of the next submit. The rows' parameters, patches and masks
// are in host-visible buffers it owns, read by the shaders through
// addresses in the rows, so a command buffer recorded once (record)
// samples under whatever rows set writes before each replay.
type devSampler struct {
	d       *Device
	vocab   int
	maxRows int
	g       int    // sample_topk's chunks of a row (of at most sampSmem logits)
	kmax    int    // the largest top_k sampled here, and the stride of the top_k partials
	c       int    // sample_stats' and sample_race's chunks of a row
	wg      uint32 // the workgroup size (constant_id 0)

	// Host-visible: the rows, the patches and masks (grown by set), the
	// results.
	rows, patches, masks, out *Buffer
	// Device-local partials.
	statsRaw, statsPost, race, kval, kidx, lval, lidx *Buffer

	stats, prep, topk, racePl, final *Pipeline

	n     int // rows set
	on    []bool
	flags []int32
	tops  [][]sampling.TokenLogprob // by row: sampled's Token.Top
}

// newDevSampler returns a sampler for up to maxRows rows of vocab logits.
func newDevSampler(d *Device, vocab, maxRows int) (*devSampler, error) {
	return newDevSamplerWG(d, vocab, maxRows, sampWorkgroup(d))
}

// newDevSamplerWG is newDevSampler with the shaders' workgroup size wg (a
// power of two, 32 to 1,024).
func newDevSamplerWG(d *Device, vocab, maxRows int, wg uint32) (*devSampler, error) {
	if wg < 32 || wg > 1024 || wg&(wg-1) != 0 {
		return nil, fmt.Errorf("vulkan: sampling workgroups of %d invocations", wg)
	}
	if vocab <= 0 || maxRows <= 0 {
		return nil, fmt.Errorf("vulkan: sampler for %d rows of %d logits", maxRows, vocab)
	}
	g := (vocab + sampSmem - 1) / sampSmem
	s := &devSampler{d: d, vocab: vocab, maxRows: maxRows, g: g, kmax: min(sampSel, sampSmem/g),
		c: min(sampChunks, (vocab+sampPerC-1)/sampPerC), wg: wg}
	if s.kmax < sampTopLP {
		return nil, fmt.Errorf("vulkan: a vocabulary of %d tokens is more than the sampler takes", vocab)
	}
	var err error
	for _, p := range []struct {
		pl   **Pipeline
		name string
	}{{&s.stats, "sample_stats"}, {&s.prep, "sample_prep"}, {&s.topk, "sample_topk"}, {&s.racePl, "sample_race"}, {&s.final, "sample_final"}} {
		if *p.pl, err = d.Pipeline(p.name, s.wg); err != nil {
			return nil, err
		}
	}
	R := int64(maxRows)
	for _, b := range []struct {
		buf  **Buffer
		n    int64
		host bool
	}{
		{&s.rows, R * int64(sampRowBytes), true},
		{&s.out, R * 4 * sampOut, true},
		{&s.statsRaw, R * 8 * sampChunks, false},
		{&s.statsPost, R * 8 * sampChunks, false},
		{&s.race, R * 16 * sampChunks, false},
		{&s.kval, R * 4 * int64(g*s.kmax), false},
		{&s.kidx, R * 4 * int64(g*s.kmax), false},
		{&s.lval, R * 4 * int64(g*sampTopLP), false},
		{&s.lidx, R * 4 * int64(g*sampTopLP), false},
	} {
		if b.host {
			*b.buf, err = d.NewHostBuffer(b.n)
		} else {
			*b.buf, err = d.NewBuffer(b.n)
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("vulkan: sampling buffers: %w", err)
		}
	}
	return s, nil
}

// sampWorkgroup returns the sampling shaders' workgroup size on d: a
// power of two; smaller on a CPU device (lavapipe), where every barrier
// of a workgroup switches between its invocations.
func sampWorkgroup(d *Device) uint32 {
	if d.Type == "cpu" {
		return 64
	}
	return 256
}

// close frees the sampler's buffers.
func (s *devSampler) close() {
	for _, b := range []**Buffer{&s.rows, &s.patches, &s.masks, &s.out, &s.statsRaw, &s.statsPost, &s.race, &s.kval, &s.kidx, &s.lval, &s.lidx} {
		(*b).Free()
		*b = nil
	}
}

// canSample reports whether the device samples under p: every setting
// but top_k above kmax, and top_p without top_k together with a logit
// bias or a penalty; greedy and top_k 1 always. top_p without top_k is
// drawn among the kmax best tokens when its nucleus ends there; a row
// whose nucleus is larger is left to the host (sampling.ErrNotDrawn),
// which needs its logits as the model gave them: no patches. (The same
// rule as backend/cuda's.)
func (s *devSampler) canSample(p sampling.Params) bool {
	if p.Validate() != nil {
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

// set writes the rows of the next submit: each On row's parameters,
// patches (sorted by id, each id once, as Sampler.Patches lists them)
// and mask; rows not On, and the rows past len(rows) up to maxRows, are
// skipped by the shaders.
func (s *devSampler) set(rows []sampling.Row) error {
	if len(rows) > s.maxRows {
		return fmt.Errorf("vulkan: %d sampling rows, at most %d", len(rows), s.maxRows)
	}
	words := (s.vocab + 63) / 64
	np, nm := 0, 0
	for i := range rows {
		r := &rows[i]
		if !r.On {
			continue
		}
		if !s.canSample(r.Params) {
			return fmt.Errorf("vulkan: output %d: sampling parameters the device does not sample under", i)
		}
		for j, pt := range r.Patches {
			if pt.ID < 0 || int(pt.ID) >= s.vocab {
				return fmt.Errorf("vulkan: output %d: patched token %d outside the vocabulary of %d", i, pt.ID, s.vocab)
			}
			if j > 0 && pt.ID <= r.Patches[j-1].ID {
				return fmt.Errorf("vulkan: output %d: patches not sorted by id (token %d after %d)", i, pt.ID, r.Patches[j-1].ID)
			}
		}
		if r.Mask != nil && len(r.Mask) != words {
			return fmt.Errorf("vulkan: output %d: a mask of %d words for a vocabulary of %d tokens (want %d)", i, len(r.Mask), s.vocab, words)
		}
		np += len(r.Patches)
		if r.Mask != nil {
			nm += words
		}
	}
	if err := s.grow(&s.patches, int64(np*sampPatchBytes)); err != nil {
		return err
	}
	if err := s.grow(&s.masks, int64(8*nm)); err != nil {
		return err
	}
	hrows := unsafe.Slice((*sampRow)(unsafe.Pointer(&s.rows.Host()[0])), s.maxRows)
	var hpatch []sampPatch
	if np > 0 {
		hpatch = unsafe.Slice((*sampPatch)(unsafe.Pointer(&s.patches.Host()[0])), np)
	}
	var hmask []uint64
	if nm > 0 {
		hmask = unsafe.Slice((*uint64)(unsafe.Pointer(&s.masks.Host()[0])), nm)
	}
	s.on, s.flags = s.on[:0], s.flags[:0]
	np, nm = 0, 0
	for i := range rows {
		r := &rows[i]
		row := sampRow{rep: 1, lnMinP: float32(math.Inf(-1))}
		if !r.On {
			row.flags = sampSkip
			hrows[i] = row
			s.on, s.flags = append(s.on, false), append(s.flags, row.flags)
			continue
		}
		p := r.Params
		row.seedLo, row.seedHi = uint32(r.Seed), uint32(r.Seed>>32)
		row.pos = int32(r.Index)
		if !p.Argmax() {
			row.invT = float32(1 / float64(p.Temperature))
			row.topk = int32(p.TopK)
			row.topp = p.TopPOn()
			row.lnMinP = p.LnMinP()
		}
		if p.Logprobs {
			row.flags |= sampLogprobs
			row.ntop = int32(p.TopLogprobs)
		}
		if len(r.Patches) > 0 {
			row.patches = s.patches.Addr() + uint64(np*sampPatchBytes)
			row.nprep = int32(len(r.Patches))
			for _, pt := range r.Patches {
				pr := int32(0)
				if pt.InPrompt {
					pr = 1
				}
				hpatch[np] = sampPatch{id: pt.ID, bias: pt.Bias, count: pt.Count, prmpt: pr}
				np++
			}
			if p.Penalized() {
				if pe := p.RepetitionPenalty; pe != 0 {
					row.rep = pe
				}
				row.pres, row.freq = p.PresencePenalty, p.FrequencyPenalty
			}
		}
		if r.Mask != nil {
			row.mask = s.masks.Addr() + uint64(8*nm)
			nm += copy(hmask[nm:], r.Mask)
		}
		hrows[i] = row
		s.on, s.flags = append(s.on, true), append(s.flags, row.flags)
	}
	for i := len(rows); i < s.maxRows; i++ {
		hrows[i] = sampRow{flags: sampSkip} // rows a recording for more rows skips
	}
	s.n = len(rows)
	return nil
}

// grow makes *b a host buffer of at least n bytes (none needed: n 0).
// The shaders reach it through the rows' addresses, which set writes
// after, so recorded command buffers stay valid.
func (s *devSampler) grow(b **Buffer, n int64) error {
	if n == 0 || *b != nil && (*b).Size() >= n {
		return nil
	}
	size := max(n, 4096)
	if *b != nil {
		size = max(size, 2*(*b).Size())
	}
	nb, err := s.d.NewHostBuffer(size)
	if err != nil {
		return fmt.Errorf("vulkan: sampling patches and masks: %w", err)
	}
	(*b).Free()
	*b = nb
	return nil
}

// record records the dispatches that choose each On row's token from the
// rows x vocab float32 logits at address logits, into the host-visible
// results. The push constants depend only on rows and the vocabulary:
// the recording samples under whatever rows set writes before a replay.
// The logits of patched tokens are changed and put back.
func (s *devSampler) record(r *Recorder, logits uint64, rows int) {
	if rows <= 0 {
		return
	}
	rows = min(rows, s.maxRows)
	V, R, G, C := int32(s.vocab), uint32(rows), uint32(s.g), uint32(s.c)
	rowsAt := s.rows.Addr()
	// Raw statistics and top log-probabilities, before the patches.
	r.Dispatch(s.stats, C, R, 1, PushBytes(&pushSampStats{logits: logits, rows: rowsAt, out: s.statsRaw.Addr(), V: V, mode: 0, C: int32(C)}))
	r.Dispatch(s.topk, G, R, 1, PushBytes(&pushSampTopK{logits: logits, rows: rowsAt, val: s.lval.Addr(), idx: s.lidx.Addr(), V: V, mode: 0, G: int32(G), stride: sampTopLP}))
	r.Barrier()
	r.Dispatch(s.prep, R, 1, 1, PushBytes(&pushSampPrep{logits: logits, rows: rowsAt, V: V}))
	r.Barrier()
	r.Dispatch(s.stats, C, R, 1, PushBytes(&pushSampStats{logits: logits, rows: rowsAt, out: s.statsPost.Addr(), V: V, mode: 1, C: int32(C)}))
	r.Dispatch(s.topk, G, R, 1, PushBytes(&pushSampTopK{logits: logits, rows: rowsAt, val: s.kval.Addr(), idx: s.kidx.Addr(), V: V, mode: 1, G: int32(G), stride: int32(s.kmax)}))
	r.Barrier()
	r.Dispatch(s.racePl, C, R, 1, PushBytes(&pushSampRace{logits: logits, rows: rowsAt, stats: s.statsPost.Addr(), part: s.race.Addr(), V: V, C: int32(C)}))
	r.Barrier()
	r.Dispatch(s.final, R, 1, 1, PushBytes(&pushSampFinal{logits: logits, rows: rowsAt, race: s.race.Addr(),
		kval: s.kval.Addr(), kidx: s.kidx.Addr(), lval: s.lval.Addr(), lidx: s.lidx.Addr(),
		rawstats: s.statsRaw.Addr(), poststats: s.statsPost.Addr(), out: s.out.Addr(), V: V, G: int32(G), kmax: int32(s.kmax), C: int32(C)}))
	r.Barrier()
}

// sampled returns row i's token after the submit: its id and the
// log-probabilities asked for. sampling.ErrNotDrawn reports a top_p row
// whose nucleus is larger than the kmax candidates: the caller samples
// from its logits, unchanged. Token.Top is reused by the next call for i.
func (s *devSampler) sampled(i int) (sampling.Token, error) {
	if i < 0 || i >= s.n {
		return sampling.Token{}, fmt.Errorf("vulkan: sampled row %d of %d", i, s.n)
	}
	if !s.on[i] {
		return sampling.Token{}, fmt.Errorf("vulkan: row %d was not sampled on the device", i)
	}
	o := unsafe.Slice((*int32)(unsafe.Pointer(&s.out.Host()[4*i*sampOut])), sampOut)
	if o[3] != 0 {
		return sampling.Token{}, sampling.ErrNotDrawn
	}
	t := sampling.Token{ID: o[0]}
	if t.ID < 0 || int(t.ID) >= s.vocab {
		return sampling.Token{}, fmt.Errorf("vulkan: row %d: token %d outside the vocabulary of %d", i, t.ID, s.vocab)
	}
	if s.flags[i]&sampLogprobs == 0 {
		return t, nil
	}
	t.Logprob = math.Float32frombits(uint32(o[1]))
	for len(s.tops) <= i {
		s.tops = append(s.tops, nil)
	}
	top := s.tops[i][:0]
	for j := range int(min(max(o[2], 0), sampTopLP)) {
		top = append(top, sampling.TokenLogprob{ID: o[4+2*j], Logprob: math.Float32frombits(uint32(o[5+2*j]))})
	}
	s.tops[i] = top
	t.Top = top
	return t, nil
}
