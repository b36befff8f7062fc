package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadingModels serves the test server's model as "a" and "b", loaded on
// their first Acquire and unloaded by KeepAlive 0 when idle, as package
// fleet does; b's file is described before its load (Info).
type loadingModels struct {
	models  map[string]*Model
	info    map[string]*ModelInfo
	expires time.Time // a's ExpiresAt while loaded and idle

	mu     sync.Mutex
	loaded map[string]bool
	refs   map[string]int
	loads  map[string]int
	keeps  []time.Duration
}

func (l *loadingModels) Acquire(ctx context.Context, name string) (*Model, func(), error) {
	m := l.models[name]
	switch {
	case name == "":
		return nil, nil, ErrModelRequired
	case m == nil:
		return nil, nil, fmt.Errorf("%w: %q", ErrUnknownModel, name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.loaded[name] {
		l.loaded[name] = true
		l.loads[name]++
	}
	l.refs[name]++
	return m, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.refs[name]--
	}, nil
}

func (l *loadingModels) List() []ModelStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []ModelStatus
	for _, name := range []string{"a", "b"} {
		st := ModelStatus{Name: name, State: StateUnloaded, Info: l.info[name], Bytes: 1234}
		if l.loaded[name] {
			st.State, st.Model, st.Context = StateLoaded, l.models[name], l.models[name].Context
			if name == "a" && l.refs[name] == 0 {
				st.ExpiresAt = l.expires
			}
		}
		out = append(out, st)
	}
	return out
}

