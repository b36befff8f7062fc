package kvcache

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

var _ Copier = (*Pages)(nil)

// seqOf returns token ids base, base+1, ... of length n.
func seqOf(base, n int) []int32 {
	t := make([]int32, n)
	for i := range t {
		t[i] = int32(base + i)
	}
	return t
}

// cat returns the concatenation of token slices.
func cat(ts ...[]int32) []int32 {
	var out []int32
	for _, t := range ts {
		out = append(out, t...)
	}
	return out
}

// run reserves, writes and commits tokens for s, failing t if the pool
// cannot supply them, and checks the invariants.
func run(t *testing.T, m *Manager, st *simStore, s *Seq, tokens []int32) {
	t.Helper()
	if !m.Reserve(s, s.Len()+len(tokens)) {
		t.Fatalf("Reserve of %d positions failed with %d available", s.Len()+len(tokens), m.Available())
	}
	if err := st.write(m, nil, s, tokens); err != nil {
		t.Fatal(err)
	}
	m.Commit(s, tokens)
}

// start starts prompt, failing t on an error.
func start(t *testing.T, m *Manager, prompt []int32) *Seq {
	t.Helper()
	s, err := m.Start(prompt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkLive runs check on the live sequences, with the tokens they hold.
func checkLive(t *testing.T, m *Manager, st *simStore, seqs map[*Seq][]int32) {
	t.Helper()
	var live []*simSeq
	for s, toks := range seqs {
		live = append(live, &simSeq{s: s, toks: toks})
	}
	if err := check(m, st, live); err != nil {
		t.Fatal(err)
	}
}

// TestPrefixHit starts two prompts sharing a system prompt of 3.5 blocks:
// the second shares the 3 whole blocks and copies the half block.
func TestPrefixHit(t *testing.T) {
	const bs = 4
	st := newSimStore(16, bs)
	m := NewManager(16, bs, true, st)
	sys := seqOf(100, 14)
	p1, p2 := cat(sys, seqOf(200, 5)), cat(sys, seqOf(300, 3))
	s1 := start(t, m, p1)
	if s1.Cached() != 0 {
		t.Fatalf("first prompt: %d cached", s1.Cached())
	}
	run(t, m, st, s1, p1)
	s2 := start(t, m, p2)
	if s2.Cached() != len(sys) || s2.Len() != len(sys) || st.calls != 1 {
		t.Fatalf("second prompt: %d cached, len %d, %d copies; want %d, 1 copy", s2.Cached(), s2.Len(), st.calls, len(sys))
	}
	if !slices.Equal(s2.Table()[:3], s1.Table()[:3]) || s2.Table()[3] == s1.Table()[3] {
		t.Fatalf("tables %v and %v: want 3 shared blocks, then a copy", s1.Table(), s2.Table())
	}
	for _, b := range s1.Table()[:3] {
		if m.nodes[b].ref != 2 {
			t.Errorf("shared block %d: %d references", b, m.nodes[b].ref)
		}
	}
	checkLive(t, m, st, map[*Seq][]int32{s1: p1, s2: sys})
	run(t, m, st, s2, p2[len(sys):])
	checkLive(t, m, st, map[*Seq][]int32{s1: p1, s2: p2})
	if s := m.Stats(); s.PromptTokens != int64(len(p1)+len(p2)) || s.CachedTokens != int64(len(sys)) {
		t.Errorf("stats %+v", s)
	}
	// A third prompt equal to the first reuses its 4 whole blocks, not the
	// partial block s1 is still writing.
	s3 := start(t, m, p1)
	if s3.Cached() != 16 || st.calls != 1 {
		t.Fatalf("repeated prompt: %d cached, %d copies", s3.Cached(), st.calls)
	}
	checkLive(t, m, st, map[*Seq][]int32{s1: p1, s2: p2, s3: p1[:16]})
	// Once s1 is released, its partial block is cached too: a fourth
	// start of p1 reuses all but its last token.
	m.Release(s1)
	s4 := start(t, m, p1)
	if s4.Cached() != len(p1)-1 || st.calls != 2 {
		t.Fatalf("repeated prompt after Release: %d cached, %d copies", s4.Cached(), st.calls)
	}
	checkLive(t, m, st, map[*Seq][]int32{s2: p2, s3: p1[:16], s4: p1[:len(p1)-1]})
	for _, s := range []*Seq{s2, s3, s4} {
		m.Release(s)
	}
	checkLive(t, m, st, nil)
}

// TestNextTurn releases a conversation's first turn and starts the next:
// everything they share is reused, the released partial block by a copy.
func TestNextTurn(t *testing.T) {
	const bs = 4
	st := newSimStore(12, bs)
	m := NewManager(12, bs, true, st)
	p1, gen, more := seqOf(1, 10), seqOf(50, 5), seqOf(80, 4)
	s1 := start(t, m, p1)
	run(t, m, st, s1, p1)
	for _, tok := range gen { // decode, one token at a time
		run(t, m, st, s1, []int32{tok})
	}
	m.Release(s1)
	checkLive(t, m, st, nil)
	if s := m.Stats(); s.Used != 0 || s.Cached != 4 || s.Free != 8 {
		t.Fatalf("after the first turn: %+v", s)
	}
	p2 := cat(p1, gen, more)
	s2 := start(t, m, p2)
	if n := len(p1) + len(gen); s2.Cached() != n || st.calls != 1 {
		t.Fatalf("next turn: %d cached, %d copies; want %d, 1", s2.Cached(), st.calls, n)
	}
	checkLive(t, m, st, map[*Seq][]int32{s2: p2[:s2.Cached()]})
	run(t, m, st, s2, p2[s2.Cached():])
	checkLive(t, m, st, map[*Seq][]int32{s2: p2})
	m.Release(s2)
	// A preempted sequence restarted finds all of itself but one token.
	s3 := start(t, m, p2)
	if s3.Cached() != len(p2)-1 {
		t.Fatalf("restart: %d cached of %d", s3.Cached(), len(p2))
	}
	checkLive(t, m, st, map[*Seq][]int32{s3: p2[:len(p2)-1]})
}

// TestEviction fills the pool with cached blocks: Reserve evicts the least
// recently used leaves, never referenced blocks, and refuses, changing
// nothing, what even eviction cannot supply.
func TestEviction(t *testing.T) {
	const bs = 4
	st := newSimStore(8, bs)
	m := NewManager(8, bs, true, st)
	prompts := [][]int32{seqOf(0, 8), seqOf(100, 8), seqOf(200, 8), seqOf(300, 8)}
	var tables [][]int32
	for _, p := range prompts {
		s := start(t, m, p)
		run(t, m, st, s, p)
		tables = append(tables, slices.Clone(s.Table()))
		m.Release(s)
	}
	if s := m.Stats(); s.Free != 0 || s.Cached != 8 || m.Available() != 8 {
		t.Fatalf("full of cached blocks: %+v", s)
	}
	// Use the first prompt again: its blocks become the most recent, and
	// referenced.
	a := start(t, m, cat(prompts[0], seqOf(900, 1)))
	if a.Cached() != 8 || !slices.Equal(a.Table(), tables[0]) {
		t.Fatalf("reuse: %d cached, table %v", a.Cached(), a.Table())
	}
	b := start(t, m, seqOf(500, 6))
	if !m.Reserve(b, 6) {
		t.Fatal("Reserve of 2 blocks failed")
	}
	if s := m.Stats(); s.Evictions != 2 {
		t.Fatalf("%d evictions, want 2", s.Evictions)
	}
	if !slices.Equal(sorted(b.Table()), sorted(tables[1])) {
		t.Fatalf("evicted %v, want the least recently used %v", b.Table(), tables[1])
	}
	checkLive(t, m, st, map[*Seq][]int32{a: prompts[0], b: nil})
	// 4 blocks are cached and evictable, 4 referenced: 5 cannot be had.
	before, table := m.Stats(), slices.Clone(b.Table())
	if m.Reserve(b, 7*bs) {
		t.Fatal("Reserve of 5 more blocks with 4 available succeeded")
	}
	if m.Stats() != before || !slices.Equal(b.Table(), table) {
		t.Fatalf("a refused Reserve changed %+v to %+v", before, m.Stats())
	}
	if !m.Reserve(b, 6*bs) || m.Available() != 0 {
		t.Fatalf("Reserve of the 4 evictable blocks: %d left", m.Available())
	}
	for _, x := range tables[0] {
		if !slices.Contains(a.Table(), x) || m.nodes[x].n != bs {
			t.Fatalf("referenced block %d evicted", x)
		}
	}
	checkLive(t, m, st, map[*Seq][]int32{a: prompts[0], b: nil})
	m.Release(a)
	m.Release(b)
	if s := m.Stats(); s.Free != 6 || s.Cached != 2 || s.Evictions != 6 {
		t.Fatalf("at the end: %+v", s)
	}
}

func sorted(t []int32) []int32 {
	t = slices.Clone(t)
	slices.Sort(t)
	return t
}

// TestNoPrefixCache checks that without the prefix cache nothing is
// reused and Release frees every block.
func TestNoPrefixCache(t *testing.T) {
	st := newSimStore(6, 4)
	m := NewManager(6, 4, false, st)
	if m.Blocks() != 6 || m.BlockSize() != 4 {
		t.Fatalf("%d blocks of %d", m.Blocks(), m.BlockSize())
	}
	p := seqOf(0, 9)
	for range 2 {
		s := start(t, m, p)
		if s.Cached() != 0 {
			t.Fatalf("%d cached without a prefix cache", s.Cached())
		}
		run(t, m, st, s, p)
		checkLive(t, m, st, map[*Seq][]int32{s: p})
		m.Release(s)
		if s := m.Stats(); s.Free != 6 || s.Used != 0 || s.Cached != 0 {
			t.Fatalf("after Release: %+v", s)
		}
	}
	if st.calls != 0 {
		t.Fatalf("%d copies", st.calls)
	}
}

// TestCopierFailure checks that Start reports a failed copy and holds on
// to nothing.
func TestCopierFailure(t *testing.T) {
	st := newSimStore(8, 4)
	m := NewManager(8, 4, true, st)
	p := seqOf(0, 10)
	s := start(t, m, p)
	run(t, m, st, s, p)
	m.Release(s)
	before, avail := m.Stats(), m.Available()
	st.fail = errors.New("device lost")
	if _, err := m.Start(p); err == nil {
		t.Fatal("Start succeeded with a failing Copier")
	}
	after := m.Stats()
	if after.Used != 0 || m.Available() != avail || after.Free != before.Free || after.Cached != before.Cached {
		t.Fatalf("failed Start changed %+v to %+v", before, after)
	}
	checkLive(t, m, st, nil)
	// Without a Copier, only whole blocks are reused.
	m.cp = nil
	if s := start(t, m, p); s.Cached() != 8 {
		t.Fatalf("without a Copier: %d cached", s.Cached())
	}
}

// TestBadInput checks the documented panics and no-ops.
func TestBadInput(t *testing.T) {
	for _, c := range [][2]int{{0, 4}, {4, 0}, {-1, 1}} {
		func() {
			defer func() {
				if e := recover(); e == nil || !strings.Contains(e.(string), "NewManager") {
					t.Errorf("NewManager(%d, %d): panic %v", c[0], c[1], e)
				}
			}()
			NewManager(c[0], c[1], true, nil)
		}()
	}
	m := NewManager(2, 4, true, nil)
	s := start(t, m, seqOf(0, 3))
	if !m.Reserve(s, 0) || len(s.Table()) != 0 {
		t.Fatal("Reserve of 0 positions")
	}
	func() {
		defer func() {
			if e := recover(); e == nil || !strings.Contains(e.(string), "reserved") {
				t.Errorf("Commit past the reservation: panic %v", e)
			}
		}()
		m.Reserve(s, 3)
		m.Commit(s, seqOf(0, 5))
	}()
	if m.Reserve(s, 9) || m.Stats().Free != 1 {
		t.Fatal("Reserve beyond the pool")
	}
	m.Release(s)
	m.Release(s)
	if m.Reserve(s, 1) || m.Stats().Free != 2 {
		t.Fatal("Reserve of a released sequence")
	}
	if m.BlocksFor(0) != 0 || m.BlocksFor(1) != 1 || m.BlocksFor(8) != 2 || m.BlocksFor(9) != 3 {
		t.Error("BlocksFor")
	}
	if s := start(t, m, nil); s.Cached() != 0 || s.Len() != 0 {
		t.Error("empty prompt")
	}
}

// TestDecodeAllocs checks that the decode path, Reserve of one more
// position inside the last block and Commit of one token that does not
// fill it, does not allocate.
func TestDecodeAllocs(t *testing.T) {
	for _, prefix := range []bool{false, true} {
		m := NewManager(4, 1024, prefix, nil)
		s := start(t, m, seqOf(0, 8))
		if !m.Reserve(s, 1) {
			t.Fatal("Reserve")
		}
		tok := []int32{7}
		allocs := testing.AllocsPerRun(500, func() {
			if !m.Reserve(s, s.Len()+1) {
				panic("Reserve failed")
			}
			m.Commit(s, tok)
		})
		if allocs != 0 || s.Len() != 501 {
			t.Errorf("prefix cache %v: %v allocations per decode step, len %d", prefix, allocs, s.Len())
		}
	}
}

// TestLRUOrder checks the eviction order: Release and a partial match by
// Start count as uses, and a leaf goes before its parent.
func TestLRUOrder(t *testing.T) {
	const bs = 4
	st := newSimStore(9, bs)
	m := NewManager(9, bs, true, st)
	seqs := map[string]*Seq{}
	tables := map[string][]int32{}
	for i, name := range []string{"A", "B", "C", "D"} {
		p := seqOf(100*i, 2*bs)
		seqs[name] = start(t, m, p)
		run(t, m, st, seqs[name], p)
		tables[name] = slices.Clone(seqs[name].Table())
	}
	for _, name := range []string{"C", "B", "A", "D"} {
		m.Release(seqs[name])
	}
	// Share B's first block and copy 2 tokens of its second: the copy
	// takes the free block, and B's second block becomes the most recent.
	b := start(t, m, cat(seqOf(100, bs+2), []int32{999}))
	if b.Cached() != bs+2 || b.Table()[0] != tables["B"][0] || m.Stats().Free != 0 {
		t.Fatalf("partial match of B: %d cached, table %v", b.Cached(), b.Table())
	}
	want := []int32{tables["C"][1], tables["C"][0], tables["A"][1], tables["A"][0], tables["D"][1], tables["D"][0], tables["B"][1]}
	for i, w := range want {
		s := start(t, m, nil)
		if !m.Reserve(s, 1) || s.Table()[0] != w {
			t.Fatalf("eviction %d: got block %v, want %d", i, s.Table(), w)
		}
	}
	if s := start(t, m, nil); m.Reserve(s, 1) || m.Stats().Evictions != 7 {
		t.Fatalf("Reserve with every block referenced: %+v", m.Stats())
	}
}

// TestStartNew: a sequence started with StartNew reuses nothing, even
// when its prompt is cached, and its blocks are cached for later ones.
func TestStartNew(t *testing.T) {
	const bs = 4
	st := newSimStore(12, bs)
	m := NewManager(12, bs, true, st)
	p := seqOf(1, 10)
	s1 := start(t, m, p)
	run(t, m, st, s1, p)
	m.Release(s1)
	s2 := m.StartNew(p)
	if s2.Cached() != 0 || len(s2.Table()) != 0 {
		t.Fatalf("StartNew: %d cached, table %v", s2.Cached(), s2.Table())
	}
	run(t, m, st, s2, p)
	checkLive(t, m, st, map[*Seq][]int32{s2: p})
	m.Release(s2)
	s3 := start(t, m, p)
	if s3.Cached() != len(p)-1 {
		t.Fatalf("after StartNew: %d cached, want %d", s3.Cached(), len(p)-1)
	}
	m.Release(s3)
	if s := m.Stats(); s.Used != 0 || s.Free+s.Cached != s.Blocks {
		t.Fatalf("%+v", s)
	}
}
