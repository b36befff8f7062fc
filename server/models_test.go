package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stubModels serves the test server's model as a and b; "slow" makes
// Acquire wait for its context, "broken" fails to load, "full" finds no
// room.
type stubModels struct {
	m        map[string]*Model
	mu       sync.Mutex
	acquired map[string]int
	released map[string]int
	keep     map[string]time.Duration
	gate     chan struct{}
	waiting  atomic.Int32
}

func (s *stubModels) Acquire(ctx context.Context, name string) (*Model, func(), error) {
	switch name {
	case "":
		return nil, nil, ErrModelRequired
	case "slow":
		<-ctx.Done()
		return nil, nil, fmt.Errorf("%w: slow", ErrLoadTimeout)
	case "gate":
		s.waiting.Add(1)
		<-s.gate
		return nil, nil, ErrNoRoom
	case "broken":
		return nil, nil, fmt.Errorf("loading /secret/path.gguf: corrupt")
	case "full":
		return nil, nil, ErrNoRoom
	case "a", "b":
	default:
		return nil, nil, fmt.Errorf("%w: %q", ErrUnknownModel, name)
	}
	s.mu.Lock()
	s.acquired[name]++
	s.mu.Unlock()
	return s.m[name], func() {
		s.mu.Lock()
		s.released[name]++
		s.mu.Unlock()
	}, nil
}

func (s *stubModels) List() []ModelStatus {
	return []ModelStatus{{Name: "a", State: StateLoaded, Model: s.m["a"], Context: s.m["a"].Context}, {Name: "b", State: StateUnloaded}}
}

func (s *stubModels) KeepAlive(name string, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep[name] = d
	return nil
}

// TestModels: a server of several models picks each request's by its
// "model", answers 404, 400 and 503 for the errors of Acquire, gives the
// model back when a stream ends, and lists every model with its state.
func TestModels(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hello there"})
	a, b := *ts.model, *ts.model
	a.Name, b.Name = "a", "b"
	stub := &stubModels{m: map[string]*Model{"a": &a, "b": &b}, acquired: map[string]int{}, released: map[string]int{},
		keep: map[string]time.Duration{}, gate: make(chan struct{})}
	srv := New(Config{Queue: 8, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv.SetModels(stub)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	multi := &testServer{Server: hs, srv: srv}

	chat := func(model string) string {
		return fmt.Sprintf(`{"model":%s,"messages":[{"role":"user","content":"hi"}],"max_tokens":3}`, model)
	}
	if code, v, _ := multi.post(t, "/v1/chat/completions", chat(`"a"`)); code != 200 {
		t.Fatalf("a: %d %v", code, v)
	}
	resp, err := http.Post(hs.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"b","stream":true,"messages":[{"role":"user","content":"hi"}],"max_tokens":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev := sseEvents(t, resp.Body); len(ev) == 0 || ev[len(ev)-1] != "[DONE]" {
		t.Errorf("stream: %q", ev)
	}
	resp.Body.Close()
	stub.mu.Lock()
	if stub.acquired["a"] != 1 || stub.released["a"] != 1 || stub.acquired["b"] != 1 || stub.released["b"] != 1 {
		t.Errorf("acquired %v, released %v", stub.acquired, stub.released)
	}
	stub.mu.Unlock()

	for _, tc := range []struct {
		model string
		code  int
		want  string
	}{
		{`"zz"`, 404, `the model "zz" does not exist; this server serves "a", "b"`},
		{`null`, 400, `name one of the models this server serves: "a", "b"`},
		{`5`, 400, `model: expected a string, got a number`},
		{`"broken"`, 500, `the model "broken" could not be loaded; the server's log says why`},
		{`"full"`, 503, `does not fit in the memory left`},
	} {
		code, v, h := multi.post(t, "/v1/chat/completions", chat(tc.model))
		e := errorOf(t, v)
		if code != tc.code || !strings.Contains(fmt.Sprint(e["message"]), tc.want) {
			t.Errorf("model %s: %d %v", tc.model, code, e)
		}
		if code == 503 && h.Get("Retry-After") == "" {
			t.Errorf("model %s: no Retry-After", tc.model)
		}
	}
	if code, v, _ := multi.post(t, "/v1/chat/completions", `{"model":"a",`); code != 400 || !strings.Contains(fmt.Sprint(errorOf(t, v)["message"]), "JSON") {
		t.Errorf("malformed body: %d %v", code, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/v1/chat/completions", strings.NewReader(chat(`"slow"`)))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("a wait for a load answered %d before the client left", resp.StatusCode)
	}

	// Requests waiting for a load, more than the turns to prepare a
	// prompt, do not hold back those of a loaded model.
	n := runtime.GOMAXPROCS(0) + 2
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, v, _ := multi.post(t, "/v1/chat/completions", chat(`"gate"`)); code != 503 {
				t.Errorf("gate: %d %v", code, v)
			}
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); stub.waiting.Load() < int32(n); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(stub.gate)
			t.Fatalf("%d of %d requests wait for the load: the others wait for a turn", stub.waiting.Load(), n)
		}
	}
	if code, v, _ := multi.post(t, "/v1/chat/completions", chat(`"a"`)); code != 200 {
		t.Errorf("a beside requests waiting for a load: %d %v", code, v)
	}
	close(stub.gate)
	wg.Wait()

	var list struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
			Status      struct {
				Value string `json:"value"`
			} `json:"status"`
		} `json:"data"`
	}
	getJSON(t, hs.URL+"/v1/models", &list)
	if len(list.Data) != 2 || list.Data[0].ID != "a" || list.Data[0].Status.Value != "loaded" || list.Data[0].MaxModelLen != 4096 ||
		list.Data[1].ID != "b" || list.Data[1].Status.Value != "unloaded" || list.Data[1].MaxModelLen != 0 {
		t.Errorf("/v1/models: %+v", list.Data)
	}
	if resp, err := http.Get(hs.URL + "/v1/models/b"); err != nil || resp.StatusCode != 200 {
		t.Errorf("/v1/models/b: %v %v", resp, err)
	}
	if resp, err := http.Get(hs.URL + "/health"); err != nil || resp.StatusCode != 200 {
		t.Errorf("/health: %v %v", resp, err)
	}
	if err := srv.KeepAlive("a", 0); err != nil || stub.keep["a"] != 0 {
		t.Errorf("KeepAlive: %v %v", err, stub.keep)
	}
	if err := ts.srv.KeepAlive("tiny", 0); err != nil {
		t.Errorf("KeepAlive of the one model: %v", err)
	}
	if got := ts.srv.ModelList(); len(got) != 1 || got[0].Name != "tiny" || got[0].State != StateLoaded {
		t.Errorf("ModelList of the one model: %+v", got)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %q: %v", url, data, err)
	}
}

// FuzzPeekModel: the model's name is found in any body without a panic,
// and agrees with a full decoding's.
func FuzzPeekModel(f *testing.F) {
	for _, s := range []string{`{"model":"a"}`, `{"messages":[],"model":"b\u00e9"}`, `{"model":null}`, `{"model":5}`, `[]`, `{"model":"a","model":"b"}`, ``, `{"x":{"model":"no"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		name := peekModel(body)
		var v struct {
			Model any `json:"model"`
		}
		if json.Unmarshal(body, &v) != nil {
			if name != "" {
				t.Errorf("%q: %q from a malformed body", body, name)
			}
			return
		}
		if s, ok := v.Model.(string); ok && s != name || !ok && name != "" {
			t.Errorf("%q: peeked %q, decoded %v", body, name, v.Model)
		}
	})
}
