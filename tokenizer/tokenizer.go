// Package tokenizer implements the byte-level BPE tokenizer used by Qwen2 and
// Qwen3 models (GGUF tokenizer.ggml.model "gpt2" with
// tokenizer.ggml.pre "qwen2").
//
// It reproduces the Hugging Face tokenizers pipeline of the Qwen3
// tokenizer.json: added (special) tokens are split off the raw text first,
// the text between them is NFC-normalized, split into pre-tokens by the
// Qwen2 regular expression, mapped to GPT-2's byte-level alphabet, and
// encoded by BPE merges in rank order.
//
// A Tokenizer is safe for concurrent use by multiple goroutines.
// A StreamDecoder is not.
package tokenizer

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Token types as GGUF stores them in tokenizer.ggml.token_type.
const (
	TypeNormal      = 1
	TypeUnknown     = 2
	TypeControl     = 3
	TypeUserDefined = 4
	TypeUnused      = 5
	TypeByte        = 6
)

// Config holds the tokenizer data found in GGUF metadata.
type Config struct {
	// Tokens maps token ids to token text (tokenizer.ggml.tokens). Normal
	// tokens are byte-level encoded, as in GGUF and tokenizer.json;
	// control and user-defined tokens are plain text.
	Tokens []string

	// Types holds the type of each token (tokenizer.ggml.token_type), one of
	// the Type constants. It must be nil, meaning every token is normal, or
	// as long as Tokens. A type of 0 is taken as normal.
	Types []int32

	// Merges lists the BPE merges (tokenizer.ggml.merges) in rank order,
	// each as the two token texts separated by a single space.
	Merges []string

	// Pre names the pre-tokenizer (tokenizer.ggml.pre): "qwen2" (Qwen2
	// and Qwen3: NFC normalization, then the Qwen2 split) or "llama-bpe"
	// (Llama 3: no normalization, numbers split in threes, and a
	// pre-token that is a token of its own taken whole, before merges);
	// "" means "qwen2".
	Pre string
}

// A Tokenizer converts between text and token ids.
type Tokenizer struct {
	tokens []string
	types  []int32

	vocab  map[string]int32 // text of BPE tokens (every type except control and user-defined)
	added  map[string]int32 // text of control and user-defined tokens
	byteID [256]int32       // token for each single byte, or -1
	merges *mergeTable

	// Added-token matching: candidates by first byte, longest first.
	special      [256][]addedToken
	specialFirst [256]bool
	hasSpecial   bool

	// Decoded bytes of every token: pieces[offs[id]:offs[id+1]].
	pieces []byte
	offs   []uint32

	cache wordCache

	// The pre-tokenizer's settings (Config.Pre).
	digits       int  // numbers a pre-token holds in a row
	nfc          bool // the text is NFC-normalized
	ignoreMerges bool // a pre-token in the vocabulary is one token
}

// Limits of the word cache.
const (
	cacheMinWord = 2       // shorter pre-tokens are not worth caching
	cacheMaxWord = 64      // longer pre-tokens are rare; not cached
	cacheEntries = 1 << 16 // the cache is emptied when it grows past this
)

// wordCache remembers the BPE encoding of recently seen pre-tokens.
type wordCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

// get returns the cached encoding of word. The result must not be modified.
func (c *wordCache) get(word string) ([]int32, bool) {
	c.mu.RLock()
	ids, ok := c.m[word]
	c.mu.RUnlock()
	return ids, ok
}

// put caches ids as the encoding of word, first emptying the cache if it is
// full. The cache keeps its own copy of word but not of ids.
func (c *wordCache) put(word string, ids []int32) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheEntries {
		c.m = make(map[string][]int32)
	}
	c.m[strings.Clone(word)] = ids
	c.mu.Unlock()
}

// addedToken is a control or user-defined token matched in raw text.
type addedToken struct {
	text string
	id   int32
}

