package synth

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"inferno/arch"
	"inferno/family"
	"inferno/gguf"
	"inferno/numfmt"
	"inferno/quantize"
)

// PresetNames lists the presets of every registered family (package
// family): the families in name order, each one's presets from the
// smallest.
func PresetNames() []string { return family.PresetNames() }

// Shape overrides a preset's shape; zero fields keep the preset's values.
type Shape struct {
	Layers, Hidden, FFN, Heads, KVHeads, HeadDim, Vocab int
	// Experts, TopK and ExpertFFN change a mixture-of-experts preset's
	// mixture.
	Experts, TopK, ExpertFFN int
	// Untied adds a separate output head to a preset that has none.
	Untied bool
}

// Resolve returns the model opts describe: the preset with the overrides
// applied, checked. Its name ends in "-custom" when an override changed
// it.
func Resolve(opts Options) (family.Preset, error) {
	_, found, ok := family.LookupPreset(opts.Preset)
	if !ok {
		return family.Preset{}, fmt.Errorf("synth: unknown preset %q (want %s)", opts.Preset, strings.Join(PresetNames(), ", "))
	}
	p := *found
	c := &p.Config
	moe := c.MoE.Enabled()
	s := opts.Shape
	custom := false
	for _, o := range []struct {
		name string
		v    int
		dst  *int
	}{
		{"layers", s.Layers, &c.Layers}, {"hidden", s.Hidden, &c.Hidden}, {"ffn", s.FFN, &c.FFN},
		{"heads", s.Heads, &c.Heads}, {"kv-heads", s.KVHeads, &c.KVHeads}, {"head-dim", s.HeadDim, &c.HeadDim},
		{"vocab", s.Vocab, &c.Vocab}, {"experts", s.Experts, &c.MoE.Experts}, {"experts-used", s.TopK, &c.MoE.TopK},
		{"expert-ffn", s.ExpertFFN, &c.MoE.ExpertFFN},
	} {
		if o.v < 0 || o.v > 1<<20 {
			return family.Preset{}, fmt.Errorf("synth: %s %d is out of range (1 to %d)", o.name, o.v, 1<<20)
		}
		if o.v != 0 && o.v != *o.dst {
			*o.dst = o.v
			custom = true
		}
	}
	if f, _ := family.Lookup(c.Arch); f != nil {
		// Options that depend on the shape (Gemma's embedding scale).
		f.Options(c)
	}
	if c.Local != nil && len(c.Local) != c.Layers {
		// The preset's sliding-window layers repeat with a period
		// (arch.SWAPattern): keep it over the new number of layers.
		c.Local = arch.SWAPattern(c.Layers, swaPeriod(found.Config.Local))
	}
	if s.Untied && c.TiedOutput {
		c.TiedOutput = false
		custom = true
	}
	if custom {
		p.Name += "-custom"
	}
	switch {
	case c.Heads%c.KVHeads != 0:
		return family.Preset{}, fmt.Errorf("synth: %d query heads are not a multiple of %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim%2 != 0:
		return family.Preset{}, fmt.Errorf("synth: head dimension %d is odd (rotary embeddings rotate pairs)", c.HeadDim)
	case c.Heads*c.HeadDim > 1<<20:
		return family.Preset{}, fmt.Errorf("synth: %d heads of %d values are too many", c.Heads, c.HeadDim)
	case c.MoE.Enabled() && !moe:
		return family.Preset{}, fmt.Errorf("synth: the %s architecture has no experts", c.Arch)
	case moe && (c.MoE.Experts > 1<<12 || c.MoE.TopK < 1 || c.MoE.TopK > c.MoE.Experts || c.MoE.ExpertFFN < 1):
		return family.Preset{}, fmt.Errorf("synth: %d experts a token of %d, of width %d, is not a mixture of experts", c.MoE.TopK, c.MoE.Experts, c.MoE.ExpertFFN)
	}
	if err := c.Validate(); err != nil {
		return family.Preset{}, fmt.Errorf("synth: %w", err)
	}
	return p, nil
}

// swaPeriod returns the period n of local, arch.SWAPattern(len(local), n);
// 0 when local is nil or has none.
func swaPeriod(local []bool) int {
	for n := 2; n <= len(local); n++ {
		if slices.Equal(local, arch.SWAPattern(len(local), n)) {
			return n
		}
	}
	return 0
}

// mixtureOf returns the mixture and pure flag opts ask for.
func mixtureOf(opts Options) (quantize.Mixture, bool, error) {
	if opts.Mixture != "" {
		m, err := quantize.ParseMixture(opts.Mixture)
		if err != nil {
			return quantize.Mixture{}, false, fmt.Errorf("synth: %w", err)
		}
		return m, opts.Pure, nil
	}
	name := opts.Type.String()
	switch opts.Type {
	case gguf.TensorQ3_K, gguf.TensorQ4_K, gguf.TensorQ5_K:
		name += "_M" // the mixture whose base type it is, for general.file_type
	}
	m, err := quantize.ParseMixture(name)
	if err != nil || m.Default != opts.Type {
		return quantize.Mixture{}, false, fmt.Errorf("synth: unsupported weight type %s (want a weight block type: one of the mixtures %s)", opts.Type, quantize.Names())
	}
	switch opts.Type {
	case gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16, gguf.TensorQ8_0:
		return m, opts.Pure, nil
	}
	return m, true, nil
}

// kind of tensor data.
const (
	matrix = iota
	norm
	fixed // given values (rope_freqs.weight)
)

// spec is one tensor of the model.
type spec struct {
	name       string
	kind       int
	rows, cols int
	std        float64 // matrix: standard deviation
	center     float64 // norm: values center*(1 ± spread)
	spread     float64
	data       []byte // fixed: the F32 values
	// experts, when not 0: a matrix of experts stacked matrices of
	// rows/experts rows each, a 3-D tensor.
	experts int
}

// specs lists the tensors of a model of c in file order: the tensors its
// roles name (arch.Config.LayerRoles), in the order the forward pass reads
// them, named as the family's files name them (arch.Config.TensorName), Q,
// K and V and the gate and up matrices fused where c says so. Embeddings
// are small (std 0.02, as trained models have); projections have std
// 1/sqrt(fan-in) so activations keep their scale through a layer; norm
// gains are 1 ± 0.1, biases and attention sinks in [0, 0.2]; the
// final norm's gain is large enough that logits have a spread of about 5,
// so the top token wins by a margin of order 1.
func specs(c *arch.Config) []spec {
	nrm := func(name string, n int, center, spread float64) spec {
		return spec{name: name, kind: norm, rows: 1, cols: n, center: center, spread: spread}
	}
	var s []spec
	if r := c.Rope; r.Scaling == arch.ScaleLlama3 {
		ff := r.FreqFactors
		if ff == nil {
			ff = arch.Llama3FreqFactors(r.Theta, c.HeadDim, r.Factor, r.LowFreqFactor, r.HighFreqFactor, r.OrigContext)
		}
		data := make([]byte, 4*len(ff))
		for i, f := range ff {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(f))
		}
		s = append(s, spec{name: "rope_freqs.weight", kind: fixed, rows: 1, cols: len(ff), data: data})
	}
	s = append(s, spec{name: arch.RoleEmbed.Tensor(0), kind: matrix, rows: c.Vocab, cols: c.Hidden, std: 0.02})
	roles := c.LayerRoles()
	for i := range c.Layers {
		for _, r := range roles {
			name := c.TensorName(r, i)
			rows, cols, experts := c.Shape(r)
			switch {
			case c.FusedQKV && r == arch.RoleQ:
				// Q, K and V as one matrix (Phi-3), written where Q is.
				s = append(s, spec{name: fmt.Sprintf("blk.%d.attn_qkv.weight", i), kind: matrix, rows: c.QDim() + 2*c.KVDim(), cols: cols, std: 1 / math.Sqrt(float64(cols))})
			case c.FusedQKV && (r == arch.RoleK || r == arch.RoleV):
			case c.FusedGateUp && r == arch.RoleGate:
				// The gate and up matrices as one, the gate's rows first.
				s = append(s, spec{name: fmt.Sprintf("blk.%d.ffn_up.weight", i), kind: matrix, rows: 2 * c.FFN, cols: cols, std: 1 / math.Sqrt(float64(cols))})
			case c.FusedGateUp && r == arch.RoleUp:
			case r.Vector() && (strings.HasSuffix(name, ".bias") || r == arch.RoleSinks):
				s = append(s, stacked(nrm(name, rows*experts, 0.1, 1), experts))
			case r.Vector():
				s = append(s, stacked(nrm(name, rows*experts, 1, 0.1), experts))
			case experts > 1:
				s = append(s, spec{name: name, kind: matrix, rows: experts * rows, cols: cols, std: 1 / math.Sqrt(float64(cols)), experts: experts})
			default:
				s = append(s, spec{name: name, kind: matrix, rows: rows, cols: cols, std: 1 / math.Sqrt(float64(cols))})
			}
		}
	}
	s = append(s, nrm(arch.RoleOutputNorm.Tensor(0), c.Hidden, 5/(0.02*math.Sqrt(float64(c.Hidden))), 0.1))
	if !c.TiedOutput {
		s = append(s, spec{name: arch.RoleOutput.Tensor(0), kind: matrix, rows: c.Vocab, cols: c.Hidden, std: 0.02})
	}
	return s
}

