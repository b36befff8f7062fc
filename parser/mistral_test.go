package parser

import (
	"encoding/json"
	"strings"
	"testing"
)

var (
	optM   = Options{Format: Mistral, Reasoning: true, Tools: true, IDFunc: testID}
	optMR  = Options{Format: Mistral, Reasoning: true, IDFunc: testID}
	optMRS = Options{Format: Mistral, Reasoning: true, StartInReasoning: true, Tools: true, IDFunc: testID}
	optMT  = Options{Format: Mistral, Tools: true, IDFunc: testID}
)

const (
	// mWeather and mTime are calls in the form of the v11 and later
	// tokenizers.
	mWeather = "[TOOL_CALLS]get_weather[ARGS]{\"location\": \"Paris\", \"unit\": \"celsius\"}"
	mTime    = "[TOOL_CALLS]get_time[ARGS]{\"tz\": \"CET\"}"
	// mArray is both in the form of the v3 and v7 templates.
	mArray = "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\", \"unit\": \"celsius\"}}, " +
		"{\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}, \"id\": \"a1b2c3d4e\"}]"
)

var mistralCases = []parseCase{
	{name: "mistral: empty", opts: optM},
	{name: "mistral: plain", opts: optM, in: " Hello, world!\n", content: " Hello, world!\n"},
	{name: "mistral: reasoning then content", opts: optM,
		in:        "[THINK]Let me think.\nStep 2.\n[/THINK]\n\nThe answer is 42.",
		reasoning: "Let me think.\nStep 2.\n", content: "\n\nThe answer is 42."},
	{name: "mistral: think not at the start", opts: optM,
		in: " [THINK]r[/THINK]c", content: " [THINK]r[/THINK]c"},
	{name: "mistral: reasoning off", opts: optMT,
		in: "[THINK]r[/THINK]c", content: "[THINK]r[/THINK]c"},
	{name: "mistral: start in reasoning", opts: optMRS,
		in: "r[TOOL_CALLS]f{}[/THINK]c", reasoning: "r[TOOL_CALLS]f{}", content: "c"},
	{name: "mistral: reasoning cut off", opts: optMR,
		in: "[THINK]abc[/THI", reasoning: "abc[/THI"},
	{name: "mistral: second think is content", opts: optM,
		in: "[THINK]a[/THINK]b[THINK]c[/THINK]", reasoning: "a", content: "b[THINK]c[/THINK]"},
	{name: "mistral: one tool call", opts: optMT, in: mWeather,
		calls: []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "mistral: two tool calls", opts: optM, in: mWeather + mTime,
		calls: []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "mistral: content kept around calls", opts: optM,
		in:      "Let me check.\n\n" + mWeather + " \n" + mTime + "\nDone. ",
		content: "Let me check.\n\n \n\nDone. ",
		calls:   []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "mistral: reasoning then tool call", opts: optM,
		in:        "[THINK]Need the weather.[/THINK]" + mWeather,
		reasoning: "Need the weather.",
		calls:     []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "mistral: call id", opts: optM,
		in:    "[TOOL_CALLS]get_time[CALL_ID]a1b2c3d4e[ARGS]{\"tz\": \"CET\"}",
		calls: []ToolCall{call(0, "get_time", timeArgs)}},
	{name: "mistral: no args tag", opts: optM,
		in: "[TOOL_CALLS]get_time{\"tz\": \"CET\"}[TOOL_CALLS]f {}", calls: []ToolCall{call(0, "get_time", timeArgs), call(1, "f", "{}")}},
	{name: "mistral: whitespace around the name", opts: optM,
		in: "[TOOL_CALLS] \nget_time[ARGS] \n{\"tz\": \"CET\"}", calls: []ToolCall{call(0, "get_time", timeArgs)}},
	{name: "mistral: array", opts: optM, in: mArray,
		calls: []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "mistral: array without space, string arguments", opts: optM,
		in:    "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": \"{\\\"b\\\": 1, \\\"a\\\": 2}\"}, {\"name\": \"now\"}]",
		calls: []ToolCall{call(0, "f", `{"b":1,"a":2}`), call(1, "now", "{}")}},
	{name: "mistral: two arrays", opts: optM, in: mArray + "\n" + mArray,
		content: "\n",
		calls: []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs),
			call(2, "get_weather", weatherArgs), call(3, "get_time", timeArgs)}},
	{name: "mistral: empty array", opts: optM, in: "[TOOL_CALLS][]x", content: "[TOOL_CALLS][]x"},
	{name: "mistral: array with a bad call", opts: optM,
		in:      "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}, {\"arguments\": {}}] ok",
		content: "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}, {\"arguments\": {}}] ok"},
	{name: "mistral: array not JSON", opts: optM,
		in: "[TOOL_CALLS][{\"name\": }]" + mTime, content: "[TOOL_CALLS][{\"name\": }]",
		calls: []ToolCall{call(0, "get_time", timeArgs)}},
	{name: "mistral: arguments not JSON", opts: optM,
		in: "[TOOL_CALLS]f[ARGS]{\"a\": ]}" + mTime, content: "[TOOL_CALLS]f[ARGS]{\"a\": ]}",
		calls: []ToolCall{call(0, "get_time", timeArgs)}},
	{name: "mistral: unterminated arguments", opts: optM,
		in: mWeather + "[TOOL_CALLS]f[ARGS]{\"a\": {\"b\": 1}", content: "[TOOL_CALLS]f[ARGS]{\"a\": {\"b\": 1}",
		calls: []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "mistral: braces and tags in strings", opts: optM,
		in:    "[TOOL_CALLS]f[ARGS]{\"s\": \"}]{[TOOL_CALLS]\\\"\\\\\", \"t\": [\"[/THINK]\"]}",
		calls: []ToolCall{call(0, "f", `{"s":"}]{[TOOL_CALLS]\"\\","t":["[/THINK]"]}`)}},
	{name: "mistral: name then other text", opts: optM,
		in: "[TOOL_CALLS]get_weather(city='Paris')", content: "[TOOL_CALLS]get_weather(city='Paris')"},
	{name: "mistral: no name", opts: optM,
		in: "[TOOL_CALLS]{\"a\": 1} [TOOL_CALLS]", content: "[TOOL_CALLS]{\"a\": 1} [TOOL_CALLS]"},
	{name: "mistral: space before args tag", opts: optM,
		in: "[TOOL_CALLS]f [ARGS]{}", content: "[TOOL_CALLS]f [ARGS]{}"},
	{name: "mistral: arguments an array", opts: optM,
		in: "[TOOL_CALLS]f[ARGS][1]", content: "[TOOL_CALLS]f[ARGS][1]"},
	{name: "mistral: tag look-alikes", opts: optM,
		in: "a [TOOL b [TOOL_CALLS [ARGS] [THINK] [/THINK] [", content: "a [TOOL b [TOOL_CALLS [ARGS] [THINK] [/THINK] ["},
	{name: "mistral: ends inside the args tag", opts: optM,
		in: "[TOOL_CALLS]f[AR", content: "[TOOL_CALLS]f[AR"},
	{name: "mistral: ends with partial tag", opts: optM, in: "x[TOOL_CA", content: "x[TOOL_CA"},
	{name: "mistral: tools off", opts: optMR, in: "a" + mWeather, content: "a" + mWeather},
	{name: "mistral: unicode", opts: optM,
		in:        "[THINK]Überlegung: 你好 😀[/THINK]Café ☕[TOOL_CALLS]wetter[ARGS]{\"city\": \"Zürich\", \"e\": \"😀\"}",
		reasoning: "Überlegung: 你好 😀", content: "Café ☕",
		calls: []ToolCall{call(0, "wetter", `{"city":"Zürich","e":"😀"}`)}},
}

