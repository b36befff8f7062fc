package constrain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inferno/grammar"
)

// ambiguousGrammars are the audit's grammar and variants of it that need
// more text before the parses explode.
var ambiguousGrammars = []string{
	"root ::= x \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"\n",
	"root ::= x \"a\"{40} \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"\n",
	"root ::= \"{\" x \"}\"\nx ::= [a-z] x | [a-z] x x | \"\"\n",
	"root ::= \"z\" | \"q\" y\ny ::= x \"b\"\nx ::= \"ab\" x | \"ab\" x x | \"\"\n",
}

func compileGBNF(t testing.TB, src string, v *Vocab) *Compiled {
	t.Helper()
	g, err := grammar.ParseGBNF(src)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(g, v)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkRefusal drives a Matcher of c over text one byte token at a time:
// every byte but the last is accepted and the last refused with
// ErrAmbiguous, as the probe said.
func checkRefusal(t *testing.T, c *Compiled, text []byte) {
	t.Helper()
	m := c.NewMatcher()
	for i, b := range text {
		err := m.Accept(int32(b))
		if i < len(text)-1 && err != nil {
			t.Fatalf("byte %d of the probe's text %q: %v", i, text, err)
		}
		if i == len(text)-1 && !errors.Is(err, ErrAmbiguous) {
			t.Fatalf("the last byte of the probe's text %q: %v, want ErrAmbiguous", text, err)
		}
	}
}

// TestProbeRefusesAmbiguous: the probe finds, within its budgets, a text
// of each ambiguous grammar on which a Matcher refuses a token with
// ErrAmbiguous, and names it and the rule that exploded.
func TestProbeRefusesAmbiguous(t *testing.T) {
	v := byteVocab(t)
	for _, src := range ambiguousGrammars {
		c := compileGBNF(t, src, v)
		start := time.Now()
		err := c.Probe()
		took := time.Since(start)
		if !errors.Is(err, ErrAmbiguous) {
			t.Fatalf("%q: Probe: %v, want ErrAmbiguous", src, err)
		}
		if !strings.Contains(err.Error(), `rule "x"`) {
			t.Errorf("%q: %v: the rule is not named", src, err)
		}
		t.Logf("%v: %v", took, err)
		text, err2 := c.probe(time.Now().Add(time.Hour), probeWork)
		if err2 == nil || err2.Error() != err.Error() {
			t.Fatalf("%q: probe again: %v, want %v", src, err2, err)
		}
		checkRefusal(t, c, text)
		if c.Probe() != err {
			t.Errorf("%q: the verdict is not kept", src)
		}
	}
}

// TestProbeAcceptsOrdinary: the schemas of the corpus, JSON mode, and
// plain GBNF grammars (a recursive one among them) pass the probe.
func TestProbeAcceptsOrdinary(t *testing.T) {
	v := byteVocab(t)
	var gs []*grammar.Grammar
	var names []string
	files, _ := filepath.Glob("../grammar/testdata/schemas/*.json")
	more, _ := filepath.Glob("testdata/schemas/*.json")
	for _, f := range append(files, more...) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ws := range []int{0, 1, 20} {
			g, err := grammar.FromJSONSchema(src, grammar.SchemaOptions{MaxWhitespace: ws, AllowAdditionalDefault: ws > 0})
			if err != nil {
				continue // a schema the front end refuses
			}
			gs, names = append(gs, g), append(names, filepath.Base(f))
		}
	}
	gs, names = append(gs, grammar.JSONObject(grammar.SchemaOptions{MaxWhitespace: 20})), append(names, "json_object")
	for _, src := range []string{
		"root ::= [a-z]+ (\" \" [a-z]+)*\n",
		"root ::= expr\nexpr ::= term ((\"+\" | \"-\") term)*\nterm ::= [0-9]+ | \"(\" expr \")\"\n",
		"root ::= item*\nitem ::= \"a\" | \"aa\" | \"aaa\"\n",
		"root ::= (\"yes\" | \"no\") \"\\n\"\n",
	} {
		g, err := grammar.ParseGBNF(src)
		if err != nil {
			t.Fatal(err)
		}
		gs, names = append(gs, g), append(names, src)
	}
	if len(gs) < 10 {
		t.Fatalf("only %d grammars", len(gs))
	}
	var worst time.Duration
	for i, g := range gs {
		c, err := Compile(g, v)
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
		start := time.Now()
		if _, err := c.probe(time.Now().Add(time.Hour), probeWork); err != nil {
			t.Errorf("%s: %v", names[i], err)
		}
		worst = max(worst, time.Since(start))
	}
	t.Logf("%d grammars, the slowest probe %v", len(gs), worst)
}

