package gemma3

import (
	"inferno/arch"
	"inferno/family"
)

func init() { family.Register(Family) }

// Family is Gemma 3's entry in the registry of architectures.
var Family = &family.Family{
	Name:        Architecture,
	Title:       "Gemma 3",
	Config:      ConfigFromGGUF,
	Options:     Options,
	Checkpoints: checkpoints,
	Presets: []family.Preset{
		preset("gemma3-1b", "Gemma 3 1B", 26, 1152, 6912, 4, 1, 256, 262144, 32768, 512, 0),
		preset("gemma3-4b", "Gemma 3 4B", 34, 2560, 10240, 8, 4, 256, 262208, 131072, 1024, 8),
		preset("gemma3-12b", "Gemma 3 12B", 48, 3840, 15360, 16, 8, 256, 262208, 131072, 1024, 8),
		preset("gemma3-27b", "Gemma 3 27B", 62, 5376, 21504, 32, 16, 128, 262208, 131072, 1024, 8),
	},
	Chat: family.Chat{EOG: []string{"<end_of_turn>", "<eos>"}},
}

// preset is a Gemma 3 shape: its sliding window, and the linear RoPE
// scaling of its global layers (0: none).
func preset(name, doc string, layers, hidden, ffn, heads, kvHeads, headDim, vocab, context, window int, scale float64) family.Preset {
	c := arch.Config{
		Arch: Architecture, Layers: layers, Hidden: hidden, FFN: ffn, Heads: heads, KVHeads: kvHeads, HeadDim: headDim,
		Vocab: vocab, ContextLength: context, Eps: 1e-6, TiedOutput: true,
		Rope:   arch.Rope{Theta: 1e6},
		Window: window, Local: arch.SWAPattern(layers, swaPeriod), LocalRope: arch.Rope{Theta: localTheta},
	}
	if scale != 0 {
		c.Rope.Scaling, c.Rope.Factor = arch.ScaleLinear, scale
	}
	return family.Preset{Name: name, Doc: doc, Config: c}
}
