package constrain

import (
	"encoding/json"
	"math/rand/v2"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"testing"
	"time"
	"unicode/utf8"

	"inferno/grammar"
)

// byteVocab has a token per byte and an end-of-generation token.
func byteVocab(t testing.TB) *Vocab {
	t.Helper()
	var toks [][]byte
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	toks = append(toks, []byte("</s>"))
	v, err := NewVocab(toks, []int32{256})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestStringLengthWalks drives the matcher of strings with a pattern or a
// format and length bounds through random walks over the bytes it allows:
// each string it completes decodes to one that the pattern (Go's regexp)
// or the format's validator accepts, with a length in code points within
// the bounds.
func TestStringLengthWalks(t *testing.T) {
	v := byteVocab(t)
	uuid := regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	formats := map[string]func(string) bool{
		"email": func(s string) bool { a, err := mail.ParseAddress(s); return err == nil && a.Address == s },
		"uuid":  uuid.MatchString,
		"ipv6":  func(s string) bool { a, err := netip.ParseAddr(s); return err == nil && a.Is6() },
		"uri": func(s string) bool {
			u, err := url.Parse(s)
			return err == nil && u.Scheme != "" && u.Host != ""
		},
	}
	for _, tc := range []struct {
		pattern, format string
		lo, hi          int
	}{
		{`^[a-z]+@[a-z]+\.[a-z]{2,}$`, "", 0, 12},
		{`^(ab|c)*$`, "", 3, 7},
		{`^.*$`, "", 2, 4},
		{`^[a\n"\\é]+x?$`, "", 2, 3},
		{`^[^x]*x[^x]*$`, "", 3, 6},
		{`^\d{3}-\d+$`, "", 6, 9},
		{`[a-z]*`, "", 0, 10000},
		{"", "email", 0, 40},
		{"", "email", 10, 12},
		{"", "uuid", 0, 36},
		{"", "ipv6", 3, 10},
		{`^[^@\s]+@[^@\s]+\.[^@\s]+$`, "", 8, 254},
		{"", "uri", 1, 2083},
		{"", "uri", 1, 20000},
		{"", "uri", 10, 40},
	} {
		schema := map[string]any{"type": "string", "minLength": tc.lo, "maxLength": tc.hi}
		check := formats[tc.format]
		if tc.pattern != "" {
			schema["pattern"] = tc.pattern
			check = regexp.MustCompile(tc.pattern).MatchString
		} else {
			schema["format"] = tc.format
		}
		js, _ := json.Marshal(schema)
		g, err := grammar.FromJSONSchema(js, grammar.SchemaOptions{MaxWhitespace: -1})
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		c, err := Compile(g, v)
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		rng := rand.New(rand.NewPCG(uint64(len(js)), 2))
		mask := make([]uint64, MaskWords(v.Size()))
		for walk := range 40 {
			m := c.NewMatcher()
			var out []byte
			for steps := 0; !m.Done(); steps++ {
				if steps > 3*tc.hi+64 && tc.hi > 100 {
					break // a long free run: the bounds are checked on shorter walks
				}
				m.FillMask(mask)
				ids := allowedIDs(mask, v.Size())
				if len(ids) == 0 {
					t.Fatalf("%s: walk %d: no token allowed after %q", js, walk, out)
				}
				id := ids[rng.IntN(len(ids))]
				if m.CanEnd() && rng.IntN(3) == 0 {
					id = 256
				}
				if err := m.Accept(id); err != nil {
					t.Fatalf("%s: %v", js, err)
				}
				if id < 256 {
					out = append(out, byte(id))
				}
			}
			if !m.Done() {
				continue
			}
			var s string
			if err := json.Unmarshal(out, &s); err != nil {
				t.Fatalf("%s: %s: %v", js, out, err)
			}
			if n := utf8.RuneCountInString(s); n < tc.lo || n > tc.hi {
				t.Fatalf("%s: %s has %d characters", js, out, n)
			}
			if !check(s) {
				t.Fatalf("%s: %s does not match", js, out)
			}
		}
	}
}

// TestStringLengthEdges feeds strings at and beyond the bounds, written
// with escapes, to the matcher: each escape is one character.
func TestStringLengthEdges(t *testing.T) {
	v := byteVocab(t)
	for _, tc := range []struct {
		schema string
		ok     []string
		bad    []string
	}{
		{`{"type":"string","pattern":"^[a-z\n\"\\\\\u00e9]+$","minLength":2,"maxLength":4}`,
			[]string{`"ab"`, `"\n\n"`, `"\"\\"`, `"a\n\"\\"`, `"éééé"`, `"ab\\é"`},
			[]string{`"a"`, `"\n"`, `"abcde"`, `"\n\n\n\n\n"`, `"\\\\\\\\\\"`}},
		{`{"type":"string","maxLength":3}`,
			[]string{`"\u00e9\n\""`, `"\u0041\u0042\u0043"`, `""`},
			[]string{`"\u00e9\n\"a"`, `"\u0041\u0042\u0043\u0044"`}},
		{`{"type":"string","format":"email","minLength":5,"maxLength":6}`,
			[]string{`"ab@c.d"`, `"a@b.c"`, `"abc@de"`},
			[]string{`"a@b.cd."`, `"a@bc"`, `"abc@def"`}},
	} {
		g, err := grammar.FromJSONSchema([]byte(tc.schema), grammar.SchemaOptions{MaxWhitespace: -1})
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		c, err := Compile(g, v)
		if err != nil {
			t.Fatal(err)
		}
		accepts := func(s string) bool {
			m := c.NewMatcher()
			for i := range len(s) {
				if m.Accept(int32(s[i])) != nil {
					return false
				}
			}
			return m.CanEnd()
		}
		for _, s := range tc.ok {
			if !accepts(s) {
				t.Errorf("%s: refuses %s", tc.schema, s)
			}
		}
		for _, s := range tc.bad {
			if accepts(s) {
				t.Errorf("%s: accepts %s", tc.schema, s)
			}
		}
	}
}

// FuzzStringLength compiles strings with a pattern and length bounds
// through the grammar and the matcher: compiling never panics or runs
// long, and a walk of the matcher ends in a string within the bounds.
func FuzzStringLength(f *testing.F) {
	f.Add(`^[a-z]+@[a-z]+$`, 3, 10, "")
	f.Add(`(ab|c)*`, 0, 100, "")
	f.Add(`a{2,5}b?`, 4, -1, "")
	f.Add(`.*x.*`, 1, 5, "")
	f.Add(`[^\x00-\x1f]{0,9000}`, 10, 8000, "")
	f.Add(`(a|b{0,64}){0,64}`, 5, 1000, "")
	f.Add(`^[a-z.]+@.*$`, 0, 30, "email")
	f.Add(`^\d.*$`, 10, 20, "date-time")
	v := byteVocab(f)
	f.Fuzz(func(t *testing.T, pattern string, lo, hi int, format string) {
		lo, hi = lo%20000, hi%20000
		if lo < 0 {
			lo = -lo
		}
		schema := map[string]any{"type": "string", "pattern": pattern, "minLength": lo}
		if hi >= 0 {
			schema["maxLength"] = hi
		}
		if format != "" {
			schema["format"] = format
		}
		js, err := json.Marshal(schema)
		if err != nil {
			return
		}
		start := time.Now()
		g, err := grammar.FromJSONSchema(js, grammar.SchemaOptions{MaxWhitespace: -1})
		if err != nil {
			return
		}
		c, err := Compile(g, v)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s: compiling took %v", js, d)
		}
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(uint64(lo), uint64(hi)))
		mask := make([]uint64, MaskWords(v.Size()))
		m := c.NewMatcher()
		var out []byte
		for steps := 0; !m.Done() && steps < 200; steps++ {
			m.FillMask(mask)
			ids := allowedIDs(mask, v.Size())
			if len(ids) == 0 {
				t.Fatalf("%s: no token allowed after %q", js, out)
			}
			id := ids[rng.IntN(len(ids))]
			if m.CanEnd() {
				id = 256
			}
			if err := m.Accept(id); err != nil {
				t.Fatalf("%s: %v", js, err)
			}
			if id < 256 {
				out = append(out, byte(id))
			}
		}
		if !m.Done() {
			return
		}
		var s string
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("%s: %s: %v", js, out, err)
		}
		if n := utf8.RuneCountInString(s); n < lo || hi >= 0 && n > hi {
			t.Fatalf("%s: %s has %d characters", js, out, n)
		}
	})
}
