package qwen2

import (
	"inferno/arch"
	"inferno/family"
)

func init() { family.Register(Family) }

// Family is Qwen2's entry in the registry of architectures.
var Family = &family.Family{
	Name:    Architecture,
	Title:   "Qwen2.5",
	Config:  ConfigFromGGUF,
	Options: Options,
	Checkpoints: []family.Checkpoint{
		{HF: "Qwen2ForCausalLM", Title: "Qwen2", MaxPos: 32768, Vocab: 151936, HeadDimKeys: true},
	},
	Presets: []family.Preset{
		preset("qwen2.5-0.5b", "Qwen2.5-0.5B", 24, 896, 4864, 14, 2, 64, 151936, true),
		preset("qwen2.5-7b", "Qwen2.5-7B", 28, 3584, 18944, 28, 4, 128, 152064, false),
	},
	// llama.cpp gives the 80-layer Qwen2 models (Qwen2 and Qwen2.5 72B)
	// the type LLM_TYPE_70B.
	Quant: family.Quant{Is70B: func(layers, _, _ int) bool { return layers == 80 }},
	Chat:  family.Chat{EOG: []string{"<|im_end|>", "<|endoftext|>"}, Reply: "qwen"},
	Pre:   []string{"qwen2"},
}

// Options sets Qwen2's options: Q/K/V biases, NeoX RoPE, SwiGLU.
func Options(c *arch.Config) {
	c.Bias = true
	c.Rope.Style = arch.RopeNeoX
	c.Act = arch.SwiGLU
}

// preset is a Qwen2.5 shape with its released models' context, RoPE base
// and epsilon.
func preset(name, doc string, layers, hidden, ffn, heads, kvHeads, headDim, vocab int, tied bool) family.Preset {
	return family.Preset{Name: name, Doc: doc, Config: arch.Config{
		Arch: Architecture, Layers: layers, Hidden: hidden, FFN: ffn, Heads: heads, KVHeads: kvHeads, HeadDim: headDim,
		Vocab: vocab, ContextLength: 32768, Eps: 1e-6, TiedOutput: tied, Rope: arch.Rope{Theta: 1e6},
	}}
}
