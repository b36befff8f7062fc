// Package chat turns a list of chat messages into prompt text with a model's
// own chat template, the Jinja template that a GGUF file carries under the
// metadata key tokenizer.chat_template.
//
// Rendering follows Hugging Face transformers' apply_chat_template, which is
// what the model's authors used to build their prompts and what vLLM serves:
// the template sees the variables messages, tools, documents (none),
// add_generation_prompt, bos_token, eos_token and the caller's
// chat_template_kwargs (such as enable_thinking), with Jinja's trim_blocks and
// lstrip_blocks on and the loop controls break and continue. Messages reach
// the template in OpenAI's shape: tool calls as
// {"id", "type": "function", "function": {"name", "arguments"}}, with the
// arguments parsed from their JSON text into an object, as vLLM does.
//
// A template of OpenAI's harmony format (gpt-oss's, recognized by the
// <|channel|> it writes) reads an assistant's earlier reasoning from the
// field thinking and refuses a message with both thinking and content
// beside tool calls; for such a template, reasoning_content is also given
// as thinking, and the content of an assistant message with reasoning and
// tool calls is left out, as llama.cpp does. The template itself keeps the
// reasoning only where gpt-oss expects it (before a tool call not yet
// answered by a final message) and reads the reasoning_effort variable
// (low, medium or high) from the Kwargs.
//
// For model files without a template, [MistralV7] and [MistralV7Tekken]
// render llama.cpp's built-in Mistral formats.
//
// # Engine
//
// Templates are executed by github.com/ardanlabs/jinja (v1.8.0, the newest
// release that builds with Go 1.26), a pure-Go Jinja engine written for LLM
// chat templates. It was chosen over github.com/nikolalohinski/gonja/v2
// (v2.9.1) because it renders the Qwen3 template exactly, including
// namespace(), messages[::-1], loop.index0, the Python string methods, the
// is-tests and whitespace control, and because its values include an
// ordered dict, so tool definitions and tool-call arguments keep the key
// order the client sent, as Python dicts do. gonja failed on both counts:
// it renders ['a'][-1] as nothing, so the Qwen3 template fails with
// "'lstrip' is not callable" on any assistant message that contains
// </think> without <think>; and it reflects over Go maps, whose keys it
// sorts, so tools | tojson reorders every tool definition. Its tojson also
// defaults to compact separators, and it brings in logrus, json-iterator,
// pkg/errors and golang.org/x/exp among other modules, where ardanlabs/jinja
// needs none.
//
// The engine is used as published; this package adds, through the template's
// variables, Python-compatible versions of the globals raise_exception,
// strftime_now and range (limited to 100,000 items, as in Jinja's sandbox),
// a tojson filter with the semantics transformers gives it,
//
//	json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)
//
// and a string filter that is Python's str(). The engine's own filters
// cannot be replaced, so New renames these two where the template applies
// them ("| tojson", "| string"). The engine's versions print floats the Go
// way (1 for 1.0, 1e+06 for 1000000.0), which changes tool schemas such as
// {"minimum": 0.0}; its tojson also escapes U+2028 and U+2029, sorts keys
// when indenting and ignores sort_keys and ensure_ascii.
//
// # Safety
//
// The template comes from a model file and may be hostile. New rejects
// sources over 256 KiB and templates that nest blocks or brackets more than
// 100 deep (the engine's parser is recursive and, on deep nesting,
// quadratic), and counts macro calls so that recursion deeper than 256
// fails cleanly instead of overflowing the Go stack, which would end the
// process. Panics inside the engine are recovered and returned as errors.
// Rendering time and memory are not bounded in general: like Python's Jinja,
// a template can nest loops over large ranges, and a string repeated
// 10^11 times ('a' * 99999999999) exhausts memory, which the Go runtime
// cannot recover from.
//
// # Known engine differences
//
// Beyond what this package covers, the engine differs from Python's Jinja in
// ways that the Qwen templates do not rely on: printed directly or joined
// with ~, none gives "" rather than "None" and floats take Go's %g form
// ("| string" is exact); tuples print as lists; str.find counts bytes; the
// % string-formatting operator and the divisibleby test are missing; float
// literals with an exponent (1e20) do not parse; and undefined attributes
// never raise.
package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/ardanlabs/jinja"
)

// ChatML is the template that New uses when the model has none: each message
// as "<|im_start|>role\ncontent<|im_end|>\n", then "<|im_start|>assistant\n"
// as the generation prompt. It is the ChatML template that transformers used
// as its default.
const ChatML = "{% for message in messages %}" +
	"{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
	"{% endfor %}" +
	"{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// Message is one chat message as OpenAI clients send it, content already
