package arch

import (
	"errors"
	"fmt"
	"math"
)

// Activation is the nonlinearity of a gated feed-forward layer:
// act(gate) * up.
type Activation uint8

const (
	// SwiGLU: silu(gate) * up, silu(x) = x / (1 + e^-x) (Llama, Qwen).
	SwiGLU Activation = iota
	// GeGLU: gelu(gate) * up, the tanh approximation (Gemma).
	GeGLU
)

var activationNames = [...]string{SwiGLU: "SwiGLU", GeGLU: "GeGLU"}

// String names the activation.
func (a Activation) String() string { return enumString(a, "Activation", activationNames[:]) }

// RopeStyle is how RoPE pairs a head's values.
type RopeStyle uint8

const (
	// RopeNeoX rotates the pairs (i, i+HeadDim/2): GPT-NeoX, Qwen, and
	// transformers' rotate_half.
	RopeNeoX RopeStyle = iota
	// RopeNormal rotates adjacent pairs (2i, 2i+1): GPT-J, and llama.cpp's
	// Llama files, whose Q and K rows are permuted to match.
	RopeNormal
)

var ropeStyleNames = [...]string{RopeNeoX: "NeoX", RopeNormal: "normal"}

// String names the style.
func (s RopeStyle) String() string { return enumString(s, "RopeStyle", ropeStyleNames[:]) }

// Scaling is how RoPE's frequencies are stretched for contexts longer than
// the model was trained on.
type Scaling uint8

const (
	// ScaleNone: pair i turns at theta^(-2i/HeadDim) radians a position.
	ScaleNone Scaling = iota
	// ScaleLinear divides every position by Factor.
	ScaleLinear
	// ScaleYaRN interpolates the low frequencies by Factor and keeps the
	// high ones, with an attention temperature (YaRN).
	ScaleYaRN
	// ScaleLlama3 divides the frequencies of wavelengths longer than
	// OrigContext/LowFreqFactor by Factor, keeps those shorter than
	// OrigContext/HighFreqFactor, and blends in between (Llama 3.1); or,
	// as llama.cpp's files give it, divides pair i's by FreqFactors[i].
	ScaleLlama3
)

var scalingNames = [...]string{ScaleNone: "none", ScaleLinear: "linear", ScaleYaRN: "yarn", ScaleLlama3: "llama3"}

// String names the scaling.
func (s Scaling) String() string { return enumString(s, "Scaling", scalingNames[:]) }

// Rope describes the rotary position embedding of queries and keys.
type Rope struct {
	Style RopeStyle
	Theta float64 // the frequency base
	// Scaling and its parameters; Factor, OrigContext and the two
	// frequency factors are zero with ScaleNone.
	Scaling        Scaling
	Factor         float64
	OrigContext    int // context length the model was trained on before scaling
	LowFreqFactor  float64
	HighFreqFactor float64
	// FreqFactors, when not nil, divide pair i's frequency by
	// FreqFactors[i] (HeadDim/2 values): llama.cpp's rope_freqs.weight,
	// which its converter computes from Llama 3's scaling parameters and
	// writes instead of them.
	FreqFactors []float32
}

// Freqs returns the angle, in radians a position, by which each of the
// headDim/2 pairs of a head turns: theta^(-2i/headDim), with the scaling
// applied. With ScaleLlama3 pair i's is divided by FreqFactors[i] or,
// without them, by the factor Llama 3's parameters give (transformers'
// _compute_llama3_parameters): Factor for wavelengths longer than
// OrigContext/LowFreqFactor, 1 for those shorter than
// OrigContext/HighFreqFactor, a blend in between. ScaleLinear divides
// every one by Factor. YaRN's interpolation is not a per-pair factor and
// is not applied here.
func (r *Rope) Freqs(headDim int) []float64 {
	f := make([]float64, headDim/2)
	for i := range f {
		f[i] = r.Freq(i, headDim)
	}
	return f
}

