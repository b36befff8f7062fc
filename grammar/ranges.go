package grammar

import (
	"slices"
	"unicode/utf8"
)

// normRanges returns rs sorted with overlapping and adjacent ranges merged.
func normRanges(rs []Range) []Range {
	if len(rs) == 0 {
		return rs
	}
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b Range) int { return int(a.Lo) - int(b.Lo) })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.Lo <= last.Hi+1 {
			last.Hi = max(last.Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// complement returns the code points outside rs (which must be normalised),
// surrogates excluded.
func complement(rs []Range) []Range {
	var out []Range
	next := rune(0)
	for _, r := range rs {
		if r.Lo > next {
			out = append(out, Range{next, r.Lo - 1})
		}
		next = r.Hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, Range{next, utf8.MaxRune})
	}
	return subtract(out, []Range{{0xD800, 0xDFFF}})
}

// subtract returns the code points of a that are not in b; both normalised.
func subtract(a, b []Range) []Range {
	var out []Range
	for _, r := range a {
		lo := r.Lo
		for _, s := range b {
			if s.Hi < lo || s.Lo > r.Hi {
				continue
			}
			if s.Lo > lo {
				out = append(out, Range{lo, s.Lo - 1})
			}
			lo = s.Hi + 1
		}
		if lo <= r.Hi {
			out = append(out, Range{lo, r.Hi})
		}
	}
	return out
}

// positive returns the ranges a class matches, negation resolved.
func positive(e *Expr) []Range {
	rs := normRanges(e.Ranges)
	if e.Negated {
		return complement(rs)
	}
	return rs
}

// inRanges reports whether r lies in rs.
func inRanges(r rune, rs []Range) bool {
	for _, x := range rs {
		if x.Lo <= r && r <= x.Hi {
			return true
		}
	}
	return false
}
