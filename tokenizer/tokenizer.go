// Package tokenizer implements the tokenizers of GGUF models: byte-level
// BPE (GGUF tokenizer.ggml.model "gpt2", as Qwen, Llama 3, gpt-oss,
// Mistral's tekken and Phi-4 have) and SentencePiece BPE with byte
// fallback ("llama", as Gemma has).
//
// It reproduces the Hugging Face tokenizers pipeline of the models'
// tokenizer.json. For byte-level BPE: added (special) tokens are split off
// the raw text first, the text between them is normalized (NFC where the
// tokenizer has it), split into pre-tokens by the family's regular
// expression (tokenizer.ggml.pre), mapped to GPT-2's byte-level alphabet,
// and encoded by BPE merges in rank order. For SentencePiece BPE, spaces
// become U+2581 and the text between added tokens is merged as one word,
// by token scores, characters without a token falling back to byte tokens
// (spm.go).
//
// A Tokenizer is safe for concurrent use by multiple goroutines.
// A StreamDecoder is not.
package tokenizer

import (
	"errors"
	"fmt"
	"slices"
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

// Tokenizer models, as GGUF names them in tokenizer.ggml.model.
const (
	ModelByteLevel = "gpt2"  // byte-level BPE with merges
	ModelSPM       = "llama" // SentencePiece BPE with scores and byte fallback
)

// Config holds the tokenizer data found in GGUF metadata.
type Config struct {
	// Model is the tokenizer model (tokenizer.ggml.model): ModelByteLevel,
	// which "" also means, or ModelSPM.
	Model string

	// Tokens maps token ids to token text (tokenizer.ggml.tokens). Normal
	// tokens of a byte-level vocabulary are byte-level encoded, as in GGUF
	// and tokenizer.json; those of a SentencePiece vocabulary have U+2581
	// for spaces; control and user-defined tokens are plain text.
	Tokens []string

	// Types holds the type of each token (tokenizer.ggml.token_type), one of
	// the Type constants. It must be nil, meaning every token is normal, or
	// as long as Tokens. A type of 0 is taken as normal.
	Types []int32

	// Merges lists the BPE merges (tokenizer.ggml.merges) in rank order,
	// each as the two token texts separated by a single space. Byte-level
	// vocabularies need them; SentencePiece ones merge by Scores instead.
	Merges []string

	// Scores holds the score of each token (tokenizer.ggml.scores): a
	// SentencePiece vocabulary needs them, as long as Tokens. Merges that
	// make a token of higher score go first.
	Scores []float32

	// Pre names the pre-tokenizer of a byte-level vocabulary
	// (tokenizer.ggml.pre), one of PreTokenizers(): "qwen2", "llama-bpe",
	// "gpt-4o", "tekken" and their aliases. "" means "qwen2".
	// SentencePiece vocabularies have none; Pre is ignored for them.
	Pre string

	// AddSpacePrefix, for a SentencePiece vocabulary, puts a space before
	// each span of text between added tokens, as llama.cpp does with
	// tokenizer.ggml.add_space_prefix (Llama 2 and Mistral 7B have it,
	// Gemma not).
	AddSpacePrefix bool

	// BOS is the id of the beginning-of-sequence token
	// (tokenizer.ggml.bos_token_id), and AddBOS says that a prompt should
	// start with it (tokenizer.ggml.add_bos_token). BOS is only read when
	// AddBOS is set.
	BOS    int32
	AddBOS bool
}

// A Tokenizer converts between text and token ids.
type Tokenizer struct {
	tokens []string
	types  []int32

	vocab  map[string]int32 // text of byte-level BPE tokens (every type not in added)
	byteID [256]int32       // byte-level token for each single byte, or -1
	merges *mergeTable

	// Added tokens, matched in the raw text before anything else.
	added added

	// SentencePiece model; nil for byte-level BPE.
	spm *spmModel

	// Decoded bytes of every token: pieces[offs[id]:offs[id+1]].
	pieces []byte
	offs   []uint32

	cache wordCache

	// The pre-tokenizer of byte-level BPE (Config.Pre).
	pre preTokenizer

	bos    int32
	addBOS bool
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

// New returns a Tokenizer for cfg. It reports an error if the model or
// pre-tokenizer is not supported, if Types or Scores do not match Tokens,
// if a merge is malformed or names a token that is not in the vocabulary,
// or if AddBOS is set with a BOS that is not a token.
func New(cfg Config) (*Tokenizer, error) {
	if len(cfg.Tokens) == 0 {
		return nil, errors.New("tokenizer: empty vocabulary")
	}
	if len(cfg.Tokens) > 1<<31-1 {
		return nil, fmt.Errorf("tokenizer: vocabulary of %d tokens is too large", len(cfg.Tokens))
	}
	if cfg.Types != nil && len(cfg.Types) != len(cfg.Tokens) {
		return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(cfg.Types), len(cfg.Tokens))
	}
	if cfg.AddBOS && (cfg.BOS < 0 || int(cfg.BOS) >= len(cfg.Tokens)) {
		return nil, fmt.Errorf("tokenizer: BOS token %d is not in the vocabulary of %d tokens", cfg.BOS, len(cfg.Tokens))
	}
	t := &Tokenizer{
		tokens: slices.Clone(cfg.Tokens),
		types:  make([]int32, len(cfg.Tokens)),
		bos:    cfg.BOS,
		addBOS: cfg.AddBOS,
	}
	if !t.addBOS {
		t.bos = -1
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
	}

	var err error
	switch cfg.Model {
	case "", ModelByteLevel:
		err = t.initByteLevel(cfg)
	case ModelSPM:
		err = t.initSPM(cfg)
	default:
		err = fmt.Errorf("tokenizer: unsupported tokenizer model %q (want %q, byte-level BPE, or %q, SentencePiece BPE)", cfg.Model, ModelByteLevel, ModelSPM)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// initByteLevel sets up byte-level BPE: the pre-tokenizer, the vocabulary,
// the merges, the added tokens and the decoded bytes of the tokens.
func (t *Tokenizer) initByteLevel(cfg Config) error {
	name := cfg.Pre
	if name == "" {
		name = "qwen2"
	}
	pre, ok := preTokenizers[name]
	if !ok {
		return fmt.Errorf("tokenizer: unsupported pre-tokenizer %q (want one of %s)", cfg.Pre, preTokenizerNames())
	}
	t.pre = pre
	t.vocab = make(map[string]int32, len(cfg.Tokens))
	for id, text := range cfg.Tokens {
		if text == "" || isAdded(t.types[id]) {
			continue
		}
		if _, dup := t.vocab[text]; !dup {
			t.vocab[text] = int32(id)
		}
	}
	t.added = newAdded(cfg.Tokens, t.types, nil)

	for b := range 256 {
		t.byteID[b] = t.lookupBPE(string(byteToRune[b]))
	}

	t.merges = newMergeTable(len(cfg.Merges))
	var ab []byte
	for rank, m := range cfg.Merges {
		a, b, ok := strings.Cut(m, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return fmt.Errorf("tokenizer: merge %d (%q): want two tokens separated by one space", rank, m)
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
		return fmt.Errorf("tokenizer: merge %d (%q): token %q not in vocabulary", rank, m, missing)
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
			return errors.New("tokenizer: token text too large")
		}
		t.offs[id+1] = uint32(len(t.pieces))
	}
	return nil
}

// isAdded reports whether tokens of type typ are matched verbatim in the
// input before pre-tokenization, like the added tokens of tokenizer.json.
func isAdded(typ int32) bool {
	return typ == TypeControl || typ == TypeUserDefined || typ == TypeUnknown
}

// lookupBPE returns the id of a BPE token, falling back to added tokens, or
// -1 if text is not in the vocabulary.
func (t *Tokenizer) lookupBPE(text string) int32 {
	if id, ok := t.vocab[text]; ok {
		return id
	}
	if id, ok := t.added.ids[text]; ok {
		return id
	}
	return -1
}

// VocabSize returns the number of tokens, len(cfg.Tokens).
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// TokenID returns the id of the token whose text is exactly text, such as
// "<|im_end|>" or "Ġthe". Control, user-defined and unknown tokens take
// precedence over normal tokens with the same text.
func (t *Tokenizer) TokenID(text string) (int32, bool) {
	if id, ok := t.added.ids[text]; ok {
		return id, true
	}
	if t.spm != nil {
		id, ok := t.spm.vocab[text]
		return id, ok
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

// BOS returns the beginning-of-sequence token and whether a prompt should
// start with it (GGUF tokenizer.ggml.add_bos_token; Gemma and Llama 3 say
// so). id is -1 when add is false.
func (t *Tokenizer) BOS() (id int32, add bool) { return t.bos, t.addBOS }

// PrependBOS returns ids with the BOS token in front if the model wants one
// and ids does not already start with it (a chat template may write it).
func (t *Tokenizer) PrependBOS(ids []int32) []int32 {
	if !t.addBOS || len(ids) > 0 && ids[0] == t.bos {
		return ids
	}
	return append([]int32{t.bos}, ids...)
}

// Encode returns the token ids for text.
//
// Added tokens (control, user-defined and unknown) are recognized in the
// raw text (at each position the longest one wins) and emitted as their
// single id. Each span of text between them is normalized, pre-tokenized
// and BPE-encoded. Encode does not add BOS; see PrependBOS.
//
// Encode never fails. Invalid UTF-8 bytes are encoded as their byte tokens,
// so DecodeBytes(Encode(s)) reproduces the normalized bytes of s exactly.
// Bytes that have no token in the vocabulary are dropped (or, with
// SentencePiece, become the unknown token).
func (t *Tokenizer) Encode(text string) []int32 { return t.encode(text, true) }

// EncodeOrdinary is like Encode but treats the text of control and unknown
// tokens as ordinary text, so that "<|im_end|>" in untrusted input is
// encoded as several normal tokens rather than as the control token, as
// Hugging Face tokenizers do with split_special_tokens. User-defined
// tokens (tokenizer.json's added tokens that are not special, such as
// Gemma's "\n" and Qwen's "<think>") are still matched.
func (t *Tokenizer) EncodeOrdinary(text string) []int32 { return t.encode(text, false) }

// encode is Encode, with control and unknown tokens matched if special.
func (t *Tokenizer) encode(text string, special bool) []int32 {
	ids := make([]int32, 0, len(text)/4+1)
	for len(text) > 0 {
		i, n, id := t.added.find(text, t.types, special)
		ids = t.encodeOrdinary(ids, text[:i])
		if n == 0 {
			break
		}
		ids = append(ids, id)
		text = text[i+n:]
	}
	return ids
}

// encodeOrdinary appends the ids for text that contains no added tokens.
func (t *Tokenizer) encodeOrdinary(ids []int32, text string) []int32 {
	if text == "" {
		return ids
	}
	if t.spm != nil {
		return t.spmEncode(ids, text)
	}
	if t.pre.nfc {
		text = norm.NFC.String(text)
	}
	for i := 0; i < len(text); {
		j := t.pre.split.next(text, i)
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
	if t.pre.ignoreMerges && len(word) > 1 {
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
// and unused tokens and out-of-range ids nothing; in a SentencePiece
// vocabulary U+2581 becomes a space and a byte token <0xXX> its byte. The
// result need not be valid UTF-8.
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
// tokenizers' byte-level decoder (Rust's String::from_utf8_lossy) replaces
// it. Byte tokens of a SentencePiece vocabulary are bytes like any other,
// so a character split across them decodes whole; where such bytes are
// ill-formed, Hugging Face's ByteFallback decoder writes one U+FFFD per
// byte token, Decode (and transformers.js) one per ill-formed subsequence.
func (t *Tokenizer) Decode(ids []int32) string {
	return lossyString(t.DecodeBytes(ids))
}
