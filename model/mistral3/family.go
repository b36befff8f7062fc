package mistral3

import (
	"inferno/arch"
	"inferno/family"
	"inferno/model/llama"
)

func init() { family.Register(Family) }

// Family is Mistral 3's entry in the registry of architectures. Its chat
// (end-of-generation tokens, reply format, default template) is
// Llama's, which covers Mistral's llama files.
var Family = &family.Family{
	Name:    Architecture,
	Title:   "Mistral 3",
	Config:  ConfigFromGGUF,
	Options: llama.Options,
	Checkpoints: []family.Checkpoint{
		// The language model of the multimodal checkpoint: its settings in
		// text_config, its tensors under language_model. (the Hub's
		// files) or model.language_model. (transformers 5's), the vision
		// tower and projector left out.
		{HF: "Mistral3ForConditionalGeneration", Title: "Mistral 3 (text of the multimodal model)", MaxPos: 131072, Vocab: 131072,
			RopeTheta: 1e9, Eps: 1e-5, Permute: true, HeadDimKeys: true, VocabKeys: true,
			SentencePiece: true, SpacePrefix: family.SpacePrefixConfig},
	},
	Presets: []family.Preset{
		{Name: "mistral3-24b", Doc: "Mistral Small 3.1/3.2 24B as llama.cpp writes the multimodal checkpoint (architecture mistral3)", Config: arch.Config{
			Arch: Architecture, Layers: 40, Hidden: 5120, FFN: 32768, Heads: 32, KVHeads: 8, HeadDim: 128,
			Vocab: 131072, ContextLength: 131072, Eps: 1e-5, Rope: arch.Rope{Theta: 1e9},
		}},
	},
	Chat: llama.Family.Chat,
	Pre:  []string{"tekken", "pixtral"},
}
