// Package structured turns what a request asks of a reply's shape (a JSON
// schema, any JSON object, a GBNF grammar, a regular expression, a choice
// of strings, a forced tool call) into an engine.Constraint: it builds the
// grammar with package grammar's front ends, compiles it against the
// model's vocabulary with package constrain (cached by its text), and
// follows the model's reasoning, leaving the text between <think> and
// </think> free.
//
// A Compiler serves one model; it is safe for concurrent use. A Constraint
// serves one generation.
package structured

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"inferno/constrain"
	"inferno/grammar"
	"inferno/tokenizer"
)

// Kind is what a Spec constrains the reply to.
type Kind uint8

const (
	// JSONSchema: a JSON value valid against the schema in Spec.Text.
	JSONSchema Kind = iota + 1
	// JSONObject: any JSON object (OpenAI's JSON mode).
	JSONObject
	// GBNF: the text llama.cpp's GBNF grammar in Spec.Text matches.
	GBNF
	// Regex: the text the regular expression in Spec.Text matches whole.
	Regex
	// Choice: exactly one of Spec.Choices.
	Choice
	// ToolCalls: calls of Spec.Tools in the Qwen3 chat template's form,
	// <tool_call>\n{"name": NAME, "arguments": ARGS}\n</tool_call>, the
	// arguments valid against the tool's parameters; one call, or with
	// Spec.Parallel one or more separated by newlines.
	ToolCalls
)

var kindNames = [...]string{JSONSchema: "json_schema", JSONObject: "json_object", GBNF: "grammar", Regex: "regex", Choice: "choice", ToolCalls: "tool_calls"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// A Spec is one request's constraint on its reply.
type Spec struct {
	Kind Kind
	// Text is the schema (JSON), the GBNF grammar or the regular
	// expression.
	Text string
	// Strict: in a schema, an object without additionalProperties allows
	// only its listed properties (OpenAI's strict mode); otherwise JSON
	// Schema's default, any other property, holds.
	Strict  bool
	Choices []string
	Tools   []Tool
	// Parallel allows several tool calls in one reply.
	Parallel bool
	// Whitespace bounds the whitespace between JSON tokens
	// (grammar.SchemaOptions.MaxWhitespace): 0 means
	// grammar.DefaultMaxWhitespace (a space or a newline), a negative
	// value none, n > 1 a newline and up to n-1 spaces and tabs.
	Whitespace int
}

// A Tool is a function the model may be made to call.
type Tool struct {
	Name string
	// Parameters is the JSON schema of the arguments; empty means any
	// JSON object.
	Parameters json.RawMessage
	// Strict, as Spec.Strict, for the arguments.
	Strict bool
}

// Limits on what a request may ask for; larger ones are refused with a
// *LimitError before anything is compiled.
const (
	// MaxText is the most bytes of a schema, grammar or expression.
	MaxText = 128 << 10
	// MaxChoices is the most strings of a Choice.
	MaxChoices = 1024
	// MaxTools is the most tools of a ToolCalls.
	MaxTools = 128
	// MaxStates is the most automaton states a compiled grammar may have.
	MaxStates = 200_000
	// CacheSize is the most compiled grammars a Compiler keeps.
	CacheSize = 256
)

// ErrVocabulary reports that the model's vocabulary could not be prepared
// for constraints (a fault of the model, not of a request).
var ErrVocabulary = errors.New("structured: the model's vocabulary")

// LimitError reports a Spec beyond one of the limits above.
type LimitError struct{ What string }

func (e *LimitError) Error() string { return "structured: " + e.What }

// Thinking says how the reply begins with respect to the model's
// reasoning.
type Thinking uint8

const (
	// NoThinking: the constraint applies from the first token (no
	// reasoning model, or reasoning turned off by the template).
	NoThinking Thinking = iota
	// MayThink: the reply may open with <think>; then the text up to
	// </think> is free and the constraint applies after it (after up to
	// two newlines, which the reply parser drops). Otherwise the
	// constraint applies from the first token.
	MayThink
	// InThinking: the prompt ended with <think>: the reply is free up to
	// </think>, constrained after it.
	InThinking
)

// ThinkingAfter says how a reasoning model's reply to prompt, rendered
// by its chat template, begins: inside its reasoning (the prompt ends
// with <think>), after it (reasoning turned off: the prompt ends with
// </think>), or free to open it.
func ThinkingAfter(prompt string) Thinking {
	p := strings.TrimRight(prompt, " \t\r\n")
	switch {
	case strings.HasSuffix(p, "<think>"):
		return InThinking
	case strings.HasSuffix(p, "</think>"):
		return NoThinking
	}
	return MayThink
}

// A Compiler builds constraints for one model.
type Compiler struct {
	tok   *tokenizer.Tokenizer
	vocab int
	eog   []int32

	think, endThink int32 // -1 without reasoning tokens

	once  sync.Once
	cache *constrain.Cache
	err   error
	sem   chan struct{} // bounds concurrent compilations
}

// NewCompiler returns a Compiler for a model of vocab token ids (its
// logits), tokenized by tok, whose end-of-generation ids are eog. The
// vocabulary's byte strings are built on the first Compile.
func NewCompiler(tok *tokenizer.Tokenizer, vocab int, eog map[int32]bool) *Compiler {
	c := &Compiler{tok: tok, vocab: vocab, think: -1, endThink: -1, sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))}
	for id := range eog {
		if id >= 0 && int(id) < vocab {
			c.eog = append(c.eog, id)
		}
	}
	slices.Sort(c.eog)
	a, ok1 := tok.TokenID("<think>")
	b, ok2 := tok.TokenID("</think>")
	if ok1 && ok2 {
		c.think, c.endThink = a, b
	}
	return c
}

