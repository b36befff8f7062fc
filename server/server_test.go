package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"inferno/chat"
	"inferno/engine/enginetest"
	"inferno/model"
	"inferno/parser"
	"inferno/scheduler"
)

const goldenModel = "../testdata/golden/tiny-q8_0.gguf"

var (
	openOnce sync.Once
	golden   *model.Model
	openErr  error
)

// tinyModel opens the golden model once for all tests (its tokenizer and
// chat template are the real Qwen3 ones).
func tinyModel(t testing.TB) *model.Model {
	t.Helper()
	openOnce.Do(func() { golden, openErr = model.Open(goldenModel) })
	if openErr != nil {
		t.Fatal(openErr)
	}
	return golden
}

// testServer is a Server on a scripted model: every request's reply is
// the tokens of reply (then reply's last token again, forever).
type testServer struct {
	*httptest.Server
	srv    *Server
	sched  scheduler.Scheduler
	runner *enginetest.Batched
	model  *Model
}

type serverOpts struct {
	reply    string
	parallel int
	queue    int
	ctx      int
	apiKey   string
	maxBody  int64
	delay    time.Duration
	log      io.Writer     // the server's log (nil: discarded)
	config   func(*Config) // changes the server's configuration
	format   parser.Format // the model's reply format ("": Qwen, the GGUF's)
	template string        // the chat template ("": the GGUF's, Qwen3's)
}

func newTestServer(t testing.TB, o serverOpts) *testServer {
	t.Helper()
	m := tinyModel(t)
	src := m.ChatTemplate
	if o.template != "" {
		src = o.template
	}
	tmpl, err := chat.New(src, "", "<|im_end|>")
	if err != nil {
		t.Fatal(err)
	}
	if o.parallel == 0 {
		o.parallel = 2
	}
	if o.ctx == 0 {
		o.ctx = 4096
	}
	if o.format == "" {
		o.format = parser.Qwen
	}
	script := m.Tokenizer.Encode(o.reply)
	im, _ := m.Tokenizer.TokenID("<|im_end|>")
	script = append(script, im)
	ts := &testServer{}
	const bs = 16
	r := enginetest.NewBatched(script, m.Arch.Hyper().Vocab, o.ctx, o.parallel*((o.ctx+bs-1)/bs), bs)
	r.Fill = im
	r.Delay = o.delay
	ts.runner = r
	ts.sched, err = scheduler.NewBatcher(r, scheduler.Config{Parallel: o.parallel, BatchTokens: max(512, o.parallel), Queue: o.queue, PrefixCache: true, Tokenizer: m.Tokenizer})
	if err != nil {
		t.Fatal(err)
	}
	ts.model = &Model{Name: "tiny", Aliases: []string{"tiny-alias"}, Tokenizer: m.Tokenizer, Template: tmpl, EOG: m.EOG,
		Format: o.format, Reasoning: true, Context: o.ctx, Vocab: m.Arch.Hyper().Vocab, Scheduler: ts.sched, Created: time.Unix(1700000000, 0)}
	if o.log == nil {
		o.log = io.Discard
	}
	cfg := Config{APIKey: o.apiKey, MaxBodyBytes: o.maxBody, Queue: o.queue, Logger: slog.New(slog.NewTextHandler(o.log, nil))}
	if o.config != nil {
		o.config(&cfg)
	}
	ts.srv = New(cfg)
	ts.srv.SetModel(ts.model)
	ts.Server = httptest.NewServer(ts.srv)
	t.Cleanup(func() {
		ts.Server.Close()
		ts.sched.Close()
	})
	return ts
}

// post sends body to path and returns the status and the decoded JSON.
func (ts *testServer) post(t testing.TB, path, body string, header ...string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: status %d, body is not a JSON object: %q", path, resp.StatusCode, b)
	}
	return resp.StatusCode, v, resp.Header
}

// sseEvents reads a stream's "data:" payloads.
func sseEvents(t testing.TB, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("stream line %q is not a data line", line)
		}
		out = append(out, data)
	}
	return out
}

func errorOf(t testing.TB, v map[string]any) map[string]any {
	t.Helper()
	e, ok := v["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", v)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e[k]; !ok {
			t.Errorf("error object lacks %q: %v", k, e)
		}
	}
	return e
}

