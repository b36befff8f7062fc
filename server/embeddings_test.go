package server

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"inferno/backend/forward"
	"inferno/backend/scalar"
	"inferno/batch"
	"inferno/engine"
	"inferno/kvcache"
	"inferno/scheduler"
)

// embedServer is a Server whose model embeds: the golden model's weights
// on the scalar backend, served as an embedding model (the server takes
// Model.Embedding as given; the runner returns any model's hidden states).
type embedServer struct {
	*httptest.Server
	runner *forward.Batched
	model  *Model
}

func newEmbedServer(t *testing.T, parallel, ctx int) *embedServer {
	t.Helper()
	m := tinyModel(t)
	const bs = 16
	r, err := forward.NewBatched(m.Arch, scalar.NewScalar(), ctx, parallel*((ctx+bs-1)/bs), bs, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := scheduler.NewBatcher(r, scheduler.Config{Parallel: parallel, BatchTokens: 256, Queue: 4, Tokenizer: m.Tokenizer})
	if err != nil {
		t.Fatal(err)
	}
	md := &Model{Name: "tiny-embed", Tokenizer: m.Tokenizer, EOG: m.EOG, Context: ctx, Vocab: m.Arch.Hyper().Vocab,
		Scheduler: sched, Created: time.Unix(1700000000, 0),
		Embedding: true, EmbedDim: m.Arch.Hyper().Hidden, EmbedTokens: m.EmbedTokens}
	srv := New(Config{Queue: 64, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}) // serve's default --queue: with none, a request that arrives while the last case's sequences still hold their slots gets 503
	srv.SetModel(md)
	es := &embedServer{Server: httptest.NewServer(srv), runner: r, model: md}
	t.Cleanup(func() {
		es.Server.Close()
		sched.Close()
		r.Close()
	})
	return es
}

// alone computes the embedding of ids on a runner of its own: the last
// token's hidden row, normalized.
func alone(t *testing.T, ids []int32) []float32 {
	t.Helper()
	m := tinyModel(t)
	r, err := forward.NewBatched(m.Arch, scalar.NewScalar(), 512, 32, 16, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b batch.Batch
	tab := make([]int32, 32)
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
	v, err := engine.Normalize(h)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func sameVector(t *testing.T, what string, got []float64, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if float32(got[i]) != want[i] {
			t.Fatalf("%s: value %d is %v, want %v (the CPU's embedding does not depend on the batch)", what, i, got[i], want[i])
		}
	}
}

func TestEmbeddingsClient(t *testing.T) {
	es := newEmbedServer(t, 3, 512)
	c := client(&testServer{Server: es.Server})
	ctx := context.Background()
	texts := []string{"The capital of France is Paris.", "hello", "Instruct: Given a query, retrieve passages\nQuery:what is a GGUF file?", "x y z"}
	resp, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "tiny-embed", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != len(texts) || resp.Model != "tiny-embed" || resp.Object != "list" {
		t.Fatalf("%d embeddings, model %q, object %q", len(resp.Data), resp.Model, resp.Object)
	}
	tokens := 0
	for i, text := range texts {
		ids := es.model.EmbedTokens(text)
		if end, _ := es.model.Tokenizer.TokenID("<|endoftext|>"); ids[len(ids)-1] != end {
			t.Fatalf("%q: the ids do not end with <|endoftext|>: %v", text, ids)
		}
		tokens += len(ids)
		d := resp.Data[i]
		if d.Index != int64(i) || d.Object != "embedding" {
			t.Errorf("entry %d: index %d object %q", i, d.Index, d.Object)
		}
		sameVector(t, text, d.Embedding, alone(t, ids))
	}
	if resp.Usage.PromptTokens != int64(tokens) || resp.Usage.TotalTokens != int64(tokens) {
		t.Errorf("usage %+v, want %d tokens", resp.Usage, tokens)
	}

	// dimensions: the first N values, normalized again; a string input
	// and its token ids give the same vector.
	ids := es.model.EmbedTokens(texts[0])
	ids64 := make([]int64, len(ids))
	for i, id := range ids {
		ids64[i] = int64(id)
	}
	full := alone(t, ids)
	want, err := engine.Normalize(full[:16])
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []openai.EmbeddingNewParamsInputUnion{
		{OfString: openai.String(texts[0])},
		{OfArrayOfTokens: ids64},
		{OfArrayOfTokenArrays: [][]int64{ids64, ids64}},
	} {
		resp, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "tiny-embed", Input: in, Dimensions: openai.Int(16)})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range resp.Data {
			sameVector(t, "dimensions 16", d.Embedding, want)
		}
	}
}