// TestProbeMisses: an explosion further from the start than the probe's
// walks go is not found; the Matcher's bound refuses it at generation.
func TestProbeMisses(t *testing.T) {
	v := byteVocab(t)
	c := compileGBNF(t, "root ::= \"c\"{300} x \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"\n", v)
	if err := c.Probe(); err != nil {
		t.Fatalf("Probe: %v; the walks should end before the explosion", err)
	}
	m := c.NewMatcher()
	for i := range 400 {
		b := byte('c')
		if i >= 300 {
			b = 'a'
		}
		if err := m.Accept(int32(b)); err != nil {
			if !errors.Is(err, ErrAmbiguous) || i < 300 {
				t.Fatalf("byte %d: %v", i, err)
			}
			return
		}
	}
	t.Fatal("the Matcher took 100 a's")
}

// TestProbeBudget: a spent work or time budget gives no verdict.
func TestProbeBudget(t *testing.T) {
	c := compileGBNF(t, ambiguousGrammars[1], byteVocab(t))
	if _, err := c.probe(time.Now().Add(time.Hour), 50); err != nil {
		t.Errorf("a work budget of 50 expansions: %v", err)
	}
	if _, err := c.probe(time.Now().Add(-time.Second), probeWork); err != nil {
		t.Errorf("a spent time budget: %v", err)
	}
}

// FuzzProbe probes random small grammars: it ends within its budgets
// (with room for a loaded machine), and every text it reports is one on
// which a Matcher refuses its last byte with ErrAmbiguous.
func FuzzProbe(f *testing.F) {
	f.Add([]byte{0, 4, 0, 0, 6, 1, 4, 0, 3, 5})
	f.Add([]byte{1, 5, 0, 2, 3, 1, 6, 2, 4, 1, 0, 9, 9, 9})
	f.Add([]byte{2, 6, 0, 3, 1, 4, 0, 4, 3, 2, 1, 1, 0, 2, 7, 7, 7})
	f.Add([]byte{0, 4, 0, 4, 6, 0, 4, 2, 1, 0, 5, 5})
	f.Add([]byte{1, 4, 3, 1, 5, 4, 0, 0, 3, 0, 4, 0, 4, 3, 0, 3, 0, 7})
	f.Add([]byte{0, 6, 1, 4, 4, 0, 0, 3, 0, 3, 0})
	v := byteVocab(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		g := fuzzGrammar(data)
		if g.Validate() != nil {
			return
		}
		c, err := Compile(g, v)
		if err != nil {
			return
		}
		start := time.Now()
		text, err := c.probe(time.Now().Add(probeTime), probeWork)
		if took := time.Since(start); took > probeTime+time.Second {
			t.Fatalf("the probe took %v\n%s", took, g)
		}
		if err == nil {
			return
		}
		if !errors.Is(err, ErrAmbiguous) {
			t.Fatalf("Probe: %v\n%s", err, g)
		}
		checkRefusal(t, c, text)
	})
}

// BenchmarkProbe measures the probe (a fresh Compiled's walks, not the
// kept verdict) of each schema's grammar and of the ambiguous grammars,
// to set against BenchmarkCompile.
func BenchmarkProbe(b *testing.B) {
	_, v := loadQwen3(b)
	type bcase struct {
		name string
		c    *Compiled
	}
	var cases []bcase
	for _, bc := range benchSet(b) {
		c, err := Compile(bc.g, v)
		if err != nil {
			b.Fatal(err)
		}
		cases = append(cases, bcase{strings.ReplaceAll(bc.name, "/", "_"), c})
	}
	for i, src := range ambiguousGrammars {
		cases = append(cases, bcase{fmt.Sprintf("ambiguous%d", i), compileGBNF(b, src, v)})
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				bc.c.probe(time.Now().Add(probeTime), probeWork)
			}
		})
	}
}
