package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A family is a tokenizer fixture in testdata/NAME-tokenizer: a Hugging
// Face tokenizer.json (gzipped) and cases.json, the ids that Hugging Face
// tokenizers or transformers.js give for texts in several scripts.
type family struct {
	name string
	pre  string // tokenizer.ggml.pre of a byte-level vocabulary; "" for SentencePiece
	// generator says how the fixture is made, for the message when it is
	// missing.
	generator string
}

var families = []family{
	{"gptoss", "gpt-4o", "tools/archfixtures/tokenizer_cases.js"},
	{"gpt4o", "gpt-4o", "tools/archfixtures/tokenizer_cases.js"},
	{"gemma3", "", "tools/archfixtures/tokenizer_cases.js"},
	{"tekken", "tekken", "tools/archfixtures/tokenizer_synth.py"},
	{"phi4", "dbrx", "tools/archfixtures/tokenizer_synth.py"},
}

func (f family) dir() string { return "../testdata/" + f.name + "-tokenizer/" }

// tokenizerPath returns the tokenizer.json of the fixture, gzipped or not.
func (f family) tokenizerPath() string {
	if _, err := os.Stat(f.dir() + "tokenizer.json"); err == nil {
		return f.dir() + "tokenizer.json"
	}
	return f.dir() + "tokenizer.json.gz"
}

// skipMissing skips the test if err says that a fixture file is missing.
func (f family) skipMissing(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("%s fixture not made yet (%v): see %s", f.name, err, f.generator)
	}
}

var familyCache sync.Map // name → *familyTok

type familyTok struct {
	once sync.Once
	cfg  Config
	tok  *Tokenizer
	err  error
}

// load returns the Config a GGUF converter makes of the fixture's
// tokenizer.json and the Tokenizer built from it.
func (f family) load(tb testing.TB) (Config, *Tokenizer) {
	tb.Helper()
	v, _ := familyCache.LoadOrStore(f.name, new(familyTok))
	ft := v.(*familyTok)
	ft.once.Do(func() {
		if f.pre == "" {
			ft.cfg, ft.err = loadHFSPMConfig(f.tokenizerPath())
		} else {
			ft.cfg, ft.err = loadHFConfig(f.tokenizerPath())
			ft.cfg.Pre = f.pre
		}
		if ft.err == nil {
			ft.tok, ft.err = New(ft.cfg)
		}
	})
	f.skipMissing(tb, ft.err)
	if ft.err != nil {
		tb.Fatalf("%s: %v", f.name, ft.err)
	}
	return ft.cfg, ft.tok
}

// cases returns the fixture's cases.json.
func (f family) cases(tb testing.TB) []goldenCase {
	tb.Helper()
	data, err := os.ReadFile(f.dir() + "cases.json")
	f.skipMissing(tb, err)
	if err != nil {
		tb.Fatal(err)
	}
	var g struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		tb.Fatalf("%s cases.json: %v", f.name, err)
	}
	if len(g.Cases) < 20 {
		tb.Fatalf("%s cases.json: %d cases", f.name, len(g.Cases))
	}
	return g.Cases
}

// checkCases compares tok's ids and text with the fixture's cases.
func checkCases(t *testing.T, name string, tok *Tokenizer, cases []goldenCase) {
	t.Helper()
	for _, c := range cases {
		if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("%s: Encode(%q)\n got %v\nwant %v", name, c.Text, got, c.IDs)
		}
		if d := tok.Decode(c.IDs); d != c.Decoded {
			t.Errorf("%s: Decode(%v) = %q, want %q", name, c.IDs, d, c.Decoded)
		}
	}
}

// TestFamilies: the tokenizers of gpt-oss and gpt-4o (o200k, "gpt-4o"),
// Gemma 3 (SentencePiece BPE with byte fallback), Mistral's tekken and
// Phi-4 ("dbrx") give the ids of the reference for English, code, CJK,
// Arabic, Hindi, emoji, combining marks, whitespace runs and special
// tokens, and the text back.
func TestFamilies(t *testing.T) {
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			cases := f.cases(t)
			_, tok := f.load(t)
			checkCases(t, f.name, tok, cases)
		})
	}
}

