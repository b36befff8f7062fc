package grammar

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// lengthCases are strings with a pattern or a format and length bounds.
var lengthCases = []struct {
	schema  string
	pattern string   // the pattern, for Go's regexp (empty for formats)
	valid   []string // decoded strings the grammar accepts
	invalid []string // decoded strings it refuses
}{
	{`{"type":"string","format":"email","maxLength":40}`, "",
		[]string{"a@b", "abcdefghijklmnopqrstuvwxyz@abcdefghij.co", "a.b.c@x.y"},
		[]string{"abcdefghijklmnopqrstuvwxyz@abcdefghij.com", "a@", "@b"}},
	{`{"type":"string","format":"email","minLength":10,"maxLength":12}`, "",
		[]string{"abc@efg.hi", "abcde@fg.hij", "abcdef@gh.ij"},
		[]string{"ab@efg.hi", "abcdefg@gh.ijk"}},
	{`{"type":"string","format":"email","maxLength":100}`, "",
		[]string{"x@y", strings.Repeat("a", 64) + "@" + strings.Repeat("b", 31) + ".cd"},
		[]string{strings.Repeat("a", 64) + "@" + strings.Repeat("b", 33) + ".cd", strings.Repeat("a", 65) + "@b"}},
	{`{"type":"string","format":"uuid","minLength":36,"maxLength":36}`, "",
		[]string{"123e4567-e89b-12d3-a456-426614174000"}, []string{"123e4567-e89b-12d3-a456-42661417400"}},
	{`{"type":"string","format":"uuid","maxLength":35}`, "", nil, nil},
	{`{"type":"string","format":"date-time","maxLength":20}`, "",
		[]string{"2024-02-29T12:00:00Z"}, []string{"2024-02-29T12:00:00+01:00", "2024-02-29T12:00:00.5Z"}},
	{`{"type":"string","format":"hostname","minLength":3,"maxLength":12}`, "",
		[]string{"abc", "a.b", "example.com", "abcdefghijkl"}, []string{"ab", "abcdefghijklm", "a-"}},
	{`{"type":"string","format":"ipv6","minLength":3,"maxLength":10}`, "",
		[]string{"::1", "1:2:3::4", "ffff::ffff"}, []string{"::", "ffff::fffff", "1:2:3:4::56"}},
	{`{"type":"string","format":"uri","maxLength":30}`, "",
		[]string{"http://a", "https://example.com/a?b#c", "h://" + strings.Repeat("a", 26)}, []string{"h://" + strings.Repeat("a", 27)}},
	// Past the product's limits, the bounds split between the host part
	// and the rest.
	{`{"type":"string","format":"uri","minLength":1,"maxLength":2083}`, "",
		[]string{"http://a", "https://example.com/a?b#c", "h://a/" + strings.Repeat("b", 1805)},
		[]string{"h://a/" + strings.Repeat("b", 2077)}},
	{`{"type":"string","format":"uri","maxLength":200}`, "",
		[]string{"http://a", "https://example.com/a?b#c", "h://a/" + strings.Repeat("b", 90)},
		[]string{"h://a/" + strings.Repeat("b", 195)}},
	// Three parts of unbounded length share maxLength, 84 characters each
	// at most, and the first takes what minLength needs beyond the
	// shortest (the last two refused are valid, beyond their shares).
	{`{"type":"string","pattern":"^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$","minLength":8,"maxLength":254}`, `^[^@\s]+@[^@\s]+\.[^@\s]+$`,
		[]string{"abcd@e.f", "\"xy\u0001@\u00e9.\u2603", strings.Repeat("a", 84) + "@" + strings.Repeat("b", 84) + "." + strings.Repeat("c", 84)},
		[]string{"a@b.c", "a b@c.d", "abcde@f.", "abc@d.ef", strings.Repeat("a", 85) + "@b.c"}},
	{`{"type":"string","format":"uri","maxLength":20000}`, "",
		[]string{"http://a", "https://example.com/a?b#c"}, nil},
	// A loop through a final state (found by FuzzStringLength).
	{`{"type":"string","pattern":"(00*100)*","minLength":10,"maxLength":12}`, `^(00*100)*$`,
		[]string{"010001000100", "0010000100", "000001000100"}, []string{"01000100", "0100010001000100", ""}},
	{`{"type":"string","pattern":"^[a-z]+$","minLength":2,"maxLength":5}`, `^[a-z]+$`,
		[]string{"ab", "abcde"}, []string{"a", "abcdef", ""}},
	{`{"type":"string","pattern":"^[a-z]+@[a-z]+\\.[a-z]{2,}$","maxLength":12}`, `^[a-z]+@[a-z]+\.[a-z]{2,}$`,
		[]string{"a@b.cd", "abcd@efg.hij"}, []string{"abcd@efgh.ijk", "a@b.c"}},
	{`{"type":"string","pattern":"^(ab|c)*$","minLength":3,"maxLength":7}`, `^(ab|c)*$`,
		[]string{"abc", "ccc", "abababc", "cabab"}, []string{"ab", "abababab", "cccccccc", "abcb"}},
	{`{"type":"string","pattern":"^\\d{3}-\\d+$","minLength":6,"maxLength":8}`, `^\d{3}-\d+$`,
		[]string{"123-45", "123-4567"}, []string{"123-4", "123-45678"}},
	{`{"type":"string","pattern":"^.*$","maxLength":3}`, `^.*$`,
		[]string{"", "a\"\\", "é\t\u00e9", "\u2603\u2603\u2603"}, []string{"abcd", "a\nb"}},
	{`{"type":"string","pattern":"^[a\\n\"\\\\]+x?$","minLength":2,"maxLength":3}`, `^[a\n"\\]+x?$`,
		[]string{"\n\n", "a\"\\", "\\\\x", "\n\"x"}, []string{"\n", "\n\n\n\n", "ax\n"}},
	{`{"type":"string","pattern":"^\\+?[1-9]\\d{1,14}$","minLength":4,"maxLength":6}`, `^\+?[1-9]\d{1,14}$`,
		[]string{"+123", "1234", "123456", "+12345"}, []string{"+12", "1234567", "+123456"}},
	{`{"type":"string","pattern":"[a-z]*","maxLength":10000}`, `^[a-z]*$`,
		[]string{"", strings.Repeat("a", 10000)}, []string{strings.Repeat("a", 10001)}},
	{`{"type":"string","maxLength":40,"format":"email","pattern":"^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"}`,
		`^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`,
		[]string{"a@b.cd", "first.last@example.com", strings.Repeat("a", 33) + "@b.cd"},
		[]string{"a@b", "a@b.c", "a.@b.cd", strings.Repeat("a", 36) + "@b.cd"}},
	{`{"type":"string","format":"date","pattern":"^2024-.*$"}`, `^2024-.*$`,
		[]string{"2024-02-29", "2024-12-31"}, []string{"2023-02-28", "2024-02-30"}},
	{`{"type":"string","format":"date","pattern":"^2023-02-29$"}`, "", nil, nil},
	{`{"type":"string","pattern":"^[^x]*x[^x]*$","minLength":3}`, `^[^x]*x[^x]*$`,
		[]string{"abx", "x\u00e9\u00e9", "\n\nx"}, []string{"ax", "xx", "abxx"}},
}