// stacked makes s the vectors of experts experts, one after another: a
// 2-D tensor of experts rows (one vector when experts is 1).
func stacked(s spec, experts int) spec {
	if experts > 1 {
		s.experts = experts
	}
	return s
}

func (s spec) shape() []uint64 {
	switch {
	case s.kind != matrix && s.experts > 0:
		return []uint64{uint64(s.cols / s.experts), uint64(s.experts)}
	case s.kind != matrix:
		return []uint64{uint64(s.cols)}
	case s.experts > 0:
		return []uint64{uint64(s.cols), uint64(s.rows / s.experts), uint64(s.experts)}
	}
	return []uint64{uint64(s.cols), uint64(s.rows)}
}

// keys returns the metadata of a model of c that llama.cpp's loader and
// the family's reader (family.Family.Config) read, in the order synth
// writes them, after general.architecture and general.name.
func keys(c *arch.Config) []keyValue {
	a := c.Arch + "."
	kv := []keyValue{
		{a + "block_count", uint32(c.Layers)},
		{a + "context_length", uint32(c.ContextLength)},
		{a + "embedding_length", uint32(c.Hidden)},
		{a + "feed_forward_length", uint32(c.FFN)},
		{a + "attention.head_count", uint32(c.Heads)},
		{a + "attention.head_count_kv", uint32(c.KVHeads)},
		{a + "attention.key_length", uint32(c.HeadDim)},
		{a + "attention.value_length", uint32(c.HeadDim)},
		{a + "rope.freq_base", float32(c.Rope.Theta)},
		{a + "attention.layer_norm_rms_epsilon", c.Eps},
	}
	if c.AttnScale != 0 {
		kv = append(kv, keyValue{a + "attention.scale", c.AttnScale})
	}
	if c.RopeDims != 0 && c.RopeDims != c.HeadDim {
		kv = append(kv, keyValue{a + "rope.dimension_count", uint32(c.RopeDims)})
	}
	switch r := c.Rope; r.Scaling {
	case arch.ScaleLinear, arch.ScaleYaRN:
		kv = append(kv, keyValue{a + "rope.scaling.type", r.Scaling.String()}, keyValue{a + "rope.scaling.factor", float32(r.Factor)})
		if r.OrigContext > 0 {
			kv = append(kv, keyValue{a + "rope.scaling.original_context_length", uint32(r.OrigContext)})
		}
		if r.Scaling == arch.ScaleYaRN {
			kv = append(kv, keyValue{a + "rope.scaling.yarn_beta_fast", float32(r.BetaFast)}, keyValue{a + "rope.scaling.yarn_beta_slow", float32(r.BetaSlow)})
		}
	}
	if c.Window > 0 {
		kv = append(kv, keyValue{a + "attention.sliding_window", uint32(c.Window)})
		if c.LocalRope.Theta != 0 {
			kv = append(kv, keyValue{a + "rope.freq_base_swa", float32(c.LocalRope.Theta)})
		}
	}
	return kv
}

