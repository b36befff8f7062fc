package arch_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/gguf"
)

// dense is a small Qwen3-like configuration.
func dense() arch.Config {
	return arch.Config{Arch: "test", Layers: 2, Hidden: 64, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 50,
		ContextLength: 128, Eps: 1e-6, QKNorm: true, Rope: arch.Rope{Theta: 1e6}}
}

// moe is dense with a mixture-of-experts feed-forward.
func moe() arch.Config {
	c := dense()
	c.MoE = arch.MoE{Experts: 4, TopK: 2, ExpertFFN: 32, NormTopK: true}
	return c
}

func TestPlan(t *testing.T) {
	c := dense()
	plan := arch.NewPlan(&c)
	ops := []arch.Op{arch.OpQKV, arch.OpAttention, arch.OpOut, arch.OpGateUp, arch.OpDown}
	if len(plan) != c.Layers*len(ops) {
		t.Fatalf("%d steps for %d layers", len(plan), c.Layers)
	}
	for i, st := range plan {
		if want := (arch.Step{Op: ops[i%len(ops)], Layer: i / len(ops)}); st != want {
			t.Errorf("step %d: %v of layer %d, want %v of layer %d", i, st.Op, st.Layer, want.Op, want.Layer)
		}
	}
	m := moe()
	plan = arch.NewPlan(&m)
	if len(plan) != 2*4 || plan[3].Op != arch.OpMoE || plan[7] != (arch.Step{Op: arch.OpMoE, Layer: 1}) {
		t.Errorf("MoE plan %v", plan)
	}
	for o, want := range map[arch.Op]string{arch.OpGateUp: "gate_up", arch.OpMoE: "moe", arch.Op(99): "Op(99)"} {
		if s := o.String(); s != want {
			t.Errorf("%d.String() = %q, want %q", o, s, want)
		}
	}
}

