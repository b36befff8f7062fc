package synth

import (
	"math"
	"testing"

	"inferno/arch"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/scalar"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/qwen3moe"
)

// TestMoEPresets: 30b-a3b has Qwen3-30B-A3B's shape and parameter count
// (30,532M, of which 3,041M are multiplied for a token: its 8 of 128
// experts, attention, the routers and the head; 3.3B with the embedding,
// as Qwen counts), and its expert stacks are 3-D.
func TestMoEPresets(t *testing.T) {
	p := presetConfig("30b-a3b")
	total, active := 0, 0
	for _, s := range specs(p) {
		n := s.rows * s.cols
		total += n
		switch {
		case s.experts > 0:
			active += n / s.experts * p.MoE.TopK
			if sh := s.shape(); len(sh) != 3 || sh[2] != 128 {
				t.Errorf("%s: shape %v", s.name, sh)
			}
		case s.name != "token_embd.weight":
			active += n
		}
	}
	if p.Arch != "qwen3moe" || total/1e6 != 30532 || active/1e6 != 3041 {
		t.Errorf("30b-a3b: %s, %dM parameters, %dM active", p.Arch, total/1e6, active/1e6)
	}
}

// TestMoELoads writes tiny-moe and 30b-a3b at a small width, in a K-quant
// mixture and in Q8_0, loads them with package qwen3moe and runs a few
// tokens.
func TestMoELoads(t *testing.T) {
	for _, tc := range []struct{ preset, mixture string }{{"tiny-moe", "Q4_K_M"}, {"30b-a3b", "Q8_0"}} {
		t.Run(tc.preset, func(t *testing.T) {
			small := Shape{Layers: 2, Hidden: 256, FFN: 128, Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 512, Experts: 6, TopK: 2, ExpertFFN: 256}
			f, _ := write(t, Options{Preset: tc.preset, Shape: small, Mixture: tc.mixture, Seed: 1})
			m, err := qwen3moe.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			want := arch.MoE{Experts: 6, TopK: 2, ExpertFFN: 256, NormTopK: true}
			if c := m.Hyper(); c.MoE != want || c.TiedOutput != presetConfig(tc.preset).TiedOutput {
				t.Fatalf("configuration %+v", c)
			}
			l := &m.Tensors().Layers[1]
			if typ := l.Matrix(arch.RoleRouter).Type; typ != gguf.TensorF32 {
				t.Errorf("ffn_gate_inp is %s, want F32", typ)
			}
			if tc.mixture == "Q4_K_M" {
				if typ := l.Matrix(arch.RoleExpertUp).Type; typ != gguf.TensorQ4_K {
					t.Errorf("ffn_up_exps is %s, want Q4_K", typ)
				}
			}
			r := forwardtest.Single(t, m, scalar.NewScalar(), 64, kvcache.F32)
			defer r.Close()
			if err := r.Forward([]int32{1, 2, 3, 4}); err != nil {
				t.Fatal(err)
			}
			lg, _ := r.Logits()
			for _, x := range lg {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("logit %v", x)
				}
			}
		})
	}
}
