package parser

import (
	"regexp"
	"strings"
	"testing"
)

var (
	optH  = Options{Format: Harmony, Tools: true, IDFunc: testID}
	optHN = Options{Format: Harmony, IDFunc: testID}
	// optHR asks for what harmony ignores: its reasoning needs no option.
	optHR = Options{Format: Harmony, Reasoning: true, StartInReasoning: true, Tools: true, IDFunc: testID}
)

const (
	// hWeather is a tool call as gpt-oss writes it after the generation
	// prompt <|start|>assistant; the <|call|> that ends it is usually not
	// decoded.
	hWeather = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"Paris\", \"unit\": \"celsius\"}<|call|>"
	// hTime is a later call, its recipient before the channel, as the
	// chat template renders calls.
	hTime    = "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{\"tz\": \"CET\"}"
	hAnalyze = "<|channel|>analysis<|message|>The user wants the weather.<|end|><|start|>assistant"
)

var harmonyCases = []parseCase{
	{name: "harmony: empty", opts: optH},
	{name: "harmony: analysis then final", opts: optH,
		in:        "<|channel|>analysis<|message|>Let me think.\nStep 2.<|end|><|start|>assistant<|channel|>final<|message|>The answer is 42.",
		reasoning: "Let me think.\nStep 2.", content: "The answer is 42."},
	{name: "harmony: return tag dropped", opts: optHN,
		in:        "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>final<|message|>c<|return|>",
		reasoning: "r", content: "c"},
	{name: "harmony: options for tags ignored", opts: optHR,
		in:        "<|channel|>analysis<|message|><think>r</think><|end|><|start|>assistant<|channel|>final<|message|>c",
		reasoning: "<think>r</think>", content: "c"},
	{name: "harmony: text kept as it is", opts: optH,
		in:        "<|channel|>analysis<|message|>\n r \n<|end|><|start|>assistant<|channel|>final<|message|>\n\n c \n",
		reasoning: "\n r \n", content: "\n\n c \n"},
	{name: "harmony: final only", opts: optH,
		in: "<|channel|>final<|message|>Hi!", content: "Hi!"},
	{name: "harmony: analysis cut off", opts: optH,
		in: "<|channel|>analysis<|message|>Still thinking <|en", reasoning: "Still thinking <|en"},
	{name: "harmony: one tool call", opts: optH, in: hWeather,
		calls: []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "harmony: analysis then tool call", opts: optH,
		in:        hAnalyze + hWeather,
		reasoning: "The user wants the weather.",
		calls:     []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "harmony: recipient first", opts: optH,
		in:    " to=functions.get_time<|channel|>commentary json<|message|>{\"tz\": \"CET\"}",
		calls: []ToolCall{call(0, "get_time", timeArgs)}},
	{name: "harmony: two tool calls", opts: optH, in: hWeather + hTime + "<|call|>",
		calls: []ToolCall{call(0, "get_weather", weatherArgs), call(1, "get_time", timeArgs)}},
	{name: "harmony: preamble then tool call", opts: optH,
		in:      "<|channel|>commentary<|message|>Checking the weather.<|end|><|start|>assistant" + hWeather,
		content: "Checking the weather.",
		calls:   []ToolCall{call(0, "get_weather", weatherArgs)}},
	{name: "harmony: tool call ends at a new message", opts: optH,
		in:      "<|channel|>commentary to=functions.f json<|message|>{\"a\": [1, \"<|x\"]}<|start|>assistant<|channel|>final<|message|>done",
		content: "done",
		calls:   []ToolCall{call(0, "f", `{"a":[1,"<|x"]}`)}},
	{name: "harmony: tools off", opts: optHN, in: hWeather,
		content: strings.TrimSuffix(hWeather, "<|call|>")},
	{name: "harmony: arguments not an object", opts: optH,
		in:      "<|channel|>commentary to=functions.f <|constrain|>json<|message|>[1, 2]<|call|>",
		content: "<|channel|>commentary to=functions.f <|constrain|>json<|message|>[1, 2]"},
	{name: "harmony: arguments not JSON", opts: optH,
		in:        hAnalyze + "<|channel|>commentary to=functions.f json<|message|>{\"a\": }",
		reasoning: "The user wants the weather.",
		content:   "<|start|>assistant<|channel|>commentary to=functions.f json<|message|>{\"a\": }"},
	{name: "harmony: empty arguments", opts: optH,
		in:      "<|channel|>commentary to=functions.f<|message|>",
		content: "<|channel|>commentary to=functions.f<|message|>"},
	{name: "harmony: call cut off in the header", opts: optH,
		in: "<|channel|>commentary to=functions.get_wea", content: "<|channel|>commentary to=functions.get_wea"},
	{name: "harmony: bare functions recipient", opts: optH,
		in: "<|channel|>commentary to=functions.<|message|>{}", content: "{}"},
	{name: "harmony: built-in tool", opts: optH,
		in: "<|channel|>analysis to=python code<|message|>print(1)<|end|>", reasoning: "print(1)"},
	{name: "harmony: no header", opts: optH, in: "Hello, world!", content: "Hello, world!"},
	{name: "harmony: long text without tags", opts: optH,
		in: strings.Repeat("abc ", 80), content: strings.Repeat("abc ", 80)},
	{name: "harmony: long text, then messages", opts: optH,
		in:      strings.Repeat("x", 300) + "<|message|>y<|end|><|start|>assistant<|channel|>final<|message|>ok",
		content: strings.Repeat("x", 300) + "<|message|>y" + "ok"},
	{name: "harmony: message tag just past the limit", opts: optH,
		in:      "<|channel|>final" + strings.Repeat(" ", maxHeader-len("<|channel|>final")+1) + "<|message|>a<|end|>b",
		content: "<|channel|>final" + strings.Repeat(" ", maxHeader-len("<|channel|>final")+1) + "<|message|>a" + "b"},
	{name: "harmony: message tag at the limit", opts: optH,
		in: "<|channel|>final" + strings.Repeat(" ", maxHeader-len("<|channel|>final")) + "<|message|>a<|end|>b", content: "ab"},
	{name: "harmony: channel without end", opts: optH,
		in:        "<|channel|>analysis<|message|>r<|channel|>final<|message|>c",
		reasoning: "r", content: "c"},
	{name: "harmony: stray commentary", opts: optH,
		in:        "<|channel|>commentary to=assistant<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>commentary<|channel|>final<|message|>c",
		reasoning: "r", content: "c"},
	{name: "harmony: user role", opts: optH,
		in:      "<|channel|>final<|message|>a<|end|><|start|>user<|message|>hi<|end|>",
		content: "a<|start|>user<|message|>hi"},
	{name: "harmony: text ended by an end tag", opts: optH,
		in: "garbage<|end|><|channel|>final<|message|>ok", content: "garbageok"},
	{name: "harmony: text ended by a start tag", opts: optH,
		in: "oops<|start|>assistant<|channel|>final<|message|>ok", content: "oopsok"},
	{name: "harmony: whitespace before headers dropped", opts: optH,
		in:        "\n <|channel|>analysis<|message|>r<|end|>\n\n<|start|>assistant<|channel|>final<|message|> c ",
		reasoning: "r", content: " c "},
	{name: "harmony: empty header parts", opts: optH,
		in:      "<|channel|><|message|>a<|end|><|channel|>final <|constrain|><|message|>b<|end|> to=<|message|>c",
		content: "<|channel|><|message|>a<|channel|>final <|constrain|><|message|>bto=<|message|>c"},
	{name: "harmony: two channels", opts: optH,
		in: "<|channel|>analysis<|channel|>final<|message|>x", content: "x"},
	{name: "harmony: two recipients", opts: optH,
		in: " to=functions.a to=functions.b<|message|>{}", content: "to=functions.a to=functions.b<|message|>{}"},
	{name: "harmony: recipient only", opts: optH,
		in: " to=functions.a<|message|>{}", calls: []ToolCall{call(0, "a", "{}")}},
	{name: "harmony: unknown tag in header", opts: optH,
		in: "<|channel|>final<|foo|><|message|>x", content: "<|channel|>final<|foo|><|message|>x"},
	{name: "harmony: message tag in a body", opts: optH,
		in: "<|channel|>final<|message|>a<|message|>b<|constrain|>c", content: "a<|message|>b<|constrain|>c"},
	{name: "harmony: unicode", opts: optH,
		in:        "<|channel|>analysis<|message|>Überlegung: 你好 😀<|end|><|start|>assistant<|channel|>commentary to=functions.wetter_für json<|message|>{\"city\": \"Zürich\", \"e\": \"😀\"}",
		reasoning: "Überlegung: 你好 😀",
		calls:     []ToolCall{call(0, "wetter_für", `{"city":"Zürich","e":"😀"}`)}},
}

