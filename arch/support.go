package arch

import (
	"fmt"
	"strings"
)

// A Feature is an option of an architecture that an executor must
// implement to run it. Features form a set: a Config needs some
// (Config.Features), an executor has some, and Config.Check compares them.
type Feature uint32

// The features.
const (
	FeatQKNorm       Feature = 1 << iota // per-head RMSNorm of queries and keys (Config.QKNorm)
	FeatPlainQK                          // queries and keys rotated without QK-norm
	FeatBias                             // Q, K and V biases (Config.Bias)
	FeatRopeNeoX                         // RoPE on pairs (i, i+HeadDim/2)
	FeatRopeNormal                       // RoPE on adjacent pairs
	FeatRopeLinear                       // linear RoPE scaling
	FeatRopeYaRN                         // YaRN RoPE scaling
	FeatRopeLlama3                       // Llama 3's frequency scaling
	FeatSwiGLU                           // silu-gated feed-forward
	FeatGeGLU                            // gelu-gated feed-forward
	FeatUntiedOutput                     // an output head of its own
	FeatTiedOutput                       // the embedding as the output head
	FeatMoESoftmax                       // mixture of experts, softmax gating
	FeatMoESigmoid                       // mixture of experts, sigmoid gating
	numFeatures
)

// Dense is what every dense Qwen3 model needs, and so what every backend
// of this repository executes: QK-norm, NeoX RoPE without scaling,
// SwiGLU, a tied or untied head.
const Dense = FeatQKNorm | FeatRopeNeoX | FeatSwiGLU | FeatUntiedOutput | FeatTiedOutput

var featureNames = [...]string{
	"QK-norm", "attention without QK-norm", "Q/K/V biases", "NeoX RoPE", "normal (adjacent pairs) RoPE",
	"linear RoPE scaling", "YaRN RoPE scaling", "Llama 3 RoPE scaling", "SwiGLU", "GeGLU",
	"an untied output head", "a tied output head", "mixture of experts (softmax gating)", "mixture of experts (sigmoid gating)",
}

// String names the features of f, joined by ", ".
func (f Feature) String() string {
	var names []string
	for i := range len(featureNames) {
		if f&(1<<i) != 0 {
			names = append(names, featureNames[i])
		}
	}
	if rest := f &^ (numFeatures - 1); rest != 0 {
		names = append(names, fmt.Sprintf("Feature(%#x)", uint32(rest)))
	}
	return strings.Join(names, ", ")
}

// Features returns the features a forward pass of c needs.
func (c *Config) Features() Feature {
	var f Feature
	if c.QKNorm {
		f |= FeatQKNorm
	} else {
		f |= FeatPlainQK
	}
	if c.Bias {
		f |= FeatBias
	}
	switch c.Rope.Style {
	case RopeNeoX:
		f |= FeatRopeNeoX
	case RopeNormal:
		f |= FeatRopeNormal
	}
	switch c.Rope.Scaling {
	case ScaleLinear:
		f |= FeatRopeLinear
	case ScaleYaRN:
		f |= FeatRopeYaRN
	case ScaleLlama3:
		f |= FeatRopeLlama3
	}
	switch c.Act {
	case SwiGLU:
		f |= FeatSwiGLU
	case GeGLU:
		f |= FeatGeGLU
	}
	if c.TiedOutput {
		f |= FeatTiedOutput
	} else {
		f |= FeatUntiedOutput
	}
	if c.MoE.Enabled() {
		switch c.MoE.Gating {
		case GateSoftmax:
			f |= FeatMoESoftmax
		case GateSigmoid:
			f |= FeatMoESigmoid
		}
	}
	return f
}

// Check returns an error, in one line, naming what c needs that an
// executor with features has lacks (the executor named backend, as the
// command line spells it); nil if it runs c.
func (c *Config) Check(backend string, has Feature) error {
	if miss := c.Features() &^ has; miss != 0 {
		return fmt.Errorf("%s: the %s backend does not run %s", c.Arch, backend, miss)
	}
	return nil
}
