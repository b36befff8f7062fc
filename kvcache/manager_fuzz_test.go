package kvcache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// simStore is a backend's KV storage, simulated: row r of block b holds
// the token id written at that position. It implements Copier.
type simStore struct {
	rows  [][]int32
	calls int   // CopyBlock calls
	fail  error // returned by CopyBlock when set
}

func newSimStore(blocks, bs int) *simStore {
	st := &simStore{rows: make([][]int32, blocks)}
	for b := range st.rows {
		st.rows[b] = make([]int32, bs)
		for r := range st.rows[b] {
			st.rows[b][r] = -1 // never a token
		}
	}
	return st
}

func (st *simStore) CopyBlock(dst, src int32) error {
	if st.fail != nil {
		return st.fail
	}
	st.calls++
	copy(st.rows[dst], st.rows[src])
	return nil
}

// read returns the tokens s's table reads back from the storage for
// positions [0, n).
func (st *simStore) read(s *Seq, bs, n int) []int32 {
	out := make([]int32, n)
	for p := range n {
		out[p] = st.rows[s.Table()[p/bs]][p%bs]
	}
	return out
}

// write writes tokens at positions s.Len().. through s's table, as a
// backend would, after checking that each block written is s's alone;
// with lst (the window pool's storage), through its local table too.
func (st *simStore) write(m *Manager, lst *simStore, s *Seq, tokens []int32) error {
	bs := m.BlockSize()
	for i, tok := range tokens {
		p := s.Len() + i
		b := s.Table()[p/bs]
		if x := m.nodes[b]; x.ref != 1 || x.n != 0 {
			return fmt.Errorf("position %d written into block %d of %d references, %d cached tokens", p, b, x.ref, x.n)
		}
		st.rows[b][p%bs] = tok
		if lst == nil {
			continue
		}
		lb := s.LocalTable()[p/bs]
		if lb == Hole || m.win.ref[lb] != 1 || m.win.owner[lb] != none {
			return fmt.Errorf("position %d written into window block %d (references %d, companion of %d)", p, lb, m.win.ref[max(lb, 0)], m.win.owner[max(lb, 0)])
		}
		lst.rows[lb][p%bs] = tok
	}
	return nil
}

// readWindow returns the tokens s's local table reads back for the
// positions a query at position n sees, [n-Window+1, n).
func (st *simStore) readWindow(s *Seq, bs, win, n int) ([]int32, int) {
	from := max(0, n-win+1)
	out := make([]int32, 0, n-from)
	for p := from; p < n; p++ {
		b := s.LocalTable()[p/bs]
		if b == Hole {
			out = append(out, -2)
			continue
		}
		out = append(out, st.rows[b][p%bs])
	}
	return out, from
}

// simSeq is a live sequence of the workload, with the tokens it has
// committed and the prompt tokens it has still to commit.
type simSeq struct {
	s       *Seq
	toks    []int32
	pending []int32
}

// workload drives a Manager with operations decoded from a byte string,
// checking every invariant after each.
type workload struct {
	m    *Manager
	st   *simStore
	lst  *simStore // the window pool's storage, or nil
	in   []byte
	live []*simSeq
	hist [][]int32 // token sequences of released sequences and prompts
}

func (w *workload) next() int {
	if len(w.in) == 0 {
		return 0
	}
	b := w.in[0]
	w.in = w.in[1:]
	return int(b)
}

// tokens returns n token ids from a small alphabet, so that prompts share
// prefixes often.
func (w *workload) tokens(n int) []int32 {
	t := make([]int32, n)
	for i := range t {
		t[i] = int32(w.next() % 3)
	}
	return t
}