// TestStringLengthBounds checks that strings with a pattern or a format
// and length bounds match exactly the strings within the bounds that the
// pattern or format allows: random strings of the grammar validate (the
// validator checks format, pattern and length) and their lengths in code
// points are within the bounds; listed strings at and beyond the bounds
// are accepted and refused, escapes counting as one character.
func TestStringLengthBounds(t *testing.T) {
	for _, tc := range lengthCases {
		g, err := FromJSONSchema([]byte(tc.schema), compact)
		if err != nil {
			if tc.valid == nil {
				continue // no string: a clear error is what is wanted
			}
			t.Fatalf("%s: %v", tc.schema, err)
		}
		if tc.valid == nil {
			t.Fatalf("%s: want an error (no string fits), got a grammar", tc.schema)
		}
		var bounds struct{ MinLength, MaxLength *int }
		if err := json.Unmarshal([]byte(tc.schema), &bounds); err != nil {
			t.Fatal(err)
		}
		var re *regexp.Regexp
		if tc.pattern != "" {
			re = regexp.MustCompile(tc.pattern)
		}
		v := validator(t, tc.schema)
		gen := newGenerator(g, 5)
		gen.limit = 1 << 16
		for range 300 {
			s, ok := gen.sample()
			if !ok {
				t.Fatalf("%s: no sample", tc.schema)
			}
			if err := validates(t, v, s); err != nil {
				t.Fatalf("%s: sample %s: %v", tc.schema, s, err)
			}
			var dec string
			if err := json.Unmarshal([]byte(s), &dec); err != nil {
				t.Fatalf("%s: sample %s: %v", tc.schema, s, err)
			}
			n := utf8.RuneCountInString(dec)
			if bounds.MinLength != nil && n < *bounds.MinLength || bounds.MaxLength != nil && n > *bounds.MaxLength {
				t.Fatalf("%s: sample %s has %d characters", tc.schema, s, n)
			}
			if re != nil && !re.MatchString(dec) {
				t.Fatalf("%s: sample %q does not match %s", tc.schema, dec, tc.pattern)
			}
		}
		for _, s := range tc.valid {
			if js, _ := json.Marshal(s); !matches(g, string(js)) {
				t.Errorf("%s: refuses %s", tc.schema, js)
			}
		}
		for _, s := range tc.invalid {
			if js, _ := json.Marshal(s); matches(g, string(js)) {
				t.Errorf("%s: accepts %s", tc.schema, js)
			}
		}
	}
}

