package constrain

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"inferno/grammar"
)

// toyVocab returns a vocabulary of every string of one or two symbols
// over a small alphabet (ASCII, pieces of multi-byte code points, a byte
// that is never UTF-8), some longer tokens, two tokens without text and an
// end-of-generation token; the last id is the end of generation.
func toyVocab(t testing.TB) *Vocab {
	t.Helper()
	alpha := []string{"a", "b", "\"", "{", "}", ",", ":", " ", "1", "0", "\\", "é", "€", "\xc3", "\xa9", "\xe2", "\x82\xac", "\xff", "x", "\n"}
	var toks [][]byte
	for _, a := range alpha {
		toks = append(toks, []byte(a))
	}
	for _, a := range alpha {
		for _, b := range alpha {
			toks = append(toks, []byte(a+b))
		}
	}
	for _, s := range []string{"\"},", "\"}", "ab\"", "{\"a\":", "abab", "aaaa", "ab,", "ba}", "{\"", "\":\"", "1,", "10", "\"a\"", "é€a", "ab\"}", "true", "null", "aaa", "abab,", "ababab", "aa\"", "aaa\","} {
		toks = append(toks, []byte(s))
	}
	// Runs longer than closedDepth.
	for _, n := range []int{25, 31, 40} {
		toks = append(toks, bytes.Repeat([]byte("ab"), n)[:n])
	}
	toks = append(toks, nil, []byte{}, []byte("</s>"))
	v, err := NewVocab(toks, []int32{int32(len(toks) - 1)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustGrammar(t testing.TB, b *grammar.Builder) *grammar.Grammar {
	t.Helper()
	g, err := b.Grammar("root")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// toyGrammars are small grammars that exercise the matcher's corners.
func toyGrammars(t testing.TB) map[string]*grammar.Grammar {
	L, C, R := grammar.Lit, grammar.Chars, grammar.Range{}
	_ = R
	rg := func(lo, hi rune) grammar.Range { return grammar.Range{Lo: lo, Hi: hi} }
	gs := map[string]*grammar.Grammar{}

	b := grammar.NewBuilder()
	// A JSON-like language: recursion, strings with escapes, numbers.
	b.Define("root", b.Ref("value"))
	b.Define("value", grammar.Choice(b.Ref("object"), b.Ref("string"), b.Ref("number"), L("true"), L("null")))
	b.Define("object", grammar.Sequence(L("{"), b.Ref("ws"), grammar.Opt(grammar.Sequence(b.Ref("member"), grammar.Star(grammar.Sequence(L(","), b.Ref("ws"), b.Ref("member"))))), L("}")))
	b.Define("member", grammar.Sequence(b.Ref("string"), L(":"), b.Ref("ws"), b.Ref("value"), b.Ref("ws")))
	b.Define("string", grammar.Sequence(L("\""), grammar.Star(grammar.Choice(grammar.NotChars(rg('"', '"'), rg('\\', '\\'), rg(0, 0x1f)), grammar.Sequence(L("\\"), C(rg('"', '"'), rg('\\', '\\'), rg('n', 'n'))))), L("\"")))
	b.Define("number", grammar.Sequence(grammar.Opt(L("-")), grammar.Choice(L("0"), grammar.Sequence(C(rg('1', '9')), grammar.Rep(C(rg('0', '9')), 0, 3)))))
	b.Define("ws", grammar.Rep(C(rg(' ', ' '), rg('\n', '\n')), 0, 2))
	gs["json"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// Long bounded repetitions: a counter, not copies.
	b.Define("root", grammar.Sequence(grammar.Rep(L("ab"), 3, 5000), grammar.Opt(L(","))))
	gs["counted"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// A repetition whose body is big enough to be counted even for {2,3}.
	var many []grammar.Range
	many = append(many, rg('a', 'a'), rg('x', 'x'))
	for r := rune(0x100); r < 0x100+2*400; r += 2 {
		many = append(many, rg(r, r))
	}
	many = append(many, rg(0x20AC, 0x20AC))
	b.Define("root", grammar.Sequence(L("{"), grammar.Rep(C(many...), 2, 3), L("}"), grammar.Rep(b.Ref("item"), 0, 4000)))
	b.Define("item", grammar.Choice(L("ab"), L("a")))
	gs["bigbody"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// Code points: a range of multi-byte characters and a negated class.
	b.Define("root", grammar.Sequence(grammar.Plus(C(rg('é', '€'))), grammar.Star(grammar.NotChars(rg('a', 'b'), rg('é', 'é'))), L("}")))
	gs["utf8"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// Nullable rules and ambiguity.
	b.Define("root", grammar.Sequence(b.Ref("A"), b.Ref("B"), b.Ref("A"), L("x")))
	b.Define("A", grammar.Star(grammar.Choice(L("a"), b.Ref("E"))))
	b.Define("B", grammar.Choice(grammar.Opt(L("b")), grammar.Sequence(L("a"), b.Ref("B"))))
	b.Define("E", grammar.Lit(""))
	gs["nullable"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// Right recursion that ends the grammar, tokens running past the end.
	b.Define("root", grammar.Choice(L("a"), grammar.Sequence(L("a"), L(","), b.Ref("root")), grammar.Sequence(L("{"), b.Ref("root"), L("}"))))
	gs["recursive"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	b.Define("root", grammar.Sequence(L("\""), grammar.Rep(grammar.NotChars(rg('"', '"'), rg('\\', '\\')), 0, 5), L("\"")))
	gs["maxlength"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// Text runs with a bound, followed by text or not.
	b.Define("root", grammar.Sequence(L("{"), grammar.Rep(grammar.NotChars(rg('"', '"'), rg('\\', '\\'), rg(0, 0x1f)), 1, 7), grammar.Choice(L("\""), grammar.Sequence(L("}"), grammar.Rep(C(rg('a', 'b'), rg(' ', ' ')), 0, 9), grammar.Rep(C(rg('a', 'z')), 0, 3), L(",")))))
	gs["textruns"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// Runs of text of lengths that differ by the first code point ("b"
	// leaves one more, any other three), and a run that ends where the
	// rule may end (its caller's text would follow).
	textc := func() *grammar.Expr { return grammar.NotChars(rg('"', '"'), rg('\\', '\\'), rg(0, 0x1f)) }
	b.Define("runs", grammar.Choice(
		grammar.Sequence(L("b"), grammar.Rep(textc(), 1, 1)),
		grammar.Sequence(grammar.NotChars(rg('"', '"'), rg('\\', '\\'), rg(0, 0x1f), rg('b', 'b')), grammar.Rep(textc(), 3, 3))))
	b.Define("root", grammar.Sequence(L("{"), b.Ref("runs"), L("\""), grammar.Opt(grammar.Sequence(L("["), grammar.Rep(textc(), 0, 2), b.Ref("tail"))), L("]")))
	b.Define("tail", grammar.Rep(C(rg('a', 'b')), 0, 2))
	gs["unevenruns"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// A nullable body in a counted repetition.
	var wide []grammar.Range
	for r := rune(0x100); r < 0x100+2*400; r += 2 {
		wide = append(wide, rg(r, r))
	}
	b.Define("root", grammar.Sequence(grammar.Rep(grammar.Choice(grammar.Opt(C(append(wide, rg('a', 'a'))...)), L("b")), 3, 6), L("}")))
	gs["nullbody"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// Counters in counters, under a recursive rule: items{0,30000} of
	// strings{1,2000}, nested lists.
	b.Define("root", b.Ref("list"))
	b.Define("list", grammar.Sequence(L("{"), grammar.Rep(b.Ref("item"), 0, 30000), L("}")))
	b.Define("item", grammar.Choice(grammar.Sequence(L("\""), grammar.Rep(grammar.NotChars(rg('"', '"'), rg('\\', '\\')), 1, 2000), L("\""), grammar.Opt(L(","))), b.Ref("list")))
	gs["nested"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// One large expression used in several places: compiled once, called.
	var words []*grammar.Expr
	for i := range 70 {
		words = append(words, L(fmt.Sprintf("%c%c%c%06d", 'a'+i%2, 'a'+i/2%2, "ab\"x"[i/4%4], i)))
	}
	item := grammar.Sequence(grammar.Choice(words...), grammar.Opt(L("x")))
	b.Define("root", grammar.Sequence(L("{"), item, grammar.Star(grammar.Sequence(L(","), item)), L("}")))
	gs["shared"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// States that read every text code point into the string's loop
	// without being it (a minimum length, a key that starts one way or
	// another), and free text whose rule ends anywhere, its caller going
	// on with text.
	text := grammar.NotChars(rg('"', '"'), rg('\\', '\\'), rg(0, 0x1f))
	b.Define("root", grammar.Sequence(L("{"), b.Ref("key"), L(":"), b.Ref("free"), grammar.Rep(C(rg('a', 'b')), 0, 3), L("}")))
	b.Define("key", grammar.Sequence(L("\""), grammar.Choice(grammar.Sequence(L("ab"), grammar.Star(text)), grammar.Rep(text, 3, -1)), L("\"")))
	b.Define("free", grammar.Rep(text, 1, -1))
	gs["textclosed"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// A class repeated in place past closedDepth: runs of tokens within
	// and beyond the bound.
	b.Define("root", grammar.Sequence(L("{"), grammar.Rep(C(rg('a', 'b')), 1, 30), grammar.Opt(L(",")), L("}")))
	gs["classrun"] = mustGrammar(t, b)

	b = grammar.NewBuilder()
	// Multi-byte bodies under a bound that tokens longer than the body
	// run into (a counter with small limits).
	b.Define("root", grammar.Sequence(grammar.Rep(L("ab"), 0, 30), L("}")))
	gs["abrun"] = mustGrammar(t, b)
	return gs
}

// checkMask compares m's mask at prefix with the reference's.
func checkMask(t *testing.T, name string, g *grammar.Grammar, v *Vocab, m *Matcher, prefix []byte) {
	t.Helper()
	mask := make([]uint64, MaskWords(v.Size()))
	m.FillMask(mask)
	for id := range v.Size() {
		got := mask[id/64]>>(id%64)&1 == 1
		var want bool
		if m.isEOG(int32(id)) {
			want = refComplete(g, prefix)
		} else if len(v.toks[id]) > 0 {
			want = refViable(g, append(append([]byte(nil), prefix...), v.toks[id]...))
		}
		if got != want {
			t.Fatalf("%s: after %q, token %d (%q): mask %v, reference %v", name, prefix, id, v.toks[id], got, want)
		}
	}
	for i := v.Size(); i < len(mask)*64; i++ {
		if mask[i/64]>>(i%64)&1 == 1 {
			t.Fatalf("%s: mask bit %d past the vocabulary", name, i)
		}
	}
	if m.CanEnd() != refComplete(g, prefix) {
		t.Fatalf("%s: after %q CanEnd %v", name, prefix, m.CanEnd())
	}
}

// TestMaskAgainstReference walks each toy grammar randomly and checks the
// whole mask against the brute-force reference at every step, and that
// Accept agrees with the mask.
func TestMaskAgainstReference(t *testing.T) {
	t.Parallel()
	testMaskAgainstReference(t)
}

// TestMaskSmallLimits repeats TestMaskAgainstReference with every rule
// called rather than copied and every repetition past two copies counted,
// so that counters and calls are everywhere.
func TestMaskSmallLimits(t *testing.T) {
	defer func(a, b, c int) { inlineLimit, repeatLimit, sharedLimit = a, b, c }(inlineLimit, repeatLimit, sharedLimit)
	inlineLimit, repeatLimit, sharedLimit = 0, 2, 0
	testMaskAgainstReference(t)
}

func testMaskAgainstReference(t *testing.T) {
	v := toyVocab(t)
	for name, g := range toyGrammars(t) {
		c, err := Compile(g, v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(name))))
		for walk := range 30 {
			m := c.NewMatcher()
			var prefix []byte
			mask := make([]uint64, MaskWords(v.Size()))
			for step := 0; step < 12 && !m.Done(); step++ {
				checkMask(t, name, g, v, m, prefix)
				m.FillMask(mask)
				allowed := allowedIDs(mask, v.Size())
				// Accept refuses a token outside the mask and leaves m alone.
				bad := int32(rng.IntN(v.Size()))
				if mask[bad/64]>>(bad%64)&1 == 0 {
					if m.Accept(bad) == nil {
						t.Fatalf("%s: after %q Accept(%q) outside the mask succeeded", name, prefix, v.toks[bad])
					}
				}
				if len(allowed) == 0 {
					break // the toy vocabulary cannot continue (checkMask agreed)
				}
				id := allowed[rng.IntN(len(allowed))]
				if err := m.Accept(id); err != nil {
					t.Fatalf("%s: walk %d: Accept(%q) in the mask: %v", name, walk, v.toks[id], err)
				}
				if !m.Done() {
					prefix = append(prefix, v.toks[id]...)
				}
			}
			if !m.Done() {
				checkMask(t, name, g, v, m, prefix)
			}
		}
	}
}

// TestRollback checks that rolling back restores the masks.
func TestRollback(t *testing.T) {
	v := toyVocab(t)
	g := toyGrammars(t)["json"]
	c, err := Compile(g, v)
	if err != nil {
		t.Fatal(err)
	}
	m := c.NewMatcher()
	words := MaskWords(v.Size())
	var masks [][]uint64
	rng := rand.New(rand.NewPCG(3, 4))
	var ids []int32
	for step := 0; step < 20 && !m.Done(); step++ {
		mask := make([]uint64, words)
		m.FillMask(mask)
		masks = append(masks, mask)
		allowed := allowedIDs(mask, v.Size())
		id := allowed[rng.IntN(len(allowed))]
		if err := m.Accept(id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for len(ids) > 0 {
		k := 1 + rng.IntN(min(3, len(ids)))
		if err := m.Rollback(k); err != nil {
			t.Fatal(err)
		}
		ids = ids[:len(ids)-k]
		mask := make([]uint64, words)
		m.FillMask(mask)
		if fmt.Sprint(mask) != fmt.Sprint(masks[len(ids)]) {
			t.Fatalf("after rolling back to %d tokens the mask differs", len(ids))
		}
		if m.Done() {
			t.Fatal("Done after rollback")
		}
	}
	if err := m.Rollback(1); err == nil {
		t.Fatal("Rollback past the start succeeded")
	}
}

// TestEnd checks end of generation: only where the grammar ends, nothing
// after, and only EOG once the root is complete.
func TestEnd(t *testing.T) {
	v := toyVocab(t)
	c, err := Compile(toyGrammars(t)["recursive"], v)
	if err != nil {
		t.Fatal(err)
	}
	eog := int32(v.Size() - 1)
	m := c.NewMatcher()
	if m.Accept(eog) == nil {
		t.Fatal("EOG accepted at the start")
	}
	id := tokenID(t, v, "{")
	must(t, m.Accept(id))
	must(t, m.Accept(tokenID(t, v, "a")))
	must(t, m.Accept(tokenID(t, v, "}")))
	mask := make([]uint64, MaskWords(v.Size()))
	m.FillMask(mask)
	for i := range v.Size() {
		if (mask[i/64]>>(i%64)&1 == 1) != (int32(i) == eog) {
			t.Fatalf("after {a}: token %q allowed %v", v.toks[i], mask[i/64]>>(i%64)&1 == 1)
		}
	}
	must(t, m.Accept(eog))
	if !m.Done() {
		t.Fatal("not Done after EOG")
	}
	if m.Accept(tokenID(t, v, "a")) == nil {
		t.Fatal("token accepted after EOG")
	}
	m.FillMask(mask)
	for _, x := range mask {
		if x != 0 {
			t.Fatal("mask not empty after EOG")
		}
	}
	for _, id := range []int32{int32(v.Size() - 2), int32(v.Size() - 3), -1, int32(v.Size())} {
		m.Reset()
		if m.Accept(id) == nil {
			t.Fatalf("token %d accepted", id)
		}
	}
}

func tokenID(t testing.TB, v *Vocab, s string) int32 {
	t.Helper()
	for i, b := range v.toks {
		if string(b) == s {
			return int32(i)
		}
	}
	t.Fatalf("no token %q", s)
	return -1
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCache(t *testing.T) {
	v := toyVocab(t)
	gs := toyGrammars(t)
	c := NewCache(v, 2)
	builds := 0
	get := func(key string) *Compiled {
		cm, err := c.Get(key, func() (*grammar.Grammar, error) {
			builds++
			if key == "bad" {
				return nil, fmt.Errorf("bad grammar")
			}
			return gs[key], nil
		})
		if key == "bad" {
			if err == nil {
				t.Fatal("no error for a failing build")
			}
			return nil
		}
		must(t, err)
		return cm
	}
	a := get("json")
	if get("json") != a || builds != 1 {
		t.Fatalf("second Get rebuilt (%d builds)", builds)
	}
	get("utf8")
	get("recursive") // evicts json
	if c.Len() != 2 {
		t.Fatalf("Len %d", c.Len())
	}
	if get("json") == a || builds != 4 {
		t.Fatalf("evicted entry not rebuilt (%d builds)", builds)
	}
	get("bad")
	get("bad")
	if builds != 6 || c.Len() != 2 {
		t.Fatalf("failure cached (%d builds, Len %d)", builds, c.Len())
	}
}

// TestConcurrentMatchers runs matchers of one Compiled on several
// goroutines (the per-state sets filled concurrently) and compares their
// masks with those of a Compiled used by one goroutine.
func TestConcurrentMatchers(t *testing.T) {
	v := toyVocab(t)
	for _, name := range []string{"json", "nested", "counted"} {
		g := toyGrammars(t)[name]
		shared, err := Compile(g, v)
		must(t, err)
		alone, err := Compile(g, v)
		must(t, err)
		// The walks, chosen on the lone Compiled.
		var walks [][]int32
		rng := rand.New(rand.NewPCG(5, 6))
		mask := make([]uint64, MaskWords(v.Size()))
		for range 8 {
			m := alone.NewMatcher()
			var ids []int32
			for range 10 {
				m.FillMask(mask)
				allowed := allowedIDs(mask, v.Size())
				if len(allowed) == 0 {
					break
				}
				id := allowed[rng.IntN(len(allowed))]
				must(t, m.Accept(id))
				ids = append(ids, id)
				if m.Done() {
					break
				}
			}
			walks = append(walks, ids)
		}
		errs := make(chan error, len(walks))
		for _, ids := range walks {
			go func() {
				m := shared.NewMatcher()
				ref := alone.NewMatcher()
				got := make([]uint64, MaskWords(v.Size()))
				want := make([]uint64, MaskWords(v.Size()))
				for _, id := range ids {
					m.FillMask(got)
					ref.FillMask(want)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						errs <- fmt.Errorf("%s: masks differ", name)
						return
					}
					if err := m.Accept(id); err != nil {
						errs <- err
						return
					}
					if err := ref.Accept(id); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range walks {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestFillMaskAllocs checks that a warm FillMask and Accept do not allocate.
func TestFillMaskAllocs(t *testing.T) {
	v := toyVocab(t)
	for _, name := range []string{"json", "nested", "recursive"} {
		c, err := Compile(toyGrammars(t)[name], v)
		must(t, err)
		m := c.NewMatcher()
		mask := make([]uint64, MaskWords(v.Size()))
		rng := rand.New(rand.NewPCG(8, 9))
		var ids []int32
		for range 12 {
			m.FillMask(mask)
			allowed := allowedIDs(mask, v.Size()-1)
			if len(allowed) == 0 {
				break
			}
			id := allowed[rng.IntN(len(allowed))]
			must(t, m.Accept(id))
			ids = append(ids, id)
		}
		run := func() {
			m.Reset()
			for _, id := range ids {
				m.FillMask(mask)
				if err := m.Accept(id); err != nil {
					t.Fatal(err)
				}
			}
		}
		run()
		if n := testing.AllocsPerRun(20, run); n > 0 {
			t.Errorf("%s: %.1f allocations a walk of %d tokens", name, n, len(ids))
		}
	}
}

// allowedIDs returns the ids below n that mask allows, in order.
func allowedIDs(mask []uint64, n int) []int32 {
	var ids []int32
	for id := range int32(n) {
		if mask[id/64]>>(id%64)&1 == 1 {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestContextMasksShared checks that a mask keyed by the frame below the
// top is computed once for a state and frame however deep in the stack
// they sit: nesting further into a recursive rule adds no masks once the
// nesting repeats.
func TestContextMasksShared(t *testing.T) {
	defer func(a, b, c int) { inlineLimit, repeatLimit, sharedLimit = a, b, c }(inlineLimit, repeatLimit, sharedLimit)
	inlineLimit, repeatLimit, sharedLimit = 0, 2, 0
	v := toyVocab(t)
	c, err := Compile(toyGrammars(t)["recursive"], v)
	if err != nil {
		t.Fatal(err)
	}
	m := c.NewMatcher()
	mask := make([]uint64, MaskWords(v.Size()))
	var sizes []int
	for range 12 {
		m.FillMask(mask)
		sizes = append(sizes, len(c.ctx))
		must(t, m.Accept(tokenID(t, v, "{")))
	}
	if sizes[4] == 0 || sizes[11] != sizes[4] {
		t.Errorf("context masks after each of 12 nested braces: %v (want them to stop growing)", sizes)
	}
}
