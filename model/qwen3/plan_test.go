package qwen3_test

import (
	"path/filepath"
	"testing"

	"inferno/model/qwen3"
)

// TestPlan: every layer's five operations, in order, layer after layer.
func TestPlan(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	plan := m.Plan()
	ops := []qwen3.Op{qwen3.OpQKV, qwen3.OpAttention, qwen3.OpOut, qwen3.OpGateUp, qwen3.OpDown}
	if len(plan) != len(m.Layers)*len(ops) {
		t.Fatalf("%d steps for %d layers", len(plan), len(m.Layers))
	}
	for i, st := range plan {
		if want := (qwen3.Step{Op: ops[i%len(ops)], Layer: i / len(ops)}); st != want {
			t.Errorf("step %d: %v of layer %d, want %v of layer %d", i, st.Op, st.Layer, want.Op, want.Layer)
		}
	}
	if s := qwen3.OpGateUp.String(); s != "gate_up" {
		t.Errorf("OpGateUp.String() = %q", s)
	}
}
