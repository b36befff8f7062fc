package tokenizer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

const (
	qwen3TokenizerPath = "../testdata/qwen3-tokenizer/tokenizer.json"
	goldenPublicPath   = "../testdata/golden/tokenizer_public.json"
	chatPublicPath     = "../testdata/golden/chat_public.json"
)

// loadHFConfig builds a Config from a Hugging Face tokenizer.json the way a
// GGUF converter would: added tokens with special=true become control
// tokens, the other added tokens user-defined ones.
func loadHFConfig(path string) (Config, error) {
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
			Type   string            `json:"type"`
			Vocab  map[string]int    `json:"vocab"`
			Merges []json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	size := 0
	for _, id := range f.Model.Vocab {
		size = max(size, id+1)
	}
	for _, a := range f.AddedTokens {
		size = max(size, a.ID+1)
	}
	cfg := Config{
		Tokens: make([]string, size),
		Types:  make([]int32, size),
		Merges: make([]string, len(f.Model.Merges)),
		Pre:    "qwen2",
	}
	for i := range cfg.Types {
		cfg.Types[i] = TypeNormal
	}
	for text, id := range f.Model.Vocab {
		cfg.Tokens[id] = text
	}
	for _, a := range f.AddedTokens {
		cfg.Tokens[a.ID] = a.Content
		cfg.Types[a.ID] = TypeUserDefined
		if a.Special {
			cfg.Types[a.ID] = TypeControl
		}
	}
	for i, raw := range f.Model.Merges {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			cfg.Merges[i] = s
			continue
		}
		var pair []string
		if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
			return Config{}, fmt.Errorf("%s: merge %d: %s", path, i, raw)
		}
		cfg.Merges[i] = pair[0] + " " + pair[1]
	}
	return cfg, nil
}

var qwen3 struct {
	once sync.Once
	cfg  Config
	tok  *Tokenizer
	err  error
}

// loadQwen3 returns the tokenizer built from the real Qwen3 tokenizer.json.
func loadQwen3(tb testing.TB) *Tokenizer {
	tb.Helper()
	qwen3.once.Do(func() {
		qwen3.cfg, qwen3.err = loadHFConfig(qwen3TokenizerPath)
		if qwen3.err == nil {
			qwen3.tok, qwen3.err = New(qwen3.cfg)
		}
	})
	if qwen3.err != nil {
		tb.Fatalf("loading Qwen3 tokenizer: %v", qwen3.err)
	}
	return qwen3.tok
}

type goldenCase struct {
	Text    string  `json:"text"`
	IDs     []int32 `json:"ids"`
	Decoded string  `json:"decoded"`
}

func loadGolden(tb testing.TB) []goldenCase {
	tb.Helper()
	data, err := os.ReadFile(goldenPublicPath)
	if err != nil {
		tb.Fatal(err)
	}
	var g struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		tb.Fatalf("%s: %v", goldenPublicPath, err)
	}
	if len(g.Cases) == 0 {
		tb.Fatalf("%s: no cases", goldenPublicPath)
	}
	return g.Cases
}

func TestGoldenPublic(t *testing.T) {
	tok := loadQwen3(t)
	for _, c := range loadGolden(t) {
		got := tok.Encode(c.Text)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
		if d := tok.Decode(c.IDs); d != c.Decoded {
			t.Errorf("Decode(%v) = %q, want %q", c.IDs, d, c.Decoded)
		}
		if d, want := tok.Decode(got), norm.NFC.String(c.Text); d != want {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", c.Text, d, want)
		}
	}
}

