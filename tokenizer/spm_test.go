package tokenizer

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// smallSPM returns the tokenizer of smallSPMGGUF: "▁", "a", "b", "▁a",
// "ab", "▁ab", byte tokens for 'A', 0xC3 and 0xA9, <unk> and <s>.
func smallSPM(t *testing.T, addSpacePrefix bool) *Tokenizer {
	t.Helper()
	tok, err := FromGGUF(writeGGUF(t, with(smallSPMGGUF(), keyAddSpacePrefix, addSpacePrefix)))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// texts returns the token texts of ids.
func texts(tok *Tokenizer, ids []int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tok.TokenText(id)
	}
	return out
}

func TestSPMSmall(t *testing.T) {
	tok := smallSPM(t, false)
	for _, tc := range []struct {
		in   string
		want []string
	}{
		// "▁a" (score -4) beats "ab" (-5): ▁ a b → ▁a b, and "▁ab" needs
		// ▁a + b.
		{" ab", []string{"▁ab"}},
		{"ab", []string{"ab"}},
		{"a b", []string{"a", "▁", "b"}},
		// No token for 'é': its UTF-8 bytes; 'A' has a byte token only.
		{"é", []string{"<0xC3>", "<0xA9>"}},
		{"A", []string{"<0x41>"}},
		// 'z' has no token and no byte token: <unk>, runs fused.
		{"azzb", []string{"a", "<unk>", "b"}},
		{"z\xffa", []string{"<unk>", "a"}},
		{"a<s>b", []string{"a", "<s>", "b"}},
	} {
		if got := texts(tok, tok.Encode(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := texts(tok, tok.EncodeOrdinary("a<s>")); slices.Contains(got, "<s>") {
		t.Errorf("EncodeOrdinary(a<s>) = %q matched the control token", got)
	}
	if got, want := tok.Decode(tok.Encode(" ab é")), " ab é"; got != want {
		t.Errorf("Decode(Encode(%q)) = %q", want, got)
	}

	// With add_space_prefix every span between added tokens starts with ▁,
	// as in llama.cpp.
	tok = smallSPM(t, true)
	if got, want := texts(tok, tok.Encode("ab<s>ab")), []string{"▁ab", "<s>", "▁ab"}; !slices.Equal(got, want) {
		t.Errorf("Encode(ab<s>ab) with add_space_prefix = %q, want %q", got, want)
	}
}

// TestSPMMergeOrder: among merges that make tokens of equal score (or
// the same token), the one with the longer left part goes first, as in the
// merges transformers derives from SentencePiece scores, and not the
// leftmost as in llama.cpp.
func TestSPMMergeOrder(t *testing.T) {
	tok, err := New(Config{Model: ModelSPM, Tokens: []string{"a", "aa", "aaa"}, Scores: []float32{0, -1, -2}})
	if err != nil {
		t.Fatal(err)
	}
	// The symbols a|aa|a of "aaaa": both a+aa and aa+a make aaa.
	syms := []spmSymbol{
		{id: 0, start: 0, end: 1, runes: 1, prev: -1, next: 1},
		{id: 1, start: 1, end: 3, runes: 2, prev: 0, next: 2},
		{id: 0, start: 3, end: 4, runes: 1, prev: 1, next: -1},
	}
	left, ok1 := tok.spm.candidate("aaaa", syms, 0)
	right, ok2 := tok.spm.candidate("aaaa", syms, 1)
	if !ok1 || !ok2 || left.id != 2 || right.id != 2 {
		t.Fatalf("candidates %+v %v, %+v %v, want both aaa", left, ok1, right, ok2)
	}
	if !right.less(left) || left.less(right) {
		t.Errorf("aa+a (%+v) should rank before a+aa (%+v)", right, left)
	}
	// Equal merges: the leftmost first.
	a, b := right, right
	b.pos++
	if !a.less(b) || b.less(a) {
		t.Error("equal merges do not go leftmost first")
	}
}

// TestSPMStreamByteFallback: a character split into byte tokens comes out
// of the stream decoder whole, once its last byte arrives.
func TestSPMStreamByteFallback(t *testing.T) {
	tok := smallSPM(t, false)
	ids := tok.Encode("aé")
	if got := texts(tok, ids); !slices.Equal(got, []string{"a", "<0xC3>", "<0xA9>"}) {
		t.Fatalf("Encode(aé) = %q", got)
	}
	d := tok.NewStreamDecoder()
	for i, want := range []string{"a", "", "é"} {
		if got := d.Next(ids[i]); got != want {
			t.Errorf("Next(%s) = %q, want %q", tok.TokenText(ids[i]), got, want)
		}
	}
	if got := d.Flush(); got != "" {
		t.Errorf("Flush() = %q", got)
	}
	// A lone lead byte is held back, then flushed as U+FFFD.
	d.Next(ids[1])
	if got := d.Flush(); got != "\uFFFD" {
		t.Errorf("Flush() after a lead byte = %q", got)
	}
}

// TestGemma3Stream streams Gemma 3's ids for text in several scripts,
// with characters its vocabulary lacks (byte fallback).
func TestGemma3Stream(t *testing.T) {
	f := familyByName("gemma3")
	cases := f.cases(t)
	_, tok := f.load(t)
	texts := []string{"rare: \U0002A6D6\U0002B820 \U0001FAE8 \u0F00\u0FD9"}
	for _, c := range cases {
		texts = append(texts, c.Text)
	}
	fallback := false
	for _, text := range texts {
		ids := tok.Encode(text)
		d := tok.NewStreamDecoder()
		var sb strings.Builder
		for _, id := range ids {
			fallback = fallback || tok.TokenType(id) == TypeByte
			s := d.Next(id)
			if strings.ContainsRune(s, utf8.RuneError) {
				t.Errorf("%q: Next(%d) = %q contains U+FFFD", text, id, s)
			}
			sb.WriteString(s)
		}
		sb.WriteString(d.Flush())
		if got, want := sb.String(), strings.ReplaceAll(text, metaspace, " "); got != want {
			t.Errorf("streamed %q, want %q", got, want)
		}
	}
	if !fallback {
		t.Error("no text fell back to byte tokens")
	}
}

// FuzzEncodeFamilies checks, for the tokenizers of gpt-oss, Gemma 3,
// tekken and Phi-4, that Encode never panics, returns ids in range, and
// gives the exact bytes back: none of them normalizes, but Gemma's decoder
// writes a space for U+2581.
func FuzzEncodeFamilies(f *testing.F) {
	var toks []*Tokenizer
	for _, name := range []string{"gptoss", "gemma3", "tekken", "phi4"} {
		fam := familyByName(name)
		_, tok := fam.load(f)
		toks = append(toks, tok)
		for _, c := range fam.cases(f) {
			f.Add(c.Text)
		}
	}
	for _, tc := range preTokenizeTests {
		f.Add(tc.in)
	}
	f.Add("\xe4\xbd<start_of_turn>\xa0 \u2581\u2581  <|end|>\u0301")
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range toks {
			ids := tok.Encode(s)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("Encode(%q) returned id %d out of range", s, id)
				}
			}
			want := s
			if tok.spm != nil {
				want = strings.ReplaceAll(s, metaspace, " ")
			}
			if got := string(tok.DecodeBytes(ids)); got != want {
				t.Fatalf("DecodeBytes(Encode(%q)) = %q, want %q", s, got, want)
			}
			if utf8.ValidString(s) && tok.Decode(ids) != want {
				t.Fatalf("Decode(Encode(%q)) = %q, want %q", s, tok.Decode(ids), want)
			}
			ord := tok.EncodeOrdinary(s)
			if got := string(tok.DecodeBytes(ord)); got != want {
				t.Fatalf("DecodeBytes(EncodeOrdinary(%q)) = %q, want %q", s, got, want)
			}
		}
	})
}

func BenchmarkEncodeFamilies(b *testing.B) {
	text := mixedText(1 << 20)
	for _, name := range []string{"gptoss", "gemma3", "tekken"} {
		f := familyByName(name)
		b.Run(name, func(b *testing.B) {
			_, tok := f.load(b)
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				tok.Encode(text)
			}
		})
	}
}

// TestGemma3Concurrent encodes from several goroutines at once; run with
// -race to check the word cache under SentencePiece.
func TestGemma3Concurrent(t *testing.T) {
	f := familyByName("gemma3")
	cases := f.cases(t)
	_, tok := f.load(t)
	tok.clearCache()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, c := range cases {
				if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
					t.Errorf("Encode(%q) = %v, want %v", c.Text, got, c.IDs)
					return
				}
			}
		})
	}
	wg.Wait()
}
