package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"inferno/engine"
	"inferno/scheduler"
)

// ollamaDo sends body (GET when empty) to path and returns the status,
// the header and the body.
func ollamaDo(t testing.TB, base, path, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// ollamaObject decodes one JSON object.
func ollamaObject(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not a JSON object: %q", b)
	}
	return v
}

// ndjsonLines splits a stream into its objects: every line one JSON
// object ended by "\n"; all but the last have done: false, the last done:
// true.
func ndjsonLines(t testing.TB, b []byte) []map[string]any {
	t.Helper()
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("the stream does not end with a newline: %q", b)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	out := make([]map[string]any, len(lines))
	for i, line := range lines {
		out[i] = ollamaObject(t, []byte(line))
		if done := out[i]["done"]; done != (i == len(lines)-1) {
			t.Fatalf("line %d of %d: done %v: %s", i, len(lines), done, line)
		}
	}
	return out
}

// checkMetrics checks a reply's end: its reason, its counts, and its
// durations in nanoseconds, the prompt's and the reply's adding up to
// the total.
func checkMetrics(t testing.TB, v map[string]any, reason string, evalCount int) {
	t.Helper()
	if v["done"] != true || v["done_reason"] != reason {
		t.Errorf("done %v, done_reason %v, want %q", v["done"], v["done_reason"], reason)
	}
	num := func(k string) int64 {
		f, ok := v[k].(float64)
		if !ok || f < 0 || f != math.Trunc(f) {
			t.Fatalf("%s = %v: want a whole number of at least 0", k, v[k])
		}
		return int64(f)
	}
	total, prompt, eval := num("total_duration"), num("prompt_eval_duration"), num("eval_duration")
	if num("load_duration") != 0 || prompt+eval != total || total <= 0 || total > int64(time.Minute) {
		t.Errorf("durations: total %d, prompt %d, eval %d", total, prompt, eval)
	}
	if num("prompt_eval_count") < 1 {
		t.Errorf("prompt_eval_count %v", v["prompt_eval_count"])
	}
	if evalCount >= 0 && num("eval_count") != int64(evalCount) {
		t.Errorf("eval_count %v, want %d", v["eval_count"], evalCount)
	}
}

const ollamaReplyScript = "<think>\nhm\n</think>\n\nfine <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, {\"b\": null}]}}\n</tool_call>"

func TestOllamaChat(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: ollamaReplyScript})
	tools := `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`
	replyTokens := len(ts.model.Tokenizer.Encode(ollamaReplyScript)) + 1 // and <|im_end|>
	body := `{"model":"tiny","messages":[{"role":"user","content":"Hi"}],` + tools + `,"stream":false}`
	status, h, b := ollamaDo(t, ts.URL, "/api/chat", body)
	if status != 200 || h.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, %s: %s", status, h.Get("Content-Type"), b)
	}
	v := ollamaObject(t, b)
	checkMetrics(t, v, "stop", replyTokens)
	if v["model"] != "tiny" {
		t.Errorf("model %v", v["model"])
	}
	if _, err := time.Parse(time.RFC3339Nano, v["created_at"].(string)); err != nil {
		t.Errorf("created_at: %v", err)
	}
	msg := v["message"].(map[string]any)
	if msg["role"] != "assistant" || msg["content"] != "fine" || msg["thinking"] != "hm" {
		t.Errorf("message %v", msg)
	}
	calls, _ := msg["tool_calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("tool_calls %v", msg["tool_calls"])
	}
	fn := calls[0].(map[string]any)["function"].(map[string]any)
	args, _ := json.Marshal(fn["arguments"])
	if fn["name"] != "f" || string(args) != `{"a":[1,{"b":null}]}` || fn["index"] != 0.0 {
		t.Errorf("function %v (arguments %s): want f with an object", fn, args)
	}

	// Streamed by default: the same text in NDJSON lines, the tool call
	// whole in one, the metrics in the last.
	status, h, b = ollamaDo(t, ts.URL, "/api/chat", strings.Replace(body, `,"stream":false`, "", 1))
	if status != 200 || h.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("stream: status %d, %s: %s", status, h.Get("Content-Type"), b)
	}
	lines := ndjsonLines(t, b)
	var content, thinking strings.Builder
	ncalls := 0
	for _, l := range lines[:len(lines)-1] {
		m := l["message"].(map[string]any)
		if m["role"] != "assistant" {
			t.Errorf("line %v: role", l)
		}
		if _, ok := m["content"].(string); !ok {
			t.Errorf("line %v: no content string", l)
		}
		content.WriteString(m["content"].(string))
		if th, ok := m["thinking"].(string); ok {
			thinking.WriteString(th)
		}
		if c, ok := m["tool_calls"].([]any); ok {
			ncalls += len(c)
		}
		if _, ok := l["eval_count"]; ok {
			t.Errorf("metrics before the end: %v", l)
		}
	}
	if content.String() != "fine" || thinking.String() != "hm" || ncalls != 1 {
		t.Errorf("streamed content %q, thinking %q, %d calls", content.String(), thinking.String(), ncalls)
	}
	last := lines[len(lines)-1]
	checkMetrics(t, last, "stop", replyTokens)
	if m := last["message"].(map[string]any); m["content"] != "" {
		t.Errorf("last line's message %v", m)
	}

	// Logprobs, num_predict and the ":latest" tag.
	status, _, b = ollamaDo(t, ts.URL, "/api/chat", `{"model":"tiny:latest","messages":[{"role":"user","content":"Hi"}],"stream":false,
		"logprobs":true,"top_logprobs":2,"options":{"num_predict":3,"temperature":0}}`)
	if status != 200 {
		t.Fatalf("logprobs: %d %s", status, b)
	}
	v = ollamaObject(t, b)
	checkMetrics(t, v, "length", 3)
	if lps, _ := v["logprobs"].([]any); len(lps) != 3 || len(lps[0].(map[string]any)["top_logprobs"].([]any)) != 2 {
		t.Errorf("logprobs %v", v["logprobs"])
	}
	if v["model"] != "tiny:latest" {
		t.Errorf("model %v, want the name as given", v["model"])
	}
}

