package arch

import (
	"fmt"
	"math"
	"slices"

	"inferno/gguf"
	"inferno/numfmt"
)

// ReadConfig reads the hyperparameters llama.cpp's GGUF files keep under
// the architecture's prefix (name.block_count, name.embedding_length, ...,
// name.rope.freq_base and its scaling, or Llama 3's as the tensor
// rope_freqs.weight, name.rope.dimension_count as RopeDims where it is
// not the head's size, LongRoPE's factors as the tensors
// rope_factors_long.weight and rope_factors_short.weight (readLongRoPE),
// name.expert_count and the other mixture-of-experts
// keys where present, name.pooling_type), the vocabulary size from the
// token embedding's shape, and whether the head is tied (no output
// matrix). It fails unless general.architecture is name. The options a
// file does not state (QKNorm, Bias, Act, Rope.Style, the sliding window:
// ReadSlidingWindow) are the model package's to set; the result is not
// validated yet.
func ReadConfig(f *gguf.File, name string) (Config, error) {
	return readConfig(f, name, false)
}

// ReadConfigDefaultHeadDim is ReadConfig for the architectures whose
// checkpoints may leave head_dim out (llama, qwen2): llama.cpp's converter
// then writes no name.attention.key_length, and a head has Hidden/Heads
// values, as llama.cpp reads such files.
func ReadConfigDefaultHeadDim(f *gguf.File, name string) (Config, error) {
	return readConfig(f, name, true)
}

func readConfig(f *gguf.File, name string, defaultHeadDim bool) (Config, error) {
	arch, err := f.String("general.architecture")
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	if arch != name {
		return Config{}, fmt.Errorf("%s: unsupported architecture %q (want %q)", name, arch, name)
	}
	c := Config{Arch: name}
	ints := []struct {
		key string
		dst *int
	}{
		{"block_count", &c.Layers},
		{"embedding_length", &c.Hidden},
		{"feed_forward_length", &c.FFN},
		{"attention.head_count", &c.Heads},
		{"attention.head_count_kv", &c.KVHeads},
		{"attention.key_length", &c.HeadDim},
		{"context_length", &c.ContextLength},
	}
	for _, p := range ints {
		if p.dst == &c.HeadDim && defaultHeadDim {
			if _, present := f.Value(name + "." + p.key); !present {
				c.HeadDim = c.Hidden / c.Heads
				if c.HeadDim*c.Heads != c.Hidden {
					return Config{}, fmt.Errorf("%s: no %s.%s, and %d heads do not divide the embedding length %d", name, name, p.key, c.Heads, c.Hidden)
				}
				continue
			}
		}
		if err := readInt(f, name, p.key, p.dst); err != nil {
			return Config{}, err
		}
	}
	if v, err := f.Int(name + ".rope.dimension_count"); err == nil && int(v) != c.HeadDim {
		if v <= 0 || int(v) > c.HeadDim || v%2 != 0 {
			return Config{}, fmt.Errorf("%s: RoPE on %d of a head's %d values; want an even number up to it", name, v, c.HeadDim)
		}
		c.RopeDims = int(v)
	}
	if v, err := f.Int(name + ".attention.value_length"); err == nil && int(v) != c.HeadDim {
		return Config{}, fmt.Errorf("%s: attention.value_length %d differs from key_length %d, which inferno does not run", name, v, c.HeadDim)
	}
	if c.Rope.Theta, err = f.Float(name + ".rope.freq_base"); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := readScaling(f, name, &c.Rope); err != nil {
		return Config{}, err
	}
	if c.Rope.Scaling == ScaleYaRN && c.Rope.OrigContext == 0 {
		c.Rope.OrigContext = c.ContextLength // llama.cpp's n_ctx_orig_yarn without the key
	}
	if err := readFreqFactors(f, name, &c); err != nil {
		return Config{}, err
	}
	if err := readLongRoPE(f, name, &c); err != nil {
		return Config{}, err
	}
	eps, err := f.Float(name + ".attention.layer_norm_rms_epsilon")
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	c.Eps = float32(eps)
	if err := readMoE(f, name, &c.MoE); err != nil {
		return Config{}, err
	}
	if err := readPooling(f, name, &c); err != nil {
		return Config{}, err
	}
	emb, ok := f.Tensor(RoleEmbed.Tensor(0))
	if !ok {
		return Config{}, fmt.Errorf("%s: missing tensor %q", name, RoleEmbed.Tensor(0))
	}
	if len(emb.Shape) != 2 || emb.Shape[1] == 0 || emb.Shape[1] > 1<<24 {
		return Config{}, fmt.Errorf("%s: tensor %q: shape %v, want [%d vocab]", name, emb.Name, emb.Shape, c.Hidden)
	}
	c.Vocab = int(emb.Shape[1])
	_, hasOutput := f.Tensor(RoleOutput.Tensor(0))
	c.TiedOutput = !hasOutput
	return c, nil
}

