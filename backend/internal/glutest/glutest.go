// Package glutest checks the gated activations of a backend.Ops (GeGLU,
// SwiGLUOAI) against float64 references written from transformers'
// definitions, for the tests of the CPU backends.
package glutest

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/internal/floatbits"
)

// GeLU returns transformers' gelu_pytorch_tanh (and ggml_gelu's formula)
// of x in float64: x/2 * (1 + tanh(z)), z = sqrt(2/pi) * (x + 0.044715
// x^3), evaluated as x / (1 + e^(-2z)), the same number without the
// cancellation of 1 + tanh(z) for z far below 0.
func GeLU(x float64) float64 {
	z := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
	return x / (1 + math.Exp(-2*z))
}

// SwiGLUOAI returns gpt-oss's gated activation of gate and up in float64,
// as transformers' GptOssExperts computes it: gate clamped to at most 7,
// up to -7..7, gate * sigmoid(1.702 gate) * (up + 1).
func SwiGLUOAI(gate, up float64) float64 {
	gate = min(gate, 7)
	up = max(min(up, 7), -7)
	return gate / (1 + math.Exp(-1.702*gate)) * (up + 1)
}

// Check checks ops's GeGLU and SwiGLUOAI element-wise against GeLU and
// SwiGLUOAI within a relative 1e-5 (and 1e-30 absolute), on lengths with
// and without a vector tail, gates over the exponential's whole range and
// past the clamps, up values past the clamps; and that computing in
// place (out aliasing gate) gives the same bits.
func Check(t *testing.T, ops backend.Ops, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 4))
	for _, n := range []int{1, 7, 8, 9, 64, 3077, 1 << 16} {
		g, u := make([]float32, n), make([]float32, n)
		for i := range g {
			g[i] = float32(rng.NormFloat64() * 6)
			u[i] = float32(rng.NormFloat64() * 6)
		}
		g[0] = -100
		if n > 2 {
			g[1], g[2], u[1] = 100, 7, -30
		}
		for _, c := range []struct {
			name string
			op   func(out, gate, up []float32)
			ref  func(g, u float64) float64
		}{
			{"GeGLU", ops.GeGLU, func(g, u float64) float64 { return GeLU(g) * u }},
			{"SwiGLUOAI", ops.SwiGLUOAI, SwiGLUOAI},
		} {
			out := make([]float32, n)
			c.op(out, g, u)
			for i := range n {
				want := c.ref(float64(g[i]), float64(u[i]))
				if e := math.Abs(float64(out[i]) - want); !(e <= 1e-5*math.Abs(want)+1e-30) {
					t.Fatalf("%s %s n=%d [%d] gate %g up %g: %g, want %g", ops.Name(), c.name, n, i, g[i], u[i], out[i], want)
				}
			}
			inPlace := append([]float32(nil), g...)
			c.op(inPlace, inPlace, u)
			if i := floatbits.FirstDiff(inPlace, out); i >= 0 {
				t.Fatalf("%s %s n=%d: in place differs at %d", ops.Name(), c.name, n, i)
			}
		}
	}
}
