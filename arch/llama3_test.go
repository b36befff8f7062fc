package arch_test

import (
	"math"
	"testing"

	"inferno/arch"
)

// TestLlama3FreqFactors: the factors llama.cpp's converter writes (float32
// arithmetic) and the frequencies transformers computes from the same
// parameters (Rope.Freqs) agree, for Llama 3.1 8B's and 3.2 1B's RoPE.
func TestLlama3FreqFactors(t *testing.T) {
	for _, factor := range []float64{8, 32} {
		r := arch.Rope{Theta: 500000, Scaling: arch.ScaleLlama3, Factor: factor, OrigContext: 8192, LowFreqFactor: 1, HighFreqFactor: 4}
		ff := arch.Llama3FreqFactors(r.Theta, 128, factor, 1, 4, 8192)
		plain := (&arch.Rope{Theta: r.Theta}).Freqs(128)
		scaled := r.Freqs(128)
		withFactors := r
		withFactors.FreqFactors = ff
		fromFactors := withFactors.Freqs(128)
		kept, divided := 0, 0
		for i := range ff {
			if e := math.Abs(fromFactors[i]-scaled[i]) / scaled[i]; e > 1e-6 {
				t.Errorf("factor %v, pair %d: %g from the factors, %g from the parameters", factor, i, fromFactors[i], scaled[i])
			}
			switch ff[i] {
			case 1:
				kept++
				if scaled[i] != plain[i] {
					t.Errorf("pair %d kept, but its frequency changed", i)
				}
			case float32(factor):
				divided++
			}
		}
		if kept == 0 || divided == 0 || kept+divided == len(ff) {
			t.Errorf("factor %v: %d pairs kept, %d divided of %d: want some of each and some blended", factor, kept, divided, len(ff))
		}
	}
}