// promptRecorder is a scheduler that keeps the text of the prompts
// submitted to it.
type promptRecorder struct {
	scheduler.Scheduler
	m       *Model
	mu      sync.Mutex
	prompts []string
}

func (p *promptRecorder) Submit(ctx context.Context, req engine.Request) (*scheduler.Stream, error) {
	p.mu.Lock()
	p.prompts = append(p.prompts, p.m.Tokenizer.Decode(req.Prompt))
	p.mu.Unlock()
	return p.Scheduler.Submit(ctx, req)
}

// last returns the last prompt submitted.
func (p *promptRecorder) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prompts[len(p.prompts)-1]
}

func recordPrompts(ts *testServer) *promptRecorder {
	p := &promptRecorder{Scheduler: ts.model.Scheduler, m: ts.model}
	ts.model.Scheduler = p
	return p
}

func TestOllamaChatThinkAndHistory(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "ok"})
	rec := recordPrompts(ts)
	for _, tc := range []struct{ think, want string }{
		{`false`, "<think>\n\n</think>"},
		{`"high"`, "<|im_start|>assistant\n"},
	} {
		body := `{"model":"tiny","stream":false,"think":` + tc.think + `,"messages":[
			{"role":"system","content":"Be brief."},
			{"role":"user","content":"Weather?"},
			{"role":"assistant","content":"","thinking":"look it up","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},
			{"role":"tool","content":"18 C","tool_name":"get_weather"}]}`
		if status, _, b := ollamaDo(t, ts.URL, "/api/chat", body); status != 200 {
			t.Fatalf("think %s: %d %s", tc.think, status, b)
		}
		p := rec.last()
		for _, want := range []string{"Be brief.", `{"name": "get_weather", "arguments": {"city": "Paris"}}`, "<tool_response>\n18 C\n</tool_response>", tc.want} {
			if !strings.Contains(p, want) {
				t.Errorf("think %s: the prompt lacks %q:\n%s", tc.think, want, p)
			}
		}
	}
}

