package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"inferno/gguf"
	"inferno/tokenizer"
)

const (
	ggufPath   = "../testdata/golden/tiny-q8_0.gguf"
	publicPath = "../testdata/golden/chat_public.json"
	casesPath  = "../testdata/chat/cases.json"
	enginePath = "../testdata/chat/engine_cases.json"
)

// qwen3 holds the template and tokenizer read from the tiny GGUF once.
var qwen3 struct {
	once sync.Once
	src  string
	eos  string
	tok  *tokenizer.Tokenizer
	err  error
}

// loadQwen3 returns the chat template, end-of-sequence text and tokenizer
// that the tiny GGUF carries.
func loadQwen3(tb testing.TB) (src, eos string, tok *tokenizer.Tokenizer) {
	tb.Helper()
	qwen3.once.Do(func() {
		f, err := gguf.Open(ggufPath)
		if err != nil {
			qwen3.err = err
			return
		}
		defer f.Close()
		if qwen3.src, err = f.String("tokenizer.chat_template"); err != nil {
			qwen3.err = err
			return
		}
		if qwen3.tok, err = tokenizer.FromGGUF(f); err != nil {
			qwen3.err = err
			return
		}
		eosID, err := f.Int("tokenizer.ggml.eos_token_id")
		if err != nil {
			qwen3.err = err
			return
		}
		qwen3.eos = qwen3.tok.TokenText(int32(eosID))
	})
	if qwen3.err != nil {
		tb.Fatalf("reading %s: %v", ggufPath, qwen3.err)
	}
	return qwen3.src, qwen3.eos, qwen3.tok
}

func qwen3Template(tb testing.TB) *Template {
	tb.Helper()
	src, eos, _ := loadQwen3(tb)
	tmpl, err := New(src, "", eos)
	if err != nil {
		tb.Fatalf("New(Qwen3 template): %v", err)
	}
	return tmpl
}

func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

// diff describes where got and want first differ.
func diff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-60)
	return fmt.Sprintf("first difference at byte %d:\n got: %q\nwant: %q", i,
		got[lo:min(len(got), i+60)], want[lo:min(len(want), i+60)])
}

func TestGGUFTemplateIsQwen3(t *testing.T) {
	src, eos, _ := loadQwen3(t)
	var cfg struct {
		ChatTemplate string `json:"chat_template"`
		EOSToken     string `json:"eos_token"`
	}
	readJSON(t, "../testdata/qwen3-tokenizer/tokenizer_config.json", &cfg)
	if src != cfg.ChatTemplate {
		t.Errorf("the GGUF's chat template differs from tokenizer_config.json's")
	}
	if eos != cfg.EOSToken {
		t.Errorf("GGUF eos token = %q, tokenizer_config.json has %q", eos, cfg.EOSToken)
	}
}

// TestPublicGolden renders the conversations of chat_public.json with the
// template read from the GGUF and checks the text and its token ids.
func TestPublicGolden(t *testing.T) {
	_, _, tok := loadQwen3(t)
	tmpl := qwen3Template(t)
	var cases []struct {
		Messages            []Message `json:"messages"`
		AddGenerationPrompt bool      `json:"add_generation_prompt"`
		EnableThinking      *bool     `json:"enable_thinking"`
		Rendered            string    `json:"rendered"`
		IDs                 []int32   `json:"ids"`
	}
	readJSON(t, publicPath, &cases)
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for i, c := range cases {
		opts := Options{AddGenerationPrompt: c.AddGenerationPrompt}
		if c.EnableThinking != nil {
			opts.Kwargs = map[string]any{"enable_thinking": *c.EnableThinking}
		}
		got, err := tmpl.Render(c.Messages, opts)
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if got != c.Rendered {
			t.Errorf("case %d: %s", i, diff(got, c.Rendered))
			continue
		}
		if ids := tok.Encode(got); !slices.Equal(ids, c.IDs) {
			t.Errorf("case %d: ids\n got %v\nwant %v", i, ids, c.IDs)
		}
	}
}

// wireMessage is a message in OpenAI's wire format, as cases.json has it.
type wireMessage struct {
	Role             string `json:"role"`
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
}

func (w wireMessage) message() Message {
	m := Message{
		Role:             w.Role,
		Content:          w.Content,
		ReasoningContent: w.ReasoningContent,
		ToolCallID:       w.ToolCallID,
		Name:             w.Name,
	}
	for _, tc := range w.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return m
}

