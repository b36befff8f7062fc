package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// splitters are the split expressions of the pre-tokenizers by the names
// testdata/splits.json has them under.
var splitters = map[string]splitter{
	"qwen2":  preQwen2.split,
	"cl100k": preLlama3.split,
	"o200k":  preO200k.split,
	"tekken": preTekken.split,
}

// TestSplitsJS compares the matchers with JavaScript's backtracking
// regular expressions on random strings over the character classes the
// expressions tell apart (tools/archfixtures/tokenizer_splits.js).
func TestSplitsJS(t *testing.T) {
	data, err := os.ReadFile("testdata/splits.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Splits map[string][]struct {
			Text   string   `json:"text"`
			Pieces []string `json:"pieces"`
		} `json:"splits"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for name, sp := range splitters {
		cases := f.Splits[name]
		if len(cases) < 100 {
			t.Fatalf("%s: %d cases", name, len(cases))
		}
		bad := 0
		for _, c := range cases {
			if got := sp.split(c.Text); !slices.Equal(got, c.Pieces) {
				if bad++; bad <= 5 {
					t.Errorf("%s: split(%q)\n got %q\nwant %q", name, c.Text, got, c.Pieces)
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d of %d splits differ", name, bad, len(cases))
		}
	}
}

// TestSplitO200k: splits worked out by hand from the expressions.
func TestSplitO200k(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"o200k", "HTTPServer helloWorld", []string{"HTTPServer", " hello", "World"}},
		{"o200k", "DON'T don't I'D'VE", []string{"DON'T", " don't", " I'D", "'VE"}},
		{"o200k", "ABC def", []string{"ABC", " def"}},
		{"o200k", "1234567", []string{"123", "456", "7"}},
		{"o200k", "a\u0301b \u0301x", []string{"a\u0301b", " \u0301x"}},
		{"o200k", "!!\n/x", []string{"!!\n/", "x"}},
		{"o200k", " !x", []string{" !", "x"}},
		{"o200k", "日本語のテキスト", []string{"日本語のテキスト"}},
		{"o200k", "a  \n\n b", []string{"a", "  \n\n", " b"}},
		{"tekken", "DON'T don't", []string{"DON", "'T", " don", "'t"}},
		{"tekken", "1234", []string{"1", "2", "3", "4"}},
		{"tekken", "getURLForID", []string{"get", "URLFor", "ID"}},
	} {
		if got := splitters[tc.name].split(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s split(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// FuzzSplitO200k checks that the o200k and tekken matchers cover any text
// exactly, in pieces that each make progress, with at most the allowed
// numbers in a row.
func FuzzSplitO200k(f *testing.F) {
	for _, tc := range preTokenizeTests {
		f.Add(tc.in)
	}
	f.Add("HTTPServer DON'T \u0301x ǅemal ʰA\xff'\xc5")
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range []string{"o200k", "tekken"} {
			sp := splitters[name]
			pieces := sp.split(s)
			if j := strings.Join(pieces, ""); j != s {
				t.Fatalf("%s: split(%q) joins to %q", name, s, j)
			}
			for _, p := range pieces {
				if p == "" {
					t.Fatalf("%s: split(%q) has an empty piece", name, s)
				}
				if c, _ := classAt(p, 0); c == classNumber && utf8.RuneCountInString(p) > sp.digits {
					t.Fatalf("%s: split(%q): piece %q has more than %d numbers", name, s, p, sp.digits)
				}
			}
		}
	})
}

// TestPreTokenizerName names the split expressions of real and fixture
// tokenizer.json files as llama.cpp's converter does.
func TestPreTokenizerName(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string
	}{
		{qwen3TokenizerPath, "qwen2"},
		{llama3TokenizerPath, "llama-bpe"},
		{"../testdata/gptoss-tokenizer/tokenizer.json.gz", "gpt-4o"},
		{"../testdata/gpt4o-tokenizer/tokenizer.json.gz", "gpt-4o"},
		{"../testdata/tekken-tokenizer/tokenizer.json", "tekken"},
		{"../testdata/phi4-tokenizer/tokenizer.json", "smaug-bpe"},
	} {
		data, err := readMaybeGzip(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Normalizer *struct {
				Type string `json:"type"`
			} `json:"normalizer"`
			PreTokenizer struct {
				Pretokenizers []struct {
					Type    string `json:"type"`
					Pattern struct {
						Regex string `json:"Regex"`
					} `json:"pattern"`
				} `json:"pretokenizers"`
			} `json:"pre_tokenizer"`
			Model struct {
				IgnoreMerges bool `json:"ignore_merges"`
			} `json:"model"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		regex := f.PreTokenizer.Pretokenizers[0].Pattern.Regex
		nfc := f.Normalizer != nil && f.Normalizer.Type == "NFC"
		if got := PreTokenizerName(regex, nfc, f.Model.IgnoreMerges); got != tc.want {
			t.Errorf("%s: PreTokenizerName = %q, want %q", tc.path, got, tc.want)
		}
	}
	if got := PreTokenizerName(`\s+`, false, false); got != "" {
		t.Errorf("PreTokenizerName(unknown) = %q", got)
	}
	for _, name := range PreTokenizers() {
		if _, err := New(Config{Tokens: []string{"a", "b", "ab"}, Merges: []string{"a b"}, Pre: name}); err != nil {
			t.Errorf("New with pre-tokenizer %q: %v", name, err)
		}
	}
}
