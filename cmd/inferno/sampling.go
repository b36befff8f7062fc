package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"inferno/sampling"
)

// samplingFlags are the sampling flags generate and chat share.
type samplingFlags struct {
	temperature, topP, minP    float64
	topK                       int
	repetition, presence, freq float64
	seed                       int64
	stop                       []string
	ignoreEOS                  bool
}

// register adds the flags with the given defaults for temperature, top_p
// and top_k.
func (f *samplingFlags) register(cmd *cobra.Command, temp, topP float64, topK int) {
	f.registerSampling(cmd, temp, topP, topK)
	fl := cmd.Flags()
	fl.StringArrayVar(&f.stop, "stop", nil, "stop at this string, not printed (repeatable, at most 4)")
	fl.BoolVar(&f.ignoreEOS, "ignore-eos", false, "keep generating past end-of-generation tokens")
}

// registerSampling adds the flags of the sampling parameters alone (no
// stop strings), with the given defaults for temperature, top_p and top_k.
func (f *samplingFlags) registerSampling(cmd *cobra.Command, temp, topP float64, topK int) {
	fl := cmd.Flags()
	fl.Float64Var(&f.temperature, "temperature", temp, "sampling temperature, 0 to 2 (0: greedy)")
	fl.Float64Var(&f.topP, "top-p", topP, "nucleus sampling: keep the most likely tokens up to this total probability, (0, 1]")
	fl.IntVar(&f.topK, "top-k", topK, "keep the k most likely tokens (0: all)")
	fl.Float64Var(&f.minP, "min-p", 0, "drop tokens less likely than min-p times the most likely one, [0, 1]")
	fl.Float64Var(&f.repetition, "repetition-penalty", 1, "divide the logits of tokens already seen (prompt and reply) by this, (0, 2]")
	fl.Float64Var(&f.presence, "presence-penalty", 0, "subtract this from the logits of tokens generated so far, [-2, 2]")
	fl.Float64Var(&f.freq, "frequency-penalty", 0, "subtract this times their count from the logits of tokens generated so far, [-2, 2]")
	fl.Int64Var(&f.seed, "seed", -1, "random seed: the same seed and prompt give the same text (-1: a random seed)")
}

// params returns the flags as sampling parameters, checked.
func (f *samplingFlags) params() (sampling.Params, error) {
	p := sampling.Params{
		Temperature: float32(f.temperature), TopP: float32(f.topP), TopK: f.topK, MinP: float32(f.minP),
		RepetitionPenalty: float32(f.repetition), PresencePenalty: float32(f.presence), FrequencyPenalty: float32(f.freq),
	}
	if f.seed >= 0 {
		p.Seed, p.HasSeed = uint64(f.seed), true
	}
	if !(f.topP > 0 && f.topP <= 1) {
		return p, fmt.Errorf("--top-p %v: want a value in (0, 1]", f.topP)
	}
	if !(f.repetition > 0 && f.repetition <= 2) {
		return p, fmt.Errorf("--repetition-penalty %v: want a value in (0, 2]", f.repetition)
	}
	if f.topK < 0 {
		return p, fmt.Errorf("--top-k %d: want 0 (off) or more", f.topK)
	}
	if len(f.stop) > 4 {
		return p, fmt.Errorf("--stop given %d times: at most 4 stop strings", len(f.stop))
	}
	for _, s := range f.stop {
		if s == "" {
			return p, fmt.Errorf("--stop: a stop string must not be empty")
		}
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	return p, nil
}
