package chat

import (
	"strings"
	"testing"
)

// llamaChatMistralV7 renders msgs as llama.cpp's llm_chat_apply_template
// does for LLM_CHAT_TEMPLATE_MISTRAL_V7 (tekken false) and
// LLM_CHAT_TEMPLATE_MISTRAL_V7_TEKKEN (src/llama-chat.cpp, commit
// 0253fb21f), a transcription of its loop; add_ass changes nothing there.
func llamaChatMistralV7(msgs []Message, tekken bool) string {
	trailingSpace := " "
	if tekken {
		trailingSpace = ""
	}
	var ss strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case "system":
			ss.WriteString("[SYSTEM_PROMPT]" + trailingSpace + m.Content + "[/SYSTEM_PROMPT]")
		case "user":
			ss.WriteString("[INST]" + trailingSpace + m.Content + "[/INST]")
		default:
			ss.WriteString(trailingSpace + m.Content + "</s>")
		}
	}
	return ss.String()
}

func TestMistralBuiltins(t *testing.T) {
	convs := [][]Message{
		{{Role: "user", Content: "Hello!"}},
		{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}, {Role: "assistant", Content: " Hello. "},
			{Role: "user", Content: "Weather?"}},
		{{Role: "user", Content: "Weather?"}, {Role: "assistant", ToolCalls: []ToolCall{{ID: "a1B2c3D4e", Name: "f", Arguments: "{}"}}},
			{Role: "tool", ToolCallID: "a1B2c3D4e", Content: "sunny"}, {Role: "system", Content: "late system"}},
		{{Role: "user", Content: "Grüß dich 😀\n"}, {Role: "assistant", Content: ""}},
	}
	for _, tt := range []struct {
		name   string
		src    string
		tekken bool
	}{{"mistral-v7", MistralV7, false}, {"mistral-v7-tekken", MistralV7Tekken, true}} {
		tmpl, err := New(tt.src, "<s>", "</s>")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for i, msgs := range convs {
			want := "<s>" + llamaChatMistralV7(msgs, tt.tekken)
			for _, gen := range []bool{false, true} {
				got, err := tmpl.Render(msgs, Options{AddGenerationPrompt: gen})
				if err != nil {
					t.Fatalf("%s, conversation %d: %v", tt.name, i, err)
				}
				if got != want {
					t.Errorf("%s, conversation %d, add_generation_prompt %v: %s", tt.name, i, gen, diff(got, want))
				}
			}
		}
	}
	// Worked by hand from llama-chat.cpp.
	msgs := convs[1]
	for src, want := range map[string]string{
		MistralV7:       "<s>[SYSTEM_PROMPT] Be brief.[/SYSTEM_PROMPT][INST] Hi[/INST]  Hello. </s>[INST] Weather?[/INST]",
		MistralV7Tekken: "<s>[SYSTEM_PROMPT]Be brief.[/SYSTEM_PROMPT][INST]Hi[/INST] Hello. </s>[INST]Weather?[/INST]",
	} {
		tmpl, err := New(src, "<s>", "</s>")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tmpl.Render(msgs, Options{AddGenerationPrompt: true}); err != nil || got != want {
			t.Errorf("got %q, %v\nwant %q", got, err, want)
		}
	}
}

// TestHarmonyMessages checks how messages reach a template of the harmony
// format: reasoning also as thinking, and no content beside reasoning and
// tool calls; other templates see the messages as they are.
func TestHarmonyMessages(t *testing.T) {
	const body = "{% for m in messages %}{{ m.role }} thinking={{ m.thinking if m.thinking is defined else '-' }}" +
		" content={{ m.content if 'content' in m else '-' }} reasoning={{ m.reasoning_content if m.reasoning_content is defined else '-' }};{% endfor %}"
	msgs := []Message{
		{Role: "user", Content: "q"},
		{Role: "assistant", Content: "c1", ReasoningContent: "r1"},
		{Role: "assistant", Content: "c2", ReasoningContent: "r2", ToolCalls: []ToolCall{{Name: "f"}}},
		{Role: "assistant", Content: "c3", ToolCalls: []ToolCall{{Name: "f"}}},
	}
	for _, tt := range []struct {
		src, want string
	}{
		{"{# <|channel|> #}" + body, "user thinking=- content=q reasoning=-;assistant thinking=r1 content=c1 reasoning=r1;" +
			"assistant thinking=r2 content=- reasoning=r2;assistant thinking=- content=c3 reasoning=-;"},
		{body, "user thinking=- content=q reasoning=-;assistant thinking=- content=c1 reasoning=r1;" +
			"assistant thinking=- content=c2 reasoning=r2;assistant thinking=- content=c3 reasoning=-;"},
	} {
		tmpl, err := New(tt.src, "", "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := tmpl.Render(msgs, Options{})
		if err != nil || got != tt.want {
			t.Errorf("got %q, %v\nwant %q", got, err, tt.want)
		}
	}
}
