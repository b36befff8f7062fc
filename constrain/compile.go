package constrain

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"inferno/grammar"
)

// Sizes that choose between copying and calling (variables so that tests
// can make every choice go the other way).
var (
	inlineLimit = 4096 // largest rule (in automaton nodes) copied into its callers
	repeatLimit = 4096 // largest {m,n} body times copies expanded in place; beyond, a counter
	sharedLimit = 512  // smallest expression used in several places compiled once as its own rule
)

// Limits of compilation: they turn pathological grammars into errors.
const (
	maxRuleNodes  = 1 << 18 // automaton nodes of one rule
	maxStates     = 1 << 18 // automaton states of a grammar
	maxTransTotal = 1 << 24 // transition table entries of a grammar
)

// Compiled is a grammar compiled against a vocabulary: a byte-level
// pushdown automaton (one deterministic automaton per rule, with call edges
// for the references that were not inlined and counter states for long
// bounded repetitions) and a lazily filled per-state table of token masks.
// It is safe for concurrent use by many Matchers.
type Compiled struct {
	v      *Vocab
	ncls   int
	cls    [256]uint8
	trans  []int32 // trans[s*ncls+cls[b]]: next state, or -1
	info   []stateInfo
	calls  []callEdge
	reps   []repInfo
	start  int32 // the root rule's start state
	masks  []atomic.Pointer[stateMask]
	closed []atomic.Pointer[closedSet] // per state, filled on first use (closedFor)
	clsSet [][2]uint64                 // the bytes below 0x7f of each byte class
	ctxMu  sync.RWMutex
	ctx    map[ctxKey]*stateMask // masks of states right above a counter frame
	locks  [64]sync.Mutex
	works  sync.Pool // *work for computing masks
	states int

	// ruleFirst[i] is the first state of the automaton's rule i, whose
	// states run up to the next one's first; ruleName[i] names the
	// grammar rule it is or is part of.
	ruleFirst []int32
	ruleName  []string

	probeOnce sync.Once
	probeErr  error
}

type stateInfo struct {
	call0, call1 int32 // calls[call0:call1]
	rep          int32 // index into reps, or -1
	final        bool  // the rule can end here
	bytes        bool  // some byte moves on
	simple       bool  // bytes, and no call, end or counter
	loops        bool  // every text-slice token is read from here by byte transitions (markTextClosed)
	textBody     bool  // a counter's body start that every text-slice code point completes
	// textRun > 0: the text-slice tokens read from here are exactly those
	// of at most textRun code points (markTextRuns), all of them at the
	// vocabulary's longest.
	textRun int32
}

// callEdge pushes a frame returning to ret and enters the callee at start.
type callEdge struct{ start, ret int32 }

// repInfo is a counter state: the body rule runs between min and max times
// (max < 0: unbounded), the count kept in the frame.
type repInfo struct {
	body     int32 // start state of the body rule
	min, max int32
	bodyLive bool
	// bodyBytes: every pass through the body reads a byte, so a token
	// completes at most as many bodies as it has bytes; masks below such a
	// counter are cached by the counts that can matter within one token.
	bodyBytes bool
	// minBody: a lower bound on the bytes of one pass through the body (at
	// least 1 with bodyBytes), so a token starts at most maxLen/minBody + 1
	// of them.
	minBody int32
}

// crule is a rule of the automaton: a grammar rule, the body of a long
// repetition, or such a repetition's counter.
type crule struct {
	name     string // the grammar rule it is, or is part of (for errors)
	expr     *grammar.Expr
	rep      bool
	body     int // crule of the body, for rep
	min, max int
}

type nrng struct {
	lo, hi byte
	to     int32
}

type ncall struct{ rule, to int32 }

type nfa struct {
	eps   [][]int32
	rng   [][]nrng
	call  [][]ncall
	final int32
}

func (n *nfa) node() int32 {
	n.eps = append(n.eps, nil)
	n.rng = append(n.rng, nil)
	n.call = append(n.call, nil)
	return int32(len(n.eps) - 1)
}

