package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbed: inferno embed on synth's embedding model prints OpenAI's
// answer shape, unit vectors in the order of the texts, the same vector
// for a text alone and among others, --dimensions truncated; a language
// model is refused unless --pooling last. The embedding model has the
// golden model's vocabulary; with -short, a byte-level one of 320 tokens,
// quicker to load.
func TestEmbed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "e.gguf")
	vocab := []string{"--vocab-from", goldenModel}
	if testing.Short() {
		vocab = []string{"--vocab-size", "320"}
	}
	if _, errOut, code := run(t, "", append([]string{"synth", path, "--preset", "tiny", "--embedding"}, vocab...)...); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	type list struct {
		Object string `json:"object"`
		Data   []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	embed := func(args ...string) list {
		t.Helper()
		out, errOut, code := run(t, "", append([]string{"embed", path, "--backend", "scalar"}, args...)...)
		if code != 0 {
			t.Fatalf("embed %v: exit %d: %s", args, code, errOut)
		}
		if !strings.Contains(errOut, "embedded") {
			t.Errorf("no timing on standard error: %q", errOut)
		}
		var l list
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		return l
	}
	all := embed("Hello, world!", "The capital of France is Paris.", "x")
	if all.Object != "list" || len(all.Data) != 3 || all.Usage.PromptTokens == 0 {
		t.Fatalf("%+v", all)
	}
	for i, d := range all.Data {
		var n float64
		for _, x := range d.Embedding {
			n += x * x
		}
		if d.Index != i || len(d.Embedding) != 64 || math.Abs(n-1) > 1e-5 {
			t.Errorf("entry %d: index %d, %d values, squared norm %v", i, d.Index, len(d.Embedding), n)
		}
	}
	one := embed("The capital of France is Paris.")
	for j, x := range one.Data[0].Embedding {
		if x != all.Data[1].Embedding[j] {
			t.Fatalf("value %d: %v alone, %v among others", j, x, all.Data[1].Embedding[j])
		}
	}
	cut := embed("x", "--dimensions", "8")
	var n float64
	for _, x := range cut.Data[0].Embedding {
		n += x * x
	}
	if len(cut.Data[0].Embedding) != 8 || math.Abs(n-1) > 1e-5 {
		t.Errorf("--dimensions 8: %d values, squared norm %v", len(cut.Data[0].Embedding), n)
	}
	if _, errOut, code := run(t, "", "embed", goldenModel, "x"); code == 0 || !strings.Contains(errOut, "not an embedding model") {
		t.Errorf("a language model: exit %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, "", "embed", goldenModel, "x", "--pooling", "last", "--backend", "scalar"); code != 0 {
		t.Errorf("--pooling last: exit %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, "", "embed", path, "x", "--dimensions", "65"); code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("--dimensions 65: exit %d: %q", code, errOut)
	}
}
