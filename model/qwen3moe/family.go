package qwen3moe

import (
	"inferno/arch"
	"inferno/family"
)

func init() { family.Register(Family) }

// Family is Qwen3-MoE's entry in the registry of architectures.
var Family = &family.Family{
	Name:    Architecture,
	Title:   "Qwen3-MoE",
	Config:  ConfigFromGGUF,
	Options: Options,
	Checkpoints: []family.Checkpoint{
		{HF: "Qwen3MoeForCausalLM", Title: "Qwen3-MoE", MaxPos: 32768, Vocab: 151936, HeadDimKeys: true,
			MoE: &family.CheckpointMoE{Experts: 128, TopK: 8, FFN: 768, NormKey: true}},
	},
	Presets: []family.Preset{
		preset("tiny-moe", "a 2-layer mixture of 8 experts for tests", 2, 64, 192, 4, 2, 32, true, 8, 2, 64),
		preset("30b-a3b", "Qwen3-30B-A3B", 48, 2048, 6144, 32, 4, 128, false, 128, 8, 768),
	},
	Chat: family.Chat{EOG: []string{"<|im_end|>", "<|endoftext|>"}, Reply: "qwen"},
	Pre:  []string{"qwen2"},
}

// Options sets Qwen3-MoE's options: Qwen3's attention (QK-norm, NeoX
// RoPE), SwiGLU experts chosen by a softmax router.
func Options(c *arch.Config) {
	c.QKNorm = true
	c.Rope.Style = arch.RopeNeoX
	c.Act = arch.SwiGLU
	c.MoE.Gating = arch.GateSoftmax
}

// preset is a Qwen3-MoE shape with its released models' vocabulary,
// context, RoPE base and epsilon; its chosen experts' weights are
// renormalized (norm_topk_prob), as in every released Qwen3-MoE.
func preset(name, doc string, layers, hidden, ffn, heads, kvHeads, headDim int, tied bool, experts, topK, expertFFN int) family.Preset {
	return family.Preset{Name: name, Doc: doc, Config: arch.Config{
		Arch: Architecture, Layers: layers, Hidden: hidden, FFN: ffn, Heads: heads, KVHeads: kvHeads, HeadDim: headDim,
		Vocab: 151936, ContextLength: 40960, Eps: 1e-6, TiedOutput: tied, Rope: arch.Rope{Theta: 1e6},
		MoE: arch.MoE{Experts: experts, TopK: topK, ExpertFFN: expertFFN, NormTopK: true},
	}}
}
