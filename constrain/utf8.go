package constrain

import (
	"slices"
	"unicode/utf8"

	"inferno/grammar"
)

// byteSeq is a sequence of byte ranges matching the UTF-8 encodings of a
// range of code points: byte i of an encoding is in [lo[i], hi[i]].
type byteSeq struct {
	n      int
	lo, hi [utf8.UTFMax]byte
}

// classRanges returns the code-point ranges a class matches, sorted and
// merged, surrogates removed (they have no UTF-8 encoding).
func classRanges(e *grammar.Expr) []grammar.Range {
	rs := slices.Clone(e.Ranges)
	slices.SortFunc(rs, func(a, b grammar.Range) int { return int(a.Lo - b.Lo) })
	var merged []grammar.Range
	for _, r := range rs {
		if r.Lo < 0 {
			r.Lo = 0
		}
		if r.Hi > utf8.MaxRune {
			r.Hi = utf8.MaxRune
		}
		if r.Lo > r.Hi {
			continue
		}
		if k := len(merged); k > 0 && r.Lo <= merged[k-1].Hi+1 {
			merged[k-1].Hi = max(merged[k-1].Hi, r.Hi)
			continue
		}
		merged = append(merged, r)
	}
	if e.Negated {
		var neg []grammar.Range
		next := rune(0)
		for _, r := range merged {
			if r.Lo > next {
				neg = append(neg, grammar.Range{Lo: next, Hi: r.Lo - 1})
			}
			next = r.Hi + 1
		}
		if next <= utf8.MaxRune {
			neg = append(neg, grammar.Range{Lo: next, Hi: utf8.MaxRune})
		}
		merged = neg
	}
	var out []grammar.Range
	for _, r := range merged {
		if r.Lo < 0xD800 && r.Hi > 0xDFFF {
			out = append(out, grammar.Range{Lo: r.Lo, Hi: 0xD7FF}, grammar.Range{Lo: 0xE000, Hi: r.Hi})
			continue
		}
		if r.Lo >= 0xD800 && r.Hi <= 0xDFFF {
			continue
		}
		if r.Lo >= 0xD800 && r.Lo <= 0xDFFF {
			r.Lo = 0xE000
		}
		if r.Hi >= 0xD800 && r.Hi <= 0xDFFF {
			r.Hi = 0xD7FF
		}
		out = append(out, r)
	}
	return out
}

// utf8Seqs appends the byte-range sequences matching exactly the UTF-8
// encodings of the code points in [lo, hi] (no surrogates inside).
func utf8Seqs(out []byteSeq, lo, hi rune) []byteSeq {
	for _, max := range [...]rune{0x7F, 0x7FF, 0xFFFF} {
		if lo <= max && hi > max {
			out = utf8Seqs(out, lo, max)
			return utf8Seqs(out, max+1, hi)
		}
	}
	n := utf8.RuneLen(lo)
	for i := 1; i < n; i++ {
		m := rune(1)<<(6*i) - 1
		if lo&^m != hi&^m {
			if lo&m != 0 {
				out = utf8Seqs(out, lo, lo|m)
				return utf8Seqs(out, (lo|m)+1, hi)
			}
			if hi&m != m {
				out = utf8Seqs(out, lo, (hi&^m)-1)
				return utf8Seqs(out, hi&^m, hi)
			}
		}
	}
	var a, b [utf8.UTFMax]byte
	utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(b[:], hi)
	s := byteSeq{n: n}
	for i := range n {
		s.lo[i], s.hi[i] = a[i], b[i]
	}
	return append(out, s)
}

// textSeqs are the byte sequences of the text slice's code points.
var textSeqs = func() []byteSeq {
	var out []byteSeq
	for _, r := range classRanges(&grammar.Expr{Kind: grammar.Class, Ranges: []grammar.Range{{Lo: 0x20, Hi: 0x21}, {Lo: 0x23, Hi: 0x5B}, {Lo: 0x5D, Hi: 0x7E}, {Lo: 0x80, Hi: utf8.MaxRune}}}) {
		out = utf8Seqs(out, r.Lo, r.Hi)
	}
	return out
}()