// runWorkload runs the operations of in on a fresh Manager; in[0:3] pick
// the pool, the block size, the prefix cache and the hash.
func runWorkload(t testing.TB, in []byte) {
	if len(in) < 3 {
		return
	}
	blocks, bs, flags := 1+int(in[0]%24), 1+int(in[1]%6), in[2]
	st := newSimStore(blocks, bs)
	var lst *simStore
	var m *Manager
	if flags&4 != 0 {
		// A window pool: a window of 1 to 3 blocks and a few, of 2 to 25
		// blocks.
		win, lblocks := 1+int(flags>>3)%(3*bs), 2+int(in[1]>>3)%24
		lst = newSimStore(lblocks, bs)
		m = NewWindowManager(blocks, bs, flags&1 == 0, st, WindowPool{Blocks: lblocks, Window: win, Copy: lst.CopyBlock})
	} else {
		m = NewManager(blocks, bs, flags&1 == 0, st)
	}
	if flags&2 != 0 {
		// A weak hash: children collide, so lookups must compare tokens.
		m.hash = func(t []int32) uint64 { return uint64(len(t)) }
	}
	w := &workload{m: m, st: st, lst: lst, in: in[3:]}
	for op := 0; len(w.in) > 0; op++ {
		what, err := w.step()
		if err == nil {
			err = check(m, st, w.live)
		}
		if err == nil && lst != nil {
			err = checkWindow(m, lst, w.live)
		}
		if err != nil {
			t.Fatalf("op %d (%s): %v", op, what, err)
		}
	}
	// Release everything: no block is referenced; a sequence reserving
	// the whole pool evicts every cached block; releasing it frees all.
	for _, q := range w.live {
		m.Release(q.s)
	}
	w.live = nil
	if err := check(m, st, nil); err != nil {
		t.Fatalf("after releasing all: %v", err)
	}
	if s := m.Stats(); s.Used != 0 || m.Available() != blocks {
		t.Fatalf("after releasing all: %+v, %d available", s, m.Available())
	}
	if lst != nil {
		if err := checkWindow(m, lst, nil); err != nil {
			t.Fatalf("after releasing all: %v", err)
		}
		if s := m.LocalStats(); s.Used != 0 || s.Free+s.Idle != s.Blocks {
			t.Fatalf("after releasing all: window pool %+v", s)
		}
		return
	}
	s, err := m.Start(nil)
	if err != nil || !m.Reserve(s, blocks*bs) {
		t.Fatalf("reserving the whole pool: %v", err)
	}
	m.Release(s)
	if err := check(m, st, nil); err != nil {
		t.Fatalf("at the end: %v", err)
	}
	if s := m.Stats(); s.Free != blocks || s.Used != 0 || s.Cached != 0 {
		t.Fatalf("at the end: %+v", s)
	}
}

