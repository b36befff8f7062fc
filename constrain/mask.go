package constrain

import (
	"math/bits"
	"slices"
)

// stateMask is what a state accepts regardless of the stack below it: the
// tokens consumed within its rule (the text slice at once when the state
// loops on it, the rest listed or as a bitset) and the trie nodes after
// which its rule has ended, whose subtrees depend on the caller.
type stateMask struct {
	slice   bool
	upTo    int32 // > 0: the text-slice tokens of at most upTo code points
	bits    []uint64
	ids     []int32
	entries []int32
}

// sparseIDs is the most accepted tokens kept as a list instead of a bitset.
const sparseIDs = 1024

func (c *Compiled) maskFor(s int32) *stateMask {
	if m := c.masks[s].Load(); m != nil {
		return m
	}
	l := &c.locks[int(s)%len(c.locks)]
	l.Lock()
	defer l.Unlock()
	if m := c.masks[s].Load(); m != nil {
		return m
	}
	w, _ := c.works.Get().(*work)
	if w == nil {
		w = &work{c: c}
	}
	m := w.computeMask(top{s, 0, parExit}, nil)
	c.works.Put(w)
	c.masks[s].Store(m)
	return m
}

// ctxKey names the mask of a state together with the frame below it (and,
// when that frame is a counter, the frame below that too): a token then
// leaves the walk's frames only where the caller's rule ends, so few trie
// subtrees depend on the stack further down. A counter's count matters
// within one token only as how many more bodies it needs (low) and allows
// (high, -1 for no bound), each clamped past the longest token when every
// body reads a byte.
type ctxKey struct{ st, fst, flow, fhigh, gst, glow, ghigh int32 }

// frameKey returns the key for top t (false at the root frame) and the
// frame below the frames the key covers.
func (c *Compiled) frameKey(t top, nodes []top) (ctxKey, int32, bool) {
	if t.par < 0 {
		return ctxKey{}, 0, false
	}
	f := nodes[t.par]
	// gst -1: no second frame (the mask does not depend on where f's
	// frame sits in the matcher's stack, only on its state and count).
	k := ctxKey{st: t.st, fst: f.st, gst: -1}
	k.flow, k.fhigh = c.counts(f)
	if c.info[f.st].rep < 0 || f.par < 0 {
		return k, f.par, true
	}
	g := nodes[f.par]
	k.gst = g.st
	k.glow, k.ghigh = c.counts(g)
	return k, g.par, true
}

// counts returns the part of frame f's count that the key keeps.
func (c *Compiled) counts(f top) (low, high int32) {
	r := c.info[f.st].rep
	if r < 0 || !c.reps[r].bodyBytes {
		return f.cnt, 0
	}
	rp := &c.reps[r]
	// A token starts at most maxLen/minBody + 1 bodies: counts past that
	// are alike within it.
	clamp := int32(c.v.maxLen)/rp.minBody + 2
	low, high = min(max(rp.min-f.cnt, 0), clamp), -1
	if rp.max >= 0 {
		high = min(rp.max-f.cnt, clamp)
	}
	return low, high
}

// maskForFrames returns the mask keyed by k of top t with the frames below
// it that k covers.
func (c *Compiled) maskForFrames(k ctxKey, t top, nodes []top) *stateMask {
	c.ctxMu.RLock()
	m := c.ctx[k]
	c.ctxMu.RUnlock()
	if m != nil {
		return m
	}
	l := &c.locks[int(t.st)%len(c.locks)]
	l.Lock()
	defer l.Unlock()
	c.ctxMu.RLock()
	m = c.ctx[k]
	c.ctxMu.RUnlock()
	if m != nil {
		return m
	}
	w, _ := c.works.Get().(*work)
	if w == nil {
		w = &work{c: c}
	}
	f := nodes[t.par]
	var frames [2]top
	if c.info[f.st].rep < 0 || f.par < 0 {
		f.par = parExit
		frames[0] = f
		m = w.computeMask(top{t.st, t.cnt, 0}, frames[:1])
	} else {
		g := nodes[f.par]
		g.par = parExit
		f.par = 0
		frames[0], frames[1] = g, f
		m = w.computeMask(top{t.st, t.cnt, 1}, frames[:2])
	}
	c.works.Put(w)
	c.ctxMu.Lock()
	c.ctx[k] = m
	c.ctxMu.Unlock()
	return m
}