func TestRoles(t *testing.T) {
	c := dense()
	want := []arch.Role{arch.RoleAttnNorm, arch.RoleQ, arch.RoleK, arch.RoleV, arch.RoleQNorm, arch.RoleKNorm,
		arch.RoleO, arch.RoleFFNNorm, arch.RoleGate, arch.RoleUp, arch.RoleDown}
	if got := c.LayerRoles(); !slices.Equal(got, want) {
		t.Errorf("dense roles %v, want %v", got, want)
	}
	c.QKNorm, c.Bias = false, true
	want = []arch.Role{arch.RoleAttnNorm, arch.RoleQ, arch.RoleK, arch.RoleV, arch.RoleQBias, arch.RoleKBias, arch.RoleVBias,
		arch.RoleO, arch.RoleFFNNorm, arch.RoleGate, arch.RoleUp, arch.RoleDown}
	if got := c.LayerRoles(); !slices.Equal(got, want) {
		t.Errorf("biased roles %v, want %v", got, want)
	}
	m := moe()
	if got := m.Roles(arch.OpMoE); !slices.Equal(got, []arch.Role{arch.RoleFFNNorm, arch.RoleRouter, arch.RoleExpertGate, arch.RoleExpertUp, arch.RoleExpertDown}) {
		t.Errorf("MoE roles %v", got)
	}
	names := map[string]string{
		arch.RoleQ.Tensor(3):          "blk.3.attn_q.weight",
		arch.RoleQBias.Tensor(0):      "blk.0.attn_q.bias",
		arch.RoleOutputNorm.Tensor(7): "output_norm.weight",
		arch.RoleExpertUp.Tensor(1):   "blk.1.ffn_up_exps.weight",
		arch.RoleKBias.String():       "attn_k_bias",
	}
	for got, want := range names {
		if got != want {
			t.Errorf("name %q, want %q", got, want)
		}
	}
	shapes := []struct {
		r                   arch.Role
		rows, cols, experts int
		vector, perLayer    bool
		config              arch.Config
	}{
		{arch.RoleEmbed, 50, 64, 1, false, false, dense()},
		{arch.RoleQ, 128, 64, 1, false, true, dense()},
		{arch.RoleK, 64, 64, 1, false, true, dense()},
		{arch.RoleO, 64, 128, 1, false, true, dense()},
		{arch.RoleDown, 64, 96, 1, false, true, dense()},
		{arch.RoleQNorm, 32, 1, 1, true, true, dense()},
		{arch.RoleVBias, 64, 1, 1, true, true, dense()},
		{arch.RoleRouter, 4, 64, 1, false, true, moe()},
		{arch.RoleExpertGate, 32, 64, 4, false, true, moe()},
		{arch.RoleExpertDown, 64, 32, 4, false, true, moe()},
	}
	for _, s := range shapes {
		rows, cols, e := s.config.Shape(s.r)
		if rows != s.rows || cols != s.cols || e != s.experts || s.r.Vector() != s.vector || s.r.PerLayer() != s.perLayer {
			t.Errorf("%v: shape %d x %d x %d vector %v per layer %v, want %d x %d x %d, %v, %v",
				s.r, rows, cols, e, s.r.Vector(), s.r.PerLayer(), s.rows, s.cols, s.experts, s.vector, s.perLayer)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*arch.Config)
		want string
	}{
		{func(c *arch.Config) { c.Heads = 3 }, "3 query heads are not a multiple of 2 KV heads"},
		{func(c *arch.Config) { c.HeadDim = 33 }, "head dimension 33 is odd"},
		{func(c *arch.Config) { c.Layers = 0 }, "layers 0 is out of range"},
		{func(c *arch.Config) { c.Eps = float32(math.NaN()) }, "RMS epsilon NaN"},
		{func(c *arch.Config) { c.Rope.Theta = math.Inf(1) }, "RoPE base +Inf must be positive and finite"},
		{func(c *arch.Config) { c.Rope.Style = 7 }, "unknown RoPE style RopeStyle(7)"},
		{func(c *arch.Config) { c.Rope.Scaling = arch.ScaleLinear }, "RoPE linear scaling factor 0"},
		{func(c *arch.Config) {
			c.Rope = arch.Rope{Theta: 5e5, Scaling: arch.ScaleLlama3, Factor: 8, OrigContext: 8192, LowFreqFactor: 4, HighFreqFactor: 1}
		},
			"0 < low (4) < high (1)"},
		{func(c *arch.Config) { c.Act = 9 }, "unknown activation Activation(9)"},
		{func(c *arch.Config) { c.Rope.Scaling, c.Rope.FreqFactors = arch.ScaleLlama3, []float32{1, 2} }, "2 RoPE frequency factors for 32 rotated values of a head, want 16"},
		{func(c *arch.Config) {
			c.Rope.Scaling, c.Rope.Factor, c.Rope.FreqFactors = arch.ScaleLinear, 2, []float32{1}
		}, "frequency factors come with llama3 scaling, not linear"},
		{func(c *arch.Config) { c.MoE.TopK = 2 }, "a dense model has no experts"},
		{func(c *arch.Config) { c.MoE = arch.MoE{Experts: 4, TopK: 5, ExpertFFN: 8} }, "5 experts a token out of 4"},
		{func(c *arch.Config) { c.MoE = arch.MoE{Experts: 4, TopK: 1} }, "expert feed-forward size 0"},
		{func(c *arch.Config) { c.MoE = arch.MoE{Experts: 4, TopK: 1, ExpertFFN: 8, Gating: 4} }, "unknown expert gating Gating(4)"},
	} {
		c := dense()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "test: ") {
			t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
		}
	}
	for _, c := range []arch.Config{dense(), moe()} {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", c, err)
		}
	}
	llama := dense()
	llama.QKNorm, llama.Rope = false, arch.Rope{Style: arch.RopeNormal, Theta: 5e5, Scaling: arch.ScaleLlama3, Factor: 8,
		OrigContext: 8192, LowFreqFactor: 1, HighFreqFactor: 4}
	if err := llama.Validate(); err != nil {
		t.Errorf("Llama 3 configuration: %v", err)
	}
}

func TestCheck(t *testing.T) {
	c := dense()
	if f := c.Features(); f != arch.FeatQKNorm|arch.FeatRopeNeoX|arch.FeatSwiGLU|arch.FeatUntiedOutput {
		t.Errorf("features %v", f)
	}
	if err := c.Check("cuda", arch.Dense); err != nil {
		t.Errorf("dense: %v", err)
	}
	c.TiedOutput = true
	if err := c.Check("cuda", arch.Dense); err != nil {
		t.Errorf("tied: %v", err)
	}
	llama := dense()
	llama.QKNorm, llama.Rope = false, arch.Rope{Style: arch.RopeNormal, Theta: 5e5, Scaling: arch.ScaleLlama3}
	err := llama.Check("cuda", arch.Dense)
	want := "test: the cuda backend does not run attention without QK-norm, normal (adjacent pairs) RoPE, Llama 3 RoPE scaling"
	if err == nil || err.Error() != want {
		t.Errorf("Llama 3: %v, want %q", err, want)
	}
	m := moe()
	m.Bias, m.Act, m.MoE.Gating = true, arch.GeGLU, arch.GateSigmoid
	err = m.Check("CPU", arch.Dense)
	want = "test: the CPU backend does not run Q/K/V biases, GeGLU, mixture of experts (sigmoid gating)"
	if err == nil || err.Error() != want {
		t.Errorf("MoE: %v, want %q", err, want)
	}
	if s := (arch.FeatMoESoftmax | 1<<30).String(); s != "mixture of experts (softmax gating), Feature(0x40000000)" {
		t.Errorf("String() = %q", s)
	}
}