// step runs one operation and checks its immediate results.
func (w *workload) step() (string, error) {
	m, bs := w.m, w.m.BlockSize()
	op := w.next() % 8
	if op >= 2 && len(w.live) == 0 {
		op = 0
	}
	switch op {
	case 0, 1: // Start
		var prompt []int32
		if len(w.hist) > 0 && w.next()%4 != 0 {
			h := w.hist[w.next()%len(w.hist)]
			prompt = slices.Clone(h[:w.next()%(len(h)+1)])
		}
		prompt = append(prompt, w.tokens(w.next()%(2*bs+2))...)
		w.hist = append(w.hist, prompt)
		before, avail, calls, lbefore := m.Stats(), m.Available(), w.st.calls, m.LocalStats()
		fail := w.next()%8 == 0
		if fail {
			w.st.fail = errors.New("copy failed")
			if w.lst != nil && w.next()%2 == 0 {
				w.st.fail, w.lst.fail = nil, errors.New("window copy failed")
			}
		}
		lcalls := 0
		if w.lst != nil {
			lcalls = w.lst.calls
		}
		s, err := m.Start(prompt)
		w.st.fail = nil
		if w.lst != nil {
			w.lst.fail = nil
		}
		if err != nil {
			after, lafter := m.Stats(), m.LocalStats()
			if !fail || after.Used != before.Used || m.Available() != avail || after.Free+after.Cached != before.Free+before.Cached || lafter.Used != lbefore.Used || lafter.Free+lafter.Idle != lbefore.Free+lbefore.Idle {
				return "Start", fmt.Errorf("failed Start (%v): %+v before, %+v after; window pool %+v before, %+v after", err, before, after, lbefore, lafter)
			}
			return "failed Start", nil
		}
		c := s.Cached()
		switch {
		case c != s.Len() || c < 0 || c > max(len(prompt)-1, 0) || !m.prefix && c != 0:
			return "Start", fmt.Errorf("Start of %d tokens: cached %d, len %d", len(prompt), c, s.Len())
		case !slices.Equal(w.st.read(s, bs, c), prompt[:c]):
			return "Start", fmt.Errorf("cached prefix %v of %v", w.st.read(s, bs, c), prompt)
		case c%bs != 0 && w.st.calls != calls+1, c%bs == 0 && w.st.calls > calls+1:
			return "Start", fmt.Errorf("cached %d of block size %d after %d copies", c, bs, w.st.calls-calls)
		case w.lst == nil && c%bs == 0 && w.st.calls != calls:
			return "Start", fmt.Errorf("cached %d of block size %d after %d copies", c, bs, w.st.calls-calls)
		case w.lst != nil && (w.lst.calls-lcalls != w.st.calls-calls) != (c%bs == 0 && w.st.calls != calls):
			// A partial block copied but the match cut back to whole
			// blocks (its window could not be had) is the only way the
			// two pools' copies differ.
			return "Start", fmt.Errorf("cached %d: %d copies, %d window copies", c, w.st.calls-calls, w.lst.calls-lcalls)
		}
		if w.lst != nil {
			win, _ := m.Window()
			if got, from := w.lst.readWindow(s, bs, win, c); !slices.Equal(got, prompt[from:c]) {
				return "Start", fmt.Errorf("cached %d: window reads back %v, prompt %v", c, got, prompt[from:c])
			}
		}
		w.live = append(w.live, &simSeq{s: s, toks: slices.Clone(prompt[:c]), pending: prompt[c:]})
		return "Start", nil
	case 2, 3, 4: // Reserve, write and Commit
		q := w.live[w.next()%len(w.live)]
		k := 1 + w.next()%(2*bs+1)
		tokens := q.pending[:min(k, len(q.pending))]
		tokens = append(slices.Clone(tokens), w.tokens(k-len(tokens))...)
		n := q.s.Len() + len(tokens)
		extra := w.next() % 3 // positions reserved beyond those written
		if err := w.reserve(q, n+extra); err != nil || len(q.s.Table())*bs < n {
			return "Reserve", err
		}
		if err := w.st.write(m, w.lst, q.s, tokens); err != nil {
			return "write", err
		}
		for len(tokens) > 0 { // in one or two calls
			c := min(len(tokens), 1+w.next()%len(tokens))
			m.Commit(q.s, tokens[:c])
			q.toks = append(q.toks, tokens[:c]...)
			tokens = tokens[c:]
		}
		q.pending = q.pending[min(k, len(q.pending)):]
		return "Commit", nil
	case 5, 6: // Release
		i := w.next() % len(w.live)
		q := w.live[i]
		w.live = slices.Delete(w.live, i, i+1)
		m.Release(q.s)
		w.hist = append(w.hist, q.toks)
		if w.next()%4 == 0 {
			before := m.Stats()
			m.Release(q.s)
			if m.Stats() != before {
				return "Release", errors.New("a second Release changed the pool")
			}
		}
		return "Release", nil
	default: // Reserve only, possibly more than the pool holds
		q := w.live[w.next()%len(w.live)]
		return "Reserve", w.reserve(q, q.s.Len()-1+w.next()%(3*bs+2))
	}
}

