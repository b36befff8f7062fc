package parser

import (
	"bytes"
	"strings"
)

// The tags of the harmony format, each a special token of gpt-oss's
// vocabulary.
const (
	hStart     = "<|start|>"
	hChannel   = "<|channel|>"
	hMessage   = "<|message|>"
	hConstrain = "<|constrain|>"
	hEnd       = "<|end|>"
	hCall      = "<|call|>"
	hReturn    = "<|return|>"

	// functionsPrefix begins the recipient of a call of a developer's
	// function.
	functionsPrefix = "functions."

	// maxHeader is how far into a header <|message|> is looked for.
	maxHeader = 256
)

// headerEnds are the tags that end a header (besides a <|start|> after its
// first byte), and bodyEnds those that end a body.
var (
	headerEnds = []string{hMessage, hEnd, hCall, hReturn}
	bodyEnds   = []string{hEnd, hCall, hReturn, hStart, hChannel}
)

// maxBodyEnd is the length of the longest tag of bodyEnds.
const maxBodyEnd = len(hChannel)

// harmonyKind is what the body of a message is.
type harmonyKind uint8

const (
	toContent harmonyKind = iota
	toReasoning
	toCall
)

// harmonyParser is the Harmony format.
type harmonyParser struct {
	output
	opts Options

	// buf is input not yet consumed: the header read so far, or in a body
	// a suffix that may begin a tag (the whole body of a tool call).
	buf    []byte
	inBody bool

	// The message whose body is being read: its kind, the function of a
	// tool call and the header's text, which a tool call whose body is not
	// a JSON object gives back as content.
	kind     harmonyKind
	function string
	header   string
	// scanned is how much of a tool call's body is known not to hold the
	// start of a tag that ends it.
	scanned int
}

func (p *harmonyParser) Add(text string) Delta {
	if p.done {
		return Delta{}
	}
	p.buf = append(p.buf, text...)
	p.process(false)
	return p.take(false)
}

func (p *harmonyParser) Finish() Delta {
	if p.done {
		return Delta{}
	}
	p.process(true)
	p.done = true
	return p.take(true)
}

// process consumes as much of p.buf as can be decided now, or all of it
// when final is set.
func (p *harmonyParser) process(final bool) {
	for {
		if !p.inBody {
			if !p.readHeader(final) {
				return
			}
			continue
		}
		from := 0
		if p.kind == toCall {
			from = p.scanned
		}
		if i, tag := firstTag(p.buf, from, bodyEnds); i >= 0 {
			p.endBody(p.buf[:i])
			rest := p.buf[i:]
			if tag != hStart && tag != hChannel {
				rest = rest[len(tag):] // end tags are dropped
			}
			p.buf = append(p.buf[:0], rest...)
			p.inBody = false
			continue
		}
		if final {
			p.endBody(p.buf)
			p.buf = p.buf[:0]
			p.inBody = false
			return
		}
		if p.kind == toCall {
			p.scanned = max(0, len(p.buf)-(maxBodyEnd-1))
			return
		}
		n := len(p.buf) - partialTags(p.buf, bodyEnds)
		p.emit(p.kind, p.buf[:n])
		p.buf = append(p.buf[:0], p.buf[n:]...)
		return
	}
}