func TestOllamaGenerate(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "<think>\nhm\n</think>\n\nOnce"})
	rec := recordPrompts(ts)
	// Templated: the prompt as a user message, the system prompt before
	// it; reasoning apart.
	status, _, b := ollamaDo(t, ts.URL, "/api/generate", `{"model":"tiny","prompt":"Tell me","system":"Be brief.","stream":false}`)
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	v := ollamaObject(t, b)
	if v["response"] != "Once" || v["thinking"] != "hm" {
		t.Errorf("response %v, thinking %v", v["response"], v["thinking"])
	}
	checkMetrics(t, v, "stop", -1)
	if p := rec.last(); p != "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nTell me<|im_end|>\n<|im_start|>assistant\n" {
		t.Errorf("templated prompt %q", p)
	}

	// Raw: the prompt as it is, the reply all text; streamed.
	status, h, b := ollamaDo(t, ts.URL, "/api/generate", `{"model":"tiny","prompt":"A <b>raw</b> prompt","raw":true,"options":{"num_predict":4}}`)
	if status != 200 || h.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("raw: %d %s", status, b)
	}
	lines := ndjsonLines(t, b)
	var text strings.Builder
	for _, l := range lines {
		text.WriteString(l["response"].(string))
	}
	want := ts.model.Tokenizer.Decode(ts.model.Tokenizer.Encode("<think>\nhm\n</think>\n\nOnce")[:4])
	if text.String() != want {
		t.Errorf("raw reply %q, want %q", text.String(), want)
	}
	checkMetrics(t, lines[len(lines)-1], "length", 4)
	if p := rec.last(); p != "A <b>raw</b> prompt" {
		t.Errorf("raw prompt %q", p)
	}
	if n := lines[len(lines)-1]["prompt_eval_count"]; n != float64(len(ts.model.Tokenizer.Encode("A <b>raw</b> prompt"))) {
		t.Errorf("prompt_eval_count %v", n)
	}
}

func TestOllamaLoadAndKeepAlive(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "ok"})
	// Without the hooks (one model): keep_alive is checked, the model
	// stays, ps says forever.
	for _, path := range []string{"/api/chat", "/api/generate"} {
		status, _, b := ollamaDo(t, ts.URL, path, `{"model":"tiny","keep_alive":0}`)
		v := ollamaObject(t, b)
		if status != 200 || v["done"] != true || v["done_reason"] != "load" {
			t.Errorf("%s with nothing to do: %d %s", path, status, b)
		}
	}
	_, _, b := ollamaDo(t, ts.URL, "/api/ps", "")
	exp := ollamaObject(t, b)["models"].([]any)[0].(map[string]any)["expires_at"].(string)
	if at, err := time.Parse(time.RFC3339Nano, exp); err != nil || at.Before(time.Now().AddDate(200, 0, 0)) {
		t.Errorf("expires_at %q: want ollama's forever, 292 years on", exp)
	}

	// keep_alive reaches the Models of a server of several models:
	// TestOllamaModels.
}