// reserve reserves n positions for q and checks that a refusal changed
// nothing.
func (w *workload) reserve(q *simSeq, n int) error {
	m := w.m
	before, avail, table := m.Stats(), m.Available(), slices.Clone(q.s.Table())
	lbefore, local, room := m.LocalStats(), slices.Clone(q.s.LocalTable()), m.Room(q.s)
	need := m.BlocksFor(n) - len(table)
	fits := need <= avail
	if m.win != nil && need > 0 {
		fits = fits && m.localNeed(q.s, n) <= m.localAvailable()
	}
	ok := m.Reserve(q.s, n)
	switch {
	case ok != fits:
		return fmt.Errorf("Reserve of %d blocks with %d available: %v", need, avail, ok)
	case n > q.s.Len() && ok != (n <= room):
		return fmt.Errorf("Reserve of %d positions, room for %d: %v", n, room, ok)
	case !ok && (m.LocalStats() != lbefore || !slices.Equal(q.s.LocalTable(), local)):
		return errors.New("a refused Reserve changed the window pool")
	case ok && len(q.s.Table()) != max(len(table), m.BlocksFor(n)):
		return fmt.Errorf("Reserve of %d positions: table of %d blocks", n, len(q.s.Table()))
	case ok && !slices.Equal(q.s.Table()[:len(table)], table):
		return errors.New("Reserve changed blocks already in the table")
	case !ok && (m.Stats() != before || !slices.Equal(q.s.Table(), table)):
		return fmt.Errorf("a refused Reserve changed the pool: %+v before, %+v after", before, m.Stats())
	}
	return nil
}

// check verifies every invariant of m, whose live sequences are live, and
// that the storage st holds what the tree and the sequences say.
func check(m *Manager, st *simStore, live []*simSeq) error {
	bs, nb := m.bs, m.blocks
	refs, anchors := make([]int32, nb+1), make([]int32, nb+1)
	for _, q := range live {
		s := q.s
		seen := map[int32]bool{}
		for _, b := range s.table {
			if seen[b] {
				return fmt.Errorf("block %d twice in a table", b)
			}
			seen[b] = true
			refs[b]++
		}
		if s.anchored {
			anchors[s.last]++
		}
	}
	free := make([]bool, nb)
	for _, b := range m.free {
		if free[b] {
			return fmt.Errorf("block %d twice on the free list", b)
		}
		free[b] = true
	}
	var nFree, nUsed, nCached int
	for b := range int32(nb) {
		x := m.nodes[b]
		switch {
		case x.ref != refs[b]:
			return fmt.Errorf("block %d: %d references, tables hold %d", b, x.ref, refs[b])
		case x.anchors != anchors[b]:
			return fmt.Errorf("block %d: %d anchors, sequences hold %d", b, x.anchors, anchors[b])
		case free[b] && (x.ref != 0 || x.n != 0):
			return fmt.Errorf("block %d free and used (%d references) or cached (%d tokens)", b, x.ref, x.n)
		case free[b]:
			nFree++
		case x.ref > 0:
			nUsed++
		case x.n > 0:
			nCached++
		default:
			return fmt.Errorf("block %d leaked: not free, unreferenced, not cached", b)
		}
	}
	s := m.Stats()
	if s.Free != nFree || s.Used != nUsed || s.Cached != nCached || s.Free+s.Used+s.Cached != s.Blocks || s.Blocks != nb {
		return fmt.Errorf("stats %+v; counted %d free, %d used, %d cached", s, nFree, nUsed, nCached)
	}
	if err := checkTree(m, st); err != nil {
		return err
	}
	for _, q := range live {
		s := q.s
		if s.Len() != len(q.toks) || len(s.table)*bs < s.Len() {
			return fmt.Errorf("sequence of %d tokens: Len %d, %d blocks", len(q.toks), s.Len(), len(s.table))
		}
		if got := st.read(s, bs, s.Len()); !slices.Equal(got, q.toks) {
			return fmt.Errorf("sequence reads back %v, wrote %v", got, q.toks)
		}
		for j := s.Len() / bs; j < len(s.table); j++ {
			if b := s.table[j]; m.nodes[b].ref != 1 || m.nodes[b].n != 0 {
				return fmt.Errorf("block %d, which the sequence writes next, is shared or cached", b)
			}
		}
		if m.prefix {
			if p := path(m, s.last); !slices.Equal(p, q.toks[:s.Len()/bs*bs]) {
				return fmt.Errorf("sequence of %v extends the tree path %v", q.toks, p)
			}
		}
	}
	return nil
}

