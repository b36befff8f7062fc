// Package parser splits the reply of a Qwen3 model into reasoning, content
// and tool calls, incrementally, as the reply is generated.
//
// Qwen3 writes its reasoning between <think> and </think> before the
// answer, and calls tools with blocks such as
//
//	<tool_call>
//	{"name": "get_weather", "arguments": {"location": "Paris"}}
//	</tool_call>
//
// A [Parser] is fed the decoded text of the reply piece by piece with
// [Parser.Add] and returns, for each piece, a [Delta] of what can be sent
// to the client now. Content and reasoning text are returned as soon as
// they arrive, except for a held-back suffix that may be the beginning of a
// tag, whitespace whose fate depends on what follows (see below), and the
// bytes of an incomplete UTF-8 encoded character. A tool call is returned
// whole when its closing tag arrives. [Parser.Finish] ends the reply and
// returns whatever was held back. Tags are recognized wherever the pieces
// are split; the concatenation of all deltas does not depend on how the
// reply was split, and equals what [Parse] returns for the whole reply.
//
// # Reasoning
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
// # Tool calls
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
// Within one [Delta] the interleaving of reasoning, content and tool
// calls is not represented; the OpenAI chat completion message has no way
// to represent it either.
package parser

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// The tags Qwen3 writes. Each is a single token in its vocabulary.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
	callOpen   = "<tool_call>"
	callClose  = "</tool_call>"
)

