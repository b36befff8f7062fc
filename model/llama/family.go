package llama

import (
	"inferno/arch"
	"inferno/chat"
	"inferno/family"
)

func init() { family.Register(Family) }

// Family is Llama's entry in the registry of architectures.
var Family = &family.Family{
	Name:    Architecture,
	Title:   "Llama 3/Mistral",
	Config:  ConfigFromGGUF,
	Options: Options,
	Checkpoints: []family.Checkpoint{
		{HF: "LlamaForCausalLM", Title: "Llama", MaxPos: 2048, Vocab: 32000, Permute: true, Llama3: true, HeadDimKeys: true, VocabKeys: true,
			SentencePiece: true, SpacePrefix: family.SpacePrefixConfig},
		// llama.cpp's converter writes Mistral's checkpoints (Mistral 7B,
		// Nemo, Small 3, Devstral) as Llama's.
		{HF: "MistralForCausalLM", Title: "Mistral", MaxPos: 131072, Vocab: 32000, Permute: true, Llama3: true, HeadDimKeys: true, VocabKeys: true,
			SentencePiece: true, SpacePrefix: family.SpacePrefixConfig},
	},
	Presets: []family.Preset{
		preset("llama3-1b", "Llama 3.2 1B", 16, 2048, 8192, 32, 8, 64, true, 32),
		preset("llama3-8b", "Llama 3.1 8B", 32, 4096, 14336, 32, 8, 128, false, 8),
		{Name: "mistral-small-24b", Doc: "Mistral Small 3.1/3.2 24B, Devstral Small (architecture llama)", Config: arch.Config{
			Arch: Architecture, Layers: 40, Hidden: 5120, FFN: 32768, Heads: 32, KVHeads: 8, HeadDim: 128,
			Vocab: 131072, ContextLength: 131072, Eps: 1e-5, Rope: arch.Rope{Theta: 1e9},
		}},
	},
	// llama.cpp gives the 80-layer Llama models with grouped-query
	// attention (Llama 2 and 3 70B) the type LLM_TYPE_70B.
	Quant: family.Quant{Is70B: func(layers, heads, kvHeads int) bool { return layers == 80 && heads != kvHeads }},
	Chat: family.Chat{EOG: []string{"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"}, Reply: "qwen",
		Replies: map[string]string{"[TOOL_CALLS]": "mistral"}, TemplateFor: mistralTemplate},
	Pre: []string{"llama-bpe", "smaug-bpe", "tekken", "pixtral"},
}

// mistralTemplate chooses llama.cpp's built-in Mistral format for a
// Mistral file (its vocabulary has [TOOL_CALLS]) that carries no chat
// template: mistral-v7-tekken for the tekken tokenizer, mistral-v7 else.
func mistralTemplate(has func(string) bool, pre string) string {
	switch {
	case !has("[TOOL_CALLS]"):
		return ""
	case pre == "tekken":
		return chat.MistralV7Tekken
	}
	return chat.MistralV7
}

// Options sets Llama's options: RoPE on adjacent pairs, SwiGLU.
func Options(c *arch.Config) {
	c.Rope.Style = arch.RopeNormal
	c.Act = arch.SwiGLU
}

// preset is a Llama 3 shape with its released models' vocabulary,
// context, RoPE base and epsilon, and Llama 3.1's RoPE scaling by factor.
func preset(name, doc string, layers, hidden, ffn, heads, kvHeads, headDim int, tied bool, factor float64) family.Preset {
	return family.Preset{Name: name, Doc: doc, Config: arch.Config{
		Arch: Architecture, Layers: layers, Hidden: hidden, FFN: ffn, Heads: heads, KVHeads: kvHeads, HeadDim: headDim,
		Vocab: 128256, ContextLength: 131072, Eps: 1e-6, TiedOutput: tied,
		Rope: arch.Rope{Theta: 500000, Scaling: arch.ScaleLlama3, Factor: factor, LowFreqFactor: 1, HighFreqFactor: 4, OrigContext: 8192},
	}}
}
