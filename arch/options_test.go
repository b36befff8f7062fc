package arch_test

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"inferno/arch"
	"inferno/gguf"
)

// TestYaRNFreqs checks YaRN's per-pair frequencies against values computed
// in float64 from transformers' _compute_yarn_parameters (find_correction_
// range, linear_ramp_factor, the blend of inv_freq_interpolation and
// inv_freq_extrapolation) for gpt-oss's parameters (head of 64, base
// 150000, factor 32, original context 4096, beta 32 and 1), with
// "truncate": false as its configuration has it (the blend between pairs
// 8.09 and 17.40) and with the default rounding (8 and 18), and for
// rotating 48 values of a head (base 10000, factor 4, 2048 positions:
// the blend between 6 and 16).
func TestYaRNFreqs(t *testing.T) {
	gptOSS := arch.Rope{Theta: 150000, Scaling: arch.ScaleYaRN, Factor: 32, OrigContext: 4096, BetaFast: 32, BetaSlow: 1}
	truncated := gptOSS
	gptOSS.NoTruncate = true
	defaults := truncated
	defaults.BetaFast, defaults.BetaSlow = 0, 0 // 32 and 1
	partial := arch.Rope{Theta: 10000, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 2048}
	for _, tc := range []struct {
		name string
		r    arch.Rope
		dim  int
		want map[int]float64
	}{
		{"gpt-oss", gptOSS, 64, map[int]float64{0: 1, 5: 0.15532298948448497, 8: 0.050813274815461475, 9: 0.03170569618466377,
			12: 0.006794959489732219, 17: 0.00012931870124506317, 18: 3.8308812373753384e-05, 31: 3.0235114281192144e-07}},
		{"truncated", truncated, 64, map[int]float64{0: 1, 5: 0.15532298948448497, 8: 0.050813274815461475, 9: 0.031620752275346484,
			12: 0.007015713910504388, 17: 0.0002279477957951252, 18: 3.8308812373753384e-05, 31: 3.0235114281192144e-07}},
		{"default betas", defaults, 64, map[int]float64{9: 0.031620752275346484, 17: 0.0002279477957951252}},
		{"partial", partial, 48, map[int]float64{0: 1, 3: 0.31622776601683794, 4: 0.2154434690031884, 10: 0.015081042830223181,
			23: 3.669498169055172e-05}},
	} {
		freqs := tc.r.Freqs(tc.dim)
		if len(freqs) != tc.dim/2 {
			t.Fatalf("%s: %d frequencies", tc.name, len(freqs))
		}
		for i, want := range tc.want {
			if got := freqs[i]; math.Abs(got-want) > 1e-12*want {
				t.Errorf("%s: pair %d frequency %.17g, want %.17g", tc.name, i, got, want)
			}
			if got := tc.r.Freq(i, tc.dim); got != freqs[i] {
				t.Errorf("%s: Freq(%d) = %v, Freqs has %v", tc.name, i, got, freqs[i])
			}
		}
	}
	if m := gptOSS.Mscale(); math.Abs(m-1.3465735902799727) > 1e-15 {
		t.Errorf("YaRN Mscale() = %v, want 0.1 ln 32 + 1", m)
	}
	for _, r := range []arch.Rope{{Theta: 1e4}, {Theta: 1e4, Scaling: arch.ScaleLinear, Factor: 8},
		{Theta: 1e4, Scaling: arch.ScaleYaRN, Factor: 1, OrigContext: 64}} {
		if m := r.Mscale(); m != 1 {
			t.Errorf("%v scaling, factor %v: Mscale() = %v, want 1", r.Scaling, r.Factor, m)
		}
	}
}

