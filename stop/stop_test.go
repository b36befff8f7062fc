package stop

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// reference returns the text before the first stop string (see Matcher)
// and whether there is one.
func reference(text string, stops []string) (string, bool) {
	for end := 1; end <= len(text); end++ {
		best := ""
		for _, s := range stops {
			if strings.HasSuffix(text[:end], s) && len(s) > len(best) {
				best = s
			}
		}
		if best != "" {
			return text[:end-len(best)], true
		}
	}
	return text, false
}

// step is one Write: the piece and what it must return.
type step struct {
	piece, out string
	stopped    bool
}

func run(t *testing.T, stops []string, steps []step, flush string) {
	t.Helper()
	m, err := New(stops)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		out, stopped := m.Write(s.piece)
		if out != s.out || stopped != s.stopped {
			t.Fatalf("stops %q, Write #%d(%q) = %q, %v; want %q, %v", stops, i, s.piece, out, stopped, s.out, s.stopped)
		}
	}
	if len(steps) > 0 && steps[len(steps)-1].stopped {
		want, _ := reference(joinPieces(steps), stops)
		if got := m.Matched(); got == "" || !strings.HasPrefix(joinPieces(steps)[len(want):], got) {
			t.Errorf("stops %q: Matched() = %q, not the stop string after %q", stops, got, want)
		}
	} else if got := m.Matched(); got != "" {
		t.Errorf("stops %q: Matched() = %q with no stop string completed", stops, got)
	}
	if got := m.Flush(); got != flush {
		t.Errorf("stops %q: Flush() = %q, want %q", stops, got, flush)
	}
}

// joinPieces returns the text the steps write.
func joinPieces(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(s.piece)
	}
	return b.String()
}

func TestSplitAcrossPieces(t *testing.T) {
	// Two pieces.
	run(t, []string{"</s>"}, []step{
		{"Hello </", "Hello ", false},
		{"s> world", "", true},
	}, "")
	// Three pieces, and text before the stop string in the last one.
	run(t, []string{"STOP"}, []step{
		{"one ST", "one ", false},
		{"O", "", false},
		{"P two", "", true},
		{"more", "", true},
	}, "")
	// The stop string ends a piece.
	run(t, []string{"\n\n"}, []step{
		{"a\n", "a", false},
		{"\n", "", true},
	}, "")
}

func TestOverlapping(t *testing.T) {
	run(t, []string{"bc", "ab"}, []step{{"xabc", "x", true}}, "")
	run(t, []string{"bc", "ab"}, []step{{"xa", "x", false}, {"c", "ac", false}, {"b", "", false}, {"c", "", true}}, "")
	// "b" completes "bc" before "abcd" could finish.
	run(t, []string{"abcd", "bc"}, []step{{"xab", "x", false}, {"cd", "a", true}}, "")
	// Ending at the same byte, the longer one (which starts first) wins.
	run(t, []string{"c", "abc"}, []step{{"xab", "x", false}, {"c", "", true}}, "")
	// A stop string that overlaps itself.
	run(t, []string{"aab"}, []step{{"aa", "", false}, {"a", "a", false}, {"ab", "a", true}}, "")
}

func TestReleased(t *testing.T) {
	// A prefix that turns out not to match is released, at once.
	run(t, []string{"###"}, []step{
		{"a ##", "a ", false},
		{" b", "## b", false},
		{"#", "", false},
		{"#", "", false},
		{"x", "##x", false},
		{"##", "", false},
	}, "##")
	// Only the longest held-back suffix that starts a stop string stays.
	run(t, []string{"abab"}, []step{{"aba", "", false}, {"a", "aba", false}, {"bx", "abx", false}}, "")
	// Text that cannot start a stop string goes through untouched.
	run(t, []string{"zz"}, []step{{"hello", "hello", false}, {" world", " world", false}}, "")
}

func TestUTF8(t *testing.T) {
	// A multi-byte stop string split inside a character and across pieces.
	run(t, []string{"é!"}, []step{
		{"café", "caf", false},
		{"!", "", true},
	}, "")
	run(t, []string{"終了"}, []step{
		{"答え終", "答え", false},
		{"わり", "終わり", false},
		{"終", "", false},
		{"了です", "", true},
	}, "")
	// A stop string sharing a leading byte with other characters: "é"
	// (C3 A9) and "ï" (C3 AF).
	run(t, []string{"ï"}, []step{{"éé", "éé", false}, {"ïx", "", true}}, "")
	// Pieces cut inside a character: the incomplete character is held.
	run(t, []string{"zz"}, []step{{"a\xe2\x82", "a", false}, {"\xac b", "€ b", false}}, "")
	run(t, []string{"zz"}, []step{{"\xe2", "", false}}, "\xe2")
}

func TestStart(t *testing.T) {
	run(t, []string{"Q:"}, []step{{"Q:", "", true}}, "")
	run(t, []string{"Q:"}, []step{{"Q", "", false}, {":", "", true}}, "")
	run(t, []string{"x", "Q"}, []step{{"", "", false}, {"Q", "", true}}, "")
}

