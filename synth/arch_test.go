package synth

import (
	"math"
	"testing"

	"inferno/arch"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/scalar"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/llama"
	"inferno/model/qwen2"
)

// TestArchPresets: the Llama and Qwen2.5 presets have their models'
// shapes and parameter counts (Llama 3.2 1B 1,236M, Llama 3.1 8B 8,030M,
// Qwen2.5-0.5B 494M, Qwen2.5-7B 7,616M with biases), RoPE and scaling.
func TestArchPresets(t *testing.T) {
	want := map[string]struct {
		arch   string
		params int // millions
		theta  float64
		factor float64
	}{
		"llama3-1b":    {"llama", 1235, 500000, 32},
		"llama3-8b":    {"llama", 8030, 500000, 8},
		"qwen2.5-0.5b": {"qwen2", 494, 1e6, 0},
		"qwen2.5-7b":   {"qwen2", 7615, 1e6, 0},
	}
	for name, w := range want {
		p := presetConfig(name)
		n := 0
		for _, s := range specs(p) {
			n += s.rows * s.cols
		}
		if p.Arch != w.arch || n/1e6 != w.params || p.Rope.Theta != w.theta || p.Rope.Factor != w.factor {
			t.Errorf("%s: %s, %dM parameters, theta %v, llama3 factor %v; want %+v", name, p.Arch, n/1e6, p.Rope.Theta, p.Rope.Factor, w)
		}
	}
}

// TestArchLoads writes each Llama and Qwen2.5 preset at a small width,
// loads it with its architecture's package and runs a few tokens.
func TestArchLoads(t *testing.T) {
	small := Shape{Layers: 2, Hidden: 64, FFN: 128, Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 512}
	for _, name := range []string{"llama3-1b", "llama3-8b", "qwen2.5-0.5b", "qwen2.5-7b"} {
		t.Run(name, func(t *testing.T) {
			f, _ := write(t, Options{Preset: name, Shape: small, Mixture: "Q8_0", Seed: 1})
			var m arch.Model
			var err error
			switch presetConfig(name).Arch {
			case "llama":
				m, err = llama.Load(f)
			default:
				m, err = qwen2.Load(f)
			}
			if err != nil {
				t.Fatal(err)
			}
			c := m.Hyper()
			p := presetConfig(name)
			if c.TiedOutput != p.TiedOutput || c.Bias != (p.Arch == "qwen2") || (c.Rope.FreqFactors != nil) != (p.Rope.Factor != 0) || c.Rope.Theta != p.Rope.Theta {
				t.Fatalf("configuration %+v", c)
			}
			if typ := m.Tensors().Layers[0].Matrix(arch.RoleQ).Type; typ != gguf.TensorQ8_0 {
				t.Errorf("attn_q is %s", typ)
			}
			r := forwardtest.Single(t, m, scalar.NewScalar(), 64, kvcache.F32)
			defer r.Close()
			if err := r.Forward([]int32{1, 2, 3, 4}); err != nil {
				t.Fatal(err)
			}
			l, _ := r.Logits()
			for _, x := range l {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("logit %v", x)
				}
			}
		})
	}
}