// flattened to text.
type Message struct {
	Role             string     // system, user, assistant or tool; others are an error
	Content          string     // the text of the message
	ReasoningContent string     // an assistant's earlier reasoning, optional
	ToolCalls        []ToolCall // the tool calls an assistant made
	ToolCallID       string     // the call a tool message answers, optional
	Name             string     // the author's name, optional
}

// ToolCall is one function call made by the assistant.
type ToolCall struct {
	ID   string // the call's id, optional
	Name string // the function's name

	// Arguments is a JSON object as text, as OpenAI sends it. Render parses
	// it, keeping the key order, before the template sees it, as vLLM does:
	// an empty string becomes {} and text that is not valid JSON is passed
	// on as the string.
	Arguments string
}

// Options are the settings of one Render call.
type Options struct {
	// Tools are OpenAI tool definitions, passed to the template in order
	// and with their keys in the order they have in the JSON text.
	Tools []json.RawMessage

	// AddGenerationPrompt ends the prompt with the text that opens an
	// assistant turn.
	AddGenerationPrompt bool

	// ContinueFinalMessage leaves the final message, which must be the
	// assistant's, open for the model to continue, as transformers and vLLM
	// do: the conversation is rendered without a generation prompt and cut
	// right after the last occurrence of the final message's content. It
	// cannot be combined with AddGenerationPrompt.
	ContinueFinalMessage bool

	// Kwargs are extra template variables, as chat_template_kwargs, such as
	// "enable_thinking": false. Values may be nil, booleans, numbers,
	// strings, json.Number, json.RawMessage (whose objects keep their key
	// order), []any and map[string]any (whose keys are sorted); other
	// values are converted through encoding/json. Kwargs may replace
	// bos_token and eos_token but not messages, tools, documents or
	// add_generation_prompt.
	Kwargs map[string]any
}

// Limits on templates; see the package documentation.
const (
	maxSourceLen  = 256 << 10
	maxNesting    = 100
	maxMacroDepth = 256
	maxRange      = 100000
)

// Template is a parsed chat template. It is safe for concurrent use.
type Template struct {
	src      string
	tmpl     *jinja.Template
	bosToken string
	eosToken string
	harmony  bool // the template writes OpenAI's harmony format (gpt-oss)
}

// New parses the chat template src. An empty src gives the ChatML template.
// bosToken and eosToken are the model's special-token texts, passed to the
// template as bos_token and eos_token ("" where the model has none).
func New(src, bosToken, eosToken string) (t *Template, err error) {
	if src == "" {
		src = ChatML
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("chat: parsing template: engine panic: %v", r)
		}
	}()
	prepared, err := prepare(src)
	if err != nil {
		return nil, fmt.Errorf("chat: parsing template: %w", err)
	}
	tmpl, err := jinja.Compile(prepared)
	if err != nil {
		return nil, fmt.Errorf("chat: parsing template: %w", err)
	}
	return &Template{src: src, tmpl: tmpl, bosToken: bosToken, eosToken: eosToken,
		harmony: strings.Contains(src, harmonyChannel)}, nil
}

// Source returns the template's source text: the src given to New, or
// ChatML.
func (t *Template) Source() string { return t.src }

// reserved are the template variables that Options.Kwargs may not replace.
var reserved = map[string]bool{
	"messages":              true,
	"tools":                 true,
	"documents":             true,
	"add_generation_prompt": true,
}

// Render renders msgs with the template and returns the prompt text.
//
// Render fails on an empty conversation, a role other than system, user,
// assistant or tool, tool calls outside an assistant message, a tool call id
// outside a tool message, tool definitions that are not valid JSON, invalid
// options, and any error the template raises (raise_exception) or runs into.
// Such errors describe a request the template cannot render.
func (t *Template) Render(msgs []Message, opts Options) (out string, err error) {
	if len(msgs) == 0 {
		return "", errors.New("chat: no messages")
	}
	if opts.ContinueFinalMessage {
		if opts.AddGenerationPrompt {
			return "", errors.New("chat: ContinueFinalMessage and AddGenerationPrompt cannot both be set")
		}
		if r := msgs[len(msgs)-1].Role; r != "assistant" {
			return "", fmt.Errorf("chat: ContinueFinalMessage needs an assistant message last, not %q", r)
		}
	}
	data, err := t.data(msgs, opts)
	if err != nil {
		return "", err
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("chat: rendering template: engine panic: %v", r)
		}
	}()
	out, err = t.tmpl.RenderValues(data)
	if err != nil {
		return "", fmt.Errorf("chat: rendering template: %w", err)
	}
	if opts.ContinueFinalMessage {
		return cutAfterFinal(out, msgs[len(msgs)-1].Content)
	}
	return out, nil
}

