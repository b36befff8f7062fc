package gumbel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"inferno/sampling"
	"inferno/sampling/samplingtest"
)

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
		if got := Philox4x32(c.ctr, c.k[0], c.k[1]); got != c.want {
			t.Errorf("philox4x32-10(%x, %x) = %x, want %x", c.ctr, c.k, got, c.want)
		}
	}
}

// llmRow returns logits shaped like a language model's: a few large
// values over a Gaussian bulk.
func llmRow(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 2)
	}
	for range 12 {
		x[rng.IntN(n)] += float32(6 + 6*rng.Float64())
	}
	return x
}

// TestSampleDistribution checks the design the GPU samplers implement, on
// the CPU: the Gumbel-max over the tokens sampling keeps, with the noise
// keyed by (seed, position, id), draws from sampling.Distribution
// (chi-squared, p < 1e-6).
func TestSampleDistribution(t *testing.T) {
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
			counts[Sample(x, c.p, patches, c.mask, uint64(ci*7919+i/1000), i%1000)]++
		}
		chi, df, bad := samplingtest.ChiSquared(counts, want, N)
		what := fmt.Sprintf("case %d", ci)
		if bad >= 0 {
			t.Errorf("%s: token %d drawn, probability 0", what, bad)
		}
		if crit := samplingtest.ChiCrit(df); df >= 1 && chi > crit {
			t.Errorf("%s: chi-squared %.1f > %.1f (df %d, p < 1e-6)", what, chi, crit, df)
		}
	}
}
