package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Regex compiles pattern, in the regular-expression subset described at
// Builder.Regex, to a grammar whose root rule matches exactly the strings
// the pattern matches in full.
func Regex(pattern string) (*Grammar, error) {
	b := NewBuilder()
	e, err := b.Regex(pattern)
	if err != nil {
		return nil, err
	}
	if err := b.Define("root", e); err != nil {
		return nil, err
	}
	return b.Grammar("root")
}

// Regex compiles pattern to an expression that matches exactly the strings
// the pattern matches in full: the pattern is anchored at both ends whether
// or not it starts with ^ and ends with $.
//
// The subset is what JSON Schema patterns and vLLM's guided_regex use in
// practice: literal characters; the escapes \d \w \s \D \W \S (ASCII digits
// and word characters; \s the whitespace both ECMAScript and Go agree on,
// \S what neither counts as whitespace), \t \n \r \f \v \0 \xHH \uHHHH
// \u{H...} and a backslash before any punctuation; character classes with
// ranges, negation and those escapes; `.` (any character but a line
// terminator); groups, capturing, non-capturing (?:...) or named
// (?<name>...) and (?P<name>...); alternation; and the quantifiers * + ?
// {m} {m,} {m,n}, greedy or lazy (a lazy quantifier matches the same
// language). ^ and $ are accepted at the start and end of a top-level
// alternative. Anything else (lookaround, backreferences, word boundaries,
// Unicode property escapes, inline flags, possessive quantifiers) is an
// error that names the feature.
func (b *Builder) Regex(pattern string) (*Expr, error) {
	if len(pattern) > maxSourceLen {
		return nil, fmt.Errorf("grammar: regex: pattern is %d bytes, more than the limit of %d", len(pattern), maxSourceLen)
	}
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("grammar: regex: pattern is not valid UTF-8")
	}
	p := &regexParser{src: pattern}
	e, err := p.alternation(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, p.errorf("unmatched ')'")
	}
	return e, nil
}

type regexParser struct {
	src         string
	pos         int
	leadingZero bool // a {m,n} had a count with a leading zero
}

func (p *regexParser) errorf(format string, args ...any) error {
	src := p.src
	if len(src) > 60 {
		src = src[:60] + "..."
	}
	return fmt.Errorf("grammar: regex %q: at offset %d: %s", src, p.pos, fmt.Sprintf(format, args...))
}

func (p *regexParser) more() bool { return p.pos < len(p.src) }

func (p *regexParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *regexParser) alternation(depth int) (*Expr, error) {
	var alts []*Expr
	for {
		e, err := p.sequence(depth)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
		if p.peek() != '|' {
			return Choice(alts...), nil
		}
		p.pos++
	}
}

func (p *regexParser) sequence(depth int) (*Expr, error) {
	var items []*Expr
	start := p.pos
	for p.more() {
		c := p.peek()
		var atom *Expr
		switch c {
		case '|', ')':
			return seqMerge(items), nil
		case '^':
			if depth > 0 || p.pos != start {
				return nil, p.errorf("the anchor ^ is supported only at the start of the pattern or of a top-level alternative")
			}
			p.pos++
			start = p.pos
			continue
		case '$':
			p.pos++
			if depth > 0 || (p.more() && p.peek() != '|') {
				p.pos--
				return nil, p.errorf("the anchor $ is supported only at the end of the pattern or of a top-level alternative")
			}
			continue
		case '(':
			e, err := p.group(depth)
			if err != nil {
				return nil, err
			}
			atom = e
		case '[':
			e, err := p.class()
			if err != nil {
				return nil, err
			}
			atom = e
		case '.':
			p.pos++
			atom = NotChars(Range{'\n', '\n'}, Range{'\r', '\r'}, Range{0x2028, 0x2029})
		case '\\':
			rs, r, err := p.escape(false, false)
			if err != nil {
				return nil, err
			}
			if rs != nil {
				atom = Chars(rs...)
			} else {
				atom = Lit(string(r))
			}
		case '*', '+', '?':
			return nil, p.errorf("quantifier %q with nothing to repeat", c)
		case '{':
			if _, _, ok := p.braces(); ok || p.leadingZero {
				return nil, p.errorf("quantifier with nothing to repeat")
			}
			p.pos++
			atom = Lit("{")
		default:
			r, n := utf8.DecodeRuneInString(p.src[p.pos:])
			p.pos += n
			atom = Lit(string(r))
		}
		q, err := p.quantifier(atom)
		if err != nil {
			return nil, err
		}
		items = append(items, q)
	}
	return seqMerge(items), nil
}

