package cuda

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"testing"

	"inferno/sampling"
)

// philox4x32 is Philox4x32-10 (Salmon et al., Random123), as
// kernels/sample.cuh computes it.
func philox4x32(c [4]uint32, k0, k1 uint32) [4]uint32 {
	for range 10 {
		hi0, lo0 := bits.Mul32(0xD2511F53, c[0])
		hi1, lo1 := bits.Mul32(0xCD9E8D57, c[2])
		c = [4]uint32{hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0}
		k0 += 0x9E3779B9
		k1 += 0xBB67AE85
	}
	return c
}

// gumbelRef is the kernel's gumbel in float64.
func gumbelRef(r uint32) float64 {
	var e float64
	if r < 0x80000000 {
		e = -math.Log((float64(r) + 0.5) * 0x1p-32)
	} else {
		e = -math.Log1p(-(float64(0xFFFFFFFF-r) + 0.5) * 0x1p-32)
	}
	return -math.Log(e)
}

// noiseRef is the noise of token id at position pos under seed.
func noiseRef(seed uint64, pos int, id int) float64 {
	r := philox4x32([4]uint32{uint32(id) >> 2, uint32(pos), 0, 0}, uint32(seed), uint32(seed>>32))
	return gumbelRef(r[id&3])
}

// sampleRef draws as kernels/sample.cuh does, in float64 for the noise:
// the Gumbel-max over the tokens kept (sampling.Distribution's support,
// weighted by exp((x - max)/T)); greedy parameters take the argmax.
func sampleRef(x []float32, p sampling.Params, patches []sampling.Patch, mask []uint64, seed uint64, pos int) int32 {
	d := sampling.Distribution(x, p, patches, mask)
	if p.Argmax() {
		for id, q := range d {
			if q == 1 {
				return int32(id)
			}
		}
	}
	y := slices.Clone(x)
	for _, pt := range patches {
		y[pt.ID] = pt.Apply(y[pt.ID], p)
	}
	invT := float64(float32(1 / float64(p.Temperature)))
	best, bs := int32(-1), math.Inf(-1)
	for id, q := range d {
		if q == 0 {
			continue
		}
		s := float64(y[id])*invT + noiseRef(seed, pos, id)
		if s > bs {
			best, bs = int32(id), s
		}
	}
	return best
}

// TestPhiloxKnownAnswer checks Philox4x32-10 against Random123's known
// answers (kat_vectors: philox4x32 10 rounds).
func TestPhiloxKnownAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ctr  [4]uint32
		k    [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		if got := philox4x32(c.ctr, c.k[0], c.k[1]); got != c.want {
			t.Errorf("philox4x32-10(%x, %x) = %x, want %x", c.ctr, c.k, got, c.want)
		}
	}
}

// TestSampleRefDistribution checks the design the kernels implement, on
// the CPU: the Gumbel-max over the tokens sampling keeps, with the
// kernel's noise keyed by (seed, position, id), draws from
// sampling.Distribution (chi-squared, p < 1e-6).
func TestSampleRefDistribution(t *testing.T) {
	t.Parallel()
	const V = 64
	x := llmRow(11, V)
	for i := range x {
		x[i] *= 0.25 // flatter: many tokens matter
	}
	mask := make([]uint64, 1)
	for i := range V {
		if i%4 != 2 {
			mask[0] |= 1 << i
		}
	}
	for ci, c := range []struct {
		p    sampling.Params
		mask []uint64
	}{
		{p: sampling.Params{Temperature: 1}},
		{p: sampling.Params{Temperature: 1.3, TopP: 0.9, TopK: 20}},
		{p: sampling.Params{Temperature: 1.5, MinP: 0.1}, mask: mask},
		{p: sampling.Params{Temperature: 0.8, TopK: 10, RepetitionPenalty: 1.5, LogitBias: map[int32]float32{3: 2}}},
	} {
		var patches []sampling.Patch
		if c.p.RepetitionPenalty != 0 || c.p.LogitBias != nil {
			smp, err := sampling.New(c.p, V)
			if err != nil {
				t.Fatal(err)
			}
			smp.SetPrompt([]int32{1, 2, 3, 4, 5})
			patches = smp.Patches(nil)
		}
		want := sampling.Distribution(x, c.p, patches, c.mask)
		const N = 60000
		counts := make([]int, V)
		for i := range N {
			counts[sampleRef(x, c.p, patches, c.mask, uint64(ci*7919+i/1000), i%1000)]++
		}
		chiTest(t, fmt.Sprintf("case %d", ci), counts, want, N)
	}
}

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