// gptOSS is a small configuration with gpt-oss's options.
func gptOSS() arch.Config {
	c := dense()
	c.Arch, c.Layers, c.QKNorm, c.Bias, c.OutBias, c.Sinks, c.Act = "gpt-oss", 4, false, true, true, true, arch.SwiGLUOAI
	c.Window, c.Local = 16, arch.SWAPattern(4, 2)
	c.Rope = arch.Rope{Theta: 150000, Scaling: arch.ScaleYaRN, Factor: 32, OrigContext: 64, BetaFast: 32, BetaSlow: 1, NoTruncate: true}
	c.MoE = arch.MoE{Experts: 4, TopK: 2, ExpertFFN: 32, Gating: arch.GateSoftmaxTopK, Bias: true}
	c.TensorNames = map[arch.Role]string{arch.RoleFFNNorm: "post_attention_norm"}
	return c
}

// gemma3 is a small configuration with Gemma 3's options.
func gemma3() arch.Config {
	c := dense()
	c.Arch, c.Layers, c.Act, c.PostNorm, c.TiedOutput = "gemma3", 6, arch.GeGLU, true, true
	c.EmbedScale, c.AttnScale = 8, 0.125 // sqrt(64); 1/sqrt(64), not 1/sqrt(32)
	c.Window, c.Local, c.LocalRope = 8, arch.SWAPattern(6, 6), arch.Rope{Theta: 10000}
	c.Rope.Scaling, c.Rope.Factor = arch.ScaleLinear, 8
	return c
}

// phi4mini is a small configuration with Phi-4-mini's options.
func phi4mini() arch.Config {
	c := dense()
	c.Arch, c.QKNorm, c.FusedQKV, c.FusedGateUp, c.RopeDims = "phi3", false, true, true, 24
	return c
}

func TestLayerOptions(t *testing.T) {
	if got := arch.SWAPattern(7, 3); !slices.Equal(got, []bool{true, true, false, true, true, false, true}) {
		t.Errorf("SWAPattern(7, 3) = %v", got)
	}
	if got := arch.SWAPattern(3, 1); !slices.Equal(got, []bool{false, false, false}) {
		t.Errorf("SWAPattern(3, 1) = %v", got)
	}
	if got := arch.SWAPattern(3, 0); !slices.Equal(got, []bool{true, true, true}) {
		t.Errorf("SWAPattern(3, 0) = %v", got)
	}
	g := gemma3()
	for i := range g.Layers {
		wantRope, wantWindow := &g.LocalRope, 8
		if i == 5 {
			wantRope, wantWindow = &g.Rope, 0
		}
		if g.LayerRope(i) != wantRope || g.LayerWindow(i) != wantWindow {
			t.Errorf("gemma3 layer %d: RoPE base %v, window %d", i, g.LayerRope(i).Theta, g.LayerWindow(i))
		}
	}
	o := gptOSS()
	if o.LayerRope(0) != &o.Rope || o.LayerWindow(0) != 16 || o.LayerWindow(1) != 0 || o.LayerWindow(9) != 0 {
		t.Errorf("gpt-oss: layer 0 RoPE %p (global %p), windows %d %d", o.LayerRope(0), &o.Rope, o.LayerWindow(0), o.LayerWindow(1))
	}
	if d := dense(); d.RotaryDims() != 32 || d.AttentionScale() != float32(1/math.Sqrt(32)) {
		t.Errorf("dense: %d rotated values, scale %v", d.RotaryDims(), d.AttentionScale())
	}
	if p := phi4mini(); p.RotaryDims() != 24 {
		t.Errorf("phi3: %d rotated values", p.RotaryDims())
	}
	if g.AttentionScale() != 0.125 {
		t.Errorf("gemma3: scale %v", g.AttentionScale())
	}
	if name := o.TensorName(arch.RoleFFNNorm, 3); name != "blk.3.post_attention_norm.weight" {
		t.Errorf("gpt-oss FFN norm %q", name)
	}
	if name := o.TensorName(arch.RoleAttnNorm, 3); name != "blk.3.attn_norm.weight" {
		t.Errorf("gpt-oss attention norm %q", name)
	}
}