func TestOllamaErrors(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", ctx: 64, apiKey: "k"})
	auth := []string{"Authorization", "Bearer k"}
	user := `"model":"tiny","messages":[{"role":"user","content":"Hi"}]`
	tests := []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"unknown model", "/api/chat", `{"model":"llama3","messages":[]}`, 404, "model 'llama3' not found"},
		{"unknown model show", "/api/show", `{"model":"llama3"}`, 404, "model 'llama3' not found"},
		{"no model", "/api/generate", `{"prompt":"x"}`, 400, "model is required"},
		{"malformed", "/api/chat", `{"model":`, 400, "cut short"},
		{"wrong type", "/api/chat", `{"model":"tiny","messages":"hi"}`, 400, "messages: expected an array"},
		{"content type", "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":[1]}]}`, 400, "messages[0].content must be a string"},
		{"images", "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"x","images":["aGk="]}]}`, 400, "messages[0].images: images are not supported"},
		{"generate images", "/api/generate", `{"model":"tiny","prompt":"x","images":["aGk="]}`, 400, "images are not supported"},
		{"unknown option", "/api/chat", `{` + user + `,"options":{"temprature":1}}`, 400, `unknown option "temprature"`},
		{"option type", "/api/chat", `{` + user + `,"options":{"temperature":"hot"}}`, 400, "options.temperature: expected a number, got string"},
		{"options type", "/api/chat", `{` + user + `,"options":[1]}`, 400, "options must be an object"},
		{"temperature", "/api/chat", `{` + user + `,"options":{"temperature":3}}`, 400, "options.temperature 3 is outside [0, 2]"},
		{"repeat_penalty", "/api/chat", `{` + user + `,"options":{"repeat_penalty":9}}`, 400, "options.repeat_penalty 9 is outside (0, 2]"},
		{"mirostat", "/api/chat", `{` + user + `,"options":{"mirostat":2}}`, 400, "options.mirostat 2 is not supported"},
		{"typical_p", "/api/generate", `{"model":"tiny","prompt":"x","options":{"typical_p":0.5}}`, 400, "options.typical_p 0.5 is not supported"},
		{"stops", "/api/chat", `{` + user + `,"options":{"stop":["a","b","c","d","e"]}}`, 400, "options.stop has 5 strings"},
		{"keep_alive", "/api/chat", `{` + user + `,"keep_alive":"soon"}`, 400, "keep_alive must be a duration"},
		{"keep_alive type", "/api/chat", `{` + user + `,"keep_alive":{}}`, 400, "keep_alive must be a duration"},
		{"think", "/api/chat", `{` + user + `,"think":"max"}`, 400, `think must be true, false, "low", "medium" or "high"`},
		{"format", "/api/chat", `{` + user + `,"format":"xml"}`, 400, `format must be "json" or a JSON schema`},
		{"format schema", "/api/chat", `{` + user + `,"format":{"type":"object","properties":{"a":{"type":"integer","multipleOf":0}}}}`, 400, "format"},
		{"tool_choice", "/api/chat", `{` + user + `,"tool_choice":"required"}`, 400, "needs tools"},
		{"bad tool", "/api/chat", `{` + user + `,"tools":[{"type":"function"}]}`, 400, "tools[0] must be"},
		{"role", "/api/chat", `{"model":"tiny","messages":[{"role":"wizard","content":"x"}]}`, 400, `messages[0].role "wizard"`},
		{"prompt too long", "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"` + strings.Repeat("word ", 100) + `"}]}`, 400, "context is 64 tokens"},
		{"suffix", "/api/generate", `{"model":"tiny","prompt":"x","suffix":"y"}`, 400, "suffix (fill in the middle) is not supported"},
		{"template", "/api/generate", `{"model":"tiny","prompt":"x","template":"{{ .Prompt }}"}`, 400, "template is not supported"},
		{"context", "/api/generate", `{"model":"tiny","prompt":"x","context":[1,2]}`, 400, "context is not supported"},
		{"raw system", "/api/generate", `{"model":"tiny","prompt":"x","raw":true,"system":"s"}`, 400, "system is not used with raw"},
		{"raw think", "/api/generate", `{"model":"tiny","prompt":"x","raw":true,"think":true}`, 400, "think is not used with raw"},
		{"raw top_logprobs", "/api/generate", `{"model":"tiny","prompt":"x","raw":true,"top_logprobs":3}`, 400, "with logprobs: true"},
		{"embed a chat model", "/api/embed", `{"model":"tiny","input":"x"}`, 400, `"tiny" does not support embeddings`},
		{"embeddings a chat model", "/api/embeddings", `{"model":"tiny","prompt":"x"}`, 400, `"tiny" does not support embeddings`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, h, b := ollamaDo(t, ts.URL, tc.path, tc.body, auth...)
			if status != tc.status || h.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d (%s), want %d: %s", status, h.Get("Content-Type"), tc.status, b)
			}
			v := ollamaObject(t, b)
			msg, ok := v["error"].(string)
			if !ok || len(v) != 1 {
				t.Fatalf("want {\"error\": string}, got %s", b)
			}
			if !strings.Contains(msg, tc.msg) {
				t.Errorf("error %q does not contain %q", msg, tc.msg)
			}
		})
	}
	// The route's own answers come in ollama's shape too.
	for _, tc := range []struct {
		path, body string
		status     int
		header     []string
	}{
		{"/api/chat", `{` + user + `}`, 401, nil},
		{"/api/tags", "", 401, []string{"Authorization", "Bearer wrong"}},
		{"/api/chat", "", 405, auth},
	} {
		status, _, b := ollamaDo(t, ts.URL, tc.path, tc.body, tc.header...)
		if v := ollamaObject(t, b); status != tc.status || len(v) != 1 || v["error"] == nil {
			t.Errorf("%s: %d %s, want %d with {\"error\": string}", tc.path, status, b, tc.status)
		}
	}
	// A think: true on a model that does not reason.
	ts.model.Reasoning = false
	status, _, b := ollamaDo(t, ts.URL, "/api/chat", `{`+user+`,"think":true}`, auth...)
	if status != 400 || ollamaObject(t, b)["error"] != `"tiny" does not support thinking` {
		t.Errorf("think on a model that does not reason: %d %s", status, b)
	}
}