type compiler struct {
	g         *grammar.Grammar
	rules     []crule
	nfas      []*nfa
	ruleOf    map[int]int // grammar rule -> crule
	recursive []bool
	cost      []int
	ecost     map[*grammar.Expr]int
	uses      map[*grammar.Expr]int  // expressions reached from more than one place
	exprRule  map[*grammar.Expr]int  // crule of a shared expression
	building  map[*grammar.Expr]bool // the shared expression whose rule is being built
	counter   map[*grammar.Expr]int  // crule of a repetition's counter
	nullRule  []bool
	nulls     map[*grammar.Expr]bool
	err       error
	cur       int // the crule being built
}

// Compile compiles g against v. The work per grammar position (which tokens
// it accepts) is done lazily, on the first mask asked there.
func Compile(g *grammar.Grammar, v *Vocab) (*Compiled, error) {
	if g == nil || v == nil {
		return nil, fmt.Errorf("constrain: nil grammar or vocabulary")
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	c := &compiler{g: g, ruleOf: map[int]int{}, cost: make([]int, len(g.Rules)),
		ecost: map[*grammar.Expr]int{}, uses: map[*grammar.Expr]int{}, exprRule: map[*grammar.Expr]int{},
		counter: map[*grammar.Expr]int{}, nullRule: g.Nullable(), nulls: map[*grammar.Expr]bool{}}
	var count func(e *grammar.Expr)
	count = func(e *grammar.Expr) {
		c.uses[e]++
		if c.uses[e] > 1 {
			return
		}
		for _, s := range e.Subs {
			count(s)
		}
	}
	for _, r := range g.Rules {
		count(r.Expr)
	}
	for i := range c.cost {
		c.cost[i] = -1
	}
	c.recursive = recursiveRules(g)
	c.ruleFor(g.Root)
	for i := 0; i < len(c.rules); i++ {
		if c.rules[i].rep {
			c.nfas = append(c.nfas, nil)
			continue
		}
		n := &nfa{}
		s := n.node()
		n.final = n.node()
		c.building = map[*grammar.Expr]bool{c.rules[i].expr: true}
		c.cur = i
		c.build(n, c.rules[i].expr, s, n.final)
		if c.err != nil {
			return nil, c.err
		}
		c.nfas = append(c.nfas, n)
	}
	return c.determinize(v)
}

// recursiveRules reports the rules that can reach themselves by references.
func recursiveRules(g *grammar.Grammar) []bool {
	n := len(g.Rules)
	refs := make([][]int, n)
	var walk func(e *grammar.Expr, out []int) []int
	walk = func(e *grammar.Expr, out []int) []int {
		if e.Kind == grammar.Ref {
			return append(out, e.Rule)
		}
		for _, s := range e.Subs {
			out = walk(s, out)
		}
		return out
	}
	for i, r := range g.Rules {
		refs[i] = walk(r.Expr, nil)
	}
	// Tarjan's strongly connected components.
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	rec := make([]bool, n)
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, w := range refs[v] {
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 {
				for _, w := range comp {
					rec[w] = true
				}
			} else if slices.Contains(refs[v], v) {
				rec[v] = true
			}
		}
	}
	for i := range n {
		if index[i] < 0 {
			visit(i)
		}
	}
	return rec
}

func (c *compiler) ruleFor(r int) int {
	if i, ok := c.ruleOf[r]; ok {
		return i
	}
	c.rules = append(c.rules, crule{name: c.g.Rules[r].Name, expr: c.g.Rules[r].Expr})
	c.ruleOf[r] = len(c.rules) - 1
	return len(c.rules) - 1
}

func (c *compiler) inline(r int) bool {
	return !c.recursive[r] && c.ruleCost(r) <= inlineLimit
}

func (c *compiler) ruleCost(r int) int {
	if c.cost[r] < 0 {
		c.cost[r] = c.exprCost(c.g.Rules[r].Expr)
	}
	return c.cost[r]
}