// readInt reads the positive integer name.key into dst.
func readInt(f *gguf.File, name, key string, dst *int) error {
	n, err := f.Int(name + "." + key)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if n <= 0 || n > 1<<24 {
		return fmt.Errorf("%s: %s.%s = %d is out of range", name, name, key, n)
	}
	*dst = int(n)
	return nil
}

// readScaling reads name.rope.scaling.*: type ("none", "linear", "yarn"
// or "longrope"), factor and original_context_length, and YaRN's
// yarn_beta_fast and yarn_beta_slow (32 and 1 without them). LongRoPE's
// parameters are readLongRoPE's.
func readScaling(f *gguf.File, name string, r *Rope) error {
	kind, err := f.String(name + ".rope.scaling.type")
	if err != nil {
		if _, present := f.Value(name + ".rope.scaling.type"); present {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	switch kind {
	case "none", "":
		return nil
	case "linear":
		r.Scaling = ScaleLinear
	case "yarn":
		r.Scaling = ScaleYaRN
	case "longrope":
		// llama.cpp's converters write the type, and no factor, for the
		// LongRoPE of most architectures (none for Phi-3's). A factor
		// would scale every frequency besides, as llama.cpp reads it.
		r.Scaling = ScaleLongRoPE
		key := name + ".rope.scaling.factor"
		if _, present := f.Value(key); !present {
			return nil
		}
		if v, err := f.Float(key); err != nil {
			return fmt.Errorf("%s: RoPE longrope scaling: %w", name, err)
		} else if v != 0 && v != 1 {
			return fmt.Errorf("%s: RoPE longrope scaling with a factor of %v besides, which inferno does not run", name, v)
		}
		return nil
	default:
		return fmt.Errorf("%s: RoPE scaling %q is not known (none, linear, yarn or longrope)", name, kind)
	}
	if r.Factor, err = f.Float(name + ".rope.scaling.factor"); err != nil {
		return fmt.Errorf("%s: RoPE %s scaling: %w", name, kind, err)
	}
	if n, err := f.Int(name + ".rope.scaling.original_context_length"); err == nil && n > 0 && n <= 1<<24 {
		r.OrigContext = int(n)
	}
	if r.Scaling == ScaleYaRN {
		r.BetaFast, r.BetaSlow = 32, 1
		for _, b := range []struct {
			key string
			dst *float64
		}{{"yarn_beta_fast", &r.BetaFast}, {"yarn_beta_slow", &r.BetaSlow}} {
			if v, err := f.Float(name + ".rope.scaling." + b.key); err == nil {
				*b.dst = v
			} else if _, present := f.Value(name + ".rope.scaling." + b.key); present {
				return fmt.Errorf("%s: RoPE yarn scaling: %w", name, err)
			}
		}
	}
	return nil
}

// ReadSlidingWindow reads the sliding window of c's architecture's files
// from f into c: name.attention.sliding_window as Window (none or 0:
// every layer global, as llama.cpp reads it) and which layers are local,
// by name.attention.sliding_window_pattern where the file has it (a
// period n, or one flag a layer, true for local) and by the period the
// architecture gives otherwise (SWAPattern: Gemma 3's 6, gpt-oss's 2);
// and name.rope.freq_base_swa, where present, as the base of the local
// layers' RoPE, without scaling (LocalRope, of Rope's style: set the
// style first), as llama.cpp's Gemma 3 does. llama.cpp's Phi-3 files
// carry a sliding_window that llama.cpp ignores: do not call it for them.
func ReadSlidingWindow(f *gguf.File, c *Config, period int) error {
	name := c.Arch
	w, err := f.Int(name + ".attention.sliding_window")
	if err != nil {
		if _, present := f.Value(name + ".attention.sliding_window"); present {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if w < 0 || w > 1<<24 {
		return fmt.Errorf("%s: %s.attention.sliding_window = %d is out of range", name, name, w)
	}
	if w == 0 {
		return nil
	}
	key := name + ".attention.sliding_window_pattern"
	if v, present := f.Value(key); present {
		if a, ok := v.AsArray(); ok {
			flags, ok := a.Values.([]bool)
			if !ok || len(flags) != c.Layers {
				return fmt.Errorf("%s: %s is an array of %d %v; want %d bools, one a layer", name, key, a.Len(), a.Elem, c.Layers)
			}
			c.Local = append([]bool(nil), flags...)
		} else {
			n, err := f.Int(key)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if n < 0 || n > 1<<24 {
				return fmt.Errorf("%s: %s = %d is out of range", name, key, n)
			}
			period = int(n)
		}
	}
	if c.Local == nil {
		c.Local = SWAPattern(c.Layers, period)
	}
	if !slices.Contains(c.Local, true) {
		c.Local = nil
		return nil
	}
	c.Window = int(w)
	if base, err := f.Float(name + ".rope.freq_base_swa"); err == nil {
		c.LocalRope = Rope{Style: c.Rope.Style, Theta: base}
	} else if _, present := f.Value(name + ".rope.freq_base_swa"); present {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// ropeFreqs is the tensor of RoPE frequency factors llama.cpp's converter
// writes for Llama 3's scaling.
const ropeFreqs = "rope_freqs.weight"

// readFreqFactors reads rope_freqs.weight, where present, as llama3
// scaling's per-pair factors: RotaryDims/2 values.
func readFreqFactors(f *gguf.File, name string, c *Config) error {
	if _, ok := f.Tensor(ropeFreqs); !ok {
		return nil
	}
	if c.Rope.Scaling != ScaleNone {
		return fmt.Errorf("%s: RoPE %v scaling and the frequency factors of %q", name, c.Rope.Scaling, ropeFreqs)
	}
	var err error
	if c.Rope.FreqFactors, err = readFactors(f, name, ropeFreqs, c.RotaryDims()/2); err != nil {
		return err
	}
	c.Rope.Scaling = ScaleLlama3
	return nil
}

// The tensors of LongRoPE's factors, and the key of its attention factor
// under the architecture's prefix.
const (
	ropeFactorsLong  = "rope_factors_long.weight"
	ropeFactorsShort = "rope_factors_short.weight"
	ropeAttnFactor   = ".rope.scaling.attn_factor"
)

// readLongRoPE reads LongRoPE's parameters where the file has its
// factors: rope_factors_long.weight and rope_factors_short.weight
// (RotaryDims/2 values each), name.rope.scaling.attn_factor (1 without
// it, as llama.cpp reads it) and name.rope.scaling.original_context_length
// (the context length without it: llama.cpp's n_ctx_orig_yarn). Both
// references apply the attention factor with either set of factors.
// llama.cpp's Phi-3 converter writes them without rope.scaling.type; a
// file of type "longrope" must have them, and one without them an
// attention factor of 1, if any.
func readLongRoPE(f *gguf.File, name string, c *Config) error {
	_, hasLong := f.Tensor(ropeFactorsLong)
	_, hasShort := f.Tensor(ropeFactorsShort)
	attn := 1.0
	if _, present := f.Value(name + ropeAttnFactor); present {
		v, err := f.Float(name + ropeAttnFactor)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		attn = v
	}
	switch {
	case !hasLong && !hasShort && c.Rope.Scaling == ScaleLongRoPE:
		return fmt.Errorf("%s: RoPE longrope scaling without its factors (tensors %q and %q)", name, ropeFactorsLong, ropeFactorsShort)
	case !hasLong && !hasShort && attn != 1:
		return fmt.Errorf("%s: %s%s = %v without LongRoPE's factors (tensors %q and %q), which inferno does not run", name, name, ropeAttnFactor, attn, ropeFactorsLong, ropeFactorsShort)
	case !hasLong && !hasShort:
		return nil
	case !hasLong || !hasShort:
		return fmt.Errorf("%s: LongRoPE needs both tensors %q and %q; the file has one", name, ropeFactorsLong, ropeFactorsShort)
	case c.Rope.Scaling != ScaleNone && c.Rope.Scaling != ScaleLongRoPE:
		return fmt.Errorf("%s: RoPE %v scaling and LongRoPE's factors (%q, %q)", name, c.Rope.Scaling, ropeFactorsLong, ropeFactorsShort)
	case !(attn > 0) || math.IsInf(attn, 0):
		return fmt.Errorf("%s: %s%s = %v; want positive and finite", name, name, ropeAttnFactor, attn)
	}
	n := c.RotaryDims() / 2
	var err error
	if c.Rope.LongFactors, err = readFactors(f, name, ropeFactorsLong, n); err != nil {
		return err
	}
	if c.Rope.ShortFactors, err = readFactors(f, name, ropeFactorsShort, n); err != nil {
		return err
	}
	c.Rope.Scaling, c.Rope.AttnFactor = ScaleLongRoPE, attn
	if c.Rope.OrigContext == 0 {
		c.Rope.OrigContext = c.ContextLength
		key := name + ".rope.scaling.original_context_length"
		if _, present := f.Value(key); present {
			v, err := f.Int(key)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if v <= 0 || v > 1<<24 {
				return fmt.Errorf("%s: %s = %d is out of range", name, key, v)
			}
			c.Rope.OrigContext = int(v)
		}
	}
	return nil
}

// readFactors reads the per-pair RoPE factors of tensor: n values, of a
// shape [n].
func readFactors(f *gguf.File, name, tensor string, n int) ([]float32, error) {
	t, ok := f.Tensor(tensor)
	switch {
	case !ok:
		return nil, fmt.Errorf("%s: missing tensor %q", name, tensor)
	case len(t.Shape) != 1 || t.Shape[0] != uint64(n):
		return nil, fmt.Errorf("%s: tensor %q: shape %v, want [%d]", name, tensor, t.Shape, n)
	case !SupportedType(t.Type):
		return nil, fmt.Errorf("%s: tensor %q: type %s is not supported", name, tensor, t.Type)
	}
	out := make([]float32, n)
	if err := numfmt.DequantizeRow(out, t.Data, t.Type, n); err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", name, tensor, err)
	}
	return out, nil
}

// readMoE reads name.expert_count and, with experts, the rest of the
// mixture-of-experts keys.
func readMoE(f *gguf.File, name string, m *MoE) error {
	n, err := f.Int(name + ".expert_count")
	if err != nil || n == 0 {
		return nil
	}
	if n < 0 || n > 1<<16 {
		return fmt.Errorf("%s: %s.expert_count = %d is out of range", name, name, n)
	}
	m.Experts = int(n)
	if err := readInt(f, name, "expert_used_count", &m.TopK); err != nil {
		return err
	}
	if err := readInt(f, name, "expert_feed_forward_length", &m.ExpertFFN); err != nil {
		return err
	}
	m.NormTopK, _ = f.Bool(name + ".expert_weights_norm")
	if g, err := f.Int(name + ".expert_gating_func"); err == nil {
		// llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE: 1 softmax, 2 sigmoid,
		// 3 softmax over the chosen experts' logits.
		switch g {
		case 1:
			m.Gating = GateSoftmax
		case 2:
			m.Gating = GateSigmoid
		case 3:
			m.Gating = GateSoftmaxTopK
		default:
			return fmt.Errorf("%s: expert gating function %d is not known (1 softmax, 2 sigmoid, 3 softmax over the top k)", name, g)
		}
	}
	return nil
}

// Load reads the weights of a model of configuration c from f: the
// embedding, the final norm, the output head (the embedding when
// c.TiedOutput) and every layer's tensors of c.LayerRoles(), under
// llama.cpp's names (Config.TensorName), each one's presence, type and
// shape checked. With c.FusedQKV the Q, K and V matrices are row ranges
// of blk.N.attn_qkv.weight, with c.FusedGateUp the gate and up matrices
// those of blk.N.ffn_up.weight (Weight.RowRange). Matrices point into f's
// memory, so f must stay open while they are used; vectors are copied
// out as float32.
func Load(f *gguf.File, c *Config) (*Weights, error) {
	roles := c.LayerRoles()
	// Every layer has tensors: check the count before allocating, so that
	// a corrupt block_count fails at once.
	if c.Layers > len(f.Tensors) {
		return nil, fmt.Errorf("%s: block_count %d needs at least as many tensors, the file has %d", c.Arch, c.Layers, len(f.Tensors))
	}
	l := loader{f: f, c: c}
	w := &Weights{Layers: make([]Layer, c.Layers)}
	w.Embed = l.matrix(RoleEmbed, 0)
	w.OutputNorm = l.vector(RoleOutputNorm, 0)
	if c.TiedOutput {
		w.Output = w.Embed
	} else {
		w.Output = l.matrix(RoleOutput, 0)
	}
	for i := 0; i < c.Layers && l.err == nil; i++ {
		ly := &w.Layers[i]
		if c.FusedQKV {
			qkv := l.fused(fmt.Sprintf("blk.%d.attn_qkv.weight", i), c.QDim()+2*c.KVDim())
			if qkv != nil {
				q, kv := c.QDim(), c.KVDim()
				ly.mats[RoleQ], ly.mats[RoleK], ly.mats[RoleV] = qkv.RowRange(0, q), qkv.RowRange(q, q+kv), qkv.RowRange(q+kv, q+2*kv)
			}
		}
		if c.FusedGateUp {
			if gu := l.fused(RoleUp.Tensor(i), 2*c.FFN); gu != nil {
				ly.mats[RoleGate], ly.mats[RoleUp] = gu.RowRange(0, c.FFN), gu.RowRange(c.FFN, 2*c.FFN)
			}
		}
		for _, r := range roles {
			switch {
			case r.Vector():
				ly.vecs[r] = l.vector(r, i)
			case ly.mats[r] == nil:
				ly.mats[r] = l.matrix(r, i)
			}
		}
	}
	if l.err != nil {
		return nil, l.err
	}
	return w, nil
}

// loader looks tensors up and remembers the first error.
type loader struct {
	f   *gguf.File
	c   *Config
	err error
}

func (l *loader) tensor(name string) *gguf.TensorInfo {
	if l.err != nil {
		return nil
	}
	t, ok := l.f.Tensor(name)
	if !ok {
		l.err = fmt.Errorf("%s: missing tensor %q", l.c.Arch, name)
	}
	return t
}

func (l *loader) matrix(r Role, layer int) *Weight {
	t := l.tensor(l.c.TensorName(r, layer))
	if t == nil {
		return nil
	}
	rows, cols, experts := l.c.Shape(r)
	w, err := newWeight(t, rows, cols, experts)
	if err != nil {
		l.err = fmt.Errorf("%s: %w", l.c.Arch, err)
	}
	return w
}

// fused returns the matrix name of rows x Hidden, which Load views by
// row ranges.
func (l *loader) fused(name string, rows int) *Weight {
	t := l.tensor(name)
	if t == nil {
		return nil
	}
	w, err := NewWeight(t, rows, l.c.Hidden)
	if err != nil {
		l.err = fmt.Errorf("%s: %w", l.c.Arch, err)
		return nil
	}
	return w
}

func (l *loader) vector(r Role, layer int) []float32 {
	name := l.c.TensorName(r, layer)
	t := l.tensor(name)
	if t == nil {
		return nil
	}
	rows, _, experts := l.c.Shape(r)
	n := rows * experts
	want := []uint64{uint64(rows)}
	if experts > 1 {
		want = append(want, uint64(experts))
	}
	if !slices.Equal(t.Shape, want) {
		l.err = fmt.Errorf("%s: tensor %q: shape %v, want %v", l.c.Arch, name, t.Shape, want)
		return nil
	}
	if !SupportedType(t.Type) {
		l.err = fmt.Errorf("%s: tensor %q: type %s is not supported", l.c.Arch, name, t.Type)
		return nil
	}
	v := make([]float32, n)
	if err := numfmt.DequantizeRow(v, t.Data, t.Type, n); err != nil {
		l.err = fmt.Errorf("%s: tensor %q: %w", l.c.Arch, name, err)
	}
	return v
}