func TestHarmonyEarly(t *testing.T) {
	runSteps(t, optH, []step{
		{"<|channel|>", Delta{}},
		{"analysis", Delta{}},
		{"<|message|>", Delta{}},
		{"Let", Delta{Reasoning: "Let"}},
		{" me <", Delta{Reasoning: " me "}},
		{"|x", Delta{Reasoning: "<|x"}},
		{"<|end|>", Delta{}},
		{"<|start|>", Delta{}},
		{"assistant", Delta{}},
		{"<|channel|>", Delta{}},
		{"final", Delta{}},
		{"<|message|>", Delta{}},
		{"Hi", Delta{Content: "Hi"}},
		{"<|end|>", Delta{}},
		{"<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>", Delta{}},
		{"{\"a\":", Delta{}},
		{" 1}", Delta{}},
		{"", Delta{ToolCalls: []ToolCall{call(0, "f", `{"a":1}`)}}},
	})
	runSteps(t, optH, []step{
		{hWeather, Delta{ToolCalls: []ToolCall{call(0, "get_weather", weatherArgs)}}},
		{"", Delta{}},
	})
	runSteps(t, optH, []step{
		{strings.Repeat("z", maxHeader+len(hMessage)-1), Delta{}},
		{"z", Delta{Content: strings.Repeat("z", maxHeader+len(hMessage))}},
		{"", Delta{}},
	})
}