// TestStringLengthPrinted checks that a length-bounded pattern's grammar
// printed as GBNF reads back to the same language.
func TestStringLengthPrinted(t *testing.T) {
	g, err := FromJSONSchema([]byte(`{"type":"object","properties":{"a":{"type":"string","pattern":"^(ab|c)+$","maxLength":5},"b":{"type":"string","format":"email","maxLength":12}},"required":["a","b"]}`), compact)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := ParseGBNF(strings.Replace(g.String(), g.Rules[g.Root].Name+" ::=", "root ::=", 1))
	if err != nil {
		t.Fatalf("printed grammar does not parse: %v\n%s", err, g)
	}
	for _, s := range samples(t, g, 100, 3) {
		if !matches(g2, s) {
			t.Fatalf("printed grammar rejects %q", s)
		}
	}
	for _, s := range []string{`{"a":"ababc","b":"a@b"}`, `{"a":"abababab","b":"a@b"}`, `{"a":"c","b":"abcdef@gh.ijk"}`} {
		if matches(g, s) != matches(g2, s) {
			t.Fatalf("%s: printed grammar disagrees", s)
		}
	}
}

// TestStringLengthCost bounds the time of the largest length-bounded
// automata: at the limits, compiling takes well under a second (the bound
// leaves room for a loaded machine).
func TestStringLengthCost(t *testing.T) {
	for _, schema := range []string{
		`{"type":"string","format":"email","maxLength":100}`,
		`{"type":"string","format":"hostname","maxLength":64}`,
		`{"type":"string","pattern":"^[a-z]+@[a-z]+\\.[a-z]{2,}$","maxLength":10000}`,
		`{"type":"string","pattern":"[^x]*x[^x]*","maxLength":10000}`,
		`{"type":"string","pattern":"(a|b|c|d|e|f|g|h)*(a|b|c|d|e|f|g|h)*","minLength":100000,"maxLength":200000}`,
		`{"type":"string","pattern":"(a{0,100}b){0,100}c","maxLength":9000}`,
		`{"type":"string","pattern":"^(x{4000}|y)[a-z]*-[a-z]*$","maxLength":4010}`,
		`{"type":"string","pattern":"^(([a-f]{3000})|y)z*$","maxLength":3010}`,
	} {
		start := time.Now()
		_, err := FromJSONSchema([]byte(schema), compact)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: %v (%v)", schema, d, err)
		}
	}
}

func FuzzStringLength(f *testing.F) {
	f.Add("^[a-z]+@[a-z]+$", 3, 10)
	f.Add("(ab|c)*", 0, 100)
	f.Add("a{2,5}b?", 4, -1)
	f.Add(".*x.*", 1, 5)
	f.Add("[^\\x00-\\x1f]{0,9000}", 10, 8000)
	f.Add("(a|b{0,64}){0,64}", 5, 1000)
	f.Fuzz(func(t *testing.T, pattern string, lo, hi int) {
		lo, hi = lo%20000, hi%20000
		if lo < 0 {
			lo = -lo
		}
		schema := map[string]any{"type": "string", "pattern": pattern, "minLength": lo}
		if hi >= 0 {
			schema["maxLength"] = hi
		}
		js, err := json.Marshal(schema)
		if err != nil {
			return
		}
		start := time.Now()
		g, err := FromJSONSchema(js, compact)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s: %v", js, d)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "grammar: ") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		gen := newGenerator(g, 1)
		gen.limit = 1 << 15
		s, ok := gen.sample()
		if !ok {
			return
		}
		var dec string
		if err := json.Unmarshal([]byte(s), &dec); err != nil {
			t.Fatalf("%s: sample %s: %v", js, s, err)
		}
		if n := utf8.RuneCountInString(dec); n < lo || hi >= 0 && n > hi {
			t.Fatalf("%s: sample %s has %d characters", js, s, n)
		}
		if !matches(g, s) {
			t.Fatalf("%s: sample %s not matched", js, s)
		}
	})
}

