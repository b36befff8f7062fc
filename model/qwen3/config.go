// Package qwen3 is the Qwen3 architecture: its configuration and options
// and its weights as read from a GGUF file, described for the backends by
// package arch (whose doc comment gives a layer's computation).
//
// Qwen3 is a dense decoder with QK-norm (per-head RMSNorm of queries and
// keys before RoPE), NeoX-style RoPE without scaling, no biases, a SwiGLU
// feed-forward, and an output head tied to the embedding in the small
// models (no output.weight).
package qwen3

import (
	"fmt"

	"inferno/arch"
	"inferno/gguf"
)

// Architecture is the value of general.architecture for Qwen3 files.
const Architecture = "qwen3"

// ConfigFromGGUF reads the configuration from f's metadata (the keys
// arch.ReadConfig reads under "qwen3.") and sets Qwen3's options. The
// vocabulary size comes from the token embedding's shape.
func ConfigFromGGUF(f *gguf.File) (arch.Config, error) {
	c, err := arch.ReadConfig(f, Architecture)
	if err != nil {
		return arch.Config{}, err
	}
	if c.MoE.Enabled() {
		return arch.Config{}, fmt.Errorf("qwen3: %d experts: Qwen3 is dense (its mixture-of-experts models are %q files)", c.MoE.Experts, "qwen3moe")
	}
	Options(&c)
	return c, c.Validate()
}