// moeKeys returns the metadata of c's mixture of experts, none for a dense
// model.
func moeKeys(c *arch.Config) []keyValue {
	if !c.MoE.Enabled() {
		return nil
	}
	a := c.Arch + "."
	kv := []keyValue{
		{a + "expert_count", uint32(c.MoE.Experts)},
		{a + "expert_used_count", uint32(c.MoE.TopK)},
		{a + "expert_feed_forward_length", uint32(c.MoE.ExpertFFN)},
	}
	if !c.MoE.NormTopK {
		kv = append(kv, keyValue{a + "expert_weights_norm", false})
	}
	return kv
}

// keyValue is one metadata key and its value.
type keyValue struct {
	key string
	val any
}

// Types returns each tensor's name and type in a model opts describe, in
// file order, without writing it.
func Types(opts Options) ([]string, []gguf.TensorType, error) {
	p, err := Resolve(opts)
	if err != nil {
		return nil, nil, err
	}
	m, pure, err := mixtureOf(opts)
	if err != nil {
		return nil, nil, err
	}
	sp := specs(&p.Config)
	types, err := plan(&p.Config, sp, m, pure)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(sp))
	for i, s := range sp {
		names[i] = s.name
	}
	return names, types, nil
}

func plan(c *arch.Config, sp []spec, m quantize.Mixture, pure bool) ([]gguf.TensorType, error) {
	ts := make([]quantize.Tensor, len(sp))
	for i, s := range sp {
		ts[i] = quantize.Tensor{Name: s.name, Type: gguf.TensorF32, Shape: s.shape()}
	}
	pl, err := quantize.Types(ts, quantize.Model{Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads, Experts: c.MoE.Experts, Arch: c.Arch}, m, pure)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	for _, t := range pl.Types {
		if _, err := numfmt.QuantizeRow(nil, make([]float32, t.BlockSize()), t); err != nil {
			return nil, fmt.Errorf("synth: writing %s: %w", t, err)
		}
	}
	return pl.Types, nil
}

// embeddingFamily reports whether f has embedding models (a checkpoint
// without a head that convert writes with a pooling type).
func embeddingFamily(f *family.Family) bool {
	return slices.ContainsFunc(f.Checkpoints, func(c family.Checkpoint) bool { return c.Embedding })
}