func TestReset(t *testing.T) {
	m, _ := New([]string{"ab"})
	if out, stopped := m.Write("xa"); out != "x" || stopped {
		t.Fatalf("Write = %q, %v", out, stopped)
	}
	m.Reset()
	if out, stopped := m.Write("b"); out != "b" || stopped {
		t.Errorf("after Reset: Write = %q, %v", out, stopped)
	}
	m.Write("ab")
	m.Reset()
	if out, stopped := m.Write("c"); out != "c" || stopped {
		t.Errorf("after a stop and Reset: Write = %q, %v", out, stopped)
	}
}

func TestNew(t *testing.T) {
	if _, err := New([]string{"a", "b", "c", "d", "e"}); err == nil || err.Error() != "stop: 5 stop strings, at most 4" {
		t.Errorf("five stop strings: %v", err)
	}
	if _, err := New([]string{"a", ""}); err == nil || err.Error() != "stop: empty stop string" {
		t.Errorf("an empty stop string: %v", err)
	}
	m, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, stopped := m.Write("anything"); out != "anything" || stopped {
		t.Errorf("no stop strings: Write = %q, %v", out, stopped)
	}
}

// check feeds text to a Matcher for stops in pieces cut at cuts, and
// checks the result against reference, and every Write's held-back text.
func check(t *testing.T, text string, stops []string, cuts []int) {
	m, err := New(stops)
	if err != nil {
		t.Fatal(err)
	}
	want, wantStop := reference(text, stops)
	valid := utf8.ValidString(text)
	for _, s := range stops {
		valid = valid && utf8.ValidString(s)
	}
	var got strings.Builder
	stopped := false
	prev := 0
	for _, c := range append(cuts, len(text)) {
		if c < prev {
			continue
		}
		out, st := m.Write(text[prev:c])
		if valid && !utf8.ValidString(out) {
			t.Fatalf("text %q, stops %q, cuts %v: Write(%q) = %q splits a character", text, stops, cuts, text[prev:c], out)
		}
		got.WriteString(out)
		if st {
			stopped = true
			break
		}
		// What is held back is the longest end that starts a stop string,
		// or an incomplete character.
		seen := text[:c]
		held := seen[got.Len():]
		if got.String() != seen[:got.Len()] {
			t.Fatalf("text %q, stops %q, cuts %v: output %q is not a prefix", text, stops, cuts, got.String())
		}
		hold := partialRune(seen)
		for _, s := range stops {
			for n := min(len(s)-1, len(seen)); n > hold; n-- {
				if strings.HasSuffix(seen, s[:n]) {
					hold = n
					break
				}
			}
		}
		if len(held) != hold {
			t.Fatalf("text %q, stops %q, cuts %v: after %q, %q held back, want %q", text, stops, cuts, seen, held, seen[len(seen)-hold:])
		}
		prev = c
	}
	if !stopped {
		got.WriteString(m.Flush())
	}
	if got.String() != want || stopped != wantStop {
		t.Fatalf("text %q, stops %q, cuts %v: %q, stopped %v; want %q, %v", text, stops, cuts, got.String(), stopped, want, wantStop)
	}
	if stopped {
		// The stop string matched starts where the text returned ends and
		// ends first (the longest of those that end there).
		mt := m.Matched()
		if !strings.HasPrefix(text[len(want):], mt) || mt == "" {
			t.Fatalf("text %q, stops %q: Matched() = %q, not at %d", text, stops, mt, len(want))
		}
		end := len(want) + len(mt)
		for _, s := range stops {
			if strings.HasSuffix(text[:end], s) && len(s) > len(mt) {
				t.Fatalf("text %q, stops %q: Matched() = %q, but the longer %q ends there too", text, stops, mt, s)
			}
		}
	}
}

func TestRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "c", "é", "€"}
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		text := word(r.IntN(30))
		stops := make([]string, 1+r.IntN(MaxStops))
		for i := range stops {
			stops[i] = word(1 + r.IntN(4))
		}
		var cuts []int
		for range r.IntN(8) {
			cuts = append(cuts, r.IntN(len(text)+1))
		}
		sortInts(cuts)
		check(t, text, stops, cuts)
	}
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func FuzzMatcher(f *testing.F) {
	f.Add("Hello </s> world", "</s>", uint64(1))
	f.Add("xabcd", "abcd\x00bc", uint64(2))
	f.Add("aaab aab", "aab", uint64(3))
	f.Add("café! 終了です", "é!\x00終了\x00ï", uint64(4))
	f.Add("no stop here", "zz\x00q\x00xy\x00e h", uint64(5))
	f.Fuzz(func(t *testing.T, text, joined string, seed uint64) {
		var stops []string
		for _, s := range strings.Split(joined, "\x00") {
			if s != "" && len(stops) < MaxStops {
				stops = append(stops, s)
			}
		}
		r := rand.New(rand.NewPCG(seed, 0))
		var cuts []int
		for range r.IntN(len(text) + 2) {
			cuts = append(cuts, r.IntN(len(text)+1))
		}
		sortInts(cuts)
		check(t, text, stops, cuts)
	})
}

// BenchmarkWrite streams a text in token-sized pieces through four stop
// strings, some of whose starts occur in it.
func BenchmarkWrite(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. <|im_ a\n", 40)
	var pieces []string
	for i := 0; i < len(text); i += 4 {
		pieces = append(pieces, text[i:min(i+4, len(text))])
	}
	m, _ := New([]string{"<|im_end|>", "\n\nUser:", "Observation:", "###"})
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		m.Reset()
		for _, p := range pieces {
			m.Write(p)
		}
		m.Flush()
	}
}