// TestBadRequests checks the status and error body of every kind of bad
// request.
func TestBadRequests(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", ctx: 64, maxBody: 4096})
	user := `"messages":[{"role":"user","content":"Hi"}]`
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name, path, body string
		status           int
		param, msg       string
	}{
		{"malformed JSON", "/v1/chat/completions", `{"messages": [`, 400, "", "cut short"},
		{"syntax error", "/v1/chat/completions", `{"messages": x}`, 400, "", "malformed JSON"},
		{"not an object", "/v1/chat/completions", `[1,2]`, 400, "", "must be a JSON object"},
		{"two values", "/v1/chat/completions", `{` + user + `} {}`, 400, "", "more than one JSON value"},
		{"empty body", "/v1/chat/completions", ``, 400, "", "empty"},
		{"wrong type", "/v1/chat/completions", `{"messages": "hi"}`, 400, "messages", "expected an array"},
		{"wrong type nested", "/v1/chat/completions", `{` + user + `, "temperature": "hot"}`, 400, "temperature", "expected a number"},
		{"fraction for an integer", "/v1/chat/completions", `{` + user + `, "max_tokens": 1.5}`, 400, "max_tokens", "expected an integer"},
		{"missing messages", "/v1/chat/completions", `{"model": "tiny"}`, 400, "messages", "messages is required"},
		{"empty messages", "/v1/chat/completions", `{"messages": []}`, 400, "messages", "must not be empty"},
		{"unknown role", "/v1/chat/completions", `{"messages":[{"role":"wizard","content":"x"}]}`, 400, "messages[0].role", `"wizard"`},
		{"missing role", "/v1/chat/completions", `{"messages":[{"content":"x"}]}`, 400, "messages[0].role", "role is required"},
		{"image part", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x"}}]}]}`, 400, "messages[0].content[0]", "images are not supported"},
		{"temperature low", "/v1/chat/completions", `{` + user + `, "temperature": -0.1}`, 400, "temperature", "outside [0, 2]"},
		{"temperature high", "/v1/chat/completions", `{` + user + `, "temperature": 2.5}`, 400, "temperature", "outside [0, 2]"},
		{"top_p zero", "/v1/chat/completions", `{` + user + `, "top_p": 0}`, 400, "top_p", "outside (0, 1]"},
		{"top_p high", "/v1/chat/completions", `{` + user + `, "top_p": 1.5}`, 400, "top_p", "outside (0, 1]"},
		{"max_tokens zero", "/v1/chat/completions", `{` + user + `, "max_tokens": 0}`, 400, "max_tokens", "at least 1"},
		{"max_completion_tokens", "/v1/chat/completions", `{` + user + `, "max_completion_tokens": -3}`, 400, "max_completion_tokens", "at least 1"},
		{"n", "/v1/chat/completions", `{` + user + `, "n": 17}`, 400, "n", "want 1 to 16"},
		{"n completions", "/v1/completions", `{"prompt": "x", "n": 17}`, 400, "n", "want 1 to 16"},
		{"prompts times n", "/v1/completions", `{"prompt": ["a", "b", "c"], "n": 6}`, 400, "n", "at most 16 choices"},
		{"no prompts", "/v1/completions", `{"prompt": []}`, 400, "prompt", "want 1 to 16"},
		{"top_logprobs", "/v1/chat/completions", `{` + user + `, "logprobs": true, "top_logprobs": 21}`, 400, "top_logprobs", "outside [0, 20]"},
		{"too many stops", "/v1/chat/completions", `{` + user + `, "stop": ["a","b","c","d","e"]}`, 400, "stop", "at most 4"},
		{"bias id", "/v1/chat/completions", `{` + user + `, "logit_bias": {"x": 1}}`, 400, "logit_bias", "not a token id"},
		{"tool choice", "/v1/chat/completions", `{` + user + `, "tool_choice": "required"}`, 400, "tool_choice", "needs tools"},
		{"response_format", "/v1/chat/completions", `{` + user + `, "response_format": {"type": "xml"}}`, 400, "response_format.type", "not one of"},
		{"bad tool", "/v1/chat/completions", `{` + user + `, "tools": [{"type":"function"}]}`, 400, "tools[0]", "must be"},
		{"prompt too long", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + long + `"}]}`, 400, "messages", "context is 64 tokens, but the prompt has"},
		{"unknown model", "/v1/chat/completions", `{"model":"gpt-9",` + user + `}`, 404, "model", `"gpt-9" does not exist`},
		{"body too large", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, 413, "", "larger than 4096 bytes"},
		{"completions no prompt", "/v1/completions", `{"model":"tiny"}`, 400, "prompt", "prompt is required"},
		{"completions prompt type", "/v1/completions", `{"prompt": {"a":1}}`, 400, "prompt", "must be a string"},
		{"completions bad id", "/v1/completions", `{"prompt": [1, 99999999]}`, 400, "prompt", "not a token id"},
		{"completions long", "/v1/completions", `{"prompt": "` + long + `"}`, 400, "prompt", "context is 64 tokens"},
		{"completions logprobs", "/v1/completions", `{"prompt": "hi", "logprobs": 6}`, 400, "logprobs", "outside [0, 5]"},
		{"completions echo logprobs", "/v1/completions", `{"prompt": "hi", "echo": true, "logprobs": 1}`, 400, "echo", "not supported"},
		{"tokenize nothing", "/tokenize", `{}`, 400, "content", "give the text"},
		{"detokenize bad id", "/detokenize", `{"tokens": [-1]}`, 400, "tokens", "not a token id"},
		{"detokenize type", "/detokenize", `{"tokens": "abc"}`, 400, "tokens", "expected an array"},
		{"apply-template role", "/apply-template", `{"messages":[{"role":"x","content":"y"}]}`, 400, "messages[0].role", "is not one of"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, v, _ := ts.post(t, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, v)
			}
			e := errorOf(t, v)
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not contain %q", msg, tc.msg)
			}
			if tc.param != "" && e["param"] != tc.param {
				t.Errorf("param %v, want %q", e["param"], tc.param)
			}
			if e["type"] == "" {
				t.Error("empty type")
			}
		})
	}
}

