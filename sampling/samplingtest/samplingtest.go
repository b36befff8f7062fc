// Package samplingtest holds reference computations that the tests of
// the samplers (package sampling's, a backend's on its device) check
// their results against.
package samplingtest

import "math"

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
