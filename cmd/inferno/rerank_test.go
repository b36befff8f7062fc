package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferno/gguf"
	"inferno/internal/rerankfile"
)

// TestServeRerank: serve runs the file llama.cpp's converter writes for a
// Qwen3-Reranker (rank pooling, cls.output) and the language model with
// --pooling rank alike: /v1/rerank scores the documents, the same on
// both, and chat, completions and embeddings are refused; embed refuses
// a reranker.
func TestServeRerank(t *testing.T) {
	t.Parallel()
	src, err := gguf.Open(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rerank.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	err = rerankfile.Write(f, src, rerankfile.Options{})
	src.Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	post := func(s *serving, path, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(s.url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const body = `{"query":"What is the capital of China?","documents":["Beijing is the capital of China.","Gravity attracts bodies.",{"text":"x"}],"top_n":2}`
	type reply struct {
		Results []struct {
			Index          int     `json:"index"`
			RelevanceScore float64 `json:"relevance_score"`
			Document       struct {
				Text string `json:"text"`
			} `json:"document"`
		} `json:"results"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	var got []reply
	for _, args := range [][]string{{path}, {goldenModel, "--pooling", "rank"}} {
		s := startServe(t, append(args, "--backend", testBackend(), "--parallel", "2")...)
		code, out := post(s, "/v1/rerank", body)
		var r reply
		if err := json.Unmarshal([]byte(out), &r); code != http.StatusOK || err != nil || len(r.Results) != 2 || r.Usage.PromptTokens == 0 {
			t.Fatalf("%v: %d %s", args, code, out)
		}
		for _, res := range r.Results {
			if !(res.RelevanceScore >= 0 && res.RelevanceScore <= 1) || res.Document.Text == "" {
				t.Errorf("%v: result %+v", args, res)
			}
		}
		got = append(got, r)
		for _, p := range []string{"/v1/chat/completions", "/v1/completions", "/v1/embeddings"} {
			if code, out := post(s, p, `{"messages":[{"role":"user","content":"Hi"}],"prompt":"Hi","input":"Hi"}`); code != http.StatusBadRequest || !strings.Contains(out, "/v1/rerank") {
				t.Errorf("%v: %s: %d %s", args, p, code, out)
			}
		}
	}
	if got[0].Results[0] != got[1].Results[0] || got[0].Results[1] != got[1].Results[1] {
		t.Errorf("cls.output: %+v; --pooling rank: %+v", got[0], got[1])
	}
	if _, errOut, code := run(t, "", "embed", path, "x"); code == 0 || !strings.Contains(errOut, "reranker") {
		t.Errorf("embed on a reranker: exit %d: %s", code, errOut)
	}
}
