package synth

import (
	"bytes"
	"crypto/sha256"
	"math"
	"testing"

	"inferno/backend/cpu"
	"inferno/gguf"
	"inferno/model"
	"inferno/model/qwen3"
)

func write(t *testing.T, opts Options) (*gguf.File, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, opts); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f, buf.Bytes()
}

func TestTinyLoadsAndIsDeterministic(t *testing.T) {
	for _, typ := range []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorF16, gguf.TensorBF16, gguf.TensorF32} {
		f, b1 := write(t, Options{Preset: "tiny", Type: typ, Seed: 3})
		_, b2 := write(t, Options{Preset: "tiny", Type: typ, Seed: 3})
		_, b3 := write(t, Options{Preset: "tiny", Type: typ, Seed: 4})
		if sha256.Sum256(b1) != sha256.Sum256(b2) {
			t.Errorf("%s: same seed gave different files", typ)
		}
		if sha256.Sum256(b1) == sha256.Sum256(b3) {
			t.Errorf("%s: different seeds gave the same file", typ)
		}
		m, err := qwen3.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if m.Layers[0].MLP.Gate.Type != typ || m.Output != m.Embed {
			t.Errorf("%s: gate type %s, tied %v", typ, m.Layers[0].MLP.Gate.Type, m.Output == m.Embed)
		}
		// One token per embedding row, as llama.cpp's loader expects.
		tokens, err := f.Strings("tokenizer.ggml.tokens")
		if err != nil || len(tokens) != m.Config.Vocab {
			t.Errorf("%s: %d tokens for %d embedding rows (%v)", typ, len(tokens), m.Config.Vocab, err)
		}
		tok, err := model.TokenizerFromGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		if ids := tok.Encode("hi<|im_end|>"); len(ids) != 3 || tok.Decode(ids) != "hi<|im_end|>" {
			t.Errorf("byte vocabulary: Encode = %v", ids)
		}
	}
}

func TestVocabFrom(t *testing.T) {
	src, err := gguf.Open("../testdata/golden/tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	f, _ := write(t, Options{Preset: "tiny", Type: gguf.TensorQ8_0, Seed: 1, Vocab: src})
	for _, key := range []string{"tokenizer.ggml.merges", "tokenizer.chat_template", "tokenizer.ggml.eos_token_id"} {
		if _, ok := f.Value(key); !ok {
			t.Errorf("%s not copied", key)
		}
	}
	tok, err := model.TokenizerFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if ids := tok.Encode("Hello world"); len(ids) != 2 || ids[0] != 9707 {
		t.Errorf("Encode = %v, want [9707 1879]", ids)
	}
}

func TestErrors(t *testing.T) {
	if err := Write(&bytes.Buffer{}, Options{Preset: "7b", Type: gguf.TensorQ8_0}); err == nil {
		t.Error("unknown preset accepted")
	}
	if err := Write(&bytes.Buffer{}, Options{Preset: "tiny", Type: gguf.TensorQ4_0}); err == nil {
		t.Error("Q4_0 accepted")
	}
}

// TestLogitSpread checks that the final norm's gain gives logits a spread
// of a few units, so the top token wins by a margin of order 1.
func TestLogitSpread(t *testing.T) {
	f, _ := write(t, Options{Preset: "tiny", Type: gguf.TensorQ8_0, Seed: 1})
	m, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	r := qwen3.NewRunner(m, cpu.NewScalar(), 64)
	if err := r.Forward([]int32{10, 20, 30, 40}); err != nil {
		t.Fatal(err)
	}
	logits, _ := r.Logits()
	var sum, sq float64
	for _, v := range logits {
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	n := float64(len(logits))
	std := math.Sqrt(sq/n - (sum/n)*(sum/n))
	t.Logf("logit standard deviation %.2f", std)
	if std < 2 || std > 10 {
		t.Errorf("logit standard deviation %.2f, want 2 to 10", std)
	}
}
