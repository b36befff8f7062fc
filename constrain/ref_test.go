package constrain

import (
	"unicode/utf8"

	"inferno/grammar"
)

// ref is a deliberately simple recognizer over a grammar's expressions, by
// backtracking on bytes, used as the oracle for the compiled matcher.
type ref struct {
	g    *grammar.Grammar
	in   []byte
	part bool // prefix mode: running out of input mid-match succeeds
}

// viable reports whether s is a prefix of some string of g's language.
func refViable(g *grammar.Grammar, s []byte) bool {
	r := &ref{g: g, in: s, part: true}
	return r.m(g.Rules[g.Root].Expr, 0, func(p int) bool { return p == len(s) })
}

// complete reports whether s is in g's language.
func refComplete(g *grammar.Grammar, s []byte) bool {
	r := &ref{g: g, in: s}
	return r.m(g.Rules[g.Root].Expr, 0, func(p int) bool { return p == len(s) })
}

func (r *ref) m(e *grammar.Expr, pos int, k func(int) bool) bool {
	switch e.Kind {
	case grammar.Empty:
		return k(pos)
	case grammar.Literal:
		for i := 0; i < len(e.Text); i++ {
			if pos+i == len(r.in) {
				return r.part
			}
			if r.in[pos+i] != e.Text[i] {
				return false
			}
		}
		return k(pos + len(e.Text))
	case grammar.Class:
		if pos == len(r.in) {
			return r.part
		}
		rest := r.in[pos:]
		if utf8.FullRune(rest) {
			c, n := utf8.DecodeRune(rest)
			if c == utf8.RuneError && n <= 1 {
				return false
			}
			return inClass(e, c, c) && k(pos+n)
		}
		if !r.part {
			return false
		}
		lo, hi, ok := prefixRange(rest)
		return ok && inClass(e, lo, hi)
	case grammar.Ref:
		return r.m(r.g.Rules[e.Rule].Expr, pos, k)
	case grammar.Seq:
		return r.seq(e.Subs, pos, k)
	case grammar.Alt:
		for _, s := range e.Subs {
			if r.m(s, pos, k) {
				return true
			}
		}
		return false
	case grammar.Repeat:
		return r.rep(e, 0, pos, k)
	}
	return false
}

func (r *ref) seq(subs []*grammar.Expr, pos int, k func(int) bool) bool {
	if len(subs) == 0 {
		return k(pos)
	}
	return r.m(subs[0], pos, func(p int) bool { return r.seq(subs[1:], p, k) })
}

func (r *ref) rep(e *grammar.Expr, n, pos int, k func(int) bool) bool {
	if n >= e.Min && k(pos) {
		return true
	}
	if e.Max >= 0 && n >= e.Max {
		return false
	}
	if pos == len(r.in) && r.part && n >= e.Min {
		return false // k(pos) already said whether the input may end here
	}
	return r.m(e.Subs[0], pos, func(p int) bool {
		if p == pos && n >= e.Min {
			return false
		}
		return r.rep(e, n+1, p, k)
	})
}

// prefixRange returns the code points whose encodings start with the
// incomplete sequence b, or false if none do.
func prefixRange(b []byte) (lo, hi rune, ok bool) {
	c := b[0]
	var n int
	secLo, secHi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		n = 2
	case c == 0xE0:
		n, secLo = 3, 0xA0
	case c == 0xED:
		n, secHi = 3, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		n = 3
	case c == 0xF0:
		n, secLo = 4, 0x90
	case c == 0xF4:
		n, secHi = 4, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		n = 4
	default:
		return 0, 0, false
	}
	if len(b) >= n {
		return 0, 0, false
	}
	a := make([]byte, n)
	z := make([]byte, n)
	copy(a, b)
	copy(z, b)
	for i := 1; i < n; i++ {
		l, h := byte(0x80), byte(0xBF)
		if i == 1 {
			l, h = secLo, secHi
		}
		if i < len(b) {
			if b[i] < l || b[i] > h {
				return 0, 0, false
			}
			continue
		}
		a[i], z[i] = l, h
	}
	lo, _ = utf8.DecodeRune(a)
	hi, _ = utf8.DecodeRune(z)
	return lo, hi, true
}

// inClass reports whether some valid code point in [lo, hi] is in class e.
func inClass(e *grammar.Expr, lo, hi rune) bool {
	member := func(c rune) bool {
		if c >= 0xD800 && c <= 0xDFFF || c < lo || c > hi {
			return false
		}
		in := false
		for _, r := range e.Ranges {
			if r.Lo <= c && c <= r.Hi {
				in = true
			}
		}
		return in != e.Negated
	}
	for _, c := range [...]rune{lo, hi, 0xD7FF, 0xE000} {
		if member(c) {
			return true
		}
	}
	for _, r := range e.Ranges {
		if r.Hi < lo-1 || r.Lo > hi+1 {
			continue
		}
		for _, c := range [...]rune{r.Lo - 1, r.Lo, r.Hi, r.Hi + 1} {
			if member(c) {
				return true
			}
		}
	}
	return false
}
