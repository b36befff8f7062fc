// Package parser splits a model's reply into reasoning, content and tool
// calls, incrementally, as the reply is generated.
//
// Models write their reasoning and their tool calls in different formats.
// A [Format] names one, and [New] returns a [Parser] for it:
//
//   - [Qwen]: <think>...</think> and <tool_call>{JSON}</tool_call> blocks
//     (Qwen3, Qwen2.5, and the Hermes-style templates of others).
//   - [Harmony]: OpenAI's harmony format of channels (gpt-oss).
//   - [Mistral]: [THINK]...[/THINK] and [TOOL_CALLS] (Mistral, Devstral,
//     Magistral).
//   - [Plain]: all of the reply is content (Gemma 3, Phi-4).
//
// # The incremental contract
//
// A [Parser] is fed the decoded text of the reply piece by piece with
// [Parser.Add] and returns, for each piece, a [Delta] of what can be sent
// to the client now. Content and reasoning text are returned as soon as
// they arrive, except for a held-back suffix that may be the beginning of a
// tag, text whose fate depends on what follows (each format says which),
// and the bytes of an incomplete UTF-8 encoded character. A tool call is
// returned whole once it is complete. [Parser.Finish] ends the reply and
// returns whatever was held back. Tags are recognized wherever the pieces
// are split; the concatenation of all deltas does not depend on how the
// reply was split, and equals what [Parse] returns for the whole reply.
//
// The tags are special tokens of the model's vocabulary, so the text fed
// to a Parser must include the text of special tokens, as inferno's
// tokenizer decodes them (control tokens decode to their text). A decoder
// that skips special tokens, as Hugging Face's skip_special_tokens does,
// leaves nothing to parse. The end-of-generation tokens that stop the reply
// (<|call|> and <|return|> of harmony) are not decoded, so a reply may end
// without them.
//
// Within one [Delta] the interleaving of reasoning, content and tool
// calls is not represented; the OpenAI chat completion message has no way
// to represent it either.
//
// # Qwen
//
// With [Options].Reasoning set, a reply that begins with <think> (after
// optional whitespace, which is dropped) has its text up to the first
// </think> returned as reasoning. A <think> anywhere else is content, and
// so is a </think> outside reasoning. With [Options].StartInReasoning, the
// reply is taken to begin inside reasoning, as when the prompt ends with
// <think>. A reply that ends before </think> is reasoning to its end.
// Inside reasoning, tool-call tags are reasoning text.
//
// Newlines are trimmed the way the Qwen3 chat template trims a message
// when it renders the conversation history: reasoning has all leading and
// trailing newlines removed (the template's reasoning_content.strip('\n')),
// and content after </think> has its leading newlines removed
// (content.lstrip('\n')). Thus the usual "<think>\nR\n</think>\n\nC" yields
// reasoning "R" and content "C", and rendering them back into a prompt
// reproduces the text the model generated. (vLLM's qwen3 reasoning parser
// returns the text between the tags unchanged, leading and trailing
// newlines included.) Only newlines are trimmed, never other whitespace.
//
// With [Options].Tools set, a <tool_call> in content opens a tool-call
// block, which ends at the first </tool_call> that follows, even one that
// sits inside a JSON string of the block. The text between the tags must be
// a single JSON object, possibly surrounded by whitespace, with a non-empty
// string "name" and an "arguments" member that is a JSON object. Other
// members are ignored. The arguments are returned as the object's own JSON
// text with insignificant space removed (see [json.Compact]), so the order
// of its keys and the spelling of its strings are kept exactly. Two
// lenient cases are accepted: a missing or null "arguments" stands for {},
// and "arguments" given as a JSON string whose value is itself the text of
// a JSON object stands for that object. A block that is not well formed,
// and a block that has no closing tag when the reply ends, is returned as
// content, verbatim, tags included.
//
// Whitespace in content next to a tool call is dropped: whitespace (space,
// tab, carriage return and newline) immediately before a tool call, and
// whitespace after a tool call that is followed only by another tool call
// or by the end of the reply. The Qwen3 chat template writes a newline
// between content and each tool call when it renders them back.
//
// # Harmony
//
// gpt-oss writes a reply as a sequence of messages, each a header, the tag
// <|message|>, a body, and an end tag: <|end|>, or one of the
// end-of-generation tags <|call|> (after a tool call) and <|return|> (after
// the final answer), which are usually not decoded. The chat template's
// generation prompt ends with <|start|>assistant, so the reply begins with
// the first message's header; later messages begin with
// <|start|>assistant. For example:
//
//	<|channel|>analysis<|message|>The user wants the weather.<|end|>
//	<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}
//
// (without the line break). A header is the text before <|message|>: an
// optional <|start|> and role (which must be assistant), then, in any
// order, <|channel|>NAME, a recipient " to=NAME", and a content type
// ("json" or <|constrain|>json); it must name a channel or a recipient,
// and if it names several channels the last counts (gpt-oss-20b sometimes
// writes a stray <|channel|>commentary before the real one).
// The body of a message whose recipient is functions.NAME is a tool call of
// the function NAME, when [Options].Tools is set: its body must be a JSON
// object, returned compacted as with Qwen, and the call is returned when the
// message ends. Otherwise the body of an analysis message is reasoning and
// the body of any other message (final, commentary) is content; both are
// returned as they arrive. Other recipients (gpt-oss's built-in browser and
// python tools) are ignored.
//
// A body ends at an end tag or where the next message begins, at a
// <|start|> or <|channel|>, or at the end of the reply. Whitespace before a
// header is dropped, and end tags are dropped. Text that is not a valid
// header is content, verbatim, tags included, and so is a tool call whose
// body is not a JSON object, or one that arrives without [Options].Tools.
// A header is looked for only in its first 256 bytes: text with no
// <|message|> (nor an end tag or a <|start|> that ends it earlier) by then
// is content, and so is what follows it up to the next tag that ends a
// body. The text between the tags is returned as it is: no whitespace is
// trimmed. [Options].Reasoning and [Options].StartInReasoning do not apply:
// the analysis channel is always reasoning.
//
// # Mistral
//
// With [Options].Reasoning set, a reply that begins with [THINK] (at its
// very first byte) has its text up to the first [/THINK] returned as
// reasoning (Magistral); [Options].StartInReasoning starts the reply inside
// reasoning. A reply that ends before [/THINK] is reasoning to its end.
// [THINK] elsewhere is content, and tool-call tags inside reasoning are
// reasoning text.
//
// With [Options].Tools set, a [TOOL_CALLS] in content opens a tool-call
// block, in one of two forms:
//
//   - the form of Mistral's v3 and v7 templates (Mistral 7B v0.3, Nemo):
//     optional whitespace, then a JSON array of objects, each a call with
//     "name" and "arguments" as in a Qwen block, for example
//     [TOOL_CALLS] [{"name": "f", "arguments": {"x": 1}}];
//   - the form of the v11 and later tokenizers (Mistral Small 3.1 and 3.2,
//     Devstral, Magistral): optional whitespace, the function's name
//     (letters, digits, "_", "-", "." and ":"), optionally [CALL_ID] and
//     an id of letters and digits, optionally [ARGS], optional whitespace
//     and the arguments, a JSON object, for example
//     [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}.
//
// A block ends where its JSON array or object closes (a bracket counter
// that skips JSON strings), and its calls are returned then. Several
// blocks may follow one another, each opened by [TOOL_CALLS]. A block that
// is not well formed is content, verbatim, up to where it went wrong (the
// end of its JSON value, or the first byte that does not fit the form), and
// so is a block still open when the reply ends. Text around the blocks is
// content, and no whitespace is dropped or trimmed anywhere. Tool-call IDs
// are 9 letters and digits, as Mistral's chat templates require.
//
// # Plain
//
// All of the reply is content, as it is; there is no reasoning and there
// are no tool calls.
package parser

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// A Format names a reply format: how a family of models writes its
// reasoning and its tool calls. The package documentation describes each.
type Format string

