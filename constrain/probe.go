package constrain

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"
)

// Bounds of Probe: a grammar is refused only on evidence found within
// them; past any of them it is accepted and the Matcher's bound
// (maxStacks) stays the backstop.
const (
	// probeBytes is the length of one walk.
	probeBytes = 256
	// probeRandom is the number of seeded random walks (after the walks
	// taking the lowest and the highest byte allowed, before the greedy
	// one).
	probeRandom = 2
	// probeCandidates bounds the bytes the greedy walk tries at each step.
	probeCandidates = 16
	// probeWork bounds the frame expansions of all walks together (each
	// step's own expansions are bounded by maxExpand as Accept's are).
	probeWork = 1 << 18
	// probeTime bounds the wall time of all walks together.
	probeTime = 20 * time.Millisecond
	// probeSeed seeds the random walks, so that a grammar's verdict does
	// not change from one compilation to the next.
	probeSeed = 0x9E3779B97F4A7C15
)

// Probe looks for a text the grammar allows on which a Matcher would hold
// more than maxStacks parses at once, the point where Accept refuses a
// token with ErrAmbiguous, so that such a grammar can be refused before a
// generation starts. It walks the automaton byte by byte from the start,
// up to probeBytes each time: once taking the lowest byte allowed, once
// the highest, probeRandom times a seeded random one, and once the byte
// (of up to probeCandidates tried) that leaves the most parses open; a
// walk ends where nothing more is allowed. It returns an *AmbiguousError,
// which names the text and the rule most of the parses were in, or nil when no walk passes the bound within the probe's work and
// time budgets (probeWork, probeTime). The verdict is computed once per
// Compiled; a grammar Probe accepts may still be refused by Accept on a
// text no walk took.
func (c *Compiled) Probe() error {
	c.probeOnce.Do(func() { _, c.probeErr = c.probe(time.Now().Add(probeTime), probeWork) })
	return c.probeErr
}

// prober is the state of one Probe.
type prober struct {
	c        *Compiled
	w        work
	cur      []top // the tops after text
	spare    []top // where the next step's tops go
	text     []byte
	work     int
	deadline time.Time
	rng      uint64
	classes  [][4]uint64 // the bytes of each byte class
	sts      []int32
}

// errBudget ends a probe that ran out of work or time: no verdict.
var errBudget = errors.New("constrain: probe budget spent")

// probe runs Probe's walks within the budgets given. With an error it
// also returns the text whose last byte passed the bound.
func (c *Compiled) probe(deadline time.Time, budget int) ([]byte, error) {
	p := &prober{c: c, w: work{c: c}, work: budget, deadline: deadline, rng: probeSeed}
	p.classes = make([][4]uint64, c.ncls)
	for b := range 256 {
		p.classes[c.cls[b]][b/64] |= 1 << (b % 64)
	}
	walks := []func(set *[4]uint64) byte{
		func(set *[4]uint64) byte { return nthByte(set, 0) },
		func(set *[4]uint64) byte { return nthByte(set, byteCount(set)-1) },
	}
	for range probeRandom {
		walks = append(walks, func(set *[4]uint64) byte { return nthByte(set, int(p.next()%uint64(byteCount(set)))) })
	}
	walks = append(walks, nil) // greedy
	for _, pick := range walks {
		err := p.walk(pick)
		if err == errBudget {
			return nil, nil
		}
		if err != nil {
			return p.text, err
		}
	}
	return nil, nil
}

// next returns the next number of the walks' generator (xorshift64*).
func (p *prober) next() uint64 {
	p.rng ^= p.rng >> 12
	p.rng ^= p.rng << 25
	p.rng ^= p.rng >> 27
	return p.rng * 0x2545F4914F6CDD1D
}

// walk follows the grammar from its start taking the byte pick chooses
// among those allowed, or with pick nil the one that leaves the most
// parses open. It returns the ErrAmbiguous error of the first step past
// the bound, errBudget, or nil at the walk's end.
func (p *prober) walk(pick func(set *[4]uint64) byte) error {
	w := &p.w
	w.nodes = w.nodes[:0]
	w.newGen()
	w.dst = p.cur[:0]
	w.expand(top{p.c.start, 0, parRoot})
	p.cur = w.dst
	p.text = p.text[:0]
	for len(p.text) < probeBytes {
		if time.Now().After(p.deadline) {
			return errBudget
		}
		var set [4]uint64
		if !p.allowed(&set) {
			return nil
		}
		var b byte
		if pick == nil {
			var err error
			if b, err = p.mostOpen(&set); err != nil {
				return err
			}
		} else {
			b = pick(&set)
		}
		if err := p.step(b); err != nil {
			return err
		}
		p.text = append(p.text, b)
		p.cur, p.spare = p.spare, p.cur
	}
	return nil
}

