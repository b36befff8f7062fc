package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

var fuzzRoles = []string{"system", "user", "assistant", "tool"}

// FuzzRender renders fuzzed conversations with the Qwen3 template and the
// ChatML fallback. Render must not panic, the engine must not panic inside
// it, and a conversation of valid messages must render.
func FuzzRender(f *testing.F) {
	qwen := qwen3Template(f)
	chatml, err := New("", "", "")
	if err != nil {
		f.Fatal(err)
	}
	f.Add("user", "Hello!", "assistant", "<think>\nx\n</think>\n\nHi", "", `{"a": 1}`, `{"type": "function", "function": {"name": "f"}}`, uint8(0))
	f.Add("system", "Be brief.", "user", "<tool_response>x</tool_response>", "why", "not json", `[1, 2.0]`, uint8(7))
	f.Add("tool", "42", "tool", "43", "", "", `{}`, uint8(2))
	f.Add("assistant", "</think>", "developer", "x", "r", `{"b": {"a": [null]}}`, `"s"`, uint8(255))
	f.Fuzz(func(t *testing.T, role1, content1, role2, content2, reasoning, args, tool string, flags uint8) {
		m1 := Message{Role: role1, Content: content1}
		m2 := Message{Role: role2, Content: content2}
		if flags&1 != 0 && role2 == "assistant" {
			m2.ReasoningContent = reasoning
			m2.ToolCalls = []ToolCall{{ID: "1", Name: reasoning, Arguments: args}}
		}
		if role1 == "tool" {
			m1.ToolCallID = reasoning
		}
		msgs := []Message{m1, m2}
		opts := Options{
			AddGenerationPrompt:  flags&2 != 0,
			ContinueFinalMessage: flags&4 != 0,
		}
		if flags&8 != 0 {
			opts.Tools = []json.RawMessage{json.RawMessage(tool)}
		}
		if flags&16 != 0 {
			opts.Kwargs = map[string]any{"enable_thinking": flags&32 != 0}
		}
		valid := validRole(role1) && validRole(role2) && (flags&8 == 0 || json.Valid([]byte(tool)))
		for _, tmpl := range []*Template{qwen, chatml} {
			out, err := tmpl.Render(msgs, opts)
			if err != nil && strings.Contains(err.Error(), "engine panic") {
				t.Fatalf("engine panic: %v", err)
			}
			if valid && !opts.ContinueFinalMessage && err != nil {
				t.Fatalf("valid conversation: %v", err)
			}
			if err == nil && role1 == "user" && !strings.Contains(out, content1) {
				t.Fatalf("output lacks the user's content %q:\n%s", content1, out)
			}
		}
	})
}

func validRole(r string) bool {
	for _, v := range fuzzRoles {
		if r == v {
			return true
		}
	}
	return false
}

// FuzzParse parses fuzzed template sources and renders a small conversation
// with those that parse. Neither may panic; errors are fine.
func FuzzParse(f *testing.F) {
	src, _, _ := loadQwen3(f)
	f.Add(src)
	f.Add(ChatML)
	f.Add(`{% macro m(a) %}{{ a | tojson(indent=2) }}{% endmacro %}{% for x in messages %}{{ m(x) }}{% endfor %}`)
	f.Add(`{%- set ns = namespace(i=0) -%}{% for m in messages[::-1] %}{% set ns.i = loop.index0 %}{% endfor %}{{ ns.i }}`)
	f.Add(`{% raw %}{{ x }}{% endraw %}{# c #}{{ tools | tojson(separators=(',', ':'), sort_keys=true) }}`)
	f.Add(`{{ raise_exception('x') if messages|length > 1 else strftime_now('%Y') }}{{ range(3)|list }}`)
	f.Add(`{% for m in messages %}{{ m.content.split(' ')[-1].strip() }}{% if loop.last %}{{ m.role.upper() }}{% endif %}{% endfor %}`)
	tools := []json.RawMessage{json.RawMessage(`{"type": "function", "function": {"name": "f", "parameters": {"b": 1.0, "a": [true, null]}}}`)}
	msgs := []Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "hi"},
		{Role: "assistant", Content: "<think>r</think>ok", ToolCalls: []ToolCall{{ID: "1", Name: "f", Arguments: `{"x": 1}`}}},
		{Role: "tool", Content: "res", ToolCallID: "1"},
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := New(src, "<s>", "</s>")
		if err != nil {
			return
		}
		_, _ = tmpl.Render(msgs, Options{Tools: tools, AddGenerationPrompt: true, Kwargs: map[string]any{"enable_thinking": false}})
	})
}