// computeMask walks the token trie from top t over frames (t.par indexes
// them; parExit when none), the stack below unknown, sorting tokens into
// accepted, rejected and ending the walk's bottom frame.
func (w *work) computeMask(t top, frames []top) *stateMask {
	s := t.st
	c := w.c
	v := c.v
	words := MaskWords(len(v.toks))
	if len(w.acc) != words {
		w.acc = make([]uint64, words)
	}
	clear(w.acc)
	w.entries = w.entries[:0]
	m := &stateMask{}
	w.nodes = append(w.nodes[:0], frames...)
	tr := &v.full
	if c.info[s].loops || c.info[s].textBody && t.par >= 0 && c.textRoom(t.st, frames[t.par]) {
		m.slice = true
		tr = &v.rest
	} else if c.info[s].textBody && t.par >= 0 {
		if k := w.textBudget(t.st, frames, int(t.par)); k > 0 {
			m.upTo = k
			tr = &v.rest
		}
	} else if k := c.info[s].textRun; k > 0 {
		if k >= int32(v.maxTextRunes) {
			m.slice = true
		} else {
			m.upTo = k
		}
		tr = &v.rest
	}
	w.lv = append(w.lv[:0], t)
	w.setLevel(0, 0, 1)
	nodes := tr.nodes
	for i := int32(0); i < int32(len(nodes)); {
		n := &nodes[i]
		d := int(n.depth)
		w.lv = w.lv[:w.lvEnd[d-1]]
		w.nodes = w.nodes[:w.lvNodes[d-1]]
		start := len(w.lv)
		w.lv = w.step(w.lv, w.lv[w.lvStart[d-1]:w.lvEnd[d-1]], n.b)
		if len(w.lv) == start {
			i = n.end
			continue
		}
		exit, only := false, true
		for _, x := range w.lv[start:] {
			if x.st == stExit {
				exit = true
			} else {
				only = false
			}
		}
		for k := n.tok; k >= 0 && k < n.tok+int32(n.ntok); k++ {
			id := tr.ids[k]
			w.acc[id/64] |= 1 << (id % 64)
		}
		if exit {
			w.entries = append(w.entries, n.full)
			if only {
				i = n.end
				continue
			}
		}
		if n.end > i+1 && c.takesBelow(n.full, w.lv[start:]) {
			// Every token below is read by a top's own transitions.
			for _, id := range tr.ids[tr.first[i+1]:tr.first[n.end]] {
				w.acc[id/64] |= 1 << (id % 64)
			}
			i = n.end
			continue
		}
		w.setLevel(d, start, len(w.lv))
		i++
	}
	n := 0
	for _, x := range w.acc {
		n += bits.OnesCount64(x)
	}
	if n <= sparseIDs {
		m.ids = make([]int32, 0, n)
		for i, x := range w.acc {
			for x != 0 {
				m.ids = append(m.ids, int32(i*64+bits.TrailingZeros64(x)))
				x &= x - 1
			}
		}
	} else {
		m.bits = append([]uint64(nil), w.acc...)
	}
	if len(w.entries) > 0 {
		m.entries = append([]int32(nil), w.entries...)
	}
	return m
}

func (w *work) setLevel(d, start, end int) {
	for len(w.lvStart) <= d {
		w.lvStart = append(w.lvStart, 0)
		w.lvEnd = append(w.lvEnd, 0)
		w.lvNodes = append(w.lvNodes, 0)
	}
	w.lvStart[d], w.lvEnd[d], w.lvNodes[d] = int32(start), int32(end), int32(len(w.nodes))
}

