package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// anthropicEvent is one event of an Anthropic stream.
type anthropicEvent struct {
	name string
	data map[string]any
}

// postMessages posts body to path with the headers Anthropic's clients
// send and returns the response (the caller closes its body).
func postMessages(t *testing.T, ts *testServer, path, body string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// message posts a messages request and decodes its JSON answer.
func message(t *testing.T, ts *testServer, body string, header ...string) (int, map[string]any) {
	t.Helper()
	resp := postMessages(t, ts, "/v1/messages", body, header...)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("status %d, body is not a JSON object: %q", resp.StatusCode, b)
	}
	return resp.StatusCode, v
}

// streamEvents posts a streamed messages request and reads its events,
// checking that each is an "event:" line, a "data:" line whose type is
// the event's name, and a blank line.
func streamEvents(t *testing.T, ts *testServer, body string) []anthropicEvent {
	t.Helper()
	resp := postMessages(t, ts, "/v1/messages", body)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var events []anthropicEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), "event: ")
		if !ok {
			t.Fatalf("line %q is not an event line", sc.Text())
		}
		if !sc.Scan() {
			t.Fatalf("event %s has no data", name)
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			t.Fatalf("event %s: line %q is not a data line", name, sc.Text())
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatalf("event %s: %v", name, err)
		}
		if v["type"] != name {
			t.Errorf("event %s carries type %v", name, v["type"])
		}
		if sc.Scan() && sc.Text() != "" {
			t.Fatalf("event %s: %q after the data line", name, sc.Text())
		}
		events = append(events, anthropicEvent{name, v})
	}
	return events
}

// accumulate builds the message a stream carries, as Anthropic's SDKs
// do, checking the events' order and block indexes on the way; it
// returns the message and the sequence of event names and delta types.
func accumulate(t *testing.T, events []anthropicEvent) (map[string]any, []string) {
	t.Helper()
	var msg map[string]any
	var content []map[string]any
	var seq []string
	open := -1
	for i, ev := range events {
		seq = append(seq, ev.name)
		switch ev.name {
		case "message_start":
			if i != 0 {
				t.Fatalf("message_start at %d", i)
			}
			msg = ev.data["message"].(map[string]any)
		case "content_block_start":
			if open >= 0 {
				t.Fatalf("block %d opened while %d is open", len(content), open)
			}
			if idx := int(ev.data["index"].(float64)); idx != len(content) {
				t.Fatalf("block index %d, want %d", idx, len(content))
			}
			open = len(content)
			content = append(content, ev.data["content_block"].(map[string]any))
			seq[len(seq)-1] += ":" + content[open]["type"].(string)
		case "content_block_delta":
			if idx := int(ev.data["index"].(float64)); idx != open {
				t.Fatalf("delta for block %d, open %d", idx, open)
			}
			d, b := ev.data["delta"].(map[string]any), content[open]
			seq[len(seq)-1] = d["type"].(string)
			switch d["type"] {
			case "text_delta":
				b["text"] = b["text"].(string) + d["text"].(string)
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + d["thinking"].(string)
			case "signature_delta":
				b["signature"] = d["signature"]
			case "input_json_delta":
				s, _ := b["partial"].(string)
				b["partial"] = s + d["partial_json"].(string)
			default:
				t.Fatalf("delta type %v", d["type"])
			}
		case "content_block_stop":
			if idx := int(ev.data["index"].(float64)); idx != open {
				t.Fatalf("stop of block %d, open %d", idx, open)
			}
			if b := content[open]; b["type"] == "tool_use" {
				var in any
				if err := json.Unmarshal([]byte(b["partial"].(string)), &in); err != nil {
					t.Fatalf("tool_use input: %v", err)
				}
				b["input"] = in
				delete(b, "partial")
			}
			open = -1
		case "message_delta":
			d := ev.data["delta"].(map[string]any)
			msg["stop_reason"], msg["stop_sequence"] = d["stop_reason"], d["stop_sequence"]
			msg["usage"] = ev.data["usage"]
		case "message_stop", "ping":
		default:
			t.Fatalf("event %q", ev.name)
		}
	}
	if open >= 0 {
		t.Fatalf("block %d never closed", open)
	}
	if msg == nil {
		t.Fatal("no message_start")
	}
	msg["content"] = toAny(content)
	return msg, seq
}

