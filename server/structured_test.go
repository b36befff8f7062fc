package server

// Structured output end to end: the golden model (the real Qwen3
// tokenizer and chat template, random weights) on the CPU, sampled at
// temperature 1, through the continuous-batching scheduler and the
// official OpenAI Go client. A random model is the hardest case for a
// constraint: every reply that stops must still parse and validate.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"inferno/chat"
	"inferno/parser"
	"inferno/placement"
	"inferno/scheduler"
)

// modelServer is a Server running the golden model on the CPU, with a
// slot for each of the samples requests a test sends at once.
func modelServer(t testing.TB) *testServer {
	t.Helper()
	m := tinyModel(t)
	tmpl, err := chat.New(m.ChatTemplate, "", "<|im_end|>")
	if err != nil {
		t.Fatal(err)
	}
	b, err := placement.Open(m, placement.Config{Backend: "pool", Threads: 2, Context: 2048})
	if err != nil {
		t.Fatal(err)
	}
	br, err := b.NewBatchRunner(placement.BatchConfig{Sequences: samples})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := scheduler.NewBatcher(br, scheduler.Config{Parallel: samples, Queue: 64, Tokenizer: m.Tokenizer})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{sched: sched}
	ts.model = &Model{Name: "tiny", Tokenizer: m.Tokenizer, Template: tmpl, EOG: m.EOG, Format: parser.Qwen, Reasoning: true,
		Context: b.MaxLen(), Vocab: br.Vocab(), Scheduler: sched, Created: time.Unix(1700000000, 0)}
	ts.srv = New(Config{Queue: 64, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}) // serve's default --queue: with none, a request that arrives while the last case's sequences still hold their slots gets 503
	ts.srv.SetModel(ts.model)
	ts.Server = httptest.NewServer(ts.srv)
	t.Cleanup(func() {
		ts.Server.Close()
		sched.Close()
		br.Close()
		b.Close()
	})
	return ts
}

// noThinkClient is an OpenAI client whose chat requests turn the model's
// reasoning off: a random model that opens <think> (allowed first, as a
// reasoning model's reply starts) would reason until max_tokens, never
// reaching the constrained answer. TestThinkingThenConstraint covers
// reasoning.
func noThinkClient(ts *testServer) openai.Client {
	return openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0),
		option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": false}))
}

// personSchema keeps a random model's replies short: bounded strings and
// numbers, enumerations.
const personSchema = `{"type": "object", "properties": {
	"name": {"type": "string", "maxLength": 8},
	"age": {"type": "integer", "minimum": 0, "maximum": 120},
	"role": {"enum": ["admin", "user", "guest"]},
	"active": {"type": "boolean"}},
	"required": ["name", "age", "role", "active"], "additionalProperties": false}`

const weatherParams = `{"type": "object", "properties": {"city": {"type": "string", "maxLength": 6}, "unit": {"enum": ["c", "f"]}}, "required": ["city", "unit"], "additionalProperties": false}`
const timeParams = `{"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"], "additionalProperties": false}`

func compileSchema(t testing.TB, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validate reports whether text is JSON valid against s.
func validate(s *jsonschema.Schema, text string) error {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// replies runs n requests concurrently and returns their results.
func replies[T any](n int, do func(i int) (T, error)) ([]T, []error) {
	out, errs := make([]T, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = do(i) })
	}
	wg.Wait()
	return out, errs
}

const (
	samples     = 8   // requests per case
	replyTokens = 400 // a reply that has not stopped by then counts as too long
)

// checkStops fails unless most replies stopped (the rest hit max_tokens).
func checkStops(t *testing.T, what string, stopped, n int) {
	t.Helper()
	if stopped*4 < n*3 {
		t.Errorf("%s: %d of %d replies stopped within %d tokens", what, stopped, n, replyTokens)
	}
}

