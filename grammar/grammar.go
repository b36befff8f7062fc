// Package grammar defines the context-free grammars that constrain
// generation: a set of named rules over Unicode text, each an expression of
// literals, character classes, references, sequences, alternatives and
// bounded repetitions, as llama.cpp's GBNF writes them, and finite automata
// whose edges read such expressions (the form an intersection of regular
// languages takes; String prints each state as a rule).
//
// The front ends (GBNF, the regular-expression subset, JSON Schema) compile
// to a Grammar; package constrain compiles a Grammar against a model's
// vocabulary into a token-level matcher. A Grammar is plain data: it can be
// built by hand, printed as GBNF with String, and checked with Validate.
package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the kind of an Expr.
type Kind uint8

const (
	// Empty matches the empty string.
	Empty Kind = iota
	// Literal matches the UTF-8 bytes of Expr.Text exactly.
	Literal
	// Class matches one code point in Expr.Ranges (or, when Expr.Negated,
	// one valid code point in none of them).
	Class
	// Ref matches rule Expr.Rule of the grammar.
	Ref
	// Seq matches Expr.Subs one after the other.
	Seq
	// Alt matches any one of Expr.Subs.
	Alt
	// Repeat matches Expr.Subs[0] at least Expr.Min and at most Expr.Max
	// times; Max < 0 means no upper bound.
	Repeat
	// Automaton matches the strings that lead Expr.Auto from its first
	// state to a final one.
	Automaton
)

// Range is an inclusive range of code points.
type Range struct{ Lo, Hi rune }

// Expr is one node of a rule's expression tree.
type Expr struct {
	Kind     Kind
	Text     string  // Literal
	Ranges   []Range // Class: sorted, non-overlapping after Validate's checks
	Negated  bool    // Class
	Rule     int     // Ref: index into Grammar.Rules
	Subs     []*Expr // Seq, Alt, Repeat (one)
	Min, Max int     // Repeat
	Auto     *Auto   // Automaton
}

// Rule is a named expression.
type Rule struct {
	Name string
	Expr *Expr
}

// Grammar is a set of rules; Rules[Root] is where a match starts.
type Grammar struct {
	Rules []Rule
	Root  int
}

// Constructors.

// Lit matches s.
func Lit(s string) *Expr {
	if s == "" {
		return &Expr{Kind: Empty}
	}
	return &Expr{Kind: Literal, Text: s}
}

// Chars matches one code point in ranges (lo, hi pairs).
func Chars(ranges ...Range) *Expr { return &Expr{Kind: Class, Ranges: ranges} }

// NotChars matches one code point outside ranges.
func NotChars(ranges ...Range) *Expr { return &Expr{Kind: Class, Ranges: ranges, Negated: true} }

// RefTo matches rule i.
func RefTo(i int) *Expr { return &Expr{Kind: Ref, Rule: i} }

// Sequence matches subs in order.
func Sequence(subs ...*Expr) *Expr {
	if len(subs) == 0 {
		return &Expr{Kind: Empty}
	}
	if len(subs) == 1 {
		return subs[0]
	}
	return &Expr{Kind: Seq, Subs: subs}
}

// Choice matches one of subs.
func Choice(subs ...*Expr) *Expr {
	if len(subs) == 1 {
		return subs[0]
	}
	return &Expr{Kind: Alt, Subs: subs}
}

// Rep matches e between min and max times (max < 0: unbounded).
func Rep(e *Expr, min, max int) *Expr {
	return &Expr{Kind: Repeat, Subs: []*Expr{e}, Min: min, Max: max}
}

// Opt matches e or nothing.
func Opt(e *Expr) *Expr { return Rep(e, 0, 1) }

// Star matches e any number of times.
func Star(e *Expr) *Expr { return Rep(e, 0, -1) }

// Plus matches e one or more times.
func Plus(e *Expr) *Expr { return Rep(e, 1, -1) }

// Builder assembles a Grammar whose rules refer to each other by name,
// before or after they are defined.
type Builder struct {
	g     Grammar
	index map[string]int
	defd  []bool
	err   error // the first error of a method that cannot return one
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{index: map[string]int{}} }

// Ref returns a reference to the rule called name, declaring it if needed.
func (b *Builder) Ref(name string) *Expr { return RefTo(b.id(name)) }

func (b *Builder) id(name string) int {
	if i, ok := b.index[name]; ok {
		return i
	}
	i := len(b.g.Rules)
	b.index[name] = i
	b.g.Rules = append(b.g.Rules, Rule{Name: name})
	b.defd = append(b.defd, false)
	return i
}

// Has reports whether a rule called name has been defined.
func (b *Builder) Has(name string) bool {
	i, ok := b.index[name]
	return ok && b.defd[i]
}

// Define sets the expression of the rule called name; defining a rule twice
// is an error.
func (b *Builder) Define(name string, e *Expr) error {
	i := b.id(name)
	if b.defd[i] {
		return fmt.Errorf("grammar: rule %q defined twice", name)
	}
	b.g.Rules[i].Expr = e
	b.defd[i] = true
	return nil
}

