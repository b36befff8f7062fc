package sampling

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
)

// A Token is a chosen token, with its log-probabilities when they were
// asked for.
type Token struct {
	ID int32
	// Logprob is the chosen token's log-probability under the raw logits
	// (see the package documentation); 0 unless Params.Logprobs is set.
	Logprob float32
	// Top holds the Params.TopLogprobs most likely tokens under the raw
	// logits, most likely first, ties by lower id. Tokens whose raw logit
	// is NaN or -Inf are left out. Top is reused by the Sampler's next
	// call.
	Top []TokenLogprob
}

// A TokenLogprob is a token's log-probability.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// A Sampler chooses tokens for one sequence under fixed Params. It records
// the prompt and the tokens generated so far for the penalties. A Sampler
// is not safe for concurrent use.
//
// All the memory a Sampler uses is allocated by New (and, for
// SampleCandidates, by its first call): sampling a token allocates
// nothing. A Sampler holds about 27 bytes per vocabulary entry, 8 more with
// Logprobs and 8 more once SampleCandidates is used.
type Sampler struct {
	p        Params
	vocab    int
	argmax   bool    // temperature 0 or top_k 1: the largest logit after bias and penalties
	invT     float32 // 1 / temperature
	topP     float32 // 0 when off
	lnMinP   float32 // -Inf when off
	rep      float32 // the repetition penalty; 1 when off
	penalize bool
	biasIDs  []int32 // the logit bias, sorted by id, zeros left out
	biasVals []float32

	seed uint64
	pcg  rand.PCG

	count    []int32 // by id: times generated
	inPrompt []bool  // by id: occurs in the prompt
	touched  []int32 // the ids with count > 0 or inPrompt, each once

	// The raw logits that bias and penalties overwrote, for logprobs.
	savedPos []int32
	savedVal []float32
	modified bool // modify changed some logit
	raw      rawStats
	rawTop   []cand  // the raw logits' top log-probabilities, by rank
	zAll     float64 // the sum of the weights above cutoff, when the sampling computes it
	top      []TokenLogprob

	w    []float32           // by position: weights (without top_k)
	wsum float64             // the sum of w
	kb   []uint16            // by position: bucket of log-weight (top_p without top_k)
	list []cand              // the candidates kept
	bsum [bucketsLen]float64 // by bucket: the sum of the weights

	// SampleCandidates' copy of its arguments, sorted by id.
	cand candSorter
}

// cand is a candidate token: its position in the logits, its logit after
// bias and penalties, and its weight, exp((logit - max) / temperature).
type cand struct {
	pos int32
	x   float32
	w   float32
}

// candSorter sorts ids and their logits together by id.
type candSorter struct {
	ids []int32
	x   []float32
}

func (c *candSorter) Len() int           { return len(c.ids) }
func (c *candSorter) Less(i, j int) bool { return c.ids[i] < c.ids[j] }
func (c *candSorter) Swap(i, j int) {
	c.ids[i], c.ids[j] = c.ids[j], c.ids[i]
	c.x[i], c.x[j] = c.x[j], c.x[i]
}

// seedStream selects the PCG stream; any fixed value would do.
const seedStream = 0x696e6665726e6f // "inferno"

// New returns a Sampler for a vocabulary of vocab tokens. It reports p's
// first invalid parameter (see Params.Validate) and LogitBias ids outside
// the vocabulary.
func New(p Params, vocab int) (*Sampler, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if vocab <= 0 {
		return nil, fmt.Errorf("sampling: vocabulary of %d tokens", vocab)
	}
	b := getBuffers(vocab)
	s := &Sampler{
		p:        p,
		vocab:    vocab,
		topP:     p.topP(),
		lnMinP:   p.lnMinP(),
		rep:      1,
		penalize: p.penalized(),
		count:    b.count,
		inPrompt: b.inPrompt,
		touched:  b.touched,
		w:        b.w,
		kb:       b.kb,
		list:     b.list,
	}
	if r := p.RepetitionPenalty; r != 0 {
		s.rep = r
	}
	s.invT = float32(1 / float64(p.Temperature))
	s.argmax = p.Argmax()
	for id, b := range p.LogitBias {
		if b != 0 || int(id) >= vocab {
			s.biasIDs = append(s.biasIDs, id)
		}
	}
	slices.Sort(s.biasIDs)
	if n := len(s.biasIDs); n > 0 && int(s.biasIDs[n-1]) >= vocab {
		i, _ := slices.BinarySearch(s.biasIDs, int32(vocab))
		return nil, fmt.Errorf("sampling: logit_bias token %d outside the vocabulary of %d tokens", s.biasIDs[i], vocab)
	}
	for _, id := range s.biasIDs {
		s.biasVals = append(s.biasVals, p.LogitBias[id])
	}
	if p.Logprobs {
		s.savedPos = make([]int32, 0, vocab+len(s.biasIDs))
		s.savedVal = make([]float32, 0, vocab+len(s.biasIDs))
		s.rawTop = make([]cand, 0, p.TopLogprobs)
		s.top = make([]TokenLogprob, 0, p.TopLogprobs)
	}
	s.seed = p.Seed
	if !p.HasSeed {
		s.seed = rand.Uint64()
	}
	s.pcg.Seed(s.seed, seedStream)
	return s, nil
}