func TestValidateOptions(t *testing.T) {
	for name, c := range map[string]arch.Config{"gpt-oss": gptOSS(), "gemma3": gemma3(), "phi3": phi4mini()} {
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, tc := range []struct {
		edit func(*arch.Config)
		want string
	}{
		{func(c *arch.Config) { c.Window = 0 }, "test: 5 sliding-window layers and no window"},
		{func(c *arch.Config) { c.Local = nil }, "test: a sliding window of 8 positions and no layer that uses it"},
		{func(c *arch.Config) { c.Local = c.Local[:5] }, "test: 5 sliding-window flags for 6 layers"},
		{func(c *arch.Config) { c.Window = -1 }, "test: sliding window -1 is out of range"},
		{func(c *arch.Config) { c.LocalRope.Style = arch.RopeNormal }, "test: the local layers' RoPE style normal differs from the global layers' NeoX"},
		{func(c *arch.Config) { c.LocalRope.Scaling = arch.ScaleLinear }, "test: local layers: RoPE linear scaling factor 0"},
		{func(c *arch.Config) { c.RopeDims = 7 }, "test: RoPE on 7 of a head's 32 values"},
		{func(c *arch.Config) { c.RopeDims = 34 }, "test: RoPE on 34 of a head's 32 values"},
		{func(c *arch.Config) { c.AttnScale = -1 }, "test: attention scale -1 must be finite and not negative"},
		{func(c *arch.Config) { c.EmbedScale = float32(math.Inf(1)) }, "test: embedding scale +Inf"},
		{func(c *arch.Config) { c.Act = arch.SwiGLUOAI + 1 }, "test: unknown activation Activation(3)"},
		{func(c *arch.Config) { c.MoE.Bias = true }, "test: a dense model has no experts to pick"},
		{func(c *arch.Config) { c.FusedGateUp, c.MoE = true, arch.MoE{Experts: 4, TopK: 2, ExpertFFN: 32} },
			"test: a fused gate and up matrix in a mixture of experts"},
		{func(c *arch.Config) { c.Rope = arch.Rope{Theta: 1e4, Scaling: arch.ScaleYaRN, Factor: 4} },
			"test: RoPE yarn scaling needs an original context length, not 0"},
		{func(c *arch.Config) {
			c.Rope = arch.Rope{Theta: 1e4, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 64, BetaFast: math.NaN()}
		}, "test: RoPE yarn beta fast NaN and slow 0 must be finite and not negative"},
		{func(c *arch.Config) {
			c.RopeDims, c.Rope.Scaling, c.Rope.FreqFactors = 16, arch.ScaleLlama3, slices.Repeat([]float32{1}, 16)
		},
			"test: 16 RoPE frequency factors for 16 rotated values of a head, want 8"},
		{func(c *arch.Config) { c.TensorNames = map[arch.Role]string{arch.RoleFFNNorm: ""} }, `test: tensor name "" for role ffn_norm`},
	} {
		c := gemma3()
		c.Arch = "test"
		tc.edit(&c)
		if err := c.Validate(); err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
}

// TestCheckOptions: each new option is a feature an executor that lacks
// it refuses by name.
func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		c    arch.Config
		want string
	}{
		{gptOSS(), "gpt-oss: the cuda backend does not run attention without QK-norm, Q/K/V biases, YaRN RoPE scaling, " +
			"an attention output bias, attention sinks, sliding-window attention, OpenAI's clamped SwiGLU, " +
			"mixture of experts (softmax over the top k), mixture-of-experts biases"},
		{gemma3(), "gemma3: the cuda backend does not run linear RoPE scaling, GeGLU, a non-default attention scale, " +
			"scaled embeddings, post-norms, sliding-window attention"},
		{phi4mini(), "phi3: the cuda backend does not run attention without QK-norm, partial RoPE"},
	} {
		if err := tc.c.Check("cuda", arch.Dense); err == nil || err.Error() != tc.want {
			t.Errorf("Check = %v,\nwant %q", err, tc.want)
		}
	}
	// Values that are the defaults need nothing.
	c := dense()
	c.AttnScale, c.EmbedScale, c.RopeDims = float32(1/math.Sqrt(32)), 1, 32
	if f := c.Features(); f != arch.FeatQKNorm|arch.FeatRopeNeoX|arch.FeatSwiGLU|arch.FeatUntiedOutput {
		t.Errorf("default values: features %v", f)
	}
	// The local layers' RoPE scaling counts too.
	g := gemma3()
	g.Rope.Scaling, g.LocalRope = arch.ScaleNone, arch.Rope{Theta: 1e4, Scaling: arch.ScaleLlama3}
	if f := g.Features(); f&arch.FeatRopeLlama3 == 0 || f&arch.FeatRopeLinear != 0 {
		t.Errorf("local Llama 3 scaling: features %v", f)
	}
}

