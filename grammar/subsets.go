package grammar

import (
	"slices"
	"unsafe"
)

// Subsets is the bookkeeping of a subset construction (an automaton made
// deterministic) over a nondeterministic one whose ε-moves from state x
// are Eps[x]: the ε-closures of sets of states, and a number for each
// closure, given in the order they are first added. This package's
// character automata and package constrain's byte automata both use it.
type Subsets struct {
	eps        [][]int32
	mark       []bool
	buf, stack []int32
	ids        map[string]int32
	// Sets holds the added sets by number.
	Sets [][]int32
}

// NewSubsets returns the bookkeeping for the automaton whose ε-moves are
// eps.
func NewSubsets(eps [][]int32) *Subsets {
	return &Subsets{eps: eps, mark: make([]bool, len(eps)), ids: map[string]int32{}}
}

// Closure returns the ε-closure of seed, sorted, in a buffer that the next
// call reuses.
func (s *Subsets) Closure(seed []int32) []int32 {
	out := s.buf[:0]
	s.stack = append(s.stack[:0], seed...)
	for len(s.stack) > 0 {
		x := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		if s.mark[x] {
			continue
		}
		s.mark[x] = true
		out = append(out, x)
		s.stack = append(s.stack, s.eps[x]...)
	}
	for _, x := range out {
		s.mark[x] = false
	}
	slices.Sort(out)
	s.buf = out
	return out
}

// Find returns the number of set (sorted, as Closure returns it) if it was
// added.
func (s *Subsets) Find(set []int32) (int32, bool) {
	id, ok := s.ids[key(set)]
	return id, ok
}

// Add numbers a copy of set (one Find did not find): len(Sets) before it.
func (s *Subsets) Add(set []int32) int32 {
	set = slices.Clone(set)
	id := int32(len(s.Sets))
	s.ids[key(set)] = id
	s.Sets = append(s.Sets, set)
	return id
}

// key is set's bytes as a string, without copying them (a map key made of
// set must outlive no change to it: Add keys its own copy).
func key(set []int32) string {
	return unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(set))), len(set)*4)
}
