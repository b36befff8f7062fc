package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The delays of the test streams: before the first text, and between
// texts.
const (
	firstDelay = 30 * time.Millisecond
	textDelay  = 20 * time.Millisecond
)

// pause in a script: the server flushes what it wrote and waits textDelay
// (firstDelay, the first time).
const pause = "<pause>"

// scripts are, by API, a stream of three events that carry text, others
// that carry none (a role, an empty text, a ping), 11 prompt tokens and 7
// generated ones: more tokens than text events, as a tokenizer's partial
// characters make them.
var scripts = map[string][]string{
	"completions": {
		pause,
		`data: {"choices":[{"index":0,"text":"Hel"}]}` + "\n\n", pause,
		`data: {"choices":[{"index":0,"text":""}]}` + "\n\n",
		`data: {"choices":[{"index":0,"text":"lo"}]}` + "\n\n", pause,
		`data: {"choices":[{"index":0,"text":"!","finish_reason":"length"}]}` + "\n\n",
		`data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}` + "\n\n",
		"data: [DONE]\n\n",
	},
	"chat": {
		`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n", pause,
		`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n", pause,
		`data: {"choices":[{"index":0,"delta":{"reasoning_content":"lo"}}]}` + "\n\n", pause,
		`data: {"choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"length"}]}` + "\n\n",
		`data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}` + "\n\n",
		"data: [DONE]\n\n",
	},
	"responses": {
		"event: response.created\n" + `data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","usage":null}}` + "\n\n",
		"event: response.output_item.added\n" + `data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","content":[]}}` + "\n\n",
		pause,
		"event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel"}` + "\n\n",
		pause,
		"event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"lo"}` + "\n\n",
		pause,
		"event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"!"}` + "\n\n",
		"event: response.output_text.done\n" + `data: {"type":"response.output_text.done","sequence_number":5,"text":"Hello!"}` + "\n\n",
		"event: response.incomplete\n" + `data: {"type":"response.incomplete","sequence_number":6,"response":{"status":"incomplete","usage":{"input_tokens":11,"output_tokens":7,"total_tokens":18}}}` + "\n\n",
	},
	"messages": {
		"event: message_start\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":11,"output_tokens":1}}}` + "\n\n",
		"event: ping\n" + `data: {"type":"ping"}` + "\n\n",
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
		pause,
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}` + "\n\n",
		pause,
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}` + "\n\n",
		pause,
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"!"}}` + "\n\n",
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n",
		"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":11,"output_tokens":7}}` + "\n\n",
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n",
	},
	"ollama": {
		pause,
		`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"Hel"},"done":false}` + "\n", pause,
		`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":false}` + "\n",
		`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"lo"},"done":false}` + "\n", pause,
		`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"!"},"done":false}` + "\n",
		`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":11,"eval_count":7}` + "\n",
	},
}

// testOptions are the options of a test run against url.
func testOptions(api, url string) options {
	return options{url: url, api: api, model: "m", apiKey: "k", clients: 1, requests: 1, prompt: 8, maxTokens: 5,
		vocab: 1000, inputs: 1, temperature: 0.5, topP: 0.9, topK: 20, seed: -1, ignoreEOS: true, client: http.DefaultClient}
}

