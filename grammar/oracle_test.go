package grammar

// The test oracle: a recognizer and a random generator for a Grammar over
// code points. They are deliberately simple (memoised backtracking over
// sets of end positions, a random walk) and exist only to check the front
// ends; the product's matcher is package constrain.

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

type recognizer struct {
	g        *Grammar
	in       []rune
	memo     map[[2]int][]int
	busy     map[[2]int]bool
	nullable []bool
	repMemo  map[repKey][]int
}

type repKey struct {
	e   *Expr
	pos int
}

// matches reports whether g's root rule matches s exactly.
func matches(g *Grammar, s string) bool {
	r := &recognizer{g: g, in: []rune(s), memo: map[[2]int][]int{}, busy: map[[2]int]bool{},
		nullable: g.Nullable(), repMemo: map[repKey][]int{}}
	return slices.Contains(r.rule(g.Root, 0), len(r.in))
}

func (r *recognizer) rule(i, pos int) []int {
	key := [2]int{i, pos}
	if v, ok := r.memo[key]; ok {
		return v
	}
	if r.busy[key] {
		panic("oracle: left recursion in a validated grammar")
	}
	r.busy[key] = true
	ends := r.expr(r.g.Rules[i].Expr, pos)
	r.memo[key] = ends
	return ends
}

// union merges two sorted sets.
func union(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

func (r *recognizer) expr(e *Expr, pos int) []int {
	switch e.Kind {
	case Empty:
		return []int{pos}
	case Literal:
		rs := []rune(e.Text)
		if pos+len(rs) <= len(r.in) && slices.Equal(r.in[pos:pos+len(rs)], rs) {
			return []int{pos + len(rs)}
		}
		return nil
	case Class:
		if pos < len(r.in) && inRanges(r.in[pos], e.Ranges) != e.Negated {
			return []int{pos + 1}
		}
		return nil
	case Ref:
		return r.rule(e.Rule, pos)
	case Seq:
		cur := []int{pos}
		for _, s := range e.Subs {
			var next []int
			for _, p := range cur {
				next = union(next, r.expr(s, p))
			}
			cur = next
			if len(cur) == 0 {
				return nil
			}
		}
		return cur
	case Alt:
		var out []int
		for _, s := range e.Subs {
			out = union(out, r.expr(s, pos))
		}
		return out
	case Repeat:
		key := repKey{e, pos}
		if v, ok := r.repMemo[key]; ok {
			return v
		}
		v := r.repeat(e, pos)
		r.repMemo[key] = v
		return v
	case Automaton:
		// Breadth first over (state, position) pairs.
		type sp struct{ s, p int }
		seen := map[sp]bool{{0, pos}: true}
		queue := []sp{{0, pos}}
		var out []int
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			if e.Auto.Final[x.s] {
				out = union(out, []int{x.p})
			}
			for _, ed := range e.Auto.Edges[x.s] {
				for _, p := range r.expr(ed.Label, x.p) {
					if y := (sp{ed.To, p}); !seen[y] {
						seen[y] = true
						queue = append(queue, y)
					}
				}
			}
		}
		return out
	}
	panic("oracle: unknown kind")
}

