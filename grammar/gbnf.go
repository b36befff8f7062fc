package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxRepeat is the largest count a bounded repetition ({m}, {m,n}) may
// name, in GBNF, in the regular-expression subset and in the repetitions
// the JSON Schema compiler builds. Counts stay counts in the grammar (the
// matcher keeps a counter), so the limit guards arithmetic, not size.
const MaxRepeat = 100000

// maxNesting bounds how deeply groups may nest in GBNF and regular
// expressions, so that hostile input cannot exhaust the stack.
const maxNesting = 200

// maxSourceLen bounds the size of a GBNF grammar or regular expression.
const maxSourceLen = 1 << 20

// ParseGBNF parses a grammar in llama.cpp's GBNF: rules `name ::= expr`,
// one per line (an expression continues on the next line after `|`, `(`
// or inside parentheses), the root rule named "root". Expressions are
// sequences of string literals ("..."), character classes ([a-z], [^"\\]),
// `.` (any character), rule names, parenthesised groups, alternatives
// separated by `|`, and the postfix repetitions `*`, `+`, `?`, `{m}`,
// `{m,}` and `{m,n}`. Literals and classes take the escapes \x.. \u....
// \U........ \t \r \n \\ \" \[ \] (and \- \^ in classes); `#` starts a
// comment that runs to the end of the line. Token references (<[id]>,
// <token>) are not supported: a Grammar is over text, not token ids.
func ParseGBNF(src string) (*Grammar, error) {
	if len(src) > maxSourceLen {
		return nil, fmt.Errorf("grammar: gbnf: source is %d bytes, more than the limit of %d", len(src), maxSourceLen)
	}
	if !utf8.ValidString(src) {
		return nil, fmt.Errorf("grammar: gbnf: source is not valid UTF-8")
	}
	p := &gbnfParser{src: src, b: NewBuilder()}
	if err := p.parse(); err != nil {
		return nil, err
	}
	g, err := p.b.Grammar("root")
	if err != nil {
		return nil, fmt.Errorf("grammar: gbnf: %w", trimPrefix(err))
	}
	return g, nil
}

// trimPrefix strips the "grammar: " prefix from an error made in this
// package so that a wrapping message does not repeat it.
func trimPrefix(err error) error {
	s := err.Error()
	if t, ok := strings.CutPrefix(s, "grammar: "); ok {
		return fmt.Errorf("%s", t)
	}
	return err
}

type gbnfParser struct {
	src string
	pos int
	b   *Builder
}

// errorf reports a syntax error at the current position, with its line and
// column.
func (p *gbnfParser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.src[:p.pos], "\n")
	col := p.pos - strings.LastIndexByte(p.src[:p.pos], '\n')
	return fmt.Errorf("grammar: gbnf: line %d column %d: %s", line, col, fmt.Sprintf(format, args...))
}

func (p *gbnfParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *gbnfParser) eof() bool { return p.pos >= len(p.src) }

// space skips blanks and comments, and newlines too when newlineOK.
func (p *gbnfParser) space(newlineOK bool) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		case newlineOK && (c == '\n' || c == '\r'):
			p.pos++
		default:
			return
		}
	}
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}

func (p *gbnfParser) name() (string, error) {
	start := p.pos
	for p.pos < len(p.src) && isWordChar(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		return "", p.errorf("expecting a rule name")
	}
	return p.src[start:p.pos], nil
}

func (p *gbnfParser) parse() error {
	p.space(true)
	for !p.eof() {
		name, err := p.name()
		if err != nil {
			return err
		}
		p.space(false)
		if !strings.HasPrefix(p.src[p.pos:], "::=") {
			return p.errorf("expecting ::= after rule name %q", name)
		}
		p.pos += 3
		p.space(true)
		e, err := p.alternates(false, 0)
		if err != nil {
			return err
		}
		if !p.eof() {
			switch p.peek() {
			case '\n', '\r':
			default:
				return p.errorf("expecting a newline or the end of the grammar, found %q", p.rest())
			}
		}
		p.space(true)
		if p.b.Has(name) {
			return p.errorf("rule %q is defined twice", name)
		}
		if err := p.b.Define(name, e); err != nil {
			return p.errorf("%v", trimPrefix(err))
		}
	}
	return nil
}

