package cuda

import (
	"testing"

	"inferno/arch"
)

// TestRefusesOptions: Load refuses, in one line and before it opens a
// device, a model that needs an option the kernels do not execute.
func TestRefusesOptions(t *testing.T) {
	m := *tinyModel(t)
	for _, tc := range []struct {
		edit func(*arch.Config)
		want string
	}{
		{func(c *arch.Config) {
			c.MoE = arch.MoE{Experts: 4, TopK: 2, ExpertFFN: 64, Gating: arch.GateSigmoid}
		}, "qwen3: the cuda backend does not run mixture of experts (sigmoid gating)"},
	} {
		mc := m
		tc.edit(&mc.Config)
		if _, err := Load(&mc, Options{}); err == nil || err.Error() != tc.want {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
	// Weights that do not match the configuration.
	mc := m
	mc.Layers = mc.Layers[:1]
	if _, err := Load(&mc, Options{}); err == nil || err.Error() != "qwen3: weights of 1 layers, the configuration has 2" {
		t.Errorf("missing layer: %v", err)
	}
}
