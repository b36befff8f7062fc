package cuda

import (
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/gguf"
	"inferno/synth"
)

// TestMoELimits checks, without a GPU, what the CUDA backend refuses of a
// mixture of experts, each in one line naming it: more experts than
// moe_route keeps, more a token than it picks, an expert width that is no
// multiple of 32, and expert stacks in a float type.
func TestMoELimits(t *testing.T) {
	t.Parallel()
	ok := arch.Config{MoE: arch.MoE{Experts: 128, TopK: 8, ExpertFFN: 768}}
	if err := checkMoE(&ok); err != nil {
		t.Errorf("30B-A3B's mixture: %v", err)
	}
	for _, tc := range []struct {
		m    arch.MoE
		want string
	}{
		{arch.MoE{Experts: 512, TopK: 8, ExpertFFN: 768}, "512 experts"},
		{arch.MoE{Experts: 128, TopK: 33, ExpertFFN: 768}, "33 experts a token"},
		{arch.MoE{Experts: 8, TopK: 2, ExpertFFN: 100}, "width 100"},
	} {
		c := arch.Config{MoE: tc.m}
		err := checkMoE(&c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want a one-line error naming %q", tc.m, err, tc.want)
		}
	}
	f16 := &backend.Weight{Name: "blk.0.ffn_up_exps.weight", Type: gguf.TensorF16, Rows: 64, Cols: 64, Data: make([]byte, 64*64*2)}
	if err := checkExpertType(f16); err == nil || !strings.Contains(err.Error(), "F16") {
		t.Errorf("F16 experts: %v, want a refusal naming the type", err)
	}
}

// TestMoEFootprint checks that a mixture-of-experts model's footprint
// counts its expert stacks and router (not a dense feed-forward it does
// not have) and that a decode step reads TopK of each layer's Experts.
func TestMoEFootprint(t *testing.T) {
	t.Parallel()
	c := archCase{preset: "30b-a3b", mix: "Q8_0", shape: synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512, Experts: 8, TopK: 2, ExpertFFN: 256}}
	m := archModel(t, c)
	f := estimateFootprint(m, 1024)
	var experts int64
	for i := range m.Weights.Layers {
		for _, r := range []arch.Role{arch.RoleExpertGate, arch.RoleExpertUp, arch.RoleExpertDown} {
			experts += int64(len(m.Weights.Layers[i].Matrix(r).Data))
		}
	}
	if f.weights < experts {
		t.Errorf("footprint weights %d < the expert stacks' %d bytes", f.weights, experts)
	}
	if got, want := moeUnread(&m.Config, &m.Weights), experts/8*6; got != want {
		t.Errorf("unread expert bytes a step %d, want %d (6 of 8 experts)", got, want)
	}
	if moeScratchBytes(&m.Config) <= 0 || batchScratchBytes(&m.Config, true) <= batchScratchBytes(&arch.Config{Hidden: 256, FFN: 512, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512}, true) {
		t.Error("the batch scratch does not count the experts' buffers")
	}
}

// TestMoEVariant checks which expert product a step of fewer than moeH
// tokens takes: moe_mvn3 for rows of 2049 to 3072 values (gpt-oss's 2880)
// at every count, else moe_mvn2 up to moeNT tokens and moe_mvn past it.
func TestMoEVariant(t *testing.T) {
	for _, c := range []struct {
		n, K int
		want string
	}{{1, 2880, "3"}, {8, 2880, "3"}, {16, 3072, "3"}, {17, 2880, "3"}, {31, 2816, "3"}, {1, 2048, "2"}, {4, 768, "2"}, {1, 3104, "2"}, {31, 2048, ""}} {
		if got := moeVariant(c.n, c.K, 16); got != c.want {
			t.Errorf("moeVariant(%d, %d, 16) = %q, want %q", c.n, c.K, got, c.want)
		}
	}
}
