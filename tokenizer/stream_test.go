package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStreamDecoder(t *testing.T) {
	t.Parallel()
	tok := loadQwen3(t)
	texts := []string{
		"你好，世界！我爱自然语言处理。",
		"emoji 😀😃😄 👍🏽 🇺🇸 👨\u200d👩\u200d👧\u200d👦 🤖🧠✨",
		"こんにちは世界、カタカナ、ひらがな",
		"<|im_start|>assistant\n<think>\n好的\n</think>\n\n答案是 42 😀<|im_end|>",
		"mixed 中文 and English 混合 text, ∑∫∂√∞",
	}
	for _, c := range loadGolden(t) {
		texts = append(texts, c.Text)
	}
	for _, text := range texts {
		ids := tok.Encode(text)
		d := tok.NewStreamDecoder()
		var sb strings.Builder
		for _, id := range ids {
			s := d.Next(id)
			if strings.ContainsRune(s, utf8.RuneError) {
				t.Errorf("%q: Next(%d) = %q contains U+FFFD", text, id, s)
			}
			if !utf8.ValidString(s) {
				t.Errorf("%q: Next(%d) = %q is not valid UTF-8", text, id, s)
			}
			sb.WriteString(s)
		}
		sb.WriteString(d.Flush())
		if got, want := sb.String(), tok.Decode(ids); got != want {
			t.Errorf("streamed %q, Decode gives %q", got, want)
		}
	}
}

func TestStreamDecoderSplitRune(t *testing.T) {
	tok := loadQwen3(t)
	// '你' is E4 BD A0; feed it as three byte tokens.
	var ids []int32
	for _, b := range []byte("你") {
		id, ok := tok.TokenID(string(byteToRune[b]))
		if !ok {
			t.Fatalf("no token for byte %#x", b)
		}
		ids = append(ids, id)
	}
	d := tok.NewStreamDecoder()
	for i, want := range []string{"", "", "你"} {
		if got := d.Next(ids[i]); got != want {
			t.Errorf("Next(%d) = %q, want %q", ids[i], got, want)
		}
	}
	if got := d.Flush(); got != "" {
		t.Errorf("Flush() = %q, want \"\"", got)
	}

	// The real encoding of an emoji sequence splits characters across tokens.
	text := "👨\u200d👩\u200d👧"
	enc := tok.Encode(text)
	d = tok.NewStreamDecoder()
	sawEmpty := false
	var sb strings.Builder
	for _, id := range enc {
		s := d.Next(id)
		sawEmpty = sawEmpty || s == ""
		sb.WriteString(s)
	}
	sb.WriteString(d.Flush())
	if !sawEmpty {
		t.Errorf("Encode(%q) = %v: expected a token ending inside a character", text, enc)
	}
	if sb.String() != text {
		t.Errorf("streamed %q, want %q", sb.String(), text)
	}

	// An incomplete character left at the end is flushed as U+FFFD, and a
	// character cut short by the next token becomes U+FFFD at once.
	d = tok.NewStreamDecoder()
	if got := d.Next(ids[0]); got != "" {
		t.Errorf("Next = %q, want \"\"", got)
	}
	if got := d.Next(ids[1]); got != "" {
		t.Errorf("Next = %q, want \"\"", got)
	}
	if got := d.Flush(); got != "\uFFFD" {
		t.Errorf("Flush() = %q, want U+FFFD", got)
	}
	a, _ := tok.TokenID("a")
	d.Next(ids[0])
	if got, want := d.Next(a), "\uFFFDa"; got != want {
		t.Errorf("Next(a) after a lead byte = %q, want %q", got, want)
	}
	if got, want := tok.Decode([]int32{ids[0], a}), "\uFFFDa"; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}
	end, _ := tok.TokenID("<|im_end|>")
	d.Next(ids[0])
	if got, want := d.Next(end), "\uFFFD<|im_end|>"; got != want {
		t.Errorf("Next(<|im_end|>) after a lead byte = %q, want %q", got, want)
	}
	if got := d.Next(-1); got != "" {
		t.Errorf("Next(-1) = %q, want \"\"", got)
	}
}
