package qwen3moe

import (
	"inferno/arch"
	"inferno/gguf"
)

// Model is a Qwen3-MoE model's configuration and weights: an arch.Loaded,
// which implements arch.Model.
type Model = arch.Loaded

// Load reads the configuration (ConfigFromGGUF) and weights of a
// Qwen3-MoE model from f, checking every tensor's presence, type and shape
// (the expert stacks' three dimensions among them) against the
// configuration. The model refers to f's memory, so f must stay open
// while it is used.
func Load(f *gguf.File) (*Model, error) { return arch.LoadModel(f, ConfigFromGGUF) }
