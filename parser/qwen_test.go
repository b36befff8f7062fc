package parser

import (
	"strings"
	"testing"
)

var (
	optNone  = Options{Format: Qwen, IDFunc: testID}
	optR     = Options{Format: Qwen, Reasoning: true, IDFunc: testID}
	optRS    = Options{Format: Qwen, Reasoning: true, StartInReasoning: true, IDFunc: testID}
	optT     = Options{Format: Qwen, Tools: true, IDFunc: testID}
	optRT    = Options{Format: Qwen, Reasoning: true, Tools: true, IDFunc: testID}
	optRST   = Options{Format: Qwen, Reasoning: true, StartInReasoning: true, Tools: true, IDFunc: testID}
	optSOnly = Options{Format: Qwen, StartInReasoning: true, Tools: true, IDFunc: testID}
)

const (
	weather     = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>"
	weatherArgs = `{"location":"Paris","unit":"celsius"}`
	timeCall    = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}}\n</tool_call>"
	timeArgs    = `{"tz":"CET"}`
)

var qwenCases = []parseCase{
	{name: "empty", opts: optRT},
	{name: "plain", opts: optNone, in: "Hello, world!", content: "Hello, world!"},
	{name: "plain all options", opts: optRT, in: "Hello, world!\n", content: "Hello, world!\n"},
	{name: "only whitespace", opts: optRT, in: "\n \n", content: "\n \n"},
	{name: "tags without options", opts: optNone,
		in:      "<think>\nr\n</think>\n\n" + weather,
		content: "<think>\nr\n</think>\n\n" + weather},
	{name: "reasoning then content", opts: optR,
		in:        "<think>\nLet me think.\nStep 2.\n</think>\n\nThe answer is 42.",
		reasoning: "Let me think.\nStep 2.", content: "The answer is 42."},
	{name: "reasoning newlines trimmed only at ends", opts: optR,
		in:        "<think>\n\n  a\n\nb  \n\n</think>\n\n  c\n\n",
		reasoning: "  a\n\nb  ", content: "  c\n\n"},
	{name: "reasoning without newlines", opts: optR,
		in: "<think>r</think>c", reasoning: "r", content: "c"},
	{name: "empty reasoning", opts: optR,
		in: "<think>\n\n</think>\n\nHi", content: "Hi"},
	{name: "reasoning only, cut off", opts: optR,
		in: "<think>\nStill thinking\n\n", reasoning: "Still thinking"},
	{name: "reasoning cut off inside closing tag", opts: optR,
		in: "<think>\nabc\n</thi", reasoning: "abc\n</thi"},
	{name: "cut off after opening tag", opts: optRT, in: "\n<think>\n"},
	{name: "reasoning off", opts: optT,
		in:      "<think>\nr\n</think>\n\nc",
		content: "<think>\nr\n</think>\n\nc"},
	{name: "whitespace before think dropped", opts: optR,
		in: " \n<think>\nr\n</think>\n\nc", reasoning: "r", content: "c"},
	{name: "think not at start is content", opts: optRT,
		in:      "Hi <think>x</think> there",
		content: "Hi <think>x</think> there"},
	{name: "second think is content", opts: optR,
		in:        "<think>a</think>\n\nb<think>c</think>d",
		reasoning: "a", content: "b<think>c</think>d"},
	{name: "close think in content", opts: optR,
		in: "a</think>b", content: "a</think>b"},
	{name: "only newlines after close", opts: optR,
		in: "<think>a</think>\n \nb", reasoning: "a", content: " \nb"},
	{name: "start in reasoning", opts: optRS,
		in:        "Thinking...\n</think>\n\nAnswer.",
		reasoning: "Thinking...", content: "Answer."},
	{name: "start in reasoning with leading newline", opts: optRS,
		in: "\nT\n</think>\n\nA", reasoning: "T", content: "A"},
	{name: "start in reasoning, cut off", opts: optRST,
		in: "Thinking <tool_call>\n", reasoning: "Thinking <tool_call>"},
	{name: "start in reasoning needs reasoning", opts: optSOnly,
		in: "T\n</think>\n\nA", content: "T\n</think>\n\nA"},
	{name: "start in reasoning, think is text", opts: optRS,
		in: "<think>\nT</think>A", reasoning: "<think>\nT", content: "A"},
	{name: "one tool call", opts: optT, in: weather,
		calls: []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "two tool calls", opts: optRT, in: weather + "\n" + timeCall,
		calls: []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "two tool calls, whitespace dropped", opts: optT,
		in:    "\n" + weather + " \n\t\r\n" + timeCall + "\n\n",
		calls: []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "two tool calls, no separator", opts: optT, in: weather + timeCall,
		calls: []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "content then tool call", opts: optRT,
		in:      "Let me check the weather.\n\n" + weather,
		content: "Let me check the weather.",
		calls:   []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "content between tool calls", opts: optT,
		in:      "A \n" + weather + "\nB\n" + timeCall + "\nC ",
		content: "A\nB\nC ",
		calls:   []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "reasoning then tool call", opts: optRT,
		in:        "<think>\nThe user wants the weather.\n</think>\n\n" + weather,
		reasoning: "The user wants the weather.",
		calls:     []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "reasoning, content and tool calls", opts: optRST,
		in:        "Need tools.\n</think>\n\nChecking.\n" + weather + "\n" + timeCall + "\n",
		reasoning: "Need tools.", content: "Checking.",
		calls: []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "tool call in reasoning is reasoning", opts: optRT,
		in:        "<think>\n" + weather + "\n</think>\n\nok",
		reasoning: weather, content: "ok"},
	{name: "tools off", opts: optR, in: "a\n" + weather, content: "a\n" + weather},
	{name: "malformed JSON", opts: optT,
		in:      "Sure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }\n</tool_call>\n",
		content: "Sure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }\n</tool_call>\n"},
	{name: "malformed then valid", opts: optT,
		in:      "<tool_call>\n{oops}\n</tool_call>\n" + weather + "\n",
		content: "<tool_call>\n{oops}\n</tool_call>",
		calls:   []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "valid then malformed", opts: optT,
		in:      weather + "\n<tool_call>{}</tool_call>\n",
		content: "\n<tool_call>{}</tool_call>\n",
		calls:   []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "missing name", opts: optT,
		in:      `<tool_call>{"arguments": {}}</tool_call>`,
		content: `<tool_call>{"arguments": {}}</tool_call>`},
	{name: "empty name", opts: optT,
		in:      `<tool_call>{"name": "", "arguments": {}}</tool_call>`,
		content: `<tool_call>{"name": "", "arguments": {}}</tool_call>`},
	{name: "name not a string", opts: optT,
		in:      `<tool_call>{"name": 1, "arguments": {}}</tool_call>`,
		content: `<tool_call>{"name": 1, "arguments": {}}</tool_call>`},
	{name: "arguments an array", opts: optT,
		in:      `<tool_call>{"name": "f", "arguments": [1]}</tool_call>`,
		content: `<tool_call>{"name": "f", "arguments": [1]}</tool_call>`},
	{name: "arguments a number", opts: optT,
		in:      `<tool_call>{"name": "f", "arguments": 1}</tool_call>`,
		content: `<tool_call>{"name": "f", "arguments": 1}</tool_call>`},
	{name: "block not an object", opts: optT,
		in:      `<tool_call>[{"name": "f", "arguments": {}}]</tool_call><tool_call>null</tool_call>`,
		content: `<tool_call>[{"name": "f", "arguments": {}}]</tool_call><tool_call>null</tool_call>`},
	{name: "text after the object", opts: optT,
		in:      `<tool_call>{"name": "f", "arguments": {}} x</tool_call>`,
		content: `<tool_call>{"name": "f", "arguments": {}} x</tool_call>`},
	{name: "missing arguments", opts: optT,
		in:    `<tool_call>{"name": "now"}</tool_call>`,
		calls: []ToolCall{call(0, "now", "{}")}},
	{name: "null arguments", opts: optT,
		in:    `<tool_call>{"name": "now", "arguments": null}</tool_call>`,
		calls: []ToolCall{call(0, "now", "{}")}},
	{name: "extra members", opts: optT,
		in:    `<tool_call>{"id": 7, "name": "f", "arguments": {"x": 1}, "type": "function"}</tool_call>`,
		calls: []ToolCall{call(0, "f", `{"x":1}`)}},
	{name: "arguments as string", opts: optT,
		in:    `<tool_call>{"name": "f", "arguments": " {\"b\": 1,\n \"a\": \"x y\"} "}</tool_call>`,
		calls: []ToolCall{call(0, "f", `{"b":1,"a":"x y"}`)}},
	{name: "arguments as string, not an object", opts: optT,
		in:      `<tool_call>{"name": "f", "arguments": "[1]"}</tool_call><tool_call>{"name": "f", "arguments": "x"}</tool_call>`,
		content: `<tool_call>{"name": "f", "arguments": "[1]"}</tool_call><tool_call>{"name": "f", "arguments": "x"}</tool_call>`},
	{name: "unterminated", opts: optRT,
		in:      "Sure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n",
		content: "Sure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n"},
	{name: "unterminated after a call", opts: optT,
		in:      weather + "\n<tool_call>\n{\"name\": \"f\"",
		content: "\n<tool_call>\n{\"name\": \"f\"",
		calls:   []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "unterminated inside closing tag", opts: optT,
		in: "<tool_call>{}</tool_c", content: "<tool_call>{}</tool_c"},
	{name: "closing tag inside a JSON string ends the block", opts: optT,
		in:      `<tool_call>{"name": "f", "arguments": {"s": "</tool_call>"}}</tool_call>`,
		content: `<tool_call>{"name": "f", "arguments": {"s": "</tool_call>"}}</tool_call>`},
	{name: "nested braces and tags in strings", opts: optRT,
		in:    `<tool_call>{"name": "f", "arguments": {"a": {"b": [1, {"c": "}{<tool_call><think>\"\\"}]}, "d": "</think>"}}</tool_call>`,
		calls: []ToolCall{call(0, "f", `{"a":{"b":[1,{"c":"}{<tool_call><think>\"\\"}]},"d":"</think>"}`)}},
	{name: "key order kept", opts: optT,
		in:    "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"b\": 1, \"a\": 2, \"c\": {\"z\": true, \"y\": null}}}\n</tool_call>",
		calls: []ToolCall{call(0, "f", `{"b":1,"a":2,"c":{"z":true,"y":null}}`)}},
	{name: "name before arguments not required", opts: optT,
		in:    `<tool_call>{"arguments": {"b":1,"a":2}, "name": "f"}</tool_call>`,
		calls: []ToolCall{call(0, "f", `{"b":1,"a":2}`)}},
	{name: "unicode", opts: optRT,
		in:        "<think>\nÜberlegung: 你好 😀\n</think>\n\nCafé ☕ 👨\u200d👩\u200d👧\n<tool_call>\n{\"name\": \"wetter_für\", \"arguments\": {\"city\": \"Zürich\", \"emoji\": \"😀\", \"esc\": \"\\u00e9\\ud83d\\ude00\"}}\n</tool_call>",
		reasoning: "Überlegung: 你好 😀",
		content:   "Café ☕ 👨\u200d👩\u200d👧",
		calls:     []ToolCall{call(0, "wetter_für", `{"city":"Zürich","emoji":"😀","esc":"\u00e9\ud83d\ude00"}`)}},
	{name: "tag look-alikes", opts: optRT,
		in:      "a <b> c <tool d <think <<tool_call <tool_call x</tool_call> </think",
		content: "a <b> c <tool d <think <<tool_call <tool_call x</tool_call> </think"},
	{name: "ends with less-than", opts: optRT, in: "a <", content: "a <"},
	{name: "ends with partial tag", opts: optRT, in: "a <tool_ca", content: "a <tool_ca"},
	{name: "ends with partial think", opts: optR, in: "\n<thi", content: "\n<thi"},
	{name: "think then tool call directly", opts: optRT,
		in:        "<think>r</think>" + weather + "after",
		reasoning: "r", content: "after",
		calls: []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "newlines after think kept after tool call", opts: optRT,
		in:        "<think>r</think>" + weather + "\n\nafter",
		reasoning: "r", content: "\n\nafter",
		calls: []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "malformed block after think", opts: optRT,
		in:        "<think>r</think>\n\n<tool_call>x</tool_call>\n\nafter",
		reasoning: "r", content: "<tool_call>x</tool_call>\n\nafter"},
	{name: "trailing whitespace without tools", opts: optR,
		in: "Hi  \n", content: "Hi  \n"},
}

