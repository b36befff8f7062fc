package constrain

import (
	"fmt"
	"slices"
	"sync/atomic"

	"inferno/grammar"
)

// determinize turns each rule's automaton into a deterministic one over
// byte classes and links the calls.
func (c *compiler) determinize(v *Vocab) (*Compiled, error) {
	var cut [257]bool
	cut[0] = true
	for _, n := range c.nfas {
		if n == nil {
			continue
		}
		for _, rs := range n.rng {
			for _, r := range rs {
				cut[r.lo] = true
				cut[int(r.hi)+1] = true
			}
		}
	}
	cm := &Compiled{v: v}
	k := -1
	for b := range 256 {
		if cut[b] {
			k++
		}
		cm.cls[b] = uint8(k)
	}
	cm.ncls = k + 1
	ncls := cm.ncls
	// Reserve the tables for about one state per automaton node.
	nodes := 0
	for _, n := range c.nfas {
		if n != nil {
			nodes += len(n.eps)
		}
	}
	nodes = min(nodes+len(c.rules), maxStates)
	cm.info = make([]stateInfo, 0, nodes)
	cm.trans = make([]int32, 0, min(nodes*ncls, maxTransTotal))
	ruleStart := make([]int32, len(c.rules))
	type pendingCall struct {
		state int32
		calls []ncall // rule = crule id, to = DFA state
	}
	var pending []pendingCall
	for ri, r := range c.rules {
		cm.ruleFirst = append(cm.ruleFirst, int32(len(cm.info)))
		cm.ruleName = append(cm.ruleName, r.name)
		if r.rep {
			ruleStart[ri] = int32(len(cm.info))
			cm.info = append(cm.info, stateInfo{rep: int32(len(cm.reps))})
			cm.reps = append(cm.reps, repInfo{body: int32(r.body), min: int32(r.min), max: int32(r.max)})
			for range ncls {
				cm.trans = append(cm.trans, -1)
			}
			continue
		}
		n := c.nfas[ri]
		// The rule's states are numbered from first, in the order
		// sub numbers their sets.
		first := int32(len(cm.info))
		sub := grammar.NewSubsets(n.eps)
		lookup := func(set []int32) (int32, error) {
			if q, ok := sub.Find(set); ok {
				return first + q, nil
			}
			if len(cm.info) >= maxStates || len(cm.trans)+ncls > maxTransTotal {
				return 0, fmt.Errorf("constrain: grammar too large (more than %d automaton states)", len(cm.info))
			}
			id := first + sub.Add(set)
			cm.info = append(cm.info, stateInfo{rep: -1})
			for range ncls {
				cm.trans = append(cm.trans, -1)
			}
			return id, nil
		}
		s0, err := lookup(sub.Closure([]int32{0}))
		if err != nil {
			return nil, err
		}
		ruleStart[ri] = s0
		buckets := make([][]int32, ncls)
		for q := 0; q < len(sub.Sets); q++ {
			set := sub.Sets[q]
			id := first + int32(q)
			for i := range buckets {
				buckets[i] = buckets[i][:0]
			}
			var calls []ncall
			for _, x := range set {
				if x == n.final {
					cm.info[id].final = true
				}
				for _, r := range n.rng[x] {
					for k := cm.cls[r.lo]; ; k++ {
						buckets[k] = append(buckets[k], r.to)
						if k == cm.cls[r.hi] {
							break
						}
					}
				}
				calls = append(calls, n.call[x]...)
			}
			for k := range ncls {
				t := int32(-1)
				if len(buckets[k]) > 0 {
					if t, err = lookup(sub.Closure(buckets[k])); err != nil {
						return nil, err
					}
				}
				cm.trans[int(id)*ncls+k] = t
			}
			if len(calls) > 0 {
				slices.SortFunc(calls, func(a, b ncall) int { return int(a.rule - b.rule) })
				var merged []ncall
				for i := 0; i < len(calls); {
					j := i
					var tos []int32
					for ; j < len(calls) && calls[j].rule == calls[i].rule; j++ {
						tos = append(tos, calls[j].to)
					}
					t, err := lookup(sub.Closure(tos))
					if err != nil {
						return nil, err
					}
					merged = append(merged, ncall{calls[i].rule, t})
					i = j
				}
				pending = append(pending, pendingCall{id, merged})
			}
		}
	}
	if cap(cm.trans) > len(cm.trans)+len(cm.trans)/4 {
		cm.trans = slices.Clone(cm.trans) // do not keep the reserve
	}
	cm.info = slices.Clone(cm.info)
	for _, p := range pending {
		cm.info[p.state].call0 = int32(len(cm.calls))
		for _, k := range p.calls {
			cm.calls = append(cm.calls, callEdge{start: ruleStart[k.rule], ret: k.to})
		}
		cm.info[p.state].call1 = int32(len(cm.calls))
	}
	for i := range cm.reps {
		cm.reps[i].body = ruleStart[cm.reps[i].body]
	}
	cm.start = ruleStart[0]
	if err := cm.trim(); err != nil {
		return nil, err
	}
	cm.states = len(cm.info)
	cm.masks = make([]atomic.Pointer[stateMask], len(cm.info))
	cm.closed = make([]atomic.Pointer[closedSet], len(cm.info))
	cm.clsSet = make([][2]uint64, cm.ncls)
	for b := range 0x7f {
		cm.clsSet[cm.cls[b]][b/64] |= 1 << (b % 64)
	}
	cm.ctx = map[ctxKey]*stateMask{}
	return cm, nil
}

