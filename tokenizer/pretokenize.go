package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Character classes used by the Qwen2 pre-tokenizer. Every rune (and every
// byte that is not part of valid UTF-8) falls into exactly one class.
const (
	classOther   uint8 = iota // [^\s\p{L}\p{N}]; invalid UTF-8 bytes land here too
	classLetter               // \p{L}
	classNumber               // \p{N}
	classSpace                // \s other than \r and \n
	classNewline              // \r or \n
)

// asciiClass holds the class of every ASCII byte.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case c == '\r' || c == '\n':
			t[c] = classNewline
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			t[c] = classSpace
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			t[c] = classLetter
		case '0' <= c && c <= '9':
			t[c] = classNumber
		default:
			t[c] = classOther
		}
	}
	return t
}()

// classAt decodes the rune starting at s[i] and returns its class and width
// in bytes. A byte that does not start valid UTF-8 has width 1 and class
// classOther, so invalid input is carried through byte for byte.
func classAt(s string, i int) (class uint8, width int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && w <= 1 {
		return classOther, 1
	}
	switch {
	case unicode.IsLetter(r):
		return classLetter, w
	case unicode.IsNumber(r):
		return classNumber, w
	case unicode.IsSpace(r):
		// Matches the Unicode White_Space property used by \s, which
		// includes U+0085, U+00A0, U+2000..U+200A, U+3000 and friends but
		// not U+200B.
		return classSpace, w
	}
	return classOther, w
}

// isWhite reports whether the class matches \s.
func isWhite(class uint8) bool { return class == classSpace || class == classNewline }

// contractionLen returns the length in bytes of a contraction matched by
// (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i], or 0 if there is none. s[i] must be
// an apostrophe. Matching is case-insensitive in the Unicode sense, so U+017F
// (LATIN SMALL LETTER LONG S), whose case folding is 's', also matches.
func contractionLen(s string, i int) int {
	if i+1 >= len(s) {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	// U+017F is encoded as C5 BF.
	if i+2 < len(s) && s[i+1] == 0xC5 && s[i+2] == 0xBF {
		return 3
	}
	return 0
}

// nextPiece returns the end of the pre-token that starts at s[i], for
// i < len(s). It implements, by hand, the leftmost-first semantics of the
// Qwen2 split regex
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// trying the alternatives in order at position i, with up to digits
// numbers in a row where it has \p{N}: 1 for Qwen2, 3 for Llama 3's
// regex (llama.cpp's "llama-bpe"), which is the same but for \p{N}{1,3}.
func nextPiece(s string, i, digits int) int {
	c, w := classAt(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if s[i] == '\'' {
		if n := contractionLen(s, i); n > 0 {
			return i + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c == classLetter {
		return letterRun(s, i+w)
	}
	var next uint8 = 255 // class of the following rune, 255 at end of text
	if i+w < len(s) {
		next, _ = classAt(s, i+w)
	}
	if c != classNewline && c != classNumber && next == classLetter {
		return letterRun(s, i+w)
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
	// ' '?[^\s\p{L}\p{N}]+[\r\n]*
	if c == classOther || (s[i] == ' ' && next == classOther) {
		j := i + w
		for j < len(s) {
			k, n := classAt(s, j)
			if k != classOther {
				break
			}
			j += n
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	return spaceEnd(s, i)
}

// spaceEnd returns the end of the pre-token that starts with the
// whitespace at s[i], by the alternatives \s*[\r\n]+|\s+(?!\S)|\s+ that
// end the split expressions of this package, tried in order.
func spaceEnd(s string, i int) int {
	// Find the whitespace run [i, end), the end of the last newline in it,
	// and the start of its last rune.
	end, lastNL, lastStart, runes := i, -1, i, 0
	for end < len(s) {
		k, n := classAt(s, end)
		if !isWhite(k) {
			break
		}
		if k == classNewline {
			lastNL = end + n
		}
		lastStart = end
		end += n
		runes++
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+
		return lastNL
	case end == len(s): // \s+(?!\S) at end of text
		return end
	case runes >= 2: // \s+(?!\S): give the last space back to the next piece
		return lastStart
	default: // \s+
		return end
	}
}

// letterRun returns the end of the run of letters starting at s[j].
func letterRun(s string, j int) int {
	for j < len(s) {
		k, n := classAt(s, j)
		if k != classLetter {
			break
		}
		j += n
	}
	return j
}

// preTokenize splits s into pre-tokens by the Qwen2 expression with up to
// digits numbers in a row (nextPiece). It is used by tests; Encode walks
// the pieces with splitter.next directly.
func preTokenize(s string, digits int) []string {
	return splitter{digits: digits}.split(s)
}
