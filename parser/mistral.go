package parser

import (
	"bytes"
	"encoding/json"
)

// The tags of Mistral's tokenizers, each a control token of the vocabulary
// (v7 and later; [THINK] from Magistral Small 1.2 on).
const (
	mThink    = "[THINK]"
	mThinkEnd = "[/THINK]"
	mCalls    = "[TOOL_CALLS]"
	mArgs     = "[ARGS]"
	mCallID   = "[CALL_ID]"
)

type mistralState uint8

const (
	mContent mistralState = iota
	mReasoning
	mBlock
)

// blockStep is where the scan of a [TOOL_CALLS] block is.
type blockStep uint8

const (
	bLead      blockStep = iota // whitespace after [TOOL_CALLS]
	bName                       // the function's name
	bAfterName                  // [CALL_ID], [ARGS], whitespace or the arguments
	bID                         // the id after [CALL_ID]
	bBeforeObj                  // whitespace before the arguments
	bValue                      // the JSON array or object
)

// mistralParser is the Mistral format.
type mistralParser struct {
	output
	opts  Options
	state mistralState
	// atStart reports that a [THINK] would still open reasoning: nothing
	// has come yet.
	atStart bool

	// buf is input not yet consumed: in content and reasoning a suffix
	// that may begin a tag; in a block, the block's text after
	// [TOOL_CALLS].
	buf []byte

	// The scan of a block: its step, how much of buf it has read, where
	// the name and the JSON value start and end, and the scanner of the
	// value.
	step               blockStep
	pos                int
	nameStart, nameEnd int
	valueStart         int
	array              bool
	js                 jsonScan
}

func newMistral(opts Options, o output) *mistralParser {
	p := &mistralParser{output: o, opts: opts}
	if opts.Reasoning {
		if opts.StartInReasoning {
			p.state = mReasoning
		} else {
			p.atStart = true
		}
	}
	return p
}

func (p *mistralParser) Add(text string) Delta {
	if p.done {
		return Delta{}
	}
	p.buf = append(p.buf, text...)
	p.process(false)
	return p.take(false)
}

func (p *mistralParser) Finish() Delta {
	if p.done {
		return Delta{}
	}
	p.process(true)
	p.done = true
	return p.take(true)
}

// process consumes as much of p.buf as can be decided now, or all of it
// when final is set, a block in progress becoming content.
func (p *mistralParser) process(final bool) {
	for {
		switch p.state {
		case mReasoning:
			if i := bytes.Index(p.buf, []byte(mThinkEnd)); i >= 0 {
				p.reasoning.Write(p.buf[:i])
				p.consume(i + len(mThinkEnd))
				p.state = mContent
				continue
			}
			n := len(p.buf)
			if !final {
				n -= partialTag(p.buf, mThinkEnd)
			}
			p.reasoning.Write(p.buf[:n])
			p.consume(n)
			return

		case mBlock:
			if !p.scanBlock(final) {
				return
			}

		case mContent:
			if p.atStart {
				switch {
				case bytes.HasPrefix(p.buf, []byte(mThink)):
					p.consume(len(mThink))
					p.atStart = false
					p.state = mReasoning
					continue
				case len(p.buf) == 0 || !final && partialTag(p.buf, mThink) == len(p.buf):
					return // may become [THINK]
				}
				p.atStart = false
			}
			if !p.opts.Tools {
				p.content.Write(p.buf)
				p.consume(len(p.buf))
				return
			}
			if i := bytes.Index(p.buf, []byte(mCalls)); i >= 0 {
				p.content.Write(p.buf[:i])
				p.consume(i + len(mCalls))
				p.state = mBlock
				p.step, p.pos = bLead, 0
				continue
			}
			n := len(p.buf)
			if !final {
				n -= partialTag(p.buf, mCalls)
			}
			p.content.Write(p.buf[:n])
			p.consume(n)
			return
		}
	}
}

// consume drops the first n bytes of p.buf.
func (p *mistralParser) consume(n int) {
	p.buf = append(p.buf[:0], p.buf[n:]...)
}

// scanBlock goes on with the scan of the block in p.buf and reports
// whether the block ended (as tool calls or as content).
func (p *mistralParser) scanBlock(final bool) bool {
	b := p.buf
	for p.pos < len(b) {
		c := b[p.pos]
		switch p.step {
		case bLead, bBeforeObj:
			switch {
			case isSpace(c):
				p.pos++
			case p.step == bLead && c == '[' || p.step == bBeforeObj && c == '{':
				p.array = c == '['
				p.valueStart = p.pos
				p.js = jsonScan{}
				p.step = bValue
			case p.step == bLead && isNameByte(c):
				p.nameStart = p.pos
				p.step = bName
			default:
				return p.fail(p.pos)
			}
		case bName:
			for p.pos < len(b) && isNameByte(b[p.pos]) {
				p.pos++
			}
			if p.pos < len(b) {
				p.nameEnd = p.pos
				p.step = bAfterName
			}
		case bID:
			for p.pos < len(b) && isIDByte(b[p.pos]) {
				p.pos++
			}
			if p.pos < len(b) {
				p.step = bAfterName
			}
		case bAfterName:
			rest := b[p.pos:]
			switch {
			case c == '{' || isSpace(c):
				p.step = bBeforeObj
			case bytes.HasPrefix(rest, []byte(mArgs)):
				p.pos += len(mArgs)
				p.step = bBeforeObj
			case bytes.HasPrefix(rest, []byte(mCallID)):
				p.pos += len(mCallID)
				p.step = bID
			case !final && (partialTag(rest, mArgs) == len(rest) || partialTag(rest, mCallID) == len(rest)):
				return false // may become a tag
			default:
				return p.fail(p.pos)
			}
		case bValue:
			if n := p.js.feed(b[p.pos:]); n >= 0 {
				return p.endBlock(p.pos + n)
			}
			p.pos = len(b)
		}
	}
	if final {
		return p.fail(len(b))
	}
	return false
}

// fail ends the block as content at offset n of p.buf: the text up to n
// was no block after all.
func (p *mistralParser) fail(n int) bool {
	p.content.WriteString(mCalls)
	p.content.Write(p.buf[:n])
	p.consume(n)
	p.state = mContent
	return true
}

// endBlock ends the block whose JSON value ends at offset end of p.buf.
func (p *mistralParser) endBlock(end int) bool {
	value := p.buf[p.valueStart:end]
	if p.array {
		var items []json.RawMessage
		if err := json.Unmarshal(value, &items); err != nil || len(items) == 0 {
			return p.fail(end)
		}
		names := make([]string, len(items))
		args := make([]string, len(items))
		for i, item := range items {
			var ok bool
			if names[i], args[i], ok = parseCall(item); !ok {
				return p.fail(end)
			}
		}
		for i := range items {
			p.addCall(names[i], args[i])
		}
	} else {
		a, ok := compactObject(value)
		if !ok {
			return p.fail(end)
		}
		p.addCall(string(p.buf[p.nameStart:p.nameEnd]), a)
	}
	p.consume(end)
	p.state = mContent
	return true
}

// isNameByte reports whether c may be part of a function's name.
func isNameByte(c byte) bool {
	return isIDByte(c) || c == '_' || c == '-' || c == '.' || c == ':'
}

// isIDByte reports whether c is an ASCII letter or digit.
func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
