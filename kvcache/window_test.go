package kvcache

import (
	"slices"
	"testing"
)

// TestWindowPoolHoldsAWindow decodes a sequence far past its window on a
// window pool of a window's blocks and two more: the pool never runs
// out, the blocks out of the window are holes, and the next prompt with
// its prefix reuses it, window included.
func TestWindowPoolHoldsAWindow(t *testing.T) {
	const bs, win, n = 16, 64, 1000
	lblocks := win/bs + 2
	st, lst := newSimStore(100, bs), newSimStore(lblocks, bs)
	m := NewWindowManager(100, bs, true, st, WindowPool{Blocks: lblocks, Window: win, Copy: lst.CopyBlock})
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(i % 7)
	}
	s, err := m.Start(toks[:40])
	if err != nil {
		t.Fatal(err)
	}
	q := &simSeq{s: s}
	for p := 0; p < n; {
		k := 1
		if p < 40 {
			k = 40 // a prompt chunk, then decode steps
		}
		if !m.Reserve(s, p+k) {
			t.Fatalf("Reserve of %d positions refused: %+v", p+k, m.LocalStats())
		}
		if err := st.write(m, lst, s, toks[p:p+k]); err != nil {
			t.Fatal(err)
		}
		m.Commit(s, toks[p:p+k])
		q.toks = append(q.toks, toks[p:p+k]...)
		p += k
		if err := checkWindow(m, lst, []*simSeq{q}); err != nil {
			t.Fatalf("at %d: %v", p, err)
		}
	}
	if u := m.LocalStats().Used; u > win/bs+1 {
		t.Errorf("%d window blocks held for a window of %d positions in blocks of %d", u, win, bs)
	}
	if h := slices.Index(s.LocalTable(), Hole); h != 0 || s.LocalTable()[(n-win)/bs-1] != Hole {
		t.Errorf("local table %v: the blocks before the window are not holes", s.LocalTable())
	}
	m.Release(s)

	// The next turn: the whole conversation and more. Every block of
	// the main pool is cached; the window's blocks are too.
	next := append(slices.Clone(toks), 1, 2, 3)
	s2, err := m.Start(next)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Cached() != n {
		t.Errorf("the next turn reuses %d of %d positions", s2.Cached(), n)
	}
	got, from := lst.readWindow(s2, bs, win, s2.Cached())
	if !slices.Equal(got, next[from:s2.Cached()]) {
		t.Errorf("the reused window reads back %v, want %v", got, next[from:s2.Cached()])
	}

	// A prompt that leaves the conversation inside an early block: its
	// window was freed long ago, so only a prefix without a window
	// (shorter than a block) can be kept, and here none is.
	early := append(slices.Clone(toks[:300]), 5, 5, 5)
	s3, err := m.Start(early)
	if err != nil {
		t.Fatal(err)
	}
	if c := s3.Cached(); c != 0 {
		t.Errorf("reused %d positions of a prompt whose window was evicted", c)
	}
}