func TestClientJSONSchema(t *testing.T) {
	ts := modelServer(t)
	c := noThinkClient(ts)
	schema := compileSchema(t, personSchema)
	var raw map[string]any
	if err := json.Unmarshal([]byte(personSchema), &raw); err != nil {
		t.Fatal(err)
	}
	params := func(i int) openai.ChatCompletionNewParams {
		p := userTurn("Describe a person as JSON.")
		p.Temperature = openai.Float(1)
		p.Seed = openai.Int(int64(i))
		p.MaxTokens = openai.Int(replyTokens)
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "person", Schema: raw, Strict: openai.Bool(true)}}}
		return p
	}
	resps, errs := replies(samples, func(i int) (*openai.ChatCompletion, error) {
		return c.Chat.Completions.New(context.Background(), params(i))
	})
	stopped := 0
	for i, r := range resps {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		ch := r.Choices[0]
		if ch.FinishReason != "stop" {
			continue
		}
		stopped++
		if err := validate(schema, ch.Message.Content); err != nil {
			t.Errorf("reply %d %q: %v", i, ch.Message.Content, err)
		}
	}
	checkStops(t, "json_schema", stopped, samples)

	// Streaming: the deltas add up to a valid document.
	streams, errs := replies(4, func(i int) (openai.ChatCompletionAccumulator, error) {
		var acc openai.ChatCompletionAccumulator
		s := c.Chat.Completions.NewStreaming(context.Background(), params(100+i))
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		return acc, s.Err()
	})
	for i, acc := range streams {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if ch := acc.Choices[0]; ch.FinishReason == "stop" {
			if err := validate(schema, ch.Message.Content); err != nil {
				t.Errorf("streamed reply %d %q: %v", i, ch.Message.Content, err)
			}
		}
	}
}

func TestClientJSONObject(t *testing.T) {
	ts := modelServer(t)
	c := noThinkClient(ts)
	resps, errs := replies(samples, func(i int) (*openai.ChatCompletion, error) {
		p := userTurn("Answer in JSON.")
		p.Temperature = openai.Float(1)
		p.Seed = openai.Int(int64(i))
		p.MaxTokens = openai.Int(replyTokens)
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
		return c.Chat.Completions.New(context.Background(), p)
	})
	for i, r := range resps {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		ch := r.Choices[0]
		if ch.FinishReason != "stop" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(ch.Message.Content), &v); err != nil {
			t.Errorf("reply %d %q is not a JSON object: %v", i, ch.Message.Content, err)
		}
	}
	// Any JSON object has unbounded strings: a random model need not stop
	// soon, so only validity is asked here.
}

func weatherTools(t *testing.T) []openai.ChatCompletionToolUnionParam {
	t.Helper()
	var w, tm map[string]any
	if json.Unmarshal([]byte(weatherParams), &w) != nil || json.Unmarshal([]byte(timeParams), &tm) != nil {
		t.Fatal("bad test schema")
	}
	return []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Parameters: w, Strict: openai.Bool(true)}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time", Parameters: tm}),
	}
}

func TestClientToolChoice(t *testing.T) {
	ts := modelServer(t)
	c := noThinkClient(ts)
	schemas := map[string]*jsonschema.Schema{"get_weather": compileSchema(t, weatherParams), "get_time": compileSchema(t, timeParams)}
	tools := weatherTools(t)
	for _, tc := range []struct {
		name     string
		choice   openai.ChatCompletionToolChoiceOptionUnionParam
		parallel bool
		only     string // the one tool allowed, if named
	}{
		{"required", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}, true, ""},
		{"required one", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}, false, ""},
		{"named", openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"}), false, "get_time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resps, errs := replies(samples, func(i int) (*openai.ChatCompletion, error) {
				p := userTurn("What is the weather in Paris?")
				p.Tools = tools
				p.ToolChoice = tc.choice
				if !tc.parallel {
					p.ParallelToolCalls = openai.Bool(false)
				}
				p.Temperature = openai.Float(1)
				p.Seed = openai.Int(int64(i))
				p.MaxTokens = openai.Int(replyTokens)
				return c.Chat.Completions.New(context.Background(), p)
			})
			stopped := 0
			for i, r := range resps {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				ch := r.Choices[0]
				if ch.FinishReason == "length" {
					continue
				}
				stopped++
				calls := ch.Message.ToolCalls
				if ch.FinishReason != "tool_calls" || len(calls) == 0 || ch.Message.Content != "" {
					t.Fatalf("reply %d: finish %q, %d calls, content %q", i, ch.FinishReason, len(calls), ch.Message.Content)
				}
				if !tc.parallel && len(calls) != 1 {
					t.Errorf("reply %d: %d calls with parallel_tool_calls false", i, len(calls))
				}
				for _, call := range calls {
					s := schemas[call.Function.Name]
					if s == nil || tc.only != "" && call.Function.Name != tc.only {
						t.Errorf("reply %d calls %q", i, call.Function.Name)
						continue
					}
					if err := validate(s, call.Function.Arguments); err != nil {
						t.Errorf("reply %d: %s(%s): %v", i, call.Function.Name, call.Function.Arguments, err)
					}
				}
			}
			checkStops(t, tc.name, stopped, samples)
		})
	}
}

