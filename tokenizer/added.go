package tokenizer

import "slices"

// added finds added tokens (control, user-defined and unknown) in raw
// text, leftmost first and, among those that start at one position,
// longest first, like the added-token matcher of Hugging Face tokenizers.
type added struct {
	ids map[string]int32 // text → token id
	// lens holds, by first byte, the distinct lengths of the added tokens
	// that start with it, longest first; nil for bytes that start none.
	lens [256][]int
	// second is, by first byte, the set of second bytes of the added tokens
	// of two bytes or more that start with it: a quick test before the map
	// lookups (Gemma's runs of spaces are added tokens, and text has many
	// single spaces).
	second [256][4]uint64
}

// newAdded collects the added tokens of a vocabulary. alias, if not nil,
// returns another text under which a token is also matched (or "").
func newAdded(tokens []string, types []int32, alias func(id int, text string) string) added {
	a := added{ids: make(map[string]int32)}
	put := func(text string, id int) {
		if text == "" {
			return
		}
		if _, dup := a.ids[text]; dup {
			return
		}
		a.ids[text] = int32(id)
		if len(text) >= 2 {
			a.second[text[0]][text[1]>>6] |= 1 << (text[1] & 63)
		}
		if l := a.lens[text[0]]; !slices.Contains(l, len(text)) {
			a.lens[text[0]] = append(l, len(text))
		}
	}
	for id, text := range tokens {
		if !isAdded(types[id]) {
			continue
		}
		put(text, id)
		if alias != nil {
			put(alias(id, text), id)
		}
	}
	for i := range a.lens {
		slices.SortFunc(a.lens[i], func(x, y int) int { return y - x })
	}
	return a
}

// find returns the position, length and id of the leftmost-longest added
// token in s, or len(s), 0, -1 if there is none. Control and unknown
// tokens count only if special is set.
func (a *added) find(s string, types []int32, special bool) (pos, n int, id int32) {
	if len(a.ids) == 0 {
		return len(s), 0, -1
	}
	for i := 0; i < len(s); i++ {
		lens := a.lens[s[i]]
		if len(lens) == 0 {
			continue
		}
		long := i+1 < len(s) && a.second[s[i]][s[i+1]>>6]&(1<<(s[i+1]&63)) != 0
		for _, l := range lens {
			if i+l > len(s) || l >= 2 && !long {
				continue
			}
			id, ok := a.ids[s[i:i+l]]
			if !ok || !special && types[id] != TypeUserDefined {
				continue
			}
			return i, l, id
		}
	}
	return len(s), 0, -1
}
