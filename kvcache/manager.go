package kvcache

import (
	"fmt"
	"math"
)

// A Copier copies every row of block src into block dst (all layers, keys
// and values). A backend's KV storage implements it; the Manager calls it
// for copy-on-write.
type Copier interface {
	CopyBlock(dst, src int32) error
}

// A Manager hands out the blocks of a pool of fixed-size blocks to
// sequences, and decides which block holds which positions of each; the
// keys and values themselves live in a backend's storage (such as Pages),
// which the Manager never reads.
//
// With the prefix cache on, the Manager remembers the tokens each block
// was written with, in a radix tree of blocks: full blocks as sequences
// fill them, and a sequence's last, partial block when it is released.
// Start reuses the longest cached prefix of a new prompt, sharing whole
// blocks and copying a partly matching one (copy-on-write), so a sequence
// only ever writes into blocks it owns alone. Blocks no sequence
// references stay cached until the pool runs short, and are then evicted,
// least recently used leaves first.
//
// A Manager is not safe for concurrent use.
type Manager struct {
	blocks, bs int
	prefix     bool
	cp         Copier
	hash       func([]int32) uint64
	win        *window // the window pool (NewWindowManager), or nil

	nodes []node  // a node per block, then the root
	root  int32   // index of the root in nodes
	tok   []int32 // the tokens of each block's rows (prefix cache on)
	kids  map[kidKey]int32
	heap  []int32 // unheld leaves of the tree, least recently used first
	free  []int32
	clock uint64

	used        int // blocks referenced by a sequence
	cached      int // blocks in the tree referenced by none
	reclaimable int // blocks in the tree not held: evictable, leaves first

	evictions, promptTokens, cachedTokens int64
}

// NewManager returns a Manager of a pool of blocks blocks of blockSize
// positions each, all free. With prefixCache on it caches prefixes, and
// calls cp to copy a partly matched block; cp may be nil, and then a
// prompt reuses only whole cached blocks. NewManager panics if blocks or
// blockSize is below 1 or the pool exceeds the int32 block ids.
func NewManager(blocks, blockSize int, prefixCache bool, cp Copier) *Manager {
	if blocks < 1 || blockSize < 1 || blocks >= math.MaxInt32 || blocks > math.MaxInt/blockSize {
		panic(fmt.Sprintf("kvcache: NewManager of %d blocks of %d positions", blocks, blockSize))
	}
	m := &Manager{
		blocks: blocks,
		bs:     blockSize,
		prefix: prefixCache,
		cp:     cp,
		hash:   hashTokens,
		nodes:  make([]node, blocks+1),
		root:   int32(blocks),
		free:   make([]int32, blocks),
	}
	for b := range m.nodes {
		m.reset(int32(b))
	}
	for i := range m.free {
		m.free[i] = int32(blocks - 1 - i) // block 0 is handed out first
	}
	if prefixCache {
		m.tok = make([]int32, blocks*blockSize)
		m.kids = make(map[kidKey]int32, blocks)
		m.heap = make([]int32, 0, blocks)
	}
	return m
}

// BlockSize returns the positions a block holds.
func (m *Manager) BlockSize() int { return m.bs }

// Blocks returns the number of blocks in the pool.
func (m *Manager) Blocks() int { return m.blocks }

// A Seq is one sequence's block table: which blocks of the pool hold its
// positions.
type Seq struct {
	m         *Manager
	table     []int32
	n, cached int
	last      int32   // the node of s's last full block's token path, or the root
	local     []int32 // blocks in the window pool (window.go), or nil
	lo        int     // local entries before lo are holes
	anchored  bool    // s anchors last: it holds a private duplicate of it
	done      bool
}

// Table returns the sequence's block ids: position p lives in block
// Table()[p/BlockSize()], at row p%BlockSize(). The slice is valid until
// the next Reserve or Release of s, and must not be modified.
func (s *Seq) Table() []int32 { return s.table }

// Len returns the positions committed (written) so far.
func (s *Seq) Len() int { return s.n }

