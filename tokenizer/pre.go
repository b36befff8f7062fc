package tokenizer

import (
	"sort"
	"strconv"
	"strings"
)

// A splitter splits text into pre-tokens by one of the split expressions of
// byte-level BPE tokenizers. Go's regexp cannot express them (they use the
// lookahead \s+(?!\S) and rely on backtracking), so each family has a
// hand-written matcher with the leftmost-first semantics of a backtracking
// engine such as Oniguruma, which Hugging Face tokenizers uses.
type splitter struct {
	// o200k selects the expression of OpenAI's o200k encoding (words split
	// at case changes, nextPieceO200k) over cl100k's (nextPiece).
	o200k bool
	// digits is the most numbers a pre-token holds in a row.
	digits int
	// contractions lets an o200k word end in 's, 't, 're, 've, 'm, 'll or
	// 'd; cl100k's expression always has them as pre-tokens of their own.
	contractions bool
}

// next returns the end of the pre-token that starts at s[i], for i < len(s).
func (p splitter) next(s string, i int) int {
	if p.o200k {
		return nextPieceO200k(s, i, p.digits, p.contractions)
	}
	return nextPiece(s, i, p.digits)
}

// split returns the pre-tokens of s. Encode walks them with next directly.
func (p splitter) split(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := p.next(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// A preTokenizer is what a tokenizer.ggml.pre name stands for: how text is
// normalized and split before byte-level BPE, and how a GGUF of that kind
// is used.
type preTokenizer struct {
	split splitter
	// regex is the Split expression of the Hugging Face tokenizer.json.
	regex string
	// nfc: the text is NFC-normalized first.
	nfc bool
	// ignoreMerges: a pre-token that is a token of its own is taken whole,
	// before merges (tokenizer.json's ignore_merges, and tiktoken's rule).
	ignoreMerges bool
	// addBOS is llama.cpp's default for tokenizer.ggml.add_bos_token.
	addBOS bool
}

// The split expressions of the families, as their tokenizer.json files
// write them.
const (
	// qwen2Regex is Qwen2's and Qwen3's: cl100k's with single digits.
	qwen2Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// cl100kRegex is OpenAI's cl100k expression: Llama 3, DBRX, Phi-4.
	cl100kRegex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// o200kRegex is OpenAI's o200k expression: gpt-4o, gpt-oss, Phi-4-mini.
	o200kRegex = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// tekkenRegex is Mistral's tekken expression: o200k's without
	// contractions, with single digits.
	tekkenRegex = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

var (
	preQwen2  = preTokenizer{split: splitter{digits: 1}, regex: qwen2Regex, nfc: true}
	preLlama3 = preTokenizer{split: splitter{digits: 3}, regex: cl100kRegex, ignoreMerges: true, addBOS: true}
	preCL100k = preTokenizer{split: splitter{digits: 3}, regex: cl100kRegex}
	preO200k  = preTokenizer{split: splitter{o200k: true, digits: 3, contractions: true}, regex: o200kRegex, ignoreMerges: true}
	preTekken = preTokenizer{split: splitter{o200k: true, digits: 1}, regex: tekkenRegex, ignoreMerges: true, addBOS: true}
)

// preTokenizers maps the tokenizer.ggml.pre names that llama.cpp's
// converter writes to what they stand for. Aliases are as in llama.cpp's
// llama-vocab.cpp: "llama-bpe" is the Llama 3 tokenizer.json with
// ignore_merges, "smaug-bpe" one without it (as some Llama 3 fine-tunes
// ship it), "dbrx" Phi-4's and DBRX's cl100k vocabulary (no
// ignore_merges); "gpt-4o" is o200k (gpt-oss, Phi-4-mini); "tekken" is
// Mistral's (Nemo, Small 3.x, Devstral, Ministral); "pixtral" is a Mistral
// tokenizer.json that splits by Llama 3's expression. o200k's
// tokenizer.json of gpt-oss has ignore_merges, which is also tiktoken's
// rule; tekken's is tiktoken's too.
var preTokenizers = map[string]preTokenizer{
	"qwen2":     preQwen2,
	"llama-bpe": preLlama3,
	"llama3":    preLlama3,
	"llama-v3":  preLlama3,
	"pixtral":   preLlama3,
	"smaug-bpe": preCL100k,
	"dbrx":      preCL100k,
	"gpt-4o":    preO200k,
	"tekken":    preTekken,
}

// PreTokenizers returns the tokenizer.ggml.pre names of byte-level BPE
// ("gpt2") vocabularies that New accepts, sorted.
func PreTokenizers() []string {
	names := make([]string, 0, len(preTokenizers))
	for name := range preTokenizers {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// PreTokenizerName returns the tokenizer.ggml.pre name under which this
// package (and llama.cpp) splits text as a Hugging Face tokenizer.json does
// whose pre-tokenizer splits by the regular expression regex and maps to
// bytes, whose normalizer is NFC (nfc) or none, and whose BPE model has
// the ignore_merges flag given. It returns "" if there is none. Where
// llama.cpp has several names for one behavior it returns the one its
// converter writes for the best-known model: "qwen2", "llama-bpe",
// "smaug-bpe", "gpt-4o" and "tekken".
//
// ignore_merges changes nothing for vocabularies whose merges build every
// token, as those converted from tiktoken do, so o200k and tekken
// expressions are named whatever the flag.
func PreTokenizerName(regex string, nfc, ignoreMerges bool) string {
	for _, name := range []string{"qwen2", "llama-bpe", "smaug-bpe", "gpt-4o", "tekken"} {
		p := preTokenizers[name]
		if p.regex != regex || p.nfc != nfc {
			continue
		}
		if p.split.o200k || p.ignoreMerges == ignoreMerges || name == "qwen2" {
			return name
		}
	}
	return ""
}

// preTokenizerNames lists the names for error messages.
func preTokenizerNames() string {
	names := PreTokenizers()
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	return strings.Join(names, ", ")
}
