package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzEncode checks that Encode never panics, that every id it returns is
// in range, and that decoding gives the text back.
//
// The exact round trip is on bytes: DecodeBytes(Encode(s)) == NFC(s) for
// every s, valid UTF-8 or not, because Encode carries invalid bytes through
// as byte tokens (norm leaves them alone). Decode then replaces ill-formed
// UTF-8 by U+FFFD, so Decode(Encode(s)) == NFC(s) holds for valid UTF-8 s.
//
// One caveat: added tokens are split off the raw text before
// normalization, as in Hugging Face tokenizers, so a combining mark right
// after an added token (say "<think>\u0338") is not composed with it. For s
// that contains added-token text the test therefore compares
// NFC(Decode(Encode(s))) with NFC(s) instead.
func FuzzEncode(f *testing.F) {
	tok := loadQwen3(f)
	for _, c := range loadGolden(f) {
		f.Add(c.Text)
	}
	for _, tc := range preTokenizeTests {
		f.Add(tc.in)
	}
	f.Add("<|im_end|>\u0338")
	f.Add("\xe4\xbd<think>\xa0")
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("Encode(%q) returned id %d out of range", s, id)
			}
		}
		want := norm.NFC.String(s)
		hasAdded := false
		for text := range tok.added.ids {
			if strings.Contains(s, text) {
				hasAdded = true
				break
			}
		}
		raw := string(tok.DecodeBytes(ids))
		dec := tok.Decode(ids)
		if hasAdded {
			raw, dec = norm.NFC.String(raw), norm.NFC.String(dec)
		}
		if raw != want {
			t.Fatalf("DecodeBytes(Encode(%q)) = %q, want %q", s, raw, want)
		}
		if utf8.ValidString(s) && dec != want {
			t.Fatalf("Decode(Encode(%q)) = %q, want %q", s, dec, want)
		}
		if !utf8.ValidString(dec) {
			t.Fatalf("Decode(Encode(%q)) = %q is not valid UTF-8", s, dec)
		}
	})
}