// New returns a Tokenizer for cfg. It reports an error if the
// pre-tokenizer is not supported, if Types does not match Tokens, or if a
// merge is malformed or names a token that is not in the vocabulary.
func New(cfg Config) (*Tokenizer, error) {
	digits, nfc, ignoreMerges := 1, true, false
	switch cfg.Pre {
	case "", "qwen2":
	case "llama-bpe":
		digits, nfc, ignoreMerges = 3, false, true
	default:
		return nil, fmt.Errorf("tokenizer: unsupported pre-tokenizer %q (want \"qwen2\" or \"llama-bpe\")", cfg.Pre)
	}
	if len(cfg.Tokens) == 0 {
		return nil, errors.New("tokenizer: empty vocabulary")
	}
	if len(cfg.Tokens) > 1<<31-1 {
		return nil, fmt.Errorf("tokenizer: vocabulary of %d tokens is too large", len(cfg.Tokens))
	}
	if cfg.Types != nil && len(cfg.Types) != len(cfg.Tokens) {
		return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(cfg.Types), len(cfg.Tokens))
	}
	t := &Tokenizer{
		tokens: slices.Clone(cfg.Tokens),
		types:  make([]int32, len(cfg.Tokens)),
		vocab:  make(map[string]int32, len(cfg.Tokens)),
		added:  make(map[string]int32),

		digits: digits, nfc: nfc, ignoreMerges: ignoreMerges,
	}
	for id, text := range cfg.Tokens {
		typ := int32(TypeNormal)
		if cfg.Types != nil {
			typ = cfg.Types[id]
		}
		switch typ {
		case 0:
			typ = TypeNormal
		case TypeNormal, TypeUnknown, TypeControl, TypeUserDefined, TypeUnused, TypeByte:
		default:
			return nil, fmt.Errorf("tokenizer: token %d (%q): invalid token type %d", id, text, typ)
		}
		t.types[id] = typ
		if text == "" {
			continue
		}
		m := t.vocab
		if isAdded(typ) {
			m = t.added
		}
		if _, dup := m[text]; !dup {
			m[text] = int32(id)
		}
	}

	for b := range 256 {
		t.byteID[b] = t.lookupBPE(string(byteToRune[b]))
	}

	t.merges = newMergeTable(len(cfg.Merges))
	var ab []byte
	for rank, m := range cfg.Merges {
		a, b, ok := strings.Cut(m, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("tokenizer: merge %d (%q): want two tokens separated by one space", rank, m)
		}
		ab = append(append(ab[:0], a...), b...)
		ida, idb, idm := t.lookupBPE(a), t.lookupBPE(b), t.lookupBPE(string(ab))
		var missing string
		switch {
		case ida < 0:
			missing = a
		case idb < 0:
			missing = b
		case idm < 0:
			missing = string(ab)
		default:
			t.merges.insert(ida, idb, int32(rank), idm)
			continue
		}
		return nil, fmt.Errorf("tokenizer: merge %d (%q): token %q not in vocabulary", rank, m, missing)
	}

	for text, id := range t.added {
		t.special[text[0]] = append(t.special[text[0]], addedToken{text, id})
		t.specialFirst[text[0]] = true
		t.hasSpecial = true
	}
	for i := range t.special {
		s := t.special[i]
		sort.Slice(s, func(a, b int) bool {
			if len(s[a].text) != len(s[b].text) {
				return len(s[a].text) > len(s[b].text)
			}
			return s[a].text < s[b].text
		})
	}

	t.offs = make([]uint32, len(cfg.Tokens)+1)
	for id, text := range cfg.Tokens {
		switch t.types[id] {
		case TypeControl, TypeUserDefined, TypeUnknown:
			t.pieces = append(t.pieces, text...)
		case TypeUnused:
		default:
			t.pieces = byteLevelDecode(t.pieces, text)
		}
		if len(t.pieces) > 1<<32-1 {
			return nil, errors.New("tokenizer: token text too large")
		}
		t.offs[id+1] = uint32(len(t.pieces))
	}
	return t, nil
}

// isAdded reports whether tokens of type typ are matched verbatim in the
// input before pre-tokenization, like the added tokens of tokenizer.json.
func isAdded(typ int32) bool { return typ == TypeControl || typ == TypeUserDefined }

// lookupBPE returns the id of a BPE token, falling back to added tokens, or
// -1 if text is not in the vocabulary.
func (t *Tokenizer) lookupBPE(text string) int32 {
	if id, ok := t.vocab[text]; ok {
		return id
	}
	if id, ok := t.added[text]; ok {
		return id
	}
	return -1
}

// VocabSize returns the number of tokens, len(cfg.Tokens).
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// TokenID returns the id of the token whose text is exactly text, such as
// "<|im_end|>" or "Ġthe". Control and user-defined tokens take precedence
// over normal tokens with the same text.
func (t *Tokenizer) TokenID(text string) (int32, bool) {
	if id, ok := t.added[text]; ok {
		return id, true
	}
	id, ok := t.vocab[text]
	return id, ok
}