// seqMerge makes a sequence of items, joining adjacent literals.
func seqMerge(items []*Expr) *Expr {
	var out []*Expr
	for _, e := range items {
		if e.Kind == Empty {
			continue
		}
		if n := len(out); n > 0 && e.Kind == Literal && out[n-1].Kind == Literal {
			out[n-1] = Lit(out[n-1].Text + e.Text)
			continue
		}
		out = append(out, e)
	}
	return Sequence(out...)
}

// quantifier applies any quantifiers that follow atom.
func (p *regexParser) quantifier(atom *Expr) (*Expr, error) {
	quantified := false
	for p.more() {
		var min, max int
		switch p.peek() {
		case '*':
			min, max = 0, -1
			p.pos++
		case '+':
			min, max = 1, -1
			p.pos++
		case '?':
			min, max = 0, 1
			p.pos++
		case '{':
			lo, hi, ok := p.braces()
			if p.leadingZero {
				return nil, p.errorf("a repetition count with a leading zero is ambiguous")
			}
			if !ok {
				return atom, nil
			}
			min, max = lo, hi
		default:
			return atom, nil
		}
		if quantified {
			return nil, p.errorf("a quantifier may not follow a quantifier (possessive or nested repetition)")
		}
		if max >= 0 && max < min {
			return nil, p.errorf("repetition {%d,%d} has its maximum below its minimum", min, max)
		}
		if min > MaxRepeat || max > MaxRepeat {
			return nil, p.errorf("repetition count is more than the limit of %d", MaxRepeat)
		}
		atom = rep(atom, min, max)
		quantified = true
		if p.peek() == '?' { // lazy: the same language
			p.pos++
		}
	}
	return atom, nil
}

// braces parses {m}, {m,} or {m,n} at the current position; ok is false,
// with the position unchanged, where the text is not such a quantifier.
func (p *regexParser) braces() (min, max int, ok bool) {
	s := p.src[p.pos:]
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return 0, 0, false
	}
	body := s[1:end]
	lo, hi, comma := strings.Cut(body, ",")
	isNum := func(t string) bool {
		if t == "" || len(t) > 9 {
			return false
		}
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return false
			}
		}
		return true
	}
	if !isNum(lo) || (comma && hi != "" && !isNum(hi)) {
		return 0, 0, false
	}
	if len(lo) > 1 && lo[0] == '0' || len(hi) > 1 && hi[0] == '0' {
		// ECMAScript reads {01} as a count, Go as literal text.
		p.leadingZero = true
		return 0, 0, false
	}
	min, _ = strconv.Atoi(lo)
	max = min
	if comma {
		max = -1
		if hi != "" {
			max, _ = strconv.Atoi(hi)
		}
	}
	p.pos += end + 1
	return min, max, true
}

func (p *regexParser) group(depth int) (*Expr, error) {
	if depth >= maxNesting {
		return nil, p.errorf("groups nested more than %d deep", maxNesting)
	}
	open := p.pos
	p.pos++
	if p.peek() == '?' {
		rest := p.src[p.pos:]
		switch {
		case strings.HasPrefix(rest, "?:"):
			p.pos += 2
		case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"):
			return nil, p.errorf("lookahead is not supported")
		case strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"):
			return nil, p.errorf("lookbehind is not supported")
		case strings.HasPrefix(rest, "?<"), strings.HasPrefix(rest, "?P<"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return nil, p.errorf("unterminated group name")
			}
			p.pos += end + 1
		default:
			return nil, p.errorf("inline flags and other (? groups are not supported")
		}
	}
	e, err := p.alternation(depth + 1)
	if err != nil {
		return nil, err
	}
	if p.peek() != ')' {
		p.pos = open
		return nil, p.errorf("unclosed group")
	}
	p.pos++
	return e, nil
}

