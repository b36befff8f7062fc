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

// TestIntDotSelection profiles decode steps of a Q4_K_M model (Q4_K and
// Q6_K matrices) of one and of 12 sequences with the integer dot products
// on and off. On, every product is a mul_mvq: at one token each quantizes
// its own input (this model's products are all within fusedReadLimit), so
// no quant_act runs; at 12 tokens (past a tile) quant_act quantizes each
// input once for the products that share it (Q, K and V of different
// types are three products): once a step of the plan, and once for the
// head. Off, none.
func TestIntDotSelection(t *testing.T) {
	sg := intDotDevice(t).SubgroupSize
	m := archModel(t, archCases[2])
	c := m.Hyper()
	spec := mulMVQSpec(sg, c.Vocab, c.Hidden, 1)
	if !mulMVQFused(spec, c.Vocab, c.Hidden, 1, xNorm) || !mulMVQFused(mulMVQSpec(sg, c.Hidden, c.FFN, 1), c.Hidden, c.FFN, 1, xSwiGLU) {
		t.Fatalf("the test model's products are not all fused at one token: %+v", c)
	}
	for _, mode := range []IntDot{IntDotOn, IntDotOff} {
		md := loadModel(t, m, Options{MaxLen: 64, Device: -1, IntDot: mode})
		if !md.d.tsValid {
			t.Skipf("%s does not time its compute queue", md.d.Name)
		}
		br, err := md.NewBatchRunner(16, 16)
		if err != nil {
			t.Fatal(err)
		}
		defer br.Close()
		for _, B := range []int{1, 12} {
			var b batch.Batch
			for s := range B {
				b.Add(b.AddSeq([]int32{int32(s)}), []int32{1, 2, 3}, 0, true)
			}
			if err := br.Forward(&b); err != nil {
				t.Fatal(err)
			}
			b.Reset()
			for s := range B {
				b.Add(b.AddSeq([]int32{int32(s)}), []int32{4}, 3, true)
			}
			if err := br.Forward(&b); err != nil {
				t.Fatal(err)
			}
			ops, _, err := br.Profile(B, 1)
			if err != nil {
				t.Fatal(err)
			}
			calls := map[string]int{}
			for _, o := range ops {
				t.Logf("mode %d, %d tokens: %-16s %d", mode, B, o.Name, o.Calls)
				switch {
				case strings.HasPrefix(o.Name, "mul_mvq_"):
					calls["mul_mvq"] += o.Calls
				case strings.HasPrefix(o.Name, "mul_mv_"):
					calls["mul_mv"] += o.Calls
				default:
					calls[o.Name] += o.Calls
				}
			}
			want := map[string]int{"quant_act": 0, "mul_mv": 0}
			if B > 8 {
				want["quant_act"] = 4*c.Layers + 1
			}
			if mode == IntDotOff {
				want = map[string]int{"quant_act": 0, "mul_mvq": 0}
			}
			for k, n := range want {
				if calls[k] != n {
					t.Errorf("mode %d, %d tokens: %d dispatches of %s, want %d", mode, B, calls[k], k, n)
				}
			}
			if calls["mul_mv"]+calls["mul_mvq"] < 4*c.Layers+1 {
				t.Errorf("mode %d, %d tokens: %d products", mode, B, calls["mul_mv"]+calls["mul_mvq"])
			}
		}
	}
}