func TestMistralEarly(t *testing.T) {
	runSteps(t, optM, []step{
		{"[TH", Delta{}},
		{"INK]", Delta{}},
		{"Let", Delta{Reasoning: "Let"}},
		{" me [/", Delta{Reasoning: " me "}},
		{"THINK]", Delta{}},
		{"OK [", Delta{Content: "OK "}},
		{"x", Delta{Content: "[x"}},
		{"[TOOL_CALLS]", Delta{}},
		{"get", Delta{}},
		{"_time[ARGS]", Delta{}},
		{"{\"tz\": \"CET\"", Delta{}},
		{"}", Delta{ToolCalls: []ToolCall{call(0, "get_time", timeArgs)}}},
		{" ", Delta{Content: " "}},
		{"[TOOL_CALLS]", Delta{}},
		{"", Delta{Content: "[TOOL_CALLS]"}},
	})
	runSteps(t, optMT, []step{
		{"[THINK]", Delta{Content: "[THINK]"}},
		{"", Delta{}},
	})
}

// refMistral is the reference implementation of Parse for the Mistral
// format, on the whole text at once.
func refMistral(s string, o Options) (content, reasoning string, calls []ToolCall) {
	rest := s
	if o.Reasoning {
		in := o.StartInReasoning
		if !in && strings.HasPrefix(rest, "[THINK]") {
			rest, in = rest[len("[THINK]"):], true
		}
		if in {
			r, after, found := strings.Cut(rest, "[/THINK]")
			reasoning, rest = r, ""
			if found {
				rest = after
			}
		}
	}
	if !o.Tools {
		return rest, reasoning, nil
	}
	var c strings.Builder
	for {
		i := strings.Index(rest, "[TOOL_CALLS]")
		if i < 0 {
			c.WriteString(rest)
			break
		}
		c.WriteString(rest[:i])
		rest = rest[i+len("[TOOL_CALLS]"):]
		got, n := refBlock(rest)
		if got == nil {
			c.WriteString("[TOOL_CALLS]" + rest[:n])
		}
		for _, k := range got {
			calls = append(calls, ToolCall{Index: len(calls), ID: o.IDFunc(len(calls)), Name: k.Name, Arguments: k.Arguments})
		}
		rest = rest[n:]
	}
	return c.String(), reasoning, calls
}