func TestChatPublic(t *testing.T) {
	tok := loadQwen3(t)
	data, err := os.ReadFile(chatPublicPath)
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Rendered string  `json:"rendered"`
		IDs      []int32 `json:"ids"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", chatPublicPath, err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", chatPublicPath)
	}
	for _, c := range cases {
		got := tok.Encode(c.Rendered)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Rendered, got, c.IDs)
		}
		if d := tok.Decode(got); d != c.Rendered {
			t.Errorf("Decode(Encode(%q)) = %q", c.Rendered, d)
		}
	}
}

func TestVocabLookups(t *testing.T) {
	tok := loadQwen3(t)
	if got, want := tok.VocabSize(), 151669; got != want {
		t.Errorf("VocabSize() = %d, want %d", got, want)
	}
	for text, want := range map[string]int32{
		"<|endoftext|>": 151643,
		"<|im_start|>":  151644,
		"<|im_end|>":    151645,
		"<tool_call>":   151657,
		"<think>":       151667,
		"</think>":      151668,
		"!":             0,
		"Ġ":             220,
		"Ċ":             198,
	} {
		id, ok := tok.TokenID(text)
		if !ok || id != want {
			t.Errorf("TokenID(%q) = %d, %v; want %d, true", text, id, ok, want)
		}
		if got := tok.TokenText(want); got != text {
			t.Errorf("TokenText(%d) = %q, want %q", want, got, text)
		}
	}
	if id, ok := tok.TokenID("no such token, surely"); ok {
		t.Errorf("TokenID(unknown) = %d, true", id)
	}
	for _, id := range []int32{-1, 151669, 1 << 30} {
		if s := tok.TokenText(id); s != "" {
			t.Errorf("TokenText(%d) = %q, want \"\"", id, s)
		}
		if s := tok.Decode([]int32{id}); s != "" {
			t.Errorf("Decode([%d]) = %q, want \"\"", id, s)
		}
	}
	if got := tok.TokenType(151645); got != TypeControl {
		t.Errorf("TokenType(<|im_end|>) = %d, want %d", got, TypeControl)
	}
	if got := tok.TokenType(151667); got != TypeUserDefined {
		t.Errorf("TokenType(<think>) = %d, want %d", got, TypeUserDefined)
	}
}

func TestSpecialTokens(t *testing.T) {
	tok := loadQwen3(t)
	for _, tc := range []struct {
		text string
		want []int32
	}{
		{"<|im_end|>", []int32{151645}},
		{"<|im_end|><|im_end|>", []int32{151645, 151645}},
		{"<|im_end|", nil}, // incomplete: ordinary text
		{"<think></think>", []int32{151667, 151668}},
		{"x<|endoftext|>y", nil},
	} {
		got := tok.Encode(tc.text)
		if tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
		if d := tok.Decode(got); d != tc.text {
			t.Errorf("Decode(Encode(%q)) = %q", tc.text, d)
		}
	}
	// "<|im_end|" is not special, so it must be split into ordinary tokens.
	if ids := tok.Encode("<|im_end|"); slices.Contains(ids, 151645) {
		t.Errorf("Encode(%q) = %v contains <|im_end|>", "<|im_end|", ids)
	}
	// Added tokens are matched before normalization: a combining mark after
	// one is normalized on its own and does not compose with its '>'.
	s := "<|im_end|>\u0338"
	ids := tok.Encode(s)
	if len(ids) == 0 || ids[0] != 151645 {
		t.Errorf("Encode(%q) = %v, want <|im_end|> first", s, ids)
	}
	if d := tok.Decode(ids); d != s {
		t.Errorf("Decode(Encode(%q)) = %q", s, d)
	}
}

// TestEncodeOrdinary: control tokens in the text are encoded as ordinary
// text, user-defined ones (<think> is not special in Qwen3's
// tokenizer.json) still as themselves, as Hugging Face tokenizers does with
// split_special_tokens.
func TestEncodeOrdinary(t *testing.T) {
	tok := loadQwen3(t)
	s := "say <|im_end|> and <think>"
	ids := tok.EncodeOrdinary(s)
	think, _ := tok.TokenID("<think>")
	if ids[len(ids)-1] != think {
		t.Errorf("EncodeOrdinary(%q) = %v, want <think> (%d) last", s, ids, think)
	}
	for _, id := range ids[:len(ids)-1] {
		if typ := tok.TokenType(id); typ != TypeNormal {
			t.Errorf("EncodeOrdinary(%q) = %v: token %d has type %d", s, ids, id, typ)
		}
	}
	if d := tok.Decode(ids); d != s {
		t.Errorf("Decode(EncodeOrdinary(%q)) = %q", s, d)
	}
}

// TestConcurrentEncode runs Encode from several goroutines at once; run
// with -race to check the word cache.
func TestConcurrentEncode(t *testing.T) {
	tok := loadQwen3(t)
	cases := loadGolden(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				c := cases[(i*7+g)%len(cases)]
				if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
					t.Errorf("Encode(%q) = %v, want %v", c.Text, got, c.IDs)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCacheEviction(t *testing.T) {
	tok := loadQwen3(t)
	var sb strings.Builder
	for i := range cacheEntries + 5000 {
		sb.WriteByte(' ')
		for k := i; k > 0; k /= 26 { // i in base 26, least significant letter first
			sb.WriteByte(byte('a' + k%26))
		}
		sb.WriteByte('a')
	}
	text := sb.String()
	ids := tok.Encode(text)
	if d := tok.Decode(ids); d != text {
		t.Error("Decode(Encode(many distinct words)) differs")
	}
	tok.cache.mu.RLock()
	n := len(tok.cache.m)
	tok.cache.mu.RUnlock()
	if n > cacheEntries {
		t.Errorf("cache holds %d words, want at most %d", n, cacheEntries)
	}
	// The results after eviction must not change.
	if again := tok.Encode(text); !slices.Equal(again, ids) {
		t.Error("second Encode differs from the first")
	}
}

func TestInvalidUTF8(t *testing.T) {
	tok := loadQwen3(t)
	for _, s := range []string{
		"\xff", "a\xffb", "\xe4\xbd", "你\xe4\xbd好", "\xf0\x9f\x98", "\xc0\xaf", " \x80\x80 x", "'\xc5",
	} {
		ids := tok.Encode(s)
		if got, want := string(tok.DecodeBytes(ids)), norm.NFC.String(s); got != want {
			t.Errorf("DecodeBytes(Encode(%q)) = %q, want %q", s, got, want)
		}
		if got, want := tok.Decode(ids), lossyString([]byte(norm.NFC.String(s))); got != want {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", s, got, want)
		}
		if d := tok.Decode(ids); !utf8.ValidString(d) {
			t.Errorf("Decode(Encode(%q)) = %q is not valid UTF-8", s, d)
		}
	}
}

func TestLossy(t *testing.T) {
	// Expected values follow Rust's String::from_utf8_lossy (one U+FFFD per
	// maximal subpart of an ill-formed sequence).
	const r = "\uFFFD"
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"\xff", r},
		{"\xe4\xbd", r},
		{"\xe4\xbda", r + "a"},
		{"\xe4\xbd\xa0", "你"},
		{"\xf0\x9f\x98\x80", "😀"},
		{"\xf0\x9f\x98", r},
		{"\xf0\x9f", r},
		{"\xf0\x80\x80", r + r + r}, // F0 80: 80 is not a valid second byte
		{"\xe0\x80\x80", r + r + r},
		{"\xed\xa0\x80", r + r + r}, // surrogate
		{"\xf4\x90\x80\x80", r + r + r + r},
		{"\xc0\xaf", r + r},
		{"\x80\x80", r + r},
		{"\xe4\xbd\xe4\xbd\xa0", r + "你"},
		{"a\xf5b", "a" + r + "b"},
	} {
		if got := lossyString([]byte(tc.in)); got != tc.want {
			t.Errorf("lossyString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	base := func() Config {
		toks := make([]string, 0, 260)
		for b := range 256 {
			toks = append(toks, string(byteToRune[b]))
		}
		toks = append(toks, "ab", "<|x|>")
		types := make([]int32, len(toks))
		for i := range types {
			types[i] = TypeNormal
		}
		types[len(types)-1] = TypeControl
		return Config{Tokens: toks, Types: types, Merges: []string{"a b"}, Pre: "qwen2"}
	}
	if _, err := New(base()); err != nil {
		t.Fatalf("New(valid) = %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"unsupported pre":  func(c *Config) { c.Pre = "falcon" },
		"empty vocabulary": func(c *Config) { c.Tokens, c.Types = nil, nil },
		"types length":     func(c *Config) { c.Types = c.Types[:3] },
		"bad type":         func(c *Config) { c.Types[5] = 42 },
		"merge no space":   func(c *Config) { c.Merges = []string{"ab"} },
		"merge two spaces": func(c *Config) { c.Merges = []string{"a b c"} },
		"merge empty side": func(c *Config) { c.Merges = []string{"a "} },
		"merge unknown":    func(c *Config) { c.Merges = []string{"a zz"} },
		"merge result":     func(c *Config) { c.Merges = []string{"b a"} },
	} {
		c := base()
		mod(&c)
		tok, err := New(c)
		if err == nil {
			t.Errorf("%s: New succeeded", name)
			continue
		}
		if tok != nil {
			t.Errorf("%s: New returned a tokenizer with error %v", name, err)
		}
		if !strings.HasPrefix(err.Error(), "tokenizer: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
}

func TestSmallVocab(t *testing.T) {
	// A vocabulary without byte tokens for most bytes, nil Types, and
	// merges whose ranks decide between overlapping pairs.
	cfg := Config{
		Tokens: []string{"a", "b", "c", "ab", "bc", "abc", "Ġ", "Ġa"},
		Merges: []string{"b c", "a b", "a bc", "Ġ a"},
	}
	tok, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want []int32
	}{
		{"abc", []int32{5}},       // b c first, then a bc
		{"abab", []int32{3, 3}},   // a b twice
		{"aa", []int32{0, 0}},     // no merge
		{" a", []int32{7}},        // Ġ a
		{"xyz a", []int32{7}},     // bytes without tokens are dropped
		{"", []int32{}},           //
		{"<|im_end|>", []int32{}}, // no added tokens: nothing encodable
		{"ab\u00e9", []int32{3}},  // é has no tokens
		{"abcabcabc", []int32{5, 5, 5}},
	} {
		got := tok.Encode(tc.text)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	if d := tok.Decode([]int32{5, 7, 3}); d != "abc aab" {
		t.Errorf("Decode = %q, want %q", d, "abc aab")
	}
}

// TestBPELargeMatchesSmall checks that the priority-queue BPE used for long
// words agrees with the quadratic scan used for short ones.
func TestBPELargeMatchesSmall(t *testing.T) {
	tok := loadQwen3(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "e", "t", "h", " ", "in", "er", "the", "\n", "0", "你", "😀", "é", "-", "=", "*", "\t"}
	for range 3000 {
		var sb strings.Builder
		n := 1 + rng.IntN(40)
		for range n {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		w := sb.String()
		if len(w) > smallWord {
			continue
		}
		small := tok.bpe(nil, w)
		large := tok.bpeLarge(nil, w)
		if !slices.Equal(small, large) {
			t.Fatalf("bpe(%q) = %v, bpeLarge = %v", w, small, large)
		}
	}
	// Long words go through bpeLarge; they must still round-trip.
	for _, w := range []string{strings.Repeat("a", 1000), strings.Repeat("ab", 300), strings.Repeat(" ", 500), strings.Repeat("=-", 200)} {
		ids := tok.Encode(w)
		if d := tok.Decode(ids); d != w {
			t.Errorf("Decode(Encode(%d-byte word)) differs", len(w))
		}
	}
	// A long run of 'a' is 'a'-tokens merged greedily; compare with the
	// golden 70-'a' case split the same way.
	ids := tok.Encode(strings.Repeat("a", 700))
	ids70 := tok.Encode(strings.Repeat("a", 70))
	if len(ids) == 0 || len(ids70) == 0 {
		t.Fatal("empty encoding")
	}
}

// mixedText returns about n bytes of deterministic mixed text: English
// prose, code, CJK, emoji, numbers and whitespace runs.
func mixedText(n int) string {
	parts := []string{
		"The quick brown fox jumps over the lazy dog. ",
		"Once upon a time, in a small village by the sea, there lived a baker who made bread every morning.\n",
		"I'm sure you'll see they've done what we'd said it's about. ",
		"func main() {\n\tfmt.Println(\"hello, world\")\n\tfor i := 0; i < 10; i++ {\n\t\tx += i * 2\n\t}\n}\n",
		"def f(x):\n    return [i**2 for i in range(x) if i % 2 == 0]\n\n",
		"<html><body><p class=\"x\">Text &amp; more</p></body></html>\n",
		"我爱自然语言处理。今天天气很好，我们去公园散步吧！",
		"こんにちは世界、カタカナ、ひらがな。",
		"안녕하세요 세계 ",
		"Привет, мир! Как дела? ",
		"emoji 😀😃😄 👍🏽 🇺🇸 👨‍👩‍👧‍👦 🤖🧠✨ ",
		"math ∑∫∂√∞ ≤ ≥ ≠ ± ",
		"   \n   \n\n\r\n  ",
		"!!!???...,,,;;;::: --- *** ___ === ",
		"naïve café résumé coöperate Ünïcödé ",
	}
	rng := rand.New(rand.NewPCG(42, 7))
	var sb strings.Builder
	sb.Grow(n + 256)
	for sb.Len() < n {
		switch rng.IntN(4) {
		case 0:
			fmt.Fprintf(&sb, "%d.%02d ", rng.IntN(1000000), rng.IntN(100))
		case 1:
			// A pseudo-random word, so that not every word repeats.
			for k := 3 + rng.IntN(8); k > 0; k-- {
				sb.WriteByte(byte('a' + rng.IntN(26)))
			}
			sb.WriteByte(' ')
		default:
			sb.WriteString(parts[rng.IntN(len(parts))])
		}
	}
	return sb.String()
}

func TestEncodeSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping speed test in short mode")
	}
	tok := loadQwen3(t)
	text := mixedText(1 << 20)
	start := time.Now()
	ids := tok.Encode(text)
	elapsed := time.Since(start)
	t.Logf("encoded %d bytes into %d tokens in %v", len(text), len(ids), elapsed)
	if elapsed > 3*time.Second {
		t.Errorf("encoding 1 MB took %v, want under 3s", elapsed)
	}
	if d := tok.Decode(ids); d != norm.NFC.String(text) {
		t.Error("Decode(Encode(mixed text)) differs from the normalized text")
	}
}

func BenchmarkEncode(b *testing.B) {
	tok := loadQwen3(b)
	text := mixedText(1 << 20)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		tok.Encode(text)
	}
}

// BenchmarkEncodeCold is BenchmarkEncode with the word cache emptied before
// every run, as for the first text a new Tokenizer sees.
func BenchmarkEncodeCold(b *testing.B) {
	tok := loadQwen3(b)
	text := mixedText(1 << 20)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		tok.clearCache()
		b.StartTimer()
		tok.Encode(text)
	}
}

func BenchmarkDecode(b *testing.B) {
	tok := loadQwen3(b)
	text := mixedText(1 << 20)
	ids := tok.Encode(text)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		tok.Decode(ids)
	}
}

func BenchmarkNew(b *testing.B) {
	loadQwen3(b)
	cfg := qwen3.cfg
	for b.Loop() {
		if _, err := New(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