func TestRolesOptions(t *testing.T) {
	o := gptOSS()
	want := []arch.Role{arch.RoleAttnNorm, arch.RoleQ, arch.RoleK, arch.RoleV, arch.RoleQBias, arch.RoleKBias, arch.RoleVBias,
		arch.RoleSinks, arch.RoleO, arch.RoleOBias, arch.RoleFFNNorm, arch.RoleRouter, arch.RoleExpertGate, arch.RoleExpertUp,
		arch.RoleExpertDown, arch.RoleRouterBias, arch.RoleExpertGateBias, arch.RoleExpertUpBias, arch.RoleExpertDownBias}
	if got := o.LayerRoles(); !slices.Equal(got, want) {
		t.Errorf("gpt-oss roles %v,\nwant %v", got, want)
	}
	g := gemma3()
	want = []arch.Role{arch.RoleAttnNorm, arch.RoleQ, arch.RoleK, arch.RoleV, arch.RoleQNorm, arch.RoleKNorm, arch.RoleO,
		arch.RoleAttnPostNorm, arch.RoleFFNNorm, arch.RoleGate, arch.RoleUp, arch.RoleDown, arch.RoleFFNPostNorm}
	if got := g.LayerRoles(); !slices.Equal(got, want) {
		t.Errorf("gemma3 roles %v,\nwant %v", got, want)
	}
	for r, name := range map[arch.Role]string{arch.RoleOBias: "blk.2.attn_output.bias", arch.RoleAttnPostNorm: "blk.2.post_attention_norm.weight",
		arch.RoleFFNPostNorm: "blk.2.post_ffw_norm.weight", arch.RoleSinks: "blk.2.attn_sinks.weight", arch.RoleRouterBias: "blk.2.ffn_gate_inp.bias",
		arch.RoleExpertGateBias: "blk.2.ffn_gate_exps.bias", arch.RoleExpertUpBias: "blk.2.ffn_up_exps.bias", arch.RoleExpertDownBias: "blk.2.ffn_down_exps.bias"} {
		if got := r.Tensor(2); got != name || !r.Vector() || !r.PerLayer() {
			t.Errorf("%v: %q vector %v, want %q", r, got, r.Vector(), name)
		}
	}
	for _, s := range []struct {
		r                   arch.Role
		rows, cols, experts int
	}{{arch.RoleSinks, 4, 1, 1}, {arch.RoleOBias, 64, 1, 1}, {arch.RoleRouterBias, 4, 1, 1}, {arch.RoleExpertUpBias, 32, 1, 4}, {arch.RoleExpertDownBias, 64, 1, 4}} {
		if rows, cols, e := o.Shape(s.r); rows != s.rows || cols != s.cols || e != s.experts {
			t.Errorf("%v: %d x %d x %d, want %d x %d x %d", s.r, rows, cols, e, s.rows, s.cols, s.experts)
		}
	}
}