// Cached returns the tokens reused from the prefix cache by Start.
func (s *Seq) Cached() int { return s.cached }

// StartNew begins a sequence for prompt that reuses nothing from the
// prefix cache: every position is computed again. Its blocks still enter
// the cache as they fill and when it ends. A scheduler uses it where a
// reused prefix would change the logits (a runner whose results depend
// on how a prompt was split into passes) and the request asked for
// reproducible output.
func (m *Manager) StartNew(prompt []int32) *Seq {
	m.clock++
	m.promptTokens += int64(len(prompt))
	s := &Seq{m: m, last: m.root, table: make([]int32, 0, m.BlocksFor(len(prompt)))}
	if m.win != nil {
		s.local = make([]int32, 0, cap(s.table))
	}
	return s
}

// Start begins a sequence whose first tokens will be prompt.
//
// With the prefix cache on, it reuses the longest prefix of prompt that
// the cache holds, at most len(prompt)-1 tokens, so at least one token is
// always computed, for its logits: those positions are already written,
// and s.Len() == s.Cached(). Fully matched blocks are shared. If the match
// ends inside a block (part of a cached block, or all of a cached partial
// block), that block is copied with the Copier into a fresh block, which
// the new sequence owns and writes its next positions into; if no block
// is available for the copy, the match is cut back to the last whole
// block. Start never fails for lack of blocks; it returns an error only
// if the Copier fails, and then it holds on to nothing (the cached block
// evicted to make room for the copy, if one was, stays evicted).
func (m *Manager) Start(prompt []int32) (*Seq, error) {
	m.clock++
	s := &Seq{m: m, last: m.root, table: make([]int32, 0, m.BlocksFor(len(prompt)))}
	if m.win != nil {
		s.local = make([]int32, 0, cap(s.table))
	}
	if !m.prefix || len(prompt) < 2 {
		m.promptTokens += int64(len(prompt))
		return s, nil
	}
	bs, limit := m.bs, len(prompt)-1
	x, n := m.root, 0
	for n+bs <= limit {
		t := prompt[n : n+bs]
		c := m.findChild(x, m.hash(t), t)
		if c == none {
			break
		}
		m.nodes[c].lastUse = m.clock
		m.incRef(c)
		s.table = append(s.table, c)
		x, n = c, n+bs
	}
	s.last = x
	partial := none
	if r := min(bs, limit-n); r > 0 && m.cp != nil {
		if c, l := m.longestChild(x, prompt[n:n+r]); l > 0 {
			m.pin(c) // keep c from being evicted for its own copy
			d := m.alloc()
			m.unpin(c)
			if d != none {
				if err := m.cp.CopyBlock(d, c); err != nil {
					m.free = append(m.free, d)
					for j := len(s.table) - 1; j >= 0; j-- {
						m.decRef(s.table[j])
					}
					return nil, err
				}
				copy(m.tok[int(d)*bs:], m.tokens(c)[:l])
				m.nodes[d].ref = 1
				m.used++
				m.touch(c)
				s.table = append(s.table, d)
				n += l
				partial = c
			}
		}
	}
	if m.win != nil {
		keep, err := m.startLocal(s, n, partial)
		if err != nil {
			m.dropTable(s, 0)
			return nil, err
		}
		if keep < n {
			// keep is whole blocks, each a node of the tree.
			m.dropTable(s, keep/bs)
			n, s.last = keep, m.root
			if keep > 0 {
				s.last = s.table[keep/bs-1]
			}
		}
	}
	s.n, s.cached = n, n
	m.promptTokens += int64(len(prompt))
	m.cachedTokens += int64(n)
	return s, nil
}