func (r *recognizer) repeat(e *Expr, pos int) []int {
	sub := e.Subs[0]
	step := func(cur []int) []int {
		var next []int
		for _, p := range cur {
			next = union(next, r.expr(sub, p))
		}
		return next
	}
	nullable := r.g.nullable(sub, r.nullable)
	cur := []int{pos}
	if !nullable {
		// Each repetition moves on, so the minimum takes at most len(in)
		// rounds; fewer repetitions than it pad out with empty ones where
		// the body is nullable.
		for k := 0; k < e.Min && len(cur) > 0; k++ {
			cur = step(cur)
		}
	}
	if e.Max < 0 {
		// Every position reachable from cur by further repetitions.
		seen := make([]bool, len(r.in)+1)
		work := slices.Clone(cur)
		for _, p := range cur {
			seen[p] = true
		}
		for len(work) > 0 {
			p := work[len(work)-1]
			work = work[:len(work)-1]
			for _, q := range r.expr(sub, p) {
				if !seen[q] {
					seen[q] = true
					work = append(work, q)
				}
			}
		}
		var out []int
		for p, ok := range seen {
			if ok {
				out = append(out, p)
			}
		}
		return out
	}
	k := e.Min
	if nullable {
		k = 0
	}
	out := slices.Clone(cur)
	for ; k < e.Max && len(cur) > 0; k++ {
		next := step(cur)
		grown := union(out, next)
		if len(grown) == len(out) && nullable {
			break // nothing new: a fixed point
		}
		out, cur = grown, next
	}
	return out
}

// generator produces random strings of a grammar's language.
type generator struct {
	g       *Grammar
	rng     *rand.Rand
	minLen  []int
	budget  int // derivation depth past which it takes the shortest ways
	maxReps int // extra repetitions beyond the minimum
	limit   int // the longest string it writes, in bytes; longer walks fail
	steps   int // walk steps of the current sample, bounded by 100 per byte of limit
	toEnd   map[*Auto][]int
}

// autoDist returns, per state of a, the fewest characters to a final
// state (inf where none).
func (gen *generator) autoDist(a *Auto) []int {
	if d, ok := gen.toEnd[a]; ok {
		return d
	}
	d := make([]int, len(a.Final))
	for s := range d {
		d[s] = inf
		if a.Final[s] {
			d[s] = 0
		}
	}
	for changed := true; changed; {
		changed = false
		for s, edges := range a.Edges {
			for _, ed := range edges {
				if c := min(inf, d[ed.To]+gen.cost(ed.Label)); c < d[s] {
					d[s], changed = c, true
				}
			}
		}
	}
	if gen.toEnd == nil {
		gen.toEnd = map[*Auto][]int{}
	}
	gen.toEnd[a] = d
	return d
}

const inf = 1 << 30

func newGenerator(g *Grammar, seed uint64) *generator {
	gen := &generator{g: g, rng: rand.New(rand.NewPCG(seed, 1)), budget: 12, maxReps: 3, limit: 1 << 20}
	gen.minLen = make([]int, len(g.Rules))
	for i := range gen.minLen {
		gen.minLen[i] = inf
	}
	for changed := true; changed; {
		changed = false
		for i, r := range g.Rules {
			if c := gen.cost(r.Expr); c < gen.minLen[i] {
				gen.minLen[i] = c
				changed = true
			}
		}
	}
	return gen
}

func (gen *generator) cost(e *Expr) int {
	switch e.Kind {
	case Empty:
		return 0
	case Literal:
		return utf8.RuneCountInString(e.Text)
	case Class:
		return 1
	case Ref:
		return gen.minLen[e.Rule]
	case Seq:
		t := 0
		for _, s := range e.Subs {
			t = min(inf, t+gen.cost(s))
		}
		return t
	case Alt:
		m := inf
		for _, s := range e.Subs {
			m = min(m, gen.cost(s))
		}
		return m
	case Repeat:
		return min(inf, e.Min*gen.cost(e.Subs[0]))
	case Automaton:
		return gen.autoDist(e.Auto)[0]
	}
	return inf
}

// sample returns a random string of the language (false if the walk finds
// none, which a grammar whose root cannot derive a string would cause, or
// the string would pass the limit).
func (gen *generator) sample() (string, bool) {
	if gen.minLen[gen.g.Root] > gen.limit {
		return "", false
	}
	var b strings.Builder
	gen.steps = 0
	gen.walk(&b, gen.g.Rules[gen.g.Root].Expr, 0)
	if b.Len() > gen.limit || gen.steps > 100*gen.limit {
		return "", false
	}
	return b.String(), true
}