// loadOpts reads f as a model with the options of want that files do not
// state, ReadSlidingWindow (period 2) when want has a window, and checks
// its weights.
func loadOpts(f *gguf.File, want *arch.Config) (arch.Config, *arch.Weights, error) {
	c, err := arch.ReadConfig(f, want.Arch)
	if err != nil {
		return c, nil, err
	}
	c.QKNorm, c.Bias, c.Act, c.OutBias, c.Sinks, c.PostNorm = want.QKNorm, want.Bias, want.Act, want.OutBias, want.Sinks, want.PostNorm
	c.FusedQKV, c.FusedGateUp, c.TensorNames, c.MoE.Bias, c.Rope.NoTruncate = want.FusedQKV, want.FusedGateUp, want.TensorNames, want.MoE.Bias, want.Rope.NoTruncate
	if want.Window != 0 {
		if err := arch.ReadSlidingWindow(f, &c, 2); err != nil {
			return c, nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return c, nil, err
	}
	w, err := arch.Load(f, &c)
	if err != nil {
		return c, nil, err
	}
	return c, w, w.Check(&c)
}

// gptOSSMeta is the metadata llama.cpp's converter writes for gptOSS()'s
// options.
func gptOSSMeta() map[string]any {
	return map[string]any{".rope.scaling.type": "yarn", ".rope.scaling.factor": float32(32), ".rope.scaling.original_context_length": uint32(64),
		".expert_gating_func": uint32(3), ".attention.sliding_window": uint32(16)}
}

func TestLoadOptions(t *testing.T) {
	t.Run("gpt-oss", func(t *testing.T) {
		c := gptOSS()
		f := writeModel(t, &c, gptOSSMeta())
		got, w, err := loadOpts(f, &c)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Rope, c.Rope) || got.MoE != c.MoE || got.Window != 16 || !slices.Equal(got.Local, c.Local) || got.LocalRope.Theta != 0 {
			t.Errorf("config %+v", got)
		}
		l := &w.Layers[3]
		if n := len(l.Vector(arch.RoleExpertUpBias)); n != 4*32 {
			t.Errorf("%d expert up biases", n)
		}
		if n := len(l.Vector(arch.RoleSinks)); n != 4 {
			t.Errorf("%d sinks", n)
		}
		if l.Vector(arch.RoleFFNNorm) == nil {
			t.Error("no FFN norm")
		}
	})
	t.Run("phi3", func(t *testing.T) {
		c := phi4mini()
		f := writeModel(t, &c, map[string]any{".rope.dimension_count": uint32(24)})
		got, w, err := loadOpts(f, &c)
		if err != nil {
			t.Fatal(err)
		}
		if got.RopeDims != 24 {
			t.Errorf("RopeDims %d", got.RopeDims)
		}
		qkv, _ := f.Tensor("blk.1.attn_qkv.weight")
		gu, _ := f.Tensor("blk.1.ffn_up.weight")
		l := &w.Layers[1]
		rb := 4 * c.Hidden
		for _, v := range []struct {
			r      arch.Role
			data   []byte
			lo, hi int
		}{{arch.RoleQ, qkv.Data, 0, 128}, {arch.RoleK, qkv.Data, 128, 192}, {arch.RoleV, qkv.Data, 192, 256},
			{arch.RoleGate, gu.Data, 0, 96}, {arch.RoleUp, gu.Data, 96, 192}} {
			m := l.Matrix(v.r)
			if m.Rows != v.hi-v.lo || m.Cols != c.Hidden || unsafe.SliceData(m.Data) != &v.data[v.lo*rb] || len(m.Data) != (v.hi-v.lo)*rb {
				t.Errorf("%v: %d x %d, not rows %d..%d of the fused tensor", v.r, m.Rows, m.Cols, v.lo, v.hi)
			}
		}
		// The views' bytes add up to the fused tensors'.
		var want int64
		for _, ti := range f.Tensors {
			if ti.Name != "token_embd.weight" {
				want += int64(len(ti.Data))
			}
		}
		if got := w.ReadBytes(); got != want {
			t.Errorf("ReadBytes() = %d, want %d", got, want)
		}
	})
	t.Run("gemma3", func(t *testing.T) {
		c := gemma3()
		f := writeModel(t, &c, map[string]any{".rope.scaling.type": "linear", ".rope.scaling.factor": float32(8),
			".attention.sliding_window": uint32(8), ".rope.freq_base_swa": float32(10000), ".attention.sliding_window_pattern": uint32(6)})
		got, err := arch.ReadConfig(f, "gemma3")
		if err != nil {
			t.Fatal(err)
		}
		if err := arch.ReadSlidingWindow(f, &got, 2); err != nil { // the file's period wins
			t.Fatal(err)
		}
		if got.Window != 8 || !slices.Equal(got.Local, c.Local) || !reflect.DeepEqual(got.LocalRope, c.LocalRope) || got.Rope.Factor != 8 {
			t.Errorf("window %d, local %v, local RoPE %+v", got.Window, got.Local, got.LocalRope)
		}
	})
}