// refHeaderItem matches the next item of a header after its role.
var (
	refHeaderRole = regexp.MustCompile(`^[^ <]+`)
	refHeaderItem = regexp.MustCompile(`^(?: +|<\|channel\|>([^ <]+)|<\|constrain\|>[^ <]+|to=([^ <]+)|[^ <]+)`)
)

// refHeader parses a header with regular expressions.
func refHeader(h string) (channel, recipient string, ok bool) {
	h = strings.TrimPrefix(h, "<|start|>")
	if w := refHeaderRole.FindString(h); w != "" && !strings.HasPrefix(w, "to=") {
		if w != "assistant" {
			return "", "", false
		}
		h = h[len(w):]
	}
	for h != "" {
		m := refHeaderItem.FindStringSubmatch(h)
		if m == nil || strings.HasPrefix(m[0], "to=") && m[2] == "" {
			return "", "", false
		}
		if m[1] != "" {
			channel = m[1]
		}
		if m[2] != "" {
			if recipient != "" {
				return "", "", false
			}
			recipient = m[2]
		}
		h = h[len(m[0]):]
	}
	return channel, recipient, channel != "" || recipient != ""
}

// refFirst returns the offset of the first of tags in s, and the tag.
func refFirst(s string, tags ...string) (int, string) {
	best, which := -1, ""
	for _, t := range tags {
		if i := strings.Index(s, t); i >= 0 && (best < 0 || i < best) {
			best, which = i, t
		}
	}
	return best, which
}