// checkTree verifies the tree, the held counts and the eviction heap.
func checkTree(m *Manager, st *simStore) error {
	bs, nb := m.bs, m.blocks
	if !m.prefix {
		if len(m.heap) != 0 || m.reclaimable != 0 || m.nodes[m.root].child != none {
			return errors.New("a tree without the prefix cache")
		}
		return nil
	}
	held := make([]bool, nb+1)
	var mark func(b int32) bool
	mark = func(b int32) bool {
		x := m.nodes[b]
		h := x.ref > 0 || x.anchors > 0
		var kids, heldKids int32
		var sibs [][]int32
		prev := none
		for c := x.child; c != none; c = m.nodes[c].next {
			y := m.nodes[c]
			t := m.tokens(c)
			switch {
			case kids > int32(nb):
				return false
			case y.parent != b || y.prev != prev || y.n < 1 || int(y.n) > bs:
				panic(fmt.Sprintf("node %d: parent %d, prev %d, %d tokens", c, y.parent, y.prev, y.n))
			case b != m.root && int(x.n) != bs:
				panic(fmt.Sprintf("partial node %d has children", b))
			case y.hash != m.hash(t) || m.findChild(b, y.hash, t) != c:
				panic(fmt.Sprintf("node %d not found by its tokens %v", c, t))
			case slices.ContainsFunc(sibs, func(u []int32) bool { return slices.Equal(u, t) }):
				panic(fmt.Sprintf("node %d duplicates a sibling", c))
			case !slices.Equal(st.rows[c][:y.n], t):
				panic(fmt.Sprintf("node %d holds %v, storage %v", c, t, st.rows[c][:y.n]))
			}
			sibs = append(sibs, t)
			prev = c
			kids++
			if mark(c) {
				heldKids++
				h = true
			}
		}
		if x.kids != kids || x.heldKids != heldKids {
			panic(fmt.Sprintf("node %d: %d children (%d held), counted %d (%d)", b, x.kids, x.heldKids, kids, heldKids))
		}
		held[b] = h
		return h
	}
	var err error
	func() {
		defer func() {
			if e := recover(); e != nil {
				err = fmt.Errorf("%v", e)
			}
		}()
		mark(m.root)
	}()
	if err != nil {
		return err
	}
	var reclaimable, leaves int
	for b := range int32(nb) {
		x := m.nodes[b]
		if x.n == 0 {
			if x.heap != none || x.child != none {
				return fmt.Errorf("block %d outside the tree in the heap or with children", b)
			}
			continue
		}
		if p := m.nodes[x.parent]; x.parent != m.root && p.n == 0 {
			return fmt.Errorf("node %d below a block outside the tree", b)
		}
		evictable := !held[b] && x.kids == 0
		if !held[b] {
			reclaimable++
		}
		if evictable {
			leaves++
		}
		if evictable != (x.heap != none) {
			return fmt.Errorf("node %d: evictable %v, heap index %d", b, evictable, x.heap)
		}
	}
	if len(m.kids) > nb || len(m.heap) != leaves || reclaimable != m.reclaimable || m.Available() != len(m.free)+reclaimable {
		return fmt.Errorf("%d hash keys, heap of %d for %d leaves, %d reclaimable for %d", len(m.kids), len(m.heap), leaves, m.reclaimable, reclaimable)
	}
	for i, b := range m.heap {
		if int(m.nodes[b].heap) != i || i > 0 && m.less(i, (i-1)/2) {
			return fmt.Errorf("heap out of order at %d", i)
		}
	}
	return nil
}

// path returns the tokens on the tree's path from the root to node b.
func path(m *Manager, b int32) []int32 {
	var p []int32
	for ; b != m.root; b = m.nodes[b].parent {
		p = append(slices.Clone(m.tokens(b)), p...)
	}
	return p
}

// TestRandomWorkloads runs random workloads on pools of every shape.
func TestRandomWorkloads(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		in := make([]byte, 3+r.IntN(1500))
		for j := range in {
			in[j] = byte(r.Uint32())
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { runWorkload(t, in) })
	}
}

