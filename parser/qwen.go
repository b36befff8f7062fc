package parser

import (
	"bytes"
	"strings"
)

// The tags Qwen writes. Each is a single token in its vocabulary.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
	callOpen   = "<tool_call>"
	callClose  = "</tool_call>"
)

type qwenState uint8

const (
	inContent qwenState = iota
	inReasoning
	inCall
)

// qwenParser is the Qwen format.
type qwenParser struct {
	output
	opts  Options
	state qwenState

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
}

func newQwen(opts Options, o output) *qwenParser {
	p := &qwenParser{output: o, opts: opts}
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

func (p *qwenParser) Add(text string) Delta {
	if p.done {
		return Delta{}
	}
	p.buf = append(p.buf, text...)
	p.process(false)
	return p.take(false)
}

func (p *qwenParser) Finish() Delta {
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

// process consumes as much of p.buf as can be decided now, or all of it
// when final is set, the tool-call block in progress becoming content.
func (p *qwenParser) process(final bool) {
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

// addContent adds s, which holds no tag, to the content.
func (p *qwenParser) addContent(s string) {
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
func (p *qwenParser) addReasoning(b []byte) {
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
func (p *qwenParser) endCall(body []byte) {
	name, args, ok := parseCall(body)
	if !ok {
		p.addContent(callOpen + string(body) + callClose)
		return
	}
	p.addCall(name, args)
	p.ws = p.ws[:0] // whitespace before a tool call is dropped
	p.wsAfterCall = true
}
