package kvcache

import (
	"fmt"
	"math"
)

// This file holds a Manager's window pool: the blocks of the layers that
// attend only to the last Window positions (sliding-window layers), kept
// apart from the main pool's (the other layers') so that a block whose
// positions no query of its sequence can see any more is freed at once,
// and a long context costs what its global layers need plus about a
// window per sequence.
//
// A sequence's local table has an entry for each block of its main
// table: entry j holds positions j*BlockSize.. of the sliding-window
// layers, or Hole once they fell out of the window.
//
// With the prefix cache on, a window-pool block stays tied to the main
// pool's tree node of the same positions and token path (its companion)
// after its sequence dropped it, unreferenced but cached, so that a later
// prompt with that prefix finds the window before its cut. Start reuses a
// prefix only as far as its window's companions are all cached; idle
// companions are evicted least recently released first when the pool
// runs short, and freed with their node when the main pool evicts it.

// Hole is the local table entry of a block that fell out of the window
// (batch.Hole).
const Hole int32 = -1

// A WindowPool describes the second pool of a Manager
// (NewWindowManager).
type WindowPool struct {
	Blocks int // blocks of BlockSize positions
	Window int // positions a query of its layers sees, its own included
	// Copy copies every row of the pool's block src into its block dst;
	// it may be nil, and then a prompt reuses only whole cached blocks.
	Copy func(dst, src int32) error
}

// WindowBlocks returns the window-pool blocks (of blockSize positions)
// that sequences sequences take, each running prompt chunks of up to
// chunk tokens beside a window of window positions, with room for as
// much again (the windows of finished sequences kept for the prefix
// cache, or a single sequence stepping back: engine.Single).
func WindowBlocks(sequences, window, chunk, blockSize int) int {
	up := func(n int) int { return (n + blockSize - 1) / blockSize }
	return sequences * (2*up(window) + up(chunk) + 1)
}

// window is a Manager's window pool.
type window struct {
	WindowPool
	ref   []int32  // per block: sequences whose local table holds it
	owner []int32  // per block: the main-pool node it is the companion of, or none
	stamp []uint64 // per block: when it last became idle
	comp  []int32  // per main-pool block: its companion, or none
	free  []int32
	idleQ []idleEntry // idle companions in the order they became so (stale entries skipped)
	idle  int         // companions referenced by no sequence: evictable
	used  int         // blocks referenced by a sequence
}

type idleEntry struct {
	b     int32
	stamp uint64
}

// NewWindowManager returns a Manager, as NewManager, whose sequences also
// hold blocks of a window pool w for the sliding-window layers
// (Seq.LocalTable). It panics if w has fewer than one block or a window
// below one position, or too many blocks for int32 ids.
func NewWindowManager(blocks, blockSize int, prefixCache bool, cp Copier, w WindowPool) *Manager {
	if w.Blocks < 1 || w.Window < 1 || w.Blocks >= math.MaxInt32 {
		panic(fmt.Sprintf("kvcache: a window pool of %d blocks for a window of %d", w.Blocks, w.Window))
	}
	m := NewManager(blocks, blockSize, prefixCache, cp)
	p := &window{
		WindowPool: w,
		ref:        make([]int32, w.Blocks),
		owner:      make([]int32, w.Blocks),
		stamp:      make([]uint64, w.Blocks),
		comp:       make([]int32, blocks),
		free:       make([]int32, w.Blocks),
	}
	for i := range p.owner {
		p.owner[i] = none
		p.free[i] = int32(w.Blocks - 1 - i)
	}
	for i := range p.comp {
		p.comp[i] = none
	}
	m.win = p
	return m
}

// Window returns the window of the window pool's layers and its blocks;
// 0, 0 without a window pool.
func (m *Manager) Window() (window, blocks int) {
	if m.win == nil {
		return 0, 0
	}
	return m.win.Window, m.win.Blocks
}

