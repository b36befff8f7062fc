package tokenizer

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// metaspace is SentencePiece's stand-in for a space, U+2581.
const metaspace = "\u2581"

// spmModel is a SentencePiece BPE vocabulary (GGUF tokenizer.ggml.model
// "llama"), encoded as Hugging Face tokenizers encodes the tokenizer.json
// made from it: the BPE model with byte_fallback whose merges transformers
// derives from the SentencePiece scores.
//
// That derivation makes a merge of every two tokens whose concatenation is
// a token, ranked by the score of the result (higher first), then by the
// length in characters of the left part (longer first), of the right part,
// and by the result's id. spmModel ranks candidate merges by the same key,
// computed from the scores when they arise, rather than storing the
// merges (GGUF keeps only the scores). llama.cpp's llm_tokenizer_spm merges
// by score too but breaks ties by position, and lets characters without a
// token join a merge; where they differ from Hugging Face, spmModel
// follows Hugging Face.
type spmModel struct {
	// vocab holds the tokens that text can start as or merges can make:
	// normal and user-defined tokens, the latter with U+2581 for spaces
	// (llama.cpp's converter writes spaces into user-defined tokens).
	vocab map[string]int32
	// score is the merge priority of each token: its score, and +Inf for
	// user-defined tokens, which SentencePiece scores above all others.
	score  []float32
	byteID [256]int32 // byte-fallback token <0xXX> of each byte, or -1
	unk    int32      // the unknown token, or -1
	// glue holds the characters that some token of vocab has right before
	// a U+2581: only after them can a merge reach across a U+2581.
	glue map[rune]bool

	addSpacePrefix bool
}

// initSPM sets up a SentencePiece vocabulary: the merge vocabulary and
// priorities, byte fallback, the added tokens and the decoded bytes of the
// tokens.
func (t *Tokenizer) initSPM(cfg Config) error {
	if len(cfg.Scores) != len(cfg.Tokens) {
		return fmt.Errorf("tokenizer: %d token scores for %d tokens (a SentencePiece vocabulary needs them)", len(cfg.Scores), len(cfg.Tokens))
	}
	m := &spmModel{
		vocab:          make(map[string]int32, len(cfg.Tokens)),
		score:          make([]float32, len(cfg.Tokens)),
		unk:            -1,
		addSpacePrefix: cfg.AddSpacePrefix,
	}
	for b := range m.byteID {
		m.byteID[b] = -1
	}
	for id, text := range cfg.Tokens {
		s := cfg.Scores[id]
		if math.IsNaN(float64(s)) {
			return fmt.Errorf("tokenizer: token %d (%q) has score NaN", id, text)
		}
		m.score[id] = s
		switch t.types[id] {
		case TypeUserDefined:
			m.score[id] = float32(math.Inf(1))
			text = strings.ReplaceAll(text, " ", metaspace)
		case TypeNormal:
		case TypeByte:
			if b, ok := parseByteToken(text); ok && m.byteID[b] < 0 {
				m.byteID[b] = int32(id)
			}
			continue
		case TypeUnknown:
			if m.unk < 0 {
				m.unk = int32(id)
			}
			continue
		default:
			continue
		}
		if _, dup := m.vocab[text]; text != "" && !dup {
			m.vocab[text] = int32(id)
		}
	}
	m.glue = make(map[rune]bool)
	for text := range m.vocab {
		for k := 1; k < len(text); k++ {
			if strings.HasPrefix(text[k:], metaspace) {
				r, _ := utf8.DecodeLastRuneInString(text[:k])
				m.glue[r] = true
			}
		}
	}
	t.spm = m
	// User-defined tokens are matched in the raw text both as written and
	// with U+2581 for their spaces, as tokenizer.json has them.
	t.added = newAdded(cfg.Tokens, t.types, func(id int, text string) string {
		if t.types[id] != TypeUserDefined || !strings.Contains(text, " ") {
			return ""
		}
		return strings.ReplaceAll(text, " ", metaspace)
	})

	t.offs = make([]uint32, len(cfg.Tokens)+1)
	for id, text := range cfg.Tokens {
		switch t.types[id] {
		case TypeByte:
			if b, ok := parseByteToken(text); ok {
				t.pieces = append(t.pieces, b)
			} else {
				t.pieces = append(t.pieces, text...)
			}
		case TypeUnused:
		default:
			t.pieces = appendUnescaped(t.pieces, text)
		}
		if len(t.pieces) > 1<<32-1 {
			return errors.New("tokenizer: token text too large")
		}
		t.offs[id+1] = uint32(len(t.pieces))
	}
	return nil
}

// parseByteToken returns the byte of a byte-fallback token "<0xXX>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var b byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			return 0, false
		}
		b = b<<4 | c
	}
	return b, true
}

// appendUnescaped appends s to dst with each U+2581 made a space.
func appendUnescaped(dst []byte, s string) []byte {
	for {
		i := strings.Index(s, metaspace)
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(append(dst, s[:i]...), ' ')
		s = s[i+len(metaspace):]
	}
}

