package phi3

import (
	"inferno/arch"
	"inferno/family"
)

func init() { family.Register(Family) }

// Family is Phi-3's entry in the registry of architectures.
var Family = &family.Family{
	Name:        Architecture,
	Title:       "Phi-4",
	Config:      ConfigFromGGUF,
	Options:     Options,
	Checkpoints: checkpoints,
	Presets: []family.Preset{{Name: "phi4-14b", Doc: "Phi-4 (14B)", Config: arch.Config{
		Arch: Architecture, Layers: 40, Hidden: 5120, FFN: 17920, Heads: 40, KVHeads: 10, HeadDim: 128,
		Vocab: 100352, ContextLength: 16384, Eps: 1e-5, Rope: arch.Rope{Theta: 250000},
	}}},
	Chat: family.Chat{EOG: []string{"<|im_end|>", "<|end|>", "<|endoftext|>"}},
	Pre:  []string{"dbrx", "gpt-4o"},
}