// refHarmony is the reference implementation of Parse for the Harmony
// format, on the whole text at once.
func refHarmony(s string, o Options) (content, reasoning string, calls []ToolCall) {
	var c, r strings.Builder
	rest := s
	for {
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest == "" {
			break
		}
		i, tag := refFirst(rest, "<|message|>", "<|end|>", "<|call|>", "<|return|>")
		if j := strings.Index(rest[1:], "<|start|>"); j >= 0 && (i < 0 || j+1 < i) {
			i, tag = j+1, "<|start|>"
		}
		kind, fn, header := 'c', "", ""
		switch {
		case i < 0:
			c.WriteString(rest)
			rest = ""
			continue
		case i > 256:
			c.WriteString(rest[:256])
			rest = rest[256:]
		case tag == "<|start|>":
			c.WriteString(rest[:i])
			rest = rest[i:]
			continue
		case tag != "<|message|>":
			c.WriteString(rest[:i])
			rest = rest[i+len(tag):]
			continue
		default:
			header = rest[:i]
			rest = rest[i+len("<|message|>"):]
			channel, recipient, ok := refHeader(header)
			switch {
			case !ok:
				c.WriteString(header + "<|message|>")
			case strings.HasPrefix(recipient, "functions.") && recipient != "functions.":
				if o.Tools {
					kind, fn = 'k', strings.TrimPrefix(recipient, "functions.")
				} else {
					c.WriteString(header + "<|message|>")
				}
			case channel == "analysis":
				kind = 'r'
			}
		}
		body := rest
		rest = ""
		if j, tag := refFirst(body, "<|end|>", "<|call|>", "<|return|>", "<|start|>", "<|channel|>"); j >= 0 {
			body, rest = body[:j], body[j:]
			if tag != "<|start|>" && tag != "<|channel|>" {
				rest = rest[len(tag):]
			}
		}
		switch kind {
		case 'r':
			r.WriteString(body)
		case 'k':
			if args, ok := compactObject([]byte(body)); ok {
				calls = append(calls, ToolCall{Index: len(calls), ID: o.IDFunc(len(calls)), Name: fn, Arguments: args})
			} else {
				c.WriteString(header + "<|message|>" + body)
			}
		default:
			c.WriteString(body)
		}
	}
	return c.String(), r.String(), calls
}

// harmonyFragments are the pieces the Harmony fuzz texts are made of.
var harmonyFragments = []string{
	hStart, hChannel, hMessage, hConstrain, hEnd, hCall, hReturn,
	"assistant", "analysis", "final", "commentary", " to=functions.f", " to=functions.get_time", " to=python",
	" json", "json", " ", "\n", "<|", "|>", "<", "to=", "user", "functions.",
	`{"a": [1, "x"]}`, "{", "}", `"`, "é", "😀",
	"<|chan", "<|mess", "<|en", "<|sta", strings.Repeat("x", 100),
}

func FuzzHarmony(f *testing.F) {
	for i, c := range harmonyCases {
		f.Add([]byte(c.in), uint8(4), uint64(i))
	}
	f.Add([]byte{1, 8, 2, 'r', 4, 0, 7, 1, 9, 2, 'c'}, uint8(4), uint64(1))
	f.Add([]byte{1, 10, 11, 3, 15, 2, 24, 5, 0, 7, 21, 12, 1, 10, 14, 2, 24}, uint8(4), uint64(2))
	f.Add([]byte{34, 34, 34, 2, 'a', 4, 34, 0, 'x'}, uint8(0), uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8, seed uint64) {
		fuzzCheck(t, fuzzText(harmonyFragments, data), fuzzOptions(Harmony, flags), seed)
	})
}

func BenchmarkHarmony(b *testing.B) {
	reply := "<|channel|>analysis<|message|>" + strings.Repeat("Let me think about the question. ", 50) +
		"<|end|><|start|>assistant<|channel|>final<|message|>" + strings.Repeat("Here is <b>the</b> answer. ", 50)
	benchmarkReply(b, optH, reply+"<|end|><|start|>assistant"+hWeather)
}

// benchmarkReply measures a parser fed reply in pieces of 4 bytes.
func benchmarkReply(b *testing.B, opts Options, reply string) {
	var ps []string
	for i := 0; i < len(reply); i += 4 {
		ps = append(ps, reply[i:min(i+4, len(reply))])
	}
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		p := mustNew(b, opts)
		for _, s := range ps {
			p.Add(s)
		}
		p.Finish()
	}
}
