package tokenizer

import (
	"math"
	"math/bits"
)

// noRank is the rank of a pair that has no merge.
const noRank = math.MaxInt32

// mergeTable maps a pair of token ids to the rank of their merge and the id
// of the merged token. It is an open-addressing hash table with linear
// probing, which is markedly faster than a Go map for this hot lookup.
type mergeTable struct {
	slots []mergeSlot
	shift uint
	n     int
}

// mergeSlot is one entry of a mergeTable. Key and value share a slot so
// that a lookup touches a single cache line.
type mergeSlot struct {
	key uint64 // pairKey(a, b), or 0 for an empty slot
	val uint64 // rank<<32 | merged id
}

// pairKey packs a pair of non-negative ids into a non-zero key.
func pairKey(a, b int32) uint64 { return (uint64(uint32(a))<<32 | uint64(uint32(b))) + 1 }

func newMergeTable(n int) *mergeTable {
	size := 16
	for size < 2*n { // keep the load factor at most 1/2
		size <<= 1
	}
	return &mergeTable{
		slots: make([]mergeSlot, size),
		shift: uint(64 - bits.TrailingZeros(uint(size))),
	}
}

func (m *mergeTable) slot(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> m.shift }

// insert adds the merge a+b -> id with the given rank. If the pair already
// has a merge, the existing (lower) rank is kept and insert reports false.
func (m *mergeTable) insert(a, b int32, rank, id int32) bool {
	k := pairKey(a, b)
	mask := uint64(len(m.slots) - 1)
	for i := m.slot(k); ; i = (i + 1) & mask {
		switch m.slots[i].key {
		case 0:
			m.slots[i] = mergeSlot{k, uint64(uint32(rank))<<32 | uint64(uint32(id))}
			m.n++
			return true
		case k:
			return false
		}
	}
}

// lookup returns the rank and merged id of the pair (a, b), or noRank and
// -1 if the pair does not merge.
func (m *mergeTable) lookup(a, b int32) (rank, id int32) {
	k := pairKey(a, b)
	mask := uint64(len(m.slots) - 1)
	for i := m.slot(k); ; i = (i + 1) & mask {
		switch m.slots[i].key {
		case k:
			v := m.slots[i].val
			return int32(v >> 32), int32(uint32(v))
		case 0:
			return noRank, -1
		}
	}
}

// smallWord is the longest word merged with the quadratic scan; longer
// words use a priority queue.
const smallWord = 128

// bpe appends to dst the ids of the byte-level BPE encoding of word, one
// pre-token. Bytes that have no token in the vocabulary are skipped.
//
// Merges are applied lowest rank first and, among equal ranks, leftmost
// first, exactly as the BPE model of Hugging Face tokenizers does.
func (t *Tokenizer) bpe(dst []int32, word string) []int32 {
	if len(word) == 1 {
		if id := t.byteID[word[0]]; id >= 0 {
			dst = append(dst, id)
		}
		return dst
	}
	if len(word) > smallWord {
		return t.bpeLarge(dst, word)
	}
	var symBuf, rankBuf, newBuf [smallWord]int32
	syms := symBuf[:0]
	for i := 0; i < len(word); i++ {
		if id := t.byteID[word[i]]; id >= 0 {
			syms = append(syms, id)
		}
	}
	n := len(syms)
	if n < 2 {
		return append(dst, syms...)
	}
	// ranks[j] and newIDs[j] describe the pair (syms[j], syms[j+1]).
	ranks, newIDs := rankBuf[:n-1], newBuf[:n-1]
	for j := range n - 1 {
		ranks[j], newIDs[j] = t.merges.lookup(syms[j], syms[j+1])
	}
	for n > 1 {
		best, at := int32(noRank), -1
		for j, r := range ranks[:n-1] {
			if r < best {
				best, at = r, j
			}
		}
		if at < 0 {
			break
		}
		// Merge syms[at] and syms[at+1].
		syms[at] = newIDs[at]
		copy(syms[at+1:n], syms[at+2:n])
		copy(ranks[at:n-1], ranks[at+1:n-1])
		copy(newIDs[at:n-1], newIDs[at+1:n-1])
		n--
		if at > 0 {
			ranks[at-1], newIDs[at-1] = t.merges.lookup(syms[at-1], syms[at])
		}
		if at < n-1 {
			ranks[at], newIDs[at] = t.merges.lookup(syms[at], syms[at+1])
		}
	}
	return append(dst, syms[:n]...)
}

// bpeSymbol is a node of the doubly linked list of symbols used by bpeLarge.
type bpeSymbol struct {
	id         int32
	prev, next int32 // indices into the symbol slice, -1 at the ends
	dead       bool  // merged into its left neighbour
}

// bpeMerge is a candidate merge in bpeLarge's priority queue.
type bpeMerge struct {
	rank, pos, id int32
}

func (a bpeMerge) less(b bpeMerge) bool {
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}

// bpeLarge is bpe for long words: a linked list of symbols and a binary heap
// of candidate merges ordered by (rank, position), as in Hugging Face's
// Word::merge_all. Entries that went stale because a neighbour changed are
// detected and skipped when popped.
func (t *Tokenizer) bpeLarge(dst []int32, word string) []int32 {
	syms := make([]bpeSymbol, 0, len(word))
	for i := 0; i < len(word); i++ {
		if id := t.byteID[word[i]]; id >= 0 {
			syms = append(syms, bpeSymbol{id: id})
		}
	}
	for i := range syms {
		syms[i].prev, syms[i].next = int32(i-1), int32(i+1)
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	var h minHeap[bpeMerge]
	for i := 0; i+1 < len(syms); i++ {
		if r, id := t.merges.lookup(syms[i].id, syms[i+1].id); r != noRank {
			h.push(bpeMerge{r, int32(i), id})
		}
	}
	for len(h) > 0 {
		top := h.pop()
		left := &syms[top.pos]
		if left.dead || left.next < 0 {
			continue
		}
		right := &syms[left.next]
		if r, id := t.merges.lookup(left.id, right.id); r != top.rank || id != top.id {
			continue // stale: one of the symbols changed since the push
		}
		left.id = top.id
		right.dead = true
		left.next = right.next
		if left.next >= 0 {
			syms[left.next].prev = top.pos
		}
		if left.prev >= 0 {
			if r, id := t.merges.lookup(syms[left.prev].id, left.id); r != noRank {
				h.push(bpeMerge{r, left.prev, id})
			}
		}
		if left.next >= 0 {
			if r, id := t.merges.lookup(left.id, syms[left.next].id); r != noRank {
				h.push(bpeMerge{r, top.pos, id})
			}
		}
	}
	for i := range syms {
		if !syms[i].dead {
			dst = append(dst, syms[i].id)
		}
	}
	return dst
}

// minHeap is a binary min-heap of candidate merges.
type minHeap[T interface{ less(T) bool }] []T

func (h *minHeap[T]) push(m T) {
	*h = append(*h, m)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *minHeap[T]) pop() T {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].less(s[m]) {
			m = l
		}
		if r < len(s) && s[r].less(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