// readHeader reads the header at the start of p.buf and reports whether it
// made progress.
func (p *harmonyParser) readHeader(final bool) bool {
	// Whitespace before a header is dropped.
	k := 0
	for k < len(p.buf) && isSpace(p.buf[k]) {
		k++
	}
	if k > 0 {
		p.buf = append(p.buf[:0], p.buf[k:]...)
	}
	if len(p.buf) == 0 {
		return false
	}
	i, tag := firstTag(p.buf, 0, headerEnds)
	if j := bytes.Index(p.buf[1:], []byte(hStart)); j >= 0 && (i < 0 || j+1 < i) {
		i, tag = j+1, hStart
	}
	if i < 0 || i > maxHeader {
		switch {
		case i > maxHeader || len(p.buf) >= maxHeader+len(hMessage):
			// No header: the text is content up to the next tag.
			p.content.Write(p.buf[:maxHeader])
			p.buf = append(p.buf[:0], p.buf[maxHeader:]...)
			p.startBody(toContent, "", "")
			return true
		case final:
			p.content.Write(p.buf)
			p.buf = p.buf[:0]
		}
		return false
	}
	h := string(p.buf[:i])
	switch tag {
	case hMessage:
		p.buf = append(p.buf[:0], p.buf[i+len(hMessage):]...)
		channel, recipient, ok := parseHeader(h)
		switch {
		case !ok:
			p.content.WriteString(h + hMessage)
			p.startBody(toContent, "", "")
		case strings.HasPrefix(recipient, functionsPrefix) && len(recipient) > len(functionsPrefix):
			if p.opts.Tools {
				p.startBody(toCall, recipient[len(functionsPrefix):], h)
			} else {
				p.content.WriteString(h + hMessage)
				p.startBody(toContent, "", "")
			}
		case channel == "analysis":
			p.startBody(toReasoning, "", "")
		default:
			p.startBody(toContent, "", "")
		}
	case hStart:
		// A <|start|> after text ends it: the text was no header.
		p.content.WriteString(h)
		p.buf = append(p.buf[:0], p.buf[i:]...)
	default:
		// An end tag after text that has no <|message|>.
		p.content.WriteString(h)
		p.buf = append(p.buf[:0], p.buf[i+len(tag):]...)
	}
	return true
}

// startBody starts reading the body of a message of kind k.
func (p *harmonyParser) startBody(k harmonyKind, function, header string) {
	p.inBody = true
	p.kind = k
	p.function = function
	p.header = header
	p.scanned = 0
}

// endBody ends the body of the current message with b, the rest of it.
func (p *harmonyParser) endBody(b []byte) {
	if p.kind != toCall {
		p.emit(p.kind, b)
		return
	}
	if args, ok := compactObject(b); ok {
		p.addCall(p.function, args)
	} else {
		p.content.WriteString(p.header + hMessage)
		p.content.Write(b)
	}
	p.scanned = 0
}

// emit adds b to the content or to the reasoning.
func (p *harmonyParser) emit(k harmonyKind, b []byte) {
	if k == toReasoning {
		p.reasoning.Write(b)
	} else {
		p.content.Write(b)
	}
}

// parseHeader parses the header h of a message (the text before
// <|message|>) and returns its channel and recipient; ok is false if h is
// not a header of an assistant message.
func parseHeader(h string) (channel, recipient string, ok bool) {
	s := strings.TrimPrefix(h, hStart)
	if role, rest := headerWord(s); role != "" && !strings.HasPrefix(role, "to=") {
		if role != "assistant" {
			return "", "", false
		}
		s = rest
	}
	for s != "" {
		var w string
		switch {
		case s[0] == ' ':
			s = s[1:]
			continue
		case strings.HasPrefix(s, hChannel):
			// The last channel counts: gpt-oss-20b sometimes writes a
			// stray <|channel|>commentary before the real one.
			if channel, s = headerWord(s[len(hChannel):]); channel == "" {
				return "", "", false
			}
		case strings.HasPrefix(s, hConstrain):
			if w, s = headerWord(s[len(hConstrain):]); w == "" {
				return "", "", false
			}
		case strings.HasPrefix(s, "to="):
			if recipient != "" {
				return "", "", false
			}
			if recipient, s = headerWord(s[len("to="):]); recipient == "" {
				return "", "", false
			}
		case s[0] == '<':
			return "", "", false
		default:
			_, s = headerWord(s) // a content type, such as json
		}
	}
	return channel, recipient, channel != "" || recipient != ""
}

// headerWord splits s after its leading word: the bytes before the first
// space or '<'.
func headerWord(s string) (word, rest string) {
	i := strings.IndexAny(s, " <")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// firstTag returns the offset in b, at or after from, of the first
// occurrence of any of tags, and which tag it is; -1 if there is none.
func firstTag(b []byte, from int, tags []string) (int, string) {
	best, which := -1, ""
	for _, t := range tags {
		j := bytes.Index(b[from:], []byte(t))
		if j >= 0 && (best < 0 || from+j < best) {
			best, which = from+j, t
		}
	}
	return best, which
}

// partialTags returns the length of the longest suffix of b that is a
// proper prefix of any of tags.
func partialTags(b []byte, tags []string) int {
	n := 0
	for _, t := range tags {
		n = max(n, partialTag(b, t))
	}
	return n
}
