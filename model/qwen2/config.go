// Package qwen2 is the Qwen2 architecture (Qwen2 and Qwen2.5): its
// configuration and options and its weights as read from a GGUF file,
// described for the backends by package arch (whose doc comment gives a
// layer's computation).
//
// Qwen2 is a dense decoder with grouped-query attention whose Q, K and V
// projections add a learned bias, no QK-norm, NeoX-style RoPE, a SwiGLU
// feed-forward, and an output head tied to the embedding in the small
// models (no output.weight).
package qwen2

import (
	"fmt"

	"inferno/arch"
	"inferno/gguf"
)

// Architecture is the value of general.architecture for Qwen2 files.
const Architecture = "qwen2"

// ConfigFromGGUF reads the configuration from f's metadata (the keys
// arch.ReadConfigDefaultHeadDim reads under "qwen2.": Qwen2's checkpoints
// state no head_dim) and sets Qwen2's options. The vocabulary size comes
// from the token embedding's shape.
func ConfigFromGGUF(f *gguf.File) (arch.Config, error) {
	c, err := arch.ReadConfigDefaultHeadDim(f, Architecture)
	if err != nil {
		return arch.Config{}, err
	}
	if c.MoE.Enabled() {
		return arch.Config{}, fmt.Errorf("qwen2: %d experts: Qwen2 is dense (its mixture-of-experts models are %q files)", c.MoE.Experts, "qwen2moe")
	}
	Options(&c)
	return c, c.Validate()
}
