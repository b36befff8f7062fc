package model

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"inferno/arch"
	"inferno/gguf"
	"inferno/internal/rerankfile"
)

var (
	rerankOnce sync.Once
	rerankData []byte
	rerankErr  error
)

// rerankerBytes returns the golden model as llama.cpp's converter writes
// a Qwen3-Reranker, written once.
func rerankerBytes(t *testing.T) []byte {
	t.Helper()
	rerankOnce.Do(func() {
		src, err := gguf.Open("../testdata/golden/tiny-q8_0.gguf")
		if err != nil {
			rerankErr = err
			return
		}
		defer src.Close()
		var buf bytes.Buffer
		rerankErr = rerankfile.Write(&buf, src, rerankfile.Options{})
		rerankData = buf.Bytes()
	})
	if rerankErr != nil {
		t.Fatal(rerankErr)
	}
	return rerankData
}

// reranker opens the file rerankerBytes writes.
func reranker(t *testing.T) *Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rerank.gguf")
	if err := os.WriteFile(path, rerankerBytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// variant returns m with the metadata of its file changed: the keys in
// set replaced or added, the keys and tensors in drop left out, and of
// the tensors only cls.output (what the reranking code reads of the file).
func variant(t *testing.T, m *Model, set map[string]any, drop ...string) *Model {
	t.Helper()
	w := gguf.NewWriter()
	for _, kv := range m.File.KVs {
		if _, ok := set[kv.Key]; ok || slices.Contains(drop, kv.Key) {
			continue
		}
		if err := w.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range set {
		if err := w.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if ti, ok := m.File.Tensor(clsOutput); ok && !slices.Contains(drop, clsOutput) {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, ti.Data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	v := *m
	v.File = f
	return &v
}

// TestRankHead: a rank file is a reranker whose head is its cls.output
// rows, those of the lm_head for "yes" and "no"; labels other than yes
// and no are refused.
func TestRankHead(t *testing.T) {
	m := reranker(t)
	if !m.Rank() || !m.Embedding() || m.Arch.Hyper().Pooling != arch.PoolRank {
		t.Fatalf("pooling %v", m.Arch.Hyper().Pooling)
	}
	cls, err := m.RankHead()
	if err != nil {
		t.Fatal(err)
	}
	lm, err := m.lmRankHead()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cls.yes, lm.yes) || !slices.Equal(cls.no, lm.no) || slices.Equal(cls.yes, cls.no) {
		t.Error("cls.output's rows are not the lm_head's rows of yes and no")
	}
	bad := variant(t, m, map[string]any{"qwen3.classifier.output_labels": []string{"relevant", "irrelevant"}})
	if _, err := bad.RankHead(); err == nil || !strings.Contains(err.Error(), "yes/no rerankers") {
		t.Errorf("labels relevant/irrelevant: %v", err)
	}
	unlabelled := variant(t, m, nil, "qwen3.classifier.output_labels")
	if h, err := unlabelled.RankHead(); err != nil || !slices.Equal(h.yes, cls.yes) {
		t.Errorf("no labels: %v (yes first, as the converter writes)", err)
	}
	for v, want := range map[uint32]string{1: "mean pooling (qwen3.pooling_type = 1) is not run", 5: "qwen3.pooling_type = 5 is not a pooling type"} {
		_, err := load("", variant(t, m, map[string]any{"qwen3.pooling_type": v}).File)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("pooling_type %d: %v, want %q", v, err, want)
		}
	}
	if lm, err := variant(t, m, nil, clsOutput).RankHead(); err != nil || !slices.Equal(lm.yes, cls.yes) {
		t.Errorf("without cls.output: %v", err)
	}
}

// TestRerankTemplates: the prompt is the file's rerank template filled
// in; an instruction replaces the default one, fills {instruction} or
// takes the rerank_instruct template where the file has one, and is
// refused by a template with no place for it.
func TestRerankTemplates(t *testing.T) {
	m := reranker(t)
	ids, err := m.RerankTokens("q", "d", "Find code")
	want := strings.NewReplacer("{query}", "q", "{document}", "d", DefaultRerankInstruction, "Find code").Replace(rerankfile.Template)
	if err != nil || !slices.Equal(ids, m.Tokenizer.Encode(want)) {
		t.Errorf("%v: %q, want %q", err, m.Tokenizer.Decode(ids), want)
	}
	for _, c := range []struct {
		set         map[string]any
		instruction string
		want        string
	}{
		{map[string]any{rerankTemplateKey: "Q={query} D={document}"}, "", "Q=q D=d"},
		{map[string]any{rerankTemplateKey: "I={instruction} Q={query} D={document}"}, "", "I=" + DefaultRerankInstruction + " Q=q D=d"},
		{map[string]any{rerankTemplateKey: "I={instruction} Q={query} D={document}"}, "x", "I=x Q=q D=d"},
		{map[string]any{rerankTemplateKey: "Q={query} D={document}", rerankInstructKey: "<{instruction}> Q={query} D={document}"}, "x", "<x> Q=q D=d"},
		{map[string]any{rerankTemplateKey: "Q={query} D={document}", rerankInstructKey: "<{instruction}> Q={query} D={document}"}, "", "Q=q D=d"},
		{map[string]any{rerankTemplateKey: "Q={query} D={document}"}, "x", ""},
	} {
		m := variant(t, m, c.set)
		ids, err := m.RerankTokens("q", "d", c.instruction)
		switch {
		case c.want == "" && (err == nil || !strings.Contains(err.Error(), "no instruction to replace")):
			t.Errorf("%v, instruction %q: %v, want an error", c.set, c.instruction, err)
		case c.want != "" && (err != nil || !slices.Equal(ids, m.Tokenizer.Encode(c.want))):
			t.Errorf("%v, instruction %q: %q (%v), want %q", c.set, c.instruction, m.Tokenizer.Decode(ids), err, c.want)
		}
	}
	// Without a rerank template: Qwen3-Reranker's prompt.
	plain := variant(t, m, nil, rerankTemplateKey, "tokenizer.chat_templates")
	ids, err = plain.RerankTokens("q", "d", "")
	want = strings.NewReplacer("{query}", "q", "{document}", "d").Replace(rerankfile.Template)
	if err != nil || !slices.Equal(ids, m.Tokenizer.Encode(want)) {
		t.Errorf("no template: %v: %q, want %q", err, plain.Tokenizer.Decode(ids), want)
	}
}
