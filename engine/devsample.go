package engine

import "inferno/sampling"

// A DeviceSampler is a BatchRunner that can choose the tokens of its
// outputs itself, where it computed the logits (the CUDA runner, on the
// GPU), under each output's sampling parameters: a step then reads back
// one id per output (plus the log-probabilities asked for) instead of the
// logits. The tokens are drawn from the distribution package sampling
// defines, with random numbers that depend only on the seed and the index
// of the token drawn, so that a seeded request gives the same tokens
// whatever else runs in the batch (given the same logits).
type DeviceSampler interface {
	// CanSample reports whether the runner samples under p itself.
	CanSample(p sampling.Params) bool
	// SetSamples sets how the outputs of the next Forward are chosen:
	// rows[i] for output i. It must be called before each Forward that
	// samples (the rows are used once); rows with On false are left to
	// Logits and Greedy, as without it. len(rows) must be the number of
	// the Forward's outputs.
	SetSamples(rows []sampling.Row) error
	// Sampled returns the token the last Forward chose for output i,
	// whose row was On, with the log-probabilities asked for; Token.Top
	// is reused by the next Forward. sampling.ErrNotDrawn reports a row
	// the runner left to the host (a top_p nucleus larger than it
	// handles): the caller samples from Logits, which are the model's.
	Sampled(i int) (sampling.Token, error)
}

// SampledOutput is an Output whose runner chose the token itself (see
// DeviceSampler).
type SampledOutput interface {
	Output
	Sampled() (sampling.Token, error)
}

// DeviceRow fills row with what a DeviceSampler needs to choose the
// sequence's next token when can accepts its parameters, and reports
// whether it did; the scheduler then hands Advance an Output that is a
// SampledOutput. Greedy requests without log-probabilities are left to
// the runner's argmax (Output.Greedy) unless mask is given. mask (nil:
// none; Sequence.Mask) restricts the choice to the allowed tokens; it is
// kept by the row.
func (s *Sequence) DeviceRow(row *sampling.Row, can func(sampling.Params) bool, mask []uint64) bool {
	s.onDevice = false
	*row = sampling.Row{Patches: row.Patches[:0]}
	if s.done || len(s.todo) == 0 || (s.greedy && mask == nil) || !can(s.req.Sampling) {
		return false
	}
	*row = sampling.Row{
		On:      true,
		Params:  s.req.Sampling,
		Seed:    s.sampler.Seed(),
		Index:   s.out,
		Patches: s.sampler.Patches(row.Patches),
		Mask:    mask,
	}
	s.onDevice = true
	return true
}
