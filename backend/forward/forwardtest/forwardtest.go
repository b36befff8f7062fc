// Package forwardtest helps tests run a model on forward.Batched the way
// the single-sequence commands run it.
package forwardtest

import (
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/forward"
	"inferno/engine"
	"inferno/kvcache"
)

// Basic returns a forward.Batched of m on ops for one sequence of up to
// maxLen positions (0, or more than the model's context: the context
// length), its pool one block that long (the basic layout) of element
// type kv.
func Basic(t testing.TB, m arch.Model, ops backend.Ops, maxLen int, kv kvcache.Type) *forward.Batched {
	t.Helper()
	if c := m.Hyper().ContextLength; maxLen <= 0 || maxLen > c {
		maxLen = c
	}
	br, err := forward.NewBatched(m, ops, maxLen, 1, maxLen, kv)
	if err != nil {
		t.Fatal(err)
	}
	return br
}

// Single returns one sequence of m alone on ops, as the commands run it:
// a batch of one on Basic(t, m, ops, maxLen, kv). Close releases the pool.
func Single(t testing.TB, m arch.Model, ops backend.Ops, maxLen int, kv kvcache.Type) *engine.Single {
	t.Helper()
	return engine.NewSingle(Basic(t, m, ops, maxLen, kv))
}