// trim removes the states from which no end is reachable, and every edge to
// them, so that every stack the matcher holds can still be completed.
func (cm *Compiled) trim() error {
	ns := len(cm.info)
	live := make([]bool, ns)
	isLive := func(s int) bool {
		in := &cm.info[s]
		if in.final {
			return true
		}
		if in.rep >= 0 {
			r := cm.reps[in.rep]
			return r.min == 0 || live[r.body]
		}
		for k := range cm.ncls {
			if t := cm.trans[s*cm.ncls+k]; t >= 0 && live[t] {
				return true
			}
		}
		for _, e := range cm.calls[in.call0:in.call1] {
			if live[e.start] && live[e.ret] {
				return true
			}
		}
		return false
	}
	// Predecessors, as linked lists over edge slots.
	head := make([]int32, ns)
	for i := range head {
		head[i] = -1
	}
	// One edge per run of classes with the same target, the lists sized
	// up front.
	edges := 2*len(cm.calls) + len(cm.reps)
	for s := range ns {
		prev := int32(-1)
		for _, t := range cm.trans[s*cm.ncls : (s+1)*cm.ncls] {
			if t >= 0 && t != prev {
				edges++
			}
			prev = t
		}
	}
	from, next := make([]int32, 0, edges), make([]int32, 0, edges)
	edge := func(p, q int32) {
		from = append(from, p)
		next = append(next, head[q])
		head[q] = int32(len(from) - 1)
	}
	for s := range ns {
		in := &cm.info[s]
		prev := int32(-1)
		for _, t := range cm.trans[s*cm.ncls : (s+1)*cm.ncls] {
			if t >= 0 && t != prev {
				edge(int32(s), t)
			}
			prev = t
		}
		for _, e := range cm.calls[in.call0:in.call1] {
			edge(int32(s), e.start)
			edge(int32(s), e.ret)
		}
		if in.rep >= 0 {
			edge(int32(s), cm.reps[in.rep].body)
		}
	}
	var work []int32
	for s := range ns {
		if isLive(s) {
			live[s] = true
			work = append(work, int32(s))
		}
	}
	for len(work) > 0 {
		q := work[len(work)-1]
		work = work[:len(work)-1]
		for e := head[q]; e >= 0; e = next[e] {
			if p := from[e]; !live[p] && isLive(int(p)) {
				live[p] = true
				work = append(work, p)
			}
		}
	}
	if !live[cm.start] {
		return fmt.Errorf("constrain: the grammar matches no string")
	}
	var calls []callEdge
	for s := range ns {
		in := &cm.info[s]
		for k := range cm.ncls {
			if t := cm.trans[s*cm.ncls+k]; t >= 0 && !live[t] {
				cm.trans[s*cm.ncls+k] = -1
			}
			if cm.trans[s*cm.ncls+k] >= 0 {
				in.bytes = true
			}
		}
		c0 := int32(len(calls))
		for _, e := range cm.calls[in.call0:in.call1] {
			if live[e.start] && live[e.ret] {
				calls = append(calls, e)
			}
		}
		in.call0, in.call1 = c0, int32(len(calls))
		in.simple = in.bytes && in.call0 == in.call1 && !in.final && in.rep < 0
		if in.rep >= 0 {
			cm.reps[in.rep].bodyLive = live[cm.reps[in.rep].body]
		}
	}
	cm.calls = calls
	cm.markTextClosed()
	cm.markTextRuns()
	// Nullable states: those that reach an end without a byte.
	null := make([]bool, ns)
	for changed := true; changed; {
		changed = false
		for s := range ns {
			in := &cm.info[s]
			ok := in.final
			if in.rep >= 0 {
				r := cm.reps[in.rep]
				ok = r.min == 0 || null[r.body]
			}
			for _, e := range cm.calls[in.call0:in.call1] {
				ok = ok || null[e.start] && null[e.ret]
			}
			if ok && !null[s] {
				null[s] = true
				changed = true
			}
		}
	}
	for i := range cm.reps {
		r := &cm.reps[i]
		r.bodyBytes = !null[r.body]
		if r.bodyLive && r.bodyBytes {
			cm.info[r.body].textBody = cm.textEnds(r.body)
			r.minBody = cm.minBytes(r.body)
		}
	}
	return nil
}