// Vocab returns the model's vocabulary as constrain sees it: every token's
// bytes, but none for control tokens (<|im_end|>, ...), which may appear
// in a constrained reply only as its end-of-generation token.
func Vocab(tok *tokenizer.Tokenizer, vocab int, eog []int32) (*constrain.Vocab, error) {
	toks := make([][]byte, vocab)
	n := tok.VocabSize()
	for id := range min(vocab, n) {
		switch tok.TokenType(int32(id)) {
		case tokenizer.TypeControl, tokenizer.TypeUnused, tokenizer.TypeUnknown:
			continue
		}
		toks[id] = tok.DecodeBytes([]int32{int32(id)})
	}
	return constrain.NewVocab(toks, eog)
}

func (c *Compiler) prepare() error {
	c.once.Do(func() {
		v, err := Vocab(c.tok, c.vocab, c.eog)
		if err != nil {
			c.err = fmt.Errorf("%w: %w", ErrVocabulary, err)
			return
		}
		c.cache = constrain.NewCache(v, CacheSize)
	})
	return c.err
}

// Check reports the first limit spec exceeds, or a spec that is not well
// formed (no kind, no tools), without building anything.
func Check(spec *Spec) error {
	switch spec.Kind {
	case JSONSchema, GBNF, Regex:
		if len(spec.Text) > MaxText {
			return &LimitError{fmt.Sprintf("the %s is %d bytes long; at most %d are allowed", spec.Kind, len(spec.Text), MaxText)}
		}
	case JSONObject:
	case Choice:
		if len(spec.Choices) == 0 {
			return errors.New("structured: no choices")
		}
		if len(spec.Choices) > MaxChoices {
			return &LimitError{fmt.Sprintf("%d choices; at most %d are allowed", len(spec.Choices), MaxChoices)}
		}
		n := 0
		for _, s := range spec.Choices {
			n += len(s)
		}
		if n > MaxText {
			return &LimitError{fmt.Sprintf("the choices are %d bytes long; at most %d are allowed", n, MaxText)}
		}
	case ToolCalls:
		if len(spec.Tools) == 0 {
			return errors.New("structured: no tools")
		}
		if len(spec.Tools) > MaxTools {
			return &LimitError{fmt.Sprintf("%d tools; at most %d are allowed", len(spec.Tools), MaxTools)}
		}
		n := 0
		for _, t := range spec.Tools {
			n += len(t.Parameters) + len(t.Name)
		}
		if n > MaxText {
			return &LimitError{fmt.Sprintf("the tools' parameters are %d bytes long; at most %d are allowed", n, MaxText)}
		}
	default:
		return fmt.Errorf("structured: unknown kind %d", spec.Kind)
	}
	return nil
}

