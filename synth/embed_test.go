package synth

import (
	"bytes"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/gguf"
	"inferno/model/qwen3"
)

// TestEmbeddingModel: Options.Embedding writes qwen3.pooling_type 3, which
// loads as last-token pooling; other architectures' presets are refused.
func TestEmbeddingModel(t *testing.T) {
	f, _ := write(t, Options{Preset: "tiny", Type: gguf.TensorQ8_0, Embedding: true})
	if v, err := f.Int("qwen3.pooling_type"); err != nil || v != 3 {
		t.Fatalf("qwen3.pooling_type %d, %v", v, err)
	}
	c, err := qwen3.ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pooling != arch.PoolLast || !c.Embedding() {
		t.Errorf("pooling %v", c.Pooling)
	}
	plain, _ := write(t, Options{Preset: "tiny", Type: gguf.TensorQ8_0})
	if _, ok := plain.Value("qwen3.pooling_type"); ok {
		t.Error("a language model has a pooling type")
	}
	err = Write(&bytes.Buffer{}, Options{Preset: "llama3-1b", Shape: Shape{Layers: 1, Hidden: 64, FFN: 64, Heads: 2, KVHeads: 1, HeadDim: 32, Vocab: 300}, Type: gguf.TensorF32, Embedding: true})
	if err == nil || !strings.Contains(err.Error(), "the llama architecture has no embedding models") {
		t.Errorf("a llama embedding model: %v", err)
	}
}