// rawKwargs converts the kwargs of a case to Options.Kwargs, keeping each
// value's JSON text so that key order and number types survive.
func rawKwargs(raw map[string]json.RawMessage) map[string]any {
	if len(raw) == 0 {
		return nil
	}
	kw := make(map[string]any, len(raw))
	for k, v := range raw {
		kw[k] = v
	}
	return kw
}

// TestGeneratedCases renders the conversations that gen.py rendered with
// Python's Jinja2 as transformers does.
func TestGeneratedCases(t *testing.T) {
	qwen := qwen3Template(t)
	chatml, err := New("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name                 string                     `json:"name"`
		Template             string                     `json:"template"`
		Messages             []wireMessage              `json:"messages"`
		Tools                []json.RawMessage          `json:"tools"`
		AddGenerationPrompt  bool                       `json:"add_generation_prompt"`
		ContinueFinalMessage bool                       `json:"continue_final_message"`
		Kwargs               map[string]json.RawMessage `json:"kwargs"`
		BOSToken             string                     `json:"bos_token"`
		EOSToken             string                     `json:"eos_token"`
		Rendered             string                     `json:"rendered"`
	}
	readJSON(t, casesPath, &cases)
	if len(cases) < 15 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var tmpl *Template
			switch c.Template {
			case "qwen3":
				tmpl = qwen
			case "chatml":
				tmpl = chatml
			default:
				src, err := os.ReadFile(filepath.Join("../testdata/chat/templates", c.Template+".jinja"))
				if err != nil {
					t.Fatal(err)
				}
				if tmpl, err = New(string(src), c.BOSToken, c.EOSToken); err != nil {
					t.Fatal(err)
				}
			}
			var msgs []Message
			for _, w := range c.Messages {
				msgs = append(msgs, w.message())
			}
			got, err := tmpl.Render(msgs, Options{
				Tools:                c.Tools,
				AddGenerationPrompt:  c.AddGenerationPrompt,
				ContinueFinalMessage: c.ContinueFinalMessage,
				Kwargs:               rawKwargs(c.Kwargs),
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.Rendered {
				t.Error(diff(got, c.Rendered))
			}
		})
	}
}

// TestEngineCases renders the small templates of engine_cases.json and
// compares with Python's Jinja2: output, or failure.
func TestEngineCases(t *testing.T) {
	var cases []struct {
		Name     string                     `json:"name"`
		Source   string                     `json:"source"`
		Kwargs   map[string]json.RawMessage `json:"kwargs"`
		Rendered *string                    `json:"rendered"`
		Error    string                     `json:"error"`
	}
	readJSON(t, enginePath, &cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			tmpl, err := New(c.Source, "", "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Render([]Message{{Role: "user", Content: "hi"}}, Options{Kwargs: rawKwargs(c.Kwargs)})
			switch {
			case c.Rendered == nil && err == nil:
				t.Errorf("rendered %q, want an error like Python's %q", got, c.Error)
			case c.Rendered == nil:
				t.Logf("error %v (Python: %s)", err, c.Error)
			case err != nil:
				t.Errorf("error %v, want %q", err, *c.Rendered)
			case got != *c.Rendered:
				t.Error(diff(got, *c.Rendered))
			}
		})
	}
}

