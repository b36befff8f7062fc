package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"inferno/arch"
	"inferno/backend/forward"
	"inferno/backend/scalar"
	"inferno/batch"
	"inferno/gguf"
	"inferno/internal/rerankfile"
	"inferno/kvcache"
	"inferno/model"
	"inferno/scheduler"
)

// rerankerFile writes the golden model as llama.cpp's converter writes a
// Qwen3-Reranker (package rerankfile) in t's temporary directory and
// returns its path.
func rerankerFile(t testing.TB, o rerankfile.Options) string {
	t.Helper()
	src, err := gguf.Open(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var buf bytes.Buffer
	if err := rerankfile.Write(&buf, src, o); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rerank.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rerankServer is a Server on a reranker: m's weights on the scalar
// backend, its embedding requests pooled by its classifier head.
type rerankServer struct {
	*httptest.Server
	m *model.Model
}

func newRerankServer(t *testing.T, m *model.Model) *rerankServer {
	t.Helper()
	if !m.Rank() {
		t.Fatal("not a reranker")
	}
	head, err := m.RankHead()
	if err != nil {
		t.Fatal(err)
	}
	const ctx, parallel, bs = 1024, 3, 16
	r, err := forward.NewBatched(m.Arch, scalar.NewScalar(), ctx, parallel*((ctx+bs-1)/bs), bs, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := scheduler.NewBatcher(r, scheduler.Config{Parallel: parallel, BatchTokens: 256, Queue: 4, PrefixCache: true, Tokenizer: m.Tokenizer, Pool: head.Score})
	if err != nil {
		t.Fatal(err)
	}
	md := &Model{Name: "tiny-rerank", Tokenizer: m.Tokenizer, EOG: m.EOG, Context: ctx, Vocab: m.Arch.Hyper().Vocab,
		Scheduler: sched, Created: time.Unix(1700000000, 0),
		Embedding: true, EmbedDim: m.Arch.Hyper().Hidden, EmbedTokens: m.EmbedTokens, Rerank: m.RerankTokens}
	srv := New(Config{Queue: 64, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv.SetModel(md)
	rs := &rerankServer{Server: httptest.NewServer(srv), m: m}
	t.Cleanup(func() {
		rs.Server.Close()
		sched.Close()
		r.Close()
	})
	return rs
}

func openReranker(t *testing.T, path string) *model.Model {
	t.Helper()
	m, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func (rs *rerankServer) post(t *testing.T, path, body string) (int, map[string]any) {
	t.Helper()
	code, v, _ := (&testServer{Server: rs.Server}).post(t, path, body)
	return code, v
}

// generatedLogits is the reference: the logits of "yes" and "no" after
// the last token of ids, run by the golden model as the language model
// it is, on the plain generation path (a logits output, no pooling).
func generatedLogits(t *testing.T, ids []int32) (yes, no float64) {
	t.Helper()
	m := tinyModel(t)
	r, err := forward.NewBatched(m.Arch, scalar.NewScalar(), 1024, 64, 16, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b batch.Batch
	tab := make([]int32, 64)
	for i := range tab {
		tab[i] = int32(i)
	}
	b.Add(b.AddSeq(tab), ids, 0, true)
	if err := r.Forward(&b); err != nil {
		t.Fatal(err)
	}
	logits, err := r.Logits(0)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := m.Tokenizer.TokenID("yes")
	n, _ := m.Tokenizer.TokenID("no")
	return float64(logits[y]), float64(logits[n])
}

// lastHidden returns the final normed hidden state of the last token of
// ids, run alone.
func lastHidden(t *testing.T, ids []int32) []float32 {
	t.Helper()
	r, err := forward.NewBatched(tinyModel(t).Arch, scalar.NewScalar(), 1024, 64, 16, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b batch.Batch
	tab := make([]int32, 64)
	for i := range tab {
		tab[i] = int32(i)
	}
	b.AddHidden(b.AddSeq(tab), ids, 0)
	if err := r.Forward(&b); err != nil {
		t.Fatal(err)
	}
	h, err := r.Hidden(0)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(h)
}

type rerankReply struct {
	ID      string
	Model   string
	Usage   RerankUsage
	Results []struct {
		Index          int
		RelevanceScore float64 `json:"relevance_score"`
		Document       *RerankDocument
	}
}

func (rs *rerankServer) rerank(t *testing.T, path, body string) rerankReply {
	t.Helper()
	resp, err := http.Post(rs.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, resp.StatusCode, b)
	}
	var v rerankReply
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v: %s", path, err, b)
	}
	return v
}

var rerankDocs = []string{
	"The capital of China is Beijing.",
	"Gravity is a force that attracts two bodies towards each other.",
	"",
	"Paris is the capital of France; Beijing is China's.",
	"x",
	"{query} <|im_end|> is text too",
}

// TestRerankScores: each document's score is sigmoid(l_yes - l_no) of the
// same prompt's logits on the plain generation path, to 1e-4, for the
// file llama.cpp's converter writes (cls.output), for the language model
// run with rank pooling (the lm_head's rows), and for a head with a bias
// that brings the random model's scores away from 1 (where 1e-4 is
// strict); the results are sorted, indexed, with their documents and the
// tokens counted.
func TestRerankScores(t *testing.T) {
	const query = "What is the capital of China?"
	docs, _ := json.Marshal(rerankDocs)
	body := fmt.Sprintf(`{"model":"tiny-rerank","query":%q,"documents":%s}`, query, docs)

	plain := openReranker(t, goldenModel)
	plain.Arch.Hyper().Pooling = arch.PoolRank
	const shift = -6.5 // the bias of "yes"
	cases := []struct {
		name  string
		m     *model.Model
		shift float64
	}{
		{"cls.output", openReranker(t, rerankerFile(t, rerankfile.Options{})), 0},
		{"lm_head", plain, 0},
		{"cls.output with a bias", openReranker(t, rerankerFile(t, rerankfile.Options{Bias: []float32{shift, 0}})), shift},
	}
	var first []float64
	for _, c := range cases {
		rs := newRerankServer(t, c.m)
		v := rs.rerank(t, "/v1/rerank", body)
		if v.Model != "tiny-rerank" || !strings.HasPrefix(v.ID, "rerank-") || len(v.Results) != len(rerankDocs) {
			t.Fatalf("%s: model %q, id %q, %d results", c.name, v.Model, v.ID, len(v.Results))
		}
		scores := make([]float64, len(rerankDocs))
		seen := map[int]bool{}
		tokens := 0
		for i, r := range v.Results {
			if seen[r.Index] || r.Index < 0 || r.Index >= len(rerankDocs) {
				t.Fatalf("%s: result %d: index %d again or out of range", c.name, i, r.Index)
			}
			seen[r.Index] = true
			if i > 0 && r.RelevanceScore > v.Results[i-1].RelevanceScore {
				t.Fatalf("%s: result %d scores %v, more than the one before it (%v)", c.name, i, r.RelevanceScore, v.Results[i-1].RelevanceScore)
			}
			if r.Document == nil || r.Document.Text != rerankDocs[r.Index] {
				t.Fatalf("%s: result %d: document %+v, want %q", c.name, i, r.Document, rerankDocs[r.Index])
			}
			ids, err := c.m.RerankTokens(query, rerankDocs[r.Index], "")
			if err != nil {
				t.Fatal(err)
			}
			tokens += len(ids)
			yes, no := generatedLogits(t, ids)
			if want := model.Sigmoid(yes - no + c.shift); math.Abs(r.RelevanceScore-want) > 1e-4 {
				t.Errorf("%s: document %d: score %v, the generation path's sigmoid(l_yes - l_no) %v", c.name, r.Index, r.RelevanceScore, want)
			}
			scores[r.Index] = r.RelevanceScore
		}
		t.Logf("%s: scores %.5f", c.name, scores)
		if v.Usage.PromptTokens != tokens || v.Usage.TotalTokens != tokens {
			t.Errorf("%s: usage %+v, want %d tokens", c.name, v.Usage, tokens)
		}
		if first == nil {
			first = scores
		} else if c.shift == 0 && !slices.Equal(first, scores) {
			t.Errorf("%s: scores %v, cls.output's %v", c.name, scores, first)
		}
	}
}

// TestRankHeadLogits: the head's logits of a prompt's last hidden state
// are the generation path's logits of "yes" and "no", to 1e-4.
func TestRankHeadLogits(t *testing.T) {
	m := openReranker(t, rerankerFile(t, rerankfile.Options{}))
	head, err := m.RankHead()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rerankDocs {
		ids, err := m.RerankTokens("Which city?", d, "")
		if err != nil {
			t.Fatal(err)
		}
		yes, no, err := head.Logits(lastHidden(t, ids))
		if err != nil {
			t.Fatal(err)
		}
		wantYes, wantNo := generatedLogits(t, ids)
		if math.Abs(yes-wantYes) > 1e-4 || math.Abs(no-wantNo) > 1e-4 {
			t.Errorf("%q: logits %v, %v; the generation path's %v, %v", d, yes, no, wantYes, wantNo)
		}
	}
}

// TestRerankPrompt: the prompt is the converter's template (Qwen3-Reranker's
// model card's) filled in once, whole, an instruction replacing the
// default one.
func TestRerankPrompt(t *testing.T) {
	converted := openReranker(t, rerankerFile(t, rerankfile.Options{}))
	plain := openReranker(t, goldenModel)
	for _, m := range []*model.Model{converted, plain} {
		got, err := m.RerankTokens("q {document}", "d", "")
		if err != nil {
			t.Fatal(err)
		}
		want := strings.NewReplacer("{query}", "q {document}", "{document}", "d").Replace(rerankfile.Template)
		if !slices.Equal(got, m.Tokenizer.Encode(want)) {
			t.Errorf("prompt %q, want %q", m.Tokenizer.Decode(got), want)
		}
		got, err = m.RerankTokens("q", "d", "Find code")
		if err != nil {
			t.Fatal(err)
		}
		want = strings.NewReplacer("{query}", "q", "{document}", "d", model.DefaultRerankInstruction, "Find code").Replace(rerankfile.Template)
		if !slices.Equal(got, m.Tokenizer.Encode(want)) {
			t.Errorf("instructed prompt %q, want %q", m.Tokenizer.Decode(got), want)
		}
	}
}

// TestRerankHeadLabels: a head written "no" first, with a bias, scores
// sigmoid(l_yes + b_yes - l_no - b_no).
func TestRerankHeadLabels(t *testing.T) {
	plain, err := openReranker(t, goldenModel).RankHead()
	if err != nil {
		t.Fatal(err)
	}
	m := openReranker(t, rerankerFile(t, rerankfile.Options{NoYes: true, Bias: []float32{0.25, -0.5}}))
	head, err := m.RankHead()
	if err != nil {
		t.Fatal(err)
	}
	h := make([]float32, m.Arch.Hyper().Hidden)
	for i := range h {
		h[i] = float32(math.Sin(float64(i)))
	}
	yes, no, err := plain.Logits(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := head.Score(h)
	if err != nil {
		t.Fatal(err)
	}
	if want := model.Sigmoid(yes - 0.5 - no - 0.25); math.Abs(float64(got[0])-want) > 1e-6 {
		t.Errorf("score %v, want %v", got[0], want)
	}
	if _, err := head.Score(h[1:]); err == nil {
		t.Error("a hidden state of the wrong width was scored")
	}
}

// TestRerankOptions: top_n keeps the best results, return_documents false
// drops the texts, documents may be objects with a text, every path
// answers, text-embeddings-inference's form (texts, return_text,
// raw_scores) is answered in its form, and an instruction changes the
// scores.
func TestRerankOptions(t *testing.T) {
	rs := newRerankServer(t, openReranker(t, rerankerFile(t, rerankfile.Options{})))
	all := rs.rerank(t, "/v1/rerank", `{"query":"capital","documents":["a","b c","d e f","g"]}`)
	for _, path := range []string{"/rerank", "/v2/rerank", "/reranking", "/v1/reranking"} {
		v := rs.rerank(t, path, `{"model":"tiny-rerank","query":"capital","documents":[{"text":"a"},"b c",{"text":"d e f","title":"x"},"g"],"top_n":2,"return_documents":false}`)
		if len(v.Results) != 2 {
			t.Fatalf("%s: %d results, want 2", path, len(v.Results))
		}
		for i, r := range v.Results {
			if r.Index != all.Results[i].Index || r.RelevanceScore != all.Results[i].RelevanceScore || r.Document != nil {
				t.Errorf("%s: result %d is %+v, want %+v without its document", path, i, r, all.Results[i])
			}
		}
		if v.Usage != all.Usage {
			t.Errorf("%s: usage %+v, want %+v (every document is scored)", path, v.Usage, all.Usage)
		}
	}
	for _, n := range []int{0, 4, 10} {
		if v := rs.rerank(t, "/v1/rerank", fmt.Sprintf(`{"query":"capital","documents":["a","b c","d e f","g"],"top_n":%d}`, n)); len(v.Results) != 4 {
			t.Errorf("top_n %d: %d results, want all 4", n, len(v.Results))
		}
	}
	// Text-embeddings-inference's form: texts in, a bare array out.
	tei := func(body string) []map[string]any {
		t.Helper()
		resp, err := http.Post(rs.URL+"/rerank", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v []map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v", body, resp.StatusCode, err)
		}
		return v
	}
	docs := []string{"a", "b c", "d e f", "g"}
	raw := tei(`{"query":"capital","texts":["a","b c","d e f","g"],"return_text":true,"raw_scores":true,"top_n":3}`)
	plain := tei(`{"query":"capital","texts":["a","b c","d e f","g"]}`)
	if len(raw) != 3 || len(plain) != 4 {
		t.Fatalf("%d and %d results, want 3 and 4", len(raw), len(plain))
	}
	for i, r := range plain {
		want := all.Results[i]
		if r["index"] != float64(want.Index) || r["score"] != want.RelevanceScore || r["text"] != nil {
			t.Errorf("texts: result %d is %v, want index %d, score %v, no text", i, r, want.Index, want.RelevanceScore)
		}
		if i >= len(raw) {
			continue
		}
		logit, _ := raw[i]["score"].(float64)
		if raw[i]["index"] != float64(want.Index) || raw[i]["text"] != docs[want.Index] || math.Abs(model.Sigmoid(logit)-want.RelevanceScore) > 1e-6 {
			t.Errorf("raw_scores: result %d is %v, want index %d, text %q, a logit of sigmoid %v", i, raw[i], want.Index, docs[want.Index], want.RelevanceScore)
		}
	}
	v := rs.rerank(t, "/v1/rerank", `{"query":"capital","documents":["a","b c","d e f","g"],"instruction":"Judge the spelling"}`)
	if v.Usage.PromptTokens == all.Usage.PromptTokens && v.Results[0].RelevanceScore == all.Results[0].RelevanceScore {
		t.Error("the instruction changed nothing")
	}
}

// TestRerankPrefix: a long list's documents run after the first, taking
// the prompt's common start from the prefix cache; a short one's run
// together.
func TestRerankPrefix(t *testing.T) {
	m := openReranker(t, rerankerFile(t, rerankfile.Options{}))
	rs := newRerankServer(t, m)
	cached := func(rs *rerankServer) float64 {
		t.Helper()
		resp, err := http.Get(rs.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "inferno_prompt_tokens_cached_total "); ok {
				var f float64
				fmt.Sscan(v, &f)
				return f
			}
		}
		t.Fatalf("no inferno_prompt_tokens_cached_total:\n%s", b)
		return 0
	}
	docs := make([]string, 20)
	for i := range docs {
		docs[i] = fmt.Sprintf("document number %d", i)
	}
	list, _ := json.Marshal(docs)
	v := rs.rerank(t, "/v1/rerank", `{"query":"Which document is the first?","documents":`+string(list)+`}`)
	common := 0
	first, _ := rs.m.RerankTokens("Which document is the first?", docs[0], "")
	second, _ := rs.m.RerankTokens("Which document is the first?", docs[1], "")
	for common < len(first) && first[common] == second[common] {
		common++
	}
	if common*19 < leadSaving {
		t.Fatalf("a common start of %d tokens saves less than %d", common, leadSaving)
	}
	if got := cached(rs); got < float64(19*common) {
		t.Errorf("%v prompt tokens cached for 19 documents whose first %d tokens are the first's (%d tokens in all)", got, common, v.Usage.PromptTokens)
	}
	fresh := newRerankServer(t, m)
	fresh.rerank(t, "/v1/rerank", `{"query":"Which document is the first?","documents":["a","b","c"]}`)
	if got := cached(fresh); got != 0 {
		t.Errorf("3 documents: %v prompt tokens cached, want none (they run together)", got)
	}
}

// TestRerankBadRequests: malformed requests get 400s naming the field,
// and a reranker refuses the other endpoints as a language model refuses
// /v1/rerank.
func TestRerankBadRequests(t *testing.T) {
	rs := newRerankServer(t, openReranker(t, rerankerFile(t, rerankfile.Options{})))
	many, _ := json.Marshal(make([]string, MaxRerankDocuments+1))
	long := strings.Repeat("word ", 2000)
	// 2048 documents with a query of 8 KiB and a byte: over 16 MiB of
	// prompts, refused before any is tokenized.
	amplified := `{"query":"` + strings.Repeat("w", 8<<10+1) + `","documents":[` + string(bytes.Repeat([]byte(`"",`), MaxRerankDocuments-1)) + `""]}`
	for _, c := range []struct{ body, param, msg string }{
		{`{"documents":["a"]}`, "query", "query is required"},
		{`{"query":"q"}`, "documents", "documents is required"},
		{`{"query":"q","documents":[]}`, "documents", "empty array"},
		{`{"query":"q","documents":["a",1]}`, "documents[1]", "not a string nor an object with a text string"},
		{`{"query":"q","documents":[{"title":"t"}]}`, "documents[0]", "not a string nor an object"},
		{`{"query":"q","documents":[{"text":7}]}`, "documents[0].text", "not a string"},
		{`{"query":"q","documents":[null]}`, "documents[0]", "not a string nor an object"},
		{`{"query":"q","documents":[{"text":null}]}`, "documents[0].text", "not a string"},
		{`{"query":3,"documents":["a"]}`, "query", ""},
		{`{"query":"q","documents":["a"],"top_n":-1}`, "top_n", "at least 0"},
		{`{"query":"q","documents":["a"],"top_n":1.5}`, "top_n", "integer"},
		{`{"query":"q","documents":["a"],"return_documents":"yes"}`, "return_documents", ""},
		{`{"query":"q","documents":` + string(many) + `}`, "documents", "at most"},
		{`{"query":"q","documents":["a","` + long + `"]}`, "documents", "documents[1]"},
		{`{"query":"q","documents":["a"],"model":"other"}`, "model", "does not exist"},
		{`{"query":"q","documents":"a"}`, "documents", ""},
		{amplified, "documents", "bytes of prompts"},
		{`{"query":"q","documents":["a"],"texts":["a"]}`, "texts", "send one"},
		{`{"query":"q","texts":[]}`, "texts", "texts is an empty array"},
		{`{"query":"q","texts":["a",2]}`, "texts[1]", "not a string"},
	} {
		code, v := rs.post(t, "/v1/rerank", c.body)
		e := errorOf(t, v)
		if code/100 != 4 || !strings.Contains(fmt.Sprint(e["message"]), c.msg) || c.param != "" && e["param"] != c.param {
			t.Errorf("%.80s: %d %v, want a 4xx about %s (%q)", c.body, code, e, c.param, c.msg)
		}
	}
	for _, path := range []string{"/v1/embeddings", "/v1/chat/completions", "/v1/completions"} {
		code, v := rs.post(t, path, `{"input":"x","prompt":"x","messages":[{"role":"user","content":"x"}]}`)
		if msg := fmt.Sprint(errorOf(t, v)["message"]); code != http.StatusBadRequest || !strings.Contains(msg, "reranker") || !strings.Contains(msg, "/v1/rerank") {
			t.Errorf("%s: %d %q, want 400 naming /v1/rerank", path, code, msg)
		}
	}
	ts := newTestServer(t, serverOpts{reply: "hi"})
	code, v, _ := ts.post(t, "/v1/rerank", `{"query":"q","documents":["a"]}`)
	if msg := fmt.Sprint(errorOf(t, v)["message"]); code != http.StatusBadRequest || !strings.Contains(msg, "not a reranker") {
		t.Errorf("a language model: %d %q, want 400 not a reranker", code, msg)
	}
}

// FuzzRerankRequest: any body is decoded into prompts of ids within the
// vocabulary, one per document, or refused with a 4xx, never a panic.
//
//	go test ./server -run '^$' -fuzz FuzzRerankRequest -fuzztime 20s
func FuzzRerankRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"q","documents":["a","b"]}`,
		`{"model":"m","query":"q","documents":[{"text":"a"},"b"],"top_n":1,"return_documents":false,"instruction":"i"}`,
		`{"query":"","documents":[""]}`, `{"query":"q","documents":[{"text":null}]}`, `{"query":"q","documents":[[]]}`,
		`{"query":"q","documents":[{"text":"a","text":"b"}]}`, `{"query":"q","documents":["a"],"top_n":1e99}`,
		`{"query":"q","texts":["a",{"text":"b"}],"raw_scores":true,"return_text":true}`, `{"query":"q","texts":["a"],"documents":["b"]}`,
		`{"documents":null}`, `[]`, `null`, `{`, "\x00",
	} {
		f.Add([]byte(s))
	}
	m := tinyModel(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		md := &Model{Tokenizer: m.Tokenizer, Context: 4096, Vocab: m.Arch.Hyper().Vocab, Rerank: m.RerankTokens, maxTokenBytes: 256}
		r := httptest.NewRequest("POST", "/v1/rerank", bytes.NewReader(body))
		var req rerankRequest
		if e := decodeBody(r, &req); e != nil {
			if e.Status/100 != 4 || e.Message == "" {
				t.Fatalf("%q: status %d %q", body, e.Status, e.Message)
			}
			return
		}
		texts, prompts, e := rerankPrompts(md, &req)
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Message == "" {
				t.Fatalf("%q: status %d %q", body, e.Status, e.Message)
			}
			return
		}
		if n := len(req.Documents) + len(req.Texts); len(prompts) != n || len(texts) != n || n == 0 {
			t.Fatalf("%q: %d prompts and %d texts for %d documents", body, len(prompts), len(texts), n)
		}
		for _, p := range prompts {
			for _, id := range p {
				if id < 0 || int(id) >= md.Vocab {
					t.Fatalf("%q: id %d", body, id)
				}
			}
		}
	})
}