// Reserve makes s's table cover n positions in all, allocating blocks
// from the free list and, when that is empty, evicting unreferenced
// cached blocks, least recently used first. It is all or nothing: when
// the pool cannot supply every block needed, it changes nothing and
// returns false; the caller then waits, or preempts a sequence and
// releases it. Reserve of n <= s.Len() returns true and does nothing;
// Reserve on a released sequence returns false for any larger n.
func (m *Manager) Reserve(s *Seq, n int) bool {
	if n <= s.n {
		return true
	}
	if s.m != m {
		panic("kvcache: Reserve of a sequence of another Manager")
	}
	if s.done {
		return false
	}
	need := m.BlocksFor(n) - len(s.table)
	if need <= 0 {
		return true
	}
	if need > m.Available() || m.win != nil && m.localNeed(s, n) > m.localAvailable() {
		return false
	}
	if m.win != nil {
		m.reserveLocal(s, n)
	}
	for range need {
		b := m.alloc()
		if b == none {
			panic("kvcache: internal error: no block to allocate")
		}
		m.nodes[b].ref = 1
		m.used++
		s.table = append(s.table, b)
	}
	return true
}

// alloc takes a block off the free list or, when that is empty, evicts
// one. It returns none when neither can supply a block.
func (m *Manager) alloc() int32 {
	if k := len(m.free); k > 0 {
		b := m.free[k-1]
		m.free = m.free[:k-1]
		return b
	}
	return m.evict()
}

// Commit records that tokens, appended at positions s.Len().., have been
// written into s's blocks. With the prefix cache on, each block that
// became full is entered into the cache; if an identical block (same
// token path) is cached already, the cache keeps that one and s keeps its
// own, private block. Commit panics if the positions were not reserved or
// s was released.
func (m *Manager) Commit(s *Seq, tokens []int32) {
	if len(tokens) == 0 {
		return
	}
	if s.m != m || s.done {
		panic("kvcache: Commit to a released sequence or one of another Manager")
	}
	end := s.n + len(tokens)
	if end > len(s.table)*m.bs {
		panic(fmt.Sprintf("kvcache: Commit of %d tokens at position %d, past the %d positions reserved", len(tokens), s.n, len(s.table)*m.bs))
	}
	if !m.prefix {
		s.n = end
		if m.win != nil {
			m.dropOut(s)
		}
		return
	}
	m.clock++
	bs, p := m.bs, s.n
	for len(tokens) > 0 {
		b := int(s.table[p/bs])
		k := copy(m.tok[b*bs+p%bs:(b+1)*bs], tokens)
		tokens, p = tokens[k:], p+k
		if p%bs == 0 {
			m.fill(s, p/bs-1)
		}
	}
	s.n = end
	if m.win != nil {
		m.dropOut(s)
	}
}

// fill enters s's block j, just filled, into the tree below s's path,
// with its window block as its companion.
func (m *Manager) fill(s *Seq, j int) {
	b := s.table[j]
	t := m.tok[int(b)*m.bs : int(b+1)*m.bs]
	h := m.hash(t)
	if e := m.findChild(s.last, h, t); e != none {
		// A duplicate: s keeps b private and extends its path through e,
		// anchoring e so that it stays until s's next block is below it.
		m.touch(e)
		m.pin(e)
		m.unanchor(s)
		s.last, s.anchored = e, true
		if m.win != nil {
			m.attach(e, s.local[j])
		}
		return
	}
	m.link(b, s.last, h, m.bs)
	if m.win != nil {
		m.attach(b, s.local[j])
	}
	m.nodes[b].lastUse = m.clock
	m.unanchor(s)
	s.last = b
}

// unanchor drops s's anchor, if it holds one.
func (m *Manager) unanchor(s *Seq) {
	if s.anchored {
		s.anchored = false
		m.unpin(s.last)
	}
}

