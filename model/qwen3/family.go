package qwen3

import (
	"inferno/arch"
	"inferno/family"
)

func init() { family.Register(Family) }

// Family is Qwen3's entry in the registry of architectures.
var Family = &family.Family{
	Name:    Architecture,
	Title:   "Qwen3",
	Config:  ConfigFromGGUF,
	Options: Options,
	Checkpoints: []family.Checkpoint{
		{HF: "Qwen3ForCausalLM", Title: "Qwen3", HeadDim: 128, MaxPos: 32768, Vocab: 151936},
		{HF: "Qwen3Model", Title: "Qwen3 embedding", HeadDim: 128, MaxPos: 32768, Vocab: 151936, Embedding: true},
	},
	Presets: []family.Preset{
		preset("tiny", "a 2-layer model for tests", 2, 64, 192, 4, 2, 32, true),
		preset("0.6b", "Qwen3-0.6B", 28, 1024, 3072, 16, 8, 128, true),
		preset("1.7b", "Qwen3-1.7B", 28, 2048, 6144, 16, 8, 128, true),
		preset("4b", "Qwen3-4B", 36, 2560, 9728, 32, 8, 128, true),
		preset("8b", "Qwen3-8B", 36, 4096, 12288, 32, 8, 128, false),
		preset("14b", "Qwen3-14B", 40, 5120, 17408, 40, 8, 128, false),
		preset("32b", "Qwen3-32B", 64, 5120, 25600, 64, 8, 128, false),
	},
	Chat: family.Chat{EOG: []string{"<|im_end|>", "<|endoftext|>"}, Reply: "qwen"},
	Pre:  []string{"qwen2"},
}

// Options sets Qwen3's options: QK-norm, NeoX RoPE, SwiGLU.
func Options(c *arch.Config) {
	c.QKNorm = true
	c.Rope.Style = arch.RopeNeoX
	c.Act = arch.SwiGLU
}

// preset is a Qwen3 shape with its released models' vocabulary, context,
// RoPE base and epsilon.
func preset(name, doc string, layers, hidden, ffn, heads, kvHeads, headDim int, tied bool) family.Preset {
	return family.Preset{Name: name, Doc: doc, Config: arch.Config{
		Arch: Architecture, Layers: layers, Hidden: hidden, FFN: ffn, Heads: heads, KVHeads: kvHeads, HeadDim: headDim,
		Vocab: 151936, ContextLength: 40960, Eps: 1e-6, TiedOutput: tied, Rope: arch.Rope{Theta: 1e6},
	}}
}
