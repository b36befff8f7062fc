package grammar

import (
	"fmt"
	"slices"
)

// Limits of a string's pattern or format intersected with length bounds:
// beyond them the schema is refused.
const (
	// MaxLengthNFA bounds the character automaton of the pattern, its
	// repetitions written out.
	MaxLengthNFA = 1 << 16
	// MaxLengthDFA bounds the pattern's deterministic automaton.
	MaxLengthDFA = 1 << 12
	// MaxLengthStates bounds the product of the pattern's automaton and
	// the length count (states in which the count still matters).
	MaxLengthStates = 1 << 15
	// MaxLengthSize bounds the byte automaton the product builds in the
	// engine (autoSize), labels written as JSON.
	MaxLengthSize = 1 << 17
	// maxLengthCells bounds the transition tables (states times the
	// alphabet's intervals) of the automata built on the way.
	maxLengthCells = 1 << 22
)

// boundLength returns an expression over a string's characters matching
// the strings e matches whose length in code points lies in [lo, hi] (hi
// < 0: no upper bound), or nil where there are none. e has no references
// or automata (a pattern or a format).
//
// A sequence whose one part of varying length repeats a body of fixed
// length keeps its shape with the repetition's bounds narrowed (the
// engine counts long repetitions cheaply). Anything else becomes the
// product of e's minimal deterministic automaton and a count of the
// characters read, where the count still matters: states from which every
// way to the end keeps the length within the bounds drop it.
//
// Where that product passes the limits and the sequence starts with parts
// of bounded length, the bounds are split between those parts and the
// rest (splitBounds): every string still has an allowed length, but not
// every string of an allowed length can be written (a uri with maxLength
// 2083 keeps at most 1811 characters for its path, query and fragment,
// whatever the length of its host).
func boundLength(e *Expr, lo, hi int) (*Expr, error) {
	tries := maxLengthTries
	return boundLengthTries(e, lo, hi, &tries)
}

// maxLengthTries bounds the automata one boundLength builds, splits of the
// bounds included.
const maxLengthTries = 12

func boundLengthTries(e *Expr, lo, hi int, tries *int) (*Expr, error) {
	if r, ok := narrowRepeat(e, lo, hi); ok {
		return r, nil
	}
	if *tries <= 0 {
		return nil, fmt.Errorf("more than %d automata tried", maxLengthTries)
	}
	*tries--
	d, err := newCharDFA(e)
	if err == nil {
		d.minimize()
		var r *Expr
		if r, err = d.product(lo, hi); err == nil {
			return r, nil
		}
	}
	if r, ok := splitBounds(e, lo, hi, tries); ok {
		return r, nil
	}
	if r, ok := shareBounds(e, lo, hi, tries); ok {
		return r, nil
	}
	return nil, err
}

// shareBounds bounds each part of unbounded length of a sequence (with
// maxLength) to an equal share of what the other parts leave, the first
// such part taking up what minLength needs beyond the parts' shortest, if
// that yields an expression: `[^@]+@[^@]+` with maxLength 41 becomes
// `[^@]{1,20}@[^@]{1,20}`.
func shareBounds(e *Expr, lo, hi int, tries *int) (*Expr, bool) {
	if e.Kind != Seq || hi < 0 {
		return nil, false
	}
	items := flatSeq(e, nil)
	fixed, mins, minAll := 0, 0, 0
	var open []int
	for i, it := range items {
		l, h := lengthBounds(it)
		minAll += l
		if h < 0 {
			open = append(open, i)
			mins += l
		} else {
			fixed += h
		}
	}
	if len(open) == 0 || hi-fixed < mins {
		return nil, false
	}
	share := (hi - fixed - mins) / len(open)
	out := slices.Clone(items)
	for k, i := range open {
		l, _ := lengthBounds(items[i])
		plo := l
		if k == 0 {
			plo += max(0, lo-minAll)
		}
		r, err := boundLengthTries(items[i], plo, l+share, tries)
		if err != nil || r == nil {
			return nil, false
		}
		out[i] = r
	}
	return Sequence(out...), true
}

// splitBounds bounds the lengths of a sequence's parts after its first
// ones of bounded length, if that yields an expression. The first parts
// keep their longest length where that leaves the rest at least half of
// maxLength; otherwise they are bounded too, to half, a quarter or an
// eighth of it.
func splitBounds(e *Expr, lo, hi int, tries *int) (*Expr, bool) {
	if e.Kind != Seq {
		return nil, false
	}
	items := flatSeq(e, nil)
	k, amin, amax := 0, 0, 0
	for ; k < len(items); k++ {
		l, h := lengthBounds(items[k])
		if h < 0 {
			break
		}
		amin, amax = amin+l, amax+h
	}
	if k == 0 || k == len(items) {
		return nil, false
	}
	head, tail := Sequence(items[:k]...), Sequence(items[k:]...)
	tailLo := max(0, lo-amin)
	if hi < 0 {
		rest, err := boundLengthTries(tail, tailLo, -1, tries)
		if err != nil || rest == nil {
			return nil, false
		}
		return cat(head, rest), true
	}
	var budgets []int
	if amax <= hi/2 {
		budgets = append(budgets, amax)
	}
	for _, b := range []int{hi / 2, hi / 4, hi / 8} {
		if b < amax && b >= amin && (len(budgets) == 0 || b < budgets[len(budgets)-1]) {
			budgets = append(budgets, b)
		}
	}
	for _, b := range budgets {
		h := head
		if b < amax {
			var err error
			if h, err = boundLengthTries(head, 0, b, tries); err != nil || h == nil {
				continue
			}
		}
		rest, err := boundLengthTries(tail, tailLo, hi-b, tries)
		if err != nil || rest == nil {
			continue
		}
		return cat(h, rest), true
	}
	return nil, false
}

// narrowRepeat handles the sequence with one repetition of a fixed-length
// body; ok is false for other shapes.
func narrowRepeat(e *Expr, lo, hi int) (*Expr, bool) {
	items := []*Expr{e}
	if e.Kind == Seq {
		items = flatSeq(e, nil)
	}
	fixed, vi := 0, -1
	for i, it := range items {
		l, h := lengthBounds(it)
		if l == h {
			fixed += l
			continue
		}
		if vi >= 0 {
			return nil, false
		}
		vi = i
	}
	if vi < 0 {
		if fixed < lo || (hi >= 0 && fixed > hi) {
			return nil, true
		}
		return e, true
	}
	r := items[vi]
	if r.Kind != Repeat {
		return nil, false
	}
	k, kh := lengthBounds(r.Subs[0])
	if k != kh || k == 0 {
		return nil, false
	}
	// fixed + c*k within [lo, hi], c within [r.Min, r.Max].
	cmin, cmax := r.Min, r.Max
	if need := lo - fixed; need > 0 {
		cmin = max(cmin, (need+k-1)/k)
	}
	if hi >= 0 {
		if hi < fixed {
			return nil, true
		}
		if m := (hi - fixed) / k; cmax < 0 || m < cmax {
			cmax = m
		}
	}
	if cmax >= 0 && cmin > cmax {
		return nil, true
	}
	out := slices.Clone(items)
	out[vi] = Rep(r.Subs[0], cmin, cmax)
	return Sequence(out...), true
}

func flatSeq(e *Expr, out []*Expr) []*Expr {
	for _, s := range e.Subs {
		if s.Kind == Seq {
			out = flatSeq(s, out)
		} else {
			out = append(out, s)
		}
	}
	return out
}