// Release ends s. Its references drop. With the prefix cache on, its full
// blocks already cached stay so, unreferenced and evictable, and its last
// partial block is entered into the cache too, so the next turn of a
// conversation, or a preempted sequence restarted, finds them. Blocks not
// cached go back to the free list. Releasing twice does nothing.
func (m *Manager) Release(s *Seq) {
	if s.done {
		return
	}
	if s.m != m {
		panic("kvcache: Release of a sequence of another Manager")
	}
	s.done = true
	m.clock++
	if m.prefix {
		if r := s.n % m.bs; r > 0 {
			b := s.table[s.n/m.bs]
			t := m.tok[int(b)*m.bs : int(b)*m.bs+r]
			// Cache it unless a cached sibling already starts with t.
			lb := Hole
			if m.win != nil {
				lb = s.local[s.n/m.bs]
			}
			if c, l := m.longestChild(s.last, t); l == r {
				m.touch(c)
				if m.win != nil && int(m.nodes[c].n) == r {
					m.attach(c, lb)
				}
			} else {
				m.link(b, s.last, m.hash(t), r)
				if m.win != nil {
					m.attach(b, lb)
				}
			}
		}
		m.unanchor(s)
	}
	if m.win != nil {
		m.releaseLocal(s)
	}
	m.dropTable(s, 0)
}

// dropTable gives back s's main-pool blocks from its table's entry k on:
// references to cached blocks drop, private blocks go back to the free
// list.
func (m *Manager) dropTable(s *Seq, k int) {
	for j := len(s.table) - 1; j >= k; j-- {
		b := s.table[j]
		if x := &m.nodes[b]; x.n > 0 {
			x.lastUse = m.clock
			m.decRef(b)
		} else {
			x.ref = 0
			m.used--
			m.free = append(m.free, b)
		}
	}
	s.table = s.table[:k]
	if k == 0 {
		s.table = nil
	}
}

// Available returns the blocks Reserve could hand out now: free blocks
// plus cached blocks that eviction can reach.
func (m *Manager) Available() int { return len(m.free) + m.reclaimable }

// Free returns the blocks that hold nothing: those Reserve takes before it
// evicts a cached prefix (with a window pool, the fewer of its and the
// main pool's).
func (m *Manager) Free() int {
	if m.win != nil {
		return min(len(m.free), len(m.win.free))
	}
	return len(m.free)
}

// Room returns the most positions Reserve could extend s to now, short of
// a preemption: what the free and evictable blocks of the main pool, and
// of the window pool, allow.
func (m *Manager) Room(s *Seq) int {
	n := (len(s.table) + m.Available()) * m.bs
	if m.win != nil {
		n = min(n, (max(len(s.local), m.firstSeen(s.n))+m.localAvailable())*m.bs)
	}
	return n
}

// Admits reports whether a new sequence of a prompt of n tokens may start
// beside running others without starving them: the pools hold its prompt
// (or, in the window pool, its first window) and a block more for each of
// the others.
func (m *Manager) Admits(n, running int) bool {
	if m.Available() < m.BlocksFor(n)+running {
		return false
	}
	return m.win == nil || m.localAvailable() >= min(m.BlocksFor(n), m.BlocksFor(m.win.Window)+1)+running
}

// BlocksFor returns the blocks n positions take.
func (m *Manager) BlocksFor(n int) int {
	if n <= 0 {
		return 0
	}
	return (n-1)/m.bs + 1
}

// Stats describes the pool of a Manager. Free+Used+Cached == Blocks.
type Stats struct {
	Blocks, BlockSize int

	Free   int // on the free list, holding nothing
	Used   int // referenced by at least one sequence
	Cached int // unreferenced, holding a cached prefix, evictable

	Evictions    int64 // blocks evicted so far
	PromptTokens int64 // tokens Start was given
	CachedTokens int64 // tokens Start reused from the prefix cache
}

// Stats returns the state of the pool and the counts so far.
//
// A cached block above a block referenced by a sequence, or one a
// sequence holds a private copy of and is extending its path through,
// counts as Cached but is evicted only once that ends; Available counts
// only the blocks eviction can reach now.
func (m *Manager) Stats() Stats {
	return Stats{
		Blocks:       m.blocks,
		BlockSize:    m.bs,
		Free:         len(m.free),
		Used:         m.used,
		Cached:       m.cached,
		Evictions:    m.evictions,
		PromptTokens: m.promptTokens,
		CachedTokens: m.cachedTokens,
	}
}