// schemaOptions returns the JSON options of a schema or tool of spec.
func schemaOptions(spec *Spec, strict bool) grammar.SchemaOptions {
	ws := spec.Whitespace
	switch {
	case ws == 0:
		ws = grammar.DefaultMaxWhitespace
	case ws < 0:
		ws = 0
	}
	return grammar.SchemaOptions{MaxWhitespace: ws, AllowAdditionalDefault: !strict}
}

// replyPrefix prefixes the names of the rules of a reply's grammar after
// reasoning.
const replyPrefix = "reply-"

// Grammar builds the grammar spec asks for; with thinking, up to two
// newlines may come first (the Qwen3 template writes "</think>\n\n").
// Front-end errors are returned as the grammar package gives them (a
// *grammar.UnsupportedError for a schema keyword it cannot enforce).
func Grammar(spec *Spec, thinking bool) (*grammar.Grammar, error) {
	if err := Check(spec); err != nil {
		return nil, err
	}
	var g *grammar.Grammar
	var err error
	switch spec.Kind {
	case JSONSchema:
		g, err = grammar.FromJSONSchema([]byte(spec.Text), schemaOptions(spec, spec.Strict))
	case JSONObject:
		g = grammar.JSONObject(schemaOptions(spec, false))
	case GBNF:
		g, err = grammar.ParseGBNF(spec.Text)
	case Regex:
		g, err = grammar.Regex(spec.Text)
	case Choice:
		g, err = grammar.Choices(spec.Choices)
	case ToolCalls:
		g, err = toolGrammar(spec)
	}
	if err != nil || !thinking {
		return g, err
	}
	b := grammar.NewBuilder()
	body := b.Include(replyPrefix, g)
	if err := b.Define("root", grammar.Sequence(grammar.Rep(grammar.Lit("\n"), 0, 2), body)); err != nil {
		return nil, err
	}
	return b.Grammar("root")
}

// toolGrammar builds the tool-call wrapper around each tool's arguments.
func toolGrammar(spec *Spec) (*grammar.Grammar, error) {
	b := grammar.NewBuilder()
	calls := make([]*grammar.Expr, 0, len(spec.Tools))
	for i, t := range spec.Tools {
		var args *grammar.Grammar
		if len(bytes.TrimSpace(t.Parameters)) == 0 || string(bytes.TrimSpace(t.Parameters)) == "null" {
			args = grammar.JSONObject(schemaOptions(spec, t.Strict))
		} else {
			var err error
			if args, err = grammar.FromJSONSchema(t.Parameters, schemaOptions(spec, t.Strict)); err != nil {
				return nil, &ToolError{Index: i, Name: t.Name, Err: err}
			}
		}
		name, err := jsonString(t.Name)
		if err != nil {
			return nil, &ToolError{Index: i, Name: t.Name, Err: err}
		}
		calls = append(calls, grammar.Sequence(
			grammar.Lit("<tool_call>\n{\"name\": "+name+", \"arguments\": "),
			b.Include(fmt.Sprintf("tool%d-", i), args),
			grammar.Lit("}\n</tool_call>")))
	}
	if err := b.Define("call", grammar.Choice(calls...)); err != nil {
		return nil, err
	}
	root := b.Ref("call")
	if spec.Parallel {
		root = grammar.Sequence(root, grammar.Star(grammar.Sequence(grammar.Lit("\n"), b.Ref("call"))))
	}
	if err := b.Define("root", root); err != nil {
		return nil, err
	}
	return b.Grammar("root")
}

// ToolError reports a tool whose arguments' grammar could not be built.
type ToolError struct {
	Index int
	Name  string
	Err   error
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %d (%q): %v", e.Index, e.Name, e.Err)
}

func (e *ToolError) Unwrap() error { return e.Err }

