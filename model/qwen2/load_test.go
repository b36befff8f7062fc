package qwen2_test

import (
	"strings"
	"testing"

	"inferno/arch"
	"inferno/gguf"
	"inferno/model/modeltest"
	"inferno/model/qwen2"
	"inferno/synth"
)

// synthFile writes a small qwen2.5-0.5b-shaped model (tied, biases)
// through edit, which may change or drop (false) each metadata
// pair and tensor.
func synthFile(t *testing.T, editKV func(*gguf.KV) bool, editTensor func(*gguf.TensorInfo) bool) *gguf.File {
	t.Helper()
	src := modeltest.Synth(t, synth.Options{Preset: "qwen2.5-0.5b", Shape: synth.Shape{Layers: 2, Hidden: 64, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 16, Vocab: 300}, Type: gguf.TensorF32, Seed: 1})
	return modeltest.Edit(t, src, editKV, editTensor)
}

func TestLoad(t *testing.T) {
	m, err := qwen2.Load(synthFile(t, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Hyper()
	if c.Arch != "qwen2" || c.QKNorm || !c.Bias || c.Rope.Style != arch.RopeNeoX || c.Rope.Scaling != arch.ScaleNone ||
		!c.TiedOutput || c.HeadDim != 16 || len(m.Plan()) != 5*c.Layers || len(m.Tensors().Layers[1].Vector(arch.RoleKBias)) != 32 {
		t.Errorf("configuration %+v", c)
	}
	noKeyLength := func(kv *gguf.KV) bool {
		return kv.Key != "qwen2.attention.key_length" && kv.Key != "qwen2.attention.value_length"
	}
	if m, err := qwen2.Load(synthFile(t, noKeyLength, nil)); err != nil || m.Hyper().HeadDim != 16 {
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
		{"no bias", nil, func(ti *gguf.TensorInfo) bool { return ti.Name != "blk.1.attn_k.bias" }, `qwen2: missing tensor "blk.1.attn_k.bias"`},
		{"bias size", nil, func(ti *gguf.TensorInfo) bool {
			if ti.Name == "blk.0.attn_v.bias" {
				ti.Shape, ti.Data = []uint64{16}, ti.Data[:64]
			}
			return true
		}, `qwen2: tensor "blk.0.attn_v.bias": shape [16], want [32]`},
		{"experts", modeltest.Rename(t, map[string]any{
			"general.file_type":            []any{"qwen2.expert_count", uint32(8)},
			"general.quantization_version": []any{"qwen2.expert_used_count", uint32(2)},
			"general.name":                 []any{"qwen2.expert_feed_forward_length", uint32(32)},
		}), nil, `qwen2: 8 experts: Qwen2 is dense (its mixture-of-experts models are "qwen2moe" files)`},
		{"no key_length, heads not dividing", func(kv *gguf.KV) bool {
			if kv.Key == "qwen2.attention.head_count" {
				kv.Value = modeltest.Value(t, uint32(6))
			}
			return kv.Key != "qwen2.attention.key_length"
		}, nil, "qwen2: no qwen2.attention.key_length, and 6 heads do not divide the embedding length 64"},
	} {
		_, err := qwen2.Load(synthFile(t, tc.editKV, tc.editTensor))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