// LocalTable returns the sequence's blocks in the window pool (nil
// without one): position p of a sliding-window layer lives in block
// LocalTable()[p/BlockSize()]; entries of blocks out of the window are
// Hole. Valid until the next Reserve, Commit or Release of s.
func (s *Seq) LocalTable() []int32 { return s.local }

// firstSeen returns the first block a query at position n or later can
// read: the block of position n-Window+1.
func (m *Manager) firstSeen(n int) int {
	return max(0, n-m.win.Window+1) / m.bs
}

// localAvailable returns the window-pool blocks Reserve could take now.
func (m *Manager) localAvailable() int {
	return len(m.win.free) + m.win.idle
}

// localNeed returns the window-pool blocks Reserve(s, n) takes.
func (m *Manager) localNeed(s *Seq, n int) int {
	return max(0, m.BlocksFor(n)-max(len(s.local), m.firstSeen(s.n)))
}

// reserveLocal extends s's local table to cover n positions: holes for
// blocks no query from s.Len() on sees, fresh blocks for the others. The
// caller has checked that the pool has them.
func (m *Manager) reserveLocal(s *Seq, n int) {
	first := m.firstSeen(s.n)
	for j := len(s.local); j < m.BlocksFor(n); j++ {
		if j < first {
			s.local = append(s.local, Hole)
			continue
		}
		b := m.lalloc()
		if b == none {
			panic("kvcache: internal error: no window block to allocate")
		}
		m.lref(b)
		s.local = append(s.local, b)
	}
}

// lalloc takes a window-pool block off the free list or, when that is
// empty, evicts the idle companion that became idle first. It returns
// none when neither can supply one.
func (m *Manager) lalloc() int32 {
	w := m.win
	if k := len(w.free); k > 0 {
		b := w.free[k-1]
		w.free = w.free[:k-1]
		return b
	}
	for len(w.idleQ) > 0 {
		e := w.idleQ[0]
		w.idleQ = w.idleQ[1:]
		if b := e.b; w.ref[b] == 0 && w.owner[b] != none && w.stamp[b] == e.stamp {
			w.comp[w.owner[b]] = none
			w.owner[b] = none
			w.idle--
			return b
		}
	}
	return none
}

// lref adds a sequence's reference to window block b.
func (m *Manager) lref(b int32) {
	w := m.win
	if w.ref[b] == 0 {
		w.used++
		if w.owner[b] != none {
			w.idle--
		}
	}
	w.ref[b]++
}

// lunref drops a sequence's reference to window block b: at the last, a
// companion becomes idle (cached, evictable) and any other block free.
func (m *Manager) lunref(b int32) {
	w := m.win
	w.ref[b]--
	if w.ref[b] > 0 {
		return
	}
	w.used--
	if w.owner[b] == none {
		w.free = append(w.free, b)
		return
	}
	w.idle++
	m.clock++
	w.stamp[b] = m.clock
	w.idleQ = append(w.idleQ, idleEntry{b, m.clock})
	if len(w.idleQ) > 2*len(w.ref)+16 {
		// Drop stale entries, keeping the order.
		q := w.idleQ[:0]
		for _, e := range w.idleQ {
			if w.ref[e.b] == 0 && w.owner[e.b] != none && w.stamp[e.b] == e.stamp {
				q = append(q, e)
			}
		}
		w.idleQ = q
	}
}

// attach makes window block lb the companion of the main pool's tree node
// b, unless b has one already or lb is a hole or another's companion.
func (m *Manager) attach(b, lb int32) {
	w := m.win
	if w == nil || lb == Hole || w.comp[b] != none || w.owner[lb] != none {
		return
	}
	w.comp[b], w.owner[lb] = lb, b
}

