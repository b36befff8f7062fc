package tokenizer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

const (
	llama3TokenizerPath = "../testdata/llama3-tokenizer/tokenizer.json.gz"
	llama3CasesPath     = "../testdata/llama3-tokenizer/cases.json"
)

// readMaybeGzip reads path, gunzipping it when its name ends in ".gz".
func readMaybeGzip(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".gz") {
		return data, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

var llama3 struct {
	once sync.Once
	tok  *Tokenizer
	err  error
}

// loadLlama3 returns the tokenizer built from Meta's Llama 3 tokenizer.json
// with llama.cpp's pre-tokenizer name for it, "llama-bpe".
func loadLlama3(tb testing.TB) *Tokenizer {
	tb.Helper()
	llama3.once.Do(func() {
		cfg, err := loadHFConfig(llama3TokenizerPath)
		if err != nil {
			llama3.err = err
			return
		}
		cfg.Pre = "llama-bpe"
		llama3.tok, llama3.err = New(cfg)
	})
	if llama3.err != nil {
		tb.Fatalf("loading Llama 3 tokenizer: %v", llama3.err)
	}
	return llama3.tok
}

// TestLlama3Golden: the ids of Hugging Face's Llama 3 tokenizer (run by
// transformers.js, tools/archfixtures/llama3_tokenizer.js) for text with
// numbers, contractions, Unicode, whitespace runs and special tokens, and
// the text back from them.
func TestLlama3Golden(t *testing.T) {
	t.Parallel()
	tok := loadLlama3(t)
	data, err := os.ReadFile(llama3CasesPath)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 10 {
		t.Fatalf("%d cases", len(g.Cases))
	}
	for _, c := range g.Cases {
		if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
		if d := tok.Decode(c.IDs); d != c.Decoded {
			t.Errorf("Decode(%v) = %q, want %q", c.IDs, d, c.Decoded)
		}
	}
}

// TestLlama3NoNormalization: Llama 3 encodes text as it is (no NFC), so a
// decomposed accent comes back decomposed, unlike with Qwen's tokenizer.
func TestLlama3NoNormalization(t *testing.T) {
	tok := loadLlama3(t)
	for _, s := range []string{"e\u0301", "\u212b", "ﬁ"} {
		if got := tok.Decode(tok.Encode(s)); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
	}
}

// FuzzEncodeLlama3 checks that Encode with Llama 3's tokenizer never
// panics, returns ids in range, and gives the exact bytes back (nothing is
// normalized), and that its pre-tokens cover the text with at most three
// numbers in a row.
func FuzzEncodeLlama3(f *testing.F) {
	tok := loadLlama3(f)
	for _, tc := range preTokenizeLlama3Tests {
		f.Add(tc.in)
	}
	for _, tc := range preTokenizeTests {
		f.Add(tc.in)
	}
	f.Add("<|eot_id|>12345\u0301")
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("Encode(%q) returned id %d out of range", s, id)
			}
		}
		if got := string(tok.DecodeBytes(ids)); got != s {
			t.Fatalf("DecodeBytes(Encode(%q)) = %q", s, got)
		}
		pieces := preTokenize(s, 3)
		if j := strings.Join(pieces, ""); j != s {
			t.Fatalf("preTokenize(%q, 3) joins to %q", s, j)
		}
		for _, p := range pieces {
			if n := utf8.RuneCountInString(p); n > 3 {
				if c, _ := classAt(p, 0); c == classNumber {
					t.Fatalf("preTokenize(%q, 3): piece %q of %d numbers", s, p, n)
				}
			}
		}
	})
}
