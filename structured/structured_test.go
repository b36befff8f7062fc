package structured

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"inferno/constrain"
	"inferno/engine"
	"inferno/engine/enginetest"
	"inferno/gguf"
	"inferno/grammar"
	"inferno/parser"
	"inferno/sampling"
	"inferno/tokenizer"
)

var (
	tokOnce sync.Once
	tok     *tokenizer.Tokenizer
	tokErr  error
	compOne *Compiler
)

const vocabSize = 151936

// compiler returns a Compiler over the golden model's tokenizer (the real
// Qwen3 one), shared by the tests.
func compiler(t testing.TB) (*Compiler, *tokenizer.Tokenizer) {
	t.Helper()
	tokOnce.Do(func() {
		f, err := gguf.Open("../testdata/golden/tiny-q8_0.gguf")
		if err != nil {
			tokErr = err
			return
		}
		defer f.Close()
		if tok, tokErr = tokenizer.FromGGUF(f); tokErr != nil {
			return
		}
		im, _ := tok.TokenID("<|im_end|>")
		eot, _ := tok.TokenID("<|endoftext|>")
		compOne = NewCompiler(tok, vocabSize, map[int32]bool{im: true, eot: true})
	})
	if tokErr != nil {
		t.Fatal(tokErr)
	}
	return compOne, tok
}

func allowed(mask []uint64, id int32) bool { return mask[id/64]&(1<<(id%64)) != 0 }

// feed runs text's tokens (and the end-of-generation token) through c as
// the engine would, checking each is allowed by the mask first.
func feed(t *testing.T, c *Constraint, tok *tokenizer.Tokenizer, text string, end bool) {
	t.Helper()
	mask := make([]uint64, engine.MaskWords(vocabSize))
	ids := tok.Encode(text)
	if end {
		im, _ := tok.TokenID("<|im_end|>")
		ids = append(ids, im)
	}
	for i, id := range ids {
		c.FillMask(mask)
		if !allowed(mask, id) {
			t.Fatalf("token %d (%q) of %q not allowed", i, tok.Decode([]int32{id}), text)
		}
		if err := c.Accept(id); err != nil {
			t.Fatalf("token %d (%q) of %q: %v", i, tok.Decode([]int32{id}), text, err)
		}
	}
}