func TestReadSlidingWindow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra map[string]any
		local []bool
		err   string
	}{
		{"none", nil, nil, ""},
		{"zero", map[string]any{".attention.sliding_window": uint32(0)}, nil, ""},
		{"period", map[string]any{".attention.sliding_window": uint32(16)}, []bool{true, false, true, false}, ""},
		{"file's period", map[string]any{".attention.sliding_window": uint32(16), ".attention.sliding_window_pattern": uint32(4)},
			[]bool{true, true, true, false}, ""},
		{"flags", map[string]any{".attention.sliding_window": uint32(16), ".attention.sliding_window_pattern": []bool{false, true, true, false}},
			[]bool{false, true, true, false}, ""},
		{"all global", map[string]any{".attention.sliding_window": uint32(16), ".attention.sliding_window_pattern": []bool{false, false, false, false}},
			nil, ""},
		{"flags a layer", map[string]any{".attention.sliding_window": uint32(16), ".attention.sliding_window_pattern": []bool{true}},
			nil, "gpt-oss: gpt-oss.attention.sliding_window_pattern is an array of 1 bool; want 4 bools, one a layer"},
		{"pattern type", map[string]any{".attention.sliding_window": uint32(16), ".attention.sliding_window_pattern": "LLLG"},
			nil, `gpt-oss: gguf: metadata "gpt-oss.attention.sliding_window_pattern" is a string`},
		{"window type", map[string]any{".attention.sliding_window": "wide"}, nil, `gpt-oss: gguf: metadata "gpt-oss.attention.sliding_window" is a string`},
		{"window range", map[string]any{".attention.sliding_window": int32(-4)}, nil, "gpt-oss: gpt-oss.attention.sliding_window = -4 is out of range"},
		{"local base", map[string]any{".attention.sliding_window": uint32(16), ".rope.freq_base_swa": "high"}, nil,
			`gpt-oss: gguf: metadata "gpt-oss.rope.freq_base_swa" is a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dense()
			c.Arch, c.Layers = "gpt-oss", 4
			f := writeModel(t, &c, tc.extra)
			err := arch.ReadSlidingWindow(f, &c, 2)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Local, tc.local) || (c.Window > 0) != (tc.local != nil) {
				t.Errorf("window %d, local %v, want %v", c.Window, c.Local, tc.local)
			}
		})
	}
}

func TestLoadOptionsErrors(t *testing.T) {
	// A file without the experts' biases, but for a flat gate bias in
	// layer 0.
	unbiased, biasMeta := gptOSS(), gptOSSMeta()
	unbiased.MoE.Bias = false
	biasMeta["tensor:blk.0.ffn_gate_inp.bias"] = make([]float32, 4)
	biasMeta["tensor:blk.0.ffn_gate_exps.bias"] = make([]float32, 4*32)
	for _, tc := range []struct {
		name  string
		c     arch.Config
		extra map[string]any
		edit  func(*arch.Config)
		want  string
	}{
		{"expert bias shape", unbiased, biasMeta, func(c *arch.Config) { c.MoE.Bias = true },
			`gpt-oss: tensor "blk.0.ffn_gate_exps.bias": shape [128], want [32 4]`},
		{"renamed norm", gptOSS(), gptOSSMeta(), func(c *arch.Config) { c.TensorNames = nil }, `gpt-oss: missing tensor "blk.0.ffn_norm.weight"`},
		{"fused", phi4mini(), nil, func(c *arch.Config) { c.FusedQKV = false }, `phi3: missing tensor "blk.0.attn_q.weight"`},
		{"not fused", dense(), nil, func(c *arch.Config) { c.FusedGateUp, c.QKNorm = true, true }, `test: tensor "blk.0.ffn_up.weight": shape [64 96], want [64 192]`},
		{"rope dims", phi4mini(), map[string]any{".rope.dimension_count": uint32(33)}, nil, "phi3: RoPE on 33 of a head's 32 values"},
		{"yarn beta", gptOSS(), map[string]any{".rope.scaling.type": "yarn", ".rope.scaling.factor": float32(32),
			".rope.scaling.yarn_beta_fast": "fast"}, nil, `gpt-oss: RoPE yarn scaling: gguf: metadata "gpt-oss.rope.scaling.yarn_beta_fast" is a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := writeModel(t, &tc.c, tc.extra)
			want := tc.c
			if tc.edit != nil {
				tc.edit(&want)
			}
			_, _, err := loadOpts(f, &want)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line starting %q", err, tc.want)
			}
		})
	}
	// The YaRN keys llama.cpp's converter writes.
	c := gptOSS()
	meta := gptOSSMeta()
	meta[".rope.scaling.yarn_beta_fast"], meta[".rope.scaling.yarn_beta_slow"] = float32(16), float32(2)
	meta[".rope.scaling.original_context_length"] = nil
	got, _, err := loadOpts(writeModel(t, &c, meta), &c)
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Rope; r.BetaFast != 16 || r.BetaSlow != 2 || r.OrigContext != c.ContextLength {
		t.Errorf("RoPE %+v", r)
	}
}