// minBytes returns a lower bound (at least 1) on the bytes from state s
// to the end of its rule: the fewest byte transitions to a final state,
// a call counted as reading nothing. Past maxMinStates states it gives 1.
func (cm *Compiled) minBytes(s int32) int32 {
	dist := map[int32]int32{s: 0}
	cur := []int32{s}
	for d := int32(0); len(cur) > 0; d++ {
		var next []int32
		for i := 0; i < len(cur); i++ { // cur grows with the calls' returns (no byte)
			q := cur[i]
			in := &cm.info[q]
			if in.final || in.rep >= 0 {
				return max(d, 1)
			}
			for _, e := range cm.calls[in.call0:in.call1] {
				if old, ok := dist[e.ret]; !ok || old > d {
					dist[e.ret] = d
					cur = append(cur, e.ret)
				}
			}
			for _, t := range cm.trans[int(q)*cm.ncls : (int(q)+1)*cm.ncls] {
				if _, ok := dist[t]; t >= 0 && !ok {
					dist[t] = d + 1
					next = append(next, t)
				}
			}
		}
		if len(dist) > maxMinStates {
			return 1
		}
		cur = next
	}
	return 1
}

// maxMinStates bounds the states minBytes visits.
const maxMinStates = 1 << 12

// markTextClosed sets loops on the states from which every text-slice
// token is read by byte transitions alone: every text code point leads
// from the state, and from every state so reached, to a state that reads
// every text code point again (a JSON string's interior, and the states
// before it that only count or check the first code points: a string's
// minimum length, a key that must not be one of the listed names). A mask
// there accepts the whole text slice at once.
func (cm *Compiled) markTextClosed() {
	ns := len(cm.info)
	// open[s]: some text code point is missing from s, or from a state a
	// text code point leads to, and so on.
	open := make([]bool, ns)
	head := make([]int32, ns) // reverse text edges, as linked lists
	for i := range head {
		head[i] = -1
	}
	var from, next []int32
	var work, succ, cur, nxt []int32
	for s := range ns {
		if !cm.info[s].bytes {
			open[s] = true
			work = append(work, int32(s))
			continue
		}
		var ok bool
		if succ, ok = cm.textSucc(int32(s), succ[:0], &cur, &nxt); !ok {
			open[s] = true
			work = append(work, int32(s))
			continue
		}
		for _, t := range succ {
			from = append(from, int32(s))
			next = append(next, head[t])
			head[t] = int32(len(from) - 1)
		}
	}
	for len(work) > 0 {
		q := work[len(work)-1]
		work = work[:len(work)-1]
		for e := head[q]; e >= 0; e = next[e] {
			if p := from[e]; !open[p] {
				open[p] = true
				work = append(work, p)
			}
		}
	}
	for s := range ns {
		cm.info[s].loops = !open[s]
	}
}

