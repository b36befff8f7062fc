package arch

import "inferno/gguf"

// Loaded is a model read from a GGUF file by LoadModel: its configuration,
// weights and plan. It implements Model. Matrices point into the
// memory-mapped file; norm gains are copied out as float32. An
// architecture's package states only its options (its ConfigFromGGUF) and
// loads through LoadModel.
type Loaded struct {
	Config Config
	Weights
	plan []Step // the forward pass's operations, made by LoadModel
}

// LoadModel reads a model's configuration from f with config (an
// architecture's reader, which sets its options) and its weights with
// Load: every tensor's presence, type and shape is checked against the
// configuration. The model refers to f's memory, so f must stay open
// while it is used.
func LoadModel(f *gguf.File, config func(*gguf.File) (Config, error)) (*Loaded, error) {
	c, err := config(f)
	if err != nil {
		return nil, err
	}
	w, err := Load(f, &c)
	if err != nil {
		return nil, err
	}
	return &Loaded{Config: c, Weights: *w, plan: NewPlan(&c)}, nil
}

// Hyper returns the configuration.
func (m *Loaded) Hyper() *Config { return &m.Config }

// Plan returns the steps of a forward pass (NewPlan).
func (m *Loaded) Plan() []Step { return m.plan }

// Tensors returns the weights by role.
func (m *Loaded) Tensors() *Weights { return &m.Weights }