// ownRule reports whether e, used in several places and large, is compiled
// once as its own rule and called.
func (c *compiler) ownRule(e *grammar.Expr) bool {
	return c.uses[e] > 1 && c.exprCostRaw(e) > sharedLimit
}

// exprCost estimates the automaton nodes e builds where it is used.
func (c *compiler) exprCost(e *grammar.Expr) int {
	if c.ownRule(e) {
		return 1
	}
	return c.exprCostRaw(e)
}

// exprCostRaw estimates the automaton nodes e builds, saturating.
func (c *compiler) exprCostRaw(e *grammar.Expr) int {
	if n, ok := c.ecost[e]; ok {
		return n
	}
	n := c.exprCostOf(e)
	c.ecost[e] = n
	return n
}

func (c *compiler) exprCostOf(e *grammar.Expr) int {
	switch e.Kind {
	case grammar.Literal:
		return len(e.Text)
	case grammar.Class:
		return 4*len(e.Ranges) + 8
	case grammar.Ref:
		if c.inline(e.Rule) {
			return c.ruleCost(e.Rule)
		}
		return 1
	case grammar.Seq, grammar.Alt:
		n := 1
		for _, s := range e.Subs {
			n = min(n+c.exprCost(s), 1<<30)
		}
		return n
	case grammar.Repeat:
		body := c.exprCost(e.Subs[0])
		if k, ok := c.expandable(e, body); ok {
			return min(body*k+1, 1<<30)
		}
		return 1
	case grammar.Automaton:
		n := len(e.Auto.Final)
		for _, edges := range e.Auto.Edges {
			for _, ed := range edges {
				n = min(n+c.exprCostRaw(ed.Label), 1<<30)
			}
		}
		return n
	}
	return 1
}

// expandable reports whether repetition e, whose body costs body, is built
// in place, and how many copies of the body that takes.
func (c *compiler) expandable(e *grammar.Expr, body int) (int, bool) {
	lo, hi := c.bounds(e)
	k := hi
	if hi < 0 {
		k = lo + 1
	}
	if c.nullable(e.Subs[0]) && k > maxNullableCopies {
		// Copies of a body that can be empty chain ε-paths: their
		// automaton grows as the square of the copies.
		return k, false
	}
	return k, k <= 2 || body*k <= repeatLimit
}

// maxNullableCopies bounds the copies (or, as a counter, the count) of a
// repeated expression that can match the empty string.
const maxNullableCopies = 64

// bounds returns e's repetition bounds; a body that can be empty fills any
// minimum by itself, so the minimum is then 0.
func (c *compiler) bounds(e *grammar.Expr) (lo, hi int) {
	if c.nullable(e.Subs[0]) {
		return 0, e.Max
	}
	return e.Min, e.Max
}

