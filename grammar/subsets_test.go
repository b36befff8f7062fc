package grammar

import (
	"slices"
	"testing"
)

// TestSubsets checks ε-closures (cycles, repeats, sorted) and that each
// set is numbered once, in the order added, from a copy of its buffer.
func TestSubsets(t *testing.T) {
	// 0 -> 1 -> 2 -> 0 (a cycle), 3 -> 4, 5 alone.
	s := NewSubsets([][]int32{{1}, {2}, {0, 2}, {4}, nil, nil})
	for _, c := range []struct{ seed, want []int32 }{
		{[]int32{0}, []int32{0, 1, 2}},
		{[]int32{4, 3}, []int32{3, 4}},
		{[]int32{5, 5}, []int32{5}},
		{[]int32{2, 3}, []int32{0, 1, 2, 3, 4}},
		{nil, nil},
	} {
		if got := s.Closure(c.seed); !slices.Equal(got, c.want) {
			t.Errorf("Closure(%v) = %v, want %v", c.seed, got, c.want)
		}
	}
	a := s.Closure([]int32{1})
	if _, ok := s.Find(a); ok {
		t.Fatal("Find found a set never added")
	}
	if id := s.Add(a); id != 0 {
		t.Fatalf("first Add = %d, want 0", id)
	}
	b := s.Closure([]int32{3}) // reuses a's buffer
	if id := s.Add(b); id != 1 {
		t.Fatalf("second Add = %d, want 1", id)
	}
	if id, ok := s.Find([]int32{0, 1, 2}); !ok || id != 0 {
		t.Errorf("Find({0,1,2}) = %d, %v; want 0, true", id, ok)
	}
	if id, ok := s.Find([]int32{3, 4}); !ok || id != 1 {
		t.Errorf("Find({3,4}) = %d, %v; want 1, true", id, ok)
	}
	if !slices.Equal(s.Sets[0], []int32{0, 1, 2}) || !slices.Equal(s.Sets[1], []int32{3, 4}) {
		t.Errorf("Sets = %v, want [[0 1 2] [3 4]]", s.Sets)
	}
}