// field returns the value at path (keys separated by dots) in body.
func field(body map[string]any, path string) any {
	var v any = body
	for k := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// want are, by API, the fields a request must carry and the values they
// must have, and the fields it must not carry (nil).
var want = map[string]map[string]any{
	"completions": {"max_tokens": 5.0, "stream": true, "stream_options.include_usage": true, "ignore_eos": true,
		"temperature": 0.5, "top_p": 0.9, "top_k": 20.0, "model": "m"},
	"chat": {"max_tokens": 5.0, "stream": true, "stream_options.include_usage": true, "ignore_eos": true,
		"chat_template_kwargs.enable_thinking": false, "temperature": 0.5, "top_p": 0.9, "top_k": 20.0, "model": "m"},
	"responses": {"max_output_tokens": 5.0, "stream": true, "reasoning.effort": "none", "ignore_eos": nil, "max_tokens": nil,
		"temperature": 0.5, "top_p": 0.9, "top_k": 20.0, "model": "m"},
	"messages": {"max_tokens": 5.0, "stream": true, "thinking.type": "disabled", "ignore_eos": nil,
		"temperature": 0.5, "top_p": 0.9, "top_k": 20.0, "model": "m"},
	"ollama": {"options.num_predict": 5.0, "stream": true, "think": false, "ignore_eos": nil, "max_tokens": nil,
		"options.temperature": 0.5, "options.top_p": 0.9, "options.top_k": 20.0, "model": "m"},
}

// scriptServer serves script as the stream of API a, after checking the
// request's path, headers and fields; it records the requests' bodies.
type scriptServer struct {
	t      *testing.T
	a      *api
	script []string
	mu     sync.Mutex
	bodies []map[string]any
}

func (s *scriptServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := s.t
	if r.Method != http.MethodPost || r.URL.Path != s.a.path {
		t.Errorf("%s: %s %s, want POST %s", s.a.name, r.Method, r.URL.Path, s.a.path)
		http.NotFound(w, r)
		return
	}
	if s.a.name == "messages" {
		if r.Header.Get("x-api-key") != "k" || r.Header.Get("anthropic-version") == "" {
			t.Errorf("messages: headers %v: want x-api-key k and anthropic-version", r.Header)
		}
	} else if got := r.Header.Get("Authorization"); got != "Bearer k" {
		t.Errorf("%s: Authorization %q, want Bearer k", s.a.name, got)
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		t.Errorf("%s: the body is not JSON: %v", s.a.name, err)
	}
	for path, v := range want[s.a.name] {
		if got := field(body, path); got != v {
			t.Errorf("%s: %s = %v, want %v", s.a.name, path, got, v)
		}
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
	delay := firstDelay
	for _, ev := range s.script {
		if ev == pause {
			w.(http.Flusher).Flush()
			time.Sleep(delay)
			delay = textDelay
			continue
		}
		if _, err := w.Write([]byte(ev)); err != nil {
			return
		}
	}
}

// TestAPIs runs a request of each API against a server that streams its
// script, and checks the counts and latencies measured.
func TestAPIs(t *testing.T) {
	prompts := map[string]string{}
	for _, name := range apiNames {
		t.Run(name, func(t *testing.T) {
			s := &scriptServer{t: t, a: apis[name], script: scripts[name]}
			srv := httptest.NewServer(s)
			defer srv.Close()
			o := testOptions(name, srv.URL)
			rng := rand.New(rand.NewPCG(3, 1))
			r := request(context.Background(), o, rng)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.tokens != 7 || r.prompt != 11 || !r.texted {
				t.Errorf("%d tokens, %d prompt tokens, texted %t: want 7, 11, true", r.tokens, r.prompt, r.texted)
			}
			if len(r.gaps) != 2 {
				t.Fatalf("%d gaps, want 2 (between 3 text events)", len(r.gaps))
			}
			if r.ttft < firstDelay {
				t.Errorf("time to first token %v, want at least %v", r.ttft, firstDelay)
			}
			if total := r.ttft + r.gaps[0] + r.gaps[1]; total < firstDelay+2*textDelay {
				t.Errorf("the last text came %v after the request, want at least %v", total, firstDelay+2*textDelay)
			}
			if r.tpot <= 0 {
				t.Errorf("time per output token %v, want more than 0", r.tpot)
			}
			if name != "completions" {
				prompts[name] = promptOf(s.bodies[0])
			}
		})
	}
	// The chat-shaped APIs send the same prompt for the same client and
	// prompt seed.
	for name, p := range prompts {
		if p == "" || p != prompts["chat"] {
			t.Errorf("%s's prompt %q, chat's %q: want the same", name, p, prompts["chat"])
		}
	}
}

// promptOf returns the prompt text of a chat-shaped request's body.
func promptOf(body map[string]any) string {
	if in, ok := body["input"].(string); ok {
		return in
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 1 {
		return ""
	}
	m, _ := msgs[0].(map[string]any)
	if m["role"] != "user" {
		return ""
	}
	text, _ := m["content"].(string)
	return text
}

// TestStreamErrors checks that a stream's error, a stream cut short, one
// without usage and a refused request are each a failed request with the
// server's words.
func TestStreamErrors(t *testing.T) {
	cases := []struct {
		api, name string
		status    int
		body      string
		want      string
	}{
		{"chat", "error chunk", 200, `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n" + `data: {"error":{"message":"out of memory","type":"server_error"}}` + "\n\n", "out of memory"},
		{"chat", "no [DONE]", 200, `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n", "ended before"},
		{"completions", "no usage", 200, `data: {"choices":[{"index":0,"text":"a"}]}` + "\n\ndata: [DONE]\n\n", "no usage"},
		{"completions", "status", 400, `{"error":{"message":"max_tokens is too large"}}`, "max_tokens is too large"},
		{"responses", "failed", 200, "event: response.failed\n" + `data: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"the model failed"}}}` + "\n\n", "the model failed"},
		{"responses", "error event", 200, "event: error\n" + `data: {"type":"error","code":"x","message":"bad things"}` + "\n\n", "bad things"},
		{"responses", "completed without usage", 200, "event: response.completed\n" + `data: {"type":"response.completed","response":{"status":"completed"}}` + "\n\n", "without the response's usage"},
		{"messages", "error event", 200, "event: error\n" + `data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n", "overloaded_error: Overloaded"},
		{"messages", "no message_stop", 200, "event: message_delta\n" + `data: {"type":"message_delta","delta":{},"usage":{"output_tokens":3}}` + "\n\n", "ended before"},
		{"messages", "unauthorized", 401, `{"type":"error","error":{"type":"authentication_error","message":"missing or wrong API key"}}`, "401"},
		{"ollama", "error line", 200, `{"message":{"role":"assistant","content":"a"},"done":false}` + "\n" + `{"error":"the model failed"}` + "\n", "the model failed"},
		{"ollama", "not JSON", 200, "{oops\n", "not JSON"},
		{"ollama", "a line after done", 200, `{"message":{"content":""},"done":true,"eval_count":1}` + "\n" + `{"message":{"content":"a"},"done":false}` + "\n", "after the stream's last"},
	}
	for _, c := range cases {
		t.Run(c.api+"/"+c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			r := request(context.Background(), testOptions(c.api, srv.URL), rand.New(rand.NewPCG(1, 1)))
			if r.err == nil || !strings.Contains(r.err.Error(), c.want) {
				t.Errorf("error %v, want one with %q", r.err, c.want)
			}
		})
	}
}

// TestEvents checks the framing of server-sent events: names, data of
// several lines, comments, CRLF line ends and a last event without its
// blank line.
func TestEvents(t *testing.T) {
	in := ": keep-alive\r\n\r\nevent: a\r\ndata: 1\r\ndata:2\r\n\r\ndata: {\"x\": 3}\n\nevent: b\ndata: last"
	var got []string
	err := events(strings.NewReader(in), false, func(event string, data []byte) error {
		got = append(got, event+"="+string(data))
		return nil
	})
	want := []string{"a=1\n2", `={"x": 3}`, "b=last"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, %v: want %q", got, err, want)
	}
}

// TestPrompt checks that a prompt is its number of words, each one token
// of Qwen3's vocabulary with its leading space, and that prompts follow
// the client and the seed.
func TestPrompt(t *testing.T) {
	b, err := os.ReadFile("../../testdata/qwen3-tokenizer/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &tok); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, w := range words {
		if _, ok := tok.Model.Vocab["\u0120"+w]; !ok { // Ġ, the byte-level space
			t.Errorf("%q is not one token of Qwen3's vocabulary", " "+w)
		}
		if seen[w] {
			t.Errorf("%q is listed twice", w)
		}
		seen[w] = true
	}
	p := func(client, seed uint64) string { return textPrompt(rand.New(rand.NewPCG(client, seed)), 64) }
	if n := len(strings.Fields(p(0, 1))); n != 64 {
		t.Errorf("a prompt of %d words, want 64", n)
	}
	if p(0, 1) != p(0, 1) || p(0, 1) == p(1, 1) || p(0, 1) == p(0, 2) {
		t.Error("prompts do not follow the client and the seed")
	}
}

// TestCheck checks that options an API cannot carry are refused.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(*options)
		ok   bool
	}{
		{func(o *options) {}, true},
		{func(o *options) { o.api = "gemini" }, false},
		{func(o *options) { o.api, o.temperature = "messages", 1.5 }, false},
		{func(o *options) { o.api, o.minP = "messages", 0.1 }, false},
		{func(o *options) { o.api, o.seed = "messages", 1 }, false},
		{func(o *options) { o.api, o.temperature, o.seed = "ollama", 1.5, 1 }, true},
		{func(o *options) { o.api, o.embeddings = "chat", true }, false},
		{func(o *options) { o.maxTokens = 0 }, false},
	} {
		o := testOptions("completions", "")
		c.edit(&o)
		if err := o.check(); (err == nil) != c.ok {
			t.Errorf("%+v: check %v, want ok %t", o, err, c.ok)
		}
	}
}

// FuzzDecode feeds arbitrary streams to every API's reader: each ends
// with a result or an error, never a panic.
func FuzzDecode(f *testing.F) {
	for _, name := range apiNames {
		f.Add(name, strings.Join(scripts[name], ""))
	}
	f.Fuzz(func(t *testing.T, name, stream string) {
		a, ok := apis[name]
		if !ok {
			return
		}
		r := measure(a, strings.NewReader(strings.ReplaceAll(stream, pause, "")), time.Now())
		if r.err == nil && (r.tokens < 0 || (len(r.gaps) > 0 && !r.texted)) {
			t.Errorf("result %+v", r)
		}
	})
}