// The formats. The zero Format stands for Plain.
const (
	Qwen    Format = "qwen"
	Harmony Format = "harmony"
	Mistral Format = "mistral"
	Plain   Format = "plain"
)

// Formats returns the known formats.
func Formats() []Format { return []Format{Qwen, Harmony, Mistral, Plain} }

// ParseFormat returns the format named name, or an error naming the
// formats there are. An empty name gives Plain.
func ParseFormat(name string) (Format, error) {
	f := Format(name)
	if f == "" {
		return Plain, nil
	}
	for _, g := range Formats() {
		if f == g {
			return f, nil
		}
	}
	return "", fmt.Errorf("parser: unknown reply format %q (want one of %s)", name, formatList())
}

func formatList() string {
	var names []string
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// ThinkTags returns the tags that open and close reasoning in replies of
// format f, for [Options].Reasoning, or "" for formats whose reasoning
// needs no option (Harmony) or that have none (Plain). A model reasons
// when its vocabulary has both tags as tokens.
func (f Format) ThinkTags() (open, close string) {
	switch f {
	case Qwen:
		return thinkOpen, thinkClose
	case Mistral:
		return mThink, mThinkEnd
	}
	return "", ""
}

// Options selects what a [Parser] recognizes.
type Options struct {
	// Format is the reply format; the zero Format is Plain.
	Format Format

	// Reasoning enables the parsing of a reasoning block, in the formats
	// that mark one with tags (Qwen, Mistral). When it is false, the tags
	// are ordinary content text.
	Reasoning bool

	// StartInReasoning says that the reply begins inside a reasoning
	// block: the prompt ended with the opening tag, as the generation
	// prompt of some Qwen3 templates does. It has no effect unless
	// Reasoning is set.
	StartInReasoning bool

	// Tools enables the parsing of tool calls. When it is false, the
	// tool-call tags are ordinary content text.
	Tools bool

	// IDFunc, if not nil, returns the ID of the tool call with the given
	// index. By default an ID is "call_" followed by 24 random letters
	// and digits, or, in the Mistral format, 9 random letters and digits.
	IDFunc func(index int) string
}

// A Parser splits a reply that arrives in pieces into reasoning, content
// and tool calls. The package documentation describes the rules of each
// format.
//
// A Parser must not be used by multiple goroutines at once.
type Parser interface {
	// Add adds text, the next piece of the reply, and returns what can be
	// sent now. After Finish, Add does nothing and returns an empty Delta.
	Add(text string) Delta

	// Finish ends the reply and returns the rest of it: text held back,
	// including a tool call that was never completed, which is returned as
	// content. Called again, Finish returns an empty Delta.
	Finish() Delta

	// ToolCalls returns the tool calls parsed so far.
	ToolCalls() []ToolCall
}

// New returns a Parser for a reply to be parsed with opts. It fails only
// on an unknown format.
func New(opts Options) (Parser, error) {
	o := output{idFunc: opts.IDFunc}
	switch opts.Format {
	case Qwen:
		if o.idFunc == nil {
			o.idFunc = openAIID
		}
		return newQwen(opts, o), nil
	case Harmony:
		if o.idFunc == nil {
			o.idFunc = openAIID
		}
		return &harmonyParser{output: o, opts: opts}, nil
	case Mistral:
		if o.idFunc == nil {
			o.idFunc = mistralID
		}
		return newMistral(opts, o), nil
	case Plain, "":
		return &plainParser{output: o}, nil
	}
	_, err := ParseFormat(string(opts.Format))
	return nil, err
}

// Parse parses a whole reply. The content, reasoning and calls it returns
// are the concatenation of what a [Parser] with the same options returns
// for the reply in any number of pieces. It fails only on an unknown
// format.
func Parse(text string, opts Options) (content, reasoning string, calls []ToolCall, err error) {
	p, err := New(opts)
	if err != nil {
		return "", "", nil, err
	}
	d := p.Add(text)
	e := p.Finish()
	return d.Content + e.Content, d.Reasoning + e.Reasoning, p.ToolCalls(), nil
}

// A ToolCall is a tool call parsed from a reply.
type ToolCall struct {
	Index     int    // position among the tool calls of the reply, from 0; OpenAI's tool_calls[i].index
	ID        string // unique ID, such as "call_" and 24 letters and digits
	Name      string // name of the function to call
	Arguments string // arguments: the text of a JSON object, compacted
}

// A Delta is the part of a reply that a [Parser] has made out since its
// previous Delta: text to append to the reasoning and to the content, and
// newly completed tool calls.
type Delta struct {
	Reasoning string
	Content   string
	ToolCalls []ToolCall
}

// IsEmpty reports whether d holds nothing to send.
func (d Delta) IsEmpty() bool {
	return d.Reasoning == "" && d.Content == "" && len(d.ToolCalls) == 0
}

// output collects what a parser makes out, and hands it out as Deltas.
// Every parser embeds one.
type output struct {
	idFunc func(int) string
	done   bool

	calls []ToolCall

	// What the current Add or Finish has made out, and the bytes of an
	// incomplete UTF-8 character at the end of what was made out before.
	content, reasoning strings.Builder
	newCalls           []ToolCall
	contentTail        string
	reasoningTail      string
}

// ToolCalls returns the tool calls parsed so far.
func (o *output) ToolCalls() []ToolCall {
	if len(o.calls) == 0 {
		return nil
	}
	return append([]ToolCall(nil), o.calls...)
}

// addCall adds a completed tool call.
func (o *output) addCall(name, args string) {
	c := ToolCall{Index: len(o.calls), Name: name, Arguments: args}
	c.ID = o.idFunc(c.Index)
	o.calls = append(o.calls, c)
	o.newCalls = append(o.newCalls, c)
}

// take returns what was made out since the previous call, holding back
// an incomplete UTF-8 character at the end of the content and of the
// reasoning unless final is set.
func (o *output) take(final bool) Delta {
	d := Delta{ToolCalls: o.newCalls}
	d.Content, o.contentTail = splitTail(o.contentTail+o.content.String(), final)
	d.Reasoning, o.reasoningTail = splitTail(o.reasoningTail+o.reasoning.String(), final)
	o.content.Reset()
	o.reasoning.Reset()
	o.newCalls = nil
	return d
}

// splitTail splits s before an incomplete UTF-8 encoded character at its
// end, if any and unless final is set.
func splitTail(s string, final bool) (head, tail string) {
	if final {
		return s, ""
	}
	for i := len(s) - 1; i >= 0 && i >= len(s)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i], s[i:]
			}
			break
		}
	}
	return s, ""
}