func TestOllamaModelRoutes(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", ctx: 512})
	mod := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	ts.model.Info = ModelInfo{Size: 16398080, Modified: mod, Digest: "17a2b1", Architecture: "qwen3", Parameters: 751632384,
		Quantization: "Q8_0", Metadata: map[string]any{"general.name": "tiny", "qwen3.context_length": 40960}, Memory: 1 << 30, GPUMemory: 1 << 29}
	details := map[string]any{"parent_model": "", "format": "gguf", "family": "qwen3", "families": []any{"qwen3"},
		"parameter_size": "751.63M", "quantization_level": "Q8_0"}
	sameJSON := func(what string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s: %s, want %s", what, g, w)
		}
	}

	_, _, b := ollamaDo(t, ts.URL, "/api/tags", "")
	sameJSON("tags", ollamaObject(t, b), map[string]any{"models": []any{map[string]any{
		"name": "tiny:latest", "model": "tiny:latest", "modified_at": "2026-03-04T05:06:07Z", "size": 16398080, "digest": "17a2b1", "details": details}}})

	_, _, b = ollamaDo(t, ts.URL, "/api/ps", "")
	ps := ollamaObject(t, b)["models"].([]any)[0].(map[string]any)
	delete(ps, "expires_at")
	sameJSON("ps", ps, map[string]any{"name": "tiny:latest", "model": "tiny:latest", "size": 1 << 30, "digest": "17a2b1",
		"details": details, "size_vram": 1 << 29, "context_length": 512})

	for _, body := range []string{`{"model":"tiny"}`, `{"name":"tiny-alias:latest"}`} {
		status, _, b := ollamaDo(t, ts.URL, "/api/show", body)
		if status != 200 {
			t.Fatalf("show %s: %d %s", body, status, b)
		}
		v := ollamaObject(t, b)
		sameJSON("show details", v["details"], details)
		sameJSON("show capabilities", v["capabilities"], []string{"completion", "tools", "thinking"})
		sameJSON("show model_info", v["model_info"], map[string]any{"general.architecture": "qwen3", "general.name": "tiny",
			"general.parameter_count": 751632384, "qwen3.context_length": 40960})
		if v["template"] != ts.model.Template.Source() || v["modified_at"] != "2026-03-04T05:06:07Z" || v["modelfile"] != "FROM tiny:latest\n" {
			t.Errorf("show: template, modified_at or modelfile wrong: %v %v", v["modified_at"], v["modelfile"])
		}
	}
	if ts.model.Info.Metadata["general.architecture"] != nil {
		t.Error("show wrote into the model's metadata")
	}

	_, _, b = ollamaDo(t, ts.URL, "/api/version", "")
	sameJSON("version", ollamaObject(t, b), map[string]string{"version": OllamaVersion})

	for n, want := range map[int64]string{8030261248: "8.0B", 751632384: "751.63M", 9847232: "9.85M", 12345: "12.35K", 999: "999"} {
		if got := parameterSize(n); got != want {
			t.Errorf("parameterSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOllamaEmbed(t *testing.T) {
	es := newEmbedServer(t, 2, 64)
	texts := []string{"The capital of France is Paris.", "hello"}
	post := func(path, body string) (int, map[string]any) {
		status, _, b := ollamaDo(t, es.URL, path, body)
		return status, ollamaObject(t, b)
	}
	vectors := func(v map[string]any) [][]float64 {
		var out [][]float64
		for _, e := range v["embeddings"].([]any) {
			var vec []float64
			for _, x := range e.([]any) {
				vec = append(vec, x.(float64))
			}
			out = append(out, vec)
		}
		return out
	}
	status, v := post("/api/embed", `{"model":"tiny-embed","input":["The capital of France is Paris.","hello"]}`)
	if status != 200 || v["model"] != "tiny-embed" {
		t.Fatalf("%d %v", status, v)
	}
	tokens := 0
	got := vectors(v)
	if len(got) != 2 {
		t.Fatalf("%d embeddings", len(got))
	}
	for i, text := range texts {
		ids := es.model.EmbedTokens(text)
		tokens += len(ids)
		sameVector(t, text, got[i], alone(t, ids))
	}
	if v["prompt_eval_count"] != float64(tokens) || v["load_duration"] != 0.0 || !(v["total_duration"].(float64) > 0) {
		t.Errorf("counts: %v %v %v", v["prompt_eval_count"], v["load_duration"], v["total_duration"])
	}

	// One string, dimensions; the legacy route.
	_, v = post("/api/embed", `{"model":"tiny-embed","input":"hello","dimensions":16}`)
	full := alone(t, es.model.EmbedTokens("hello"))
	var norm float64
	for _, x := range full[:16] {
		norm += float64(x) * float64(x)
	}
	want := make([]float32, 16)
	for i, x := range full[:16] {
		want[i] = float32(float64(x) / math.Sqrt(norm))
	}
	if got := vectors(v); len(got) != 1 || len(got[0]) != 16 {
		t.Fatalf("dimensions 16: %v", v)
	} else {
		for i := range want {
			if math.Abs(got[0][i]-float64(want[i])) > 1e-6 {
				t.Fatalf("dimensions 16: value %d is %v, want %v", i, got[0][i], want[i])
			}
		}
	}
	_, v = post("/api/embeddings", `{"model":"tiny-embed","prompt":"hello"}`)
	var legacy []float64
	for _, x := range v["embedding"].([]any) {
		legacy = append(legacy, x.(float64))
	}
	sameVector(t, "/api/embeddings", legacy, full)

	// Nothing to embed: ollama's way to load the model.
	for _, body := range []string{`{"model":"tiny-embed"}`, `{"model":"tiny-embed","input":""}`, `{"model":"tiny-embed","input":[]}`} {
		if status, v := post("/api/embed", body); status != 200 || len(v["embeddings"].([]any)) != 0 {
			t.Errorf("%s: %d %v", body, status, v)
		}
	}
	if status, v := post("/api/embeddings", `{"model":"tiny-embed","prompt":""}`); status != 200 || len(v["embedding"].([]any)) != 0 {
		t.Errorf("empty prompt: %d %v", status, v)
	}

	// Longer than the context (64): cut to it by default, its end kept,
	// refused with truncate: false.
	long := strings.Repeat("word ", 100)
	ids := es.model.EmbedTokens(long)
	cut := append(append([]int32{}, ids[:63]...), ids[len(ids)-1])
	status, v = post("/api/embed", `{"model":"tiny-embed","input":"`+long+`"}`)
	if status != 200 || v["prompt_eval_count"] != 64.0 {
		t.Fatalf("truncated: %d %v", status, v["prompt_eval_count"])
	}
	sameVector(t, "truncated", vectors(v)[0], alone(t, cut))
	status, v = post("/api/embed", `{"model":"tiny-embed","input":"`+long+`","truncate":false}`)
	if msg, _ := v["error"].(string); status != 400 || !strings.Contains(msg, "context") {
		t.Errorf("truncate false: %d %v", status, v)
	}

	for body, msg := range map[string]string{
		`{"model":"tiny-embed","input":["a",""]}`:           "input[1] is an empty string",
		`{"model":"tiny-embed","input":[1,2]}`:              "input must be a string or an array of strings",
		`{"model":"tiny-embed","input":"a","dimensions":0}`: "dimensions 0 is outside",
	} {
		status, v := post("/api/embed", body)
		if e, _ := v["error"].(string); status != 400 || !strings.Contains(e, msg) {
			t.Errorf("%s: %d %v, want %q", body, status, v, msg)
		}
	}
	for _, path := range []string{"/api/chat", "/api/generate"} {
		status, v := post(path, `{"model":"tiny-embed","prompt":"x","messages":[{"role":"user","content":"x"}]}`)
		if e, _ := v["error"].(string); status != 400 || !strings.HasPrefix(e, `"tiny-embed" does not support`) {
			t.Errorf("%s on an embedding model: %d %v", path, status, v)
		}
	}
	_, v = post("/api/show", `{"model":"tiny-embed"}`)
	if caps, _ := json.Marshal(v["capabilities"]); string(caps) != `["embedding"]` {
		t.Errorf("capabilities %s", caps)
	}
}

func TestParseKeepAlive(t *testing.T) {
	for raw, want := range map[string]time.Duration{
		`"5m"`: 5 * time.Minute, `"0"`: 0, `0`: 0, `"0s"`: 0, `60`: time.Minute, `" 1h "`: time.Hour, `-1`: forever, `"-1"`: forever,
		`"-5m"`: forever, `1e300`: forever, `0.001`: time.Millisecond,
	} {
		d, ok, e := parseKeepAlive(json.RawMessage(raw))
		if e != nil || !ok || d != want {
			t.Errorf("%s: %v %v %v, want %v", raw, d, ok, e, want)
		}
	}
	for _, raw := range []string{``, `null`} {
		if _, ok, e := parseKeepAlive(json.RawMessage(raw)); ok || e != nil {
			t.Errorf("%q: given %v, error %v", raw, ok, e)
		}
	}
	for _, raw := range []string{`"soon"`, `true`, `[]`, `{}`, `"5 minutes"`, `"NaN"`} {
		if _, _, e := parseKeepAlive(json.RawMessage(raw)); e == nil || e.Status != 400 {
			t.Errorf("%s: error %v, want a 400", raw, e)
		}
	}
}

var ollamaFuzzPaths = []string{"/api/chat", "/api/generate", "/api/embed", "/api/embeddings", "/api/show"}

// FuzzOllamaRequest sends arbitrary bodies to ollama's POST routes:
// whatever arrives, the answer is a success (a JSON object, or NDJSON
// lines of them) or a client error in ollama's shape, never a 500 or a
// panic.
//
//	go test ./server -run '^$' -fuzz FuzzOllamaRequest -fuzztime 20s
func FuzzOllamaRequest(f *testing.F) {
	seeds := []string{
		`{"model":"tiny","messages":[{"role":"user","content":"Hi"}],"options":{"num_predict":3}}`,
		`{"model":"tiny","messages":[{"role":"user","content":"Hi"}],"stream":false,"think":"low","format":"json","keep_alive":"5m","options":{"num_predict":2,"stop":["x"],"seed":-1,"top_k":-1}}`,
		`{"model":"tiny:latest","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},{"role":"tool","content":"2","tool_name":"f"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","name":"f"},"options":{"num_predict":2}}`,
		`{"model":"tiny","prompt":"The quick","raw":true,"logprobs":true,"top_logprobs":2,"options":{"num_predict":2}}`,
		`{"model":"tiny","prompt":"Hi","system":"s","format":{"type":"object","properties":{"a":{"type":"integer"}}},"stream":false,"options":{"num_predict":4}}`,
		`{"model":"tiny","input":["a","b"],"truncate":false,"dimensions":8}`,
		`{"model":"tiny","prompt":"x","keep_alive":-1}`,
		`{"name":"tiny","verbose":true}`,
		`{"model":"tiny","messages":[],"keep_alive":0}`,
		`{"model":"tiny","messages":[{"role":"user","content":"x","images":[]}],"options":{"num_ctx":1000000,"num_gpu":99}}`,
		`{"model":`, `[]`, `null`, `{"options":{"temperature":9}}`, "\x00\xff",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	ts := newTestServer(f, serverOpts{reply: "<think>\nok\n</think>\n\nfine <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", ctx: 256, maxBody: 1 << 16})
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := ollamaFuzzPaths[int(which)%len(ollamaFuzzPaths)]
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		ts.srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			switch ct := rec.Header().Get("Content-Type"); ct {
			case "application/json":
				ollamaObject(t, rec.Body.Bytes())
			case "application/x-ndjson":
				for line := range strings.SplitSeq(strings.TrimSuffix(rec.Body.String(), "\n"), "\n") {
					ollamaObject(t, []byte(line))
				}
			default:
				t.Fatalf("%s: 200 with Content-Type %q", path, ct)
			}
		case 400, 404, 413, 503:
			var e map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || len(e) != 1 {
				t.Fatalf("%s: status %d with body %q", path, rec.Code, rec.Body.Bytes())
			}
			if msg, ok := e["error"].(string); !ok || msg == "" {
				t.Fatalf("%s: status %d with body %q", path, rec.Code, rec.Body.Bytes())
			}
		default:
			t.Fatalf("%s: status %d for %q: %s", path, rec.Code, body, rec.Body.Bytes())
		}
	})
}

// TestOllamaStreamError: a generation that fails mid-stream (here the
// scheduler closes) ends the stream with an {"error": ...} line.
func TestOllamaStreamError(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: strings.Repeat("word ", 200), delay: 5 * time.Millisecond})
	resp, err := http.Post(ts.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"tiny","messages":[{"role":"user","content":"Hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || ollamaObject(t, sc.Bytes())["done"] != false {
		t.Fatalf("first line %q", sc.Text())
	}
	ts.sched.Close()
	var last string
	for sc.Scan() {
		last = sc.Text()
	}
	if v := ollamaObject(t, []byte(last)); len(v) != 1 || !strings.Contains(fmt.Sprint(v["error"]), "shutting down") {
		t.Errorf("last line %s, want the error", last)
	}
}
