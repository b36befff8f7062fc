package grammar

import (
	"fmt"
	"slices"
	"sort"
	"unsafe"
)

// charDFA is a deterministic automaton over code points: the alphabet is
// cut into intervals that every class of the expression either covers or
// misses, and trans[q][i] is the state after a code point of interval i
// (-1: none). State 0 starts.
type charDFA struct {
	iv    []Range
	trans [][]int32
	final []bool
}

type charEdge struct {
	rs []Range
	to int32
}

type charNFA struct {
	eps   [][]int32
	edges [][]charEdge
	err   error
}

func (n *charNFA) node() int32 {
	if len(n.eps) >= MaxLengthNFA && n.err == nil {
		n.err = fmt.Errorf("more than %d automaton nodes", MaxLengthNFA)
	}
	n.eps = append(n.eps, nil)
	n.edges = append(n.edges, nil)
	return int32(len(n.eps) - 1)
}

func (n *charNFA) build(e *Expr, from, to int32) {
	if n.err != nil {
		return
	}
	switch e.Kind {
	case Empty:
		n.eps[from] = append(n.eps[from], to)
	case Literal:
		rs := []rune(e.Text)
		cur := from
		for i, r := range rs {
			next := to
			if i < len(rs)-1 {
				next = n.node()
			}
			n.edges[cur] = append(n.edges[cur], charEdge{[]Range{{r, r}}, next})
			cur = next
		}
	case Class:
		if rs := positive(e); len(rs) > 0 {
			n.edges[from] = append(n.edges[from], charEdge{rs, to})
		}
	case Seq:
		cur := from
		for i, s := range e.Subs {
			next := to
			if i < len(e.Subs)-1 {
				next = n.node()
			}
			n.build(s, cur, next)
			cur = next
		}
	case Alt:
		for _, s := range e.Subs {
			n.build(s, from, to)
		}
	case Repeat:
		cur := from
		for range e.Min {
			next := n.node()
			n.build(e.Subs[0], cur, next)
			cur = next
			if n.err != nil {
				return
			}
		}
		if e.Max < 0 {
			loop := n.node()
			n.eps[cur] = append(n.eps[cur], loop)
			n.build(e.Subs[0], loop, loop)
			n.eps[loop] = append(n.eps[loop], to)
			return
		}
		for i := e.Min; i < e.Max && n.err == nil; i++ {
			n.eps[cur] = append(n.eps[cur], to)
			next := n.node()
			n.build(e.Subs[0], cur, next)
			cur = next
		}
		n.eps[cur] = append(n.eps[cur], to)
	default:
		n.err = fmt.Errorf("an expression of kind %d in a pattern", e.Kind)
	}
}