// TestKeyOrder checks that tools and tool-call arguments keep the client's
// key order, which Go maps would sort.
func TestKeyOrder(t *testing.T) {
	tmpl := qwen3Template(t)
	tool := `{"type":"function","function":{"name":"zoo","parameters":{"type":"object",` +
		`"required":["zebra"],"properties":{"zebra":{"type":"string"},"aardvark":{"type":"number","default":1.0}}},` +
		`"description":"Find animals."}}`
	msgs := []Message{
		{Role: "user", Content: "Find a zebra."},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "1", Name: "zoo", Arguments: `{"zebra": "Grévy", "aardvark": 2.50, "b": {"y": 1, "x": [true, null]}}`}}},
		{Role: "tool", ToolCallID: "1", Content: "found"},
	}
	got, err := tmpl.Render(msgs, Options{Tools: []json.RawMessage{json.RawMessage(tool)}, AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type": "function", "function": {"name": "zoo", "parameters": {"type": "object", "required": ["zebra"], ` +
			`"properties": {"zebra": {"type": "string"}, "aardvark": {"type": "number", "default": 1.0}}}, "description": "Find animals."}}`,
		`{"name": "zoo", "arguments": {"zebra": "Grévy", "aardvark": 2.5, "b": {"y": 1, "x": [true, null]}}}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered text lacks %s\nin:\n%s", want, got)
		}
	}
}

func TestToolCallArguments(t *testing.T) {
	tmpl, err := New(`{% for m in messages %}{% for c in m.tool_calls %}{{ c.function.arguments is string }}:{{ c.function.arguments | tojson }};{% endfor %}{% endfor %}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render([]Message{{Role: "assistant", ToolCalls: []ToolCall{
		{Name: "a", Arguments: ""},
		{Name: "b", Arguments: "not json"},
		{Name: "c", Arguments: `{"k": 1} trailing`},
		{Name: "d", Arguments: ` {"k": [1, 2.0]} `},
		{Name: "e", Arguments: `[1, "x"]`},
	}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `False:{};True:"not json";True:"{\"k\": 1} trailing";False:{"k": [1, 2.0]};False:[1, "x"];`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestChatMLFallback(t *testing.T) {
	tmpl, err := New("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Source() != ChatML {
		t.Errorf("Source() = %q, want ChatML", tmpl.Source())
	}
	got, err := tmpl.Render([]Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}}, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	src, _, _ := loadQwen3(t)
	if q := qwen3Template(t); q.Source() != src {
		t.Error("Source() differs from the source given to New")
	}
}

func TestContinueFinalMessage(t *testing.T) {
	tmpl := qwen3Template(t)
	msgs := []Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello, I am"}}
	got, err := tmpl.Render(msgs, Options{ContinueFinalMessage: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello, I am"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := tmpl.Render(msgs, Options{ContinueFinalMessage: true, AddGenerationPrompt: true}); err == nil {
		t.Error("ContinueFinalMessage with AddGenerationPrompt: no error")
	}
	if _, err := tmpl.Render(msgs[:1], Options{ContinueFinalMessage: true}); err == nil {
		t.Error("ContinueFinalMessage after a user message: no error")
	}
	// The template drops the <think> part of the content, so it cannot be
	// found in the text.
	think := []Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "<think>x</think>Hello"}}
	if _, err := tmpl.Render(think, Options{ContinueFinalMessage: true}); err == nil {
		t.Error("ContinueFinalMessage with content the template rewrites: no error")
	}
}

func TestRenderErrors(t *testing.T) {
	tmpl := qwen3Template(t)
	user := Message{Role: "user", Content: "hi"}
	for _, tc := range []struct {
		name string
		msgs []Message
		opts Options
		want string
	}{
		{"no messages", nil, Options{}, "no messages"},
		{"unknown role", []Message{user, {Role: "developer", Content: "x"}}, Options{}, `message 1: unknown role "developer"`},
		{"empty role", []Message{{Content: "x"}}, Options{}, `unknown role ""`},
		{"tool calls on user", []Message{{Role: "user", ToolCalls: []ToolCall{{Name: "f"}}}}, Options{}, "cannot have tool calls"},
		{"tool call id on user", []Message{{Role: "user", ToolCallID: "1"}}, Options{}, "cannot have a tool call id"},
		{"invalid tool", []Message{user}, Options{Tools: []json.RawMessage{json.RawMessage(`{"type":`)}}, "tool 0: invalid JSON"},
		{"tool with trailing data", []Message{user}, Options{Tools: []json.RawMessage{json.RawMessage(`{} {}`)}}, "tool 0: invalid JSON"},
		{"reserved kwarg", []Message{user}, Options{Kwargs: map[string]any{"messages": 1}}, `"messages" cannot be set`},
		{"internal kwarg", []Message{user}, Options{Kwargs: map[string]any{tojsonName: 1}}, "cannot be set"},
		{"bad kwarg", []Message{user}, Options{Kwargs: map[string]any{"x": json.RawMessage(`{`)}}, `Kwargs["x"]`},
		{"unmarshalable kwarg", []Message{user}, Options{Kwargs: map[string]any{"x": make(chan int)}}, `Kwargs["x"]`},
	} {
		_, err := tmpl.Render(tc.msgs, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestRaiseException(t *testing.T) {
	tmpl, err := New(`{% for m in messages %}{% if m.role == 'system' and not loop.first %}{{ raise_exception('System message must be first') }}{% endif %}{% endfor %}ok`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render([]Message{{Role: "user"}, {Role: "system"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "System message must be first") {
		t.Errorf("error %v, want the template's message", err)
	}
	if got, err := tmpl.Render([]Message{{Role: "system"}, {Role: "user"}}, Options{}); err != nil || got != "ok" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestKwargs(t *testing.T) {
	tmpl, err := New(`{{ bos_token }}|{{ eos_token }}|{{ a | tojson }}|{{ b | tojson }}|{{ c | tojson }}|{{ d | tojson }}|{{ e is defined }}`, "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		Y int     `json:"y"`
		X float64 `json:"x"`
	}
	got, err := tmpl.Render([]Message{{Role: "user"}}, Options{Kwargs: map[string]any{
		"eos_token": "<end>",
		"a":         map[string]any{"z": 1, "a": []any{2.0, "s", nil, true}},
		"b":         json.RawMessage(`{"z": 1, "a": 1.0}`),
		"c":         point{Y: 1, X: 2},
		"d":         json.Number("3.0"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `<s>|<end>|{"a": [2.0, "s", null, true], "z": 1}|{"z": 1, "a": 1.0}|{"y": 1, "x": 2}|3.0|False`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestPyFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", -2.5: "-2.5", 0.1: "0.1", 1e15: "1000000000000000.0", 1e16: "1e+16",
		123456789: "123456789.0", 1.5e-5: "1.5e-05", 1e-4: "0.0001", 1e-5: "1e-05", 1e100: "1e+100",
		2.5e-300: "2.5e-300", 1.7976931348623157e308: "1.7976931348623157e+308", 5e-324: "5e-324",
		0.30000000000000004: "0.30000000000000004", 9007199254740993: "9007199254740992.0",
	} {
		if got := pyFloatRepr(f); got != want {
			t.Errorf("pyFloatRepr(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestStrftimeNow(t *testing.T) {
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return time.Date(2025, time.March, 7, 9, 5, 3, 0, time.UTC) }
	tmpl, err := New(`{{ strftime_now("%d %b %Y") }}|{{ strftime_now("%A %B %-d, %Y %H:%M:%S %p %I %j %y %e %%") }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render([]Message{{Role: "user"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "07 Mar 2025|Friday March 7, 2025 09:05:03 AM 09 066 25  7 %"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestHostileTemplates checks that templates built to exhaust the engine
// fail cleanly.
func TestHostileTemplates(t *testing.T) {
	r := strings.Repeat
	for name, src := range map[string]string{
		"too long":           "{{ 'x' }}" + r(" ", maxSourceLen),
		"deep brackets":      "{{ " + r("(", 200) + "1" + r(")", 200) + " }}",
		"deep lists":         "{{ " + r("[", 200) + r("]", 200) + " }}",
		"deep blocks":        r("{% if true %}", 200) + r("{% endif %}", 200),
		"deep set blocks":    r("{% set x %}", 200) + r("{% endset %}", 200),
		"unclosed tag":       "{{ x ",
		"unclosed block":     "{% if x %}",
		"unknown filter":     "{{ x | nosuchfilter }}",
		"unknown statement":  "{% nosuch %}",
		"bad expression":     "{{ 1 + }}",
		"deep unclosed list": r("{{ [", 150),
	} {
		tmpl, err := New(src, "", "")
		if err == nil {
			_, err = tmpl.Render([]Message{{Role: "user", Content: "x"}}, Options{})
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for name, src := range map[string]string{
		"runaway recursion":  `{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`,
		"mutual recursion":   `{% macro f() %}{{ g() }}{% endmacro %}{% macro g() %}{{ f() }}{% endmacro %}{{ f() }}`,
		"caller recursion":   `{% macro f() %}{{ caller() }}{% endmacro %}{% macro g() %}{% call f() %}{{ g() }}{% endcall %}{% endmacro %}{{ g() }}`,
		"huge range":         `{% for i in range(1000000000) %}x{% endfor %}`,
		"raise":              `{{ raise_exception('no') }}`,
		"tojson of function": `{{ range | tojson }}`,
	} {
		tmpl, err := New(src, "", "")
		if err != nil {
			t.Errorf("%s: New: %v", name, err)
			continue
		}
		if _, err := tmpl.Render([]Message{{Role: "user", Content: "x"}}, Options{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Legitimate recursion is allowed up to the limit.
	tmpl, err := New(`{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% else %}done{% endif %}{% endmacro %}{{ f(depth) }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for depth, ok := range map[int]bool{maxMacroDepth - 1: true, maxMacroDepth: false} {
		got, err := tmpl.Render([]Message{{Role: "user"}}, Options{Kwargs: map[string]any{"depth": depth}})
		if ok && (err != nil || got != "done") {
			t.Errorf("recursion %d deep: %q, %v", depth, got, err)
		}
		if !ok && err == nil {
			t.Errorf("recursion %d deep: no error", depth)
		}
	}
}

// TestEnginePanicIsAnError checks that a panic inside the engine comes back
// as an error. The engine's selectattr slices out of range when its first
// argument is shorter than a test name.
func TestEnginePanicIsAnError(t *testing.T) {
	tmpl, err := New(`{{ messages | selectattr('x') | list }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render([]Message{{Role: "user"}}, Options{})
	if err == nil {
		t.Skip("the engine no longer panics here")
	}
	if !strings.Contains(err.Error(), "engine panic") {
		t.Errorf("error %v, want an engine panic", err)
	}
}

func TestPrepare(t *testing.T) {
	for src, want := range map[string]string{
		"{{ x | tojson }}":                                    "{{ x | " + tojsonName + " }}",
		"{{- x|tojson(indent=2) -}}":                          "{{- x|" + tojsonName + "(indent=2) -}}",
		"{% set y = x |\n tojson %}":                          "{% set y = x |\n " + tojsonName + " %}",
		"{{ '| tojson' ~ tojson ~ a.tojson }}":                "{{ '| tojson' ~ tojson ~ a.tojson }}",
		"{# x | tojson #}":                                    "{# x | tojson #}",
		"{% raw %}{{ x | tojson }}{% endraw %}{{ x|tojson }}": "{% raw %}{{ x | tojson }}{% endraw %}{{ x|" + tojsonName + " }}",
		"{%- macro m() -%} a {%- endmacro %}": "{%- macro m() -%}{% set " + depthVar + " = " + enterName + "() -%} a " +
			"{%- set " + depthVar + " = " + exitName + "() %}{%- endmacro %}",
		"a { b } {{ 'x }}' }} c": "a { b } {{ 'x }}' }} c",
	} {
		got, err := prepare(src)
		if err != nil || got != want {
			t.Errorf("prepare(%q) = %q, %v\nwant %q", src, got, err, want)
		}
	}
}

func TestConcurrentRender(t *testing.T) {
	tmpl := qwen3Template(t)
	msgs := conversation(10)
	want, err := tmpl.Render(msgs, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				got, err := tmpl.Render(msgs, Options{AddGenerationPrompt: true})
				if err == nil && got != want {
					err = errors.New("concurrent render differs")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// conversation returns n messages: a system prompt, then user and assistant
// turns with a tool call and its answer.
func conversation(n int) []Message {
	msgs := []Message{{Role: "system", Content: "You are a helpful assistant."}}
	for i := 1; len(msgs) < n; i++ {
		switch i % 4 {
		case 1:
			msgs = append(msgs, Message{Role: "user", Content: fmt.Sprintf("Question %d: what is the weather like in Paris today?", i)})
		case 2:
			msgs = append(msgs, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c", Name: "get_weather", Arguments: `{"location": "Paris", "unit": "celsius"}`}}})
		case 3:
			msgs = append(msgs, Message{Role: "tool", ToolCallID: "c", Content: `{"temp": 18, "sky": "cloudy"}`})
		default:
			msgs = append(msgs, Message{Role: "assistant", Content: "It is 18 °C and cloudy in Paris.", ReasoningContent: "The tool says 18 and cloudy."})
		}
	}
	return msgs
}

func BenchmarkRender(b *testing.B) {
	tmpl := qwen3Template(b)
	msgs := conversation(10)
	tools := []json.RawMessage{json.RawMessage(`{"type": "function", "function": {"name": "get_weather", "description": "Get the weather.", ` +
		`"parameters": {"type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["location"]}}}`)}
	opts := Options{Tools: tools, AddGenerationPrompt: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Render(msgs, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNew(b *testing.B) {
	src, eos, _ := loadQwen3(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(src, "", eos); err != nil {
			b.Fatal(err)
		}
	}
}
