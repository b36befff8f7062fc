package constrain

import (
	"errors"
	"testing"

	"inferno/grammar"
)

// fuzzGrammar decodes a small grammar from data: up to three rules whose
// expressions mix every kind, over the toy vocabulary's alphabet.
func fuzzGrammar(data []byte) *grammar.Grammar {
	pos := 0
	next := func() int {
		if pos >= len(data) {
			return 0
		}
		pos++
		return int(data[pos-1])
	}
	nrules := 1 + next()%3
	lits := []string{"a", "b", "ab", "é", "\"", "{}", ","}
	classes := [][]grammar.Range{{{Lo: 'a', Hi: 'b'}}, {{Lo: '"', Hi: '"'}, {Lo: '\\', Hi: '\\'}}, {{Lo: 0xE9, Hi: 0x20AC}}, {{Lo: '0', Hi: '9'}, {Lo: 'x', Hi: 'x'}}}
	var expr func(depth int) *grammar.Expr
	expr = func(depth int) *grammar.Expr {
		op := next() % 8
		if depth > 4 && op >= 3 {
			op = 0
		}
		switch op {
		case 0:
			return grammar.Lit(lits[next()%len(lits)])
		case 1:
			return grammar.Chars(classes[next()%len(classes)]...)
		case 2:
			return grammar.NotChars(classes[next()%len(classes)]...)
		case 3:
			return grammar.RefTo(next() % nrules)
		case 4:
			return grammar.Sequence(expr(depth+1), expr(depth+1))
		case 5:
			return grammar.Choice(expr(depth+1), expr(depth+1))
		case 6:
			lo := next() % 3
			hi := []int{-1, lo, lo + 1, lo + 3, 3000}[next()%5]
			return grammar.Rep(expr(depth+1), lo, hi)
		}
		return grammar.Lit("")
	}
	g := &grammar.Grammar{}
	for i := range nrules {
		g.Rules = append(g.Rules, grammar.Rule{Name: string(rune('A' + i)), Expr: expr(0)})
	}
	return g
}

// FuzzMatcher compiles random grammars and walks them with tokens chosen
// by the input: nothing panics, every token in the mask is accepted and
// every token outside it refused, and EOG is in the mask exactly where
// CanEnd says.
func FuzzMatcher(f *testing.F) {
	f.Add([]byte{0, 4, 0, 0, 6, 1, 4, 0, 3, 5})
	f.Add([]byte{1, 5, 0, 2, 3, 1, 6, 2, 4, 1, 0, 9, 9, 9})
	f.Add([]byte{2, 6, 0, 3, 1, 4, 0, 4, 3, 2, 1, 1, 0, 2, 7, 7, 7})
	f.Add([]byte{0, 4, 0, 4, 6, 0, 4, 2, 1, 0, 5, 5})
	v := toyVocab(f)
	eog := int32(v.Size() - 1)
	f.Fuzz(func(t *testing.T, data []byte) {
		g := fuzzGrammar(data)
		if g.Validate() != nil {
			return
		}
		c, err := Compile(g, v)
		if err != nil {
			return // a grammar that matches nothing
		}
		m := c.NewMatcher()
		mask := make([]uint64, MaskWords(v.Size()))
		for step := range 8 {
			m.FillMask(mask)
			var allowed []int32
			for id := range int32(v.Size()) {
				in := mask[id/64]>>(id%64)&1 == 1
				err := m.Accept(id)
				if in && errors.Is(err, ErrAmbiguous) {
					continue // allowed, but past the bound on open parses
				}
				if in != (err == nil) {
					t.Fatalf("step %d token %q: in mask %v, Accept: %v\n%s", step, v.toks[id], in, err, g)
				}
				if err == nil {
					allowed = append(allowed, id)
					if m.Rollback(1) != nil {
						t.Fatal("Rollback(1) after Accept failed")
					}
				}
			}
			if (mask[eog/64]>>(eog%64)&1 == 1) != m.CanEnd() {
				t.Fatalf("EOG bit disagrees with CanEnd\n%s", g)
			}
			if len(allowed) == 0 {
				return
			}
			pick := 0
			if len(data) > 0 {
				pick = int(data[(step*7)%len(data)])
			}
			if err := m.Accept(allowed[pick%len(allowed)]); err != nil {
				t.Fatal(err)
			}
		}
	})
}
