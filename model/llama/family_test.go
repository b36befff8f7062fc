package llama

import (
	"slices"
	"testing"

	"inferno/chat"
)

// TestMistralDefaults: a llama file with Mistral's [TOOL_CALLS] token and
// no chat template gets llama.cpp's built-in Mistral format and replies in
// Mistral's format; a Llama 3 file keeps ChatML and Qwen-style replies.
func TestMistralDefaults(t *testing.T) {
	for _, tc := range []struct {
		vocab         []string
		pre           string
		template, fmt string
	}{
		{[]string{"[TOOL_CALLS]"}, "tekken", chat.MistralV7Tekken, "mistral"},
		{[]string{"[TOOL_CALLS]"}, "llama-bpe", chat.MistralV7, "mistral"},
		{[]string{"<|eot_id|>"}, "llama-bpe", "", "qwen"},
	} {
		has := func(tok string) bool { return slices.Contains(tc.vocab, tok) }
		if got := Family.Chat.DefaultTemplate(has, tc.pre); got != tc.template {
			t.Errorf("%v %s: template %.40q, want %.40q", tc.vocab, tc.pre, got, tc.template)
		}
		if got := Family.Chat.ReplyFormat(has); got != tc.fmt {
			t.Errorf("%v %s: reply format %q, want %q", tc.vocab, tc.pre, got, tc.fmt)
		}
	}
}
