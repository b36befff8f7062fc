package arch

// ForContext returns m as a run whose sequences hold up to n positions
// computes it. With LongRoPE scaling (in Rope or LocalRope) its
// configuration is a copy of m's whose RoPE takes the long factors
// (Rope.Long) when n exceeds Rope.OrigContext and the short ones
// otherwise: llama.cpp's rule (get_rope_factors, by the context of a
// sequence). transformers chooses by each sequence's own length instead;
// the two agree on every sequence when n is at most OrigContext, and on
// every sequence longer than OrigContext. m's own configuration is left
// as the file describes it; a model without LongRoPE is returned as it
// is.
func ForContext(m Model, n int) Model {
	if in, ok := m.(*atContext); ok {
		m = in.Model
	}
	c := m.Hyper()
	if c.Rope.Scaling != ScaleLongRoPE && c.LocalRope.Scaling != ScaleLongRoPE {
		return m
	}
	run := &atContext{Model: m, c: *c}
	for _, r := range []*Rope{&run.c.Rope, &run.c.LocalRope} {
		if r.Scaling == ScaleLongRoPE {
			r.Long = n > r.OrigContext
		}
	}
	return run
}

// atContext is a model with the choices ForContext made in a copy of its
// configuration.
type atContext struct {
	Model
	c Config
}

// Hyper returns the configuration with the run's choices.
func (m *atContext) Hyper() *Config { return &m.c }