// Freq returns pair i's value of Freqs(headDim), without allocating.
func (r *Rope) Freq(i, headDim int) float64 {
	f := math.Pow(r.Theta, -float64(2*i)/float64(headDim))
	switch {
	case r.Scaling == ScaleLinear:
		f /= r.Factor
	case r.Scaling != ScaleLlama3:
	case r.FreqFactors != nil:
		f /= float64(r.FreqFactors[i])
	default:
		wavelen := 2 * math.Pi / f
		low, high := float64(r.OrigContext)/r.LowFreqFactor, float64(r.OrigContext)/r.HighFreqFactor
		switch {
		case wavelen < high:
		case wavelen > low:
			f /= r.Factor
		default:
			smooth := (float64(r.OrigContext)/wavelen - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
			f = (1-smooth)*f/r.Factor + smooth*f
		}
	}
	return f
}

// Llama3FreqFactors returns the RoPE frequency factors llama.cpp's converter
// writes as rope_freqs.weight for Llama 3's scaling (its LlamaModel's
// generate_extra_tensors), with its float32 arithmetic: pair i's
// frequency base^(-2i/dim) is kept (factor 1) for wavelengths shorter than
// orig/high, divided by factor for those longer than orig/low, and by a
// blend in between. They are Rope.FreqFactors of a Llama 3.1 file.
func Llama3FreqFactors(base float64, dim int, factor, low, high float64, orig int) []float32 {
	out := make([]float32, dim/2)
	lowWavelen, highWavelen := float64(orig)/low, float64(orig)/high
	for i := range out {
		exp := float32(float32(2*i) / float32(dim))
		freq := float32(1 / float32(math.Pow(base, float64(exp))))
		wavelen := float32(2*math.Pi) / freq
		switch {
		case float64(wavelen) < highWavelen:
			out[i] = 1
		case float64(wavelen) > lowWavelen:
			out[i] = float32(factor)
		default:
			smooth := float32((float32(float64(orig)/float64(wavelen)) - float32(low)) / float32(high-low))
			out[i] = 1 / ((1-smooth)/float32(factor) + smooth)
		}
	}
	return out
}

func (r *Rope) validate() error {
	switch {
	case !(r.Theta > 0) || math.IsInf(r.Theta, 0):
		return fmt.Errorf("RoPE base %v must be positive and finite", r.Theta)
	case r.Style != RopeNeoX && r.Style != RopeNormal:
		return fmt.Errorf("unknown RoPE style %v", r.Style)
	case r.Scaling > ScaleLlama3:
		return fmt.Errorf("unknown RoPE scaling %v", r.Scaling)
	case r.FreqFactors != nil && r.Scaling != ScaleLlama3:
		return fmt.Errorf("RoPE frequency factors come with llama3 scaling, not %v", r.Scaling)
	case r.FreqFactors != nil:
		for i, f := range r.FreqFactors {
			if !(f > 0) || math.IsInf(float64(f), 0) {
				return fmt.Errorf("RoPE frequency factor %d is %v; want positive and finite", i, f)
			}
		}
	case r.Scaling != ScaleNone && (!(r.Factor > 0) || math.IsInf(r.Factor, 0)):
		return fmt.Errorf("RoPE %v scaling factor %v must be positive and finite", r.Scaling, r.Factor)
	case r.Scaling == ScaleLlama3 && (r.OrigContext <= 0 || !(r.LowFreqFactor > 0) || !(r.HighFreqFactor > r.LowFreqFactor) || math.IsInf(r.HighFreqFactor, 0)):
		return fmt.Errorf("RoPE llama3 scaling needs frequency factors, or an original context (%d) and 0 < low (%v) < high (%v) frequency factors",
			r.OrigContext, r.LowFreqFactor, r.HighFreqFactor)
	}
	return nil
}

// Gating is how a mixture-of-experts router turns its logits into expert
// weights.
type Gating uint8

const (
	// GateSoftmax: softmax over all experts, then the top k (Qwen3-MoE,
	// Mixtral).
	GateSoftmax Gating = iota
	// GateSigmoid: a sigmoid per expert, then the top k (DeepSeek-V3).
	GateSigmoid
)

var gatingNames = [...]string{GateSoftmax: "softmax", GateSigmoid: "sigmoid"}

// String names the gating.
func (g Gating) String() string { return enumString(g, "Gating", gatingNames[:]) }

// MoE describes a mixture-of-experts feed-forward layer: a router (a
// matrix of Experts rows) scores the experts for each token, the TopK
// best run (each a gated feed-forward of width ExpertFFN) and their
// outputs are summed, weighted by the gating's scores, renormalized to sum
// to one when NormTopK.
type MoE struct {
	Experts   int // 0: the feed-forward is dense
	TopK      int // experts each token runs
	ExpertFFN int // width of one expert's feed-forward
	NormTopK  bool
	Gating    Gating
}

// Enabled reports whether the feed-forward is a mixture of experts.
func (m *MoE) Enabled() bool { return m.Experts > 0 }

func (m *MoE) validate() error {
	switch {
	case m.Experts == 0:
		if m.TopK != 0 || m.ExpertFFN != 0 {
			return errors.New("a dense model has no experts to pick")
		}
		return nil
	case m.Experts < 0 || m.Experts > 1<<16:
		return fmt.Errorf("%d experts is out of range", m.Experts)
	case m.TopK <= 0 || m.TopK > m.Experts:
		return fmt.Errorf("%d experts a token out of %d is out of range", m.TopK, m.Experts)
	case m.ExpertFFN <= 0 || m.ExpertFFN > 1<<24:
		return fmt.Errorf("expert feed-forward size %d is out of range", m.ExpertFFN)
	case m.Gating > GateSigmoid:
		return fmt.Errorf("unknown expert gating %v", m.Gating)
	}
	return nil
}

// enumString returns names[v], or typ(v) for a value without a name.
func enumString[T ~uint8](v T, typ string, names []string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, uint8(v))
}
