package arch

import (
	"fmt"

	"inferno/gguf"
	"inferno/numfmt"
)

// ReadConfig reads the hyperparameters llama.cpp's GGUF files keep under
// the architecture's prefix (name.block_count, name.embedding_length, ...,
// name.rope.freq_base and its scaling, or Llama 3's as the tensor
// rope_freqs.weight, name.expert_count and the other mixture-of-experts
// keys where present, name.pooling_type), the vocabulary size from the
// token embedding's shape, and whether the head is tied (no output
// matrix). It fails unless general.architecture is name. The options a
// file does not state (QKNorm, Bias, Act, Rope.Style) are the model
// package's to set; the result is not validated yet.
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
		return Config{}, fmt.Errorf("%s: RoPE on %d of a head's %d values, which inferno does not run", name, v, c.HeadDim)
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
	if err := readFreqFactors(f, name, &c); err != nil {
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

// readScaling reads name.rope.scaling.*: type ("none", "linear" or
// "yarn"), factor and original_context_length.
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
	default:
		return fmt.Errorf("%s: RoPE scaling %q is not known (none, linear or yarn)", name, kind)
	}
	if r.Factor, err = f.Float(name + ".rope.scaling.factor"); err != nil {
		return fmt.Errorf("%s: RoPE %s scaling: %w", name, kind, err)
	}
	if n, err := f.Int(name + ".rope.scaling.original_context_length"); err == nil && n > 0 && n <= 1<<24 {
		r.OrigContext = int(n)
	}
	return nil
}

// ropeFreqs is the tensor of RoPE frequency factors llama.cpp's converter
// writes for Llama 3's scaling.
const ropeFreqs = "rope_freqs.weight"

// readFreqFactors reads rope_freqs.weight, where present, as llama3
// scaling's per-pair factors: HeadDim/2 values.
func readFreqFactors(f *gguf.File, name string, c *Config) error {
	t, ok := f.Tensor(ropeFreqs)
	if !ok {
		return nil
	}
	n := c.HeadDim / 2
	switch {
	case c.Rope.Scaling != ScaleNone:
		return fmt.Errorf("%s: RoPE %v scaling and the frequency factors of %q", name, c.Rope.Scaling, ropeFreqs)
	case len(t.Shape) != 1 || t.Shape[0] != uint64(n):
		return fmt.Errorf("%s: tensor %q: shape %v, want [%d]", name, ropeFreqs, t.Shape, n)
	case !SupportedType(t.Type):
		return fmt.Errorf("%s: tensor %q: type %s is not supported", name, ropeFreqs, t.Type)
	}
	c.Rope.FreqFactors = make([]float32, n)
	if err := numfmt.DequantizeRow(c.Rope.FreqFactors, t.Data, t.Type, n); err != nil {
		return fmt.Errorf("%s: tensor %q: %w", name, ropeFreqs, err)
	}
	c.Rope.Scaling = ScaleLlama3
	return nil
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
		// llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE: 1 softmax, 2 sigmoid.
		switch g {
		case 1:
			m.Gating = GateSoftmax
		case 2:
			m.Gating = GateSigmoid
		default:
			return fmt.Errorf("%s: expert gating function %d is not known (1 softmax, 2 sigmoid)", name, g)
		}
	}
	return nil
}

// Load reads the weights of a model of configuration c from f: the
// embedding, the final norm, the output head (the embedding when
// c.TiedOutput) and every layer's tensors of c.LayerRoles(), under
// llama.cpp's names (Role.Tensor), each one's presence, type and shape
// checked. Matrices point into f's memory, so f must stay open while they
// are used; vectors are copied out as float32.
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
		for _, r := range roles {
			if r.Vector() {
				ly.vecs[r] = l.vector(r, i)
			} else {
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
	t := l.tensor(r.Tensor(layer))
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

func (l *loader) vector(r Role, layer int) []float32 {
	name := r.Tensor(layer)
	t := l.tensor(name)
	if t == nil {
		return nil
	}
	n, _, _ := l.c.Shape(r)
	if len(t.Shape) != 1 || t.Shape[0] != uint64(n) {
		l.err = fmt.Errorf("%s: tensor %q: shape %v, want [%d]", l.c.Arch, name, t.Shape, n)
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
