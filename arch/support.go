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
	FeatQKNorm         Feature = 1 << iota // per-head RMSNorm of queries and keys (Config.QKNorm)
	FeatPlainQK                            // queries and keys rotated without QK-norm
	FeatBias                               // Q, K and V biases (Config.Bias)
	FeatRopeNeoX                           // RoPE on pairs (i, i+HeadDim/2)
	FeatRopeNormal                         // RoPE on adjacent pairs
	FeatRopeLinear                         // linear RoPE scaling
	FeatRopeYaRN                           // YaRN RoPE scaling
	FeatRopeLlama3                         // Llama 3's frequency scaling
	FeatSwiGLU                             // silu-gated feed-forward
	FeatGeGLU                              // gelu-gated feed-forward
	FeatUntiedOutput                       // an output head of its own
	FeatTiedOutput                         // the embedding as the output head
	FeatMoESoftmax                         // mixture of experts, softmax gating
	FeatMoESigmoid                         // mixture of experts, sigmoid gating
	FeatAttnScale                          // attention logits scaled otherwise than 1/sqrt(HeadDim) (Config.AttnScale)
	FeatEmbedScale                         // embedding rows scaled (Config.EmbedScale)
	FeatPostNorm                           // post-norms of attention and feed-forward (Config.PostNorm)
	FeatOutBias                            // an attention output bias (Config.OutBias)
	FeatSinks                              // attention sinks (Config.Sinks)
	FeatSWA                                // sliding-window layers (Config.Window, Local, LocalRope)
	FeatPartialRope                        // RoPE on part of a head (Config.RopeDims)
	FeatSwiGLUOAI                          // OpenAI's clamped SwiGLU
	FeatMoESoftmaxTopK                     // mixture of experts, softmax over the top k
	FeatMoEBias                            // mixture-of-experts router and expert biases (MoE.Bias)
	FeatRopeLongRoPE                       // LongRoPE scaling (long and short per-pair factors)
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
	"a non-default attention scale", "scaled embeddings", "post-norms", "an attention output bias", "attention sinks",
	"sliding-window attention", "partial RoPE", "OpenAI's clamped SwiGLU", "mixture of experts (softmax over the top k)",
	"mixture-of-experts biases", "LongRoPE scaling",
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
	f |= c.Rope.features()
	if c.Window > 0 {
		f |= FeatSWA
		if c.LocalRope.Theta != 0 {
			f |= c.LocalRope.features()
		}
	}
	if c.RopeDims != 0 && c.RopeDims != c.HeadDim {
		f |= FeatPartialRope
	}
	if c.AttnScale != 0 && c.AttnScale != DefaultAttnScale(c.HeadDim) {
		f |= FeatAttnScale
	}
	if c.EmbedScale != 0 && c.EmbedScale != 1 {
		f |= FeatEmbedScale
	}
	if c.PostNorm {
		f |= FeatPostNorm
	}
	if c.OutBias {
		f |= FeatOutBias
	}
	if c.Sinks {
		f |= FeatSinks
	}
	switch c.Act {
	case SwiGLU:
		f |= FeatSwiGLU
	case GeGLU:
		f |= FeatGeGLU
	case SwiGLUOAI:
		f |= FeatSwiGLUOAI
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
		case GateSoftmaxTopK:
			f |= FeatMoESoftmaxTopK
		}
		if c.MoE.Bias {
			f |= FeatMoEBias
		}
	}
	return f
}

// features returns the features rotating by r needs: its style and its
// scaling.
func (r *Rope) features() Feature {
	var f Feature
	switch r.Style {
	case RopeNeoX:
		f |= FeatRopeNeoX
	case RopeNormal:
		f |= FeatRopeNormal
	}
	switch r.Scaling {
	case ScaleLinear:
		f |= FeatRopeLinear
	case ScaleYaRN:
		f |= FeatRopeYaRN
	case ScaleLlama3:
		f |= FeatRopeLlama3
	case ScaleLongRoPE:
		f |= FeatRopeLongRoPE
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
