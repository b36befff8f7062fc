package constrain

import "math/bits"

// stateMask is what a state accepts regardless of the stack below it: the
// tokens consumed within its rule (the text slice at once when the state
// loops on it, the rest listed or as a bitset) and the trie nodes after
// which its rule has ended, whose subtrees depend on the caller.
type stateMask struct {
	slice   bool
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
	m := w.computeMask(s)
	c.works.Put(w)
	c.masks[s].Store(m)
	return m
}

// computeMask walks the token trie from state s alone (the frame below it
// unknown), sorting tokens into accepted, rejected and ending the rule.
func (w *work) computeMask(s int32) *stateMask {
	c := w.c
	v := c.v
	words := MaskWords(len(v.toks))
	if len(w.acc) != words {
		w.acc = make([]uint64, words)
	}
	clear(w.acc)
	w.entries = w.entries[:0]
	m := &stateMask{}
	t := &v.full
	if c.info[s].loops {
		m.slice = true
		t = &v.rest
	}
	w.nodes = w.nodes[:0]
	w.lv = append(w.lv[:0], top{s, 0, parExit})
	w.setLevel(0, 0, 1)
	nodes := t.nodes
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
			id := t.ids[k]
			w.acc[id/64] |= 1 << (id % 64)
		}
		if exit {
			w.entries = append(w.entries, n.full)
			if only {
				i = n.end
				continue
			}
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

// fill sets in mask the tokens accepted from the tops cur and reports
// whether the grammar can end there. The frames of cur stay untouched.
func (w *work) fill(mask []uint64, cur []top, seenSt []int32) (bool, []int32) {
	c := w.c
	canEnd := false
	seenSt = seenSt[:0]
	for _, t := range cur {
		if t.st == stDone {
			canEnd = true
			continue
		}
		dup := false
		for _, s := range seenSt {
			if s == t.st {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		seenSt = append(seenSt, t.st)
		m := c.maskFor(t.st)
		if m.slice {
			for i, x := range c.v.textSlice {
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
	for _, t := range cur {
		if t.st < 0 {
			continue
		}
		m := c.masks[t.st].Load()
		if len(m.entries) == 0 {
			continue
		}
		// The stack below t: what follows the end of t's rule.
		w.nodes = w.nodes[:base]
		w.after = w.expandPop(w.after[:0], t.par)
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
