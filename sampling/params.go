package sampling

import (
	"fmt"
	"math"
)

// MaxTopLogprobs is the largest Params.TopLogprobs accepted.
const MaxTopLogprobs = 20

// Params are the sampling parameters of one request, with the semantics of
// OpenAI's API and vLLM. The zero value is greedy decoding.
type Params struct {
	// Temperature divides the logits before the softmax, in [0, 2].
	// 0 is greedy decoding: the largest logit after the logit bias and
	// the penalties, the lowest id among ties. Temperatures below about
	// 1e-36 are greedy too.
	Temperature float32
	// TopK keeps only the TopK most likely tokens (ties go to the lower
	// id); 0 turns it off.
	TopK int
	// TopP keeps the smallest set of most likely tokens whose
	// probabilities sum to at least TopP, in (0, 1]; 0 and 1 turn it off.
	TopP float32
	// MinP drops the tokens whose probability is below MinP times that
	// of the most likely token, in [0, 1]; 0 turns it off.
	MinP float32
	// RepetitionPenalty, in (0, 2], penalizes every token that occurs in
	// the prompt or in the generated text, as Hugging Face and vLLM do: a
	// positive logit is divided by it, any other multiplied by it. 0 and 1
	// turn it off.
	RepetitionPenalty float32
	// PresencePenalty, in [-2, 2], is subtracted from the logit of every
	// token that occurs in the generated text (not the prompt), as in
	// OpenAI's API.
	PresencePenalty float32
	// FrequencyPenalty, in [-2, 2], times the number of times a token
	// occurs in the generated text (not the prompt), is subtracted from
	// its logit.
	FrequencyPenalty float32
	// Seed seeds the random numbers when HasSeed is set: the same seed and
	// the same sequence of logits give the same tokens, on every platform.
	// Without a seed every Sampler draws its own random seed.
	Seed    uint64
	HasSeed bool
	// LogitBias is added to the logits of the given token ids, in
	// [-100, 100], before anything else (OpenAI's logit_bias).
	LogitBias map[int32]float32
	// Logprobs asks for the log-probability of each chosen token.
	Logprobs bool
	// TopLogprobs, in [0, MaxTopLogprobs], asks for the log-probabilities
	// of that many most likely tokens as well; it needs Logprobs.
	TopLogprobs int
}

// Validate reports the first parameter outside its range. Token ids in
// LogitBias are checked against the vocabulary by New.
func (p Params) Validate() error {
	switch {
	case !(p.Temperature >= 0 && p.Temperature <= 2):
		return fmt.Errorf("sampling: temperature %v outside [0, 2]", p.Temperature)
	case p.TopK < 0:
		return fmt.Errorf("sampling: top_k %d is negative (0 turns it off)", p.TopK)
	case !(p.TopP >= 0 && p.TopP <= 1):
		return fmt.Errorf("sampling: top_p %v outside (0, 1]", p.TopP)
	case !(p.MinP >= 0 && p.MinP <= 1):
		return fmt.Errorf("sampling: min_p %v outside [0, 1]", p.MinP)
	case !(p.RepetitionPenalty >= 0 && p.RepetitionPenalty <= 2):
		return fmt.Errorf("sampling: repetition_penalty %v outside (0, 2]", p.RepetitionPenalty)
	case !(p.PresencePenalty >= -2 && p.PresencePenalty <= 2):
		return fmt.Errorf("sampling: presence_penalty %v outside [-2, 2]", p.PresencePenalty)
	case !(p.FrequencyPenalty >= -2 && p.FrequencyPenalty <= 2):
		return fmt.Errorf("sampling: frequency_penalty %v outside [-2, 2]", p.FrequencyPenalty)
	case p.TopLogprobs < 0 || p.TopLogprobs > MaxTopLogprobs:
		return fmt.Errorf("sampling: top_logprobs %d outside [0, %d]", p.TopLogprobs, MaxTopLogprobs)
	case p.TopLogprobs > 0 && !p.Logprobs:
		return fmt.Errorf("sampling: top_logprobs %d needs logprobs", p.TopLogprobs)
	}
	// Report the lowest offending id, whatever the map's order.
	bad, found := int32(0), false
	for id, b := range p.LogitBias {
		if (id < 0 || !(b >= -100 && b <= 100)) && (!found || id < bad) {
			bad, found = id, true
		}
	}
	if found {
		if bad < 0 {
			return fmt.Errorf("sampling: logit_bias token %d is negative", bad)
		}
		return fmt.Errorf("sampling: logit_bias %v for token %d outside [-100, 100]", p.LogitBias[bad], bad)
	}
	return nil
}

// Greedy reports whether sampling with p always picks the token with the
// largest logit as the model gave it (the lowest id among ties), so that a
// backend may pick it itself, without handing the logits over: the
// temperature is 0 or TopK is 1, no LogitBias entry is other than 0, and no
// penalty is in effect (RepetitionPenalty 0 or 1, PresencePenalty and
// FrequencyPenalty 0). Log-probabilities, when asked for, still need the
// logits.
func (p Params) Greedy() bool {
	return (p.Temperature == 0 || p.TopK == 1) && !p.Patched()
}

// Patched reports whether the logit bias or a penalty changes logits
// (Sampler.Patches lists the tokens): a LogitBias entry other than 0, or
// a penalty in effect.
func (p Params) Patched() bool {
	if p.penalized() {
		return true
	}
	for _, b := range p.LogitBias {
		if b != 0 {
			return true
		}
	}
	return false
}

// penalized reports whether a penalty is in effect.
func (p Params) penalized() bool {
	return p.RepetitionPenalty != 0 && p.RepetitionPenalty != 1 ||
		p.PresencePenalty != 0 || p.FrequencyPenalty != 0
}

// Penalized reports whether a penalty is in effect: RepetitionPenalty
// other than 0 and 1, or PresencePenalty or FrequencyPenalty other than 0.
func (p Params) Penalized() bool { return p.penalized() }

// topP returns the top-p threshold in effect, 0 when off.
func (p Params) topP() float32 {
	if p.TopP >= 1 {
		return 0
	}
	return p.TopP
}

// lnMinP returns the log of the min-p ratio, -Inf when off.
func (p Params) lnMinP() float32 {
	if p.MinP <= 0 {
		return float32(math.Inf(-1))
	}
	return float32(ln(float64(p.MinP)))
}

// ln returns the natural logarithm of x > 0 (finite), to within 1e-15
// relative. Unlike math.Log, which is written in assembly on some
// platforms, it gives the same bits on all of them: min_p's threshold
// decides which tokens are kept.
func ln(x float64) float64 {
	frac, exp := math.Frexp(x) // x = frac * 2**exp, frac in [0.5, 1)
	m, e := 2*frac, exp-1
	if m > math.Sqrt2 {
		m, e = m/2, e+1
	}
	// ln m = 2 atanh(s) = 2 (s + s**3/3 + s**5/5 + ...), |s| <= 0.172.
	s := (m - 1) / (m + 1)
	s2 := float64(s * s)
	t := 1.0 / 21
	for k := 19; k >= 1; k -= 2 {
		t = float64(t*s2) + 1/float64(k)
	}
	return float64(float64(e)*math.Ln2) + float64(2*s*t)
}