// TestStringLengthExhaustive compares the grammar of random small patterns
// over {a, b} with length bounds against Go's regexp and the bounds on
// every string of up to seven characters: the product is exact there.
func TestStringLengthExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth > 2 || rng.IntN(3) == 0 {
			return []string{"a", "b", "[ab]", "[ab]", "b"}[rng.IntN(5)]
		}
		switch rng.IntN(5) {
		case 0:
			return gen(depth+1) + gen(depth+1)
		case 1:
			return "(?:" + gen(depth+1) + "|" + gen(depth+1) + ")"
		case 2:
			return "(?:" + gen(depth+1) + ")" + []string{"*", "+", "?"}[rng.IntN(3)]
		case 3:
			m := rng.IntN(3)
			return fmt.Sprintf("(?:%s){%d,%d}", gen(depth+1), m, m+rng.IntN(3))
		}
		return gen(depth+1) + gen(depth+1) + gen(depth+1)
	}
	var all []string
	for n := 0; n <= 7; n++ {
		for bits := range 1 << n {
			var b strings.Builder
			for i := range n {
				b.WriteByte("ab"[bits>>i&1])
			}
			all = append(all, b.String())
		}
	}
	counted := 0
	for range 500 {
		p := gen(0)
		lo := rng.IntN(5)
		hi := lo + rng.IntN(4)
		js, _ := json.Marshal(map[string]any{"type": "string", "pattern": p, "minLength": lo, "maxLength": hi})
		g, err := FromJSONSchema(js, compact)
		re := regexp.MustCompile("^(?:" + p + ")$")
		for _, s := range all {
			want := re.MatchString(s) && len(s) >= lo && len(s) <= hi
			if err != nil {
				if want {
					t.Fatalf("%s: %v, but %q fits", js, err, s)
				}
				continue
			}
			if want {
				counted++
			}
			if got := matches(g, `"`+s+`"`); got != want {
				t.Fatalf("%s: %q: grammar %v, want %v", js, s, got, want)
			}
		}
	}
	if counted < 1000 {
		t.Fatalf("only %d strings in the languages: the patterns are too narrow", counted)
	}
	t.Logf("%d strings in the languages", counted)
}

// TestStringBothExhaustive checks the intersection of two random small
// patterns with length bounds (as a pattern with a format compiles) on
// every string of up to seven characters.
func TestStringBothExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth > 2 || rng.IntN(3) == 0 {
			return []string{"a", "b", "[ab]", "[ab]"}[rng.IntN(4)]
		}
		switch rng.IntN(4) {
		case 0:
			return gen(depth+1) + gen(depth+1)
		case 1:
			return "(?:" + gen(depth+1) + "|" + gen(depth+1) + ")"
		case 2:
			return "(?:" + gen(depth+1) + ")" + []string{"*", "+", "?"}[rng.IntN(3)]
		}
		m := rng.IntN(3)
		return fmt.Sprintf("(?:%s){%d,%d}", gen(depth+1), m, m+rng.IntN(3))
	}
	counted := 0
	for range 300 {
		p1, p2 := gen(0), gen(0)
		lo, hi := rng.IntN(3), -1
		if rng.IntN(3) > 0 {
			hi = lo + rng.IntN(5)
		}
		b := NewBuilder()
		e1, err1 := b.Regex(p1)
		e2, err2 := b.Regex(p2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		e, err := bothExpr(e1, e2, lo, hi)
		if err != nil {
			t.Fatalf("%s & %s: %v", p1, p2, err)
		}
		var g *Grammar
		if e != nil {
			if err := b.Define("root", e); err != nil {
				t.Fatal(err)
			}
			if g, err = b.Grammar("root"); err != nil {
				t.Fatal(err)
			}
		}
		r1, r2 := regexp.MustCompile("^(?:"+p1+")$"), regexp.MustCompile("^(?:"+p2+")$")
		for n := 0; n <= 7; n++ {
			for bits := range 1 << n {
				var sb strings.Builder
				for i := range n {
					sb.WriteByte("ab"[bits>>i&1])
				}
				s := sb.String()
				want := r1.MatchString(s) && r2.MatchString(s) && n >= lo && (hi < 0 || n <= hi)
				if want {
					counted++
				}
				if got := g != nil && matches(g, s); got != want {
					t.Fatalf("%s & %s, lengths %d..%d: %q: grammar %v, want %v", p1, p2, lo, hi, s, got, want)
				}
			}
		}
	}
	if counted < 500 {
		t.Fatalf("only %d strings in the intersections: the patterns are too narrow", counted)
	}
	t.Logf("%d strings in the intersections", counted)
}
