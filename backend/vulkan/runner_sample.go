package vulkan

import (
	"errors"

	"inferno/sampling"
)

// Sampling on the device (engine.DeviceSampler): the rows set before a
// Forward are chosen after its logits in the same command buffer (the
// sampler's dispatches read every row's parameters from its buffers, so
// the recording of a shape serves any parameters), and a step reads back
// an id a row.

// samplerRows is the fewest rows a sampler is made for; it grows to the
// passes' outputs.
const samplerRows = 64

// CanSample reports whether the device samples under p.
func (r *BatchRunner) CanSample(p sampling.Params) bool {
	if err := r.ensureSampler(1); err != nil {
		return false
	}
	return r.samp.canSample(p)
}

// SetSamples sets how the outputs of the next Forward are chosen: rows[i]
// for output i.
func (r *BatchRunner) SetSamples(rows []sampling.Row) error {
	if err := r.ensureSampler(len(rows)); err != nil {
		return err
	}
	on := false
	for i := range rows {
		on = on || rows[i].On
	}
	r.sampleNext = false
	if !on {
		return nil
	}
	if err := r.samp.set(rows); err != nil {
		return err
	}
	r.sampleNext, r.sampleRows = true, len(rows)
	return nil
}

// Sampled returns the token the last Forward chose for output i.
func (r *BatchRunner) Sampled(i int) (sampling.Token, error) {
	if !r.sampledLast {
		return sampling.Token{}, errors.New("vulkan: the last forward pass sampled nothing")
	}
	return r.samp.sampled(i)
}

// ensureSampler makes the sampler hold rows rows.
func (r *BatchRunner) ensureSampler(rows int) error {
	if r.samp != nil && r.samp.maxRows >= rows {
		return nil
	}
	n := samplerRows
	if r.samp != nil {
		n = 2 * r.samp.maxRows
	}
	for n < rows {
		n *= 2
	}
	s, err := newDevSampler(r.d, r.c.Vocab, n)
	if err != nil {
		return err
	}
	if r.samp != nil {
		r.samp.close()
	}
	r.samp = s
	r.resetGraphs() // the recordings name the old sampler's buffers
	return nil
}
