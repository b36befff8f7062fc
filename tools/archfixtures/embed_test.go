package archfixtures_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend/forward"
	"inferno/batch"
	"inferno/convert"
	"inferno/engine"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model"
)

// embedFixture is embed.json, what embed.py recorded with transformers.
type embedFixture struct {
	Transformers string `json:"transformers"`
	EOD          int32  `json:"eod"`
	Hidden       int    `json:"hidden"`
	Inputs       []struct {
		Text      *string   `json:"text"`
		IDs       []int32   `json:"ids"`
		Embedding []float64 `json:"embedding"`
	} `json:"inputs"`
}

// embedCosine is the cosine similarity each CPU backend's embedding must
// reach against transformers': the scalar backend with an F32 cache
// computes transformers' float32 pass; simd and pool, with an F16 KV
// cache (as they run by default), round the keys and values.
var embedCosine = map[string]float64{"scalar": 0.9999, "simd": 0.9995, "pool": 0.9995}

// embedDir assembles the checkpoint folder embed.py's files describe:
// Qwen3Model's config and weights, make.py's Qwen2 tokenizer, and, with
// pooling, sentence-transformers' modules.json and 1_Pooling/config.json
// (pooling: the Pooling module's config.json).
func embedDir(t *testing.T, pooling []byte) string {
	t.Helper()
	dir := t.TempDir()
	write := func(dst string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write("config.json", read("embed.config.json"))
	write("model.safetensors", read("embed.safetensors"))
	write("tokenizer.json", read("qwen2.tokenizer.json"))
	write("tokenizer_config.json", read("qwen2.tokenizer_config.json"))
	if pooling != nil {
		write("modules.json", read("embed.modules.json"))
		write("1_Pooling/config.json", pooling)
	}
	return dir
}

func readEmbedFixture(t *testing.T) *embedFixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, "embed.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx embedFixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	return &fx
}

