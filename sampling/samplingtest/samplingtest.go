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
