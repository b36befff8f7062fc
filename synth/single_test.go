package synth

import (
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/forward"
	"inferno/engine"
	"inferno/kvcache"
)

// newSingle returns one sequence of m alone on ops, as the commands run
// it: a batch of one on a forward.Batched whose pool is one block as long
// as the model's context, of element type kv. Close releases the pool.
func newSingle(t testing.TB, m arch.Model, ops backend.Ops, kv kvcache.Type) *engine.Single {
	t.Helper()
	n := m.Hyper().ContextLength
	br, err := forward.NewBatched(m, ops, n, 1, n, kv)
	if err != nil {
		t.Fatal(err)
	}
	return engine.NewSingle(br)
}
