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
	// GeGLU: gelu(gate) * up, gelu(x) = x/2 * (1 + tanh(sqrt(2/pi) * (x +
	// 0.044715 x^3))), the tanh approximation (Gemma; transformers'
	// gelu_pytorch_tanh, ggml_gelu).
	GeGLU
	// SwiGLUOAI: OpenAI's clamped SwiGLU (gpt-oss; llama.cpp's
	// swiglu_oai): g = min(gate, 7), u = clamp(up, -7, 7), act = g *
	// sigmoid(1.702 g) * (u + 1).
	SwiGLUOAI
)

// The constants of SwiGLUOAI: the sigmoid's slope and the clamp.
const (
	SwiGLUOAIAlpha = 1.702
	SwiGLUOAILimit = 7
)

var activationNames = [...]string{SwiGLU: "SwiGLU", GeGLU: "GeGLU", SwiGLUOAI: "SwiGLU-OAI"}

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
	// high ones, blending the pairs in between (BetaFast, BetaSlow,
	// OrigContext), and multiplies cos and sin by an attention factor
	// (Mscale): YaRN, as transformers' _compute_yarn_parameters.
	ScaleYaRN
	// ScaleLlama3 divides the frequencies of wavelengths longer than
	// OrigContext/LowFreqFactor by Factor, keeps those shorter than
	// OrigContext/HighFreqFactor, and blends in between (Llama 3.1); or,
	// as llama.cpp's files give it, divides pair i's by FreqFactors[i].
	ScaleLlama3
	// ScaleLongRoPE divides pair i's frequency by LongFactors[i] or
	// ShortFactors[i], as Long chooses, and multiplies cos and sin by
	// AttnFactor: LongRoPE (Phi-3's 128k models, Phi-4-mini), as
	// transformers' _compute_longrope_parameters and llama.cpp's
	// rope_factors_long and rope_factors_short.
	ScaleLongRoPE
)

var scalingNames = [...]string{ScaleNone: "none", ScaleLinear: "linear", ScaleYaRN: "yarn", ScaleLlama3: "llama3", ScaleLongRoPE: "longrope"}

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
	// BetaFast and BetaSlow bound YaRN's blend: pairs turning more than
	// BetaFast times over OrigContext positions keep their frequency,
	// those turning fewer than BetaSlow times are divided by Factor
	// (rope.scaling.yarn_beta_fast and _slow; 0 means 32 and 1, the
	// paper's values and both references' defaults).
	BetaFast, BetaSlow float64
	// NoTruncate leaves YaRN's blend bounds as the formula gives them,
	// as transformers does for a configuration with "truncate": false
	// (gpt-oss). Otherwise the lower bound is rounded down and the upper
	// up to whole pairs, as transformers does by default and llama.cpp
	// always does (ggml_rope_yarn_corr_dims: a gpt-oss file run by
	// llama.cpp has slightly different frequencies for the pairs
	// between the bounds). GGUF files do not say; the model package
	// sets it.
	NoTruncate bool
	// FreqFactors, when not nil, divide pair i's frequency by
	// FreqFactors[i] (RotaryDims/2 values): llama.cpp's rope_freqs.weight,
	// which its converter computes from Llama 3's scaling parameters and
	// writes instead of them.
	FreqFactors []float32
	// LongFactors and ShortFactors are LongRoPE's per-pair factors
	// (RotaryDims/2 values each: rope_factors_long.weight and
	// rope_factors_short.weight), for contexts beyond OrigContext and
	// within it; AttnFactor multiplies cos and sin with either
	// (rope.scaling.attn_factor, sqrt(1 + ln(s)/ln(OrigContext)) for s =
	// ContextLength/OrigContext as both references compute it). All are
	// nil or 0 but with ScaleLongRoPE.
	LongFactors, ShortFactors []float32
	AttnFactor                float64
	// Long chooses LongFactors over ShortFactors. It is not part of a
	// model's description (a file's reader leaves it false) but the
	// choice of a run, which ForContext makes by the context the run
	// is opened with.
	Long bool
}