// embedAll runs every input as one sequence of one batch on ops (each
// with its last token listed for its hidden state) and returns the
// normalized embeddings.
func embedAll(t *testing.T, m *model.Model, name string, inputs [][]int32) [][]float32 {
	t.Helper()
	var be = backends[0]
	for _, b := range backends {
		if b.name == name {
			be = b
		}
	}
	ops := be.ops()
	if c, ok := ops.(interface{ Close() }); ok {
		defer c.Close()
	}
	kv := kvcache.F16
	if name == "scalar" {
		kv = kvcache.F32
	}
	const bs = 16
	blocks := 0
	for _, in := range inputs {
		blocks += (len(in) + bs - 1) / bs
	}
	r, err := forward.NewBatched(m.Arch, ops, 512, blocks, bs, kv)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b batch.Batch
	next := int32(0)
	for _, in := range inputs {
		tab := make([]int32, (len(in)+bs-1)/bs)
		for i := range tab {
			tab[i] = next
			next++
		}
		b.AddHidden(b.AddSeq(tab), in, 0)
	}
	if err := r.Forward(&b); err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, len(inputs))
	for i := range inputs {
		h, err := r.Hidden(i)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = engine.Normalize(h); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func cosine(a []float32, b []float64) float64 {
	var d, na, nb float64
	for i, x := range b {
		d += float64(a[i]) * x
		na += float64(a[i]) * float64(a[i])
		nb += x * x
	}
	return d / math.Sqrt(na*nb)
}

// TestEmbedding converts embed.py's Qwen3 embedding checkpoint, checks
// that the file is an embedding model with last-token pooling and that
// inferno tokenizes the texts as transformers did (<|endoftext|> appended),
// and compares each CPU backend's embeddings with transformers'.
func TestEmbedding(t *testing.T) {
	fx := readEmbedFixture(t)
	pooling, err := os.ReadFile(filepath.Join(testdata, "embed.pooling.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := convertOpen(t, embedDir(t, pooling))
	if c := m.Arch.Hyper(); !m.Embedding() || c.Pooling != arch.PoolLast || c.Hidden != fx.Hidden {
		t.Fatalf("pooling %v, hidden %d: want an embedding model (last) of %d", c.Pooling, c.Hidden, fx.Hidden)
	}
	var inputs [][]int32
	for i, in := range fx.Inputs {
		if in.Text != nil {
			if got := m.EmbedTokens(*in.Text); !slices.Equal(got, in.IDs) {
				t.Errorf("input %d %q: ids %v, transformers %v", i, *in.Text, got, in.IDs)
			}
		}
		inputs = append(inputs, in.IDs)
	}
	for _, be := range backends {
		got := embedAll(t, m, be.name, inputs)
		worst := 1.0
		for i, in := range fx.Inputs {
			c := cosine(got[i], in.Embedding)
			if c < embedCosine[be.name] {
				t.Errorf("%s: input %d (%d tokens): cosine similarity %.6f < %g", be.name, i, len(in.IDs), c, embedCosine[be.name])
			}
			worst = min(worst, c)
		}
		t.Logf("%s: lowest cosine similarity %.7f (transformers %s)", be.name, worst, fx.Transformers)
	}
}

// TestEmbeddingPoolingConfig: a Qwen3Model checkpoint without
// sentence-transformers' files gets last-token pooling, as
// Qwen3-Embedding's model card computes; a Pooling module of mean pooling
// is written as llama.cpp writes it and refused by name when loaded; one
// of no known mode is refused by the converter.
func TestEmbeddingPoolingConfig(t *testing.T) {
	pooling := func(dir string) int64 {
		t.Helper()
		out := filepath.Join(t.TempDir(), "m.gguf")
		if _, err := convert.Convert(context.Background(), dir, out, convert.Options{Workers: 2}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		v, err := f.Int("qwen3.pooling_type")
		if err != nil {
			t.Fatal(err)
		}
		_, hasHead := f.Tensor("output.weight")
		if hasHead {
			t.Error("an embedding checkpoint got an output head")
		}
		return v
	}
	if got := pooling(embedDir(t, nil)); got != 3 {
		t.Errorf("no modules.json: pooling_type %d, want 3 (last)", got)
	}
	mean := embedDir(t, []byte(`{"word_embedding_dimension": 88, "pooling_mode_mean_tokens": true}`))
	if got := pooling(mean); got != 1 {
		t.Errorf("mean pooling: pooling_type %d, want 1", got)
	}
	out := filepath.Join(t.TempDir(), "mean.gguf")
	if _, err := convert.Convert(context.Background(), mean, out, convert.Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Open(out); err == nil || !strings.Contains(err.Error(), "mean pooling") {
		t.Errorf("opening a mean-pooling model: %v", err)
	}
	bad := embedDir(t, []byte(`{"word_embedding_dimension": 88, "pooling_mode_max_tokens": true}`))
	if _, err := convert.Convert(context.Background(), bad, filepath.Join(t.TempDir(), "bad.gguf"), convert.Options{}); err == nil || !strings.Contains(err.Error(), "no pooling mode") {
		t.Errorf("max pooling: %v", err)
	}
}

// TestLlamaCppConvertedEmbedding opens the file llama.cpp's
// convert_hf_to_gguf.py (commit 0253fb21f, --outtype f32) made of
// embed.py's checkpoint assembled as embedDir does, sentence-transformers'
// modules.json and 1_Pooling/config.json included
// (testdata/arch/embed.llamacpp.gguf; llamacpp_convert.py ran it, naming
// the tiny tokenizer's pre-tokenizer qwen2), and checks that inferno reads
// it as its own conversion of the checkpoint: an embedding model of
// last-token pooling (qwen3.pooling_type 3, as llama.cpp's converter reads
// the Pooling module) without an output head, the same architecture and
// tokenizer metadata, every tensor bit for bit, the same configuration,
// the same ids for embed.json's texts, and on the scalar backend
// embeddings equal to those of inferno's own file and so within the
// cosine similarity TestEmbedding asks of transformers' (0.9999).
func TestLlamaCppConvertedEmbedding(t *testing.T) {
	path := filepath.Join(testdata, "embed.llamacpp.gguf")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent: llama.cpp's conversion of embed.py's checkpoint is made where torch and transformers are (llamacpp_convert.py qwen2 DIR f32 OUT)", path)
	}
	fx := readEmbedFixture(t)
	pooling, err := os.ReadFile(filepath.Join(testdata, "embed.pooling.json"))
	if err != nil {
		t.Fatal(err)
	}
	theirs, ours := openModel(t, path), convertOpen(t, embedDir(t, pooling))

	if v, err := theirs.File.Int("qwen3.pooling_type"); err != nil || v != 3 {
		t.Errorf("qwen3.pooling_type %d (%v), want 3 (last)", v, err)
	}
	if c := theirs.Arch.Hyper(); c.Arch != "qwen3" || !theirs.Embedding() || c.Pooling != arch.PoolLast || c.Hidden != fx.Hidden {
		t.Fatalf("architecture %q, pooling %v, hidden %d: want a qwen3 embedding model (last) of %d", c.Arch, c.Pooling, c.Hidden, fx.Hidden)
	}
	if _, ok := theirs.File.Tensor("output.weight"); ok {
		t.Error("llama.cpp's file has an output head")
	}
	sameFile(t, theirs, ours, "qwen3")
	if tc, oc := *theirs.Arch.Hyper(), *ours.Arch.Hyper(); !reflect.DeepEqual(tc, oc) {
		t.Errorf("configuration\n%+v\ninferno's\n%+v", tc, oc)
	}

	var inputs [][]int32
	for i, in := range fx.Inputs {
		if in.Text != nil {
			if got := theirs.EmbedTokens(*in.Text); !slices.Equal(got, in.IDs) {
				t.Errorf("input %d %q: ids %v, transformers %v", i, *in.Text, got, in.IDs)
			}
		}
		inputs = append(inputs, in.IDs)
	}
	got, want := embedAll(t, theirs, "scalar", inputs), embedAll(t, ours, "scalar", inputs)
	worst := 1.0
	for i, in := range fx.Inputs {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("input %d (%d tokens): the embedding differs from inferno's file's", i, len(in.IDs))
		}
		c := cosine(got[i], in.Embedding)
		if c < embedCosine["scalar"] {
			t.Errorf("input %d (%d tokens): cosine similarity %.6f < %g", i, len(in.IDs), c, embedCosine["scalar"])
		}
		worst = min(worst, c)
	}
	t.Logf("%d tensors; %d inputs: lowest cosine similarity to transformers' %.9f", len(theirs.File.Tensors), len(inputs), worst)
}