// Character sets of the shorthand escapes.
var (
	rxDigit = []Range{{'0', '9'}}
	rxWord  = []Range{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	// rxSpaceGo is Go's \s, which ECMAScript's \s includes: the whitespace
	// both agree on.
	rxSpaceGo = []Range{{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}}
	// rxSpaceJS is ECMAScript's \s, which includes Go's.
	rxSpaceJS = []Range{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
		{0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}}
)

// escape parses a backslash escape. It returns a set of ranges for a class
// escape (\d and the like) or a single character. In a negated class the
// whitespace sets swap, so that the class matches only what both
// ECMAScript and Go would match.
func (p *regexParser) escape(inClass, negated bool) ([]Range, rune, error) {
	if p.pos+1 >= len(p.src) {
		return nil, 0, p.errorf("trailing backslash")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	space, notSpace := rxSpaceGo, complement(normRanges(rxSpaceJS))
	if negated {
		space, notSpace = normRanges(rxSpaceJS), complement(rxSpaceGo)
	}
	switch c {
	case 'd':
		return rxDigit, 0, nil
	case 'D':
		return complement(rxDigit), 0, nil
	case 'w':
		return rxWord, 0, nil
	case 'W':
		return complement(rxWord), 0, nil
	case 's':
		return space, 0, nil
	case 'S':
		return notSpace, 0, nil
	case 't':
		return nil, '\t', nil
	case 'n':
		return nil, '\n', nil
	case 'r':
		return nil, '\r', nil
	case 'f':
		return nil, '\f', nil
	case 'v':
		return nil, '\v', nil
	case '0':
		if c := p.peek(); '0' <= c && c <= '9' {
			return nil, 0, p.errorf("octal escapes are not supported")
		}
		return nil, 0, nil
	case 'x':
		r, err := p.hex(2)
		return nil, r, err
	case 'u':
		if p.peek() == '{' {
			end := strings.IndexByte(p.src[p.pos:], '}')
			if end < 2 || end > 9 {
				return nil, 0, p.errorf("bad \\u{...} escape")
			}
			p.pos++
			r, err := p.hex(end - 1)
			p.pos++
			return nil, r, err
		}
		r, err := p.hex(4)
		return nil, r, err
	case 'b':
		if inClass {
			return nil, '\b', nil
		}
		return nil, 0, p.errorf("word boundaries (\\b) are not supported")
	case 'B':
		return nil, 0, p.errorf("word boundaries (\\B) are not supported")
	case 'p', 'P':
		return nil, 0, p.errorf("Unicode property escapes (\\%c) are not supported", c)
	case 'k':
		return nil, 0, p.errorf("backreferences (\\k) are not supported")
	case 'c':
		return nil, 0, p.errorf("control escapes (\\c) are not supported")
	}
	if '1' <= c && c <= '9' {
		return nil, 0, p.errorf("backreferences (\\%c) are not supported", c)
	}
	if c < utf8.RuneSelf && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
		return nil, rune(c), nil
	}
	p.pos -= 2
	return nil, 0, p.errorf("unknown escape \\%c", c)
}

func (p *regexParser) hex(n int) (rune, error) {
	return hexEscape(p.src, &p.pos, n, p.errorf)
}

func (p *regexParser) class() (*Expr, error) {
	open := p.pos
	p.pos++
	neg := false
	if p.peek() == '^' {
		neg = true
		p.pos++
	}
	if p.peek() == ']' {
		return nil, p.errorf("a class may not start with ']' (ECMAScript and Go read it differently); escape it")
	}
	var ranges []Range
	// item parses one class member: a set, or a single character.
	item := func() ([]Range, rune, bool, error) {
		switch p.peek() {
		case '\\':
			rs, r, err := p.escape(true, neg)
			return rs, r, rs == nil, err
		case '[':
			if strings.HasPrefix(p.src[p.pos:], "[:") {
				return nil, 0, false, p.errorf("POSIX classes ([:name:]) are not supported")
			}
		}
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += n
		return nil, r, true, nil
	}
	for {
		if !p.more() {
			p.pos = open
			return nil, p.errorf("unterminated character class")
		}
		if p.peek() == ']' {
			p.pos++
			break
		}
		rs, lo, single, err := item()
		if err != nil {
			return nil, err
		}
		if !single {
			ranges = append(ranges, rs...)
			continue
		}
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			rs, hi, single, err := item()
			if err != nil {
				return nil, err
			}
			if !single {
				return nil, p.errorf("a class escape like \\d cannot end a range")
			}
			_ = rs
			if hi < lo {
				return nil, p.errorf("character range %q-%q is backwards", lo, hi)
			}
			ranges = append(ranges, Range{lo, hi})
			continue
		}
		ranges = append(ranges, Range{lo, lo})
	}
	ranges = normRanges(ranges)
	if neg {
		ranges = complement(ranges)
	}
	if len(ranges) == 0 {
		return nil, p.errorf("character class matches nothing")
	}
	return Chars(ranges...), nil
}