func (c *compiler) build(n *nfa, e *grammar.Expr, from, to int32) {
	if c.err != nil {
		return
	}
	if len(n.eps) > maxRuleNodes {
		c.err = fmt.Errorf("constrain: grammar too large (a rule needs more than %d automaton nodes)", maxRuleNodes)
		return
	}
	if c.ownRule(e) && !c.building[e] {
		r, ok := c.exprRule[e]
		if !ok {
			r = len(c.rules)
			c.rules = append(c.rules, crule{name: c.rules[c.cur].name, expr: e})
			c.exprRule[e] = r
		}
		n.call[from] = append(n.call[from], ncall{int32(r), to})
		return
	}
	switch e.Kind {
	case grammar.Empty:
		n.eps[from] = append(n.eps[from], to)
	case grammar.Literal:
		cur := from
		for i := 0; i < len(e.Text); i++ {
			next := to
			if i < len(e.Text)-1 {
				next = n.node()
			}
			n.rng[cur] = append(n.rng[cur], nrng{e.Text[i], e.Text[i], next})
			cur = next
		}
	case grammar.Class:
		var seqs []byteSeq
		for _, r := range classRanges(e) {
			seqs = utf8Seqs(seqs, r.Lo, r.Hi)
		}
		for _, s := range seqs {
			cur := from
			for i := 0; i < s.n; i++ {
				next := to
				if i < s.n-1 {
					next = n.node()
				}
				n.rng[cur] = append(n.rng[cur], nrng{s.lo[i], s.hi[i], next})
				cur = next
			}
		}
	case grammar.Ref:
		if c.inline(e.Rule) {
			c.build(n, c.g.Rules[e.Rule].Expr, from, to)
			return
		}
		n.call[from] = append(n.call[from], ncall{int32(c.ruleFor(e.Rule)), to})
	case grammar.Seq:
		cur := from
		for i, s := range e.Subs {
			next := to
			if i < len(e.Subs)-1 {
				next = n.node()
			}
			c.build(n, s, cur, next)
			cur = next
		}
	case grammar.Alt:
		for _, s := range e.Subs {
			c.build(n, s, from, to)
		}
	case grammar.Repeat:
		body := e.Subs[0]
		lo, hi := c.bounds(e)
		if _, ok := c.expandable(e, c.exprCost(body)); !ok {
			if c.nullable(body) && (hi < 0 || hi > maxNullableCopies) {
				c.err = fmt.Errorf("constrain: grammar too large (a repetition {%d,%d} of an expression that can be empty)", e.Min, e.Max)
				return
			}
			r, ok := c.counter[e]
			if !ok {
				name := c.rules[c.cur].name
				c.rules = append(c.rules, crule{name: name, expr: body})
				c.rules = append(c.rules, crule{name: name, rep: true, body: len(c.rules) - 1, min: lo, max: hi})
				r = len(c.rules) - 1
				c.counter[e] = r
			}
			n.call[from] = append(n.call[from], ncall{int32(r), to})
			return
		}
		cur := from
		for range lo {
			next := n.node()
			c.build(n, body, cur, next)
			cur = next
		}
		if hi < 0 {
			loop := n.node()
			n.eps[cur] = append(n.eps[cur], loop)
			c.build(n, body, loop, loop)
			n.eps[loop] = append(n.eps[loop], to)
			return
		}
		for i := lo; i < hi; i++ {
			n.eps[cur] = append(n.eps[cur], to)
			next := n.node()
			c.build(n, body, cur, next)
			cur = next
		}
		n.eps[cur] = append(n.eps[cur], to)
	case grammar.Automaton:
		// A node per state; each edge is its label built between them.
		a := e.Auto
		nodes := make([]int32, len(a.Final))
		for s := range nodes {
			nodes[s] = n.node()
			if a.Final[s] {
				n.eps[nodes[s]] = append(n.eps[nodes[s]], to)
			}
		}
		n.eps[from] = append(n.eps[from], nodes[0])
		for s, edges := range a.Edges {
			for _, ed := range edges {
				c.build(n, ed.Label, nodes[s], nodes[ed.To])
			}
		}
	}
}

// nullable reports whether e matches the empty string.
func (c *compiler) nullable(e *grammar.Expr) bool {
	if v, ok := c.nulls[e]; ok {
		return v
	}
	v := c.nullableOf(e)
	c.nulls[e] = v
	return v
}

func (c *compiler) nullableOf(e *grammar.Expr) bool {
	switch e.Kind {
	case grammar.Empty:
		return true
	case grammar.Ref:
		return c.nullRule[e.Rule]
	case grammar.Seq:
		for _, s := range e.Subs {
			if !c.nullable(s) {
				return false
			}
		}
		return true
	case grammar.Alt:
		for _, s := range e.Subs {
			if c.nullable(s) {
				return true
			}
		}
		return false
	case grammar.Repeat:
		return e.Min == 0 || c.nullable(e.Subs[0])
	case grammar.Automaton:
		return e.Auto.Final[0]
	}
	return false
}
