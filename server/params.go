package server

import (
	"encoding/json"
	"math"
	"strconv"

	"inferno/engine"
	"inferno/sampling"
)

// maxStops is the most stop strings a request may give (OpenAI's limit).
const maxStops = 4

// maxChoices is the most choices (n) a chat completion may ask for.
const maxChoices = 16

// choices returns the request's n, the choices to generate: 1 when absent,
// at most most.
func (f *samplingFields) choices(most int) (int, *apiError) {
	switch {
	case f.N == nil:
		return 1, nil
	case most == 1 && *f.N != 1:
		return 0, badRequest("n", "n = %d: only n = 1 is supported here (one choice per request)", *f.N)
	case *f.N < 1 || *f.N > most:
		return 0, badRequest("n", "n = %d: want 1 to %d choices", *f.N, most)
	}
	return *f.N, nil
}

// sampling returns the request's sampling parameters, checked. OpenAI's
// defaults apply to what is absent: temperature 1, top_p 1, no other
// filter or penalty.
func (f *samplingFields) sampling(vocab int) (sampling.Params, *apiError) {
	p := sampling.Params{Temperature: 1}
	if v := f.Temperature; v != nil {
		if !(*v >= 0 && *v <= 2) {
			return p, badRequest("temperature", "temperature %v is outside [0, 2]", *v)
		}
		p.Temperature = float32(*v)
	}
	if v := f.TopP; v != nil {
		if !(*v > 0 && *v <= 1) {
			return p, badRequest("top_p", "top_p %v is outside (0, 1]", *v)
		}
		p.TopP = float32(*v)
	}
	if v := f.TopK; v != nil {
		switch {
		case *v == -1: // vLLM's spelling of "off"
		case *v < 0:
			return p, badRequest("top_k", "top_k %d must be 0 or -1 (off) or positive", *v)
		default:
			p.TopK = min(*v, vocab)
		}
	}
	if v := f.MinP; v != nil {
		if !(*v >= 0 && *v <= 1) {
			return p, badRequest("min_p", "min_p %v is outside [0, 1]", *v)
		}
		p.MinP = float32(*v)
	}
	if v := f.RepetitionPenalty; v != nil {
		if !(*v > 0 && *v <= 2) {
			return p, badRequest("repetition_penalty", "repetition_penalty %v is outside (0, 2]", *v)
		}
		p.RepetitionPenalty = float32(*v)
	}
	if v := f.PresencePenalty; v != nil {
		if !(*v >= -2 && *v <= 2) {
			return p, badRequest("presence_penalty", "presence_penalty %v is outside [-2, 2]", *v)
		}
		p.PresencePenalty = float32(*v)
	}
	if v := f.FrequencyPenalty; v != nil {
		if !(*v >= -2 && *v <= 2) {
			return p, badRequest("frequency_penalty", "frequency_penalty %v is outside [-2, 2]", *v)
		}
		p.FrequencyPenalty = float32(*v)
	}
	if f.Seed != nil {
		p.Seed, p.HasSeed = uint64(*f.Seed), true
	}
	if len(f.LogitBias) > 0 {
		p.LogitBias = make(map[int32]float32, len(f.LogitBias))
		for k, v := range f.LogitBias {
			id, err := strconv.ParseInt(k, 10, 32)
			if err != nil || id < 0 || int(id) >= vocab {
				return p, badRequest("logit_bias", "logit_bias: %q is not a token id (0 to %d)", k, vocab-1)
			}
			if !(v >= -100 && v <= 100) || math.IsNaN(v) {
				return p, badRequest("logit_bias", "logit_bias[%s] = %v is outside [-100, 100]", k, v)
			}
			p.LogitBias[int32(id)] = float32(v)
		}
	}
	if err := p.Validate(); err != nil {
		return p, badRequest("", "%v", err)
	}
	return p, nil
}

// request checks the fields chat and completions share and returns the
// generation of prompt they ask for: at most limit tokens (0: until the
// context is full) with the given log-probabilities.
func (f *samplingFields) request(m *Model, prompt []int32, limit int, logprobs bool, top int) (engine.Request, *apiError) {
	p, e := f.sampling(m.Vocab)
	if e != nil {
		return engine.Request{}, e
	}
	p.Logprobs, p.TopLogprobs = logprobs, top
	stopList, e := stops(f.Stop)
	if e != nil {
		return engine.Request{}, e
	}
	return engine.Request{Prompt: prompt, MaxTokens: limit, Sampling: p, Stop: stopList, EOG: m.EOG, IgnoreEOS: f.IgnoreEOS}, nil
}

// maxTokens returns the most tokens to generate (0: until the context is
// full) from max_tokens or its newer name max_completion_tokens.
func maxTokens(param string, v *int, alt *int) (int, *apiError) {
	if v == nil {
		v, param = alt, "max_completion_tokens"
	}
	if v == nil {
		return 0, nil
	}
	if *v < 1 {
		return 0, badRequest(param, "%s = %d: want at least 1", param, *v)
	}
	return *v, nil
}

// stops parses "stop": a string or an array of up to four strings.
func stops(raw json.RawMessage) ([]string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		list = []string{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequest("stop", "stop must be a string or an array of strings")
	}
	if len(list) > maxStops {
		return nil, badRequest("stop", "stop has %d strings; at most %d are allowed", len(list), maxStops)
	}
	for _, s := range list {
		if s == "" {
			return nil, badRequest("stop", "stop strings must not be empty")
		}
	}
	return list, nil
}