func TestAuth(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", apiKey: "s3cret"})
	body := `{"messages":[{"role":"user","content":"Hi"}]}`
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "s3cret"}, {"Authorization", "Basic s3cret"}} {
		status, v, _ := ts.post(t, "/v1/chat/completions", body, hdr...)
		if status != 401 {
			t.Fatalf("header %v: status %d, want 401", hdr, status)
		}
		if e := errorOf(t, v); e["code"] != "invalid_api_key" {
			t.Errorf("code %v", e["code"])
		}
	}
	if status, v, _ := ts.post(t, "/v1/chat/completions", body, "Authorization", "Bearer s3cret"); status != 200 {
		t.Fatalf("right key: status %d: %v", status, v)
	}
	// /health and /metrics need no key.
	for _, p := range []string{"/health", "/metrics"} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: status %d", p, resp.StatusCode)
		}
	}
	resp, _ := http.Get(ts.URL + "/v1/models")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("/v1/models without a key: status %d", resp.StatusCode)
	}
}

func TestHealthWhileLoading(t *testing.T) {
	srv := New(Config{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(b), `"loading"`) {
		t.Errorf("loading: %d %s", resp.StatusCode, b)
	}
	resp, _ = http.Post(hs.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "model_loading") {
		t.Errorf("API while loading: %d %s", resp.StatusCode, b)
	}
	ts := newTestServer(t, serverOpts{reply: "x"})
	resp, _ = http.Get(ts.URL + "/health")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("ready: status %d", resp.StatusCode)
	}
}

// TestQueueFull fills the slots and the queue and checks the next request
// gets 503 with Retry-After, then that everything drains.
func TestQueueFull(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: strings.Repeat("a ", 50), parallel: 1, queue: 1, delay: 5 * time.Millisecond})
	body := `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":20}`
	var wg sync.WaitGroup
	results := make(chan int, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, _ := ts.post(t, "/v1/chat/completions", body)
			results <- status
		}()
		time.Sleep(30 * time.Millisecond) // the first takes the slot, the second the queue
	}
	status, v, hdr := ts.post(t, "/v1/chat/completions", body)
	if status != 503 || hdr.Get("Retry-After") == "" {
		t.Fatalf("third request: status %d, Retry-After %q: %v", status, hdr.Get("Retry-After"), v)
	}
	if e := errorOf(t, v); e["code"] != "queue_full" {
		t.Errorf("code %v", e["code"])
	}
	wg.Wait()
	close(results)
	for s := range results {
		if s != 200 {
			t.Errorf("queued request: status %d", s)
		}
	}
}

// openStream posts a streamed request under ctx and reads its first 5
// lines; the caller cancels ctx to leave it mid-way.
func openStream(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for range 5 {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	return resp
}

// TestClientDisconnect cancels a stream mid-way and checks the slot is
// free again within a few steps.
func TestClientDisconnect(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: strings.Repeat("a ", 2000), parallel: 1, delay: 2 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	resp := openStream(t, ctx, ts.URL+"/v1/chat/completions",
		`{"messages":[{"role":"user","content":"Hi"}],"stream":true,"max_tokens":3000}`)
	if st := ts.sched.Stats(); st.Running != 1 {
		t.Fatalf("running %d, want 1", st.Running)
	}
	before := ts.runner.Forwards()
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(2 * time.Second)
	for ts.sched.Stats().Running != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slot was not freed after the client left")
		}
		time.Sleep(time.Millisecond)
	}
	if steps := ts.runner.Forwards() - before; steps > 50 {
		t.Errorf("%d more steps ran after the disconnect", steps)
	}
	// The freed slot serves the next request.
	if status, v, _ := ts.post(t, "/v1/completions", `{"prompt":"x","max_tokens":2}`); status != 200 {
		t.Fatalf("after disconnect: %d %v", status, v)
	}
}