// TestEarly checks that text is returned as soon as it can be.
func TestQwenEarly(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		steps []step
	}{
		{"qwen3 tokens", optRT, []step{
			{"<think>", Delta{}},
			{"\n", Delta{}},
			{"Let", Delta{Reasoning: "Let"}},
			{" me\n", Delta{Reasoning: " me"}},
			{"\n", Delta{}},
			{"see", Delta{Reasoning: "\n\nsee"}},
			{"\n", Delta{}},
			{"</think>", Delta{}},
			{"\n\n", Delta{}},
			{"Hi", Delta{Content: "Hi"}},
			{" <", Delta{}},
			{"b>", Delta{Content: " <b>"}},
			{"\n", Delta{}},
			{"<tool_call>", Delta{}},
			{"\n{\"name\": \"f\", \"arguments\": {}}\n", Delta{}},
			{"</tool_call>", Delta{ToolCalls: []ToolCall{call(0, "f", "{}")}}},
			{"\n", Delta{}},
			{"", Delta{}},
		}},
		{"split tags", optRT, []step{
			{"<", Delta{}},
			{"th", Delta{}},
			{"ink>\nr", Delta{Reasoning: "r"}},
			{"</", Delta{}},
			{"thin", Delta{}},
			{"x", Delta{Reasoning: "</thinx"}},
			{"</think", Delta{}},
			{">\n\nc <tool", Delta{Content: "c"}},
			{"_call>{\"name\":\"g\"}</tool_call", Delta{}},
			{">", Delta{ToolCalls: []ToolCall{call(0, "g", "{}")}}},
			{"<", Delta{}},
			{"", Delta{Content: "<"}},
		}},
		{"no tools: whitespace streams", optNone, []step{
			{"Hi\n", Delta{Content: "Hi\n"}},
			{"<tool_call>", Delta{Content: "<tool_call>"}},
			{" ", Delta{Content: " "}},
			{"<think>", Delta{Content: "<think>"}},
			{"", Delta{}},
		}},
		{"reasoning: whitespace held at start only", optR, []step{
			{"\n", Delta{}},
			{"Hi\n", Delta{Content: "\nHi\n"}},
			{"<thi", Delta{Content: "<thi"}},
			{"", Delta{}},
		}},
		{"utf-8", optNone, []step{
			{"\xe4\xbd", Delta{}},
			{"\xa0a\xf0\x9f", Delta{Content: "你a"}},
			{"\x98", Delta{}},
			{"\x80", Delta{Content: "😀"}},
			{"\xff", Delta{Content: "\xff"}},
			{"\xe4", Delta{}},
			{"", Delta{Content: "\xe4"}},
		}},
		{"cut off reasoning", optRS, []step{
			{"a\n", Delta{Reasoning: "a"}},
			{"\n</th", Delta{}},
			{"", Delta{Reasoning: "\n\n</th"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSteps(t, tt.opts, tt.steps) })
	}
}

// refQwen is the reference implementation of Parse for the Qwen format. It splits s into pieces whose concatenation must be s,
// and checks that every piece that is dropped is whitespace that the rules
// allow to be dropped.
func refQwen(t testing.TB, s string, o Options) (content, reasoning string, calls []ToolCall) {
	t.Helper()
	type piece struct {
		kind byte // 'c' content, 'r' reasoning, 't' tag, 'k' tool-call block, 'd' dropped
		text string
	}
	var ps []piece
	add := func(kind byte, text string) {
		if text != "" {
			ps = append(ps, piece{kind, text})
		}
	}
	const space = " \t\r\n"
	rest := s
	if o.Reasoning {
		in := o.StartInReasoning
		if !in {
			if u := strings.TrimLeft(rest, space); strings.HasPrefix(u, thinkOpen) {
				add('d', rest[:len(rest)-len(u)])
				add('t', thinkOpen)
				rest = u[len(thinkOpen):]
				in = true
			}
		}
		if in {
			r, after, found := strings.Cut(rest, thinkClose)
			lead := len(r) - len(strings.TrimLeft(r, "\n"))
			mid := strings.Trim(r, "\n")
			add('d', r[:lead])
			add('r', mid)
			add('d', r[lead+len(mid):])
			reasoning = mid
			rest = ""
			if found {
				add('t', thinkClose)
				u := strings.TrimLeft(after, "\n")
				add('d', after[:len(after)-len(u)])
				rest = u
			}
		}
	}

	// Split the rest into text and tool calls; a malformed or
	// unterminated block is text.
	type item struct {
		text string // text, or the whole block of a call
		call bool
	}
	var items []item
	addText := func(text string) {
		if n := len(items); n > 0 && !items[n-1].call {
			items[n-1].text += text
		} else {
			items = append(items, item{text: text})
		}
	}
	for o.Tools {
		i := strings.Index(rest, callOpen)
		if i < 0 {
			break
		}
		addText(rest[:i])
		j := strings.Index(rest[i+len(callOpen):], callClose)
		if j < 0 {
			rest = rest[i:]
			break
		}
		end := i + len(callOpen) + j + len(callClose)
		block := rest[i:end]
		if name, args, ok := parseCall([]byte(block[len(callOpen) : len(block)-len(callClose)])); ok {
			items = append(items, item{text: block, call: true})
			calls = append(calls, ToolCall{Index: len(calls), ID: o.IDFunc(len(calls)), Name: name, Arguments: args})
		} else {
			addText(block)
		}
		rest = rest[end:]
	}
	addText(rest)

	var cb strings.Builder
	for i, it := range items {
		switch {
		case it.call:
			add('k', it.text)
		case i+1 < len(items): // followed by a call
			u := strings.TrimRight(it.text, space)
			add('c', u)
			add('d', it.text[len(u):])
			cb.WriteString(u)
		case i > 0 && strings.TrimLeft(it.text, space) == "": // after a call, at the end
			add('d', it.text)
		default:
			add('c', it.text)
			cb.WriteString(it.text)
		}
	}
	content = cb.String()

	// Every byte of s is accounted for, and only whitespace is dropped:
	// newlines in reasoning and after </think>, any whitespace in content.
	var all strings.Builder
	for _, p := range ps {
		all.WriteString(p.text)
		if p.kind == 'd' && strings.Trim(p.text, space) != "" {
			t.Fatalf("refQwen(%q): dropped %q", s, p.text)
		}
	}
	if all.String() != s {
		t.Fatalf("refQwen(%q): pieces %q do not make up the input", s, ps)
	}
	return content, reasoning, calls
}

// qwenFragments are the pieces the Qwen fuzz texts are made of.
var qwenFragments = []string{
	thinkOpen, thinkClose, callOpen, callClose,
	"\n", "\n\n", " ", "\t", "<", ">", "</", "{", "}", `"`, `\`, ":",
	`{"name": "f", "arguments": {"b": 1, "a": [2, "x"]}}`,
	`{"name":"g","arguments":"{\"k\": \"v\"}"}`,
	`{"name": "h"}`,
	`"name"`, `"arguments"`, "é", "你", "😀",
	"<think", "</think", "<tool_call", "</tool_call",
}

func FuzzQwen(f *testing.F) {
	for i, c := range qwenCases {
		f.Add([]byte(c.in), uint8(i), uint64(i))
	}
	f.Add([]byte{0, 4, 'a', 4, 1, 5, 2, 4, 16, 4, 3, 4, 2, 17, 3, 'x', 2}, uint8(3), uint64(1))
	f.Add([]byte{'\n', 2, 18, 3, 2, 18, 'z', 25, 3, 0}, uint8(7), uint64(2))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8, seed uint64) {
		fuzzCheck(t, fuzzText(qwenFragments, data), fuzzOptions(Qwen, flags), seed)
	})
}

// TestLong feeds long runs byte by byte, which must take linear time.
func TestLong(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	ws := strings.Repeat("\n", n)
	args := `{"s":"` + strings.Repeat("x", n) + `"}`
	in := "<think>" + ws + "r" + ws + "</think>" + ws + "c" + ws + callOpen + `{"name":"f","arguments":` + args + "}" + callClose + ws
	c := parseCase{opts: optRT, in: in, reasoning: "r", content: "c", calls: []ToolCall{call(0, "f", args)}}
	content, reasoning, calls := pieces(t, c.opts, splitBytes(in))
	checkResult(t, "bytes", c, content, reasoning, calls)
}

func BenchmarkQwen(b *testing.B) {
	reply := "<think>\n" + strings.Repeat("Let me think about the question. ", 50) + "\n</think>\n\n" +
		strings.Repeat("Here is <b>the</b> answer. ", 50) + "\n" + weather + "\n" + timeCall
	var ps []string
	for i := 0; i < len(reply); i += 4 {
		ps = append(ps, reply[i:min(i+4, len(reply))])
	}
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		p := mustNew(b, optRT)
		for _, s := range ps {
			p.Add(s)
		}
		p.Finish()
	}
}