// newCharDFA determinizes e's character automaton, keeping only the
// states from which a match can end.
func newCharDFA(e *Expr) (*charDFA, error) {
	n := &charNFA{}
	start := n.node()
	end := n.node()
	n.build(e, start, end)
	if n.err != nil {
		return nil, n.err
	}
	// The alphabet's intervals: cut at every class's bounds.
	var cuts []rune
	for _, es := range n.edges {
		for _, ed := range es {
			for _, r := range ed.rs {
				cuts = append(cuts, r.Lo, r.Hi+1)
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	d := &charDFA{}
	for i := 0; i+1 < len(cuts); i++ {
		d.iv = append(d.iv, Range{cuts[i], cuts[i+1] - 1})
	}
	// ivs[node][edge]: the intervals the edge's class covers.
	ivs := make([][][]int32, len(n.edges))
	for x, es := range n.edges {
		ivs[x] = make([][]int32, len(es))
		for j, ed := range es {
			for _, r := range ed.rs {
				for i := sort.Search(len(d.iv), func(i int) bool { return d.iv[i].Lo >= r.Lo }); i < len(d.iv) && d.iv[i].Hi <= r.Hi; i++ {
					ivs[x][j] = append(ivs[x][j], int32(i))
				}
			}
		}
	}
	sub := NewSubsets(n.eps)
	lookup := func(set []int32) (int32, error) {
		if id, ok := sub.Find(set); ok {
			return id, nil
		}
		if len(sub.Sets) >= MaxLengthDFA {
			return 0, fmt.Errorf("more than %d deterministic automaton states", MaxLengthDFA)
		}
		if (len(sub.Sets)+1)*len(d.iv) > maxLengthCells {
			return 0, fmt.Errorf("more than %d transitions (%d character ranges)", maxLengthCells, len(d.iv))
		}
		d.final = append(d.final, slices.Contains(set, end))
		return sub.Add(set), nil
	}
	if _, err := lookup(sub.Closure([]int32{start})); err != nil {
		return nil, err
	}
	buckets := make([][]int32, len(d.iv))
	for q := 0; q < len(sub.Sets); q++ {
		for i := range buckets {
			buckets[i] = buckets[i][:0]
		}
		for _, x := range sub.Sets[q] {
			for j, ed := range n.edges[x] {
				for _, i := range ivs[x][j] {
					buckets[i] = append(buckets[i], ed.to)
				}
			}
		}
		row := make([]int32, len(d.iv))
		for i, b := range buckets {
			row[i] = -1
			if len(b) > 0 {
				id, err := lookup(sub.Closure(b))
				if err != nil {
					return nil, err
				}
				row[i] = id
			}
		}
		d.trans = append(d.trans, row)
	}
	d.trim()
	return d, nil
}

// trim removes the transitions into states from which no match ends.
func (d *charDFA) trim() {
	live := make([]bool, len(d.final))
	for changed := true; changed; {
		changed = false
		for q, row := range d.trans {
			if live[q] {
				continue
			}
			if d.final[q] || slices.ContainsFunc(row, func(t int32) bool { return t >= 0 && live[t] }) {
				live[q], changed = true, true
			}
		}
	}
	for _, row := range d.trans {
		for i, t := range row {
			if t >= 0 && !live[t] {
				row[i] = -1
			}
		}
	}
}

// minimizeWork bounds the transitions Moore's refinement reads (states
// times intervals, per round) before giving up: minimizing only makes the
// product smaller, and a long chain of states needs a round per state.
const minimizeWork = 1 << 22

// minimize merges equivalent states (Moore's partition refinement), or
// leaves d as it is where that would take more than minimizeWork steps.
func (d *charDFA) minimize() {
	nq := len(d.trans)
	work := 0
	block := make([]int32, nq)
	for q := range block {
		if d.final[q] {
			block[q] = 1
		}
	}
	blocks := -1
	sig := make([]int32, 0, len(d.iv)+1)
	for {
		if work += nq * (len(d.iv) + 1); work > minimizeWork {
			return
		}
		ids := map[string]int32{}
		next := make([]int32, nq)
		for q, row := range d.trans {
			sig = append(sig[:0], block[q])
			for _, t := range row {
				if t < 0 {
					sig = append(sig, -1)
				} else {
					sig = append(sig, block[t])
				}
			}
			key := string(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(sig))), len(sig)*4))
			id, ok := ids[key]
			if !ok {
				id = int32(len(ids))
				ids[key] = id
			}
			next[q] = id
		}
		block = next
		if len(ids) == blocks {
			break
		}
		blocks = len(ids)
	}
	// Renumber so that the start's block is 0.
	order := make([]int32, blocks)
	for i := range order {
		order[i] = -1
	}
	order[block[0]] = 0
	k := int32(1)
	for q := range nq {
		if order[block[q]] < 0 {
			order[block[q]] = k
			k++
		}
	}
	trans := make([][]int32, blocks)
	final := make([]bool, blocks)
	for q, row := range d.trans {
		b := order[block[q]]
		if trans[b] != nil {
			continue
		}
		final[b] = d.final[q]
		trans[b] = make([]int32, len(row))
		for i, t := range row {
			trans[b][i] = -1
			if t >= 0 {
				trans[b][i] = order[block[t]]
			}
		}
	}
	d.trans, d.final = trans, final
}

