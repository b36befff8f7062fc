package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"inferno/parser"
)

// chatReply is what a test reads of a chat completion, streamed or not.
type chatReply struct {
	content, reasoning string
	names, args, ids   []string
	finish             string
}

// chatOnce sends a chat completion request, streamed or not, and gathers
// its reply.
func chatOnce(t *testing.T, ts *testServer, body string, stream bool) chatReply {
	t.Helper()
	if stream {
		body = strings.TrimSuffix(body, "}") + `, "stream": true}`
	}
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	type message struct {
		Content          *string        `json:"content"`
		ReasoningContent string         `json:"reasoning_content"`
		ToolCalls        []wireToolCall `json:"tool_calls"`
	}
	var r chatReply
	add := func(m message, finish *string) {
		if m.Content != nil {
			r.content += *m.Content
		}
		r.reasoning += m.ReasoningContent
		for _, c := range m.ToolCalls {
			r.names = append(r.names, c.Function.Name)
			r.args = append(r.args, c.Function.Arguments)
			r.ids = append(r.ids, c.ID)
		}
		if finish != nil {
			r.finish = *finish
		}
	}
	type choice struct {
		Message      message `json:"message"`
		Delta        message `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	}
	if !stream {
		var v struct{ Choices []choice }
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		add(v.Choices[0].Message, v.Choices[0].FinishReason)
		return r
	}
	ev := sseEvents(t, resp.Body)
	for _, e := range ev[:len(ev)-1] {
		var v struct{ Choices []choice }
		if err := json.Unmarshal([]byte(e), &v); err != nil {
			t.Fatal(err)
		}
		add(v.Choices[0].Delta, v.Choices[0].FinishReason)
	}
	return r
}

// TestReplyFormats checks that the server parses replies in the model's
// format, streamed and not.
func TestReplyFormats(t *testing.T) {
	const tools = `, "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]`
	user := `{"messages": [{"role": "user", "content": "Weather in Paris?"}]`
	tests := []struct {
		name   string
		format parser.Format
		reply  string
		body   string
		want   chatReply
		id     *regexp.Regexp
	}{
		{"harmony", parser.Harmony,
			"<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>It is sunny.",
			user + "}", chatReply{content: "It is sunny.", reasoning: "Easy.", finish: "stop"}, nil},
		{"harmony tool call", parser.Harmony,
			"<|channel|>analysis<|message|>Need it.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}",
			user + tools + "}", chatReply{reasoning: "Need it.", names: []string{"get_weather"}, args: []string{`{"city":"Paris"}`}, finish: "tool_calls"},
			regexp.MustCompile(`^call_[A-Za-z0-9]{24}$`)},
		{"mistral tool call", parser.Mistral,
			"Checking.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}",
			user + tools + "}", chatReply{content: "Checking.", names: []string{"get_weather"}, args: []string{`{"city":"Paris"}`}, finish: "tool_calls"},
			regexp.MustCompile(`^[A-Za-z0-9]{9}$`)},
		{"mistral without tools", parser.Mistral,
			"Checking.[TOOL_CALLS]get_weather[ARGS]{}",
			user + "}", chatReply{content: "Checking.[TOOL_CALLS]get_weather[ARGS]{}", finish: "stop"}, nil},
		{"plain", parser.Plain, "<think>x</think>Hi",
			user + tools + "}", chatReply{content: "<think>x</think>Hi", finish: "stop"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, serverOpts{reply: tt.reply, format: tt.format})
			for _, stream := range []bool{false, true} {
				got := chatOnce(t, ts, tt.body, stream)
				ids := got.ids
				got.ids = nil
				if got.content != tt.want.content || got.reasoning != tt.want.reasoning || got.finish != tt.want.finish ||
					strings.Join(got.names, ",") != strings.Join(tt.want.names, ",") || strings.Join(got.args, ",") != strings.Join(tt.want.args, ",") {
					t.Errorf("stream %v: got %+v, want %+v", stream, got, tt.want)
				}
				for _, id := range ids {
					if !tt.id.MatchString(id) {
						t.Errorf("stream %v: tool call id %q does not match %v", stream, id, tt.id)
					}
				}
			}
		})
	}
}

// TestParallelToolCallsFalse checks that parallel_tool_calls: false stops
// a Mistral reply after its first call, streamed or not.
func TestParallelToolCallsFalse(t *testing.T) {
	ts := newTestServer(t, serverOpts{format: parser.Mistral,
		reply: "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Rome\"}"})
	body := `{"messages": [{"role": "user", "content": "Weather?"}], "parallel_tool_calls": false,` +
		` "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]}`
	for _, stream := range []bool{false, true} {
		got := chatOnce(t, ts, body, stream)
		if len(got.names) != 1 || got.args[0] != `{"city":"Paris"}` || got.finish != "tool_calls" {
			t.Errorf("stream %v: got %+v, want the first call only", stream, got)
		}
	}
}

// TestToolChoiceFormats checks that a forced tool choice, which constrains
// the reply to Qwen's tool-call syntax, is refused for other formats.
func TestToolChoiceFormats(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "x", format: parser.Harmony})
	status, v, _ := ts.post(t, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}], "tool_choice": "required",`+
		` "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}`)
	e := errorOf(t, v)
	if status != 400 || e["param"] != "tool_choice" || !strings.Contains(e["message"].(string), "harmony") {
		t.Errorf("status %d, error %v", status, e)
	}
}

// TestReasoningEffort checks that reasoning_effort reaches the template as
// the variable gpt-oss's template reads, and is checked.
func TestReasoningEffort(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "x", format: parser.Harmony,
		template: "Reasoning: {{ reasoning_effort if reasoning_effort is defined else 'medium' }}"})
	user := `"messages": [{"role": "user", "content": "Hi"}]`
	tests := []struct {
		body, want string
	}{
		{`{` + user + `}`, "Reasoning: medium"},
		{`{` + user + `, "reasoning_effort": "high"}`, "Reasoning: high"},
		{`{` + user + `, "reasoning_effort": "low", "chat_template_kwargs": {"enable_thinking": false}}`, "Reasoning: low"},
		{`{` + user + `, "reasoning_effort": "high", "chat_template_kwargs": {"reasoning_effort": "low"}}`, "Reasoning: low"},
	}
	for _, tt := range tests {
		status, v, _ := ts.post(t, "/apply-template", tt.body)
		if status != 200 || v["prompt"] != tt.want {
			t.Errorf("%s: status %d, %v; want %q", tt.body, status, v, tt.want)
		}
	}
	for _, bad := range []string{`"extreme"`, `"minimal"`, `""`, `"HIGH"`} {
		status, v, _ := ts.post(t, "/v1/chat/completions", `{`+user+`, "reasoning_effort": `+bad+`}`)
		if e := errorOf(t, v); status != 400 || e["param"] != "reasoning_effort" {
			t.Errorf("reasoning_effort %s: status %d, error %v", bad, status, e)
		}
	}
	status, v, _ := ts.post(t, "/v1/chat/completions", `{`+user+`, "reasoning_effort": 3}`)
	if e := errorOf(t, v); status != 400 || e["param"] != "reasoning_effort" {
		t.Errorf("reasoning_effort 3: status %d, error %v", status, e)
	}
}