func TestTokenizeEndpoints(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "x"})
	status, v, _ := ts.post(t, "/tokenize", `{"content": "Hello, world!<|im_end|>", "with_pieces": true}`)
	if status != 200 {
		t.Fatal(status, v)
	}
	b, _ := json.Marshal(v["tokens"])
	if string(b) != "[9707,11,1879,0,151645]" || v["count"] != float64(5) {
		t.Errorf("tokenize: %s count %v", b, v["count"])
	}
	if p := fmt.Sprint(v["pieces"]); p != `[Hello ,  world ! <|im_end|>]` {
		t.Errorf("pieces %s", p)
	}
	status, v, _ = ts.post(t, "/detokenize", `{"tokens": [9707,11,1879,0]}`)
	if status != 200 || v["content"] != "Hello, world!" {
		t.Errorf("detokenize: %d %v", status, v)
	}
	status, v, _ = ts.post(t, "/apply-template", `{"messages":[{"role":"user","content":"Hello!"}]}`)
	if want := "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"; status != 200 || v["prompt"] != want {
		t.Errorf("apply-template: %d %q", status, v["prompt"])
	}
	status, v, _ = ts.post(t, "/apply-template", `{"messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"enable_thinking":false}}`)
	if status != 200 || !strings.HasSuffix(v["prompt"].(string), "<think>\n\n</think>\n\n") {
		t.Errorf("enable_thinking false: %q", v["prompt"])
	}
	// continue_final_message leaves the last assistant message open.
	status, v, _ = ts.post(t, "/apply-template", `{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello, I am"}],"continue_final_message":true}`)
	// (Qwen3's template gives the last assistant turn an empty think block.)
	if status != 200 || !strings.HasSuffix(v["prompt"].(string), "<|im_start|>assistant\n<think>\n\n</think>\n\nHello, I am") {
		t.Errorf("continue_final_message: %q", v["prompt"])
	}
	// Content parts are joined.
	status, v, _ = ts.post(t, "/tokenize", `{"messages":[{"role":"user","content":[{"type":"text","text":"Hello!"}]}]}`)
	if b, _ := json.Marshal(v["tokens"]); status != 200 || string(b) != "[151644,872,198,9707,0,151645,198,151644,77091,198]" {
		t.Errorf("tokenize messages: %d %s", status, b)
	}
}

func TestModelsAndMetrics(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hello there"})
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Data) != 2 || list.Data[0].ID != "tiny" || list.Data[1].ID != "tiny-alias" || list.Data[0].MaxModelLen != 4096 {
		t.Errorf("models: %+v", list)
	}
	if status, v, _ := ts.post(t, "/v1/chat/completions", `{"model":"tiny-alias","messages":[{"role":"user","content":"Hi"}]}`); status != 200 {
		t.Fatalf("alias: %d %v", status, v)
	}
	ts.post(t, "/v1/chat/completions", `{"messages":[]}`)
	resp, err = http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`inferno_requests_total{endpoint="chat_completions",status="200"} 1`,
		`inferno_requests_total{endpoint="chat_completions",status="400"} 1`,
		"inferno_prompt_tokens_total 9",
		"inferno_generation_tokens_total 3",
		"inferno_time_to_first_token_seconds_count 1",
		"inferno_time_per_output_token_seconds_count 1",
		"inferno_request_duration_seconds_count 1",
		metricWaiting + " 0", metricRunning + " 0", metricKVUsage + " 0",
		"inferno_slots 2",
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestCachedTokens: the next turn of a conversation keeps the slot's KV
// cache of the earlier turns and reports it in usage.
func TestCachedTokens(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hello there", parallel: 2})
	status, v, _ := ts.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}]}`)
	if status != 200 {
		t.Fatal(status, v)
	}
	u := v["usage"].(map[string]any)
	if d := u["prompt_tokens_details"].(map[string]any); d["cached_tokens"] != float64(0) {
		t.Errorf("first turn: %v", u)
	}
	status, v, _ = ts.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello there"},{"role":"user","content":"And?"}]}`)
	if status != 200 {
		t.Fatal(status, v)
	}
	u = v["usage"].(map[string]any)
	cached := u["prompt_tokens_details"].(map[string]any)["cached_tokens"].(float64)
	if cached < 9 || cached >= u["prompt_tokens"].(float64) {
		t.Errorf("second turn: %v", u)
	}
}

func TestWrongMethod(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "x"})
	resp, err := http.Get(ts.URL + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("status %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	errorOf(t, v)
	// Unknown paths get 404 in the same shape.
	resp2, err := http.Get(ts.URL + "/v2/nothing")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	json.NewDecoder(resp2.Body).Decode(&v)
	if resp2.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp2.StatusCode)
	}
	errorOf(t, v)
}
