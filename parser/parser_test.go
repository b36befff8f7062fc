package parser

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// testID is the IDFunc of the tests.
func testID(i int) string { return fmt.Sprintf("call_%d", i) }

func call(i int, name, args string) ToolCall {
	return ToolCall{Index: i, ID: testID(i), Name: name, Arguments: args}
}

type parseCase struct {
	name      string
	opts      Options
	in        string
	content   string
	reasoning string
	calls     []ToolCall
}

// allCases are the cases of every format.
func allCases() []parseCase {
	var all []parseCase
	for _, cs := range [][]parseCase{qwenCases, harmonyCases, mistralCases, plainCases} {
		all = append(all, cs...)
	}
	return all
}

var plainCases = []parseCase{
	{name: "plain: empty", opts: Options{Format: Plain, IDFunc: testID}},
	{name: "plain: text", opts: Options{Format: Plain, Reasoning: true, Tools: true, IDFunc: testID},
		in:      " \n<think>r</think>\n<tool_call>{\"name\": \"f\"}</tool_call>[TOOL_CALLS]f{}<|channel|>final<|message|>x😀 ",
		content: " \n<think>r</think>\n<tool_call>{\"name\": \"f\"}</tool_call>[TOOL_CALLS]f{}<|channel|>final<|message|>x😀 "},
}

func mustNew(t testing.TB, opts Options) Parser {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustParse(t testing.TB, text string, opts Options) (content, reasoning string, calls []ToolCall) {
	t.Helper()
	content, reasoning, calls, err := Parse(text, opts)
	if err != nil {
		t.Fatal(err)
	}
	return content, reasoning, calls
}

// pieces feeds the pieces to a new Parser with opts and returns the
// concatenation of the deltas. It checks that the deltas are valid UTF-8
// if the pieces together are, and that the deltas' tool calls are those of
// ToolCalls.
func pieces(t testing.TB, opts Options, ps []string) (content, reasoning string, calls []ToolCall) {
	t.Helper()
	valid := utf8.ValidString(strings.Join(ps, ""))
	p := mustNew(t, opts)
	var c, r strings.Builder
	add := func(d Delta) {
		if valid && (!utf8.ValidString(d.Content) || !utf8.ValidString(d.Reasoning)) {
			t.Fatalf("pieces %q: delta %+v is not valid UTF-8", ps, d)
		}
		c.WriteString(d.Content)
		r.WriteString(d.Reasoning)
		calls = append(calls, d.ToolCalls...)
	}
	for _, s := range ps {
		add(p.Add(s))
	}
	add(p.Finish())
	if !reflect.DeepEqual(calls, p.ToolCalls()) {
		t.Fatalf("pieces %q: tool calls of the deltas %+v, ToolCalls %+v", ps, calls, p.ToolCalls())
	}
	if d := p.Add("more"); !d.IsEmpty() {
		t.Fatalf("Add after Finish = %+v", d)
	}
	if d := p.Finish(); !d.IsEmpty() {
		t.Fatalf("Finish after Finish = %+v", d)
	}
	return c.String(), r.String(), calls
}

func splitBytes(s string) []string {
	ps := make([]string, len(s))
	for i := 0; i < len(s); i++ {
		ps[i] = s[i : i+1]
	}
	return ps
}

func splitRunes(s string) []string {
	var ps []string
	for _, r := range s {
		ps = append(ps, string(r))
	}
	return ps
}

func checkResult(t *testing.T, what string, c parseCase, content, reasoning string, calls []ToolCall) {
	t.Helper()
	if content != c.content || reasoning != c.reasoning || !reflect.DeepEqual(calls, c.calls) {
		t.Errorf("%s:\n got content %q reasoning %q calls %+v\nwant content %q reasoning %q calls %+v",
			what, content, reasoning, calls, c.content, c.reasoning, c.calls)
	}
}

// refParse is the reference implementation of Parse for the format of o:
// each is written independently of the Parser's state machine, from the
// rules of the package documentation.
func refParse(t testing.TB, s string, o Options) (content, reasoning string, calls []ToolCall) {
	t.Helper()
	switch o.Format {
	case Qwen:
		return refQwen(t, s, o)
	case Harmony:
		return refHarmony(s, o)
	case Mistral:
		return refMistral(s, o)
	case Plain, "":
		return s, "", nil
	}
	t.Fatalf("no reference for format %q", o.Format)
	return
}

func TestParse(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			content, reasoning, calls := mustParse(t, c.in, c.opts)
			checkResult(t, "Parse", c, content, reasoning, calls)
			content, reasoning, calls = refParse(t, c.in, c.opts)
			checkResult(t, "refParse", c, content, reasoning, calls)
		})
	}
}

