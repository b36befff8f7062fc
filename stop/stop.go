// Package stop finds stop strings in text generated piece by piece.
//
// OpenAI's API lets a request name up to four stop strings: generation ends
// where the text first contains one of them, and neither it nor anything
// after it is returned, even when it spans several tokens and the text is
// streamed. A Matcher sits between the detokenizer and the client: it holds
// back only the text that might still turn out to be the start of a stop
// string, and lets everything else through at once.
package stop

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxStops is the number of stop strings OpenAI's API accepts.
const MaxStops = 4

// A Matcher finds the first stop string in a stream of text pieces. It
// works on bytes with a string-matching automaton per stop string, so
// each byte costs a few steps whatever the lengths of the stop strings.
//
// The first stop string is the one that is completed first: the one that
// ends first in the text, and of those that end at the same byte, the one
// that starts first. That is the earliest-starting one unless a stop string
// contains another in its middle ("abcd" and "c"): then the generation
// stops at the shorter one, as soon as it is complete, rather than waiting
// to see whether the longer one follows.
//
// A Matcher is not safe for concurrent use.
type Matcher struct {
	stops   []string
	fail    [][]int32 // by stop string: KMP failure function
	state   []int32   // by stop string: length of the longest suffix of the text that is a proper prefix of it
	held    string    // text not yet returned
	stopped bool
	matched int // the index of the stop string completed, when stopped
}

// New returns a Matcher for stops. It reports more than MaxStops stop
// strings and empty ones.
func New(stops []string) (*Matcher, error) {
	if len(stops) > MaxStops {
		return nil, fmt.Errorf("stop: %d stop strings, at most %d", len(stops), MaxStops)
	}
	m := &Matcher{
		stops: append([]string(nil), stops...),
		fail:  make([][]int32, len(stops)),
		state: make([]int32, len(stops)),
	}
	for i, s := range stops {
		if s == "" {
			return nil, errors.New("stop: empty stop string")
		}
		m.fail[i] = failure(s)
	}
	return m, nil
}

// failure returns the KMP failure function of s: f[i] is the length of the
// longest proper prefix of s[:i+1] that is also its suffix.
func failure(s string) []int32 {
	f := make([]int32, len(s))
	k := int32(0)
	for i := 1; i < len(s); i++ {
		for k > 0 && s[i] != s[k] {
			k = f[k-1]
		}
		if s[i] == s[k] {
			k++
		}
		f[i] = k
	}
	return f
}

// Write adds the next piece of generated text. It returns the text that is
// now safe to emit, which cannot be part of a stop string, and whether a
// stop string has been completed: then out is the text before it, and
// generation should end; the stop string and anything after it are
// dropped, and later calls return "", true until Reset.
//
// Write holds back the longest end of the text that is the start of some
// stop string (and an incomplete UTF-8 sequence at the very end, so that
// out never splits a character the next piece completes). Everything else
// is returned at once.
func (m *Matcher) Write(piece string) (out string, stopped bool) {
	if m.stopped {
		return "", true
	}
	base := len(m.held) // offset of piece in the pending text
	for j := 0; j < len(piece); j++ {
		c := piece[j]
		done := -1 // the longest stop string completed by c
		for i, s := range m.stops {
			k := m.state[i]
			for k > 0 && s[k] != c {
				k = m.fail[i][k-1]
			}
			if s[k] == c {
				k++
			}
			if int(k) == len(s) {
				if done < 0 || len(s) > len(m.stops[done]) {
					done = i
				}
				k = m.fail[i][k-1]
			}
			m.state[i] = k
		}
		if done >= 0 {
			end := base + j + 1 - len(m.stops[done]) // where the stop string starts
			if end <= len(m.held) {
				out = m.held[:end]
			} else {
				out = m.held + piece[:end-len(m.held)]
			}
			m.held, m.stopped, m.matched = "", true, done
			return out, true
		}
	}
	text := m.held + piece
	hold := 0
	for _, k := range m.state {
		hold = max(hold, int(k))
	}
	hold = max(hold, partialRune(text))
	m.held = text[len(text)-hold:]
	return text[:len(text)-hold], false
}

// partialRune returns the length of the incomplete UTF-8 sequence at the
// end of s, 0 if none.
func partialRune(s string) int {
	for n := 1; n <= min(len(s), utf8.UTFMax-1); n++ {
		c := s[len(s)-n]
		if c < utf8.RuneSelf {
			return 0 // ASCII
		}
		if utf8.RuneStart(c) {
			if utf8.FullRuneInString(s[len(s)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}

// Matched returns the stop string that stopped the text, "" while none
// has.
func (m *Matcher) Matched() string {
	if !m.stopped {
		return ""
	}
	return m.stops[m.matched]
}

// Flush returns the text held back, at the end of the generation when no
// stop string was completed, and forgets it.
func (m *Matcher) Flush() string {
	out := m.held
	m.held = ""
	clear(m.state)
	return out
}

// Reset forgets all text, and a stop string found, for a new generation.
func (m *Matcher) Reset() {
	m.held, m.stopped = "", false
	clear(m.state)
}