// jsonString returns s as a JSON string, without HTML escaping.
func jsonString(s string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// key returns the cache key of spec: its kind, options and canonical text.
func key(spec *Spec, thinking bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%t|%t|%t|%d|", spec.Kind, spec.Strict, spec.Parallel, thinking, spec.Whitespace)
	switch spec.Kind {
	case JSONSchema:
		b.WriteString(compactJSON(spec.Text))
	case GBNF, Regex:
		b.WriteString(spec.Text)
	case Choice:
		for _, s := range spec.Choices {
			fmt.Fprintf(&b, "%d:%s", len(s), s)
		}
	case ToolCalls:
		for _, t := range spec.Tools {
			p := compactJSON(string(t.Parameters))
			fmt.Fprintf(&b, "%d:%s%t%d:%s", len(t.Name), t.Name, t.Strict, len(p), p)
		}
	}
	return b.String()
}

// compactJSON returns s without insignificant space (s itself when it is
// not JSON: the front end reports that).
func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// Compile returns spec's grammar compiled against the model's vocabulary,
// from the cache when the same spec was compiled before. Concurrent
// compilations are bounded by the CPUs; ctx ends the wait for one. A
// grammar that constrain's Probe finds too ambiguous to follow is refused
// with its error, which wraps constrain.ErrAmbiguous (the probe runs once
// per cached grammar).
func (c *Compiler) Compile(ctx context.Context, spec *Spec, thinking bool) (*constrain.Compiled, error) {
	if err := Check(spec); err != nil {
		return nil, err
	}
	if err := c.prepare(); err != nil {
		return nil, err
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()
	cm, err := c.cache.Get(key(spec, thinking), func() (*grammar.Grammar, error) { return Grammar(spec, thinking) })
	if err != nil {
		return nil, err
	}
	if n := cm.States(); n > MaxStates {
		return nil, &LimitError{fmt.Sprintf("the grammar compiles to %d states; at most %d are allowed", n, MaxStates)}
	}
	if err := cm.Probe(); err != nil {
		var amb *constrain.AmbiguousError
		if thinking && errors.As(err, &amb) {
			// Name the request's own rule, not its copy after reasoning.
			e := *amb
			e.Rule = strings.TrimPrefix(e.Rule, replyPrefix)
			err = &e
		}
		return nil, err
	}
	return cm, nil
}

// New returns a constraint for one generation of spec, starting as
// thinking says.
func (c *Compiler) New(ctx context.Context, spec *Spec, thinking Thinking) (*Constraint, error) {
	if thinking != NoThinking && c.endThink < 0 {
		thinking = NoThinking
	}
	con := &Constraint{state: state(thinking), think: c.think, endThink: c.endThink, eog: c.eog}
	if thinking != InThinking {
		cm, err := c.Compile(ctx, spec, false)
		if err != nil {
			return nil, err
		}
		con.m = cm.NewMatcher()
	}
	if thinking != NoThinking {
		cm, err := c.Compile(ctx, spec, true)
		if err != nil {
			return nil, err
		}
		con.after = cm
	}
	return con, nil
}

// Constraint is an engine.Constraint over a constrain.Matcher that leaves
// the model's reasoning free but for its end: the reply cannot end before
// </think>, so that a reply that stops holds the constrained text.
type Constraint struct {
	m               *constrain.Matcher  // nil while thinking
	after           *constrain.Compiled // the grammar after </think>, newlines first
	state           state
	think, endThink int32
	eog             []int32
}

type state uint8

const (
	active   state = state(NoThinking)
	mayThink state = state(MayThink)
	thinking state = state(InThinking)
)

// Active implements engine.Constraint.
func (c *Constraint) Active() bool { return true }

// Thinking reports whether the model is reasoning: every token but the
// end-of-generation ones is allowed.
func (c *Constraint) Thinking() bool { return c.state == thinking }

// FillMask implements engine.Constraint.
func (c *Constraint) FillMask(mask []uint64) {
	if c.state == thinking {
		for i := range mask {
			mask[i] = ^uint64(0)
		}
		for _, id := range c.eog {
			mask[id/64] &^= 1 << (id % 64)
		}
		return
	}
	c.m.FillMask(mask)
	if c.state == mayThink {
		mask[c.think/64] |= 1 << (c.think % 64)
	}
}

// Accept implements engine.Constraint.
func (c *Constraint) Accept(id int32) error {
	switch c.state {
	case thinking:
		if id == c.endThink {
			c.state = active
			c.m = c.after.NewMatcher()
		}
		return nil
	case mayThink:
		if id == c.think {
			c.state = thinking
			c.m = nil
			return nil
		}
		c.state = active
	}
	return c.m.Accept(id)
}

// Done implements engine.Constraint.
func (c *Constraint) Done() bool { return c.m != nil && c.m.Done() }
