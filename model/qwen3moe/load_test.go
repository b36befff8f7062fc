package qwen3moe_test

import (
	"strings"
	"testing"

	"inferno/arch"
	"inferno/gguf"
	"inferno/model/modeltest"
	"inferno/model/qwen3moe"
	"inferno/synth"
)

// synthFile writes a small tiny-moe-shaped model (6 experts of width 32,
// 3 a token, untied) through edit, which may change or drop (false) each
// metadata pair and tensor.
func synthFile(t *testing.T, editKV func(*gguf.KV) bool, editTensor func(*gguf.TensorInfo) bool) *gguf.File {
	t.Helper()
	src := modeltest.Synth(t, synth.Options{Preset: "tiny-moe", Shape: synth.Shape{Layers: 2, Hidden: 64, FFN: 96, Heads: 6, KVHeads: 2, HeadDim: 16,
		Vocab: 300, Experts: 6, TopK: 3, ExpertFFN: 32, Untied: true}, Type: gguf.TensorF32, Seed: 1})
	return modeltest.Edit(t, src, editKV, editTensor)
}

func TestLoad(t *testing.T) {
	m, err := qwen3moe.Load(synthFile(t, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Hyper()
	want := arch.MoE{Experts: 6, TopK: 3, ExpertFFN: 32, NormTopK: true}
	if c.Arch != "qwen3moe" || !c.QKNorm || c.Bias || c.Rope.Style != arch.RopeNeoX || c.TiedOutput || c.MoE != want || len(m.Plan()) != 4*c.Layers {
		t.Errorf("configuration %+v", c)
	}
	if r := m.Plan()[3]; r.Op != arch.OpMoE || r.Layer != 0 {
		t.Errorf("step 3 is %v of layer %d, want moe of layer 0", r.Op, r.Layer)
	}
	up := m.Layers[1].Matrix(arch.RoleExpertUp)
	if up.Rows != 6*32 || up.Cols != 64 {
		t.Errorf("ffn_up_exps is %dx%d, want 192x64", up.Rows, up.Cols)
	}
	// A file that says the chosen experts' weights are not renormalized
	// (norm_topk_prob false, as inferno's converter writes it).
	noNorm := func(kv *gguf.KV) bool {
		if kv.Key == "general.name" {
			kv.Key, kv.Value = "qwen3moe.expert_weights_norm", modeltest.Value(t, false)
		}
		return true
	}
	if m, err := qwen3moe.Load(synthFile(t, noNorm, nil)); err != nil || m.Hyper().MoE.NormTopK {
		t.Errorf("expert_weights_norm false: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		editKV     func(*gguf.KV) bool
		editTensor func(*gguf.TensorInfo) bool
		want       string
	}{
		{"no experts", func(kv *gguf.KV) bool { return !strings.HasPrefix(kv.Key, "qwen3moe.expert_") }, nil,
			`qwen3moe: no experts (qwen3moe.expert_count); a dense Qwen3 is a "qwen3" file`},
		{"sigmoid gating", modeltest.Rename(t, map[string]any{"general.name": []any{"qwen3moe.expert_gating_func", uint32(2)}}), nil,
			"qwen3moe: expert gating sigmoid; Qwen3-MoE's router is a softmax"},
		{"more used than there are", modeltest.Rename(t, map[string]any{"qwen3moe.expert_used_count": []any{"qwen3moe.expert_used_count", uint32(7)}}), nil,
			"qwen3moe: 7 experts a token out of 6 is out of range"},
		{"a stack of 5 experts", nil, func(ti *gguf.TensorInfo) bool {
			if ti.Name == "blk.1.ffn_down_exps.weight" {
				ti.Shape[2] = 5
				ti.Data = ti.Data[:len(ti.Data)/6*5]
			}
			return true
		}, `qwen3moe: tensor "blk.1.ffn_down_exps.weight": shape [32 64 5], want [32 64 6]`},
		{"missing router", nil, func(ti *gguf.TensorInfo) bool { return ti.Name != "blk.0.ffn_gate_inp.weight" },
			`qwen3moe: missing tensor "blk.0.ffn_gate_inp.weight"`},
	} {
		_, err := qwen3moe.Load(synthFile(t, tc.editKV, tc.editTensor))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