// rest returns a short excerpt of the input at the current position.
func (p *gbnfParser) rest() string {
	r := p.src[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *gbnfParser) alternates(nested bool, depth int) (*Expr, error) {
	var alts []*Expr
	for {
		s, err := p.sequence(nested, depth)
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
		if p.peek() != '|' {
			break
		}
		p.pos++
		p.space(true)
	}
	return Choice(alts...), nil
}

func (p *gbnfParser) sequence(nested bool, depth int) (*Expr, error) {
	var items []*Expr
	for !p.eof() {
		c := p.peek()
		switch {
		case c == '"':
			p.pos++
			var sb strings.Builder
			for {
				if p.eof() {
					return nil, p.errorf("unterminated string literal")
				}
				if p.peek() == '"' {
					p.pos++
					break
				}
				r, err := p.char(false)
				if err != nil {
					return nil, err
				}
				sb.WriteRune(r)
			}
			items = append(items, Lit(sb.String()))
		case c == '[':
			e, err := p.class()
			if err != nil {
				return nil, err
			}
			items = append(items, e)
		case c == '.':
			p.pos++
			items = append(items, NotChars())
		case isWordChar(c):
			name, _ := p.name()
			items = append(items, p.b.Ref(name))
		case c == '(':
			if depth >= maxNesting {
				return nil, p.errorf("groups nested more than %d deep", maxNesting)
			}
			p.pos++
			p.space(true)
			e, err := p.alternates(true, depth+1)
			if err != nil {
				return nil, err
			}
			if p.peek() != ')' {
				return nil, p.errorf("expecting ')'")
			}
			p.pos++
			items = append(items, e)
		case c == '*' || c == '+' || c == '?' || c == '{':
			if len(items) == 0 {
				return nil, p.errorf("repetition %q with nothing to repeat", c)
			}
			min, max, err := p.repetition()
			if err != nil {
				return nil, err
			}
			items[len(items)-1] = Rep(items[len(items)-1], min, max)
		case c == '<' || c == '!':
			return nil, p.errorf("token references (%q) are not supported; write the text instead", p.rest())
		default:
			return Sequence(items...), nil
		}
		p.space(nested)
	}
	return Sequence(items...), nil
}

// repetition parses a postfix operator and returns its bounds.
func (p *gbnfParser) repetition() (min, max int, err error) {
	c := p.peek()
	p.pos++
	switch c {
	case '*':
		return 0, -1, nil
	case '+':
		return 1, -1, nil
	case '?':
		return 0, 1, nil
	}
	p.space(true)
	if min, err = p.int(); err != nil {
		return 0, 0, err
	}
	p.space(true)
	switch p.peek() {
	case '}':
		p.pos++
		return min, min, nil
	case ',':
		p.pos++
		p.space(true)
		max = -1
		if c := p.peek(); '0' <= c && c <= '9' {
			if max, err = p.int(); err != nil {
				return 0, 0, err
			}
			p.space(true)
		}
		if p.peek() != '}' {
			return 0, 0, p.errorf("expecting '}'")
		}
		p.pos++
		if max >= 0 && max < min {
			return 0, 0, p.errorf("repetition {%d,%d} has its maximum below its minimum", min, max)
		}
		return min, max, nil
	}
	return 0, 0, p.errorf("expecting ',' or '}' in a repetition")
}

func (p *gbnfParser) int() (int, error) {
	start := p.pos
	for p.pos < len(p.src) && '0' <= p.src[p.pos] && p.src[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == start {
		return 0, p.errorf("expecting an integer")
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n > MaxRepeat {
		return 0, p.errorf("repetition count %s is more than the limit of %d", p.src[start:p.pos], MaxRepeat)
	}
	return n, nil
}

// char parses one character of a literal or class, with its escapes.
func (p *gbnfParser) char(inClass bool) (rune, error) {
	if p.peek() != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += n
		return r, nil
	}
	if p.pos+1 >= len(p.src) {
		return 0, p.errorf("unterminated escape")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	switch c {
	case 'x':
		return p.hex(2)
	case 'u':
		return p.hex(4)
	case 'U':
		return p.hex(8)
	case 't':
		return '\t', nil
	case 'r':
		return '\r', nil
	case 'n':
		return '\n', nil
	case '\\', '"', '[', ']':
		return rune(c), nil
	case '-', '^':
		if inClass {
			return rune(c), nil
		}
	}
	p.pos -= 2
	return 0, p.errorf("unknown escape \\%c", c)
}

func (p *gbnfParser) hex(n int) (rune, error) {
	return hexEscape(p.src, &p.pos, n, p.errorf)
}

// hexEscape reads the n hex digits at *pos of src, naming a character, and
// moves *pos past them; errorf reports the position (the GBNF and regex
// parsers share it).
func hexEscape(src string, pos *int, n int, errorf func(string, ...any) error) (rune, error) {
	if *pos+n > len(src) {
		return 0, errorf("expecting %d hex digits", n)
	}
	v, err := strconv.ParseUint(src[*pos:*pos+n], 16, 32)
	if err != nil {
		return 0, errorf("expecting %d hex digits", n)
	}
	*pos += n
	if v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
		return 0, errorf("escape names U+%X, which is not a character", v)
	}
	return rune(v), nil
}

func (p *gbnfParser) class() (*Expr, error) {
	p.pos++ // [
	neg := false
	if p.peek() == '^' {
		neg = true
		p.pos++
	}
	var ranges []Range
	for {
		if p.eof() {
			return nil, p.errorf("unterminated character class")
		}
		if p.peek() == ']' {
			p.pos++
			break
		}
		lo, err := p.char(true)
		if err != nil {
			return nil, err
		}
		hi := lo
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			if hi, err = p.char(true); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, p.errorf("character range %q-%q is backwards", lo, hi)
			}
		}
		ranges = append(ranges, Range{lo, hi})
	}
	if len(ranges) == 0 && !neg {
		return nil, p.errorf("empty character class")
	}
	return &Expr{Kind: Class, Ranges: normRanges(ranges), Negated: neg}, nil
}