// buffers are a Sampler's vocabulary-sized slices, kept between Samplers
// (Release, New) so that a server does not allocate and clear megabytes
// per request. In the pool count and inPrompt are all zero and touched
// and list empty.
type buffers struct {
	count    []int32
	inPrompt []bool
	touched  []int32
	w        []float32
	kb       []uint16
	list     []cand
}

var bufferPool sync.Pool // of *buffers

// getBuffers returns buffers for vocab tokens, reused when the pool holds
// some of that size.
func getBuffers(vocab int) *buffers {
	if b, ok := bufferPool.Get().(*buffers); ok && len(b.count) == vocab {
		return b
	}
	return &buffers{
		count:    make([]int32, vocab),
		inPrompt: make([]bool, vocab),
		touched:  make([]int32, 0, vocab),
		w:        make([]float32, vocab),
		kb:       make([]uint16, vocab),
		list:     make([]cand, 0, vocab),
	}
}

// Release hands the Sampler's buffers to the next New. The Sampler must
// not be used afterwards; releasing twice is a no-op.
func (s *Sampler) Release() {
	if s.count == nil {
		return
	}
	for _, id := range s.touched {
		s.count[id] = 0
		s.inPrompt[id] = false
	}
	bufferPool.Put(&buffers{count: s.count, inPrompt: s.inPrompt, touched: s.touched[:0], w: s.w, kb: s.kb, list: s.list[:0]})
	s.count, s.inPrompt, s.touched, s.w, s.kb, s.list = nil, nil, nil, nil, nil, nil
}

// SetPrompt records the prompt's tokens for the repetition penalty,
// replacing the prompt recorded before; the tokens recorded by Accept stay.
// Ids outside the vocabulary are ignored. Without a penalty nothing reads
// them, and nothing is recorded.
func (s *Sampler) SetPrompt(ids []int32) {
	if !s.penalize {
		return
	}
	kept := s.touched[:0]
	for _, id := range s.touched {
		s.inPrompt[id] = false
		if s.count[id] > 0 {
			kept = append(kept, id)
		}
	}
	s.touched = kept
	for _, id := range ids {
		if id < 0 || int(id) >= s.vocab || s.inPrompt[id] {
			continue
		}
		s.inPrompt[id] = true
		if s.count[id] == 0 {
			s.touched = append(s.touched, id)
		}
	}
}

// Accept records a generated token for the penalties (nothing without a
// penalty: a random access into two vocabulary-sized arrays a token, on
// the scheduler's path). An id outside the vocabulary is ignored.
func (s *Sampler) Accept(id int32) {
	if !s.penalize || id < 0 || int(id) >= s.vocab {
		return
	}
	if s.count[id] == 0 && !s.inPrompt[id] {
		s.touched = append(s.touched, id)
	}
	if s.count[id] < math.MaxInt32 {
		s.count[id]++
	}
}

// Reset forgets the prompt and the generated tokens, and restarts the
// random numbers: from Params.Seed when it was given, so that the Sampler
// repeats itself, and from a new random seed otherwise.
func (s *Sampler) Reset() {
	for _, id := range s.touched {
		s.count[id] = 0
		s.inPrompt[id] = false
	}
	s.touched = s.touched[:0]
	if !s.p.HasSeed {
		s.seed = rand.Uint64()
	}
	s.pcg.Seed(s.seed, seedStream)
}

