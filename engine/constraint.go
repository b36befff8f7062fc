package engine

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"inferno/sampling"
)

// A Constraint restricts the tokens a sequence may generate to those a
// grammar allows (structured output: a JSON schema, a GBNF grammar, a
// forced tool call). The sequence asks it, before each pick, whether the
// pick is constrained and which tokens are allowed, and tells it every
// token it generated. A Constraint serves one sequence; the sequence's
// goroutine uses it alone, except that a scheduler may call FillMask on
// another goroutine while no Accept runs (Sequence.PrepareMask).
type Constraint interface {
	// Active reports whether the next token is constrained. A constraint
	// may start inactive and become active on a token it sees in Accept
	// (the end of the model's reasoning, </think>).
	Active() bool
	// FillMask sets, in mask, bit id%64 of word id/64 for every token id
	// allowed next and clears the others; len(mask) is MaskWords of the
	// vocabulary. End-of-generation ids are allowed exactly where the
	// grammar may end. It is called only while Active.
	FillMask(mask []uint64)
	// Accept records the generated token id (every one, active or not).
	// It fails when the token was not allowed.
	Accept(id int32) error
	// Done reports that the grammar has been matched to its end: the
	// sequence finishes with FinishStop.
	Done() bool
}

// MaskWords returns the 64-bit words of a token mask over vocab tokens.
func MaskWords(vocab int) int { return (vocab + 63) / 64 }

// ErrNoAllowedToken reports a constraint that allowed no token at all (a
// grammar that cannot go on and cannot end); the sequence fails with it.
var ErrNoAllowedToken = errors.New("engine: the constraint allows no token")

// negInf64 is a word's worth of disallowed logits.
var negInf64 = func() (v [64]float32) {
	for i := range v {
		v[i] = float32(math.Inf(-1))
	}
	return v
}()

// MaskLogits sets the logits of the tokens mask does not allow to -Inf and
// reports whether mask allows any token of logits.
func MaskLogits(logits []float32, mask []uint64) bool {
	inf := float32(math.Inf(-1))
	any := false
	for w, word := range mask {
		base := w * 64
		if base >= len(logits) {
			break
		}
		n := min(64, len(logits)-base)
		if n < 64 {
			word &= 1<<n - 1
		}
		if word != 0 {
			any = true
		}
		row := logits[base : base+n]
		switch word {
		case 1<<64 - 1:
			continue
		case 0:
			copy(row, negInf64[:])
			continue
		}
		for z := ^word; z != 0; z &= z - 1 {
			if i := bits.TrailingZeros64(z); i < n {
				row[i] = inf
			}
		}
	}
	for i := len(mask) * 64; i < len(logits); i++ {
		logits[i] = inf
	}
	return any
}

// allowed reports whether mask allows token id.
func allowed(mask []uint64, id int32) bool {
	w := int(id) / 64
	return id >= 0 && w < len(mask) && mask[w]&(1<<(uint(id)%64)) != 0
}

// firstAllowed returns the lowest id mask allows below vocab, or -1.
func firstAllowed(mask []uint64, vocab int) int32 {
	for w, word := range mask {
		if word != 0 {
			id := w*64 + bits.TrailingZeros64(word)
			if id < vocab {
				return int32(id)
			}
			return -1
		}
	}
	return -1
}

// constraintState is a sequence's view of its Constraint: the mask buffer
// and whether it holds the mask for the next pick already.
type constraintState struct {
	c     Constraint
	mask  []uint64
	ready bool // mask was filled for the next pick (PrepareMask)
	// The allowed ids and their logits, when they are few.
	ids  []int32
	vals []float32
}

// PrepareMask computes the token mask of the sequence's next pick ahead
// of time, so that a scheduler can overlap it with the forward pass whose
// logits the pick reads: call it after the last Advance and before the
// next, from any one goroutine while nothing else uses the sequence. It
// does nothing for an unconstrained sequence or an inactive constraint.
func (s *Sequence) PrepareMask() {
	cs := s.cons
	if cs == nil || cs.ready || s.done || !cs.c.Active() {
		return
	}
	cs.c.FillMask(cs.mask)
	cs.ready = true
}

// Constrained reports whether the sequence's next pick is constrained.
func (s *Sequence) Constrained() bool {
	return s.cons != nil && !s.done && s.cons.c.Active()
}

// Mask returns the token mask of the next pick, computing it when
// PrepareMask has not, or nil when the pick is not constrained: for a
// runner that applies the mask where the logits are. The slice is reused
// after the pick.
func (s *Sequence) Mask() []uint64 {
	if !s.Constrained() {
		return nil
	}
	s.PrepareMask()
	return s.cons.mask
}

// sparseCandidates is the most allowed tokens a constrained pick samples
// as a list of candidates (their ids and logits) instead of the whole
// masked vocabulary: JSON punctuation, a number's digits, an enumeration.
const sparseCandidates = 4096

// pickConstrained chooses the next token among those the constraint
// allows: the others are impossible before the logit bias, the penalties
// and the filters apply, so greedy decoding picks the largest allowed
// logit and sampling draws among the allowed tokens alone. A few allowed
// tokens are sampled as candidates; many, from the logits with the others
// set to -Inf.
func (s *Sequence) pickConstrained(out Output) (sampling.Token, error) {
	cs := s.cons
	if !cs.ready {
		cs.c.FillMask(cs.mask)
	}
	cs.ready = false
	logits, err := out.Logits()
	if err != nil {
		return sampling.Token{}, err
	}
	if ids := cs.gather(len(logits)); ids != nil {
		if len(ids) == 0 {
			return sampling.Token{}, ErrNoAllowedToken
		}
		cs.vals = cs.vals[:0]
		for _, id := range ids {
			cs.vals = append(cs.vals, logits[id])
		}
		return s.sampler.SampleCandidates(ids, cs.vals)
	}
	if !MaskLogits(logits, cs.mask) {
		return sampling.Token{}, ErrNoAllowedToken
	}
	tok, err := s.sampler.Sample(logits)
	if err != nil {
		return sampling.Token{}, err
	}
	if !allowed(cs.mask, tok.ID) {
		// Every allowed logit is NaN or -Inf: take the lowest allowed id
		// rather than break the grammar.
		if tok.ID = firstAllowed(cs.mask, len(logits)); tok.ID < 0 {
			return sampling.Token{}, ErrNoAllowedToken
		}
	}
	return tok, nil
}

// gather returns the ids the mask allows below vocab, in order, when
// there are at most sparseCandidates of them, and nil when there are more.
func (cs *constraintState) gather(vocab int) []int32 {
	cs.ids = cs.ids[:0]
	for w, word := range cs.mask {
		for ; word != 0; word &= word - 1 {
			id := w*64 + bits.TrailingZeros64(word)
			if id >= vocab {
				return cs.ids
			}
			if len(cs.ids) == sparseCandidates {
				return nil
			}
			cs.ids = append(cs.ids, int32(id))
		}
	}
	return cs.ids
}

// acceptConstrained tells the constraint the generated token id.
func (s *Sequence) acceptConstrained(id int32) error {
	if err := s.cons.c.Accept(id); err != nil {
		return fmt.Errorf("engine: constraint: %w", err)
	}
	return nil
}
