package qwen3_test

import (
	"path/filepath"
	"strings"
	"testing"

	"inferno/backend/scalar"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/modeltest"
	"inferno/model/qwen3"
)

// mutate copies the golden model through the writer, letting edit change
// each metadata pair and tensor (returning false drops it), and parses the result.
func mutate(t *testing.T, editKV func(*gguf.KV) bool, editTensor func(*gguf.TensorInfo) bool) *gguf.File {
	t.Helper()
	src, err := gguf.Open(filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return modeltest.Edit(t, src, editKV, editTensor)
}

func TestLoadErrors(t *testing.T) {
	value := func(x any) gguf.Value { return modeltest.Value(t, x) }
	tests := []struct {
		name       string
		editKV     func(*gguf.KV) bool
		editTensor func(*gguf.TensorInfo) bool
		want       string
	}{
		{
			name: "unknown architecture",
			editKV: func(kv *gguf.KV) bool {
				if kv.Key == "general.architecture" {
					kv.Value = value("llama")
				}
				return true
			},
			want: `unsupported architecture "llama"`,
		},
		{
			name:   "missing metadata",
			editKV: func(kv *gguf.KV) bool { return kv.Key != "qwen3.attention.key_length" },
			want:   `missing metadata key "qwen3.attention.key_length"`,
		},
		{
			name:       "missing tensor",
			editTensor: func(ti *gguf.TensorInfo) bool { return ti.Name != "blk.1.ffn_up.weight" },
			want:       `missing tensor "blk.1.ffn_up.weight"`,
		},
		{
			name: "shape mismatch",
			editKV: func(kv *gguf.KV) bool {
				if kv.Key == "qwen3.feed_forward_length" {
					kv.Value = value(uint32(256))
				}
				return true
			},
			want: `tensor "blk.0.ffn_gate.weight": shape [64 192], want [64 256]`,
		},
		{
			name: "unsupported type",
			editTensor: func(ti *gguf.TensorInfo) bool {
				if ti.Name == "blk.0.attn_k.weight" {
					// A type GGUF knows and package numfmt does not; re-size the data.
					ti.Type = gguf.TensorI32
					ti.Data = make([]byte, 64*64*4)
				}
				return true
			},
			want: `tensor "blk.0.attn_k.weight": type I32 is not supported`,
		},
		{
			name: "heads not multiple of kv heads",
			editKV: func(kv *gguf.KV) bool {
				if kv.Key == "qwen3.attention.head_count_kv" {
					kv.Value = value(uint32(3))
				}
				return true
			},
			want: "4 query heads are not a multiple of 3 KV heads",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := mutate(t, tc.editKV, tc.editTensor)
			_, err := qwen3.Load(f)
			if err == nil {
				t.Fatalf("Load succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestForwardErrors(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	r := newSingle(t, m, scalar.NewScalar(), 8, kvcache.F32)
	if err := r.Forward(nil); err == nil {
		t.Error("Forward of no tokens succeeded")
	}
	if err := r.Forward([]int32{151936}); err == nil || !strings.Contains(err.Error(), "outside the vocabulary") {
		t.Errorf("out-of-range token: err = %v", err)
	}
	if err := r.Forward(make([]int32, 9)); err == nil || !strings.Contains(err.Error(), "do not fit the context of 8") {
		t.Errorf("overlong input: err = %v", err)
	}
}
