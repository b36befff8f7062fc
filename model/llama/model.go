package llama

import (
	"inferno/arch"
	"inferno/gguf"
)

// Model is a Llama model's configuration and weights. It implements
// arch.Model. Matrices point into the memory-mapped GGUF file; norm gains
// are copied out as float32.
type Model struct {
	Config arch.Config
	arch.Weights
	plan []arch.Step // the forward pass's operations, made by Load
}

// Load reads the configuration and weights of a Llama model from f. Every
// tensor's presence, type and shape is checked against the configuration.
// The model refers to f's memory, so f must stay open while it is used.
func Load(f *gguf.File) (*Model, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	w, err := arch.Load(f, &cfg)
	if err != nil {
		return nil, err
	}
	return &Model{Config: cfg, Weights: *w, plan: arch.NewPlan(&cfg)}, nil
}

// Hyper returns the configuration.
func (m *Model) Hyper() *arch.Config { return &m.Config }

// Plan returns the steps of a forward pass (arch.NewPlan): every layer's
// five operations.
func (m *Model) Plan() []arch.Step { return m.plan }

// Tensors returns the weights by role.
func (m *Model) Tensors() *arch.Weights { return &m.Weights }
