package constrain

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"
)

// Vocab is a model's vocabulary as byte strings, with its token trie, built
// once per model and shared by every grammar compiled against it.
type Vocab struct {
	toks         [][]byte
	eog          []int32
	maxLen       int // the longest token's length in bytes
	maxTextRunes int // the most code points of a text-slice token
	runesOnce    sync.Once
	textRunes    [][]uint64 // textRunes[k]: the text-slice tokens of at most k code points
	full         trie       // every token with bytes
	rest         trie       // the tokens outside textSlice
	// textSlice holds, as a bitset over ids, the tokens that are valid UTF-8
	// made only of text code points: none below U+0020, not '"', '\\' or
	// U+007F. A grammar position that loops on every such code point accepts
	// all of them at once; only the rest trie is walked there.
	textSlice []uint64
	// below[i] indexes belowSets: the bytes (below 0x7f) of the full
	// trie's node i's descendants past its own (-1 when some descendant
	// has another byte), and height[i] how many bytes the longest of them
	// adds (at most 255), so that a mask's walk takes a subtree at once
	// where a top reads every such sequence (Compiled.closedFor).
	below     []int32
	belowSets [][2]uint64
	height    []uint8
}

// trie is a byte trie over tokens stored as its nodes in depth-first order
// (the lexicographic order of the tokens' bytes), so that a walk is a loop
// over the array that skips a rejected subtree by jumping to its end.
type trie struct {
	nodes []tnode
	ids   []int32 // token ids of node i: ids[nodes[i].tok : nodes[i].tok+nodes[i].ntok]
	// first[i]: the index in ids of the first token at or after node i in
	// order (first[len(nodes)] = len(ids)), so that the tokens of node i's
	// descendants are ids[first[i+1]:first[nodes[i].end]].
	first []int32
}

type tnode struct {
	end   int32 // index just past the subtree
	tok   int32
	full  int32 // index of the same prefix in the full trie
	ntok  uint16
	depth uint16 // 1 for the first byte of a token
	b     byte
}

// maxTokenLen bounds a token's length, keeping trie depths small.
const maxTokenLen = 1 << 12

// NewVocab returns the vocabulary whose token id i spells tokens[i]. Tokens
// with no bytes (special and control tokens, padding) are never allowed in
// a constrained region. eog lists the end-of-generation ids, allowed where
// the grammar can end; they must be valid ids.
func NewVocab(tokens [][]byte, eog []int32) (*Vocab, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("constrain: empty vocabulary")
	}
	if len(tokens) > 1<<30 {
		return nil, fmt.Errorf("constrain: vocabulary of %d tokens is too large", len(tokens))
	}
	for _, id := range eog {
		if id < 0 || int(id) >= len(tokens) {
			return nil, fmt.Errorf("constrain: end-of-generation id %d is outside the vocabulary of %d tokens", id, len(tokens))
		}
	}
	v := &Vocab{toks: make([][]byte, len(tokens)), eog: slices.Clone(eog)}
	isEOG := map[int32]bool{}
	for _, id := range eog {
		isEOG[id] = true
	}
	total := 0
	for i, t := range tokens {
		if len(t) > maxTokenLen {
			return nil, fmt.Errorf("constrain: token %d is %d bytes long (at most %d)", i, len(t), maxTokenLen)
		}
		total += len(t)
	}
	// One copy of every token's bytes, not one allocation a token.
	buf := make([]byte, 0, total)
	var order []int32
	for i, t := range tokens {
		if len(t) > 0 {
			buf = append(buf, t...)
			v.toks[i] = buf[len(buf)-len(t) : len(buf) : len(buf)]
		}
		v.maxLen = max(v.maxLen, len(t))
		if len(t) > 0 && !isEOG[int32(i)] {
			order = append(order, int32(i))
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int { return bytes.Compare(v.toks[a], v.toks[b]) })
	v.full = buildTrie(v.toks, order)
	v.textSlice = make([]uint64, MaskWords(len(tokens)))
	inRest := make([]bool, len(tokens))
	for _, id := range order {
		if isText(v.toks[id]) {
			v.textSlice[id/64] |= 1 << (id % 64)
			v.maxTextRunes = max(v.maxTextRunes, utf8.RuneCount(v.toks[id]))
		} else {
			inRest[id] = true
		}
	}
	v.rest = v.full.filter(inRest)
	v.full.setFirst()
	v.rest.setFirst()
	v.setBelow()
	return v, nil
}

// setFirst fills t.first.
func (t *trie) setFirst() {
	t.first = make([]int32, len(t.nodes)+1)
	t.first[len(t.nodes)] = int32(len(t.ids))
	for i := len(t.nodes) - 1; i >= 0; i-- {
		t.first[i] = t.first[i+1]
		if t.nodes[i].tok >= 0 {
			t.first[i] = t.nodes[i].tok
		}
	}
}