func (gen *generator) walk(b *strings.Builder, e *Expr, depth int) {
	gen.steps++
	if b.Len() > gen.limit || gen.steps > 100*gen.limit {
		return
	}
	deep := depth > gen.budget
	switch e.Kind {
	case Empty:
	case Literal:
		b.WriteString(e.Text)
	case Class:
		b.WriteRune(gen.pick(e))
	case Ref:
		gen.walk(b, gen.g.Rules[e.Rule].Expr, depth+1)
	case Seq:
		for _, s := range e.Subs {
			gen.walk(b, s, depth)
		}
	case Alt:
		var ok []*Expr
		for _, s := range e.Subs {
			if gen.cost(s) < inf {
				ok = append(ok, s)
			}
		}
		if deep {
			slices.SortStableFunc(ok, func(a, b *Expr) int { return gen.cost(a) - gen.cost(b) })
			ok = ok[:1]
		}
		gen.walk(b, ok[gen.rng.IntN(len(ok))], depth+1)
	case Repeat:
		n := e.Min
		if !deep {
			hi := e.Min + gen.maxReps
			if e.Max >= 0 {
				hi = min(hi, e.Max)
			}
			n = e.Min + gen.rng.IntN(hi-e.Min+1)
		}
		for range n {
			gen.walk(b, e.Subs[0], depth+1)
		}
	case Automaton:
		// A random walk that stops at a final state with probability 1/4,
		// and past the budget heads for the nearest end.
		a, dist := e.Auto, gen.autoDist(e.Auto)
		for s, steps := 0, 0; ; steps++ {
			if a.Final[s] && (len(a.Edges[s]) == 0 || gen.rng.IntN(4) == 0 || steps > 64*gen.budget) {
				return
			}
			var ok []AutoEdge
			for _, ed := range a.Edges[s] {
				if dist[ed.To] < inf && (steps <= 64*gen.budget || dist[ed.To] < dist[s]) {
					ok = append(ok, ed)
				}
			}
			ed := ok[gen.rng.IntN(len(ok))]
			gen.walk(b, ed.Label, depth+1)
			s = ed.To
		}
	}
}

// pick returns a random code point of a class, favouring ASCII.
func (gen *generator) pick(e *Expr) rune {
	rs := positive(e)
	if ascii := subtract(rs, []Range{{0x80, utf8.MaxRune}}); len(ascii) > 0 && gen.rng.IntN(4) > 0 {
		rs = ascii
	}
	r := rs[gen.rng.IntN(len(rs))]
	for {
		c := r.Lo + rune(gen.rng.Int64N(int64(r.Hi-r.Lo)+1))
		if c < 0xD800 || c > 0xDFFF {
			return c
		}
	}
}

// samples returns n random strings of g's language.
func samples(t testing.TB, g *Grammar, n int, seed uint64) []string {
	t.Helper()
	gen := newGenerator(g, seed)
	var out []string
	for range n {
		s, ok := gen.sample()
		if !ok {
			t.Fatalf("grammar derives no string:\n%s", g)
		}
		out = append(out, s)
	}
	return out
}

func TestOracle(t *testing.T) {
	b := NewBuilder()
	b.Define("root", Sequence(Lit("a"), Rep(b.Ref("x"), 2, 3), Choice(Lit("b"), Lit(""))))
	b.Define("x", Choice(Lit("x"), Sequence(Lit("("), b.Ref("x"), Lit(")"))))
	g, err := b.Grammar("root")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"axx", "axxxb", "a(x)x", "a((x))(x)xb"} {
		if !matches(g, s) {
			t.Errorf("oracle rejects %q", s)
		}
	}
	for _, s := range []string{"", "ax", "axxxx", "a(x", "axxbb", "a(x)"} {
		if matches(g, s) {
			t.Errorf("oracle accepts %q", s)
		}
	}
	for _, s := range samples(t, g, 50, 1) {
		if !matches(g, s) {
			t.Errorf("generated %q is not in the language", s)
		}
	}
}