func TestStreaming(t *testing.T) {
	t.Parallel()
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i <= len(c.in); i++ {
				content, reasoning, calls := pieces(t, c.opts, []string{c.in[:i], c.in[i:]})
				checkResult(t, fmt.Sprintf("split at %d", i), c, content, reasoning, calls)
			}
			if testing.Short() && len(c.in) > 100 {
				return
			}
			for i := 0; i <= len(c.in); i++ {
				for j := i; j <= len(c.in); j++ {
					content, reasoning, calls := pieces(t, c.opts, []string{c.in[:i], c.in[i:j], c.in[j:]})
					if t.Failed() {
						return
					}
					checkResult(t, fmt.Sprintf("split at %d and %d", i, j), c, content, reasoning, calls)
				}
			}
			content, reasoning, calls := pieces(t, c.opts, splitBytes(c.in))
			checkResult(t, "bytes", c, content, reasoning, calls)
			content, reasoning, calls = pieces(t, c.opts, splitRunes(c.in))
			checkResult(t, "runes", c, content, reasoning, calls)
		})
	}
}

// step is one step of an early-return test: text to add ("" for Finish)
// and the Delta it must return.
type step struct {
	in   string
	want Delta
}

// runSteps checks that a Parser with opts returns each step's Delta.
func runSteps(t *testing.T, opts Options, steps []step) {
	t.Helper()
	p := mustNew(t, opts)
	for i, s := range steps {
		var d Delta
		if s.in == "" {
			d = p.Finish()
		} else {
			d = p.Add(s.in)
		}
		if !reflect.DeepEqual(d, s.want) {
			t.Fatalf("step %d (%q): got %+v, want %+v", i, s.in, d, s.want)
		}
	}
}

func TestPlainEarly(t *testing.T) {
	runSteps(t, Options{Format: Plain}, []step{
		{"<think>", Delta{Content: "<think>"}},
		{"\xe4\xbd", Delta{}},
		{"\xa0[", Delta{Content: "你["}},
		{"\xf0", Delta{}},
		{"", Delta{Content: "\xf0"}},
	})
}

func TestFormats(t *testing.T) {
	for _, f := range Formats() {
		g, err := ParseFormat(string(f))
		if err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, g, err)
		}
		if _, err := New(Options{Format: f}); err != nil {
			t.Errorf("New(%q): %v", f, err)
		}
	}
	if g, err := ParseFormat(""); err != nil || g != Plain {
		t.Errorf(`ParseFormat("") = %q, %v; want plain`, g, err)
	}
	if c, r, calls := mustParse(t, "<think>r</think><tool_call>{\"name\": \"f\"}</tool_call>", Options{Reasoning: true, Tools: true}); c == "" || r != "" || calls != nil {
		t.Errorf("the zero Format parsed reasoning %q or calls %v", r, calls)
	}
	_, err := ParseFormat("hermes")
	if err == nil || !strings.Contains(err.Error(), `"hermes"`) || !strings.Contains(err.Error(), "harmony") {
		t.Errorf(`ParseFormat("hermes"): error %v, want one naming the format and the known ones`, err)
	}
	if p, err := New(Options{Format: "hermes"}); err == nil || p != nil {
		t.Errorf(`New(hermes) = %v, %v; want an error`, p, err)
	}
	if _, _, _, err := Parse("x", Options{Format: "hermes"}); err == nil {
		t.Error(`Parse with format hermes: no error`)
	}
	tags := map[Format][2]string{"": {}, Qwen: {"<think>", "</think>"},
		Mistral: {"[THINK]", "[/THINK]"}, Harmony: {}, Plain: {}}
	for f, want := range tags {
		if open, close := f.ThinkTags(); open != want[0] || close != want[1] {
			t.Errorf("%q.ThinkTags() = %q, %q; want %q", f, open, close, want)
		}
	}
}