// refBlock parses the block b that follows [TOOL_CALLS] and returns its
// calls and its length, or nil and the length of the text that is content.
func refBlock(b string) ([]ToolCall, int) {
	k := len(b) - len(strings.TrimLeft(b, " \t\r\n"))
	if k == len(b) {
		return nil, k
	}
	if b[k] == '[' {
		end := refValueEnd(b[k:])
		if end < 0 {
			return nil, len(b)
		}
		end += k
		var calls []ToolCall
		var items []json.RawMessage
		if err := json.Unmarshal([]byte(b[k:end]), &items); err != nil || len(items) == 0 {
			return nil, end
		}
		for _, raw := range items {
			name, args, ok := parseCall(raw)
			if !ok {
				return nil, end
			}
			calls = append(calls, ToolCall{Name: name, Arguments: args})
		}
		return calls, end
	}
	nameEnd := k
	for nameEnd < len(b) && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:", rune(b[nameEnd])) {
		nameEnd++
	}
	if nameEnd == k || nameEnd == len(b) {
		return nil, nameEnd
	}
	j := nameEnd
	for strings.HasPrefix(b[j:], "[CALL_ID]") {
		j += len("[CALL_ID]")
		for j < len(b) && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", rune(b[j])) {
			j++
		}
	}
	j += len(b[j:]) - len(strings.TrimPrefix(b[j:], "[ARGS]"))
	j += len(b[j:]) - len(strings.TrimLeft(b[j:], " \t\r\n"))
	if j == len(b) || b[j] != '{' {
		return nil, j
	}
	end := refValueEnd(b[j:])
	if end < 0 {
		return nil, len(b)
	}
	args, ok := compactObject([]byte(b[j : j+end]))
	if !ok {
		return nil, j + end
	}
	return []ToolCall{{Name: b[k:nameEnd], Arguments: args}}, j + end
}

// refValueEnd returns the length of the JSON array or object that b begins
// with, by counting brackets outside strings, or -1 if it does not end.
func refValueEnd(b string) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return -1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// mistralFragments are the pieces the Mistral fuzz texts are made of.
var mistralFragments = []string{
	mThink, mThinkEnd, mCalls, mArgs, mCallID,
	"[", "]", "{", "}", `"`, `\`, " ", "\n", ":", ",", "f", "get_weather", "abc123XYZ",
	`{"a": 1}`, `[{"name": "f", "arguments": {"b": 2}}]`, `{"name": "g"}`, `"arguments"`,
	"é", "😀", "[TOOL_", "[AR", "[CALL", "[/THI", "[THI",
}

func FuzzMistral(f *testing.F) {
	for i, c := range mistralCases {
		f.Add([]byte(c.in), uint8(5), uint64(i))
	}
	f.Add([]byte{0, 'r', 1, 'c', 2, 16, 3, 18, 2, 19, 2, 15, 4, 17, 3, 18}, uint8(5), uint64(1))
	f.Add([]byte{2, 11, 5, 20, 6, 2, 11, 14, 2, 15, 5, 18}, uint8(7), uint64(2))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8, seed uint64) {
		fuzzCheck(t, fuzzText(mistralFragments, data), fuzzOptions(Mistral, flags), seed)
	})
}

func BenchmarkMistral(b *testing.B) {
	reply := "[THINK]" + strings.Repeat("Let me think about the question. ", 50) + "[/THINK]" +
		strings.Repeat("Here is [b]the[/b] answer. ", 50)
	benchmarkReply(b, optM, reply+mWeather+mTime)
}