// TokenText returns the stored text of token id (byte-level encoded for
// normal tokens), or "" if id is out of range.
func (t *Tokenizer) TokenText(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenType returns the type of token id, or 0 if id is out of range.
func (t *Tokenizer) TokenType(id int32) int32 {
	if id < 0 || int(id) >= len(t.types) {
		return 0
	}
	return t.types[id]
}

// Encode returns the token ids for text.
//
// Control and user-defined tokens are recognized in the raw text (at each
// position the longest one wins) and emitted as their single id. Each span
// of text between them is NFC-normalized, pre-tokenized and BPE-encoded.
//
// Encode never fails. Invalid UTF-8 bytes are encoded as their byte tokens,
// so DecodeBytes(Encode(s)) reproduces the normalized bytes of s exactly.
// Bytes that have no token in the vocabulary are dropped.
func (t *Tokenizer) Encode(text string) []int32 {
	ids := make([]int32, 0, len(text)/4+1)
	for len(text) > 0 {
		i, tok := t.findSpecial(text)
		ids = t.encodeOrdinary(ids, text[:i])
		if tok == nil {
			break
		}
		ids = append(ids, tok.id)
		text = text[i+len(tok.text):]
	}
	return ids
}

// EncodeOrdinary is like Encode but treats control and user-defined token
// text as ordinary text, so that "<|im_end|>" in untrusted input is encoded
// as several normal tokens rather than as the control token.
func (t *Tokenizer) EncodeOrdinary(text string) []int32 {
	return t.encodeOrdinary(make([]int32, 0, len(text)/4+1), text)
}

// findSpecial returns the position and identity of the leftmost-longest
// added token in s, or len(s), nil if there is none.
func (t *Tokenizer) findSpecial(s string) (int, *addedToken) {
	if !t.hasSpecial {
		return len(s), nil
	}
	for i := 0; i < len(s); i++ {
		if !t.specialFirst[s[i]] {
			continue
		}
		cands := t.special[s[i]]
		for k := range cands {
			if strings.HasPrefix(s[i:], cands[k].text) {
				return i, &cands[k]
			}
		}
	}
	return len(s), nil
}

// encodeOrdinary appends the ids for text that contains no added tokens.
func (t *Tokenizer) encodeOrdinary(ids []int32, text string) []int32 {
	if text == "" {
		return ids
	}
	if t.nfc {
		text = norm.NFC.String(text)
	}
	for i := 0; i < len(text); {
		j := nextPiece(text, i, t.digits)
		ids = t.encodeWord(ids, text[i:j])
		i = j
	}
	return ids
}

// encodeWord appends the BPE encoding of one pre-token, using the cache.
func (t *Tokenizer) encodeWord(ids []int32, word string) []int32 {
	if len(word) < cacheMinWord || len(word) > cacheMaxWord {
		return t.bpeWord(ids, word)
	}
	if cached, ok := t.cache.get(word); ok {
		return append(ids, cached...)
	}
	n := len(ids)
	ids = t.bpeWord(ids, word)
	t.cache.put(word, slices.Clone(ids[n:]))
	return ids
}

// bpeWord appends the encoding of one pre-token: with ignoreMerges the
// token whose byte-level text is the whole pre-token, if there is one,
// else its BPE encoding.
func (t *Tokenizer) bpeWord(ids []int32, word string) []int32 {
	if t.ignoreMerges && len(word) > 1 {
		var buf [2 * cacheMaxWord]byte
		text := buf[:0]
		for i := 0; i < len(word); i++ {
			text = utf8.AppendRune(text, byteToRune[word[i]])
		}
		if id, ok := t.vocab[string(text)]; ok {
			return append(ids, id)
		}
	}
	return t.bpe(ids, word)
}

// clearCache empties the word cache. It is used by benchmarks.
func (t *Tokenizer) clearCache() {
	t.cache.mu.Lock()
	t.cache.m = nil
	t.cache.mu.Unlock()
}

// piece returns the decoded bytes of token id, or nil if id is out of range.
func (t *Tokenizer) piece(id int32) []byte {
	if id < 0 || int(id) >= len(t.tokens) {
		return nil
	}
	return t.pieces[t.offs[id]:t.offs[id+1]]
}

// DecodeBytes returns the raw bytes that ids stand for. Byte-level tokens
// become the bytes they encode, control and user-defined tokens their text,
// and unused tokens and out-of-range ids nothing. The result need not be
// valid UTF-8.
func (t *Tokenizer) DecodeBytes(ids []int32) []byte {
	n := 0
	for _, id := range ids {
		n += len(t.piece(id))
	}
	out := make([]byte, 0, n)
	for _, id := range ids {
		out = append(out, t.piece(id)...)
	}
	return out
}

// Decode returns the text that ids stand for, as DecodeBytes does, with each
// ill-formed UTF-8 subsequence replaced by U+FFFD the way Hugging Face
// tokenizers (Rust's String::from_utf8_lossy) replaces it.
func (t *Tokenizer) Decode(ids []int32) string {
	return lossyString(t.DecodeBytes(ids))
}
