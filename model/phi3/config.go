// Package phi3 is the Phi-3 architecture as llama.cpp names it (Phi-3,
// Phi-3.5 and Phi-4, and Phi-4-mini): its configuration and options as
// read from a GGUF file, described for the backends by package arch
// (whose doc comment gives a layer's computation), and its entry in the
// registry of architectures.
//
// Phi-3 is a dense decoder like Llama but with NeoX RoPE, its Q, K and V
// projections fused in one matrix (attn_qkv) and its gate and up
// projections in another (ffn_up, the gate's rows first). Phi-4-mini
// rotates only three quarters of each head and scales RoPE with LongRoPE
// (per-pair factors for short and long contexts).
package phi3

import (
	"fmt"

	"inferno/arch"
	"inferno/gguf"
)

// Architecture is the value of general.architecture for Phi-3 files.
const Architecture = "phi3"

// ConfigFromGGUF reads the configuration from f's metadata (the keys
// arch.ReadConfigDefaultHeadDim reads under "phi3.") and sets Phi-3's
// options. Q, K and V are one tensor where the file has attn_qkv, three
// otherwise. LongRoPE's factors (Phi-3 128k, Phi-4-mini) are read as
// arch.ScaleLongRoPE; which set a run takes is the context's choice
// (arch.ForContext). llama.cpp's converter writes Phi-3's sliding_window, which
// llama.cpp ignores (every layer attends to the whole context), and so
// does inferno.
func ConfigFromGGUF(f *gguf.File) (arch.Config, error) {
	c, err := arch.ReadConfigDefaultHeadDim(f, Architecture)
	if err != nil {
		return arch.Config{}, err
	}
	if c.MoE.Enabled() {
		return arch.Config{}, fmt.Errorf("phi3: %d experts: Phi-3.5-MoE is not supported", c.MoE.Experts)
	}
	Options(&c)
	_, c.FusedQKV = f.Tensor("blk.0.attn_qkv.weight")
	return c, c.Validate()
}

// Options sets Phi-3's options on a configuration whose hyperparameters
// are filled in: NeoX RoPE, SwiGLU, fused Q/K/V and gate/up matrices.
func Options(c *arch.Config) {
	c.Rope.Style = arch.RopeNeoX
	c.Act = arch.SwiGLU
	c.FusedQKV = true
	c.FusedGateUp = true
}