// TestO200kIgnoreMerges: gpt-oss's tokenizer.json has ignore_merges and
// gpt-4o's (Xenova's) not; both are tiktoken's vocabulary, whose merges
// build every token, so the flag changes nothing and "gpt-4o" serves both.
func TestO200kIgnoreMerges(t *testing.T) {
	for _, name := range []string{"gptoss", "gpt4o"} {
		f := familyByName(name)
		cases := f.cases(t)
		cfg, _ := f.load(t)
		tok, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tok.pre.ignoreMerges = !tok.pre.ignoreMerges
		checkCases(t, name+" with ignore_merges flipped", tok, cases)
	}
}

func familyByName(name string) family {
	for _, f := range families {
		if f.name == name {
			return f
		}
	}
	panic("no family " + name)
}

// loadHFSPMConfig builds a Config from a Hugging Face tokenizer.json of a
// SentencePiece BPE model (byte_fallback, merges made from the model's
// scores) the way llama.cpp's converter does from the SentencePiece model:
// added tokens that are special (or look special) become control tokens,
// the others user-defined ones with spaces for U+2581, <0xXX> tokens byte
// tokens. tokenizer.json keeps the merges but not the scores; the scores
// here are minus the rank of the first merge that makes each token, which
// orders merges as the scores they came from did.
func loadHFSPMConfig(path string) (Config, error) {
	data, err := readMaybeGzip(path)
	if err != nil {
		return Config{}, err
	}
	var f struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Type         string         `json:"type"`
			ByteFallback bool           `json:"byte_fallback"`
			Vocab        map[string]int `json:"vocab"`
			Merges       [][2]string    `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if f.Model.Type != "BPE" || !f.Model.ByteFallback {
		return Config{}, fmt.Errorf("%s: not a BPE model with byte fallback", path)
	}
	size := 0
	for _, id := range f.Model.Vocab {
		size = max(size, id+1)
	}
	for _, a := range f.AddedTokens {
		size = max(size, a.ID+1)
	}
	cfg := Config{
		Model:  ModelSPM,
		Tokens: make([]string, size),
		Types:  make([]int32, size),
		Scores: make([]float32, size),
		BOS:    -1,
	}
	for text, id := range f.Model.Vocab {
		cfg.Tokens[id], cfg.Types[id] = text, TypeNormal
		if _, ok := parseByteToken(text); ok {
			cfg.Types[id] = TypeByte
		}
	}
	for _, a := range f.AddedTokens {
		cfg.Tokens[a.ID], cfg.Types[a.ID] = a.Content, TypeControl
		if !a.Special && !looksSpecial(a.Content) {
			cfg.Tokens[a.ID] = strings.ReplaceAll(a.Content, metaspace, " ")
			cfg.Types[a.ID] = TypeUserDefined
		}
		if a.Content == "<bos>" {
			cfg.BOS, cfg.AddBOS = int32(a.ID), true
		}
	}
	for i := range cfg.Scores {
		cfg.Scores[i] = float32(math.Inf(-1))
	}
	seen := make(map[string]bool, len(f.Model.Merges))
	for rank, m := range f.Model.Merges {
		tok := m[0] + m[1]
		id, ok := f.Model.Vocab[tok]
		if !ok {
			return Config{}, fmt.Errorf("%s: merge %d makes %q, not in the vocabulary", path, rank, tok)
		}
		if !seen[tok] {
			seen[tok] = true
			cfg.Scores[id] = -float32(rank)
		}
	}
	return cfg, nil
}

// looksSpecial is llama.cpp's converter's does_token_look_special.
func looksSpecial(s string) bool {
	switch s {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	return strings.HasPrefix(s, "<|") && strings.HasSuffix(s, "|>") ||
		strings.HasPrefix(s, "<｜") && strings.HasSuffix(s, "｜>") ||
		strings.HasPrefix(s, "<unused") && strings.HasSuffix(s, ">")
}
