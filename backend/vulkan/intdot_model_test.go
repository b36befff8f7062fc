package vulkan

import (
	"strings"
	"testing"

	"inferno/batch"
)

// testIntDot is the products loadModel's models take unless a test asks
// (Options.IntDot): the device's default, but for TestModelsIntDot.
var testIntDot = IntDotAuto

// TestModelsIntDot runs the model tests (TestGoldenTiny, TestArchitectures,
// TestBatchedEqualsAlone) with the other products than the device's
// default: with the integer dot products (mul_mvq) where they are never
// the default (lavapipe), with mul_mv where they are the default
// (NVIDIA).
func TestModelsIntDot(t *testing.T) {
	d := intDotDevice(t)
	testIntDot = IntDotOn
	if d.IntegerDotFast {
		testIntDot = IntDotOff
	}
	defer func() { testIntDot = IntDotAuto }()
	t.Logf("products: %v (0 the default, 1 integer dot products, 2 float)", testIntDot)
	t.Run("GoldenTiny", TestGoldenTiny)
	t.Run("Architectures", TestArchitectures)
	t.Run("BatchedEqualsAlone", TestBatchedEqualsAlone)
}

// TestIntDotSelection profiles a decode step of a Q4_K_M model (Q4_K and
// Q6_K matrices) with the integer dot products on and off: on, every
// product is a mul_mvq, after one quantization a step of the plan (the
// products of a step share it: Q, K and V of different types are three
// products) and one for the head; off, none.
func TestIntDotSelection(t *testing.T) {
	intDotDevice(t)
	m := archModel(t, archCases[2])
	c := m.Hyper()
	for _, mode := range []IntDot{IntDotOn, IntDotOff} {
		md := loadModel(t, m, Options{MaxLen: 64, Device: -1, IntDot: mode})
		if !md.d.tsValid {
			t.Skipf("%s does not time its compute queue", md.d.Name)
		}
		br, err := md.NewBatchRunner(4, 16)
		if err != nil {
			t.Fatal(err)
		}
		defer br.Close()
		var b batch.Batch
		b.Add(b.AddSeq([]int32{0}), []int32{1, 2, 3}, 0, true)
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		b.Add(b.AddSeq([]int32{0}), []int32{4}, 3, true)
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		ops, _, err := br.Profile(1, 1)
		if err != nil {
			t.Fatal(err)
		}
		calls := map[string]int{}
		for _, o := range ops {
			t.Logf("mode %d: %-16s %d", mode, o.Name, o.Calls)
			switch {
			case strings.HasPrefix(o.Name, "mul_mvq_"):
				calls["mul_mvq"] += o.Calls
			case strings.HasPrefix(o.Name, "mul_mv_"):
				calls["mul_mv"] += o.Calls
			default:
				calls[o.Name] += o.Calls
			}
		}
		want := map[string]int{"quant_act": 4*c.Layers + 1, "mul_mv": 0}
		if mode == IntDotOff {
			want = map[string]int{"quant_act": 0, "mul_mvq": 0}
		}
		for k, n := range want {
			if calls[k] != n {
				t.Errorf("mode %d: %d dispatches of %s, want %d", mode, calls[k], k, n)
			}
		}
		if calls["mul_mv"]+calls["mul_mvq"] < 4*c.Layers+1 {
			t.Errorf("mode %d: %d products", mode, calls["mul_mv"]+calls["mul_mvq"])
		}
	}
}
