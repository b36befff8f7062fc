// Package samplingtest holds reference computations that the tests of
// the samplers (package sampling's, a backend's on its device) check
// their results against.
package samplingtest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// LogSoftmax returns the log-softmax of x, computed in float64: the
// log-probabilities of the raw logits.
func LogSoftmax(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, float64(v))
	}
	var z float64
	for _, v := range x {
		z += math.Exp(float64(v) - m)
	}
	l := make([]float64, len(x))
	for i, v := range x {
		l[i] = float64(v) - m - math.Log(z)
	}
	return l
}

// ChiCrit returns the chi-squared critical value at p about 1e-6 for df
// degrees of freedom (Wilson-Hilferty).
func ChiCrit(df int) float64 {
	const z = 4.753
	d := float64(df)
	a := 2 / (9 * d)
	return d * math.Pow(1-a+z*math.Sqrt(a), 3)
}

// ChiSquared compares counts (N draws) with the probabilities want:
// Pearson's statistic over the tokens expected at least 5 times, the
// others pooled in one bin, with its degrees of freedom (below 1: one
// bin, nothing to test), and the lowest token drawn although its
// probability is 0 (-1 if none).
func ChiSquared(counts []int, want []float64, N int) (chi float64, df int, impossible int) {
	var pooledE float64
	pooledO := 0
	df, impossible = -1, -1
	for id, p := range want {
		if p == 0 {
			if counts[id] != 0 && impossible < 0 {
				impossible = id
			}
			continue
		}
		e := p * float64(N)
		if e < 5 {
			pooledE += e
			pooledO += counts[id]
			continue
		}
		o := float64(counts[id])
		chi += (o - e) * (o - e) / e
		df++
	}
	if pooledE >= 5 {
		o := float64(pooledO)
		chi += (o - pooledE) * (o - pooledE) / pooledE
		df++
	}
	return chi, df, impossible
}

// LLMRow returns n logits shaped like a language model's: a few large
// values over a Gaussian bulk, the same for the same seed.
func LLMRow(seed uint64, n int) []float32 {
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

// CheckChi fails t unless counts (N draws) fit the probabilities want:
// tokens of probability 0 must never appear; the others are binned,
// those expected fewer than 5 times pooled (ChiSquared), and tested at
// p < 1e-6.
func CheckChi(t testing.TB, what string, counts []int, want []float64, N int) {
	t.Helper()
	chi, df, bad := ChiSquared(counts, want, N)
	if bad >= 0 {
		t.Errorf("%s: token %d drawn %d times, probability 0", what, bad, counts[bad])
	}
	if df < 1 {
		t.Logf("%s: one token, %d draws", what, N)
		return
	}
	if c := ChiCrit(df); chi > c {
		t.Errorf("%s: chi-squared %.1f > %.1f (df %d, p < 1e-6)", what, chi, c, df)
	} else {
		t.Logf("%s: chi-squared %.1f (df %d, critical %.1f)", what, chi, df, c)
	}
}
