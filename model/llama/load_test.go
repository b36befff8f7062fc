package llama_test

import (
	"strings"
	"testing"

	"inferno/arch"
	"inferno/gguf"
	"inferno/model/llama"
	"inferno/model/modeltest"
	"inferno/synth"
)

// synthFile writes a small llama3-8b-shaped model (untied, Llama 3's
// scaling) through edit, which may change or drop (false) each metadata
// pair and tensor.
func synthFile(t *testing.T, editKV func(*gguf.KV) bool, editTensor func(*gguf.TensorInfo) bool) *gguf.File {
	t.Helper()
	src := modeltest.Synth(t, synth.Options{Preset: "llama3-8b", Shape: synth.Shape{Layers: 2, Hidden: 64, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 16, Vocab: 300}, Type: gguf.TensorF32, Seed: 1})
	return modeltest.Edit(t, src, editKV, editTensor)
}

func TestLoad(t *testing.T) {
	m, err := llama.Load(synthFile(t, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Hyper()
	if c.Arch != "llama" || c.QKNorm || c.Bias || c.Rope.Style != arch.RopeNormal || c.Rope.Scaling != arch.ScaleLlama3 ||
		len(c.Rope.FreqFactors) != 8 || c.TiedOutput || c.HeadDim != 16 || len(m.Plan()) != 5*c.Layers {
		t.Errorf("configuration %+v", c)
	}
	// Without key_length (a checkpoint without head_dim), a head is
	// Hidden/Heads values wide: 64/4 = 16 here, as key_length says.
	noKeyLength := func(kv *gguf.KV) bool {
		return !strings.HasPrefix(kv.Key, "llama.attention.key_length") && kv.Key != "llama.attention.value_length"
	}
	if m, err := llama.Load(synthFile(t, noKeyLength, nil)); err != nil || m.Hyper().HeadDim != 16 {
		t.Errorf("without key_length: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		editKV     func(*gguf.KV) bool
		editTensor func(*gguf.TensorInfo) bool
		want       string
	}{
		{"odd RoPE dimensions", modeltest.Rename(t, map[string]any{"general.file_type": []any{"llama.rope.dimension_count", uint32(7)}}), nil,
			"llama: RoPE on 7 of a head's 16 values; want an even number up to it"},
		{"biases", nil, func(ti *gguf.TensorInfo) bool {
			if ti.Name == "rope_freqs.weight" {
				ti.Name = "blk.0.attn_q.bias"
			}
			return true
		}, `llama: tensor "blk.0.attn_q.bias": Llama models with attention biases are not supported`},
		{"experts", modeltest.Rename(t, map[string]any{
			"general.file_type":            []any{"llama.expert_count", uint32(8)},
			"general.quantization_version": []any{"llama.expert_used_count", uint32(2)},
			"general.name":                 []any{"llama.expert_feed_forward_length", uint32(32)},
		}), nil, "llama: 8 experts: inferno runs dense Llama models, not mixtures of experts (Mixtral)"},
		{"rope_freqs of the wrong size", nil, func(ti *gguf.TensorInfo) bool {
			if ti.Name == "rope_freqs.weight" {
				ti.Shape, ti.Data = []uint64{4}, ti.Data[:16]
			}
			return true
		}, `llama: tensor "rope_freqs.weight": shape [4], want [8]`},
		{"missing tensor", nil, func(ti *gguf.TensorInfo) bool { return ti.Name != "blk.1.ffn_up.weight" }, `llama: missing tensor "blk.1.ffn_up.weight"`},
	} {
		_, err := llama.Load(synthFile(t, tc.editKV, tc.editTensor))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
