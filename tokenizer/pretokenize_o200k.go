package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Case properties of runes in the o200k expression. A rune may have both
// (modifier and other letters, and marks) or neither.
const (
	caseUpper uint8 = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	caseLower                   // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// runeCase returns the case properties of r.
func runeCase(r rune) uint8 {
	if r < utf8.RuneSelf {
		switch {
		case 'A' <= r && r <= 'Z':
			return caseUpper
		case 'a' <= r && r <= 'z':
			return caseLower
		}
		return 0
	}
	switch {
	case unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r):
		return caseUpper
	case unicode.Is(unicode.Ll, r):
		return caseLower
	case unicode.Is(unicode.Lm, r) || unicode.Is(unicode.Lo, r) || unicode.IsMark(r):
		return caseUpper | caseLower
	}
	return 0
}

// caseAt returns the case properties of the rune at s[i] and its width. A
// byte that does not start valid UTF-8 has width 1 and no case.
func caseAt(s string, i int) (props uint8, width int) {
	if c := s[i]; c < utf8.RuneSelf {
		return runeCase(rune(c)), 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && w <= 1 {
		return 0, 1
	}
	return runeCase(r), w
}

// caseRun returns the end of the run of runes with property prop that
// starts at s[j].
func caseRun(s string, j int, prop uint8) int {
	for j < len(s) {
		p, w := caseAt(s, j)
		if p&prop == 0 {
			break
		}
		j += w
	}
	return j
}

// wordEnd matches, at s[j], U*L+ (upperFirst false) or U+L* (upperFirst
// true), where U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
// L = [\p{Ll}\p{Lm}\p{Lo}\p{M}], as a backtracking engine does: U* takes
// as much as it can and gives runes back until L+ matches. It returns the
// end of the match, or -1 if there is none.
func wordEnd(s string, j int, upperFirst bool) int {
	e := caseRun(s, j, caseUpper)
	if upperFirst {
		if e == j {
			return -1
		}
		return caseRun(s, e, caseLower)
	}
	if e < len(s) {
		if p, _ := caseAt(s, e); p&caseLower != 0 {
			return caseRun(s, e, caseLower)
		}
	}
	// Backtrack: U* gives back one rune at a time; the first that is also
	// in L starts L+, which then ends where the U run did at the latest
	// (the rune at e is not in L). Runs of U are valid UTF-8.
	for k := e; k > j; {
		r, w := utf8.DecodeLastRuneInString(s[j:k])
		k -= w
		if runeCase(r)&caseLower != 0 {
			return caseRun(s, k, caseLower)
		}
	}
	return -1
}

// nextPieceO200k returns the end of the pre-token that starts at s[i], for
// i < len(s), by the split expression of OpenAI's o200k encoding
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// (one line in tokenizer.json), trying the alternatives in order with
// backtracking, as Oniguruma does. Mistral's tekken expression is the same
// without the contractions and with \p{N} for \p{N}{1,3}: digits is the
// most numbers in a row, and contractions whether words take them.
func nextPieceO200k(s string, i, digits int, contractions bool) int {
	c, w := classAt(s, i)
	// [^\r\n\p{L}\p{N}]? may take the first rune; the engine tries with it
	// first, then without, for each of the two word alternatives in turn.
	prefix := c == classOther || c == classSpace
	for _, upperFirst := range [2]bool{false, true} {
		e := -1
		if prefix {
			e = wordEnd(s, i+w, upperFirst)
		}
		if e < 0 {
			e = wordEnd(s, i, upperFirst)
		}
		if e >= 0 {
			if contractions && e < len(s) && s[e] == '\'' {
				e += contractionLen(s, e)
			}
			return e
		}
	}
	// \p{N}{1,digits}
	if c == classNumber {
		j := i + w
		for n := 1; n < digits && j < len(s); n++ {
			k, w := classAt(s, j)
			if k != classNumber {
				break
			}
			j += w
		}
		return j
	}
	// ' '?[^\s\p{L}\p{N}]+[\r\n/]*
	var next uint8 = 255 // class of the following rune, 255 at end of text
	if i+w < len(s) {
		next, _ = classAt(s, i+w)
	}
	if c == classOther || (s[i] == ' ' && next == classOther) {
		j := i + w
		for j < len(s) {
			k, n := classAt(s, j)
			if k != classOther {
				break
			}
			j += n
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	}
	return spaceEnd(s, i)
}
