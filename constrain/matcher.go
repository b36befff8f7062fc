package constrain

import (
	"errors"
	"fmt"
	"slices"
)

// ErrAmbiguous is the error of Accept when the grammar is too ambiguous
// to follow within a step's bounded work (see maxStacks).
var ErrAmbiguous = errors.New("constrain: the grammar is too ambiguous to follow")

// maxHistory is how many accepted tokens Rollback can undo.
const maxHistory = 256

// compactAt is the frame count past which Accept drops unreachable frames.
const compactAt = 1 << 16

// Matcher follows one sequence through a compiled grammar: it yields the
// mask of tokens allowed next and advances on the token chosen. A Matcher
// is not safe for concurrent use; many Matchers may share a Compiled.
type Matcher struct {
	c    *Compiled
	w    work
	cur  []top
	next []top
	done bool

	hist    []top   // the sets before each accepted token, concatenated
	histOff []int32 // start of each set in hist
	histEnd []bool  // whether that token was end of generation
	seenSt  []int32
}

// NewMatcher returns a Matcher at the start of the grammar.
func (c *Compiled) NewMatcher() *Matcher {
	m := &Matcher{c: c, w: work{c: c}}
	m.Reset()
	return m
}

// Reset returns m to the start of the grammar.
func (m *Matcher) Reset() {
	m.w.nodes = m.w.nodes[:0]
	m.w.newGen()
	m.w.dst = m.cur[:0]
	m.w.expand(top{m.c.start, 0, parRoot})
	m.cur = m.w.dst
	m.done = false
	m.hist = m.hist[:0]
	m.histOff = m.histOff[:0]
	m.histEnd = m.histEnd[:0]
}

// FillMask sets mask to the tokens allowed next: bit id%64 of word id/64
// for token id. Accept takes every token of the mask, but may refuse one
// with ErrAmbiguous when it would leave too many parses open. End-of-generation ids are set exactly where the grammar can
// end; after it has ended nothing is set. mask must have at least
// MaskWords(vocabulary size) words; any beyond are cleared.
func (m *Matcher) FillMask(mask []uint64) {
	words := MaskWords(len(m.c.v.toks))
	if len(mask) < words {
		panic(fmt.Sprintf("constrain: FillMask with %d words for a vocabulary of %d tokens (want %d)", len(mask), len(m.c.v.toks), words))
	}
	clear(mask)
	if m.done {
		return
	}
	var canEnd bool
	canEnd, m.seenSt = m.w.fill(mask, m.cur, m.seenSt)
	if canEnd {
		for _, id := range m.c.v.eog {
			mask[id/64] |= 1 << (id % 64)
		}
	}
}

// CanEnd reports whether the grammar can end here (an end-of-generation
// token would be accepted).
func (m *Matcher) CanEnd() bool {
	return !m.done && slices.ContainsFunc(m.cur, func(t top) bool { return t.st == stDone })
}

// Done reports whether an end-of-generation token has been accepted.
func (m *Matcher) Done() bool { return m.done }

func (m *Matcher) isEOG(id int32) bool { return slices.Contains(m.c.v.eog, id) }

// Accept advances m past token id, or returns an error, leaving m as it
// was, if the grammar does not allow id here.
func (m *Matcher) Accept(id int32) error {
	v := m.c.v
	if id < 0 || int(id) >= len(v.toks) {
		return fmt.Errorf("constrain: token %d is outside the vocabulary of %d tokens", id, len(v.toks))
	}
	if m.done {
		return fmt.Errorf("constrain: token %d after the end of generation", id)
	}
	if m.isEOG(id) {
		if !m.CanEnd() {
			return fmt.Errorf("constrain: end-of-generation token %d where the grammar cannot end", id)
		}
		m.record(true)
		m.done = true
		return nil
	}
	b := v.toks[id]
	if len(b) == 0 {
		return fmt.Errorf("constrain: token %d has no text and is never allowed", id)
	}
	base := len(m.w.nodes)
	in := m.cur
	var out []top
	m.w.over = false // a mask's walk may have left it set
	for i, x := range b {
		if i%2 == 0 {
			out = m.w.step(m.next[:0], in, x)
			m.next = out
		} else {
			out = m.w.step(m.w.after[:0], in, x)
			m.w.after = out
		}
		if len(out) == 0 {
			m.w.nodes = m.w.nodes[:base]
			return fmt.Errorf("constrain: token %d (%q) is not allowed here", id, b)
		}
		if len(out) > maxStacks || m.w.over {
			m.w.nodes = m.w.nodes[:base]
			return fmt.Errorf("%w: token %d (%q) would leave more than %d parses of the text open at once", ErrAmbiguous, id, b, maxStacks)
		}
		in = out
	}
	m.record(false)
	m.cur = append(m.cur[:0], out...)
	if len(m.w.nodes) > compactAt {
		m.compact()
	}
	return nil
}

func (m *Matcher) record(end bool) {
	if len(m.histOff) == maxHistory {
		cut := m.histOff[1]
		m.hist = append(m.hist[:0], m.hist[cut:]...)
		copy(m.histOff, m.histOff[1:])
		m.histOff = m.histOff[:len(m.histOff)-1]
		for i := range m.histOff {
			m.histOff[i] -= cut
		}
		copy(m.histEnd, m.histEnd[1:])
		m.histEnd = m.histEnd[:len(m.histEnd)-1]
	}
	m.histOff = append(m.histOff, int32(len(m.hist)))
	m.histEnd = append(m.histEnd, end)
	m.hist = append(m.hist, m.cur...)
}

// Rollback undoes the last n accepted tokens.
func (m *Matcher) Rollback(n int) error {
	if n < 0 || n > len(m.histOff) {
		return fmt.Errorf("constrain: cannot roll back %d tokens (%d in history)", n, len(m.histOff))
	}
	if n == 0 {
		return nil
	}
	k := len(m.histOff) - n
	off := m.histOff[k]
	m.cur = append(m.cur[:0], m.hist[off:]...)
	if k+1 < len(m.histOff) {
		m.cur = m.cur[:m.histOff[k+1]-off]
	}
	m.hist = m.hist[:off]
	m.histOff = m.histOff[:k]
	m.histEnd = m.histEnd[:k]
	m.done = false
	return nil
}

// compact drops the frames no held set (current or in history) reaches.
func (m *Matcher) compact() {
	nodes := m.w.nodes
	remap := make([]int32, len(nodes))
	for i := range remap {
		remap[i] = -1
	}
	var kept []top
	var mark func(p int32) int32
	mark = func(p int32) int32 {
		if p < 0 {
			return p
		}
		if remap[p] >= 0 {
			return remap[p]
		}
		f := nodes[p]
		f.par = mark(f.par)
		remap[p] = int32(len(kept))
		kept = append(kept, f)
		return remap[p]
	}
	for i := range m.cur {
		m.cur[i].par = mark(m.cur[i].par)
	}
	for i := range m.hist {
		m.hist[i].par = mark(m.hist[i].par)
	}
	m.w.nodes = append(nodes[:0], kept...)
}
