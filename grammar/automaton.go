package grammar

import (
	"fmt"
	"strconv"
	"strings"
)

// Auto is a finite automaton whose transitions read expressions: it
// matches the strings that lead from state 0 to a final state, each edge
// reading one string its label matches. Labels refer to no rule, contain
// no automaton and never match the empty string, so an Auto is a regular
// language written as a graph rather than a tree: the form a product of
// automata (a pattern intersected with length bounds, say) takes without
// growing exponentially as an expression would.
type Auto struct {
	Final []bool       // per state: whether a match may end there
	Edges [][]AutoEdge // per state: its transitions
}

// AutoEdge is a transition to state To on a string Label matches.
type AutoEdge struct {
	Label *Expr
	To    int
}

// NewAuto returns the expression matching what a matches.
func NewAuto(a *Auto) *Expr { return &Expr{Kind: Automaton, Auto: a} }

// checkAuto checks that a is well formed: states, edges within range,
// labels valid, without references or automata and not nullable, and
// every state final or with a way out.
func (g *Grammar) checkAuto(a *Auto, rule string, depth int) error {
	if a == nil || len(a.Final) == 0 || len(a.Final) != len(a.Edges) {
		return fmt.Errorf("grammar: rule %q has an automaton without states", rule)
	}
	for s, edges := range a.Edges {
		if len(edges) == 0 && !a.Final[s] {
			return fmt.Errorf("grammar: rule %q has an automaton state %d that is not final and has no transition", rule, s)
		}
		for _, ed := range edges {
			if ed.To < 0 || ed.To >= len(a.Final) {
				return fmt.Errorf("grammar: rule %q has an automaton transition to state %d, which does not exist", rule, ed.To)
			}
			if err := g.check(ed.Label, rule, depth+1); err != nil {
				return err
			}
			if !plainExpr(ed.Label) {
				return fmt.Errorf("grammar: rule %q has an automaton transition that refers to a rule or an automaton", rule)
			}
			if g.nullable(ed.Label, nil) {
				return fmt.Errorf("grammar: rule %q has an automaton transition that matches the empty string", rule)
			}
		}
	}
	return nil
}

// plainExpr reports whether e has no reference and no automaton.
func plainExpr(e *Expr) bool {
	if e.Kind == Ref || e.Kind == Automaton {
		return false
	}
	for _, s := range e.Subs {
		if !plainExpr(s) {
			return false
		}
	}
	return true
}

// autoName returns the prefix of the names of a's state rules (the state
// number follows it), choosing one no rule of the grammar starts with.
func (w *gbnfWriter) autoName(a *Auto) string {
	for i, x := range w.autos {
		if x == a {
			return w.names[i]
		}
	}
	if w.used == nil {
		w.used = map[string]bool{}
	}
	base := w.rule + "-auto" + strconv.Itoa(len(w.autos)+1)
	for {
		clash := w.used[base]
		for _, r := range w.g.Rules {
			clash = clash || strings.HasPrefix(r.Name, base)
		}
		if !clash {
			break
		}
		base += "x"
	}
	base += "-"
	w.used[base] = true
	w.autos = append(w.autos, a)
	w.names = append(w.names, base)
	return base
}

// automata prints the rules of the automata met: state s of an automaton
// named P is rule Ps, an alternative per edge (its label, then the rule of
// its target) and "" where s is final.
func (w *gbnfWriter) automata() {
	for i := 0; i < len(w.autos); i++ {
		a, name := w.autos[i], w.names[i]
		for s, edges := range a.Edges {
			fmt.Fprintf(w.b, "%s%d ::= ", name, s)
			for j, ed := range edges {
				if j > 0 {
					w.b.WriteString(" | ")
				}
				w.write(ed.Label, true)
				fmt.Fprintf(w.b, " %s%d", name, ed.To)
			}
			if a.Final[s] {
				if len(edges) > 0 {
					w.b.WriteString(" | ")
				}
				w.b.WriteString(`""`)
			}
			w.b.WriteByte('\n')
		}
	}
}

// autoSize estimates the byte-automaton nodes e's automata build, summed
// over their edges: the bytes of literals; for a class, one, and eight per
// range beyond ASCII (its UTF-8 sequences' inner nodes).
func autoSize(e *Expr) int {
	n := 0
	switch e.Kind {
	case Literal:
		return len(e.Text)
	case Class:
		n = 1
		for _, r := range e.Ranges {
			if r.Hi >= 0x80 {
				n += 8
			}
		}
		return n
	case Automaton:
		for _, edges := range e.Auto.Edges {
			for _, ed := range edges {
				n += autoSize(ed.Label)
			}
		}
		return n + len(e.Auto.Final)
	}
	for _, s := range e.Subs {
		n += autoSize(s)
	}
	return n
}