// spmEncode appends the ids of text, a span without added tokens: its
// spaces become U+2581 (after a space in front with AddSpacePrefix) and
// the span is merged as one word.
//
// No merge can reach across a U+2581 whose preceding character no token
// has before a U+2581 (glue): the span splits there into words that merge
// alone, with the same result, and repeated words come from the cache.
func (t *Tokenizer) spmEncode(ids []int32, text string) []int32 {
	if t.spm.addSpacePrefix {
		text = " " + text
	}
	text = strings.ReplaceAll(text, " ", metaspace)
	start := 0
	for i := 1; i < len(text); {
		k := strings.Index(text[i:], metaspace)
		if k < 0 {
			break
		}
		p := i + k
		if r, w := utf8.DecodeLastRuneInString(text[:p]); r == utf8.RuneError && w <= 1 || !t.spm.glue[r] {
			ids = t.spmWord(ids, text[start:p])
			start = p
		}
		i = p + len(metaspace)
	}
	return t.spmWord(ids, text[start:])
}

// spmWord appends the ids of one word of spmEncode, using the word cache.
func (t *Tokenizer) spmWord(ids []int32, word string) []int32 {
	if len(word) < cacheMinWord || len(word) > cacheMaxWord {
		return t.spm.encode(ids, word)
	}
	if cached, ok := t.cache.get(word); ok {
		return append(ids, cached...)
	}
	n := len(ids)
	ids = t.spm.encode(ids, word)
	t.cache.put(word, slices.Clone(ids[n:]))
	return ids
}

// spmSymbol is a node of the doubly linked list of symbols of spmModel.encode.
type spmSymbol struct {
	id         int32
	start, end int32 // bytes of the symbol in the text
	runes      int32 // characters in the symbol; 0 once merged into its left neighbour
	prev, next int32 // indices into the symbol slice, -1 at the ends
	fixed      bool  // a byte-fallback or unknown token, which never merges
}

// spmMerge is a candidate merge of the symbol at pos with the next one,
// which spans text[mid:end], into token id.
type spmMerge struct {
	score      float32
	lenL, lenR int32
	id, pos    int32
	mid, end   int32
}

// less orders candidate merges as the ranks of Hugging Face's merges do,
// equal merges leftmost first.
func (a spmMerge) less(b spmMerge) bool {
	switch {
	case a.score != b.score:
		return a.score > b.score
	case a.lenL != b.lenL:
		return a.lenL > b.lenL
	case a.lenR != b.lenR:
		return a.lenR > b.lenR
	case a.id != b.id:
		return a.id < b.id
	}
	return a.pos < b.pos
}

// encode appends the ids of the normalized text: each character starts as
// its token, or as the byte tokens of its UTF-8 bytes if it has none (the
// unknown token if a byte has none either), then the best merge is applied
// until none is left.
func (m *spmModel) encode(dst []int32, text string) []int32 {
	syms := make([]spmSymbol, 0, len(text))
	push := func(id int32, start, end int, fixed bool) {
		syms = append(syms, spmSymbol{id: id, start: int32(start), end: int32(end), runes: 1, fixed: fixed})
	}
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if r != utf8.RuneError || w > 1 {
			if id, ok := m.vocab[text[i:i+w]]; ok {
				push(id, i, i+w, false)
				i += w
				continue
			}
		}
		bytesOK := true
		for k := i; k < i+w; k++ {
			bytesOK = bytesOK && m.byteID[text[k]] >= 0
		}
		switch {
		case bytesOK:
			for k := i; k < i+w; k++ {
				push(m.byteID[text[k]], k, k+1, true)
			}
		case m.unk >= 0 && len(syms) > 0 && syms[len(syms)-1].id == m.unk && syms[len(syms)-1].fixed:
			syms[len(syms)-1].end = int32(i + w) // consecutive unknowns fuse
		case m.unk >= 0:
			push(m.unk, i, i+w, true)
		}
		i += w
	}
	for i := range syms {
		syms[i].prev, syms[i].next = int32(i-1), int32(i+1)
	}
	if len(syms) == 0 {
		return dst
	}
	syms[len(syms)-1].next = -1

	var h minHeap[spmMerge]
	for i := range len(syms) - 1 {
		if c, ok := m.candidate(text, syms, int32(i)); ok {
			h.push(c)
		}
	}
	for len(h) > 0 {
		c := h.pop()
		left := &syms[c.pos]
		if left.runes == 0 || left.end != c.mid || left.next < 0 || syms[left.next].end != c.end {
			continue // stale: one of the symbols changed since the push
		}
		right := &syms[left.next]
		left.id, left.end, left.runes = c.id, right.end, left.runes+right.runes
		right.runes = 0
		left.next = right.next
		if left.next >= 0 {
			syms[left.next].prev = c.pos
		}
		if left.prev >= 0 {
			if c, ok := m.candidate(text, syms, left.prev); ok {
				h.push(c)
			}
		}
		if c, ok := m.candidate(text, syms, c.pos); ok {
			h.push(c)
		}
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		dst = append(dst, syms[i].id)
	}
	return dst
}

// candidate returns the merge of the symbol at pos with the next one, if
// their text together is a token.
func (m *spmModel) candidate(text string, syms []spmSymbol, pos int32) (spmMerge, bool) {
	a := &syms[pos]
	if a.next < 0 || a.fixed {
		return spmMerge{}, false
	}
	b := &syms[a.next]
	if b.fixed {
		return spmMerge{}, false
	}
	id, ok := m.vocab[text[a.start:b.end]]
	if !ok {
		return spmMerge{}, false
	}
	return spmMerge{score: m.score[id], lenL: a.runes, lenR: b.runes, id: id, pos: pos, mid: a.end, end: b.end}, true
}