// Grammar returns the grammar rooted at the rule called root, validated.
func (b *Builder) Grammar(root string) (*Grammar, error) {
	if b.err != nil {
		return nil, b.err
	}
	i, ok := b.index[root]
	if !ok || !b.defd[i] {
		return nil, fmt.Errorf("grammar: no rule %q", root)
	}
	for j, r := range b.g.Rules {
		if !b.defd[j] {
			return nil, fmt.Errorf("grammar: rule %q is used but not defined", r.Name)
		}
	}
	g := &Grammar{Rules: append([]Rule(nil), b.g.Rules...), Root: i}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// Validate checks that every reference names a rule, every class is well
// formed, every repetition is bounded sensibly, and that no rule is left
// recursive (a rule that can reach itself without consuming input), which a
// top-down matcher cannot run.
func (g *Grammar) Validate() error {
	if len(g.Rules) == 0 {
		return fmt.Errorf("grammar: no rules")
	}
	if g.Root < 0 || g.Root >= len(g.Rules) {
		return fmt.Errorf("grammar: root %d out of range", g.Root)
	}
	for _, r := range g.Rules {
		if r.Expr == nil {
			return fmt.Errorf("grammar: rule %q has no expression", r.Name)
		}
		if err := g.check(r.Expr, r.Name, 0); err != nil {
			return err
		}
	}
	nullable := g.Nullable()
	// Left recursion: rule i reaches rule j at the start of its expression
	// (after only nullable parts).
	first := make([][]int, len(g.Rules))
	for i, r := range g.Rules {
		first[i] = g.leftRefs(r.Expr, nullable, nil)
	}
	state := make([]uint8, len(g.Rules)) // 0 new, 1 on stack, 2 done
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		state[i] = 1
		path = append(path, g.Rules[i].Name)
		for _, j := range first[i] {
			switch state[j] {
			case 1:
				return fmt.Errorf("grammar: rule %q is left recursive (%s -> %s)", g.Rules[j].Name, strings.Join(path, " -> "), g.Rules[j].Name)
			case 0:
				if err := visit(j, path); err != nil {
					return err
				}
			}
		}
		state[i] = 2
		return nil
	}
	for i := range g.Rules {
		if state[i] == 0 {
			if err := visit(i, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

const maxDepth = 10000

func (g *Grammar) check(e *Expr, rule string, depth int) error {
	if e == nil {
		return fmt.Errorf("grammar: rule %q has a nil expression", rule)
	}
	if depth > maxDepth {
		return fmt.Errorf("grammar: rule %q is nested too deeply", rule)
	}
	switch e.Kind {
	case Empty:
	case Literal:
		if !utf8.ValidString(e.Text) {
			return fmt.Errorf("grammar: rule %q has a literal that is not UTF-8", rule)
		}
	case Class:
		for i, r := range e.Ranges {
			if r.Lo > r.Hi || r.Lo < 0 || r.Hi > utf8.MaxRune {
				return fmt.Errorf("grammar: rule %q has a bad character range %q-%q", rule, r.Lo, r.Hi)
			}
			_ = i
		}
		if len(e.Ranges) == 0 && !e.Negated {
			return fmt.Errorf("grammar: rule %q has an empty character class", rule)
		}
	case Ref:
		if e.Rule < 0 || e.Rule >= len(g.Rules) {
			return fmt.Errorf("grammar: rule %q refers to rule %d, which does not exist", rule, e.Rule)
		}
	case Seq, Alt:
		if len(e.Subs) == 0 {
			return fmt.Errorf("grammar: rule %q has an empty sequence or alternative", rule)
		}
		for _, s := range e.Subs {
			if err := g.check(s, rule, depth+1); err != nil {
				return err
			}
		}
	case Repeat:
		if len(e.Subs) != 1 {
			return fmt.Errorf("grammar: rule %q has a repetition of %d expressions", rule, len(e.Subs))
		}
		if e.Min < 0 || (e.Max >= 0 && e.Max < e.Min) {
			return fmt.Errorf("grammar: rule %q has a bad repetition {%d,%d}", rule, e.Min, e.Max)
		}
		return g.check(e.Subs[0], rule, depth+1)
	case Automaton:
		return g.checkAuto(e.Auto, rule, depth+1)
	default:
		return fmt.Errorf("grammar: rule %q has an expression of unknown kind %d", rule, e.Kind)
	}
	return nil
}

// Nullable reports, for each rule, whether it matches the empty string.
func (g *Grammar) Nullable() []bool {
	n := make([]bool, len(g.Rules))
	// A rule is checked again only when a rule it refers to turns out
	// nullable, so long chains of rules cost linear time.
	users := make([][]int, len(g.Rules))
	var refs func(e *Expr, i int)
	refs = func(e *Expr, i int) {
		if e == nil {
			return
		}
		if e.Kind == Ref && e.Rule >= 0 && e.Rule < len(users) {
			users[e.Rule] = append(users[e.Rule], i)
		}
		for _, s := range e.Subs {
			refs(s, i)
		}
	}
	work := make([]int, len(g.Rules))
	for i, r := range g.Rules {
		refs(r.Expr, i)
		work[i] = len(g.Rules) - 1 - i
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		if n[i] || g.Rules[i].Expr == nil || !g.nullable(g.Rules[i].Expr, n) {
			continue
		}
		n[i] = true
		work = append(work, users[i]...)
	}
	return n
}

func (g *Grammar) nullable(e *Expr, n []bool) bool {
	switch e.Kind {
	case Empty:
		return true
	case Literal, Class:
		return false
	case Ref:
		return e.Rule >= 0 && e.Rule < len(n) && n[e.Rule]
	case Seq:
		for _, s := range e.Subs {
			if !g.nullable(s, n) {
				return false
			}
		}
		return true
	case Alt:
		for _, s := range e.Subs {
			if g.nullable(s, n) {
				return true
			}
		}
		return false
	case Repeat:
		return e.Min == 0 || g.nullable(e.Subs[0], n)
	case Automaton:
		return e.Auto != nil && len(e.Auto.Final) > 0 && e.Auto.Final[0]
	}
	return false
}

// leftRefs appends the rules e can start with, before consuming input.
func (g *Grammar) leftRefs(e *Expr, n []bool, out []int) []int {
	switch e.Kind {
	case Ref:
		return append(out, e.Rule)
	case Seq:
		for _, s := range e.Subs {
			out = g.leftRefs(s, n, out)
			if !g.nullable(s, n) {
				break
			}
		}
	case Alt:
		for _, s := range e.Subs {
			out = g.leftRefs(s, n, out)
		}
	case Repeat:
		out = g.leftRefs(e.Subs[0], n, out)
	}
	return out
}

// String prints the grammar in GBNF, root rule first.
func (g *Grammar) String() string {
	var b strings.Builder
	order := make([]int, 0, len(g.Rules))
	if g.Root >= 0 && g.Root < len(g.Rules) {
		order = append(order, g.Root)
	}
	for i := range g.Rules {
		if i != g.Root {
			order = append(order, i)
		}
	}
	w := &gbnfWriter{g: g, b: &b}
	for _, i := range order {
		r := g.Rules[i]
		w.rule = r.Name
		b.WriteString(r.Name)
		b.WriteString(" ::= ")
		w.write(r.Expr, false)
		b.WriteByte('\n')
	}
	w.automata()
	return b.String()
}

// gbnfWriter prints a grammar; automata become rules of their own, one
// per state, printed after the grammar's rules.
type gbnfWriter struct {
	g     *Grammar
	b     *strings.Builder
	rule  string   // the rule being printed
	autos []*Auto  // automata met so far, in order
	names []string // their rules' name prefixes
	used  map[string]bool
}

func (w *gbnfWriter) write(e *Expr, nested bool) {
	g, b := w.g, w.b
	if e == nil {
		b.WriteString("<nil>")
		return
	}
	switch e.Kind {
	case Empty:
		b.WriteString(`""`)
	case Literal:
		b.WriteString(quote(e.Text))
	case Class:
		if e.Negated && len(e.Ranges) == 0 {
			b.WriteByte('.')
			break
		}
		b.WriteByte('[')
		if e.Negated {
			b.WriteByte('^')
		}
		for _, r := range e.Ranges {
			b.WriteString(classRune(r.Lo))
			if r.Hi != r.Lo {
				b.WriteByte('-')
				b.WriteString(classRune(r.Hi))
			}
		}
		b.WriteByte(']')
	case Ref:
		if e.Rule >= 0 && e.Rule < len(g.Rules) {
			b.WriteString(g.Rules[e.Rule].Name)
		} else {
			fmt.Fprintf(b, "<rule %d>", e.Rule)
		}
	case Seq, Alt:
		if nested {
			b.WriteByte('(')
		}
		sep := " "
		if e.Kind == Alt {
			sep = " | "
		}
		for i, s := range e.Subs {
			if i > 0 {
				b.WriteString(sep)
			}
			w.write(s, true)
		}
		if nested {
			b.WriteByte(')')
		}
	case Repeat:
		w.write(e.Subs[0], true)
		switch {
		case e.Min == 0 && e.Max == 1:
			b.WriteByte('?')
		case e.Min == 0 && e.Max < 0:
			b.WriteByte('*')
		case e.Min == 1 && e.Max < 0:
			b.WriteByte('+')
		case e.Max < 0:
			fmt.Fprintf(b, "{%d,}", e.Min)
		case e.Min == e.Max:
			fmt.Fprintf(b, "{%d}", e.Min)
		default:
			fmt.Fprintf(b, "{%d,%d}", e.Min, e.Max)
		}
	case Automaton:
		b.WriteString(w.autoName(e.Auto) + "0")
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func classRune(r rune) string {
	switch {
	case r == ']' || r == '\\' || r == '-' || r == '^':
		return `\` + string(r)
	case r == '\n':
		return `\n`
	case r == '\r':
		return `\r`
	case r == '\t':
		return `\t`
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02X`, r)
	case r > 0xFFFF:
		return `\U` + fmt.Sprintf("%08X", r)
	case !strconv.IsPrint(r):
		return `\u` + fmt.Sprintf("%04X", r)
	}
	return string(r)
}