// detach unties node b, which the main pool is evicting, from its
// companion, freeing the companion if no sequence holds it.
func (m *Manager) detach(b int32) {
	w := m.win
	if w == nil || w.comp[b] == none {
		return
	}
	lb := w.comp[b]
	w.comp[b], w.owner[lb] = none, none
	if w.ref[lb] == 0 {
		w.idle--
		w.free = append(w.free, lb)
	}
}

// dropOut releases s's window blocks that no query from s.Len() on can
// see.
func (m *Manager) dropOut(s *Seq) {
	first := min(m.firstSeen(s.n), len(s.local))
	for ; s.lo < first; s.lo++ {
		if b := s.local[s.lo]; b != Hole {
			m.lunref(b)
			s.local[s.lo] = Hole
		}
	}
}

// releaseLocal drops every window reference of s, ending it.
func (m *Manager) releaseLocal(s *Seq) {
	for j := len(s.local) - 1; j >= s.lo; j-- {
		if b := s.local[j]; b != Hole {
			m.lunref(b)
		}
	}
	s.local = nil
}

// startLocal gives s, just matched n positions by Start (s.table: whole
// shared blocks, then perhaps a private copy of the block cached as
// partial, which holds the match's last n%BlockSize positions), the
// window blocks of its match, cut back to the longest match whose
// window's companions are all cached (and whose partial block's companion
// could be copied); partial is the cached node the private copy came
// from, or none. It returns the positions kept; the caller gives back the
// main-pool blocks past them.
func (m *Manager) startLocal(s *Seq, n int, partial int32) (int, error) {
	w, bs := m.win, m.bs
	k := n / bs // whole shared blocks
	// lastMiss[i]: 1 + the last j < i whose node has no companion.
	lastMiss := make([]int, k+1)
	for j := range k {
		lastMiss[j+1] = lastMiss[j]
		if w.comp[s.table[j]] == none {
			lastMiss[j+1] = j + 1
		}
	}
	if n%bs > 0 && partial != none && w.Copy != nil && w.comp[partial] != none && lastMiss[k] <= m.firstSeen(n) {
		m.shareLocal(s, k, n)
		src := w.comp[partial]
		m.lref(src) // not evicted for its own copy
		d := m.lalloc()
		var err error
		if d != none {
			if err = w.Copy(d, src); err == nil {
				m.lref(d)
				s.local = append(s.local, d)
			} else {
				w.free = append(w.free, d)
			}
		}
		m.lunref(src)
		if err != nil {
			m.releaseLocal(s)
			return 0, err
		}
		if d != none {
			return n, nil
		}
		m.releaseLocal(s)
	}
	for i := k; i > 0; i-- {
		if lastMiss[i] <= m.firstSeen(i*bs) {
			m.shareLocal(s, i, i*bs)
			return i * bs, nil
		}
	}
	s.local, s.lo = make([]int32, 0, cap(s.table)), 0
	return 0, nil
}

// shareLocal sets s's local table to the companions of its first kb
// whole blocks that a query at position n sees, holes before them.
func (m *Manager) shareLocal(s *Seq, kb, n int) {
	first := min(m.firstSeen(n), kb)
	s.local = make([]int32, 0, cap(s.table))
	for j := range kb {
		if j < first {
			s.local = append(s.local, Hole)
			continue
		}
		b := m.win.comp[s.table[j]]
		m.lref(b)
		s.local = append(s.local, b)
	}
	s.lo = first
}

// LocalStats describes a Manager's window pool; all zero without one.
// Free+Used+Idle == Blocks.
type LocalStats struct {
	Blocks, Window int
	Free           int // holding nothing
	Used           int // referenced by a sequence
	Idle           int // a cached prefix's window, referenced by none, evictable
}

// LocalStats returns the state of the window pool.
func (m *Manager) LocalStats() LocalStats {
	w := m.win
	if w == nil {
		return LocalStats{}
	}
	return LocalStats{Blocks: w.Blocks, Window: w.Window, Free: len(w.free), Used: w.used, Idle: w.idle}
}