func toAny(content []map[string]any) []any {
	out := make([]any, len(content))
	for i, c := range content {
		out[i] = c
	}
	return out
}

const thinkReply = "<think>\nLet me see.\n</think>\n\nHello there, friend."

// TestMessagesShape checks a reply with reasoning, answered whole and
// streamed: its fields, its blocks, and the stream's events in order.
func TestMessagesShape(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: thinkReply})
	body := `{"model": "tiny", "max_tokens": 100, "system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}], "metadata": {"user_id": "u1"}}`
	status, v := message(t, ts, body)
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	if id, _ := v["id"].(string); !strings.HasPrefix(id, "msg_") || v["type"] != "message" || v["role"] != "assistant" || v["model"] != "tiny" {
		t.Errorf("header fields: %v", v)
	}
	if v["stop_reason"] != "end_turn" || v["stop_sequence"] != nil {
		t.Errorf("stop_reason %v, stop_sequence %v", v["stop_reason"], v["stop_sequence"])
	}
	content := v["content"].([]any)
	if len(content) != 2 {
		t.Fatalf("content %v", content)
	}
	th, tx := content[0].(map[string]any), content[1].(map[string]any)
	if th["type"] != "thinking" || strings.TrimSpace(th["thinking"].(string)) != "Let me see." || th["signature"] == "" {
		t.Errorf("thinking block %v", th)
	}
	if tx["type"] != "text" || tx["text"] != "Hello there, friend." {
		t.Errorf("text block %v", tx)
	}
	u := v["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} {
		if _, ok := u[k].(float64); !ok {
			t.Errorf("usage lacks %s: %v", k, u)
		}
	}
	if u["output_tokens"].(float64) < 5 || u["input_tokens"].(float64)+u["cache_read_input_tokens"].(float64) < 5 {
		t.Errorf("usage %v", u)
	}

	events := streamEvents(t, ts, strings.Replace(body, `"max_tokens"`, `"stream": true, "max_tokens"`, 1))
	start := events[0].data["message"].(map[string]any)
	if start["id"] == "" || start["stop_reason"] != nil || len(start["content"].([]any)) != 0 {
		t.Errorf("message_start %v", start)
	}
	msg, seq := accumulate(t, events)
	// The stream's events, one delta of each kind kept.
	var kinds []string
	for _, s := range seq {
		if len(kinds) == 0 || kinds[len(kinds)-1] != s {
			kinds = append(kinds, s)
		}
	}
	want := []string{"message_start", "ping", "content_block_start:thinking", "thinking_delta", "signature_delta", "content_block_stop",
		"content_block_start:text", "text_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("events %v,\nwant %v", kinds, want)
	}
	if !reflect.DeepEqual(msg["content"], v["content"]) || msg["stop_reason"] != "end_turn" {
		t.Errorf("streamed %v,\nwhole %v", msg, v)
	}
	if mu := msg["usage"].(map[string]any); mu["output_tokens"] != u["output_tokens"] {
		t.Errorf("streamed usage %v, whole %v", mu, u)
	}
}

