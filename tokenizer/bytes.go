package tokenizer

import (
	"unicode/utf8"
)

// byteToRune is GPT-2's bytes_to_unicode table: it maps every byte to a
// printable rune so that byte strings can be stored as text. The printable
// bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' map to themselves; the remaining 68
// bytes map, in order, to U+0100 and up (so ' ' becomes 'Ġ' and '\n' 'Ċ').
var byteToRune [256]rune

// runeToByte is the inverse of byteToRune, indexed by rune. Entries for runes
// that byteToRune does not produce are -1.
var runeToByte [324]int16

func init() {
	for i := range runeToByte {
		runeToByte[i] = -1
	}
	n := rune(0)
	for b := range 256 {
		if '!' <= b && b <= '~' || 0xA1 <= b && b <= 0xAC || 0xAE <= b && b <= 0xFF {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = 256 + n
			n++
		}
		runeToByte[byteToRune[b]] = int16(b)
	}
}

// byteLevelDecode appends to dst the bytes that the byte-level encoded token
// text s stands for. Like the ByteLevel decoder of Hugging Face tokenizers,
// if any rune of s is not a byte-level rune, s is appended unchanged.
func byteLevelDecode(dst []byte, s string) []byte {
	start := len(dst)
	for _, r := range s {
		if r < 0 || int(r) >= len(runeToByte) || runeToByte[r] < 0 {
			return append(dst[:start], s...)
		}
		dst = append(dst, byte(runeToByte[r]))
	}
	return dst
}

// UTF-8 scan results reported by scanUTF8.
const (
	utf8Valid      = iota // a complete, valid encoded rune
	utf8Invalid           // an ill-formed sequence, to be replaced by one U+FFFD
	utf8Incomplete        // a valid prefix of a rune cut off by the end of input
)

// scanUTF8 examines the sequence at the start of b (len(b) > 0) and returns
// its status and length. For ill-formed input the length is that of the
// "maximal subpart" of the sequence, as in the Unicode standard's
// recommended practice (and Rust's String::from_utf8_lossy, which Hugging
// Face tokenizers uses), so each subpart becomes exactly one U+FFFD.
func scanUTF8(b []byte) (status, n int) {
	c := b[0]
	var size int
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	switch {
	case c < 0x80:
		return utf8Valid, 1
	case c < 0xC2:
		return utf8Invalid, 1
	case c < 0xE0:
		size = 2
	case c < 0xF0:
		size = 3
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c < 0xF5:
		size = 4
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return utf8Invalid, 1
	}
	for i := 1; i < size; i++ {
		if i >= len(b) {
			return utf8Incomplete, i
		}
		if b[i] < lo || b[i] > hi {
			return utf8Invalid, i
		}
		lo, hi = 0x80, 0xBF
	}
	return utf8Valid, size
}

// appendLossy appends b to dst, replacing each ill-formed subsequence with
// U+FFFD. If final is false, a valid but incomplete sequence at the end of b
// is not consumed; appendLossy returns the number of bytes of b it consumed.
func appendLossy(dst, b []byte, final bool) ([]byte, int) {
	i := 0
	for i < len(b) {
		// Copy the longest valid run at once.
		j := i
		for j < len(b) && b[j] < utf8.RuneSelf {
			j++
		}
		if j > i {
			dst = append(dst, b[i:j]...)
			i = j
			continue
		}
		status, n := scanUTF8(b[i:])
		switch status {
		case utf8Valid:
			dst = append(dst, b[i:i+n]...)
		case utf8Incomplete:
			if !final {
				return dst, i
			}
			dst = utf8.AppendRune(dst, utf8.RuneError)
		default:
			dst = utf8.AppendRune(dst, utf8.RuneError)
		}
		i += n
	}
	return dst, i
}

// lossyString converts b to a string, replacing ill-formed UTF-8 as
// appendLossy does.
func lossyString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out, _ := appendLossy(make([]byte, 0, len(b)+8), b, true)
	return string(out)
}