// step puts in p.spare the tops p.cur leads to by byte b, and returns
// the error of a step past the bound or errBudget.
func (p *prober) step(b byte) error {
	w := &p.w
	w.budget = maxExpand
	w.over = false
	p.spare = w.step(p.spare[:0], p.cur, b)
	p.work -= max(1, maxExpand-w.budget)
	if len(p.spare) > maxStacks || w.over {
		return p.ambiguous(b)
	}
	if p.work < 0 {
		return errBudget
	}
	return nil
}

// mostOpen returns the byte of set, of up to probeCandidates spread over
// it, after which the most parses are open, or the error of one past the
// bound.
func (p *prober) mostOpen(set *[4]uint64) (byte, error) {
	n := byteCount(set)
	tries := min(n, probeCandidates)
	best, bestOpen := nthByte(set, 0), -1
	base := len(p.w.nodes)
	for i := range tries {
		b := nthByte(set, i*n/tries)
		if err := p.step(b); err != nil {
			return 0, err
		}
		if len(p.spare) > bestOpen {
			best, bestOpen = b, len(p.spare)
		}
		p.w.nodes = p.w.nodes[:base]
	}
	return best, nil
}

// allowed sets in set the bytes some top of cur moves on, and reports
// whether there is one.
func (p *prober) allowed(set *[4]uint64) bool {
	c := p.c
	p.sts = p.sts[:0]
	for _, t := range p.cur {
		if t.st >= 0 {
			p.sts = append(p.sts, t.st)
		}
	}
	slices.Sort(p.sts)
	ok := false
	for _, s := range slices.Compact(p.sts) {
		for k, ns := range c.trans[int(s)*c.ncls : (int(s)+1)*c.ncls] {
			if ns >= 0 {
				for i := range set {
					set[i] |= p.classes[k][i]
				}
				ok = true
			}
		}
	}
	return ok
}

// ambiguous returns the error of a step by byte b past the bound (its
// tops in p.spare), naming the text and the rule of most of the parses.
func (p *prober) ambiguous(b byte) error {
	c := p.c
	out := p.spare
	count := make([]int, len(c.ruleFirst))
	for _, t := range out {
		if t.st >= 0 {
			count[c.ruleOfState(t.st)]++
		}
	}
	rule := 0
	for i, n := range count {
		if n > count[rule] {
			rule = i
		}
	}
	p.text = append(p.text, b)
	e := &AmbiguousError{Text: string(p.text), Rule: c.ruleName[rule], Parses: len(out)}
	if p.w.over {
		e.Parses = -1
	}
	return e
}

// AmbiguousError is Probe's error: after Text, which the grammar allows,
// a Matcher would hold more parses than it follows, most of them in Rule.
// It wraps ErrAmbiguous.
type AmbiguousError struct {
	Text string
	Rule string
	// Parses is the number of parses open after Text, or -1 where there
	// were too many to count (one byte expanded past maxExpand frames).
	Parses int
}

func (e *AmbiguousError) Error() string {
	text := e.Text
	if len(text) > 64 {
		text = text[:61] + "..."
	}
	n := "too many to count"
	if e.Parses >= 0 {
		n = fmt.Sprint(e.Parses)
	}
	return fmt.Sprintf("%v: after the text %q (%d bytes), which it allows, more than %d parses would be open at once (%s, most in rule %q); a generation would be cut off there",
		ErrAmbiguous, text, len(e.Text), maxStacks, n, e.Rule)
}

func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

// ruleOfState returns the automaton rule state s belongs to.
func (c *Compiled) ruleOfState(s int32) int {
	i, found := slices.BinarySearch(c.ruleFirst, s)
	if !found {
		i--
	}
	return max(i, 0)
}

// byteCount returns the number of bytes in set.
func byteCount(set *[4]uint64) int {
	n := 0
	for _, w := range set {
		n += bits.OnesCount64(w)
	}
	return n
}

// nthByte returns the byte of set with n bytes of set below it.
func nthByte(set *[4]uint64, n int) byte {
	for i, w := range set {
		if c := bits.OnesCount64(w); n >= c {
			n -= c
			continue
		}
		for ; n > 0; n-- {
			w &= w - 1
		}
		return byte(i*64 + bits.TrailingZeros64(w))
	}
	panic("constrain: nthByte past the set")
}