// TestMessagesToolUse checks tool_use blocks, whole and streamed, and a
// forced tool choice.
func TestMessagesToolUse(t *testing.T) {
	reply := "Checking. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	ts := newTestServer(t, serverOpts{reply: reply})
	tools := `"tools": [{"name": "get_weather", "description": "the weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]`
	body := `{"max_tokens": 100, "thinking": {"type": "disabled"}, ` + tools + `, "messages": [{"role": "user", "content": "Weather in Paris?"}]}`
	check := func(what string, v map[string]any) {
		t.Helper()
		if v["stop_reason"] != "tool_use" {
			t.Errorf("%s: stop_reason %v", what, v["stop_reason"])
		}
		content := v["content"].([]any)
		if len(content) != 2 {
			t.Fatalf("%s: content %v", what, content)
		}
		if tx := content[0].(map[string]any); tx["type"] != "text" || strings.TrimSpace(tx["text"].(string)) != "Checking." {
			t.Errorf("%s: text block %v", what, tx)
		}
		tu := content[1].(map[string]any)
		if id, _ := tu["id"].(string); tu["type"] != "tool_use" || !strings.HasPrefix(id, "toolu_") || tu["name"] != "get_weather" ||
			!reflect.DeepEqual(tu["input"], map[string]any{"city": "Paris"}) {
			t.Errorf("%s: tool_use block %v", what, tu)
		}
	}
	status, v := message(t, ts, body)
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	check("whole", v)
	msg, _ := accumulate(t, streamEvents(t, ts, strings.Replace(body, `{"max_tokens"`, `{"stream": true, "max_tokens"`, 1)))
	check("streamed", msg)

	// A tool forced by name, the reply a call alone.
	ts2 := newTestServer(t, serverOpts{reply: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"})
	status, v = message(t, ts2, strings.Replace(body, `"thinking"`, `"tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true}, "thinking"`, 1))
	if status != 200 {
		t.Fatalf("forced: status %d: %v", status, v)
	}
	if c := v["content"].([]any); v["stop_reason"] != "tool_use" || len(c) != 1 || c[0].(map[string]any)["name"] != "get_weather" {
		t.Errorf("forced: %v", v)
	}
}

// TestMessagesStop checks stop_sequence, max_tokens and the context's
// end as stop reasons.
func TestMessagesStop(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hello world, this is the end.", ctx: 256})
	user := `"messages": [{"role": "user", "content": "Hi"}]`
	for _, tc := range []struct {
		extra, reason, seq, text string
	}{
		{`"max_tokens": 50, "stop_sequences": ["zzz", "world"]`, "stop_sequence", "world", "Hello "},
		{`"max_tokens": 50`, "end_turn", "", "Hello world, this is the end."},
		{`"max_tokens": 2`, "max_tokens", "", "Hello world"},
	} {
		for _, stream := range []bool{false, true} {
			body := `{` + tc.extra + `, ` + user + `}`
			var v map[string]any
			if stream {
				v, _ = accumulate(t, streamEvents(t, ts, `{"stream": true, `+body[1:]))
			} else {
				var status int
				if status, v = message(t, ts, body); status != 200 {
					t.Fatalf("%s: status %d: %v", tc.extra, status, v)
				}
			}
			seq, _ := v["stop_sequence"].(string)
			if v["stop_reason"] != tc.reason || seq != tc.seq {
				t.Errorf("%s (stream %v): stop_reason %v, stop_sequence %v; want %s, %q", tc.extra, stream, v["stop_reason"], v["stop_sequence"], tc.reason, tc.seq)
			}
			if tc.text != "" {
				if c := v["content"].([]any); len(c) != 1 || c[0].(map[string]any)["text"] != tc.text {
					t.Errorf("%s (stream %v): content %v, want %q", tc.extra, stream, c, tc.text)
				}
			}
		}
	}
	// A reply that fills the context before max_tokens.
	long := newTestServer(t, serverOpts{reply: strings.Repeat("word ", 100), ctx: 64})
	status, v := message(t, long, `{"max_tokens": 1000, `+user+`}`)
	if status != 200 || v["stop_reason"] != "model_context_window_exceeded" {
		t.Errorf("context filled: status %d, %v", status, v)
	}
}

// TestMessagesStreamError checks that a generation failing mid-stream
// (the scheduler closed under it) ends the stream with an error event in
// Anthropic's shape, and no message_stop.
func TestMessagesStreamError(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: strings.Repeat("a ", 2000), parallel: 1, delay: 2 * time.Millisecond})
	resp := postMessages(t, ts, "/v1/messages", `{"stream": true, "max_tokens": 2000, "messages": [{"role": "user", "content": "Hi"}]}`)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var last, lastData string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "event: "); ok {
			last = name
			if name == "content_block_delta" {
				ts.sched.Close()
			}
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			lastData = data
		}
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(lastData), &v); err != nil {
		t.Fatalf("last data %q: %v", lastData, err)
	}
	if typ, _ := anthropicErrorOf(t, v); last != "error" || typ != "overloaded_error" {
		t.Errorf("stream ended with event %s: %v", last, v)
	}
}