// markTextRuns sets textRun on the states from which every sequence of k
// text-slice code points is read by byte transitions, through states where
// the rule neither ends nor calls, and after which no text code point is
// read and the rule neither ends nor calls: the text-slice tokens accepted
// there are exactly those of at most k code points (a chain of states
// that count the characters of a string, as a length-bounded pattern's
// automaton or a short counted repetition writes). From k at the longest
// token's code points on, every text-slice token is accepted.
func (cm *Compiled) markTextRuns() {
	limit := int32(cm.v.maxTextRunes)
	if limit == 0 {
		return
	}
	const unknown, active = -2, -3
	run := make([]int32, len(cm.info))
	for i := range run {
		run[i] = unknown
	}
	var cur, nxt []int32
	var visit func(s int32) int32
	visit = func(s int32) int32 {
		switch run[s] {
		case unknown:
		case active:
			return -1 // a cycle: not a run (loops covers the closed ones)
		default:
			return run[s]
		}
		run[s] = active
		in := &cm.info[s]
		v := int32(-1)
		switch {
		case !in.final && in.call0 == in.call1 && in.rep < 0 && !cm.readsText(s):
			v = 0
		case in.simple:
			succ, ok := cm.textSucc(s, nil, &cur, &nxt)
			if !ok || len(succ) == 0 {
				break
			}
			lo, hi := limit, int32(-1)
			for _, t := range succ {
				r := visit(t)
				lo, hi = min(lo, r), max(hi, r)
			}
			switch {
			case lo < 0:
			case lo == hi || lo >= limit-1:
				v = min(limit, lo+1)
			}
		}
		run[s] = v
		return v
	}
	for s := range cm.info {
		if v := visit(int32(s)); v > 0 {
			cm.info[s].textRun = v
		}
	}
}

// readsText reports whether some text-slice code point's first byte moves
// on from s.
func (cm *Compiled) readsText(s int32) bool {
	for b := range 256 {
		if isTextLead(byte(b)) && cm.trans[int(s)*cm.ncls+int(cm.cls[b])] >= 0 {
			return true
		}
	}
	return false
}

// textSucc appends to dst the states (each once) that the code points of
// the text slice lead to from s by byte transitions, and reports whether
// every one of them leads somewhere. cur and nxt are scratch space.
func (cm *Compiled) textSucc(s int32, dst []int32, cur, nxt *[]int32) ([]int32, bool) {
	for _, q := range textSeqs {
		*cur = append((*cur)[:0], s)
		for i := 0; i < q.n; i++ {
			*nxt = (*nxt)[:0]
			for _, t := range *cur {
				for k := int(cm.cls[q.lo[i]]); k <= int(cm.cls[q.hi[i]]); k++ {
					u := cm.trans[int(t)*cm.ncls+k]
					if u < 0 {
						return dst, false
					}
					if !slices.Contains(*nxt, u) {
						*nxt = append(*nxt, u)
					}
				}
			}
			*cur, *nxt = *nxt, *cur
		}
		for _, t := range *cur {
			if !slices.Contains(dst, t) {
				dst = append(dst, t)
			}
		}
	}
	return dst, true
}

// textEnds reports whether every code point of the text slice leads from
// s to an end of its rule by byte transitions alone.
func (cm *Compiled) textEnds(s int32) bool {
	return cm.textLeadsTo(s, func(t int32) bool { return cm.info[t].final })
}

// textLeadsTo reports whether every code point of the text slice leads
// from s by byte transitions alone, none of them missing, to states that
// all satisfy ok.
func (cm *Compiled) textLeadsTo(s int32, ok func(int32) bool) bool {
	var cur, next []int32
	for _, q := range textSeqs {
		cur = append(cur[:0], s)
		for i := 0; i < q.n; i++ {
			next = next[:0]
			for _, t := range cur {
				for k := int(cm.cls[q.lo[i]]); k <= int(cm.cls[q.hi[i]]); k++ {
					u := cm.trans[int(t)*cm.ncls+k]
					if u < 0 {
						return false
					}
					if !slices.Contains(next, u) {
						next = append(next, u)
					}
				}
			}
			cur, next = next, cur
		}
		for _, t := range cur {
			if !ok(t) {
				return false
			}
		}
	}
	return true
}

// States returns the number of automaton states, a measure of size.
func (cm *Compiled) States() int { return cm.states }