func TestToolCallsMatchTheParser(t *testing.T) {
	c, tok := compiler(t)
	weather := Tool{Name: "get_weather", Strict: true, Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}`)}
	anyArgs := Tool{Name: "ping"}
	reply := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>"
	second := "\n<tool_call>\n{\"name\": \"ping\", \"arguments\": {\"x\": [1, true]}}\n</tool_call>"
	for _, parallel := range []bool{false, true} {
		spec := &Spec{Kind: ToolCalls, Tools: []Tool{weather, anyArgs}, Parallel: parallel}
		con, err := c.New(context.Background(), spec, NoThinking)
		if err != nil {
			t.Fatal(err)
		}
		text := reply
		if parallel {
			text += second
		}
		feed(t, con, tok, text, true)
		if !con.Done() {
			t.Fatalf("parallel %v: not done", parallel)
		}
		_, _, calls, _ := parser.Parse(text, parser.Options{Format: parser.Qwen, Tools: true})
		if len(calls) != map[bool]int{false: 1, true: 2}[parallel] || calls[0].Name != "get_weather" || calls[0].Arguments != `{"city":"Paris","days":3}` {
			t.Errorf("parallel %v: parsed %+v", parallel, calls)
		}
	}
	// One call only: after it, only the end of generation.
	con, err := c.New(context.Background(), &Spec{Kind: ToolCalls, Tools: []Tool{weather}}, NoThinking)
	if err != nil {
		t.Fatal(err)
	}
	feed(t, con, tok, reply, false)
	mask := make([]uint64, engine.MaskWords(vocabSize))
	con.FillMask(mask)
	n := 0
	for _, w := range mask {
		for ; w != 0; w &= w - 1 {
			n++
		}
	}
	if n != len(c.eog) {
		t.Errorf("after one call %d tokens allowed, want the %d end-of-generation ids", n, len(c.eog))
	}
	// An unknown argument under strict, a wrong name.
	for _, bad := range []string{
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"town\": \"Paris\"}}",
		"<tool_call>\n{\"name\": \"get_time\"",
	} {
		con, _ := c.New(context.Background(), &Spec{Kind: ToolCalls, Tools: []Tool{weather}}, NoThinking)
		if accepts(con, tok, bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

// accepts reports whether every token of text is allowed in turn.
func accepts(c *Constraint, tok *tokenizer.Tokenizer, text string) bool {
	for _, id := range tok.Encode(text) {
		if c.Accept(id) != nil {
			return false
		}
	}
	return true
}

func TestThinking(t *testing.T) {
	c, tok := compiler(t)
	spec := &Spec{Kind: JSONSchema, Text: `{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": false}`}
	think, _ := tok.TokenID("<think>")
	im, _ := tok.TokenID("<|im_end|>")
	mask := make([]uint64, engine.MaskWords(vocabSize))

	// MayThink: <think> or the JSON may come first.
	con, err := c.New(context.Background(), spec, MayThink)
	if err != nil {
		t.Fatal(err)
	}
	con.FillMask(mask)
	if brace := tok.Encode("{")[0]; !allowed(mask, think) || !allowed(mask, brace) || allowed(mask, tok.Encode("x")[0]) || allowed(mask, im) {
		t.Errorf("first mask: <think> %v { %v x %v <|im_end|> %v", allowed(mask, think), allowed(mask, brace), allowed(mask, tok.Encode("x")[0]), allowed(mask, im))
	}
	feed(t, con, tok, "<think>\nLet me see: {\"ok\": maybe}.", false)
	con.FillMask(mask)
	if !con.Thinking() || allowed(mask, im) || !allowed(mask, tok.Encode("x")[0]) {
		t.Errorf("reasoning: thinking %v, <|im_end|> allowed %v", con.Thinking(), allowed(mask, im))
	}
	feed(t, con, tok, "\n</think>\n\n{\"ok\": true}", true)
	if !con.Done() || con.Thinking() {
		t.Errorf("done %v thinking %v", con.Done(), con.Thinking())
	}

	// Without <think> the constraint holds from the first token.
	con, _ = c.New(context.Background(), spec, MayThink)
	feed(t, con, tok, "{\"ok\": false}", true)
	if !con.Done() {
		t.Error("not done")
	}
	con, _ = c.New(context.Background(), spec, MayThink)
	if accepts(con, tok, "Sure! {") {
		t.Error("text before the JSON accepted")
	}
	con, _ = c.New(context.Background(), spec, MayThink)
	if accepts(con, tok, "\n{") {
		t.Error("a newline before the JSON accepted without reasoning")
	}

	// InThinking: free until </think>, then at most two newlines.
	con, _ = c.New(context.Background(), spec, InThinking)
	feed(t, con, tok, "hmm</think>\n\n{\"ok\":true}", true)
	con, _ = c.New(context.Background(), spec, InThinking)
	if accepts(con, tok, "hmm</think>\n\n\n{") {
		t.Error("three newlines accepted")
	}

	// NoThinking: <think> is not allowed.
	con, _ = c.New(context.Background(), spec, NoThinking)
	con.FillMask(mask)
	if allowed(mask, think) {
		t.Error("<think> allowed without thinking")
	}
}

func TestKinds(t *testing.T) {
	c, tok := compiler(t)
	for _, tc := range []struct {
		spec Spec
		ok   []string
		bad  []string
	}{
		{Spec{Kind: JSONObject}, []string{`{}`, `{"a": [1, 2, {"b": null}]}`}, []string{`[]`, `"x"`, `{"a" 1}`}},
		{Spec{Kind: GBNF, Text: "root ::= (\"yes\" | \"no\") \" \" [0-9]{2,3}\n"}, []string{"yes 12", "no 123"}, []string{"yes 1234", "maybe 12"}},
		{Spec{Kind: Regex, Text: `[A-Z][a-z]+ \d{4}`}, []string{"Paris 2024"}, []string{"paris 2024", "Paris 24"}},
		{Spec{Kind: Choice, Choices: []string{"red", "green", "blue"}}, []string{"red", "blue"}, []string{"reds", "yellow"}},
	} {
		for _, s := range tc.ok {
			con, err := c.New(context.Background(), &tc.spec, NoThinking)
			if err != nil {
				t.Fatalf("%v: %v", tc.spec.Kind, err)
			}
			feed(t, con, tok, s, true)
			if !con.Done() {
				t.Errorf("%v %q: not done", tc.spec.Kind, s)
			}
		}
		for _, s := range tc.bad {
			con, _ := c.New(context.Background(), &tc.spec, NoThinking)
			im, _ := tok.TokenID("<|im_end|>")
			if accepts(con, tok, s) && con.Accept(im) == nil {
				t.Errorf("%v %q accepted", tc.spec.Kind, s)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	c, _ := compiler(t)
	ctx := context.Background()
	var unsup *grammar.UnsupportedError
	if _, err := c.New(ctx, &Spec{Kind: JSONSchema, Text: `{"type": "object", "properties": {"a": {"type": "number", "multipleOf": 3}}}`}, NoThinking); !errors.As(err, &unsup) || unsup.Keyword != "multipleOf" {
		t.Errorf("multipleOf: %v", err)
	}
	var tool *ToolError
	_, err := c.New(ctx, &Spec{Kind: ToolCalls, Tools: []Tool{{Name: "a"}, {Name: "b", Parameters: json.RawMessage(`{"type": "object", "properties": {"x": {"type": "number", "multipleOf": 3}}}`)}}}, NoThinking)
	if !errors.As(err, &tool) || tool.Index != 1 || !errors.As(err, &unsup) {
		t.Errorf("tool: %v", err)
	}
	var limit *LimitError
	if _, err := c.New(ctx, &Spec{Kind: GBNF, Text: "root ::= \"" + strings.Repeat("a", MaxText) + "\""}, NoThinking); !errors.As(err, &limit) {
		t.Errorf("long grammar: %v", err)
	}
	if _, err := c.New(ctx, &Spec{Kind: Choice, Choices: make([]string, MaxChoices+1)}, NoThinking); !errors.As(err, &limit) {
		t.Errorf("many choices: %v", err)
	}
	for _, spec := range []Spec{{Kind: GBNF, Text: "root ::= (\"a\""}, {Kind: Regex, Text: "a("}, {Kind: JSONSchema, Text: "{"}, {Kind: ToolCalls}, {Kind: Choice}, {}} {
		if _, err := c.New(ctx, &spec, NoThinking); err == nil {
			t.Errorf("%+v: no error", spec)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	full := NewCompiler(c.tok, c.vocab, nil)
	for range cap(full.sem) {
		full.sem <- struct{}{}
	}
	if _, err := full.New(cctx, &Spec{Kind: JSONObject}, NoThinking); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}

func TestCacheKey(t *testing.T) {
	a := &Spec{Kind: JSONSchema, Text: `{"type":  "object"}`}
	b := &Spec{Kind: JSONSchema, Text: "{\"type\":\"object\"}\n"}
	if key(a, false) != key(b, false) {
		t.Error("the same schema spaced differently has two keys")
	}
	for _, other := range []*Spec{{Kind: JSONSchema, Text: `{"type":"object"}`, Strict: true}, {Kind: GBNF, Text: `{"type":"object"}`}} {
		if key(a, false) == key(other, false) {
			t.Errorf("%+v shares a key", other)
		}
	}
	if key(a, false) == key(a, true) {
		t.Error("thinking shares a key")
	}
	if key(&Spec{Kind: Choice, Choices: []string{"ab", "c"}}, false) == key(&Spec{Kind: Choice, Choices: []string{"a", "bc"}}, false) {
		t.Error("choices share a key")
	}
}

// BenchmarkFillMask measures a constraint's work per generated token: the
// mask and the step, over the tokens of a valid document (a warm cache:
// the per-state masks are computed on the first pass).
func BenchmarkFillMask(b *testing.B) {
	c, tok := compiler(b)
	spec := &Spec{Kind: JSONSchema, Text: `{"type": "array", "minItems": 2, "items": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string", "maxLength": 20}, "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}}}, "required": ["id", "name", "tags"], "additionalProperties": false}}`}
	doc := `[{"id": 12, "name": "Ann Smith", "tags": ["red", "blue"]}, {"id": 7, "name": "Bob", "tags": []}, {"id": 345, "name": "C. D. E.", "tags": ["green"]}]`
	ids := append(tok.Encode(doc), c.eog[0])
	mask := make([]uint64, engine.MaskWords(vocabSize))
	b.ResetTimer()
	for b.Loop() {
		con, err := c.New(context.Background(), spec, NoThinking)
		if err != nil {
			b.Fatal(err)
		}
		for _, id := range ids {
			con.FillMask(mask)
			if err := con.Accept(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids))/1e3, "us/token")
}

// BenchmarkPick measures the work a generated token costs the engine on
// the CPU apart from the forward pass (a scripted runner whose logits
// are flat but for one token): the sampler alone, and with a JSON schema's
// constraint (the mask, then sampling among the allowed tokens), at
// temperature 1 as a random model is the hardest case. Each op is a
// sequence of 128 tokens.
func BenchmarkPick(b *testing.B) {
	c, _ := compiler(b)
	spec := &Spec{Kind: JSONSchema, Text: `{"type": "array", "minItems": 40, "maxItems": 40, "items": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0, "maximum": 9999}, "name": {"type": "string", "maxLength": 12}, "ok": {"type": "boolean"}, "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "maxItems": 3}}, "required": ["id", "name", "ok", "tags"], "additionalProperties": false}}`}
	for _, constrained := range []bool{false, true} {
		name := map[bool]string{false: "unconstrained", true: "json_schema"}[constrained]
		b.Run(name, func(b *testing.B) {
			r := enginetest.New([]int32{100}, vocabSize, 1024)
			r.Fill = 100
			tokens := 0
			for b.Loop() {
				req := engine.Request{Prompt: []int32{1, 2, 3}, MaxTokens: 128, Sampling: sampling.Params{Temperature: 1}, EOG: map[int32]bool{c.eog[0]: true}}
				if constrained {
					con, err := c.New(context.Background(), spec, NoThinking)
					if err != nil {
						b.Fatal(err)
					}
					req.Constraint = con
				}
				seq, err := engine.NewSequence(r, nil, req)
				if err != nil {
					b.Fatal(err)
				}
				for !seq.Done() {
					if _, err := seq.Step(); err != nil {
						b.Fatal(err)
					}
				}
				tokens += seq.Generated()
				seq.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tokens)/1e3, "us/token")
		})
	}
}

func TestThinkingAfter(t *testing.T) {
	for _, tc := range []struct {
		prompt string
		want   Thinking
	}{
		{"<|im_start|>assistant\n<think>\n", InThinking},
		{"<|im_start|>assistant\n<think>\n\n</think>\n\n", NoThinking},
		{"<|im_start|>assistant\n", MayThink},
		{"", MayThink},
	} {
		if got := ThinkingAfter(tc.prompt); got != tc.want {
			t.Errorf("ThinkingAfter(%q) = %v, want %v", tc.prompt, got, tc.want)
		}
	}
}

// TestAmbiguousRefused: a grammar that parses its text in exponentially
// many ways is refused when it is compiled, with or without room for
// reasoning first, and the verdict is kept with the cached grammar.
func TestAmbiguousRefused(t *testing.T) {
	c, _ := compiler(t)
	ctx := context.Background()
	spec := &Spec{Kind: GBNF, Text: "root ::= x \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"\n"}
	for _, th := range []Thinking{NoThinking, MayThink, InThinking} {
		if _, err := c.New(ctx, spec, th); !errors.Is(err, constrain.ErrAmbiguous) || !strings.Contains(err.Error(), `rule "x"`) {
			t.Errorf("thinking %d: %v, want ErrAmbiguous naming rule x", th, err)
		}
	}
	n := c.cache.Len()
	if _, err := c.Compile(ctx, spec, false); !errors.Is(err, constrain.ErrAmbiguous) || c.cache.Len() != n {
		t.Errorf("again: %v, %d grammars cached (%d before)", err, c.cache.Len(), n)
	}
	for _, ok := range []*Spec{
		{Kind: GBNF, Text: "root ::= x \"b\"\nx ::= \"a\" x | \"\"\n"},
		{Kind: JSONObject},
		{Kind: ToolCalls, Parallel: true, Tools: []Tool{{Name: "a"}, {Name: "b", Parameters: json.RawMessage(`{"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "number"}}]}}}`)}}},
	} {
		if _, err := c.New(ctx, ok, MayThink); err != nil {
			t.Errorf("%v: %v", ok.Kind, err)
		}
	}
}