// TestMessagesOutputFormat checks that output_config.format constrains
// the reply to its schema.
func TestMessagesOutputFormat(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: `{"city": "Paris"}`})
	body := `{"max_tokens": 50, "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Where?"}],
		"output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}}}}`
	status, v := message(t, ts, body)
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	if c := v["content"].([]any); len(c) != 1 || c[0].(map[string]any)["text"] != `{"city": "Paris"}` || v["stop_reason"] != "end_turn" {
		t.Errorf("reply %v", v)
	}
	// The script's reply is not allowed by this schema: the constraint
	// steers it to one that is.
	status, v = message(t, ts, strings.Replace(body, `"city": {"type": "string"}`, `"city": {"type": "integer"}`, 1))
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	var got struct {
		City *int64 `json:"city"`
	}
	text, _ := v["content"].([]any)[0].(map[string]any)["text"].(string)
	if err := json.Unmarshal([]byte(text), &got); err != nil || got.City == nil {
		t.Errorf("reply %q does not follow the schema: %v", text, err)
	}
}

// renderMessages renders a messages body's prompt as the server would.
func renderMessages(t *testing.T, m *Model, body string) string {
	t.Helper()
	var r messagesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	req, e := r.chatRequest(false)
	if e != nil {
		t.Fatal(e)
	}
	prompt, e := renderChat(m, req)
	if e != nil {
		t.Fatal(e)
	}
	return prompt
}

// renderOpenAI renders a chat completions body's prompt.
func renderOpenAI(t *testing.T, m *Model, body string) string {
	t.Helper()
	var req chatRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	prompt, e := renderChat(m, &req)
	if e != nil {
		t.Fatal(e)
	}
	return prompt
}

// TestMessagesRendering checks that a conversation with system blocks,
// reasoning, tool_use and tool_result blocks renders the prompt its
// OpenAI equivalent renders, and that a last assistant message is
// continued.
func TestMessagesRendering(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "x"})
	m := ts.model
	got := renderMessages(t, m, `{"max_tokens": 10,
		"system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind.", "cache_control": {"type": "ephemeral"}}],
		"tools": [{"name": "get_weather", "description": "the weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
		"thinking": {"type": "disabled"},
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "Weather in Paris"}, {"type": "text", "text": "and Oslo?"}]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "Two calls.", "signature": "abc"},
				{"type": "redacted_thinking", "data": "opaque"},
				{"type": "text", "text": "Let me check."},
				{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
				{"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Oslo"}}]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
				{"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "no such city"}], "is_error": true},
				{"type": "text", "text": "Thanks."}]}]}`)
	want := renderOpenAI(t, m, `{
		"tools": [{"type": "function", "function": {"name": "get_weather", "description": "the weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
		"chat_template_kwargs": {"enable_thinking": false},
		"messages": [
			{"role": "system", "content": "Be brief.\nBe kind."},
			{"role": "user", "content": "Weather in Paris\nand Oslo?"},
			{"role": "assistant", "content": "Let me check.", "reasoning_content": "Two calls.", "tool_calls": [
				{"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
				{"id": "toolu_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
			{"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"},
			{"role": "tool", "tool_call_id": "toolu_2", "content": "Error: no such city"},
			{"role": "user", "content": "Thanks."}]}`)
	if got != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", got, want)
	}
	for _, s := range []string{"<tool_response>\nsunny\n</tool_response>", "Error: no such city", `"name": "get_weather", "arguments": {"city": "Oslo"}`} {
		if !strings.Contains(got, s) {
			t.Errorf("prompt lacks %q:\n%s", s, got)
		}
	}
	// Prefill: the last assistant message is continued, not closed.
	got = renderMessages(t, m, `{"max_tokens": 10, "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Well,"}]}`)
	if !strings.HasSuffix(got, "Well,") {
		t.Errorf("prefill: prompt ends %q", got[max(0, len(got)-40):])
	}
	// Thinking on and off reach the template.
	on := renderMessages(t, m, `{"max_tokens": 2000, "thinking": {"type": "enabled", "budget_tokens": 1024}, "messages": [{"role": "user", "content": "Hi"}]}`)
	off := renderMessages(t, m, `{"max_tokens": 10, "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Hi"}]}`)
	if strings.Contains(on, "</think>") || !strings.HasSuffix(off, "<think>\n\n</think>\n\n") {
		t.Errorf("thinking on: %q\noff: %q", on, off)
	}
}