func (l *loadingModels) KeepAlive(name string, d time.Duration) error {
	if l.models[name] == nil {
		return fmt.Errorf("%w: %q", ErrUnknownModel, name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keeps = append(l.keeps, d)
	if d == 0 && l.refs[name] == 0 {
		l.loaded[name] = false
	}
	return nil
}

// newLoadingServer returns a server of the loadingModels "a" and "b",
// the test server's model under two names: a's loaded Info says 99
// bytes, b's file is described before its load.
func newLoadingServer(t *testing.T) (*httptest.Server, *loadingModels) {
	ts := newTestServer(t, serverOpts{reply: "Hello there"})
	a, b := *ts.model, *ts.model
	a.Name, b.Name = "a", "b"
	a.Info = ModelInfo{Size: 11, Digest: "aa", Architecture: "qwen3", Memory: 99, GPUMemory: 0}
	modified := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	ms := &loadingModels{models: map[string]*Model{"a": &a, "b": &b},
		info:    map[string]*ModelInfo{"b": {Size: 22, Digest: "bb", Modified: modified, Architecture: "llama", Parameters: 8e9, Quantization: "Q4_K_M"}},
		expires: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		loaded:  map[string]bool{}, refs: map[string]int{}, loads: map[string]int{}}
	srv := New(Config{Queue: 8, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv.SetModels(ms)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs, ms
}

// TestOllamaModels: ollama's routes on a server of several models pick
// each request's model by name, with or without ":latest", answer 404 in
// ollama's shape, list every model in /api/tags (an unloaded one from its
// file's header) and the loaded ones in /api/ps, pass keep_alive to the
// Models, and unload a model for keep_alive 0 without loading it.
func TestOllamaModels(t *testing.T) {
	hs, ms := newLoadingServer(t)
	a := ms.models["a"]
	models := func(path string) []map[string]any {
		t.Helper()
		_, _, body := ollamaDo(t, hs.URL, path, "")
		var out []map[string]any
		for _, v := range ollamaObject(t, body)["models"].([]any) {
			out = append(out, v.(map[string]any))
		}
		return out
	}

	tags := models("/api/tags")
	if len(tags) != 2 || tags[0]["name"] != "a:latest" || tags[1]["name"] != "b:latest" || tags[1]["model"] != "b:latest" {
		t.Fatalf("/api/tags: %v", tags)
	}
	det := tags[1]["details"].(map[string]any)
	if tags[1]["size"] != 22.0 || tags[1]["digest"] != "bb" || tags[1]["modified_at"] != "2026-05-04T03:02:01Z" ||
		det["family"] != "llama" || det["parameter_size"] != "8.0B" || det["quantization_level"] != "Q4_K_M" {
		t.Errorf("/api/tags' unloaded b: %v", tags[1])
	}
	if ps := models("/api/ps"); len(ps) != 0 {
		t.Errorf("/api/ps before a load: %v", ps)
	}

	for _, name := range []string{"a", "b:latest", "a:latest"} {
		status, _, body := ollamaDo(t, hs.URL, "/api/chat", `{"model":"`+name+`","stream":false,"messages":[{"role":"user","content":"hi"}],"options":{"num_predict":3}}`)
		v := ollamaObject(t, body)
		if status != 200 || v["model"] != name || v["done"] != true {
			t.Errorf("chat with %s: %d %s", name, status, body)
		}
	}
	status, _, body := ollamaDo(t, hs.URL, "/api/show", `{"name":"b"}`)
	if v := ollamaObject(t, body); status != 200 || v["modelfile"] != "FROM b:latest\n" {
		t.Errorf("/api/show by name: %d %.200s", status, body)
	}
	for _, tc := range []struct{ path, body, want string }{
		{"/api/chat", `{"model":"zz","messages":[]}`, `{"error":"model 'zz' not found"}`},
		{"/api/generate", `{"model":"a:7b","prompt":"x"}`, `{"error":"model 'a:7b' not found"}`},
		{"/api/show", `{"model":"zz:latest"}`, `{"error":"model 'zz:latest' not found"}`},
		{"/api/embed", `{"model":"nope","input":"x"}`, `{"error":"model 'nope' not found"}`},
	} {
		status, _, body := ollamaDo(t, hs.URL, tc.path, tc.body)
		if status != 404 || strings.TrimSpace(string(body)) != tc.want {
			t.Errorf("%s %s: %d %s, want 404 %s", tc.path, tc.body, status, body, tc.want)
		}
	}
	if status, _, body := ollamaDo(t, hs.URL, "/api/chat", `{"messages":[]}`); status != 400 || !strings.Contains(string(body), `"model is required"`) {
		t.Errorf("no model: %d %s", status, body)
	}

	ps := models("/api/ps")
	if len(ps) != 2 || ps[0]["name"] != "a:latest" || ps[1]["name"] != "b:latest" {
		t.Fatalf("/api/ps: %v", ps)
	}
	if ps[0]["expires_at"] != "2030-01-02T03:04:05Z" || ps[0]["size"] != 99.0 || ps[0]["size_vram"] != 0.0 || ps[0]["context_length"] != float64(a.Context) {
		t.Errorf("/api/ps' a: %v", ps[0])
	}
	if at, err := time.Parse(time.RFC3339Nano, ps[1]["expires_at"].(string)); err != nil || at.Before(time.Now().AddDate(200, 0, 0)) {
		t.Errorf("/api/ps' b expires_at %v: want ollama's forever", ps[1]["expires_at"])
	}
	if ps[1]["size"] != 1234.0 {
		t.Errorf("/api/ps' b size %v: want the Models' bytes when Info has none", ps[1]["size"])
	}

	// keep_alive goes to the Models: negative (ollama's forever) as -1.
	for _, ka := range []string{`"10m"`, `300`, `"-1"`, `2.5`} {
		body := `{"model":"b","prompt":"Hi","stream":false,"options":{"num_predict":1},"keep_alive":` + ka + `}`
		if status, _, b := ollamaDo(t, hs.URL, "/api/generate", body); status != 200 {
			t.Fatalf("keep_alive %s: %d %s", ka, status, b)
		}
	}
	want := []time.Duration{10 * time.Minute, 300 * time.Second, -1, 2500 * time.Millisecond}
	ms.mu.Lock()
	if fmt.Sprint(ms.keeps) != fmt.Sprint(want) {
		t.Errorf("keep-alives %v, want %v", ms.keeps, want)
	}
	ms.keeps = nil
	ms.mu.Unlock()

	// keep_alive 0 with nothing to do unloads, and loads nothing.
	for _, tc := range []struct{ path, body string }{
		{"/api/chat", `{"model":"a:latest","messages":[],"keep_alive":0}`},
		{"/api/generate", `{"model":"b","keep_alive":"0s"}`},
		{"/api/generate", `{"model":"b","prompt":"","keep_alive":0}`},
	} {
		status, _, body := ollamaDo(t, hs.URL, tc.path, tc.body)
		if v := ollamaObject(t, body); status != 200 || v["done_reason"] != "unload" || v["done"] != true {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, status, body)
		}
	}
	if ps := models("/api/ps"); len(ps) != 0 {
		t.Errorf("/api/ps after the unloads: %v", ps)
	}
	ms.mu.Lock()
	if ms.loads["a"] != 1 || ms.loads["b"] != 1 || fmt.Sprint(ms.keeps) != "[0s 0s 0s]" {
		t.Errorf("loads %v, keep-alives %v", ms.loads, ms.keeps)
	}
	ms.mu.Unlock()
	if tags := models("/api/tags"); len(tags) != 2 || tags[0]["digest"] != "" {
		t.Errorf("/api/tags after a's unload (its file not described): %v", tags)
	}
	// Without keep_alive 0, nothing to do loads the model (done_reason
	// "load").
	status, _, body = ollamaDo(t, hs.URL, "/api/chat", `{"model":"a","messages":[]}`)
	if v := ollamaObject(t, body); status != 200 || v["done_reason"] != "load" || len(models("/api/ps")) != 1 {
		t.Errorf("load: %d %s", status, body)
	}
}

// TestProtocolModels: Anthropic's Messages, count_tokens, the Responses
// API and rerank's checks pick the model each request names on a server
// of several; a Responses follow-up that names none continues on the
// model of the response it follows.
func TestProtocolModels(t *testing.T) {
	hs, ms := newLoadingServer(t)
	ts := &testServer{Server: hs}
	code, v, _ := ts.post(t, "/v1/messages", `{"model":"b","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 || v["model"] != "b" {
		t.Errorf("messages to b: %d %v", code, v)
	}
	code, v, _ = ts.post(t, "/v1/messages/count_tokens", `{"model":"a","messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 || v["input_tokens"] == nil {
		t.Errorf("count_tokens with a: %d %v", code, v)
	}
	code, v, _ = ts.post(t, "/v1/messages", `{"model":"zz","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`)
	if e, _ := v["error"].(map[string]any); code != 404 || v["type"] != "error" || e["type"] != "not_found_error" {
		t.Errorf("messages to zz: %d %v", code, v)
	}
	code, v, _ = ts.post(t, "/v1/rerank", `{"model":"b","query":"q","documents":["d"]}`)
	if code != 400 || !strings.Contains(fmt.Sprint(v), "not a reranker") {
		t.Errorf("rerank with the chat model b: %d %v", code, v)
	}

	code, first, _ := ts.post(t, "/v1/responses", `{"model":"b","input":"hi","max_output_tokens":3}`)
	if code != 200 || first["model"] != "b" {
		t.Fatalf("responses with b: %d %v", code, first)
	}
	ms.mu.Lock()
	ms.loaded["b"] = false // unloaded since: the follow-up loads it again
	ms.mu.Unlock()
	code, v, _ = ts.post(t, "/v1/responses", `{"previous_response_id":"`+first["id"].(string)+`","input":"and?","max_output_tokens":3}`)
	if code != 200 || v["model"] != "b" {
		t.Errorf("a follow-up naming no model: %d %v", code, v)
	}
	code, v, _ = ts.post(t, "/v1/responses", `{"model":"a","previous_response_id":"`+first["id"].(string)+`","input":"and?","max_output_tokens":3}`)
	if code != 200 || v["model"] != "a" {
		t.Errorf("a follow-up naming another model: %d %v", code, v)
	}
	for _, body := range []string{`{"input":"hi"}`, `{"previous_response_id":"resp_nope","input":"hi"}`} {
		if code, v, _ := ts.post(t, "/v1/responses", body); code != 400 || !strings.Contains(fmt.Sprint(v), "name one of the models") {
			t.Errorf("%s: %d %v", body, code, v)
		}
	}
	ms.mu.Lock()
	if ms.loads["b"] != 2 {
		t.Errorf("b loaded %d times, want 2", ms.loads["b"])
	}
	ms.mu.Unlock()
}

// FuzzOllamaUnloads: reading a body's model and whether it asks to
// unload never panics, and an unload request always has keep_alive 0.
func FuzzOllamaUnloads(f *testing.F) {
	for _, s := range []string{`{"model":"a","messages":[],"keep_alive":0}`, `{"name":"b","prompt":"","keep_alive":"0s"}`,
		`{"model":5}`, `{"messages":[ ],"keep_alive":"0"}`, `{"prompt":null,"keep_alive":-1}`, `{"messages":[1],"keep_alive":0}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var body map[string]json.RawMessage
		if json.Unmarshal(data, &body) != nil {
			return
		}
		_, _ = ollamaModelField(body)
		for _, field := range []string{"messages", "prompt"} {
			if !ollamaUnloads(body, field) {
				continue
			}
			if d, given, e := parseKeepAlive(body["keep_alive"]); e != nil || !given || d != 0 {
				t.Errorf("%s: unloads with keep_alive %s", data, body["keep_alive"])
			}
		}
	})
}