// partialTag returns the length of the longest suffix of b that is a
// proper prefix of tag.
func partialTag(b []byte, tag string) int {
	for n := min(len(b), len(tag)-1); n > 0; n-- {
		if string(b[len(b)-n:]) == tag[:n] {
			return n
		}
	}
	return 0
}

// isSpace reports whether c is whitespace: space, tab, carriage return or
// newline.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

const idChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomID returns prefix followed by n random letters and digits.
func randomID(prefix string, n int) string {
	b := []byte(prefix)
	for range n {
		b = append(b, idChars[rand.IntN(len(idChars))])
	}
	return string(b)
}

// openAIID returns an ID in the style of OpenAI's: "call_" and 24 letters
// and digits.
func openAIID(int) string { return randomID("call_", 24) }

// mistralID returns an ID of 9 letters and digits, the only kind that
// Mistral's chat templates accept when the call is sent back.
func mistralID(int) string { return randomID("", 9) }

// plainParser is the Plain format: everything is content.
type plainParser struct {
	output
}

func (p *plainParser) Add(text string) Delta {
	if p.done {
		return Delta{}
	}
	p.content.WriteString(text)
	return p.take(false)
}

func (p *plainParser) Finish() Delta {
	if p.done {
		return Delta{}
	}
	p.done = true
	return p.take(true)
}