// TestMessagesCountTokens checks that count_tokens counts the prompt a
// messages request reads: its usage's input tokens, and the tokens of
// the equivalent chat prompt.
func TestMessagesCountTokens(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi"})
	body := `{"model": "tiny", "system": "Be brief.", "messages": [{"role": "user", "content": "What is the capital of France?"}],
		"tools": [{"name": "f", "input_schema": {"type": "object"}}], "thinking": {"type": "disabled"}}`
	resp := postMessages(t, ts, "/v1/messages/count_tokens", body)
	var count map[string]any
	json.NewDecoder(resp.Body).Decode(&count)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(count) != 1 {
		t.Fatalf("status %d: %v", resp.StatusCode, count)
	}
	n := count["input_tokens"].(float64)
	prompt := renderOpenAI(t, ts.model, `{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is the capital of France?"}],
		"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}], "chat_template_kwargs": {"enable_thinking": false}}`)
	if want := len(ts.model.Tokenizer.Encode(prompt)); int(n) != want {
		t.Errorf("input_tokens %v, the chat prompt has %d", n, want)
	}
	status, v := message(t, ts, strings.Replace(body, `"model"`, `"max_tokens": 5, "model"`, 1))
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	u := v["usage"].(map[string]any)
	if got := u["input_tokens"].(float64) + u["cache_read_input_tokens"].(float64); got != n {
		t.Errorf("usage %v: %v prompt tokens, count_tokens %v", u, got, n)
	}
}

// anthropicErrorOf checks that v is an error in Anthropic's shape and
// returns its type and message.
func anthropicErrorOf(t *testing.T, v map[string]any) (string, string) {
	t.Helper()
	e, ok := v["error"].(map[string]any)
	if !ok || v["type"] != "error" {
		t.Fatalf("not an Anthropic error: %v", v)
	}
	if _, ok := v["request_id"]; !ok {
		t.Errorf("no request_id: %v", v)
	}
	typ, _ := e["type"].(string)
	msg, _ := e["message"].(string)
	if typ == "" || msg == "" || len(e) != 2 {
		t.Errorf("error object %v", e)
	}
	return typ, msg
}

// TestMessagesAuth checks x-api-key and Authorization: Bearer, and the
// authentication error's shape.
func TestMessagesAuth(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", apiKey: "s3cret"})
	body := `{"max_tokens": 3, "messages": [{"role": "user", "content": "Hi"}]}`
	for _, hdr := range [][]string{{"x-api-key", "s3cret"}, {"Authorization", "Bearer s3cret"}, {"x-api-key", "unused", "Authorization", "Bearer s3cret"}} {
		if status, v := message(t, ts, body, hdr...); status != 200 {
			t.Errorf("%v: status %d: %v", hdr, status, v)
		}
	}
	for _, hdr := range [][]string{nil, {"x-api-key", "wrong"}, {"x-api-key", "s3cre"}, {"Authorization", "s3cret"}} {
		status, v := message(t, ts, body, hdr...)
		if status != 401 {
			t.Fatalf("%v: status %d, want 401", hdr, status)
		}
		if typ, msg := anthropicErrorOf(t, v); typ != "authentication_error" || !strings.Contains(msg, "x-api-key") {
			t.Errorf("%v: %s: %s", hdr, typ, msg)
		}
	}
	// The OpenAI routes take x-api-key too, and keep their error shape.
	if status, _, _ := ts.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2}`, "x-api-key", "s3cret"); status != 200 {
		t.Errorf("chat completions with x-api-key: %d", status)
	}
	status, v, _ := ts.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}]}`, "x-api-key", "wrong")
	if status != 401 {
		t.Fatalf("chat completions with a wrong x-api-key: %d", status)
	}
	errorOf(t, v)
}

