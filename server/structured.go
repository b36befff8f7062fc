package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"inferno/constrain"
	"inferno/grammar"
	"inferno/parser"
	"inferno/structured"
	"inferno/tokenizer"
)

// Structured output: the request fields that constrain a reply to a
// grammar (OpenAI's response_format and tool_choice, llama.cpp's grammar
// and json_schema, vLLM's guided_* and structured_outputs), checked and
// turned into a structured.Spec, compiled into the engine.Request's
// Constraint before the request is submitted (the compilation counts
// against the request's place in the queue; the compiled grammar is
// cached by its text).

// structuredFields are the fields chat and completions share.
type structuredFields struct {
	ResponseFormat    *responseFormat    `json:"response_format"`
	Grammar           *string            `json:"grammar"`     // llama.cpp: GBNF
	JSONSchema        json.RawMessage    `json:"json_schema"` // llama.cpp: a JSON schema
	GuidedJSON        json.RawMessage    `json:"guided_json"` // vLLM: a schema, or its text
	GuidedRegex       *string            `json:"guided_regex"`
	GuidedChoice      []string           `json:"guided_choice"`
	GuidedGrammar     *string            `json:"guided_grammar"`
	StructuredOutputs *structuredOutputs `json:"structured_outputs"` // vLLM
}

// responseFormat is OpenAI's response_format, with llama.cpp's
// {"type": "json_object", "schema": ...}.
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
	Schema json.RawMessage `json:"schema"`
}

// structuredOutputs is vLLM's structured_outputs object.
type structuredOutputs struct {
	JSON              json.RawMessage `json:"json"`
	Regex             *string         `json:"regex"`
	Choice            []string        `json:"choice"`
	Grammar           *string         `json:"grammar"`
	JSONObject        *bool           `json:"json_object"`
	StructuralTag     json.RawMessage `json:"structural_tag"`
	WhitespacePattern *string         `json:"whitespace_pattern"`
}

// constraintSpec is a Spec with the request field it came from, for errors.
type constraintSpec struct {
	spec  *structured.Spec
	param string
}

// specs returns the constraints the fields ask for, each checked on its
// own; more than one is a conflict the caller reports.
func (f *structuredFields) specs() ([]constraintSpec, *apiError) {
	var out []constraintSpec
	add := func(param string, spec *structured.Spec) { out = append(out, constraintSpec{spec, param}) }
	if rf := f.ResponseFormat; rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			if present(rf.Schema) {
				text, e := schemaText(rf.Schema, "response_format.schema")
				if e != nil {
					return nil, e
				}
				add("response_format", &structured.Spec{Kind: structured.JSONSchema, Text: text})
			} else {
				add("response_format", &structured.Spec{Kind: structured.JSONObject})
			}
		case "json_schema":
			js := rf.JSONSchema
			if js == nil || !present(js.Schema) {
				return nil, badRequest("response_format.json_schema.schema", `response_format {"type": "json_schema"} needs "json_schema": {"name": ..., "schema": {...}}`)
			}
			text, e := schemaText(js.Schema, "response_format.json_schema.schema")
			if e != nil {
				return nil, e
			}
			add("response_format", &structured.Spec{Kind: structured.JSONSchema, Text: text, Strict: js.Strict != nil && *js.Strict})
		default:
			return nil, badRequest("response_format.type", `response_format.type %q is not one of "text", "json_object", "json_schema"`, rf.Type)
		}
	}
	if f.Grammar != nil {
		add("grammar", &structured.Spec{Kind: structured.GBNF, Text: *f.Grammar})
	}
	if present(f.JSONSchema) {
		text, e := schemaText(f.JSONSchema, "json_schema")
		if e != nil {
			return nil, e
		}
		add("json_schema", &structured.Spec{Kind: structured.JSONSchema, Text: text})
	}
	if present(f.GuidedJSON) {
		text, e := schemaText(f.GuidedJSON, "guided_json")
		if e != nil {
			return nil, e
		}
		add("guided_json", &structured.Spec{Kind: structured.JSONSchema, Text: text})
	}
	if f.GuidedRegex != nil {
		add("guided_regex", &structured.Spec{Kind: structured.Regex, Text: *f.GuidedRegex})
	}
	if f.GuidedChoice != nil {
		add("guided_choice", &structured.Spec{Kind: structured.Choice, Choices: f.GuidedChoice})
	}
	if f.GuidedGrammar != nil {
		add("guided_grammar", &structured.Spec{Kind: structured.GBNF, Text: *f.GuidedGrammar})
	}
	if so := f.StructuredOutputs; so != nil {
		switch {
		case present(so.StructuralTag):
			return nil, badRequest("structured_outputs.structural_tag", "structured_outputs.structural_tag is not supported")
		case so.WhitespacePattern != nil:
			return nil, badRequest("structured_outputs.whitespace_pattern", "structured_outputs.whitespace_pattern is not supported")
		}
		n := len(out)
		if present(so.JSON) {
			text, e := schemaText(so.JSON, "structured_outputs.json")
			if e != nil {
				return nil, e
			}
			add("structured_outputs.json", &structured.Spec{Kind: structured.JSONSchema, Text: text})
		}
		if so.Regex != nil {
			add("structured_outputs.regex", &structured.Spec{Kind: structured.Regex, Text: *so.Regex})
		}
		if so.Choice != nil {
			add("structured_outputs.choice", &structured.Spec{Kind: structured.Choice, Choices: so.Choice})
		}
		if so.Grammar != nil {
			add("structured_outputs.grammar", &structured.Spec{Kind: structured.GBNF, Text: *so.Grammar})
		}
		if so.JSONObject != nil && *so.JSONObject {
			add("structured_outputs.json_object", &structured.Spec{Kind: structured.JSONObject})
		}
		if len(out) == n {
			return nil, badRequest("structured_outputs", "structured_outputs names no constraint: give one of json, regex, choice, grammar, json_object")
		}
	}
	for _, c := range out {
		if c.spec.Kind == structured.Choice && len(c.spec.Choices) == 0 {
			return nil, badRequest(c.param, "%s must hold at least one string", c.param)
		}
		if err := structured.Check(c.spec); err != nil {
			return nil, constraintError(c.param, err)
		}
	}
	return out, nil
}