// remaining returns, per state, the fewest and the most characters to a
// final state (-1 for the fewest: none, the state is dead; -1 for the
// most: unbounded, a loop is on the way). The most is computed for the
// states reached from the start.
func (d *charDFA) remaining() (lo, hi []int) {
	nq := len(d.trans)
	lo, hi = make([]int, nq), make([]int, nq)
	rev := make([][]int32, nq)
	var queue []int32
	for q, row := range d.trans {
		lo[q], hi[q] = -1, -1
		for _, t := range row {
			if t >= 0 {
				rev[t] = append(rev[t], int32(q))
			}
		}
		if d.final[q] {
			lo[q] = 0
			queue = append(queue, int32(q))
		}
	}
	// The fewest: breadth first from the final states, backwards.
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		for _, q := range rev[t] {
			if lo[q] < 0 {
				lo[q] = lo[t] + 1
				queue = append(queue, q)
			}
		}
	}
	// The most: depth first over the live states; an edge back to a state
	// under way closes a loop, unbounded for it and every state before.
	const (
		unseen = iota
		active
		done
	)
	state := make([]uint8, nq)
	var visit func(q int)
	visit = func(q int) {
		state[q] = active
		h, inf := -1, false
		if d.final[q] {
			h = 0
		}
		for _, t := range d.trans[q] {
			if t < 0 || lo[t] < 0 {
				continue
			}
			switch state[t] {
			case unseen:
				visit(int(t))
			case active:
				inf = true
				continue
			}
			if hi[t] < 0 {
				inf = true
			} else {
				h = max(h, hi[t]+1)
			}
		}
		if inf {
			h = -1
		}
		hi[q] = h
		state[q] = done
	}
	if lo[0] >= 0 {
		visit(0)
	}
	return lo, hi
}

// edgeSizes estimates, per state, the automaton nodes its transitions
// build in the engine, written as JSON (autoSize of their labels after
// jsonText).
func (d *charDFA) edgeSizes() []int {
	out := make([]int, len(d.trans))
	for q, row := range d.trans {
		by := map[int32][]Range{}
		for i, t := range row {
			if t < 0 {
				continue
			}
			rs := by[t]
			if n := len(rs); n > 0 && rs[n-1].Hi+1 == d.iv[i].Lo {
				rs[n-1].Hi = d.iv[i].Hi
			} else {
				rs = append(rs, d.iv[i])
			}
			by[t] = rs
		}
		out[q] = 1
		for _, rs := range by {
			out[q] += autoSize(jsonText(Chars(rs...)))
		}
	}
	return out
}

// product returns the automaton of d's strings of [lo, hi] characters (hi
// < 0: no upper bound), or nil where there are none. A state pairs d's
// state with the characters read, or with -1 once every way on stays
// within the bounds.
func (d *charDFA) product(lo, hi int) (*Expr, error) {
	remLo, remHi := d.remaining()
	if remLo[0] < 0 {
		return nil, nil
	}
	type pstate struct{ q, n int32 }
	free := func(q int32, n int) bool {
		return n+remLo[q] >= lo && (hi < 0 || remHi[q] >= 0 && n+remHi[q] <= hi)
	}
	canon := func(q int32, n int) pstate {
		if free(q, n) {
			return pstate{q, -1}
		}
		return pstate{q, int32(n)}
	}
	ids := map[pstate]int32{}
	var states []pstate
	var trans [][]int32 // per product state, per interval: target or -1
	size, qsize := 0, d.edgeSizes()
	add := func(p pstate) (int32, error) {
		if id, ok := ids[p]; ok {
			return id, nil
		}
		if len(states) >= MaxLengthStates {
			return 0, fmt.Errorf("more than %d automaton states", MaxLengthStates)
		}
		if (len(states)+1)*len(d.iv) > maxLengthCells {
			return 0, fmt.Errorf("more than %d transitions (%d character ranges)", maxLengthCells, len(d.iv))
		}
		if size += qsize[p.q]; size > MaxLengthSize {
			return 0, fmt.Errorf("more than %d automaton nodes (estimated)", MaxLengthSize)
		}
		id := int32(len(states))
		ids[p] = id
		states = append(states, p)
		return id, nil
	}
	if _, err := add(canon(0, 0)); err != nil {
		return nil, err
	}
	for i := 0; i < len(states); i++ {
		p := states[i]
		row := make([]int32, len(d.iv))
		for a, t := range d.trans[p.q] {
			row[a] = -1
			if t < 0 {
				continue
			}
			var next pstate
			if p.n < 0 {
				next = pstate{t, -1}
			} else {
				n := int(p.n) + 1
				if hi >= 0 && n+remLo[t] > hi {
					continue // too long whichever way it ends
				}
				next = canon(t, n)
			}
			id, err := add(next)
			if err != nil {
				return nil, err
			}
			row[a] = id
		}
		trans = append(trans, row)
	}
	final := make([]bool, len(states))
	for i, p := range states {
		final[i] = d.final[p.q] && (p.n < 0 || int(p.n) >= lo && (hi < 0 || int(p.n) <= hi))
	}
	// Drop the states from which no final state is reached.
	live := slices.Clone(final)
	rev := make([][]int32, len(states))
	for s, row := range trans {
		for _, t := range row {
			if t >= 0 {
				rev[t] = append(rev[t], int32(s))
			}
		}
	}
	var stack []int32
	for s, f := range final {
		if f {
			stack = append(stack, int32(s))
		}
	}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, s := range rev[t] {
			if !live[s] {
				live[s] = true
				stack = append(stack, s)
			}
		}
	}
	if !live[0] {
		return nil, nil
	}
	num := make([]int, len(states))
	k := 0
	for s := range states {
		num[s] = -1
		if live[s] {
			num[s] = k
			k++
		}
	}
	a := &Auto{Final: make([]bool, k), Edges: make([][]AutoEdge, k)}
	for s, row := range trans {
		if !live[s] {
			continue
		}
		a.Final[num[s]] = final[s]
		// One edge per target, its intervals merged into a class.
		var edges []AutoEdge
		at := map[int32]int{}
		for i, t := range row {
			if t < 0 || !live[t] {
				continue
			}
			j, ok := at[t]
			if !ok {
				j = len(edges)
				at[t] = j
				edges = append(edges, AutoEdge{Label: Chars(), To: num[t]})
			}
			l := edges[j].Label
			if n := len(l.Ranges); n > 0 && l.Ranges[n-1].Hi+1 == d.iv[i].Lo {
				l.Ranges[n-1].Hi = d.iv[i].Hi
			} else {
				l.Ranges = append(l.Ranges, d.iv[i])
			}
		}
		a.Edges[num[s]] = edges
	}
	return NewAuto(a), nil
}