// FuzzManager drives random Start, Reserve, Commit and Release sequences
// and checks every invariant after each.
func FuzzManager(f *testing.F) {
	f.Add([]byte{7, 3, 0, 0, 10, 0, 0, 2, 0, 9, 1, 2, 5, 0, 1, 0, 4, 5, 0, 0, 1, 1, 0, 3, 2, 2, 0, 9})
	f.Add([]byte{3, 1, 2, 0, 4, 1, 2, 1, 0, 0, 3, 1, 1, 2, 7, 0, 0, 1, 5, 0, 0, 1, 0, 2, 4, 1, 0, 7, 0, 12})
	f.Add([]byte{23, 5, 0, 0, 0, 11, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 2, 0, 14, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 5, 0, 1, 1, 0, 0, 12, 3})
	f.Add([]byte{4, 2, 1, 0, 5, 1, 2, 0, 1, 2, 2, 0, 3, 0, 7, 0, 8, 5, 0, 6, 0})
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		in := make([]byte, 200+r.IntN(400))
		for j := range in {
			in[j] = byte(r.Uint32())
		}
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) { runWorkload(t, in) })
}

// checkWindow verifies the window pool of m, whose live sequences are
// live, against its storage lst.
func checkWindow(m *Manager, lst *simStore, live []*simSeq) error {
	w, bs := m.win, m.bs
	refs := make([]int32, w.Blocks)
	for _, q := range live {
		s := q.s
		if len(s.local) != len(s.table) {
			return fmt.Errorf("local table of %d blocks, table of %d", len(s.local), len(s.table))
		}
		first := m.firstSeen(s.n)
		for j, b := range s.local {
			switch {
			case j < s.lo && b != Hole:
				return fmt.Errorf("local block %d before the window's start %d is %d", j, s.lo, b)
			case j >= first && b == Hole:
				return fmt.Errorf("local block %d of a sequence of %d positions (window from block %d) is a hole", j, s.n, first)
			case b != Hole:
				refs[b]++
			}
		}
		if s.lo > max(first, 0) {
			return fmt.Errorf("window from block %d, holes up to %d", first, s.lo)
		}
		if got, from := lst.readWindow(s, bs, w.Window, s.n); !slices.Equal(got, q.toks[from:]) {
			return fmt.Errorf("window reads back %v, wrote %v", got, q.toks[from:])
		}
	}
	free := make([]bool, w.Blocks)
	for _, b := range w.free {
		if free[b] {
			return fmt.Errorf("window block %d twice on the free list", b)
		}
		free[b] = true
	}
	var nFree, nUsed, nIdle int
	for b := range int32(w.Blocks) {
		o := w.owner[b]
		switch {
		case w.ref[b] != refs[b]:
			return fmt.Errorf("window block %d: %d references, tables hold %d", b, w.ref[b], refs[b])
		case free[b] && (refs[b] != 0 || o != none):
			return fmt.Errorf("window block %d free and used or a companion", b)
		case o != none && (w.comp[o] != b || m.nodes[o].n == 0):
			return fmt.Errorf("window block %d: companion of %d, whose companion is %d (%d tokens)", b, o, w.comp[o], m.nodes[o].n)
		case o != none && !slices.Equal(lst.rows[b][:m.nodes[o].n], m.tokens(o)):
			return fmt.Errorf("window block %d holds %v, its node %v", b, lst.rows[b][:m.nodes[o].n], m.tokens(o))
		case free[b]:
			nFree++
		case refs[b] > 0:
			nUsed++
		case o != none:
			nIdle++
		default:
			return fmt.Errorf("window block %d leaked", b)
		}
	}
	for b, c := range w.comp {
		if c != none && w.owner[c] != int32(b) {
			return fmt.Errorf("node %d: companion %d owned by %d", b, c, w.owner[c])
		}
	}
	if s := m.LocalStats(); s.Free != nFree || s.Used != nUsed || s.Idle != nIdle || s.Free+s.Used+s.Idle != s.Blocks {
		return fmt.Errorf("window stats %+v; counted %d free, %d used, %d idle", s, nFree, nUsed, nIdle)
	}
	return nil
}
