package gemma3

import (
	"inferno/arch"
	"inferno/family"
)

// checkpoint is Gemma 3's text model as transformers keeps it: the
// defaults of Gemma3TextConfig, the norms around attention and the
// feed-forward, and what llama.cpp's Gemma3Model writes (gains + 1, the
// embedding trimmed to the vocabulary, the SentencePiece vocabulary of
// tokenizer.model without a space prefix, the sliding window).
func checkpoint(hf, title string) family.Checkpoint {
	return family.Checkpoint{
		HF: hf, Title: title,
		Heads: 8, HeadDim: 256, MaxPos: 131072, Vocab: 262208, KVHeads: 4, RopeTheta: 1e6, Eps: 1e-6, LocalRopeTheta: 10000,
		Tensors: map[arch.Role]family.Source{
			arch.RoleAttnPostNorm: {Name: "model.layers.{i}.post_attention_layernorm.weight"},
			arch.RoleFFNNorm:      {Name: "model.layers.{i}.pre_feedforward_layernorm.weight"},
			arch.RoleFFNPostNorm:  {Name: "model.layers.{i}.post_feedforward_layernorm.weight"},
		},
		NormShift:     1,
		TrimVocab:     true,
		RopeScaling:   []string{"linear"},
		SlidingWindow: true,
		Window:        4096,
		AttnScalar:    256,
		SentencePiece: true,
		SpacePrefix:   family.SpacePrefixOff,
	}
}

// checkpoints are the Hugging Face architectures convert writes as Gemma
// 3: the text model, and the text part of the multimodal model (4B and
// up), whose language model's tensors lose their "language_model." and
// whose vision tower is left out, as llama.cpp's converter does.
var checkpoints = []family.Checkpoint{
	checkpoint("Gemma3ForCausalLM", "Gemma 3"),
	checkpoint("Gemma3ForConditionalGeneration", "Gemma 3 (text of the multimodal model)"),
}