// post sends a raw chat or completions body and returns the reply's text
// and finish reason.
func rawReply(t *testing.T, ts *testServer, path, body string) (string, string) {
	t.Helper()
	status, v, _ := ts.post(t, path, body)
	if status != http.StatusOK {
		t.Fatalf("%s: status %d: %v", body, status, v)
	}
	ch := v["choices"].([]any)[0].(map[string]any)
	finish, _ := ch["finish_reason"].(string)
	if msg, ok := ch["message"].(map[string]any); ok {
		s, _ := msg["content"].(string)
		return s, finish
	}
	s, _ := ch["text"].(string)
	return s, finish
}

// TestOtherFields drives llama.cpp's and vLLM's fields, on both endpoints.
func TestOtherFields(t *testing.T) {
	ts := modelServer(t)
	person := compileSchema(t, personSchema)
	isPerson := func(s string) error { return validate(person, s) }
	matches := func(re string) func(string) error {
		r := regexp.MustCompile("^(?:" + re + ")$")
		return func(s string) error {
			if !r.MatchString(s) {
				return fmt.Errorf("does not match %s", re)
			}
			return nil
		}
	}
	oneOf := func(s string) error {
		if s != "red" && s != "green" && s != "blue" {
			return fmt.Errorf("not a choice")
		}
		return nil
	}
	gbnf := `root ::= "The answer is " ("yes" | "no") "." ([0-9]{1,3})?`
	gbnfJSON, _ := json.Marshal(gbnf)
	quoted, _ := json.Marshal(personSchema)
	for _, tc := range []struct {
		name, fields string
		check        func(string) error
	}{
		{"grammar", `"grammar": ` + string(gbnfJSON), matches(`The answer is (yes|no)\.([0-9]{1,3})?`)},
		{"llama.cpp json_schema", `"json_schema": ` + personSchema, isPerson},
		{"json_object with schema", `"response_format": {"type": "json_object", "schema": ` + personSchema + `}`, isPerson},
		{"guided_json", `"guided_json": ` + personSchema, isPerson},
		{"guided_json text", `"guided_json": ` + string(quoted), isPerson},
		{"guided_regex", `"guided_regex": "[A-Z][a-z]{2,5}-[0-9]{3}"`, matches(`[A-Z][a-z]{2,5}-[0-9]{3}`)},
		{"guided_choice", `"guided_choice": ["red", "green", "blue"]`, oneOf},
		{"guided_grammar", `"guided_grammar": ` + string(gbnfJSON), matches(`The answer is (yes|no)\.([0-9]{1,3})?`)},
		{"structured_outputs json", `"structured_outputs": {"json": ` + personSchema + `}`, isPerson},
		{"structured_outputs choice", `"structured_outputs": {"choice": ["red", "green", "blue"]}`, oneOf},
		{"structured_outputs regex", `"structured_outputs": {"regex": "[0-9]{4}"}`, matches(`[0-9]{4}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
				prompt := `"messages": [{"role": "user", "content": "Go."}], "chat_template_kwargs": {"enable_thinking": false}`
				if path == "/v1/completions" {
					prompt = `"prompt": "Answer: "`
				}
				texts, _ := replies(4, func(i int) ([2]string, error) {
					body := fmt.Sprintf(`{%s, %s, "temperature": 1, "seed": %d, "max_tokens": %d}`, prompt, tc.fields, i, replyTokens)
					text, finish := rawReply(t, ts, path, body)
					return [2]string{text, finish}, nil
				})
				stopped := 0
				for i, r := range texts {
					if r[1] != "stop" {
						continue
					}
					stopped++
					if err := tc.check(r[0]); err != nil {
						t.Errorf("%s reply %d %q: %v", path, i, r[0], err)
					}
				}
				if stopped < 3 {
					t.Errorf("%s: %d of 4 replies stopped", path, stopped)
				}
			}
		})
	}
}

// TestConstraintErrors checks the 400s of structured output.
func TestConstraintErrors(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "{}"})
	user := `"messages":[{"role":"user","content":"Hi"}]`
	tool := `{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}`
	big := `"` + strings.Repeat("a", 200<<10) + `"`
	for _, tc := range []struct {
		name, path, body string
		param, code, msg string
	}{
		{"unsupported keyword", "/v1/chat/completions", `{` + user + `, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"n": {"type": "number", "multipleOf": 7}}}}}}`,
			"response_format", "unsupported_schema_keyword", "multipleOf"},
		{"unsupported keyword in a tool", "/v1/chat/completions", `{` + user + `, "tools": [` + tool + `, {"type": "function", "function": {"name": "g", "parameters": {"type": "object", "properties": {"n": {"type": "number", "multipleOf": 7}}}}}], "tool_choice": "required"}`,
			"tools[1].function.parameters", "unsupported_schema_keyword", "multipleOf"},
		{"bad GBNF", "/v1/chat/completions", `{` + user + `, "grammar": "root ::= (\"a\" | "}`, "grammar", "invalid_grammar", ""},
		{"no root", "/v1/completions", `{"prompt": "x", "grammar": "start ::= \"a\""}`, "grammar", "invalid_grammar", "root"},
		{"bad regex", "/v1/completions", `{"prompt": "x", "guided_regex": "a(b"}`, "guided_regex", "invalid_grammar", ""},
		{"bad schema", "/v1/chat/completions", `{` + user + `, "guided_json": "{not json"}`, "guided_json", "", "JSON text of a schema"},
		{"schema not an object", "/v1/chat/completions", `{` + user + `, "json_schema": [1]}`, "json_schema", "", "must be a JSON schema"},
		{"json_schema without schema", "/v1/chat/completions", `{` + user + `, "response_format": {"type": "json_schema"}}`, "response_format.json_schema.schema", "", "needs"},
		{"too large", "/v1/completions", `{"prompt": "x", "grammar": "root ::= ` + strings.ReplaceAll(big, `"`, `\"`) + `"}`, "grammar", "grammar_too_large", "at most"},
		{"empty choice", "/v1/completions", `{"prompt": "x", "guided_choice": []}`, "guided_choice", "", "at least one"},
		{"two constraints", "/v1/chat/completions", `{` + user + `, "response_format": {"type": "json_object"}, "grammar": "root ::= \"a\""}`, "grammar", "", "both constrain"},
		{"two vLLM constraints", "/v1/completions", `{"prompt": "x", "structured_outputs": {"regex": "a", "choice": ["a"]}}`, "structured_outputs.choice", "", "both constrain"},
		{"structural tag", "/v1/completions", `{"prompt": "x", "structured_outputs": {"structural_tag": {}}}`, "structured_outputs.structural_tag", "", "not supported"},
		{"empty structured_outputs", "/v1/completions", `{"prompt": "x", "structured_outputs": {}}`, "structured_outputs", "", "names no constraint"},
		{"tool_choice and response_format", "/v1/chat/completions", `{` + user + `, "tools": [` + tool + `], "tool_choice": "required", "response_format": {"type": "json_object"}}`, "tool_choice", "", "both constrain"},
		{"named tool missing", "/v1/chat/completions", `{` + user + `, "tools": [` + tool + `], "tool_choice": {"type": "function", "function": {"name": "g"}}}`, "tool_choice.function.name", "", `"g"`},
		{"bad tool_choice", "/v1/chat/completions", `{` + user + `, "tools": [` + tool + `], "tool_choice": "always"}`, "tool_choice", "", "not one of"},
		{"tool_choice object", "/v1/chat/completions", `{` + user + `, "tools": [` + tool + `], "tool_choice": {"type": "function"}}`, "tool_choice", "", "must be"},
		{"response_format type", "/v1/chat/completions", `{` + user + `, "response_format": {"type": "yaml"}}`, "response_format.type", "", "not one of"},
		{"field type", "/v1/chat/completions", `{` + user + `, "guided_choice": "red"}`, "guided_choice", "", "expected an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, v, _ := ts.post(t, tc.path, tc.body)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %v", status, v)
			}
			e := errorOf(t, v)
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not contain %q", msg, tc.msg)
			}
			if e["param"] != tc.param {
				t.Errorf("param %v, want %q (%v)", e["param"], tc.param, e["message"])
			}
			if tc.code != "" && e["code"] != tc.code {
				t.Errorf("code %v, want %q (%v)", e["code"], tc.code, e["message"])
			}
		})
	}
}

// TestGBNFErrorPosition: a grammar that does not parse is answered with
// where it failed.
func TestGBNFErrorPosition(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "a"})
	status, v, _ := ts.post(t, "/v1/completions", `{"prompt": "x", "grammar": "root ::= \"a\"\nnext ::= [a-"}`)
	if status != http.StatusBadRequest {
		t.Fatalf("status %d: %v", status, v)
	}
	msg, _ := errorOf(t, v)["message"].(string)
	if !regexp.MustCompile(`line 2|2:|offset|column|byte`).MatchString(msg) {
		t.Errorf("message %q gives no position", msg)
	}
}

// TestThinkingThenConstraint: with reasoning on, the reply reasons freely
// and the JSON comes after </think> (a scripted model writes both).
func TestThinkingThenConstraint(t *testing.T) {
	reply := "<think>\nA person? Let me write {\"name\": 1}.\n</think>\n\n{\"name\": \"Ann\", \"age\": 30, \"role\": \"user\", \"active\": true}"
	ts := newTestServer(t, serverOpts{reply: reply})
	body := `{"messages": [{"role": "user", "content": "Who?"}], "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": ` + personSchema + `}}}`
	status, v, _ := ts.post(t, "/v1/chat/completions", body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, v)
	}
	ch := v["choices"].([]any)[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	if msg["reasoning_content"] != "A person? Let me write {\"name\": 1}." || ch["finish_reason"] != "stop" {
		t.Errorf("reasoning %q finish %v", msg["reasoning_content"], ch["finish_reason"])
	}
	if err := validate(compileSchema(t, personSchema), msg["content"].(string)); err != nil {
		t.Errorf("content %q: %v", msg["content"], err)
	}

	// With thinking turned off by the template, the constraint holds from
	// the first token: the scripted <think> is not allowed, so the reply
	// is whatever the schema lets through, and valid when it stops.
	body = `{"messages": [{"role": "user", "content": "Who?"}], "chat_template_kwargs": {"enable_thinking": false}, "max_tokens": 300, "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": ` + personSchema + `}}}`
	text, finish := rawReply(t, ts, "/v1/chat/completions", body)
	if strings.Contains(text, "think") || finish == "stop" && validate(compileSchema(t, personSchema), text) != nil {
		t.Errorf("no thinking: %q (%s)", text, finish)
	}
}

// TestParallelToolCallsAuto: with tool_choice "auto" and
// parallel_tool_calls false, only the first call is returned and
// generation stops there.
func TestParallelToolCallsAuto(t *testing.T) {
	call := "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>"
	ts := newTestServer(t, serverOpts{reply: call + "\n" + call + "\n" + call})
	tool := `{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}`
	for _, stream := range []bool{false, true} {
		body := fmt.Sprintf(`{"messages": [{"role": "user", "content": "x"}], "tools": [%s], "parallel_tool_calls": false, "stream": %t}`, tool, stream)
		req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if n := bytes.Count(b, []byte(`"name":"f"`)); n != 1 || !bytes.Contains(b, []byte(`"finish_reason":"tool_calls"`)) {
			t.Errorf("stream %v: %d calls: %s", stream, n, b)
		}
	}
}

// FuzzStructuredRequest sends arbitrary structured-output fields: whatever
// they hold, the answer is a success or a well-formed 400, never a 500 or
// a panic.
//
//	go test ./server -run '^$' -fuzz FuzzStructuredRequest -fuzztime 60s
func FuzzStructuredRequest(f *testing.F) {
	for _, s := range []string{
		`"response_format": {"type": "json_schema", "json_schema": {"name": "p", "strict": true, "schema": {"type": "object", "properties": {"a": {"type": "integer", "maximum": 9}}, "required": ["a"]}}}`,
		`"response_format": {"type": "json_object"}`,
		`"response_format": {"type": "json_object", "schema": {"enum": [1, "x", null]}}`,
		`"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"b": {"type": "boolean"}}}}}], "tool_choice": "required", "parallel_tool_calls": false`,
		`"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "f"}}`,
		`"grammar": "root ::= [a-c]{1,3} (\"!\" | \"?\")"`,
		`"json_schema": {"type": "array", "items": {"type": "string", "maxLength": 2}, "maxItems": 2}`,
		`"guided_json": "{\"type\": \"number\"}"`,
		`"guided_regex": "(ab|c)+[0-9]{2}"`,
		`"guided_choice": ["x", "yy"]`,
		`"guided_grammar": "root ::= \"a\"+"`,
		`"structured_outputs": {"choice": ["a", "b"]}`,
		`"structured_outputs": {"json_object": true}`,
	} {
		f.Add(uint8(0), []byte(`{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8, `+s+`}`))
		f.Add(uint8(1), []byte(`{"prompt": "Hi", "max_tokens": 8, `+s+`}`))
	}
	ts := newTestServer(f, serverOpts{reply: `{"a": 1}`, ctx: 128, maxBody: 1 << 16})
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := []string{"/v1/chat/completions", "/v1/completions"}[which%2]
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		ts.srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
		case 400, 413, 503:
			var e struct {
				Error *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" {
				t.Fatalf("%s: status %d with body %q", path, rec.Code, rec.Body.Bytes())
			}
		default:
			t.Fatalf("%s: status %d for %q: %s", path, rec.Code, body, rec.Body.Bytes())
		}
	})
}

