package constrain

import (
	"errors"
	"testing"
	"time"

	"inferno/grammar"
)

// TestAmbiguousGrammarBounded: the audit's ambiguous grammar, whose parses
// of "aaa..." double every token or so, is refused with ErrAmbiguous
// within a few tokens, its steps bounded, instead of growing each step's
// work without end (52 s for 14 tokens before the bound).
func TestAmbiguousGrammarBounded(t *testing.T) {
	_, v := loadQwen3(t)
	g, err := grammar.ParseGBNF("root ::= x \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"\n")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(g, v)
	if err != nil {
		t.Fatal(err)
	}
	m := c.NewMatcher()
	mask := make([]uint64, MaskWords(v.Size()))
	a := tokenID(t, v, "a")
	start := time.Now()
	for i := range 40 {
		m.FillMask(mask)
		if mask[a/64]&(1<<(a%64)) == 0 {
			t.Fatalf("token %d: \"a\" is not allowed", i)
		}
		before := len(m.cur)
		err := m.Accept(a)
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrAmbiguous) {
			t.Fatalf("token %d: %v, want ErrAmbiguous", i, err)
		}
		if len(m.cur) != before {
			t.Errorf("a refused token changed the matcher: %d stacks, %d before", len(m.cur), before)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("refused after %v", el)
		}
		t.Logf("refused at token %d after %v: %v", i, time.Since(start), err)
		// The matcher is still usable: "b" ends the text.
		if err := m.Accept(tokenID(t, v, "b")); err != nil {
			t.Errorf("\"b\" after the refusal: %v", err)
		}
		return
	}
	t.Fatalf("40 tokens of an exponentially ambiguous grammar accepted in %v", time.Since(start))
}
