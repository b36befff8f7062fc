package forward_test

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/forward"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/pool"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/batch"
	"inferno/internal/floatbits"
	"inferno/kvcache"
)

// refMoE returns, in float64, the mixture-of-experts feed-forward of
// layer l on its normed input h: the router's logits (plus its bias with
// MoE.Bias); the TopK best experts (the lowest index first among equals);
// their weights, the softmax over all experts renormalized with NormTopK
// (transformers' Qwen3MoeSparseMoeBlock) or the softmax over the chosen
// logits (GptOssTopKRouter); the weighted sum of their gated
// feed-forwards, each product plus its expert's bias with MoE.Bias
// (GptOssExperts).
func refMoE(c *arch.Config, l *arch.Layer, h []float64, matvec func(*arch.Weight, []float64) []float64) []float64 {
	mc := &c.MoE
	logits := matvec(l.Matrix(arch.RoleRouter), h)
	bias := func(x []float64, r arch.Role, e int) {
		if mc.Bias {
			b := l.Vector(r)[e*len(x) : (e+1)*len(x)]
			for j := range x {
				x[j] += float64(b[j])
			}
		}
	}
	bias(logits, arch.RoleRouterBias, 0)
	top := math.Inf(-1)
	for _, v := range logits {
		top = max(top, v)
	}
	probs := make([]float64, len(logits))
	var sum float64
	for e, v := range logits {
		probs[e] = math.Exp(v - top)
		sum += probs[e]
	}
	idx := make([]int, len(probs))
	for e := range idx {
		idx[e] = e
		probs[e] /= sum
	}
	sort.SliceStable(idx, func(a, b int) bool { return probs[idx[a]] > probs[idx[b]] })
	idx = idx[:mc.TopK]
	var picked float64
	for _, e := range idx {
		picked += probs[e]
	}
	expert := func(r arch.Role, e, rows int) *arch.Weight {
		s := l.Matrix(r)
		rb := s.RowBytes()
		return &arch.Weight{Type: s.Type, Rows: rows, Cols: s.Cols, Data: s.Data[e*rows*rb : (e+1)*rows*rb]}
	}
	out := make([]float64, c.Hidden)
	for _, e := range idx {
		w := probs[e]
		if mc.NormTopK || mc.Gating == arch.GateSoftmaxTopK {
			w /= picked
		}
		g := matvec(expert(arch.RoleExpertGate, e, mc.ExpertFFN), h)
		u := matvec(expert(arch.RoleExpertUp, e, mc.ExpertFFN), h)
		bias(g, arch.RoleExpertGateBias, e)
		bias(u, arch.RoleExpertUpBias, e)
		for j := range g {
			g[j] = refAct(c.Act, g[j], u[j])
		}
		d := matvec(expert(arch.RoleExpertDown, e, c.Hidden), g)
		bias(d, arch.RoleExpertDownBias, e)
		for j := range d {
			out[j] += w * d[j]
		}
	}
	return out
}

// moeConfig is small() with a mixture of experts: 6 experts of width 40,
// 3 a token, renormalized or not.
func moeConfig(norm bool) arch.Config {
	c := small()
	c.MoE = arch.MoE{Experts: 6, TopK: 3, ExpertFFN: 40, NormTopK: norm}
	return c
}

// TestMoE runs mixtures of experts on every CPU backend, token by token,
// against the float64 reference at every position, with and without
// renormalized weights.
func TestMoE(t *testing.T) {
	backends := map[string]func() backend.Ops{"scalar": func() backend.Ops { return scalar.NewScalar() },
		"simd": func() backend.Ops { return simd.New() }, "pool": func() backend.Ops { return pool.New(2) }}
	tokens := []int32{3, 17, 39, 0, 22, 22, 5, 11, 9, 30, 2, 38, 14, 1, 27, 8}
	for _, norm := range []bool{true, false} {
		m := newModel(moeConfig(norm), 21)
		want := reference(m, tokens)
		for be, ops := range backends {
			t.Run(be, func(t *testing.T) {
				checkReference(t, m, ops(), tokens, want, fmt.Sprintf("norm %v: ", norm))
			})
		}
	}
}

// TestMoEBatchedEqualsAlone: sequences whose tokens share experts, run
// together in one batch (prompts and then a decode step, tokens grouped
// by expert), have bitwise the logits they have alone, on one thread
// and on a pool.
func TestMoEBatchedEqualsAlone(t *testing.T) {
	m := newModel(moeConfig(true), 22)
	t.Run("simd", func(t *testing.T) { batchedEqualsAlone(t, m) })
	ops := pool.New(2)
	defer ops.Close()
	br, err := forward.NewBatched(m, ops, 0, 16, 4, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	prompts := [][]int32{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, {24}}
	tables := [][]int32{{0, 1, 2, 3}, {4, 5, 6, 7, 8}, {9, 10}}
	var b batch.Batch
	for i, p := range prompts {
		b.Add(b.AddSeq(tables[i]), p, 0, true)
	}
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for i, p := range prompts {
		b.Add(b.AddSeq(tables[i]), []int32{int32(30 + i)}, len(p), true)
	}
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		r := forwardtest.Single(t, m, ops, 0, kvcache.F32)
		defer r.Close()
		for _, tok := range append(append([]int32(nil), p...), int32(30+i)) {
			if err := r.Forward([]int32{tok}); err != nil {
				t.Fatal(err)
			}
		}
		alone, _ := r.Logits()
		batched, err := br.Logits(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := floatbits.Check(batched, alone); err != nil {
			t.Fatalf("sequence %d batched against alone: %v", i, err)
		}
	}
}

// TestMoEDecodeAllocs: a batched decode step of a mixture of experts
// allocates nothing once a batch as large has run.
func TestMoEDecodeAllocs(t *testing.T) {
	m := newModel(moeConfig(false), 23)
	allocs := decodeAllocs(t, m, func(pos int) int32 { return int32(7 + pos) })
	if allocs != 0 {
		t.Errorf("%v allocations per decode step", allocs)
	}
}