// TestJSONWhitespace: the whitespace between a constrained reply's JSON
// tokens is at most what the model's JSONWhitespace allows (serve's
// --json-whitespace): by default a single space or newline, with -1
// none, with 4 a newline and up to 3 blanks; never a run of mixed blanks
// beyond that, which the audit saw the shipped model fill replies with.
func TestJSONWhitespace(t *testing.T) {
	ts := modelServer(t)
	for _, tc := range []struct {
		ws, longest int
	}{{0, 1}, {-1, 0}, {4, 4}} {
		t.Run(fmt.Sprint(tc.ws), func(t *testing.T) {
			ts.model.JSONWhitespace = tc.ws
			texts, _ := replies(6, func(i int) ([2]string, error) {
				body := fmt.Sprintf(`{"prompt": "Answer: ", "response_format": {"type": "json_object", "schema": %s}, "temperature": 1, "seed": %d, "max_tokens": %d}`, personSchema, 100+i, replyTokens)
				text, finish := rawReply(t, ts, "/v1/completions", body)
				return [2]string{text, finish}, nil
			})
			for i, r := range texts {
				if run := longestBlank(r[0]); run > tc.longest {
					t.Errorf("reply %d %q: a run of %d blanks between tokens, want at most %d", i, r[0], run, tc.longest)
				}
			}
		})
	}
}

// longestBlank returns the longest run of whitespace outside the string
// literals of JSON text s.
func longestBlank(s string) int {
	longest, run, inString, escaped := 0, 0, false, false
	for _, c := range []byte(s) {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString, run = true, 0
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			run++
			longest = max(longest, run)
		default:
			run = 0
		}
	}
	return longest
}