// Sample chooses the next token from the logits of a position, one per
// vocabulary entry. It applies the logit bias and the penalties to logits
// in place, and changes nothing else there.
func (s *Sampler) Sample(logits []float32) (Token, error) {
	if len(logits) != s.vocab {
		return Token{}, fmt.Errorf("sampling: %d logits for a vocabulary of %d tokens", len(logits), s.vocab)
	}
	return s.sample(logits, nil), nil
}

// SampleCandidates chooses the next token among candidates: token ids and
// their logits, such as the top k a backend computed itself. Tokens left
// out are taken as impossible, so the probabilities are those of the
// softmax over the candidates alone; that holds for the log-probabilities
// too, which are then only upper bounds of the true ones. The logit bias
// and the penalties apply to the candidates present. When the candidates
// are the top k of the full logits, in any order, TopK is k and no bias or
// penalty applies, the token is the one Sample would choose from the full
// logits with the same seed. SampleCandidates does not modify ids or
// logits; it reports ids outside the vocabulary and repeated ids.
func (s *Sampler) SampleCandidates(ids []int32, logits []float32) (Token, error) {
	switch {
	case len(ids) != len(logits):
		return Token{}, fmt.Errorf("sampling: %d candidate ids with %d logits", len(ids), len(logits))
	case len(ids) == 0:
		return Token{}, errors.New("sampling: no candidates")
	case len(ids) > s.vocab:
		return Token{}, fmt.Errorf("sampling: %d candidates for a vocabulary of %d tokens", len(ids), s.vocab)
	}
	c := &s.cand
	if c.ids == nil {
		c.ids = make([]int32, 0, s.vocab)
		c.x = make([]float32, 0, s.vocab)
	}
	c.ids = append(c.ids[:0], ids...)
	c.x = append(c.x[:0], logits...)
	sorted := true
	for i, id := range c.ids {
		if id < 0 || int(id) >= s.vocab {
			return Token{}, fmt.Errorf("sampling: candidate token %d outside the vocabulary of %d tokens", id, s.vocab)
		}
		if i > 0 && id <= c.ids[i-1] {
			sorted = false
		}
	}
	if !sorted {
		sort.Sort(c)
		for i := 1; i < len(c.ids); i++ {
			if c.ids[i] == c.ids[i-1] {
				return Token{}, fmt.Errorf("sampling: candidate token %d given twice", c.ids[i])
			}
		}
	}
	return s.sample(c.x, c.ids), nil
}

// sample chooses a token from x, the logits of the tokens ids (sorted by
// id), or of the whole vocabulary in order when ids is nil.
func (s *Sampler) sample(x []float32, ids []int32) Token {
	if s.p.Logprobs {
		s.rawLogprobs(x)
	}
	s.modify(x, ids)
	var pos int
	switch {
	case s.argmax:
		pos = int(Argmax(x))
	default:
		u := s.uniform()
		var l []cand
		dense := false
		if s.p.TopK > 0 {
			l = s.keepTopK(x, s.p.TopK)
		} else {
			l, dense = s.keepAll(x)
		}
		pos = -1
		switch {
		case dense:
			pos = drawDense(s.w[:len(x)], s.wsum, u)
		case len(l) > 0:
			pos = drawList(l, u)
		}
		if pos < 0 {
			pos = int(Argmax(x))
		}
	}
	tok := Token{ID: int32(pos)}
	if ids != nil {
		tok.ID = ids[pos]
	}
	if s.p.Logprobs {
		s.finishLogprobs(ids)
		tok.Logprob = s.raw.logprob(s.rawAt(x, pos))
		if s.p.TopLogprobs > 0 {
			tok.Top = s.top
		}
	}
	return tok
}

// uniform returns a random number in [0, 1).
func (s *Sampler) uniform() float64 {
	return float64(s.pcg.Uint64()>>11) * 0x1p-53
}