// present reports whether a raw field was given (not absent, not null).
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(bytes.TrimSpace(raw)) != "null"
}

// schemaText returns a schema field as JSON text: an object (or a
// boolean schema) as it is, a string holding one as its content.
func schemaText(raw json.RawMessage, param string) (string, *apiError) {
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || !json.Valid([]byte(s)) {
			return "", badRequest(param, "%s: a string must hold the JSON text of a schema", param)
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) == 0 || (raw[0] != '{' && string(raw) != "true" && string(raw) != "false") {
		return "", badRequest(param, "%s must be a JSON schema (an object)", param)
	}
	return string(raw), nil
}

// toolChoice is what a chat request's tool_choice and tools ask for.
type toolChoice struct {
	parse    bool             // tool calls in the reply are parsed
	spec     *structured.Spec // a call is forced: required or a named function
	oneCall  bool             // parallel_tool_calls: false
	forced   string           // the tool_choice as given, for errors
	toolName string
}

// wireTool is a tool of a chat request.
type wireTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
		Strict     *bool           `json:"strict"`
	} `json:"function"`
}

// toolChoiceOf checks tool_choice and parallel_tool_calls against tools:
// "auto" (the default) lets the model call any of them, "none" none;
// "required" forces at least one call of any, {"type": "function",
// "function": {"name": N}} one call of N.
func toolChoiceOf(req *chatRequest) (toolChoice, *apiError) {
	tc := toolChoice{oneCall: req.ParallelToolCalls != nil && !*req.ParallelToolCalls}
	choice := "auto"
	if present(req.ToolChoice) {
		if err := json.Unmarshal(req.ToolChoice, &choice); err != nil {
			var named struct {
				Type     string `json:"type"`
				Function *struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if err := json.Unmarshal(req.ToolChoice, &named); err != nil || named.Type != "function" || named.Function == nil || named.Function.Name == "" {
				return tc, badRequest("tool_choice", `tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name": ...}}`)
			}
			choice, tc.toolName = "function", named.Function.Name
		}
	}
	tc.forced = choice
	switch choice {
	case "auto":
		tc.parse = len(req.Tools) > 0
		return tc, nil
	case "none":
		return tc, nil
	case "required", "function":
	default:
		return tc, badRequest("tool_choice", `tool_choice %q is not one of "auto", "none", "required" (or a named function)`, choice)
	}
	if len(req.Tools) == 0 {
		return tc, badRequest("tool_choice", "tool_choice %s needs tools", describeChoice(tc))
	}
	spec := &structured.Spec{Kind: structured.ToolCalls, Parallel: !tc.oneCall && choice == "required"}
	for i, raw := range req.Tools {
		var t wireTool
		if err := json.Unmarshal(raw, &t); err != nil || t.Function == nil {
			return tc, badRequest(fmt.Sprintf("tools[%d]", i), `tools[%d] must be {"type": "function", "function": {"name": ..., "parameters": ...}}`, i)
		}
		if tc.toolName != "" && t.Function.Name != tc.toolName {
			continue
		}
		tool := structured.Tool{Name: t.Function.Name, Strict: t.Function.Strict != nil && *t.Function.Strict}
		if present(t.Function.Parameters) {
			text, e := schemaText(t.Function.Parameters, fmt.Sprintf("tools[%d].function.parameters", i))
			if e != nil {
				return tc, e
			}
			tool.Parameters = json.RawMessage(text)
		}
		spec.Tools = append(spec.Tools, tool)
	}
	if len(spec.Tools) == 0 {
		return tc, badRequest("tool_choice.function.name", "tool_choice names the function %q, which is not among the tools", tc.toolName)
	}
	if err := structured.Check(spec); err != nil {
		return tc, constraintError("tools", err)
	}
	tc.parse, tc.spec = true, spec
	return tc, nil
}

func describeChoice(tc toolChoice) string {
	if tc.toolName != "" {
		return fmt.Sprintf("{function %q}", tc.toolName)
	}
	return fmt.Sprintf("%q", tc.forced)
}

// chatConstraint returns the one constraint a chat request asks for (nil:
// none), from its structured-output fields and its tool choice.
func chatConstraint(req *chatRequest, tc toolChoice) (*constraintSpec, *apiError) {
	specs, e := req.structuredFields.specs()
	if e != nil {
		return nil, e
	}
	if tc.spec != nil {
		if len(specs) > 0 {
			return nil, badRequest("tool_choice", "tool_choice %s and %s both constrain the reply; give one", describeChoice(tc), specs[0].param)
		}
		specs = append(specs, constraintSpec{spec: tc.spec, param: "tools"})
	}
	return oneSpec(specs)
}

func oneSpec(specs []constraintSpec) (*constraintSpec, *apiError) {
	switch len(specs) {
	case 0:
		return nil, nil
	case 1:
		return &specs[0], nil
	}
	return nil, badRequest(specs[1].param, "%s and %s both constrain the reply; give one", specs[0].param, specs[1].param)
}

// compilers holds a structured.Compiler per vocabulary (the tokenizer and
// the model's logits), shared by the models and servers that use it.
var compilers sync.Map // compilerKey -> *structured.Compiler

type compilerKey struct {
	tok   *tokenizer.Tokenizer
	vocab int
	eog   string
}

func compilerFor(m *Model) *structured.Compiler {
	eog := make([]int32, 0, len(m.EOG))
	for id, on := range m.EOG {
		if on {
			eog = append(eog, id)
		}
	}
	slices.Sort(eog)
	k := compilerKey{tok: m.Tokenizer, vocab: m.Vocab, eog: fmt.Sprint(eog)}
	if c, ok := compilers.Load(k); ok {
		return c.(*structured.Compiler)
	}
	c, _ := compilers.LoadOrStore(k, structured.NewCompiler(m.Tokenizer, m.Vocab, m.EOG))
	return c.(*structured.Compiler)
}

// thinkingOf says where a chat reply starts with respect to the model's
// reasoning, from the rendered prompt (structured.ThinkingAfter).
func thinkingOf(m *Model, prompt string) structured.Thinking {
	if !m.Reasoning || m.format() != parser.Qwen {
		return structured.NoThinking
	}
	return structured.ThinkingAfter(prompt)
}

// constrainRequest compiles cs (nil: nothing to do) for a generation on m.
func constrainRequest(ctx context.Context, m *Model, cs *constraintSpec, thinking structured.Thinking) (*structured.Constraint, *apiError) {
	if cs == nil {
		return nil, nil
	}
	if cs.spec.Whitespace == 0 {
		cs.spec.Whitespace = m.JSONWhitespace
	}
	c, err := compilerFor(m).New(ctx, cs.spec, thinking)
	if err != nil {
		return nil, constraintError(cs.param, err)
	}
	return c, nil
}

// constraintError turns a failure to build a constraint from param into
// an API error: 400 for what the request got wrong (an unsupported schema
// keyword, a grammar that does not parse, one too large or too
// ambiguous), 500 otherwise.
func constraintError(param string, err error) *apiError {
	var unsup *grammar.UnsupportedError
	var limit *structured.LimitError
	var tool *structured.ToolError
	if errors.As(err, &tool) {
		param = fmt.Sprintf("tools[%d].function.parameters", tool.Index)
		err = tool.Err
	}
	switch {
	case errors.As(err, &unsup):
		e := badRequest(param, "%s: %v", param, err)
		e.Code = "unsupported_schema_keyword"
		return e
	case errors.As(err, &limit):
		e := badRequest(param, "%s: %v", param, err)
		e.Code = "grammar_too_large"
		return e
	case errors.Is(err, constrain.ErrAmbiguous):
		e := badRequest(param, "%s: %v", param, err)
		e.Code = "grammar_too_ambiguous"
		return e
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &apiError{Status: 499, Message: "the request was cancelled"} // nginx's "client closed request"
	case errors.Is(err, structured.ErrVocabulary):
		return &apiError{Status: http.StatusInternalServerError, Message: err.Error()}
	}
	e := badRequest(param, "%s: %v", param, err)
	e.Code = "invalid_grammar"
	return e
}

// completionConstraint returns the constraint a completions request asks
// for (nil: none); the prompt is raw text, so no reasoning is assumed.
func (f *structuredFields) completionConstraint(ctx context.Context, m *Model) (*structured.Constraint, *apiError) {
	specs, e := f.specs()
	if e != nil {
		return nil, e
	}
	cs, e := oneSpec(specs)
	if e != nil {
		return nil, e
	}
	return constrainRequest(ctx, m, cs, structured.NoThinking)
}
