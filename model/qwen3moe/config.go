// Package qwen3moe is the Qwen3 mixture-of-experts architecture
// (Qwen3-30B-A3B, Qwen3-235B-A22B): its configuration and options and its
// weights as read from a GGUF file, described for the backends by package
// arch (whose doc comment gives a layer's computation).
//
// Qwen3-MoE is Qwen3's attention (QK-norm, NeoX RoPE without scaling, no
// biases) with a mixture of experts in place of every feed-forward layer:
// a router (ffn_gate_inp) scores the experts by the softmax of its
// logits, the expert_used_count best run their SwiGLU feed-forwards
// (ffn_gate_exps, ffn_up_exps, ffn_down_exps: the experts' matrices
// stacked in 3-D tensors, as llama.cpp's converter writes them), and
// their outputs are summed, weighted by the scores renormalized over the
// chosen experts (norm_topk_prob).
package qwen3moe

import (
	"fmt"

	"inferno/arch"
	"inferno/gguf"
)

// Architecture is the value of general.architecture for Qwen3-MoE files.
const Architecture = "qwen3moe"

// ConfigFromGGUF reads the configuration from f's metadata (the keys
// arch.ReadConfigDefaultHeadDim reads under "qwen3moe.", the experts'
// among them: a checkpoint without head_dim gets no key_length, as
// llama.cpp's converter writes it) and
// sets Qwen3-MoE's options. The chosen experts' weights are renormalized
// unless qwen3moe.expert_weights_norm says false: llama.cpp renormalizes
// them in every qwen3moe file (its converter writes no such key, every
// released Qwen3-MoE has norm_topk_prob true), and inferno's converter
// writes the key from norm_topk_prob. The vocabulary size comes from the
// token embedding's shape.
func ConfigFromGGUF(f *gguf.File) (arch.Config, error) {
	c, err := arch.ReadConfigDefaultHeadDim(f, Architecture)
	if err != nil {
		return arch.Config{}, err
	}
	if !c.MoE.Enabled() {
		return arch.Config{}, fmt.Errorf("qwen3moe: no experts (%s.expert_count); a dense Qwen3 is a %q file", Architecture, "qwen3")
	}
	if c.MoE.Gating != arch.GateSoftmax {
		return arch.Config{}, fmt.Errorf("qwen3moe: expert gating %v; Qwen3-MoE's router is a softmax", c.MoE.Gating)
	}
	if _, ok := f.Value(Architecture + ".expert_weights_norm"); !ok {
		c.MoE.NormTopK = true
	}
	Options(&c)
	return c, c.Validate()
}