// bothExpr returns an expression over a string's characters matching what
// both a and b match (a pattern and a format), with length bounds as
// boundLength's, or nil where no string does.
func bothExpr(a, b *Expr, lo, hi int) (*Expr, error) {
	da, err := newCharDFA(a)
	if err != nil {
		return nil, err
	}
	db, err := newCharDFA(b)
	if err != nil {
		return nil, err
	}
	d, err := intersect(da, db)
	if err != nil {
		return nil, err
	}
	d.minimize()
	return d.product(lo, hi)
}

// intersect returns the automaton of the strings both a and b accept.
func intersect(a, b *charDFA) (*charDFA, error) {
	var cuts []rune
	for _, iv := range append(slices.Clone(a.iv), b.iv...) {
		cuts = append(cuts, iv.Lo, iv.Hi+1)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	d := &charDFA{}
	var ia, ib []int32 // per interval of d: a's and b's interval, or -1
	find := func(ivs []Range, r Range) int32 {
		i := sort.Search(len(ivs), func(i int) bool { return ivs[i].Hi >= r.Lo })
		if i < len(ivs) && ivs[i].Lo <= r.Lo && r.Hi <= ivs[i].Hi {
			return int32(i)
		}
		return -1
	}
	for i := 0; i+1 < len(cuts); i++ {
		r := Range{cuts[i], cuts[i+1] - 1}
		x, y := find(a.iv, r), find(b.iv, r)
		if x >= 0 && y >= 0 {
			d.iv = append(d.iv, r)
			ia, ib = append(ia, x), append(ib, y)
		}
	}
	type pair struct{ p, q int32 }
	ids := map[pair]int32{{0, 0}: 0}
	pairs := []pair{{0, 0}}
	for k := 0; k < len(pairs); k++ {
		p := pairs[k]
		d.final = append(d.final, a.final[p.p] && b.final[p.q])
		row := make([]int32, len(d.iv))
		for i := range d.iv {
			row[i] = -1
			ta, tb := a.trans[p.p][ia[i]], b.trans[p.q][ib[i]]
			if ta < 0 || tb < 0 {
				continue
			}
			id, ok := ids[pair{ta, tb}]
			if !ok {
				if len(pairs) >= MaxLengthDFA || (len(pairs)+1)*len(d.iv) > maxLengthCells {
					return nil, fmt.Errorf("more than %d deterministic automaton states", min(MaxLengthDFA, maxLengthCells/len(d.iv)))
				}
				id = int32(len(pairs))
				ids[pair{ta, tb}] = id
				pairs = append(pairs, pair{ta, tb})
			}
			row[i] = id
		}
		d.trans = append(d.trans, row)
	}
	d.trim()
	return d, nil
}