func TestDefaultIDs(t *testing.T) {
	tests := []struct {
		opts  Options
		reply string
		re    *regexp.Regexp
	}{
		{Options{Format: Qwen, Tools: true}, weather + "\n" + timeCall, regexp.MustCompile(`^call_[A-Za-z0-9]{24}$`)},
		{Options{Format: Harmony, Tools: true}, hWeather + hTime, regexp.MustCompile(`^call_[A-Za-z0-9]{24}$`)},
		{Options{Format: Mistral, Tools: true}, mWeather + mTime, regexp.MustCompile(`^[A-Za-z0-9]{9}$`)},
	}
	for _, tt := range tests {
		seen := map[string]bool{}
		for range 100 {
			_, _, calls := mustParse(t, tt.reply, tt.opts)
			if len(calls) != 2 {
				t.Fatalf("%s: got %d calls, want 2", tt.opts.Format, len(calls))
			}
			for i, c := range calls {
				if c.Index != i {
					t.Errorf("%s: call %d has Index %d", tt.opts.Format, i, c.Index)
				}
				if !tt.re.MatchString(c.ID) {
					t.Errorf("%s: ID %q does not match %v", tt.opts.Format, c.ID, tt.re)
				}
				if seen[c.ID] {
					t.Errorf("%s: ID %q repeated", tt.opts.Format, c.ID)
				}
				seen[c.ID] = true
			}
		}
	}
}

func TestToolCallsCopy(t *testing.T) {
	for _, tt := range []struct {
		f     Format
		reply string
	}{{Qwen, weather}, {Harmony, hWeather + hTime}, {Mistral, mWeather}} {
		p := mustNew(t, Options{Format: tt.f, Tools: true})
		p.Add(tt.reply)
		p.Finish()
		calls := p.ToolCalls()
		calls[0].Name = "changed"
		if got := p.ToolCalls()[0].Name; got != "get_weather" {
			t.Errorf("%s: ToolCalls()[0].Name = %q after changing a returned slice", tt.f, got)
		}
		if mustNew(t, Options{Format: tt.f, Tools: true}).ToolCalls() != nil {
			t.Errorf("%s: ToolCalls of a new Parser is not nil", tt.f)
		}
	}
}

// fuzzText turns data into a text: a byte below len(fragments) stands
// for that fragment, any other for itself.
func fuzzText(fragments []string, data []byte) string {
	var b strings.Builder
	for _, c := range data {
		if int(c) < len(fragments) {
			b.WriteString(fragments[c])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// fuzzCheck checks Parse against the reference and against the Parser fed
// in random pieces and byte by byte.
func fuzzCheck(t *testing.T, text string, opts Options, seed uint64) {
	c, r, calls := mustParse(t, text, opts)
	want := parseCase{content: c, reasoning: r, calls: calls}

	rc, rr, rcalls := refParse(t, text, opts)
	checkResult(t, fmt.Sprintf("refParse(%q, %+v)", text, opts), want, rc, rr, rcalls)

	rng := rand.New(rand.NewPCG(seed, uint64(len(text))))
	var ps []string
	for rest := text; rest != ""; {
		n := min(len(rest), rng.IntN(16))
		ps = append(ps, rest[:n])
		rest = rest[n:]
	}
	sc, sr, scalls := pieces(t, opts, ps)
	checkResult(t, fmt.Sprintf("pieces %q, %+v", ps, opts), want, sc, sr, scalls)
	sc, sr, scalls = pieces(t, opts, splitBytes(text))
	checkResult(t, fmt.Sprintf("bytes of %q, %+v", text, opts), want, sc, sr, scalls)
}

// fuzzOptions turns flags into the options of a fuzz run.
func fuzzOptions(f Format, flags uint8) Options {
	return Options{
		Format:           f,
		Reasoning:        flags&1 != 0,
		StartInReasoning: flags&2 != 0,
		Tools:            flags&4 != 0,
		IDFunc:           testID,
	}
}

func FuzzPlain(f *testing.F) {
	for _, c := range plainCases {
		f.Add([]byte(c.in), uint64(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		fuzzCheck(t, string(data), Options{Format: Plain, Tools: true, Reasoning: true}, seed)
	})
}
