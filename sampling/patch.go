package sampling

import (
	"errors"
	"math"
	"slices"
)

// ErrNotDrawn is what a backend that samples where it computed the logits
// (engine.DeviceSampler) reports for a row it left to the Sampler: the
// caller samples from the row's logits, which the backend did not change.
var ErrNotDrawn = errors.New("sampling: the backend left this draw to the sampler")

// A Patch is what the logit bias and the penalties do to one token's
// logit: a backend that samples where it computed the logits (a GPU)
// applies Sampler.Patches to them in place of Sample's own step 2 and 3.
type Patch struct {
	ID int32
	// Bias is the logit bias (0 if none).
	Bias float32
	// Count is the number of times the token was generated; InPrompt
	// tells whether it occurs in the prompt.
	Count    int32
	InPrompt bool
}

// Apply returns the logit v of the patch's token after the logit bias and
// the penalties of p: the bias is added, then, for a token of the prompt
// or of the generated text, the repetition penalty divides a positive
// logit and multiplies any other, and for a generated token the frequency
// penalty times its count and the presence penalty are subtracted, as
// vLLM does. Every step is rounded to float32 on its own (no fused
// multiply-add), as the GPU's kernel does too.
func (pt Patch) Apply(v float32, p Params) float32 {
	v += pt.Bias
	if pt.Count <= 0 && !pt.InPrompt || !p.penalized() {
		return v
	}
	rep := p.RepetitionPenalty
	if rep == 0 {
		rep = 1
	}
	if v > 0 {
		v /= rep
	} else {
		v = float32(v * rep)
	}
	if pt.Count > 0 {
		v -= float32(p.FrequencyPenalty * float32(pt.Count))
		v -= p.PresencePenalty
	}
	return v
}

// Seed returns the seed of the Sampler's random numbers: Params.Seed, or
// the one it drew. A backend that draws its own random numbers keys them
// by it (with the index of the token drawn).
func (s *Sampler) Seed() uint64 { return s.seed }

// Patches appends to dst, sorted by id, the tokens whose logits the next
// Sample changes with the logit bias and the penalties, and returns it:
// every token with a logit bias, and, when a penalty is in effect, every
// token of the prompt or of the generated text so far.
func (s *Sampler) Patches(dst []Patch) []Patch {
	dst = dst[:0]
	for i, id := range s.biasIDs {
		dst = append(dst, Patch{ID: id, Bias: s.biasVals[i], Count: s.count[id], InPrompt: s.inPrompt[id]})
	}
	if !s.penalize {
		return dst
	}
	nb := len(dst)
	for _, id := range s.touched {
		if _, ok := slices.BinarySearch(s.biasIDs, id); ok {
			continue
		}
		dst = append(dst, Patch{ID: id, Count: s.count[id], InPrompt: s.inPrompt[id]})
	}
	if len(dst) > nb && nb > 0 {
		slices.SortFunc(dst, func(a, b Patch) int { return int(a.ID - b.ID) })
	}
	return dst
}

// LnMinP returns the log of p.MinP, the threshold min_p puts on a token's
// log-weight relative to the most likely token ((x - max)/T >= LnMinP
// keeps it), computed as the Sampler does; -Inf when min_p is off.
func (p Params) LnMinP() float32 { return p.lnMinP() }

// TopPOn returns top_p when it is in effect (in (0, 1)), else 0.
func (p Params) TopPOn() float32 { return p.topP() }

// Argmax reports whether p chooses the largest logit after the bias and
// the penalties (temperature 0, top_k 1, or a temperature so small that
// the Sampler treats it as 0), drawing no random number.
func (p Params) Argmax() bool {
	// Below about 1e-36 the scaled log-weights overflow: greedy.
	invT := float32(1 / float64(p.Temperature))
	return p.Temperature == 0 || p.TopK == 1 || math.IsInf(float64(invT*-expSteps), 0)
}

// A Row tells a backend that samples where it computed the logits (a GPU;
// engine.DeviceSampler) how to choose one output's token.
type Row struct {
	// On asks the backend to choose the token; the rest is then used.
	On     bool
	Params Params
	// Seed keys the random numbers (Sampler.Seed) and Index is the index
	// of the token drawn among the sequence's generated tokens.
	Seed  uint64
	Index int
	// Patches lists the tokens whose logits the logit bias and the
	// penalties change (Sampler.Patches).
	Patches []Patch
	// Mask, when not nil, holds the allowed tokens, one bit each (bit
	// id%64 of word id/64, as engine.Constraint fills it: on a
	// little-endian machine the same bytes as bit id%32 of 32-bit word
	// id/32): the others are excluded from the choice, greedy or sampled.
	Mask []uint64
}