// data builds the template variables for one Render call.
func (t *Template) data(msgs []Message, opts Options) (map[string]jinja.Value, error) {
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		v, err := messageValue(m, t.harmony)
		if err != nil {
			return nil, fmt.Errorf("chat: message %d: %w", i, err)
		}
		list[i] = v
	}
	tools := jinja.None()
	if len(opts.Tools) > 0 {
		items := make([]jinja.Value, len(opts.Tools))
		for i, raw := range opts.Tools {
			v, err := parseJSON(raw)
			if err != nil {
				return nil, fmt.Errorf("chat: tool %d: %w", i, err)
			}
			items[i] = v
		}
		tools = jinja.NewList(items)
	}
	data := map[string]jinja.Value{
		"bos_token": jinja.NewString(t.bosToken),
		"eos_token": jinja.NewString(t.eosToken),
	}
	for k, v := range opts.Kwargs {
		if reserved[k] || strings.HasPrefix(k, internalPrefix) {
			return nil, fmt.Errorf("chat: template variable %q cannot be set through Kwargs", k)
		}
		val, err := goValue(v)
		if err != nil {
			return nil, fmt.Errorf("chat: Kwargs[%q]: %w", k, err)
		}
		data[k] = val
	}
	data["messages"] = jinja.NewList(list)
	data["tools"] = tools
	data["documents"] = jinja.None()
	data["add_generation_prompt"] = jinja.NewBool(opts.AddGenerationPrompt)
	addGlobals(data)
	return data, nil
}

// harmonyChannel marks a template of OpenAI's harmony format.
const harmonyChannel = "<|channel|>"

// messageValue converts m to the dict the template sees. For a template
// of the harmony format (harmony set), an assistant's reasoning is also
// given as thinking, the field gpt-oss's template reads, and the content
// of an assistant message with both reasoning and tool calls is left out,
// since that template refuses both; llama.cpp adapts the messages the same
// way.
func messageValue(m Message, harmony bool) (jinja.Value, error) {
	switch m.Role {
	case "system", "user", "assistant", "tool":
	default:
		return jinja.Value{}, fmt.Errorf("unknown role %q (want system, user, assistant or tool)", m.Role)
	}
	if len(m.ToolCalls) > 0 && m.Role != "assistant" {
		return jinja.Value{}, fmt.Errorf("a %s message cannot have tool calls", m.Role)
	}
	if m.ToolCallID != "" && m.Role != "tool" {
		return jinja.Value{}, fmt.Errorf("a %s message cannot have a tool call id", m.Role)
	}
	v := jinja.NewDict()
	d := v.AsDict()
	d.Set("role", jinja.NewString(m.Role))
	if !harmony || m.ReasoningContent == "" || len(m.ToolCalls) == 0 {
		d.Set("content", jinja.NewString(m.Content))
	}
	if m.ReasoningContent != "" {
		d.Set("reasoning_content", jinja.NewString(m.ReasoningContent))
		if harmony {
			d.Set("thinking", jinja.NewString(m.ReasoningContent))
		}
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]jinja.Value, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			calls[i] = toolCallValue(tc)
		}
		d.Set("tool_calls", jinja.NewList(calls))
	}
	if m.ToolCallID != "" {
		d.Set("tool_call_id", jinja.NewString(m.ToolCallID))
	}
	if m.Name != "" {
		d.Set("name", jinja.NewString(m.Name))
	}
	return v, nil
}

// toolCallValue converts tc to OpenAI's shape, with the arguments parsed.
func toolCallValue(tc ToolCall) jinja.Value {
	var args jinja.Value
	if tc.Arguments == "" {
		args = jinja.NewDict()
	} else if a, err := parseJSON([]byte(tc.Arguments)); err == nil {
		args = a
	} else {
		args = jinja.NewString(tc.Arguments)
	}
	fn := jinja.NewDict()
	fn.AsDict().Set("name", jinja.NewString(tc.Name))
	fn.AsDict().Set("arguments", args)
	v := jinja.NewDict()
	if tc.ID != "" {
		v.AsDict().Set("id", jinja.NewString(tc.ID))
	}
	v.AsDict().Set("type", jinja.NewString("function"))
	v.AsDict().Set("function", fn)
	return v
}

// cutAfterFinal ends out right after the last occurrence of the final
// message's content, as transformers' apply_chat_template does for
// continue_final_message.
func cutAfterFinal(out, final string) (string, error) {
	stripped := pyStrip(final)
	loc := strings.LastIndex(out, stripped)
	if loc < 0 {
		return "", errors.New("chat: ContinueFinalMessage: the template does not reproduce the final message's content, so it cannot be continued")
	}
	left := len(strings.TrimLeftFunc(final, pyIsSpace))
	if out[loc:min(len(out), loc+left)] == final {
		return out[:loc+left], nil
	}
	return out[:min(len(out), loc+len(strings.TrimRightFunc(final, pyIsSpace)))], nil
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyIsSpace reports whether Python's str.isspace holds for r. It adds the
// information separators U+001C..U+001F to Go's unicode.IsSpace.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