// walkFrom sets in mask the tokens below full-trie node p whose bytes after
// p's are accepted from the tops init.
func (w *work) walkFrom(mask []uint64, p int32, init []top) {
	t := &w.c.v.full
	base := int(t.nodes[p].depth)
	w.lv = append(w.lv[:0], init...)
	w.setLevel(0, 0, len(init))
	nodes := t.nodes
	for i := p + 1; i < nodes[p].end; {
		n := &nodes[i]
		d := int(n.depth) - base
		w.lv = w.lv[:w.lvEnd[d-1]]
		w.nodes = w.nodes[:w.lvNodes[d-1]]
		start := len(w.lv)
		w.lv = w.step(w.lv, w.lv[w.lvStart[d-1]:w.lvEnd[d-1]], n.b)
		if len(w.lv) == start {
			i = n.end
			continue
		}
		for k := n.tok; k >= 0 && k < n.tok+int32(n.ntok); k++ {
			id := t.ids[k]
			mask[id/64] |= 1 << (id % 64)
		}
		w.setLevel(d, start, len(w.lv))
		i++
	}
	w.nodes = w.nodes[:w.lvNodes[0]]
}

// textRoom reports whether counter frame f, whose body starts at s, has
// room for the bodies of every text-slice token.
func (c *Compiled) textRoom(s int32, f top) bool {
	r := c.info[f.st].rep
	if r < 0 {
		return false
	}
	rp := &c.reps[r]
	return rp.body == s && (rp.max < 0 || rp.max-f.cnt+1 >= int32(c.v.maxTextRunes))
}

// textBudget returns, for a top at the body start s of the counter frame
// frames[f] that has room for fewer bodies than the longest text-slice
// token, that room if what follows the counter cannot start with a text
// code point: the text-slice tokens accepted are then exactly those of at
// most that many code points. It returns 0 otherwise.
func (w *work) textBudget(s int32, frames []top, f int) int32 {
	c := w.c
	cf := frames[f]
	r := c.info[cf.st].rep
	if r < 0 || c.reps[r].body != s || c.reps[r].max < 0 || cf.par < 0 {
		return 0
	}
	// The frame counts the body under way: max-cnt+1 bodies remain.
	room := c.reps[r].max - cf.cnt + 1
	if room <= 0 || room >= int32(c.v.maxTextRunes) {
		return 0
	}
	base := len(w.nodes)
	w.after = w.expandPop(w.after[:0], cf.par)
	w.nodes = w.nodes[:base]
	for _, x := range w.after {
		if x.st < 0 {
			return 0 // the rule below may end: its caller is unknown
		}
		for b := range 256 {
			if isTextLead(byte(b)) && c.trans[int(x.st)*c.ncls+int(c.cls[b])] >= 0 {
				return 0
			}
		}
	}
	return room
}

// isTextLead reports whether b starts the UTF-8 encoding of a text-slice
// code point.
func isTextLead(b byte) bool {
	return b >= 0x20 && b < 0x7f && b != '"' && b != '\\' || b >= 0xC2 && b <= 0xF4
}

type maskTop struct {
	m *stateMask
	t top
}

// fill sets in mask the tokens accepted from the tops cur and reports
// whether the grammar can end there. The frames of cur stay untouched.
func (w *work) fill(mask []uint64, cur []top, seenSt []int32) (bool, []int32) {
	c := w.c
	canEnd := false
	seenSt = seenSt[:0]
	w.tops = w.tops[:0]
	for _, t := range cur {
		if t.st == stDone {
			canEnd = true
			continue
		}
		var m *stateMask
		if k, _, ok := c.frameKey(t, w.nodes); ok {
			m = c.maskForFrames(k, t, w.nodes)
		} else {
			dup := false
			for _, s := range seenSt {
				if s == t.st {
					dup = true
					break
				}
			}
			m = c.maskFor(t.st)
			if dup {
				continue
			}
			seenSt = append(seenSt, t.st)
		}
		w.tops = append(w.tops, maskTop{m, t})
		if m.slice {
			for i, x := range c.v.textSlice {
				mask[i] |= x
			}
		}
		if m.upTo > 0 {
			for i, x := range c.v.textUpTo(int(m.upTo)) {
				mask[i] |= x
			}
		}
		if m.bits != nil {
			for i, x := range m.bits {
				mask[i] |= x
			}
		}
		for _, id := range m.ids {
			mask[id/64] |= 1 << (id % 64)
		}
	}
	base := len(w.nodes)
	for _, mt := range w.tops {
		m, t := mt.m, mt.t
		if len(m.entries) == 0 {
			continue
		}
		par := t.par
		if _, below, ok := c.frameKey(t, w.nodes); ok {
			par = below
		}
		// The stack below t: what follows the end of t's rule.
		w.nodes = w.nodes[:base]
		w.after = w.expandPop(w.after[:0], par)
		after := w.after
		live := false
		for _, x := range after {
			if x.st >= 0 {
				live = true
			}
		}
		if !live {
			continue
		}
		n := len(w.nodes)
		for _, p := range m.entries {
			w.nodes = w.nodes[:n]
			w.walkFrom(mask, p, after)
		}
	}
	w.nodes = w.nodes[:base]
	return canEnd, seenSt
}

