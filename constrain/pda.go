package constrain

// top is the top frame of a stack of the pushdown automaton: a state with
// byte transitions, the repetition count of its frame, and the frame below
// (an index into work.nodes, or parRoot / parExit).
type top struct{ st, cnt, par int32 }

// Special states and frames.
const (
	stDone  = -1 // the root rule has ended: only end of generation follows
	stExit  = -2 // a local walk's first rule has ended: its caller continues
	parRoot = -1 // below the root rule's frame
	parExit = -2 // below a local walk's first frame
)

// maxExpand bounds the frames one byte may create, so that a pathological
// grammar (a nullable body repeated a million times) costs time, not a hang.
const maxExpand = 1 << 16

// maxStacks bounds the stacks a Matcher holds at once: an ambiguous
// grammar (root ::= x "b"; x ::= "a" x | "a" x x | "") may parse a
// sequence in exponentially many ways, each a stack, and a step's work
// grows with them (about 70 us a stack for that grammar's masks on the
// Qwen3 vocabulary). Past the bound Accept refuses the token with
// ErrAmbiguous, so such a request ends within about 0.1 s (that grammar:
// 6 tokens, its last step 35 ms) instead of slowing every step of the
// batch it is in without end. Grammars from JSON schemas hold a few
// stacks (one per alternative still open); a counted repetition of an
// ambiguous body (("a"* "a"){0,3000}) holds one per count and is refused
// too once it has that many. Compiled.Probe refuses most grammars that
// would pass the bound before a generation starts (probe.go).
const maxStacks = 512

type seenSlot struct {
	gen          uint32
	kind         uint8
	st, cnt, par int32
	val          int32
}

// work is the scratch space of one goroutine running the automaton: the
// frames below the tops, the dedupe table of one step and the levels of a
// trie walk. Steady-state use does not allocate.
type work struct {
	c      *Compiled
	nodes  []top // frames: the state to return to, its count, the frame below
	seen   []seenSlot
	nseen  int
	gen    uint32
	dst    []top
	budget int
	over   bool // the budget ran out since the last newGen: tops were dropped

	lv      []top
	lvStart []int32
	lvEnd   []int32
	lvNodes []int32
	acc     []uint64
	after   []top
	tops    []maskTop
	entries []int32
}

func (w *work) newGen() {
	w.gen++
	w.nseen = 0
	if w.gen == 0 || len(w.seen) == 0 {
		if len(w.seen) == 0 {
			w.seen = make([]seenSlot, 256)
		}
		clear(w.seen)
		w.gen = 1
	}
	w.budget = maxExpand
	w.over = false
}

// visit looks up (kind, t) in the table of this step: it returns the value
// stored and true, or stores val and returns false.
func (w *work) visit(kind uint8, t top, val int32) (int32, bool) {
	if 2*(w.nseen+1) > len(w.seen) {
		w.grow()
	}
	mask := uint32(len(w.seen) - 1)
	h := uint32(t.st)*0x9E3779B1 ^ uint32(t.cnt)*0x85EBCA77 ^ uint32(t.par)*0xC2B2AE3D ^ uint32(kind)
	h ^= h >> 15
	for i := h & mask; ; i = (i + 1) & mask {
		s := &w.seen[i]
		if s.gen != w.gen {
			*s = seenSlot{gen: w.gen, kind: kind, st: t.st, cnt: t.cnt, par: t.par, val: val}
			w.nseen++
			return val, false
		}
		if s.kind == kind && s.st == t.st && s.cnt == t.cnt && s.par == t.par {
			return s.val, true
		}
	}
}

func (w *work) grow() {
	old := w.seen
	w.seen = make([]seenSlot, 2*len(old))
	w.nseen = 0
	g := w.gen
	for _, s := range old {
		if s.gen == g {
			w.visit(s.kind, top{s.st, s.cnt, s.par}, s.val)
		}
	}
}

// step appends to dst the tops reached from in by byte b, expanded.
func (w *work) step(dst, in []top, b byte) []top {
	c := w.c
	k := int(c.cls[b])
	if len(in) == 1 {
		t := in[0]
		if t.st >= 0 {
			ns := c.trans[int(t.st)*c.ncls+k]
			if ns < 0 {
				return dst
			}
			if c.info[ns].simple {
				return append(dst, top{ns, t.cnt, t.par})
			}
		}
	}
	w.newGen()
	w.dst = dst
	for _, t := range in {
		if t.st < 0 {
			continue
		}
		if ns := c.trans[int(t.st)*c.ncls+k]; ns >= 0 {
			w.expand(top{ns, t.cnt, t.par})
		}
	}
	return w.dst
}

// expandPop appends to dst the tops reached by ending the frame above par.
func (w *work) expandPop(dst []top, par int32) []top {
	w.newGen()
	w.dst = dst
	w.pop(par)
	return w.dst
}

// expand adds the tops that t leads to without consuming input: t itself
// if it has byte transitions, the starts of the rules it calls, and what
// follows its rule's end.
func (w *work) expand(t top) {
	if _, ok := w.visit(0, t, 0); ok {
		return
	}
	if w.budget--; w.budget < 0 {
		w.over = true
		return
	}
	c := w.c
	in := &c.info[t.st]
	if in.rep >= 0 {
		r := &c.reps[in.rep]
		if r.bodyLive && (r.max < 0 || t.cnt < r.max) {
			n := t.cnt + 1
			if r.max < 0 && n > r.min {
				n = r.min
			}
			f := w.push(top{t.st, n, t.par})
			w.expand(top{r.body, 0, f})
		}
		if t.cnt >= r.min {
			w.pop(t.par)
		}
		return
	}
	if in.bytes {
		w.dst = append(w.dst, t)
	}
	for _, e := range c.calls[in.call0:in.call1] {
		f := w.push(top{e.ret, t.cnt, t.par})
		w.expand(top{e.start, 0, f})
	}
	if in.final {
		w.pop(t.par)
	}
}

func (w *work) pop(par int32) {
	switch par {
	case parRoot:
		if _, ok := w.visit(0, top{stDone, 0, parRoot}, 0); !ok {
			w.dst = append(w.dst, top{stDone, 0, parRoot})
		}
	case parExit:
		if _, ok := w.visit(0, top{stExit, 0, parExit}, 0); !ok {
			w.dst = append(w.dst, top{stExit, 0, parExit})
		}
	default:
		w.expand(w.nodes[par])
	}
}

// push returns the frame f, shared with an equal frame pushed in this step.
func (w *work) push(f top) int32 {
	id, ok := w.visit(1, f, int32(len(w.nodes)))
	if !ok {
		w.nodes = append(w.nodes, f)
	}
	return id
}