// FuzzLoadOptions reads fuzzed files as models with the options of
// gpt-oss, Gemma 3 and Phi-4-mini: a clear error or a model whose weights
// pass Check, never a panic.
func FuzzLoadOptions(f *testing.F) {
	shrink := func(c arch.Config) arch.Config {
		c.Hidden, c.FFN, c.Vocab, c.Heads, c.KVHeads, c.HeadDim = 16, 16, 4, 2, 1, 8
		if c.MoE.Enabled() {
			c.MoE.ExpertFFN = 8
		}
		if c.RopeDims != 0 {
			c.RopeDims = 4
		}
		return c
	}
	o, g, p := shrink(gptOSS()), shrink(gemma3()), shrink(phi4mini())
	f.Add(uint8(0), modelBytes(f, &o, gptOSSMeta()))
	f.Add(uint8(1), modelBytes(f, &g, map[string]any{".attention.sliding_window": uint32(8), ".rope.freq_base_swa": float32(1e4),
		".attention.sliding_window_pattern": []bool{true, false, true, true, true, false}}))
	f.Add(uint8(2), modelBytes(f, &p, map[string]any{".rope.dimension_count": uint32(4)}))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		gf, err := gguf.Parse(data)
		if err != nil {
			return
		}
		want := []arch.Config{o, g, p}[int(which)%3]
		if _, w, err := loadOpts(gf, &want); err == nil && w == nil {
			t.Fatal("no weights and no error")
		} else if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of several lines: %v", err)
		}
	})
}

// TestRowRange checks the views Load makes of fused tensors.
func TestRowRange(t *testing.T) {
	w := &arch.Weight{Name: "x", Type: gguf.TensorF32, Rows: 5, Cols: 3, Data: make([]byte, 5*12)}
	for i := range w.Data {
		w.Data[i] = byte(i)
	}
	v := w.RowRange(1, 4)
	if v.Rows != 3 || v.Cols != 3 || v.Name != "x" || &v.Data[0] != &w.Data[12] || len(v.Data) != 36 || cap(v.Data) != 36 {
		t.Errorf("view %d x %d of %d bytes", v.Rows, v.Cols, len(v.Data))
	}
	if !slices.Equal(v.Row(2), w.Row(3)) {
		t.Error("row 2 of the view is not row 3")
	}
	if e := w.RowRange(5, 5); e.Rows != 0 || len(e.Data) != 0 {
		t.Error("empty view")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "rows 4..6 of x") {
			t.Errorf("panic %v", r)
		}
	}()
	w.RowRange(4, 6)
}