// closedSet is what a state reads whatever the bytes, within limits: every
// sequence of at most depth bytes from set (bytes below 0x7f).
type closedSet struct {
	set   [2]uint64
	depth int32
}

// closedDepth is how deep closedFor follows a state's byte transitions;
// a set read that far (or forever, by a loop) is kept.
const closedDepth = 24

// maxClosedStates bounds the states closedFor visits from one.
const maxClosedStates = 256

// takesBelow reports whether one of the tops reads, by byte transitions
// alone, every byte sequence that full-trie node p's descendants add.
func (c *Compiled) takesBelow(p int32, tops []top) bool {
	k := c.v.below[p]
	if k < 0 {
		return false
	}
	set, h := c.v.belowSets[k], int32(c.v.height[p])
	for _, x := range tops {
		if x.st >= 0 {
			cs := c.closedFor(x.st)
			if h <= cs.depth && set[0]&^cs.set[0] == 0 && set[1]&^cs.set[1] == 0 {
				return true
			}
		}
	}
	return false
}

// reads returns the bytes below 0x7f that state s has a transition on.
func (c *Compiled) reads(s int32) (set [2]uint64) {
	row := c.trans[int(s)*c.ncls : (int(s)+1)*c.ncls]
	for k, t := range row {
		if t >= 0 {
			set[0] |= c.clsSet[k][0]
			set[1] |= c.clsSet[k][1]
		}
	}
	return set
}

// closedFor returns a set S of bytes below 0x7f (and a depth) such that
// every sequence of S's bytes up to the depth is read from s by byte
// transitions: S is the bytes s reads that lead to a state reading them
// again, less every byte that a state S's bytes lead to within
// closedDepth bytes does not read, until no byte goes
// (a character class repeated, as a pattern's or a format's; an e-mail
// address's atoms bounded to 64 characters read 24 by 24). The depth is
// unbounded (a loop) when no new state turns up before closedDepth.
func (c *Compiled) closedFor(s int32) closedSet {
	if cs := c.closed[s].Load(); cs != nil {
		return *cs
	}
	cs := &closedSet{}
	// The bytes that lead to a state reading them again: not those that
	// end the run (a closing quote, a separator).
	var set [2]uint64
	for k, t := range c.trans[int(s)*c.ncls : (int(s)+1)*c.ncls] {
		if t >= 0 {
			r := c.reads(t)
			set[0] |= c.clsSet[k][0] & r[0]
			set[1] |= c.clsSet[k][1] & r[1]
		}
	}
	var seen, level, next, classes []int32
	for set != ([2]uint64{}) {
		classes = classes[:0]
		for k, cb := range c.clsSet {
			if cb[0]&set[0] != 0 || cb[1]&set[1] != 0 {
				classes = append(classes, int32(k))
			}
		}
		keep := set
		seen = append(seen[:0], s)
		level = append(level[:0], s)
		d := int32(0)
		for ; d < closedDepth && len(level) > 0 && len(seen) <= maxClosedStates; d++ {
			next = next[:0]
			for _, q := range level {
				r := c.reads(q)
				keep[0] &= r[0]
				keep[1] &= r[1]
				for _, k := range classes {
					if t := c.trans[int(q)*c.ncls+int(k)]; t >= 0 && !slices.Contains(seen, t) {
						seen = append(seen, t)
						next = append(next, t)
					}
				}
			}
			level, next = next, level
		}
		if len(seen) > maxClosedStates {
			break
		}
		if keep == set {
			cs.set, cs.depth = set, d
			if len(level) == 0 {
				cs.depth = 1 << 30
			}
			break
		}
		set = keep
	}
	c.closed[s].Store(cs)
	return *cs
}