// Options selects what a [Parser] recognizes.
type Options struct {
	// Reasoning enables the parsing of a reasoning block. When it is
	// false, <think> and </think> are ordinary content text.
	Reasoning bool

	// StartInReasoning says that the reply begins inside a reasoning
	// block: the prompt ended with <think>, as the generation prompt of
	// some Qwen3 templates does. It has no effect unless Reasoning is set.
	StartInReasoning bool

	// Tools enables the parsing of tool calls. When it is false,
	// <tool_call> and </tool_call> are ordinary content text.
	Tools bool

	// IDFunc, if not nil, returns the ID of the tool call with the given
	// index. By default an ID is "call_" followed by 24 random letters
	// and digits.
	IDFunc func(index int) string
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

type state uint8

const (
	inContent state = iota
	inReasoning
	inCall
)

// A Parser splits a reply that arrives in pieces into reasoning, content
// and tool calls. The package documentation describes the rules.
//
// A Parser must not be used by multiple goroutines at once.
type Parser struct {
	opts  Options
	state state
	done  bool

	// buf is input not yet consumed: in content and reasoning a suffix
	// that may begin a tag, in a tool-call block the text of the block
	// after <tool_call>.
	buf []byte
	// scanned is how much of buf in a tool-call block is known not to
	// hold the start of </tool_call>.
	scanned int

	// atStart reports that a <think> would still open reasoning: only
	// whitespace has come so far.
	atStart bool
	// trimNL reports that newlines are being dropped: at the start of
	// reasoning and of content after </think>.
	trimNL bool
	// ws is content whitespace held back until its fate is known.
	ws []byte
	// wsAfterCall reports that ws follows a tool call directly.
	wsAfterCall bool
	// nl is the number of newlines held back at the end of reasoning.
	nl int

	calls []ToolCall

	// What the current Add or Finish has made out, and the bytes of an
	// incomplete UTF-8 character at the end of what was made out before.
	content, reasoning strings.Builder
	newCalls           []ToolCall
	contentTail        string
	reasoningTail      string
}

// New returns a Parser for a reply to be parsed with opts.
func New(opts Options) *Parser {
	p := &Parser{opts: opts}
	if opts.Reasoning {
		if opts.StartInReasoning {
			p.state = inReasoning
			p.trimNL = true
		} else {
			p.atStart = true
		}
	}
	return p
}

// Add adds text, the next piece of the reply, and returns what can be sent
// now. After [Parser.Finish], Add does nothing and returns an empty Delta.
func (p *Parser) Add(text string) Delta {
	if p.done {
		return Delta{}
	}
	p.buf = append(p.buf, text...)
	p.process(false)
	return p.take(false)
}

// Finish ends the reply and returns the rest of it: text held back,
// including a tool-call block that was never closed, which is returned as
// content. Called again, Finish returns an empty Delta.
func (p *Parser) Finish() Delta {
	if p.done {
		return Delta{}
	}
	p.process(true)
	switch p.state {
	case inReasoning:
		p.nl = 0 // trailing newlines of reasoning are dropped
	case inContent:
		if !p.wsAfterCall {
			p.content.Write(p.ws)
		}
		p.ws = p.ws[:0]
	}
	p.done = true
	return p.take(true)
}

// ToolCalls returns the tool calls parsed so far.
func (p *Parser) ToolCalls() []ToolCall {
	if len(p.calls) == 0 {
		return nil
	}
	return append([]ToolCall(nil), p.calls...)
}

// Parse parses a whole reply. The content, reasoning and calls it returns
// are the concatenation of what a [Parser] with the same options returns
// for the reply in any number of pieces.
func Parse(text string, opts Options) (content, reasoning string, calls []ToolCall) {
	p := New(opts)
	d := p.Add(text)
	e := p.Finish()
	return d.Content + e.Content, d.Reasoning + e.Reasoning, p.ToolCalls()
}

// process consumes as much of p.buf as can be decided now, or all of it
// when final is set, the tool-call block in progress becoming content.
func (p *Parser) process(final bool) {
	for {
		switch p.state {
		case inReasoning:
			if i := bytes.Index(p.buf, []byte(thinkClose)); i >= 0 {
				p.addReasoning(p.buf[:i])
				p.buf = p.buf[i+len(thinkClose):]
				p.nl = 0
				p.state = inContent
				p.trimNL = true
				continue
			}
			n := len(p.buf)
			if !final {
				n -= partialTag(p.buf, thinkClose)
			}
			p.addReasoning(p.buf[:n])
			p.buf = p.buf[n:]
			return

		case inCall:
			if i := bytes.Index(p.buf[p.scanned:], []byte(callClose)); i >= 0 {
				i += p.scanned
				p.endCall(p.buf[:i])
				p.buf = p.buf[i+len(callClose):]
				p.scanned = 0
				p.state = inContent
				continue
			}
			if final {
				p.addContent(callOpen + string(p.buf))
				p.buf = p.buf[len(p.buf):]
				p.scanned = 0
				p.state = inContent
				return
			}
			p.scanned = max(0, len(p.buf)-(len(callClose)-1))
			return

		case inContent:
			i := bytes.IndexByte(p.buf, '<')
			if i < 0 {
				p.addContent(string(p.buf))
				p.buf = p.buf[len(p.buf):]
				return
			}
			if i > 0 {
				p.addContent(string(p.buf[:i]))
				p.buf = p.buf[i:]
			}
			switch {
			case p.opts.Tools && bytes.HasPrefix(p.buf, []byte(callOpen)):
				p.buf = p.buf[len(callOpen):]
				p.atStart = false
				p.trimNL = false
				p.state = inCall
			case p.atStart && bytes.HasPrefix(p.buf, []byte(thinkOpen)):
				p.buf = p.buf[len(thinkOpen):]
				p.ws = p.ws[:0] // whitespace before <think> is dropped
				p.atStart = false
				p.trimNL = true
				p.state = inReasoning
			case !final && (p.opts.Tools && partialTag(p.buf, callOpen) == len(p.buf) ||
				p.atStart && partialTag(p.buf, thinkOpen) == len(p.buf)):
				return // may become a tag
			default:
				p.addContent("<")
				p.buf = p.buf[1:]
			}
		}
	}
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

// isSpace reports whether c is whitespace that may be dropped next to a
// tool call.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// addContent adds s, which holds no tag, to the content.
func (p *Parser) addContent(s string) {
	if p.trimNL {
		t := strings.TrimLeft(s, "\n")
		if t == "" {
			return
		}
		p.trimNL = false
		s = t
	}
	if s == "" {
		return
	}
	j := len(s) - 1
	for j >= 0 && isSpace(s[j]) {
		j--
	}
	// Whitespace is held back while a tool call or a <think> could follow
	// and cause it to be dropped.
	hold := p.opts.Tools || p.atStart
	if j < 0 {
		if hold {
			p.ws = append(p.ws, s...)
		} else {
			p.content.WriteString(s)
		}
		return
	}
	p.content.Write(p.ws)
	p.content.WriteString(s[:j+1])
	p.ws = p.ws[:0]
	p.wsAfterCall = false
	p.atStart = false
	if p.opts.Tools {
		p.ws = append(p.ws, s[j+1:]...)
	} else {
		p.content.WriteString(s[j+1:])
	}
}

// addReasoning adds b, which holds no </think>, to the reasoning.
func (p *Parser) addReasoning(b []byte) {
	if p.trimNL {
		t := bytes.TrimLeft(b, "\n")
		if len(t) == 0 {
			return
		}
		p.trimNL = false
		b = t
	}
	k := len(b)
	for k > 0 && b[k-1] == '\n' {
		k--
	}
	if k == 0 {
		p.nl += len(b)
		return
	}
	for ; p.nl > 0; p.nl-- {
		p.reasoning.WriteByte('\n')
	}
	p.reasoning.Write(b[:k])
	p.nl = len(b) - k
}

// endCall ends the tool-call block whose text between the tags is body.
func (p *Parser) endCall(body []byte) {
	name, args, ok := parseCall(body)
	if !ok {
		p.addContent(callOpen + string(body) + callClose)
		return
	}
	c := ToolCall{Index: len(p.calls), Name: name, Arguments: args}
	if p.opts.IDFunc != nil {
		c.ID = p.opts.IDFunc(c.Index)
	} else {
		c.ID = newID()
	}
	p.calls = append(p.calls, c)
	p.newCalls = append(p.newCalls, c)
	p.ws = p.ws[:0] // whitespace before a tool call is dropped
	p.wsAfterCall = true
}

// parseCall parses the text of a tool-call block and returns the name and
// the compacted arguments of the call, or ok == false if the text is not a
// well-formed call.
func parseCall(body []byte) (name, args string, ok bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return "", "", false
	}
	if err := json.Unmarshal(m["name"], &name); err != nil || name == "" {
		return "", "", false
	}
	raw := bytes.TrimSpace(m["arguments"])
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", "", false
		}
		raw = bytes.TrimSpace([]byte(s))
		if !json.Valid(raw) {
			return "", "", false
		}
	} else if len(raw) == 0 || string(raw) == "null" {
		return name, "{}", true
	}
	if len(raw) == 0 || raw[0] != '{' {
		return "", "", false
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", "", false
	}
	return name, b.String(), true
}

const idChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newID returns a random tool-call ID.
func newID() string {
	b := []byte("call_")
	for range 24 {
		b = append(b, idChars[rand.IntN(len(idChars))])
	}
	return string(b)
}

// take returns what was made out since the previous call, holding back
// an incomplete UTF-8 character at the end of the content and of the
// reasoning unless final is set.
func (p *Parser) take(final bool) Delta {
	d := Delta{ToolCalls: p.newCalls}
	d.Content, p.contentTail = splitTail(p.contentTail+p.content.String(), final)
	d.Reasoning, p.reasoningTail = splitTail(p.reasoningTail+p.reasoning.String(), final)
	p.content.Reset()
	p.reasoning.Reset()
	p.newCalls = nil
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
