package gptoss

import (
	"inferno/arch"
	"inferno/family"
)

func init() { family.Register(Family) }

// Family is gpt-oss's entry in the registry of architectures.
var Family = &family.Family{
	Name:        Architecture,
	Title:       "gpt-oss",
	Config:      ConfigFromGGUF,
	Options:     Options,
	Checkpoints: checkpoints,
	Presets: []family.Preset{
		preset("gpt-oss-20b", "gpt-oss-20b", 24, 32),
		preset("gpt-oss-120b", "gpt-oss-120b", 36, 128),
	},
	Chat: family.Chat{EOG: []string{"<|return|>", "<|call|>"}, Reply: "harmony"},
	Pre:  []string{"gpt-4o"},
}

// preset is a gpt-oss shape of layers layers and experts experts, 4 a
// token.
func preset(name, doc string, layers, experts int) family.Preset {
	return family.Preset{Name: name, Doc: doc, Config: arch.Config{
		Arch: Architecture, Layers: layers, Hidden: 2880, FFN: 2880, Heads: 64, KVHeads: 8, HeadDim: 64,
		Vocab: 201088, ContextLength: 131072, Eps: 1e-5,
		Rope:   arch.Rope{Theta: 150000, Scaling: arch.ScaleYaRN, Factor: 32, OrigContext: 4096, BetaFast: 32, BetaSlow: 1},
		Window: 128, Local: arch.SWAPattern(layers, swaPeriod),
		MoE: arch.MoE{Experts: experts, TopK: 4, ExpertFFN: 2880},
	}}
}
