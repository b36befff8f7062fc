package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// post sends a JSON body to the server and decodes the answer.
func (s *serving) post(t testing.TB, path, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(s.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %q: %v", path, data, err)
	}
	return resp.StatusCode, v
}

// states returns the models' states /v1/models lists: "a:loaded b:unloaded".
func (s *serving) states(t testing.TB) string {
	t.Helper()
	resp, err := http.Get(s.url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID     string `json:"id"`
			Status struct {
				Value string `json:"value"`
			} `json:"status"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, m := range list.Data {
		parts = append(parts, m.ID+":"+m.Status.Value)
	}
	return strings.Join(parts, " ")
}

// ollamaEntry is a model as ollama's /api/tags lists it.
type ollamaEntry struct {
	Size    int64  `json:"size"`
	Digest  string `json:"digest"`
	Details struct {
		Family        string `json:"family"`
		ParameterSize string `json:"parameter_size"`
	} `json:"details"`
	ModifiedAt time.Time `json:"modified_at"`
}

// ollamaTags returns the models /api/tags lists, by name.
func (s *serving) ollamaTags(t testing.TB) map[string]ollamaEntry {
	t.Helper()
	resp, err := http.Get(s.url + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Models []struct {
			Name string `json:"name"`
			ollamaEntry
		} `json:"models"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	out := map[string]ollamaEntry{}
	for _, m := range list.Models {
		out[m.Name] = m.ollamaEntry
	}
	return out
}

// waitStates waits up to 10 s for /v1/models to list want.
func (s *serving) waitStates(t testing.TB, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.states(t) != want {
		if time.Now().After(deadline) {
			t.Fatalf("models: %s, want %s\n%s", s.states(t), want, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const (
	chatBody  = `{"model":%q,"messages":[{"role":"user","content":"Name a color."}],"max_tokens":12,"temperature":0}`
	embedBody = `{"model":%q,"input":["The capital of France is Paris.","x"]}`
)

// reply returns what the request for model gives: the chat's text or the
// embeddings.
func (s *serving) reply(t testing.TB, path, body, model string) any {
	t.Helper()
	code, v := s.post(t, path, fmt.Sprintf(body, model))
	if code != 200 {
		t.Fatalf("%s for %q: %d %v", path, model, code, v)
	}
	if path == "/v1/embeddings" {
		return v["data"]
	}
	return v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]
}

// TestServeModels: a chat model and an embedding model in one server,
// loaded on their first requests (which wait for the load), give the
// replies each gives served alone, concurrently too; a request for
// another name gets 404 listing the names, one naming none 400.
func TestServeModels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	emb := filepath.Join(dir, "e.gguf")
	if _, errOut, code := run(t, "", "synth", emb, "--preset", "tiny", "--embedding", "--vocab-size", "320"); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	common := []string{"--backend", testBackend(), "--parallel", "2", "--ctx", "512"}
	chatAlone := startServe(t, append([]string{goldenModel}, common...)...)
	wantChat := chatAlone.reply(t, "/v1/chat/completions", chatBody, "")
	embAlone := startServe(t, append([]string{emb}, common...)...)
	wantEmb := embAlone.reply(t, "/v1/embeddings", embedBody, "")

	s := startServe(t, append([]string{goldenModel, "embed=" + emb, "--keep-alive", "-1"}, common...)...)
	s.waitStates(t, "tiny-q8_0:unloaded embed:unloaded")
	before := s.ollamaTags(t)
	st, err := os.Stat(emb)
	if err != nil {
		t.Fatal(err)
	}
	if e := before["embed:latest"]; e.Size != st.Size() || len(e.Digest) != 64 || e.Details.Family != "qwen3" {
		t.Errorf("/api/tags' unloaded embed: %+v", e)
	}
	// The first requests, together, wait for the one load of each model.
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				if got := s.reply(t, "/v1/chat/completions", chatBody, "tiny-q8_0"); got != wantChat {
					t.Errorf("chat: %q, alone %q", got, wantChat)
				}
			} else if got := s.reply(t, "/v1/embeddings", embedBody, "embed"); !reflect.DeepEqual(got, wantEmb) {
				t.Errorf("embeddings differ from the model's alone")
			}
		}()
	}
	wg.Wait()
	s.waitStates(t, "tiny-q8_0:loaded embed:loaded")
	if n := s.metric(t, "inferno_model_load_seconds_count"); n != 2 {
		t.Errorf("%v loads, want 2", n)
	}
	if n := s.metric(t, "inferno_models_loaded"); n != 2 {
		t.Errorf("inferno_models_loaded %v", n)
	}
	if n := strings.Count(s.stderr.String(), `msg="loading model"`); n != 2 {
		t.Errorf("%d loads logged:\n%s", n, s.stderr.String())
	}

	if after := s.ollamaTags(t); !reflect.DeepEqual(after, before) {
		t.Errorf("/api/tags once loaded: %+v, before %+v", after, before)
	}
	// ollama's unload: nothing to generate and keep_alive 0.
	if code, v := s.post(t, "/api/generate", `{"model":"embed:latest","keep_alive":0}`); code != 200 || v["done_reason"] != "unload" {
		t.Errorf("unload: %d %v", code, v)
	}
	s.waitStates(t, "tiny-q8_0:loaded embed:unloaded")

	code, v := s.post(t, "/v1/chat/completions", fmt.Sprintf(chatBody, "nope"))
	msg := fmt.Sprint(v["error"])
	if code != 404 || !strings.Contains(msg, "model_not_found") || !strings.Contains(msg, `"tiny-q8_0", "embed"`) {
		t.Errorf("unknown model: %d %v", code, v)
	}
	if code, v := s.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`); code != 400 || !strings.Contains(fmt.Sprint(v["error"]), "param:model") {
		t.Errorf("no model named: %d %v", code, v)
	}
	// The chat model refuses embeddings as it does alone.
	if code, _ := s.post(t, "/v1/embeddings", fmt.Sprintf(embedBody, "tiny-q8_0")); code != 400 {
		t.Errorf("embeddings of the chat model: %d", code)
	}
	// SIGTERM unloads the one loaded (embed was unloaded) and exits 0.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitExit(t)
	if n := strings.Count(s.stderr.String(), `reason="shutting down"`); n != 1 {
		t.Errorf("%d models unloaded at shutdown:\n%s", n, s.stderr.String())
	}
}

// TestServeModelsBudget: with room for two models, a third unloads the
// least recently used; --keep-alive unloads idle models; a folder
// serves each of its files.
func TestServeModelsBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		if err := os.Symlink(mustAbs(t, goldenModel), filepath.Join(dir, n+".gguf")); err != nil {
			t.Fatal(err)
		}
	}
	// Each model: its 16 MiB file and an 8 MiB KV pool (and on the GPU
	// 1.5 GiB of scratch).
	args := []string{dir, "--backend", testBackend(), "--parallel", "1", "--ctx", "256", "--kv-mem", "8MiB",
		"--host-memory", "60MiB", "--gpu-memory", "3.5GiB", "--keep-alive", "-1"}
	s := startServe(t, args...)
	s.waitStates(t, "a:unloaded b:unloaded c:unloaded")
	s.reply(t, "/v1/chat/completions", chatBody, "a")
	s.reply(t, "/v1/chat/completions", chatBody, "b")
	s.reply(t, "/v1/chat/completions", chatBody, "a") // b is the least recently used
	s.reply(t, "/v1/chat/completions", chatBody, "c")
	s.waitStates(t, "a:loaded b:unloaded c:loaded")
	if !strings.Contains(s.stderr.String(), `msg="unloading model" model=b reason="to make room for c"`) {
		t.Errorf("no unload of b logged:\n%s", s.stderr.String())
	}

	k := startServe(t, goldenModel, "again="+goldenModel, "--backend", testBackend(), "--parallel", "1", "--ctx", "256",
		"--keep-alive", "200ms")
	k.reply(t, "/v1/chat/completions", chatBody, "again")
	k.waitStates(t, "tiny-q8_0:unloaded again:unloaded")
	if n := k.metric(t, `inferno_model_unloads_total{reason="idle"}`); n != 1 {
		t.Errorf("idle unloads: %v", n)
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestModelArgs: NAME=MODEL, folders, and what is refused.
func TestModelArgs(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.gguf", "a.gguf", "mmproj-a.gguf", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eq := filepath.Join(dir, "x=y.gguf")
	if err := os.WriteFile(eq, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := modelArgs([]string{"chat=m.gguf", "Qwen/Qwen3-0.6B-GGUF:Q8_0", dir, "e=hf://o/r/f.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	want := []modelArg{{"chat", "m.gguf"}, {"", "Qwen/Qwen3-0.6B-GGUF:Q8_0"}, {"", filepath.Join(dir, "a.gguf")},
		{"", filepath.Join(dir, "b.gguf")}, {"", eq}, {"e", "hf://o/r/f.gguf"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	for _, bad := range [][]string{{"=m.gguf"}, {"n="}, {"n=" + dir}, {t.TempDir()}} {
		if _, err := modelArgs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, errOut, code := run(t, "", "serve", goldenModel, "b="+goldenModel, "--alias", "x"); code == 0 || !strings.Contains(errOut, "--alias names one model") {
		t.Errorf("--alias with two models: exit %d: %s", code, errOut)
	}
}