// writeModel writes a GGUF file of configuration c (its metadata under
// c.Arch, F32 tensors of every role it has, random values; an output head
// unless c.TiedOutput) with extra metadata (a key "." + k is c.Arch + "."
// + k; nil removes a key; "tensor:" + name adds a tensor of []float32),
// and parses it.
func writeModel(t testing.TB, c *arch.Config, extra map[string]any) *gguf.File {
	t.Helper()
	f, err := gguf.Parse(modelBytes(t, c, extra))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// modelBytes is writeModel's file.
func modelBytes(t testing.TB, c *arch.Config, extra map[string]any) []byte {
	t.Helper()
	w := gguf.NewWriter()
	meta := map[string]any{
		"general.architecture":              c.Arch,
		".block_count":                      uint32(c.Layers),
		".embedding_length":                 uint32(c.Hidden),
		".feed_forward_length":              uint32(c.FFN),
		".attention.head_count":             uint32(c.Heads),
		".attention.head_count_kv":          uint32(c.KVHeads),
		".attention.key_length":             uint32(c.HeadDim),
		".attention.value_length":           uint32(c.HeadDim),
		".context_length":                   uint32(c.ContextLength),
		".rope.freq_base":                   float32(c.Rope.Theta),
		".attention.layer_norm_rms_epsilon": c.Eps,
	}
	if c.MoE.Enabled() {
		meta[".expert_count"] = uint32(c.MoE.Experts)
		meta[".expert_used_count"] = uint32(c.MoE.TopK)
		meta[".expert_feed_forward_length"] = uint32(c.MoE.ExpertFFN)
		meta[".expert_weights_norm"] = c.MoE.NormTopK
	}
	for k, v := range extra {
		meta[k] = v
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if name, ok := strings.CutPrefix(k, "tensor:"); ok {
			// A float32 vector tensor.
			v := meta[k].([]float32)
			data := make([]byte, 4*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
			}
			if err := w.AddTensor(name, gguf.TensorF32, []uint64{uint64(len(v))}, data); err != nil {
				t.Fatal(err)
			}
			continue
		}
		key := k
		if strings.HasPrefix(k, ".") {
			key = c.Arch + k
		}
		if meta[k] == nil {
			continue
		}
		if err := w.Set(key, meta[k]); err != nil {
			t.Fatal(err)
		}
	}
	tensor := func(name string, shape []uint64) {
		n := 1
		for _, d := range shape {
			n *= int(d)
		}
		data := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(rng.NormFloat64())))
		}
		if err := w.AddTensor(name, gguf.TensorF32, shape, data); err != nil {
			t.Fatal(err)
		}
	}
	add := func(r arch.Role, layer int) {
		rows, cols, experts := c.Shape(r)
		shape := []uint64{uint64(cols), uint64(rows)}
		if r.Vector() {
			shape = []uint64{uint64(rows)}
		}
		if experts > 1 {
			shape = append(shape, uint64(experts))
		}
		tensor(c.TensorName(r, layer), shape)
	}
	add(arch.RoleEmbed, 0)
	add(arch.RoleOutputNorm, 0)
	if !c.TiedOutput {
		add(arch.RoleOutput, 0)
	}
	for i := range c.Layers {
		if c.FusedQKV {
			tensor(fmt.Sprintf("blk.%d.attn_qkv.weight", i), []uint64{uint64(c.Hidden), uint64(c.QDim() + 2*c.KVDim())})
		}
		if c.FusedGateUp {
			tensor(arch.RoleUp.Tensor(i), []uint64{uint64(c.Hidden), uint64(2 * c.FFN)})
		}
		for _, r := range c.LayerRoles() {
			switch {
			case c.FusedQKV && (r == arch.RoleQ || r == arch.RoleK || r == arch.RoleV):
			case c.FusedGateUp && (r == arch.RoleGate || r == arch.RoleUp):
			default:
				add(r, i)
			}
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// load reads f as a model of architecture name with the options of want.
func load(f *gguf.File, want *arch.Config) (arch.Config, *arch.Weights, error) {
	c, err := arch.ReadConfig(f, want.Arch)
	if err != nil {
		return c, nil, err
	}
	c.QKNorm, c.Bias = want.QKNorm, want.Bias
	if err := c.Validate(); err != nil {
		return c, nil, err
	}
	w, err := arch.Load(f, &c)
	if err != nil {
		return c, nil, err
	}
	return c, w, w.Check(&c)
}

func TestLoad(t *testing.T) {
	tied, biased := dense(), dense()
	tied.TiedOutput = true
	biased.QKNorm, biased.Bias = false, true
	for name, c := range map[string]arch.Config{"dense": dense(), "tied": tied, "biased": biased, "moe": moe()} {
		t.Run(name, func(t *testing.T) {
			f := writeModel(t, &c, nil)
			got, w, err := load(f, &c)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c) {
				t.Errorf("config %+v, want %+v", got, c)
			}
			if (w.Output == w.Embed) != c.TiedOutput {
				t.Errorf("output tied %v, want %v", w.Output == w.Embed, c.TiedOutput)
			}
			if n := len(w.Matrices()); n != 1+btoi(!c.TiedOutput)+c.Layers*(7+btoi(c.MoE.Enabled())) {
				t.Errorf("%d matrices", n)
			}
			if c.MoE.Enabled() {
				if e := w.Layers[1].Matrix(arch.RoleExpertDown); e.Rows != 4*64 || e.Cols != 32 {
					t.Errorf("expert stack %d x %d", e.Rows, e.Cols)
				}
			}
			if c.Bias && len(w.Layers[0].Vector(arch.RoleKBias)) != c.KVDim() {
				t.Error("no K bias")
			}
			// Every layer tensor but the embedding's rows, the final norm, the head.
			var want int64
			for _, ti := range f.Tensors {
				if ti.Name != "token_embd.weight" {
					want += int64(len(ti.Data))
				}
			}
			if c.TiedOutput {
				want += int64(len(w.Embed.Data))
			}
			if got := w.ReadBytes(); got != want {
				t.Errorf("ReadBytes() = %d, want %d", got, want)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReadConfigOptions(t *testing.T) {
	c := dense()
	f := writeModel(t, &c, map[string]any{".rope.scaling.type": "yarn", ".rope.scaling.factor": float32(4),
		".rope.scaling.original_context_length": uint32(32768)})
	got, err := arch.ReadConfig(f, "test")
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Rope; r.Scaling != arch.ScaleYaRN || r.Factor != 4 || r.OrigContext != 32768 {
		t.Errorf("rope %+v", r)
	}
	factors := []float32{1, 1, 1, 2, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8}
	f = writeModel(t, &c, map[string]any{"tensor:rope_freqs.weight": factors})
	if got, err = arch.ReadConfig(f, "test"); err != nil {
		t.Fatal(err)
	}
	if r := got.Rope; r.Scaling != arch.ScaleLlama3 || !slices.Equal(r.FreqFactors, factors) {
		t.Errorf("rope %+v", r)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Llama 3 scaling from frequency factors: %v", err)
	}
	if err := got.Check("CPU", arch.Dense); err == nil || !strings.Contains(err.Error(), "Llama 3 RoPE scaling") {
		t.Errorf("Check: %v", err)
	}
	m := moe()
	f = writeModel(t, &m, map[string]any{".expert_gating_func": uint32(2)})
	if got, err = arch.ReadConfig(f, "test"); err != nil {
		t.Fatal(err)
	}
	if got.MoE != (arch.MoE{Experts: 4, TopK: 2, ExpertFFN: 32, NormTopK: true, Gating: arch.GateSigmoid}) {
		t.Errorf("MoE %+v", got.MoE)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra map[string]any
		edit  func(*arch.Config) // the configuration loaded, after the file was written
		want  string
	}{
		{"architecture", map[string]any{"general.architecture": "llama"}, nil, `test: unsupported architecture "llama" (want "test")`},
		{"missing key", map[string]any{".attention.key_length": nil}, nil, `test: gguf: missing metadata key "test.attention.key_length"`},
		{"key range", map[string]any{".block_count": uint32(0)}, nil, "test: test.block_count = 0 is out of range"},
		{"value length", map[string]any{".attention.value_length": uint32(16)}, nil, "value_length 16 differs from key_length 32"},
		{"scaling", map[string]any{".rope.scaling.type": "su"}, nil, `RoPE scaling "su" is not known`},
		{"longrope", map[string]any{".rope.scaling.type": "longrope"}, nil, `test: RoPE longrope scaling without its factors (tensors "rope_factors_long.weight" and "rope_factors_short.weight")`},
		{"scaling factor", map[string]any{".rope.scaling.type": "linear"}, nil, `test: RoPE linear scaling: gguf: missing metadata key "test.rope.scaling.factor"`},
		{"gating", map[string]any{".expert_count": uint32(4), ".expert_used_count": uint32(1), ".expert_feed_forward_length": uint32(8),
			".expert_gating_func": uint32(5)}, nil, "expert gating function 5 is not known"},
		{"experts a token", map[string]any{".expert_count": uint32(4)}, nil, `missing metadata key "test.expert_used_count"`},
		{"frequency factors", map[string]any{"tensor:rope_freqs.weight": []float32{1, 2}}, nil, `test: tensor "rope_freqs.weight": shape [2], want [16]`},
		{"two scalings", map[string]any{"tensor:rope_freqs.weight": make([]float32, 16), ".rope.scaling.type": "linear", ".rope.scaling.factor": float32(2)},
			nil, `test: RoPE linear scaling and the frequency factors of "rope_freqs.weight"`},
		{"zero factor", map[string]any{"tensor:rope_freqs.weight": make([]float32, 16)}, nil, "test: RoPE frequency factor 0 is 0; want positive and finite"},
		{"missing bias", nil, func(c *arch.Config) { c.Bias = true }, `test: missing tensor "blk.0.attn_q.bias"`},
		{"shape", map[string]any{".feed_forward_length": uint32(64)}, nil, `test: tensor "blk.0.ffn_gate.weight": shape [64 96], want [64 64]`},
		{"layers", map[string]any{".block_count": uint32(200)}, nil, "test: block_count 200 needs at least as many tensors, the file has 25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dense()
			f := writeModel(t, &c, tc.extra)
			// writeModel wrote the tensors of c; the metadata may say otherwise.
			want := dense()
			if tc.edit != nil {
				tc.edit(&want)
			}
			_, _, err := load(f, &want)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line containing %q", err, tc.want)
			}
		})
	}
}

func TestWeightsCheck(t *testing.T) {
	c := dense()
	_, w, err := load(writeModel(t, &c, nil), &c)
	if err != nil {
		t.Fatal(err)
	}
	k := w.Layers[1].Matrix(arch.RoleK)
	w.Layers[1].SetMatrix(arch.RoleK, nil)
	if err := w.Check(&c); err == nil || err.Error() != "test: no attn_k weights in layer 1" {
		t.Errorf("missing K: %v", err)
	}
	w.Layers[1].SetMatrix(arch.RoleK, w.Layers[1].Matrix(arch.RoleQ))
	if err := w.Check(&c); err == nil || err.Error() != "test: attn_k weights in layer 1 are 128x64, want 64x64" {
		t.Errorf("wrong K: %v", err)
	}
	w.Layers[1].SetMatrix(arch.RoleK, k)
	w.Layers[0].SetVector(arch.RoleQNorm, nil)
	if err := w.Check(&c); err == nil || err.Error() != "test: 0 attn_q_norm values in layer 0, want 32" {
		t.Errorf("missing Q norm: %v", err)
	}
	c.TiedOutput = true
	if err := w.Check(&c); err == nil || !strings.Contains(err.Error(), "the output head is tied false, the configuration says true") {
		t.Errorf("tied: %v", err)
	}
}

// FuzzLoad reads fuzzed files as models: a clear error or a model whose
// weights pass Check, never a panic.
func FuzzLoad(f *testing.F) {
	c := dense()
	c.Layers, c.Hidden, c.FFN, c.Vocab, c.Heads, c.KVHeads, c.HeadDim = 1, 16, 16, 4, 2, 1, 8
	f.Add(modelBytes(f, &c, nil))
	c.TiedOutput, c.MoE = true, arch.MoE{Experts: 2, TopK: 1, ExpertFFN: 8}
	f.Add(modelBytes(f, &c, map[string]any{".rope.scaling.type": "yarn", ".rope.scaling.factor": float32(2)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := gguf.Parse(data)
		if err != nil {
			return
		}
		want := arch.Config{Arch: "test", QKNorm: true}
		if _, w, err := load(gf, &want); err == nil && w == nil {
			t.Fatal("no weights and no error")
		}
	})
}
