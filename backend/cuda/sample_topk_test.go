package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"inferno/sampling"
	"inferno/sampling/samplingtest"
)

// TestSampleTopKExact checks the top-k selection (topk_fast in samp_topk
// and samp_final, topk_block where too many candidates pass its bound)
// through the top log-probabilities, which list the 20 best raw logits in
// order (the larger first, the lower id among equals; NaN and -Inf left
// out): rows shaped like a model's, rows with many ties (values on a grid
// of 1/4, and one where every value is equal: the bound passes
// everything), the best values packed into one chunk, and rows with
// fewer than 20 finite values.
func TestSampleTopKExact(t *testing.T) {
	g := testDevice(t)
	const V = 151936
	rng := rand.New(rand.NewPCG(17, 17))
	rows := map[string][]float32{"llm": samplingtest.LLMRow(3, V)}
	grid := samplingtest.LLMRow(4, V)
	for i := range grid {
		grid[i] = float32(math.Round(float64(grid[i])*4) / 4)
	}
	rows["ties on a grid of 1/4"] = grid
	rows["all equal"] = make([]float32, V)
	packed := samplingtest.LLMRow(5, V)
	for i := 8192; i < 8192+600; i++ {
		packed[i] = 30 + float32(rng.IntN(8))
	}
	rows["600 best in one chunk"] = packed
	sparse := make([]float32, V)
	for i := range sparse {
		sparse[i] = float32(math.Inf(-1))
		if i%7 == 0 {
			sparse[i] = float32(math.NaN())
		}
	}
	for range 12 {
		sparse[rng.IntN(V)] = float32(rng.NormFloat64())
	}
	rows["12 finite values"] = sparse
	rig := newSampleRig(t, g, V)
	for name, x := range rows {
		logits := devF32(t, g, x)
		want := make([]int32, 0, V)
		for i, v := range x {
			if v > float32(math.Inf(-1)) {
				want = append(want, int32(i))
			}
		}
		slices.SortStableFunc(want, func(a, b int32) int {
			switch {
			case x[a] > x[b]:
				return -1
			case x[a] < x[b]:
				return 1
			}
			return int(a - b)
		})
		want = want[:min(len(want), sampling.MaxTopLogprobs)]
		var drawn [3]int32
		for k, old := range []bool{false, false, true} { // samp_topkw, samp_topk, the kernels as they were
			rig.s.old, rig.s.block = old, k == 1
			for _, p := range []sampling.Params{{Logprobs: true, TopLogprobs: 20}, {Temperature: 0.7, TopK: 20, Logprobs: true, TopLogprobs: 20}} {
				tok := rig.run(logits, []sampling.Row{{On: true, Params: p, Seed: 1}})[0]
				got := make([]int32, len(tok.Top))
				for j, e := range tok.Top {
					got[j] = e.ID
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s, %+v, variant %d: top ids %v, want %v", name, p, k, got, want)
				}
				if p.TopK > 0 {
					if !slices.Contains(want, tok.ID) {
						t.Errorf("%s: top_k 20 drew %d, not among the 20 best", name, tok.ID)
					}
					drawn[k] = tok.ID
					if k == 0 {
						checkWarpPartials(t, rig, x, p.TopK)
					}
				}
			}
		}
		rig.s.old, rig.s.block = false, false
		if drawn[0] != drawn[2] || drawn[1] != drawn[2] {
			t.Errorf("%s: top_k 20 drew %d (samp_topkw), %d (samp_topk), %d before the fast paths (same seed and index)", name, drawn[0], drawn[1], drawn[2])
		}
	}
}

// checkWarpPartials checks samp_topkw's partials of the row x just
// sampled under top_k k: each chunk's k best, in any order, (-Inf, -1)
// past the chunk's finite values.
func checkWarpPartials(t *testing.T, rig *sampleRig, x []float32, k int) {
	t.Helper()
	s := rig.s
	vals := getF32(t, rig.g, s.kval, s.gw*s.kw)
	ids := getI32(t, rig.g, s.kidx, s.gw*s.kw)
	groups := (len(x) + 3) / 4
	per := (groups + s.gw - 1) / s.gw
	for c := range s.gw {
		lo := min(len(x), c*per*4)
		hi := min(len(x), lo+per*4)
		var want []int32
		for i := lo; i < hi; i++ {
			if x[i] > float32(math.Inf(-1)) {
				want = append(want, int32(i))
			}
		}
		slices.SortStableFunc(want, func(a, b int32) int {
			switch {
			case x[a] > x[b]:
				return -1
			case x[a] < x[b]:
				return 1
			}
			return int(a - b)
		})
		want = want[:min(len(want), k)]
		got := slices.Clone(ids[c*s.kw : c*s.kw+k])
		for j, id := range got {
			if id >= 0 && vals[c*s.kw+j] != x[id] {
				t.Fatalf("chunk %d: entry %d has value %v, x[%d] = %v", c, j, vals[c*s.kw+j], id, x[id])
			}
		}
		got = slices.DeleteFunc(got, func(id int32) bool { return id < 0 })
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Fatalf("chunk %d [%d, %d): samp_topkw's %d best %v, want %v", c, lo, hi, k, got, w)
		}
	}
}