// PairFactors returns the factors that divide the pairs' frequencies:
// FreqFactors with ScaleLlama3, LongFactors or ShortFactors (as Long
// chooses) with ScaleLongRoPE; nil otherwise. It does not allocate.
func (r *Rope) PairFactors() []float32 {
	switch {
	case r.Scaling == ScaleLlama3:
		return r.FreqFactors
	case r.Scaling != ScaleLongRoPE:
		return nil
	case r.Long:
		return r.LongFactors
	}
	return r.ShortFactors
}

// Freqs returns the angle, in radians a position, by which each of the
// headDim/2 pairs of a head turns: theta^(-2i/headDim), with the scaling
// applied. With ScaleLlama3 pair i's is divided by FreqFactors[i] or,
// without them, by the factor Llama 3's parameters give (transformers'
// _compute_llama3_parameters): Factor for wavelengths longer than
// OrigContext/LowFreqFactor, 1 for those shorter than
// OrigContext/HighFreqFactor, a blend in between. ScaleLinear divides
// every one by Factor. ScaleYaRN blends pair i's frequency f and f/Factor
// (yarnRamp). ScaleLongRoPE divides pair i's by the factor PairFactors
// gives. headDim is the number of values RoPE rotates (Config's
// RotaryDims).
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
	case r.Scaling == ScaleYaRN:
		ramp := r.yarnRamp(i, headDim)
		f = f/r.Factor*ramp + f*(1-ramp)
	case r.Scaling == ScaleLongRoPE:
		f /= float64(r.PairFactors()[i])
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

// yarnRamp returns YaRN's share of the interpolated frequency f/Factor in
// the frequency of pair i of headDim rotated values: 0 for the pairs
// below the blend's lower bound (which keep f), 1 above its upper bound,
// linear in between (transformers' linear_ramp_factor; llama.cpp's
// rope_yarn_ramp is one minus it). The bounds are the pairs that turn
// BetaFast and BetaSlow times over OrigContext positions
// (find_correction_range, ggml_rope_yarn_corr_dims), clamped to
// 0..headDim-1.
func (r *Rope) yarnRamp(i, headDim int) float64 {
	fast, slow := r.BetaFast, r.BetaSlow
	if fast == 0 {
		fast = 32
	}
	if slow == 0 {
		slow = 1
	}
	d, logBase := float64(headDim), 2*math.Log(r.Theta)
	corr := func(rot float64) float64 {
		return d * math.Log(float64(r.OrigContext)/(rot*2*math.Pi)) / logBase
	}
	low, high := corr(fast), corr(slow)
	if !r.NoTruncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = max(low, 0), min(high, d-1)
	if low == high {
		high += 0.001 // transformers' guard; llama.cpp divides by max(0.001, high-low)
	}
	return min(max((float64(i)-low)/(high-low), 0), 1)
}

// Mscale returns the factor RoPE multiplies cos and sin by: YaRN's
// attention factor 0.1 ln(Factor) + 1 (1 for a Factor of at most 1), as
// transformers' get_mscale and llama.cpp (which cancels its
// yarn_attn_factor against rope_yarn's own factor to the same product);
// LongRoPE's AttnFactor; 1 for every other scaling.
func (r *Rope) Mscale() float64 {
	if r.Scaling == ScaleLongRoPE {
		return r.AttnFactor
	}
	if r.Scaling != ScaleYaRN || !(r.Factor > 1) {
		return 1
	}
	return 0.1*math.Log(r.Factor) + 1
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
	case r.Scaling > ScaleLongRoPE:
		return fmt.Errorf("unknown RoPE scaling %v", r.Scaling)
	case r.FreqFactors != nil && r.Scaling != ScaleLlama3:
		return fmt.Errorf("RoPE frequency factors come with llama3 scaling, not %v", r.Scaling)
	case r.FreqFactors != nil:
		return checkFactors("frequency", r.FreqFactors)
	case r.Scaling == ScaleLongRoPE:
		return r.validateLongRoPE()
	case r.LongFactors != nil || r.ShortFactors != nil || r.AttnFactor != 0 || r.Long:
		return fmt.Errorf("RoPE long and short factors, an attention factor or the choice of the long ones come with longrope scaling, not %v", r.Scaling)
	case r.Scaling != ScaleNone && (!(r.Factor > 0) || math.IsInf(r.Factor, 0)):
		return fmt.Errorf("RoPE %v scaling factor %v must be positive and finite", r.Scaling, r.Factor)
	case r.Scaling == ScaleYaRN && r.OrigContext <= 0:
		return fmt.Errorf("RoPE yarn scaling needs an original context length, not %d", r.OrigContext)
	case r.Scaling == ScaleYaRN && (!(r.BetaFast >= 0) || !(r.BetaSlow >= 0) || math.IsInf(r.BetaFast, 0) || math.IsInf(r.BetaSlow, 0)):
		return fmt.Errorf("RoPE yarn beta fast %v and slow %v must be finite and not negative", r.BetaFast, r.BetaSlow)
	case r.Scaling == ScaleLlama3 && (r.OrigContext <= 0 || !(r.LowFreqFactor > 0) || !(r.HighFreqFactor > r.LowFreqFactor) || math.IsInf(r.HighFreqFactor, 0)):
		return fmt.Errorf("RoPE llama3 scaling needs frequency factors, or an original context (%d) and 0 < low (%v) < high (%v) frequency factors",
			r.OrigContext, r.LowFreqFactor, r.HighFreqFactor)
	}
	return nil
}