// TestMessagesErrors checks the status and Anthropic shape of the errors
// of bad requests.
func TestMessagesErrors(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", maxBody: 4096, ctx: 256})
	user := `"messages": [{"role": "user", "content": "Hi"}]`
	tools := `"tools": [{"name": "f", "input_schema": {"type": "object"}}]`
	tests := []struct {
		name, body string
		status     int
		typ, msg   string
	}{
		{"malformed", `{"max_tokens": `, 400, "invalid_request_error", "cut short"},
		{"no max_tokens", `{` + user + `}`, 400, "invalid_request_error", "max_tokens is required"},
		{"max_tokens zero", `{"max_tokens": 0, ` + user + `}`, 400, "invalid_request_error", "at least 1"},
		{"max_tokens fraction", `{"max_tokens": 1.5, ` + user + `}`, 400, "invalid_request_error", "expected an integer"},
		{"no messages", `{"max_tokens": 5}`, 400, "invalid_request_error", "messages is required"},
		{"role", `{"max_tokens": 5, "messages": [{"role": "tool", "content": "x"}]}`, 400, "invalid_request_error", `"tool" is not one of`},
		{"empty content", `{"max_tokens": 5, "messages": [{"role": "user", "content": []}]}`, 400, "invalid_request_error", "content must not be empty"},
		{"schema", `{"max_tokens": 5, ` + user + `, "output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": 3}}}}`, 400, "invalid_request_error", "output_config.format: "},
		{"content type", `{"max_tokens": 5, "messages": [{"role": "user", "content": 5}]}`, 400, "invalid_request_error", "must be a string or an array"},
		{"image", `{"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]}`, 400, "invalid_request_error", "reads text only"},
		{"block type", `{"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_use", "name": "f", "input": {}}]}]}`, 400, "invalid_request_error", `"tool_use" is not supported in a user message`},
		{"tool_use input", `{"max_tokens": 5, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": [1]}]}]}`, 400, "invalid_request_error", "must be a JSON object"},
		{"tool_result id", `{"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]}`, 400, "invalid_request_error", "needs tool_use_id"},
		{"server tool", `{"max_tokens": 5, ` + user + `, "tools": [{"type": "web_search_20250305", "name": "web_search"}]}`, 400, "invalid_request_error", "server tools"},
		{"no input_schema", `{"max_tokens": 5, ` + user + `, "tools": [{"name": "f"}]}`, 400, "invalid_request_error", "input_schema is required"},
		{"bad schema", `{"max_tokens": 5, ` + user + `, "tool_choice": {"type": "any"}, "tools": [{"name": "f", "input_schema": {"type": "object", "properties": 3}}]}`, 400, "invalid_request_error", "input_schema"},
		{"tool_choice name", `{"max_tokens": 5, ` + user + `, ` + tools + `, "tool_choice": {"type": "tool", "name": "g"}}`, 400, "invalid_request_error", `"g", which is not among the tools`},
		{"tool_choice type", `{"max_tokens": 5, ` + user + `, ` + tools + `, "tool_choice": {"type": "required"}}`, 400, "invalid_request_error", "not one of auto, any, tool, none"},
		{"tool_choice no tools", `{"max_tokens": 5, ` + user + `, "tool_choice": {"type": "any"}}`, 400, "invalid_request_error", "needs tools"},
		{"thinking budget", `{"max_tokens": 5000, ` + user + `, "thinking": {"type": "enabled", "budget_tokens": 100}}`, 400, "invalid_request_error", "at least 1024"},
		{"thinking over max", `{"max_tokens": 1024, ` + user + `, "thinking": {"type": "enabled", "budget_tokens": 1024}}`, 400, "invalid_request_error", "less than max_tokens"},
		{"thinking type", `{"max_tokens": 5, ` + user + `, "thinking": {"type": "on"}}`, 400, "invalid_request_error", "not one of enabled"},
		{"temperature", `{"max_tokens": 5, ` + user + `, "temperature": 1.5}`, 400, "invalid_request_error", "outside [0, 1]"},
		{"stop_sequences", `{"max_tokens": 5, ` + user + `, "stop_sequences": ["a", "b", "c", "d", "e"]}`, 400, "invalid_request_error", "at most 4"},
		{"output format", `{"max_tokens": 5, ` + user + `, "output_config": {"format": {"type": "xml"}}}`, 400, "invalid_request_error", `not "json_schema"`},
		{"prompt too long", `{"max_tokens": 5, "messages": [{"role": "user", "content": "` + strings.Repeat("word ", 300) + `"}]}`, 400, "invalid_request_error", "prompt is too long: this model's context is 256 tokens"},
		{"unknown model", `{"model": "claude-opus-5", "max_tokens": 5, ` + user + `}`, 404, "not_found_error", `"claude-opus-5" does not exist`},
		{"too large", `{"max_tokens": 5, "messages": [{"role": "user", "content": "` + strings.Repeat("x", 5000) + `"}]}`, 413, "request_too_large", "larger than 4096"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, v := message(t, ts, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, v)
			}
			typ, msg := anthropicErrorOf(t, v)
			if typ != tc.typ || !strings.Contains(msg, tc.msg) {
				t.Errorf("%s: %q; want %s containing %q", typ, msg, tc.typ, tc.msg)
			}
		})
	}
	// count_tokens answers in the same shape; so does a wrong method.
	resp := postMessages(t, ts, "/v1/messages/count_tokens", `{"messages": []}`)
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if typ, msg := anthropicErrorOf(t, v); resp.StatusCode != 400 || typ != "invalid_request_error" || !strings.Contains(msg, "must not be empty") {
		t.Errorf("count_tokens: %d %s %s", resp.StatusCode, typ, msg)
	}
	resp, err := http.Get(ts.URL + "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if typ, _ := anthropicErrorOf(t, v); resp.StatusCode != 405 || typ != "invalid_request_error" {
		t.Errorf("GET: %d %s", resp.StatusCode, typ)
	}
}