func TestEmbeddingsBase64(t *testing.T) {
	es := newEmbedServer(t, 2, 512)
	ts := &testServer{Server: es.Server}
	code, v, _ := ts.post(t, "/v1/embeddings", `{"input": ["hello", "world"], "encoding_format": "base64"}`)
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, v)
	}
	data := v["data"].([]any)
	for i, text := range []string{"hello", "world"} {
		s, ok := data[i].(map[string]any)["embedding"].(string)
		if !ok {
			t.Fatalf("entry %d: embedding is not a string: %v", i, data[i])
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(b)/4)
		for j := range got {
			got[j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:])))
		}
		sameVector(t, text, got, alone(t, es.model.EmbedTokens(text)))
	}
}

func TestEmbeddingsErrors(t *testing.T) {
	es := newEmbedServer(t, 1, 64)
	ts := &testServer{Server: es.Server}
	long := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	for _, c := range []struct{ body, param, msg string }{
		{`{"input": ""}`, "input", "empty string"},
		{`{"input": []}`, "input", "empty array"},
		{`{"input": ["a", ""]}`, "input[1]", "empty string"},
		{`{}`, "input", "required"},
		{`{"input": [[]]}`, "input[0]", "no token ids"},
		{`{"input": [1, -2]}`, "input", "not a token id"},
		{`{"input": {"text": "a"}}`, "input", "must be a string"},
		{`{"input": "a", "dimensions": 0}`, "dimensions", "outside [1, 64]"},
		{`{"input": "a", "dimensions": 65}`, "dimensions", "outside [1, 64]"},
		{`{"input": "a", "encoding_format": "int8"}`, "encoding_format", "not float or base64"},
		{`{"input": "` + long + `"}`, "input", "context is 64 tokens"},
	} {
		code, v, _ := ts.post(t, "/v1/embeddings", c.body)
		e := errorOf(t, v)
		if code != http.StatusBadRequest || e["param"] != c.param || !strings.Contains(e["message"].(string), c.msg) {
			t.Errorf("%s: status %d, error %v; want 400 on %s, %q", c.body, code, e, c.param, c.msg)
		}
	}
	code, v, _ := ts.post(t, "/v1/embeddings", `{"input": "a", "model": "other"}`)
	if code != http.StatusNotFound {
		t.Errorf("another model: status %d, %v", code, v)
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		code, v, _ := ts.post(t, path, `{"messages": [{"role": "user", "content": "hi"}], "prompt": "hi"}`)
		if e := errorOf(t, v); code != http.StatusBadRequest || !strings.Contains(e["message"].(string), "is an embedding model") {
			t.Errorf("%s on an embedding model: status %d, %v", path, code, e)
		}
	}
	// A chat model refuses embeddings.
	chat := newTestServer(t, serverOpts{reply: "hi"})
	code, v, _ = chat.post(t, "/v1/embeddings", `{"input": "a"}`)
	if e := errorOf(t, v); code != http.StatusBadRequest || !strings.Contains(e["message"].(string), "not an embedding model") {
		t.Errorf("embeddings on a chat model: status %d, %v", code, e)
	}
	// The route is counted in the metrics as the others are.
	resp, err := http.Get(es.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `inferno_requests_total{endpoint="embeddings",status="400"}`) {
		t.Errorf("no embeddings route in the metrics:\n%s", b)
	}
}

// FuzzEmbeddingInputs: any input value is read into token id lists within
// the vocabulary, or refused with a 400, never a panic.
func FuzzEmbeddingInputs(f *testing.F) {
	for _, s := range []string{`"hello"`, `["a", "b"]`, `[1, 2, 3]`, `[[1], [2, 3]]`, `[]`, `[[]]`, `""`, `null`, `{"a": 1}`, `[1, "a"]`, `[-1]`, `[1e30]`, `[[1.5]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		m := tinyModel(t)
		md := &Model{Tokenizer: m.Tokenizer, Context: 4096, Vocab: m.Arch.Hyper().Vocab, EmbedTokens: m.EmbedTokens, maxTokenBytes: 256}
		ids, e := embeddingInputs(md, json.RawMessage(raw))
		if e != nil {
			if e.Status != http.StatusBadRequest {
				t.Fatalf("%q: status %d", raw, e.Status)
			}
			return
		}
		if len(ids) == 0 || len(ids) > MaxEmbeddingInputs {
			t.Fatalf("%q: %d inputs", raw, len(ids))
		}
		for _, in := range ids {
			if len(in) == 0 {
				t.Fatalf("%q: an empty input", raw)
			}
			for _, id := range in {
				if id < 0 || int(id) >= md.Vocab {
					t.Fatalf("%q: id %d", raw, id)
				}
			}
		}
	})
}
