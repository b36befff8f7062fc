package cuda

import (
	"math"
	"testing"

	"inferno/sampling"
)

// TestSampleRows checks the rows the GPU sampler uploads (no GPU needed):
// greedy and argmax-like settings draw no noise, filters and penalties
// land where the kernels read them, and what the GPU does not sample is
// refused.
func TestSampleRows(t *testing.T) {
	t.Parallel()
	const V = 151936
	s := newDevSampler(nil, V)
	s.have = true
	if s.kmax != 107 || s.gk != 38 {
		t.Fatalf("kmax %d, gk %d; want 107 and 38 for Qwen3's vocabulary", s.kmax, s.gk)
	}
	mask := make([]uint64, (V+63)/64)
	rows := []sampling.Row{
		{},
		{On: true, Params: sampling.Params{Temperature: 1}, Seed: 1<<40 | 7, Index: 9},
		{On: true, Params: sampling.Params{Temperature: 0.6, TopK: 20, TopP: 0.95, Logprobs: true, TopLogprobs: 3}},
		{On: true, Params: sampling.Params{Temperature: 2, MinP: 0.1, PresencePenalty: 1}, Patches: []sampling.Patch{{ID: 5, Count: 2}}, Mask: mask},
		{On: true, Params: sampling.Params{Temperature: 1, TopK: 1}},
	}
	if err := s.set(rows); err != nil {
		t.Fatal(err)
	}
	r := s.rows
	if r[0].invT != 0 || r[0].mask != -1 || r[0].rep != 1 {
		t.Errorf("row 0 (not On): %+v", r[0])
	}
	if r[1].invT != 1 || r[1].seedLo != 7 || r[1].seedHi != 1<<8 || r[1].pos != 9 || r[1].topk != 0 || !math.IsInf(float64(r[1].lnMinP), -1) {
		t.Errorf("row 1: %+v", r[1])
	}
	if r[2].topk != 20 || r[2].topp != 0.95 || r[2].flags != 1 || r[2].ntop != 3 {
		t.Errorf("row 2: %+v", r[2])
	}
	if r[3].nprep != 1 || r[3].pres != 1 || r[3].rep != 1 || r[3].mask != 0 || r[3].lnMinP != float32(math.Log(0.1)) {
		t.Errorf("row 3: %+v", r[3])
	}
	if r[4].invT != 0 || r[4].topk != 0 {
		t.Errorf("row 4 (top_k 1: the argmax): %+v", r[4])
	}
	if !s.needRace || !s.needTopK || !s.needRaw || !s.needTopLP || !s.needPost || s.aheadOK {
		t.Errorf("needs: race %v topk %v raw %v toplp %v post %v ahead %v", s.needRace, s.needTopK, s.needRaw, s.needTopLP, s.needPost, s.aheadOK)
	}
	for _, bad := range []sampling.Row{
		{On: true, Params: sampling.Params{Temperature: 1, TopP: 0.9, PresencePenalty: 1}},
		{On: true, Params: sampling.Params{Temperature: 1, TopK: 108}},
		{On: true, Params: sampling.Params{Temperature: 1}, Mask: mask[1:]},
		{On: true, Params: sampling.Params{Temperature: 1}, Patches: []sampling.Patch{{ID: V}}},
	} {
		if err := s.set([]sampling.Row{bad}); err == nil {
			t.Errorf("%+v: no error", bad.Params)
		}
	}
	if !s.canSample(sampling.Params{Temperature: 1, TopP: 0.5}) || !s.canSample(sampling.Params{TopP: 0.5}) ||
		s.canSample(sampling.Params{Temperature: 1, TopP: 0.5, LogitBias: map[int32]float32{1: 1}}) {
		t.Errorf("canSample: top_p alone or greedy refused, or top_p alone with a bias sampled")
	}
	// top_p alone: the kmax candidates and the whole row's mass.
	if err := s.set([]sampling.Row{{On: true, Params: sampling.Params{Temperature: 1, TopP: 0.9}}}); err != nil {
		t.Fatal(err)
	}
	if !s.needTopK || !s.needPost || s.needRace || s.rows[0].topk != 0 || s.rows[0].topp != 0.9 {
		t.Errorf("top_p alone: needs topk %v post %v race %v; row %+v", s.needTopK, s.needPost, s.needRace, s.rows[0])
	}
}
