package grammar

import (
	"regexp"
	"strings"
	"testing"
)

var regexCases = []struct {
	pattern string
	yes, no []string
}{
	{`abc`, []string{"abc"}, []string{"ab", "abcd", "xabc"}},
	{`^abc$`, []string{"abc"}, []string{"abcc"}},
	{`a|bc|`, []string{"a", "bc", ""}, []string{"b"}},
	{`^a$|^b$`, []string{"a", "b"}, []string{"ab"}},
	{`[a-c]+x?`, []string{"a", "cbax"}, []string{"", "x", "ad"}},
	{`[^a-c]`, []string{"d", "é", "\n"}, []string{"a", "b"}},
	{`\d{2,4}`, []string{"12", "1234"}, []string{"1", "12345", "ab"}},
	{`\w+\s\W`, []string{"a_1 !", "Z\t-"}, []string{"a b", "é !", "a\v!"}},
	{`\D\S`, []string{"ab", "-x"}, []string{"1a", "a "}},
	{`.+`, []string{"a", "日本", "\t"}, []string{"", "a\nb", "\r", "\u2028"}},
	{`(?:ab)*c`, []string{"c", "ababc"}, []string{"abc ", "aabc"}},
	{`(a|b)(?<n>c)(?P<m>d)`, []string{"acd", "bcd"}, []string{"cd"}},
	{`x{3}y{2,}z{0,1}`, []string{"xxxyy", "xxxyyyz"}, []string{"xxyy", "xxxy"}},
	{`a+?b*?c??`, []string{"a", "aabbc"}, []string{"b"}},
	{`\.\*\+\?\(\)\[\]\{\}\|\\\/\^\$`, []string{`.*+?()[]{}|\/^$`}, []string{""}},
	{`[\d.-]+`, []string{"1.5", "-2"}, []string{"a"}},
	{`[-a]`, []string{"-", "a"}, []string{"b"}},
	{`[a-]`, []string{"-", "a"}, []string{"b"}},
	{`[\]\\]`, []string{"]", `\`}, []string{"a"}},
	{`\x41\u00e9\u{1F600}\t\n`, []string{"Aé😀\t\n"}, []string{"A"}},
	{`a{,3}`, []string{"a{,3}"}, []string{"aaa"}},
	{`a{`, []string{"a{"}, []string{"a"}},
	{`}]`, []string{"}]"}, []string{"}"}},
	{`[^\s]+`, []string{"ab"}, []string{"a b", "a\vb", "a\u00a0b"}},
	{`()*a`, []string{"a"}, []string{""}},
	{`(?:[0-9]{1,3}\.){3}[0-9]{1,3}`, []string{"192.168.0.1"}, []string{"1.2.3"}},
}

func TestRegex(t *testing.T) {
	for _, tc := range regexCases {
		g, err := Regex(tc.pattern)
		if err != nil {
			t.Errorf("%s: %v", tc.pattern, err)
			continue
		}
		for _, s := range tc.yes {
			if !matches(g, s) {
				t.Errorf("%s rejects %q", tc.pattern, s)
			}
		}
		for _, s := range tc.no {
			if matches(g, s) {
				t.Errorf("%s accepts %q", tc.pattern, s)
			}
		}
	}
}

// TestRegexAgainstGo compares the grammar with Go's regexp package on
// every short string over a small alphabet (where the two dialects agree)
// and checks that generated strings match.
func TestRegexAgainstGo(t *testing.T) {
	alphabet := []string{"a", "b", "1", "_", " ", "-", ".", "\n"}
	var all []string
	var grow func(s string, n int)
	grow = func(s string, n int) {
		all = append(all, s)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(s+c, n-1)
		}
	}
	grow("", 4)
	for _, tc := range regexCases {
		re, err := regexp.Compile(`^(?:` + strings.TrimSuffix(strings.TrimPrefix(tc.pattern, "^"), "$") + `)$`)
		if err != nil {
			continue // not Go syntax (\u escapes and the like)
		}
		if strings.Contains(tc.pattern, "|^") {
			continue
		}
		g, err := Regex(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			if matches(g, s) != re.MatchString(s) {
				t.Errorf("%s on %q: grammar %v, Go %v", tc.pattern, s, matches(g, s), re.MatchString(s))
			}
		}
		for _, s := range samples(t, g, 100, 5) {
			if !re.MatchString(s) {
				t.Errorf("%s generated %q, which Go does not match", tc.pattern, s)
			}
		}
	}
}

func TestRegexErrors(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{`a(?=b)`, "lookahead"},
		{`a(?!b)`, "lookahead"},
		{`(?<=a)b`, "lookbehind"},
		{`(?<!a)b`, "lookbehind"},
		{`(a)\1`, "backreference"},
		{`(?<x>a)\k<x>`, "backreference"},
		{`\bword\b`, "word boundaries"},
		{`\p{L}`, "Unicode property"},
		{`(?i)abc`, "inline flags"},
		{`a*+`, "quantifier may not follow"},
		{`a{2}{3}`, "quantifier may not follow"},
		{`*a`, "nothing to repeat"},
		{`{2}`, "nothing to repeat"},
		{`a^b`, "anchor ^"},
		{`a$b`, "anchor $"},
		{`(^a)`, "anchor ^"},
		{`(a`, "unclosed group"},
		{`a)`, "unmatched ')'"},
		{`[a`, "unterminated character class"},
		{`[]a]`, "may not start with ']'"},
		{`[z-a]`, "backwards"},
		{`[\d-z]`, ""},
		{`[a-\d]`, "cannot end a range"},
		{`[[:alpha:]]`, "POSIX"},
		{`a{5,2}`, "maximum below"},
		{`0{00}`, "leading zero"},
		{`a{1,02}`, "leading zero"},
		{`a{200000}`, "limit"},
		{`\q`, "unknown escape"},
		{`\cA`, "control escapes"},
		{`\01`, "octal"},
		{`\uD800`, "not a character"},
		{`\x4`, "hex digits"},
		{`a\`, "trailing backslash"},
		{`[^\x00-\x{10FFFF}]`, ""},
		{strings.Repeat("(", 250) + strings.Repeat(")", 250), "nested"},
	} {
		_, err := Regex(tc.pattern)
		if err == nil {
			if tc.want != "" {
				t.Errorf("%.40s: no error", tc.pattern)
			}
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40s: error %q does not mention %q", tc.pattern, err, tc.want)
		}
	}
}

func FuzzRegex(f *testing.F) {
	for _, tc := range regexCases {
		f.Add(tc.pattern)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		g, err := Regex(pattern)
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("grammar does not validate: %v", err)
		}
		if strings.Contains(pattern, "|^") || strings.Contains(pattern, "$|") {
			return
		}
		re, err := regexp.Compile(`^(?:` + strings.TrimSuffix(strings.TrimPrefix(pattern, "^"), "$") + `)$`)
		if err != nil {
			return
		}
		gen := newGenerator(g, 2)
		gen.maxReps = 2
		gen.limit = 1 << 8
		for range 5 {
			s, ok := gen.sample()
			if !ok {
				return
			}
			if !re.MatchString(s) {
				t.Fatalf("%q generated %q, which Go's regexp does not match", pattern, s)
			}
		}
	})
}