// FuzzMessagesRequest sends arbitrary bodies to the Messages API's
// endpoints: whatever arrives, the answer is a success or a well-formed
// client error in Anthropic's shape, never a 500 or a panic.
//
//	go test ./server -run '^$' -fuzz FuzzMessagesRequest -fuzztime 20s
func FuzzMessagesRequest(f *testing.F) {
	seeds := []string{
		`{"model":"tiny","max_tokens":3,"messages":[{"role":"user","content":"Hi"}]}`,
		`{"max_tokens":3,"stream":true,"system":[{"type":"text","text":"x"}],"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`,
		`{"max_tokens":3,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true},"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"2"}],"is_error":true}]}]}`,
		`{"max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"stop_sequences":["x"],"temperature":0.5,"top_p":0.9,"top_k":5,"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Well"}]}`,
		`{"max_tokens":3,"output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object"}}},"messages":[{"role":"system","content":"s"},{"role":"user","content":"Hi"}]}`,
		`{"max_tokens":3,"messages":[{"role":"user","content":[{"type":"redacted_thinking","data":"x"}]}]}`,
		`{"messages": [`, `[]`, `null`, `{"max_tokens": -1}`, "\x00\xff",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	ts := newTestServer(f, serverOpts{reply: "<think>\nok\n</think>\n\nfine <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", ctx: 256, maxBody: 1 << 16})
	paths := []string{"/v1/messages", "/v1/messages/count_tokens"}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := paths[int(which)%len(paths)]
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		ts.srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			if ct := rec.Header().Get("Content-Type"); ct == "application/json" && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s: 200 with invalid JSON %q", path, rec.Body.Bytes())
			}
		case 400, 404, 413, 503:
			var e anthropicErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Type != "error" || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("%s: status %d with body %q", path, rec.Code, rec.Body.Bytes())
			}
		default:
			t.Fatalf("%s: status %d for %q: %s", path, rec.Code, body, rec.Body.Bytes())
		}
	})
}