// validateLongRoPE checks LongRoPE's parameters: both sets of factors,
// of one length, positive and finite, an original context to choose
// between them by, a positive attention factor.
func (r *Rope) validateLongRoPE() error {
	switch {
	case r.LongFactors == nil || r.ShortFactors == nil:
		return errors.New("RoPE longrope scaling needs long and short factors")
	case len(r.LongFactors) != len(r.ShortFactors):
		return fmt.Errorf("RoPE longrope scaling: %d long factors and %d short ones", len(r.LongFactors), len(r.ShortFactors))
	case r.OrigContext <= 0:
		return fmt.Errorf("RoPE longrope scaling needs an original context length, not %d", r.OrigContext)
	case !(r.AttnFactor > 0) || math.IsInf(r.AttnFactor, 0):
		return fmt.Errorf("RoPE longrope attention factor %v must be positive and finite", r.AttnFactor)
	}
	if err := checkFactors("long", r.LongFactors); err != nil {
		return err
	}
	return checkFactors("short", r.ShortFactors)
}

// checkFactors checks that per-pair RoPE factors are positive and finite.
func checkFactors(which string, factors []float32) error {
	for i, f := range factors {
		if !(f > 0) || math.IsInf(float64(f), 0) {
			return fmt.Errorf("RoPE %s factor %d is %v; want positive and finite", which, i, f)
		}
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
	// GateSoftmaxTopK: the top k by router logit, then the softmax over
	// those k (gpt-oss; llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT).
	// The weights sum to one, NormTopK or not.
	GateSoftmaxTopK
)

var gatingNames = [...]string{GateSoftmax: "softmax", GateSigmoid: "sigmoid", GateSoftmaxTopK: "softmax over the top k"}

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
	// Bias: the router adds a learned bias to its logits (RoleRouterBias),
	// and each expert's gate, up and down products add their own
	// (RoleExpertGateBias, RoleExpertUpBias, RoleExpertDownBias), as
	// gpt-oss does.
	Bias bool
}

// Enabled reports whether the feed-forward is a mixture of experts.
func (m *MoE) Enabled() bool { return m.Experts > 0 }

func (m *MoE) validate() error {
	switch {
	case m.Experts == 0:
		if m.TopK != 0 || m.ExpertFFN != 0 || m.Bias {
			return errors.New("a dense model has no experts to pick")
		}
		return nil
	case m.Experts < 0 || m.Experts > 1<<16:
		return fmt.Errorf("%d experts is out of range", m.Experts)
	case m.TopK <= 0 || m.TopK > m.Experts:
		return fmt.Errorf("%d experts a token out of %d is out of range", m.TopK, m.Experts)
	case m.ExpertFFN <= 0 || m.ExpertFFN > 1<<24:
		return fmt.Errorf("expert feed-forward size %d is out of range", m.ExpertFFN)
	case m.Gating > GateSoftmaxTopK:
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
