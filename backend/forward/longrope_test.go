package forward_test

import (
	"math"
	"testing"

	"inferno/arch"
	"inferno/backend/forward/forwardtest"
	"inferno/kvcache"
)

// phiLongRoPE is phiLike() (12 of 16 values rotated: 6 pairs) with
// Phi-4-mini's LongRoPE, trained for 8 positions: factors far enough
// apart that the long and short ones give logits that differ.
func phiLongRoPE() arch.Config {
	c := phiLike()
	c.Rope = arch.Rope{Theta: 10000, Scaling: arch.ScaleLongRoPE, OrigContext: 8, AttnFactor: math.Sqrt(1 + math.Log(8)/math.Log(8)),
		LongFactors: []float32{1, 2, 4, 8, 16, 32}, ShortFactors: []float32{1, 1.1, 1.3, 1.6, 2, 3}}
	return c
}

// TestLongRoPE runs a LongRoPE model on every CPU backend with a context
// of the original length, which takes the short factors, and one past it,
// which takes the long ones (llama.cpp's rule, arch.ForContext), each
// against the float64 reference with the factors the rule chooses, in
// turn on one backend; the two references differ, so the choice is seen.
func TestLongRoPE(t *testing.T) {
	m := newModel(phiLongRoPE(), 77)
	tokens := []int32{3, 17, 39, 0, 22, 22, 5, 11}
	short := reference(m, tokens)
	lm := *m
	lm.c.Rope.Long = true
	long := reference(&lm, tokens)
	if d := relErr64(long[len(tokens)-1], short[len(tokens)-1]); d < 1e-2 {
		t.Fatalf("the long and short factors' logits differ by %.3g only", d)
	}
	for be, newOps := range cpuBackends {
		// One backend for every runner: a cache of RoPE's angles must
		// tell the factors apart.
		ops := newOps()
		for _, tc := range []struct {
			maxLen int
			want   [][]float64
		}{{8, short}, {9, long}, {0, long}, {8, short}} {
			r := forwardtest.Single(t, m, ops, tc.maxLen, kvcache.F32)
			for pos, tok := range tokens {
				if err := r.Forward([]int32{tok}); err != nil {
					t.Fatal(err)
				}
				l, _ := r.Logits()
				if e := relErr(l, tc.want[pos]); e > 1e-5 {
					t.Errorf("%s, context %d: position %d: relative error %.3g", be, tc.maxLen, pos, e)
				}
			}
			r.Close()
		}
	}
	if m.c.Rope.Long {
		t.Error("a runner changed the model's configuration")
	}
}

// TestLongRoPEDecodeAllocs: a batched decode step of a LongRoPE model
// allocates nothing once a batch as large has run.
func TestLongRoPEDecodeAllocs(t *testing.T) {
	m := newModel(phiLongRoPE(), 9)
	allocs := decodeAllocs(t, m, func(pos int) int32 { return int32(7 + pos) })
	if allocs != 0 {
		t.Errorf("%v allocations per decode step", allocs)
	}
}