// setBelow fills v.below, v.belowSets and v.height from the full trie.
func (v *Vocab) setBelow() {
	nodes := v.full.nodes
	v.below = make([]int32, len(nodes))
	v.height = make([]uint8, len(nodes))
	sets := make([][2]uint64, len(nodes)) // scratch: each node's set
	const other = 1 << 63                 // in word 1 (byte 0x7f's bit): some byte >= 0x7f
	ids := map[[2]uint64]int32{}
	for i := len(nodes) - 1; i >= 0; i-- {
		var set [2]uint64
		h := 0
		for c := int32(i) + 1; c < nodes[i].end; c = nodes[c].end {
			if b := nodes[c].b; b < 0x7f {
				set[b/64] |= 1 << (b % 64)
			} else {
				set[1] |= other
			}
			set[0] |= sets[c][0]
			set[1] |= sets[c][1]
			h = max(h, int(v.height[c])+1)
		}
		sets[i] = set
		v.height[i] = uint8(min(h, 255))
		if set[1]&other != 0 {
			v.below[i] = -1
			continue
		}
		id, ok := ids[set]
		if !ok {
			id = int32(len(v.belowSets))
			ids[set] = id
			v.belowSets = append(v.belowSets, set)
		}
		v.below[i] = id
	}
}

// Size returns the number of token ids.
func (v *Vocab) Size() int { return len(v.toks) }

// textUpTo returns the text-slice tokens of at most k code points
// (0 < k < maxTextRunes), building the table on first use.
func (v *Vocab) textUpTo(k int) []uint64 {
	v.runesOnce.Do(func() {
		words := MaskWords(len(v.toks))
		v.textRunes = make([][]uint64, v.maxTextRunes+1)
		flat := make([]uint64, words*(v.maxTextRunes+1))
		for i := range v.textRunes {
			v.textRunes[i] = flat[i*words : (i+1)*words]
		}
		for id, t := range v.toks {
			if v.textSlice[id/64]>>(id%64)&1 == 1 {
				n := utf8.RuneCount(t)
				v.textRunes[n][id/64] |= 1 << (id % 64)
			}
		}
		for i := 1; i < len(v.textRunes); i++ {
			for j, x := range v.textRunes[i-1] {
				v.textRunes[i][j] |= x
			}
		}
	})
	return v.textRunes[k]
}

// MaskWords returns the number of 64-bit words of a mask over vocab tokens.
func MaskWords(vocab int) int { return (vocab + 63) / 64 }

// isTextRune reports whether r belongs to the text slice.
func isTextRune(r rune) bool { return r >= 0x20 && r != '"' && r != '\\' && r != 0x7f }

func isText(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 || !isTextRune(r) {
			return false
		}
		b = b[n:]
	}
	return true
}

// buildTrie builds the trie of the tokens in order, which is sorted by bytes.
func buildTrie(toks [][]byte, order []int32) trie {
	var t trie
	var path []int32 // node index at each depth-1
	var prev []byte
	for _, id := range order {
		b := toks[id]
		common := 0
		for common < len(prev) && common < len(b) && prev[common] == b[common] && common < len(path) {
			common++
		}
		for len(path) > common {
			n := path[len(path)-1]
			t.nodes[n].end = int32(len(t.nodes))
			path = path[:len(path)-1]
		}
		for d := common; d < len(b); d++ {
			path = append(path, int32(len(t.nodes)))
			t.nodes = append(t.nodes, tnode{b: b[d], depth: uint16(d + 1), tok: -1, full: int32(len(t.nodes))})
		}
		n := &t.nodes[path[len(path)-1]]
		if n.tok < 0 {
			n.tok = int32(len(t.ids))
		}
		n.ntok++
		t.ids = append(t.ids, id)
		prev = b
	}
	for _, n := range path {
		t.nodes[n].end = int32(len(t.nodes))
	}
	return t
}

// filter returns the sub-trie of the nodes whose subtree holds a token with
// keep set, each node remembering its index in t.
func (t *trie) filter(keep []bool) trie {
	has := make([]bool, len(t.nodes))
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := t.nodes[i]
		for k := n.tok; k >= 0 && k < n.tok+int32(n.ntok); k++ {
			if keep[t.ids[k]] {
				has[i] = true
			}
		}
		for c := int32(i) + 1; c < n.end; c = t.nodes[c].end {
			if has[c] {
				has[i] = true
				break
			}
		}
	}
	var out trie
	var open []int32 // indices in out of the nodes whose subtree is open
	for i, n := range t.nodes {
		if !has[i] {
			continue
		}
		for len(open) > 0 && out.nodes[open[len(open)-1]].depth >= n.depth {
			out.nodes[open[len(open)-1]].end = int32(len(out.nodes))
			open = open[:len(open)-1]
		}
		m := tnode{b: n.b, depth: n.depth, tok: -1, full: int32(i)}
		for k := n.tok; k >= 0 && k < n.tok+int32(n.ntok); k++ {
			if keep[t.ids[k]] {
				if m.tok < 0 {
					m.tok = int32(len(out.ids))
				}
				m.ntok++
				out.ids = append(out.ids, t.ids[k])
			}
		}
		open = append(open, int32(len(out.nodes)))
		out.nodes = append(out.nodes, m)
	}
	for _, o := range open {
		out.nodes[o].end = int32(len(out.nodes))
	}
	return out
}