// modify applies the logit bias and the penalties to x, saving the values
// it overwrites when log-probabilities are asked for.
func (s *Sampler) modify(x []float32, ids []int32) {
	s.modified = len(s.biasIDs) > 0 || s.penalize && len(s.touched) > 0
	save := s.p.Logprobs
	if save {
		s.savedPos = s.savedPos[:0]
		s.savedVal = s.savedVal[:0]
	}
	if ids == nil {
		for i, id := range s.biasIDs {
			if save {
				s.savedPos = append(s.savedPos, id)
				s.savedVal = append(s.savedVal, x[id])
			}
			x[id] += s.biasVals[i]
		}
		if s.penalize {
			for _, id := range s.touched {
				if save {
					s.savedPos = append(s.savedPos, id)
					s.savedVal = append(s.savedVal, x[id])
				}
				x[id] = s.penalty(x[id], id)
			}
		}
		return
	}
	s.modified = false
	if len(s.biasIDs) == 0 && !s.penalize {
		return
	}
	for pos, id := range ids {
		v, mod := x[pos], false
		if len(s.biasIDs) > 0 {
			if j, ok := slices.BinarySearch(s.biasIDs, id); ok {
				v += s.biasVals[j]
				mod = true
			}
		}
		if s.penalize && (s.count[id] > 0 || s.inPrompt[id]) {
			v = s.penalty(v, id)
			mod = true
		}
		if mod {
			s.modified = true
			if save {
				s.savedPos = append(s.savedPos, int32(pos))
				s.savedVal = append(s.savedVal, x[pos])
			}
			x[pos] = v
		}
	}
}

// penalty returns the logit v of a token of the prompt or of the generated
// text, penalized as Patch.Apply defines.
func (s *Sampler) penalty(v float32, id int32) float32 {
	return Patch{ID: id, Count: s.count[id], InPrompt: s.inPrompt[id]}.Apply(v, s.p)
}

// max returns the largest logit of x after modify that is not NaN, -Inf if
// none: the raw one, when it is known and modify changed nothing.
func (s *Sampler) max(x []float32) float32 {
	if s.p.Logprobs && !s.modified {
		return s.raw.max
	}
	return maxOf(x)
}

// rawAt returns the raw logit at pos, before modify.
func (s *Sampler) rawAt(x []float32, pos int) float32 {
	for i, p := range s.savedPos {
		if int(p) == pos {
			return s.savedVal[i] // the first save of pos is the raw value
		}
	}
	return x[pos]
}

// rawStats is what the log-softmax of the raw logits needs.
type rawStats struct {
	max  float32
	logZ float64 // log of the sum of exp(logit - max)
	inf  bool    // max is +Inf; logZ is the log of the number of +Inf logits
	// shared: the sampling computes the normalizer (sharesNormalizer)
	shared bool
}

// logprob returns the log-softmax of the raw logit v.
func (r *rawStats) logprob(v float32) float32 {
	if r.inf {
		switch {
		case v == r.max:
			return float32(-r.logZ)
		case v == v:
			return float32(math.Inf(-1))
		}
	}
	return float32(float64(v) - float64(r.max) - r.logZ)
}

// rawLogprobs starts on the log-softmax of the raw logits x, before
// modify: their maximum and top log-probabilities. It leaves the
// normalizer, a pass of exponentials over x, to finishLogprobs when the
// sampling will compute the same one.
func (s *Sampler) rawLogprobs(x []float32) {
	var m float32
	if n := s.p.TopLogprobs; n > 0 {
		s.rawTop = selectTop(x, n, s.rawTop)
		m = negInf
		if len(s.rawTop) > 0 {
			m = s.rawTop[0].x
		}
	} else {
		m = maxOf(x)
	}
	r := rawStats{max: m}
	switch {
	case m == posInf:
		n := 0
		for _, v := range x {
			if v == posInf {
				n++
			}
		}
		r.inf, r.logZ = true, math.Log(float64(n))
	case !(m > negInf):
		r.logZ = math.NaN()
	case s.sharesNormalizer():
		s.zAll, r.shared = math.NaN(), true
	default:
		r.logZ = math.Log(weights(x, s.w, m, 1, cutoff))
	}
	s.raw = r
}

// sharesNormalizer reports whether the sampling computes the normalizer of
// the raw logits into s.zAll: at temperature 1, without top_k, over the
// same logits (no bias or penalty changes them), with the usual cutoff.
func (s *Sampler) sharesNormalizer() bool {
	return s.invT == 1 && !s.argmax && s.p.TopK == 0 && (s.topP > 0 || s.lnMinP <= cutoff) &&
		len(s.biasIDs) == 0 && (!s.penalize || len(s.touched) == 0)
}

// finishLogprobs completes the log-softmax of the raw logits and fills
// s.top with the top log-probabilities.
func (s *Sampler) finishLogprobs(ids []int32) {
	if s.raw.shared {
		s.raw.logZ = math.Log(s.zAll)
	}
	s.top = s.top[:0]
	for _, c := range s.rawTop {
		id := c.pos
		if ids != nil {
			id = ids[c.pos]
		}
		s.top = append(s.top, TokenLogprob{ID: id, Logprob: s.raw.logprob(c.x)})
	}
}
