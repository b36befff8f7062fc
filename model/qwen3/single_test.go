package qwen3_test

import (
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/forward"
	"inferno/backend/forward/forwardtest"
	"inferno/engine"
	"inferno/kvcache"
)

// single is one sequence alone, as the commands run it: a batch of one on
// a forward.Batched whose pool is one block as long as the context (the
// basic layout). Close closes the pool and ops's workers.
type single struct {
	*engine.Single
	br  *forward.Batched
	ops backend.Ops
}

// newSingle returns a sequence of up to maxLen positions (0: the model's
// context length) of m on ops, its KV cache of element type kv.
func newSingle(t *testing.T, m arch.Model, ops backend.Ops, maxLen int, kv kvcache.Type) *single {
	t.Helper()
	br := forwardtest.Basic(t, m, ops, maxLen, kv)
	return &single{Single: engine.NewSingle(br), br: br, ops: ops}
}

// KVType returns the element type of the KV cache.
func (s *single) KVType() kvcache.Type { return s.br.KVType() }

// Close releases the pool and stops ops's workers, if it has any.
func (s *single) Close() error {
	err := s.Single.Close()
	if c, ok := s.ops.(interface{ Close() }); ok {
		c.Close()
	}
	return err
}
