package grammar

import (
	"slices"
	"strings"
	"testing"
)

var gbnfCases = []struct {
	name, src string
	yes, no   []string
}{
	{"literal", `root ::= "hello"`, []string{"hello"}, []string{"", "hell", "hello!"}},
	{"alternatives", "root ::= \"a\" | \"b\" | \"c\"", []string{"a", "b", "c"}, []string{"ab", "d"}},
	{"continuation after bar", "root ::= \"a\" |\n \"b\"", []string{"a", "b"}, []string{""}},
	{"rules", "root ::= greeting \" \" name\ngreeting ::= \"hi\" | \"hello\"\nname ::= [A-Z] [a-z]*", []string{"hi Bob", "hello X"}, []string{"hi bob", "hey Bob"}},
	{"classes", `root ::= [a-cx] [^0-9\]] [\-\^]`, []string{"az-", "xz^"}, []string{"dz-", "a5-", "a]-", "aza"}},
	{"any", `root ::= . .`, []string{"ab", "日本", "\n\t"}, []string{"a", "abc"}},
	{"escapes", `root ::= "\x41\u00e9\U0001F600\t\n\r\\\""`, []string{"Aé😀\t\n\r\\\""}, []string{"A"}},
	{"class escapes", `root ::= [\x00-\x1F\u00e9]`, []string{"\x00", "\x1f", "é"}, []string{" "}},
	{"repetitions", `root ::= "a"{2} "b"{1,2} "c"{2,} "d"?`, []string{"aabcc", "aabbcccd"}, []string{"abcc", "aabbbcc", "aabc"}},
	{"spaced repetition", `root ::= "a"{ 1 , 3 }`, []string{"a", "aaa"}, []string{"", "aaaa"}},
	{"star plus", `root ::= "x"* "y"+`, []string{"y", "xxyy"}, []string{"", "xx"}},
	{"groups", "root ::= (\"a\" | \"b\" (\n \"c\"\n | \"d\" ))+", []string{"a", "bc", "abdbc"}, []string{"b", "ac"}},
	{"empty alternative", `root ::= "a" ( "b" | )`, []string{"a", "ab"}, []string{"b"}},
	{"empty literal", `root ::= "" "a"`, []string{"a"}, []string{""}},
	{"comments", "# top\nroot ::= \"a\" b # trailing\n# more\n\nb ::= \"b\"", []string{"ab"}, []string{"a"}},
	{"recursion", "root ::= \"(\" root \")\" | \"x\"", []string{"x", "((x))"}, []string{"(x", "()"}},
	{"crlf", "root ::= a\r\na ::= \"a\"\r\n", []string{"a"}, []string{""}},
	{"json", `root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
`, []string{`{"a": [1, "x", {}]}`, "{}"}, []string{`{"a"}`, `[1]`}},
	{"llama.cpp schema converter output", `age-kv ::= "\"age\"" space ":" space integer
boolean ::= ("true" | "false") space
char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})
email-kv ::= "\"email\"" space ":" space string
integer ::= ("-"? integral-part) space
integral-part ::= [0] | [1-9] [0-9]{0,15}
name-kv ::= "\"name\"" space ":" space string
root ::= "{" space name-kv "," space age-kv ( "," space ( email-kv ) )? "}" space
space ::= | " " | "\n"{1,2} [ \t]{0,20}
string ::= "\"" char* "\"" space
`, []string{`{"name":"a","age":3}`, "{ \"name\": \"\\u00e9\", \"age\": -12, \"email\": \"x\" }\n"}, []string{`{"age":3,"name":"a"}`, `{"name":"a","age":03}`}},
}

func TestParseGBNF(t *testing.T) {
	for _, tc := range gbnfCases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ParseGBNF(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.yes {
				if !matches(g, s) {
					t.Errorf("rejects %q", s)
				}
			}
			for _, s := range tc.no {
				if matches(g, s) {
					t.Errorf("accepts %q", s)
				}
			}
			// String prints GBNF that parses to the same language.
			g2, err := ParseGBNF(g.String())
			if err != nil {
				t.Fatalf("reparsing %q: %v", g.String(), err)
			}
			for _, s := range append(append(tc.yes, tc.no...), samples(t, g, 50, 3)...) {
				if matches(g, s) != matches(g2, s) {
					t.Errorf("printed grammar differs on %q:\n%s", s, g2)
				}
			}
		})
	}
}

func TestParseGBNFErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{``, `no rule "root"`},
		{`a ::= "x"`, `no rule "root"`},
		{`root ::= b`, `"b" is used but not defined`},
		{`root ::= "a`, "unterminated string"},
		{`root ::= [a-`, "unterminated"},
		{`root ::= [z-a]`, "backwards"},
		{`root ::= []`, "empty character class"},
		{`root ::= ("a"`, "expecting ')'"},
		{`root ::= "a")`, "expecting a newline"},
		{`root ::= "a"{3,2}`, "maximum below its minimum"},
		{`root ::= "a"{1000000}`, "limit"},
		{`root ::= "a"{x}`, "expecting an integer"},
		{`root ::= *`, "nothing to repeat"},
		{`root ::= "\q"`, `unknown escape`},
		{`root ::= "\uD800"`, "not a character"},
		{`root ::= <[12]>`, "token references"},
		{`root "a"`, "expecting ::="},
		{"root ::= \"a\"\nroot ::= \"b\"", "defined twice"},
		{"root ::= \"a\"\n  | \"b\"", "expecting a rule name"},
		{`root ::= root "a"`, "left recursive"},
		{"root ::= a\na ::= \"\" root", "left recursive"},
		{strings.Repeat("(", 300), ""},
		{"root ::= " + strings.Repeat("(", 300) + `"a"` + strings.Repeat(")", 300), "nested"},
	} {
		_, err := ParseGBNF(tc.src)
		if err == nil {
			t.Errorf("%.40q: no error", tc.src)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: error %q does not mention %q", tc.src, err, tc.want)
		}
	}
}

func TestParseGBNFPosition(t *testing.T) {
	_, err := ParseGBNF("root ::= a\na ::= \"x\" @")
	if err == nil || !strings.Contains(err.Error(), "line 2 column 11") {
		t.Errorf("error %v, want it at line 2 column 11", err)
	}
}

func FuzzParseGBNF(f *testing.F) {
	for _, tc := range gbnfCases {
		f.Add(tc.src)
	}
	f.Add(`root ::= [^"\\] "\x00" .{2,5}`)
	f.Add("root ::= a{0,}\na ::= \"a\"")
	f.Fuzz(func(t *testing.T, src string) {
		g, err := ParseGBNF(src)
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("parsed grammar does not validate: %v", err)
		}
		if n, want := g.Nullable(), naiveNullable(g); !slices.Equal(n, want) {
			t.Fatalf("Nullable %v, want %v", n, want)
		}
		g2, err := ParseGBNF(g.String())
		if err != nil {
			t.Fatalf("printed grammar %q does not parse: %v", g.String(), err)
		}
		gen := newGenerator(g, 1)
		gen.maxReps = 2
		gen.limit = 1 << 8
		for range 5 {
			s, ok := gen.sample()
			if !ok {
				return
			}
			if !matches(g, s) || !matches(g2, s) {
				t.Fatalf("sample %q of\n%s\nnot matched (reprinted:\n%s)", s, g, g2)
			}
		}
	})
}

// naiveNullable is Nullable as a plain fixed point over all rules.
func naiveNullable(g *Grammar) []bool {
	n := make([]bool, len(g.Rules))
	for changed := true; changed; {
		changed = false
		for i, r := range g.Rules {
			if !n[i] && g.nullable(r.Expr, n) {
				n[i], changed = true, true
			}
		}
	}
	return n
}

func TestNullable(t *testing.T) {
	g, err := ParseGBNF("root ::= a b\na ::= b \"x\"?\nb ::= c*\nc ::= \"c\" | d\nd ::= \"d\" e\ne ::= \"\"\nf ::= \"f\" | root")
	if err != nil {
		t.Fatal(err)
	}
	if n, want := g.Nullable(), naiveNullable(g); !slices.Equal(n, want) || !n[0] || n[3] {
		t.Fatalf("Nullable %v, want %v", n, want)
	}
}
