// Package llama is the Llama architecture (Llama 3.x and the models that
// share its layout): its configuration and options and its weights as
// read from a GGUF file, described for the backends by package arch
// (whose doc comment gives a layer's computation).
//
// Llama is a dense decoder with grouped-query attention, no biases and no
// QK-norm, RoPE on adjacent pairs (llama.cpp's converter permutes the rows
// of the query and key projections so that this rotation computes
// transformers' rotate_half), with Llama 3.1's frequency scaling as the
// per-pair factors of rope_freqs.weight, a SwiGLU feed-forward, and an
// output head tied to the embedding (Llama 3.2 1B and 3B) or not.
package llama

import (
	"fmt"

	"inferno/arch"
	"inferno/gguf"
)

// Architecture is the value of general.architecture for Llama files.
const Architecture = "llama"

// ConfigFromGGUF reads the configuration from f's metadata (the keys
// arch.ReadConfigDefaultHeadDim reads under "llama.", and Llama 3's RoPE
// scaling from rope_freqs.weight) and sets Llama's options. The
// vocabulary size comes from the token embedding's shape.
func ConfigFromGGUF(f *gguf.File) (arch.Config, error) {
	c, err := arch.ReadConfigDefaultHeadDim(f, Architecture)
	if err != nil {
		return arch.Config{}, err
	}
	if c.MoE.Enabled() {
		return arch.Config{}, fmt.Errorf("llama: %d experts: inferno runs dense Llama models, not mixtures of experts (Mixtral)", c.MoE.Experts)
	}
	if _, ok := f.Tensor(arch.RoleQBias.Tensor(0)); ok {
		return arch.Config{}, fmt.Errorf("llama: tensor %q: Llama models with attention biases are not supported", arch.RoleQBias.Tensor(0))
	}
	Options(&c)
	return c, c.Validate()
}
