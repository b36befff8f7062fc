package simd

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/arch"
	"inferno/backend/internal/glutest"
	"inferno/internal/floatbits"
)

func TestRMSNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ops := New()
	for _, d := range []int{1, 7, 8, 32, 128, 1000, 1024} {
		for _, rows := range []int{1, 3} {
			x := randVec(rng, rows*d, 2)
			gain := randVec(rng, d, 1)
			y := make([]float32, len(x))
			ops.RMSNorm(y, x, gain, 1e-6)
			for r := range rows {
				xr := x[r*d : (r+1)*d]
				var ss float64
				for _, v := range xr {
					ss += float64(v) * float64(v)
				}
				scale := 1 / math.Sqrt(ss/float64(d)+1e-6)
				for i, v := range xr {
					want := float64(v) * scale * float64(gain[i])
					if e := math.Abs(float64(y[r*d+i]) - want); e > 1e-6*math.Abs(want)+1e-7 {
						t.Fatalf("d=%d row %d [%d]: %g, want %g", d, r, i, y[r*d+i], want)
					}
				}
			}
			// In place gives the same.
			z := append([]float32(nil), x...)
			ops.RMSNorm(z, z, gain, 1e-6)
			if i := floatbits.FirstDiff(z, y); i >= 0 {
				t.Fatalf("d=%d: in place differs at %d", d, i)
			}
		}
	}
}

func TestSwiGLUAndAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	ops := New()
	for _, n := range []int{1, 7, 8, 9, 64, 3072, 3077} {
		g := randVec(rng, n, 8)
		u := randVec(rng, n, 1)
		out := make([]float32, n)
		ops.SwiGLU(out, g, u)
		for i := range n {
			gg := float64(g[i])
			want := gg / (1 + math.Exp(-gg)) * float64(u[i])
			if e := math.Abs(float64(out[i]) - want); e > 1e-6*math.Abs(want)+1e-30 {
				t.Fatalf("SwiGLU n=%d [%d] g=%g: %g, want %g", n, i, g[i], out[i], want)
			}
		}
		inPlace := append([]float32(nil), g...)
		ops.SwiGLU(inPlace, inPlace, u)
		if i := floatbits.FirstDiff(inPlace, out); i >= 0 {
			t.Fatalf("SwiGLU in place differs at %d", i)
		}
		x := append([]float32(nil), g...)
		ops.Add(x, u)
		for i := range n {
			if x[i] != g[i]+u[i] {
				t.Fatalf("Add n=%d [%d]: %g, want %g", n, i, x[i], g[i]+u[i])
			}
		}
	}
}

func TestRoPE(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	ops := New()
	for _, headDim := range []int{2, 6, 32, 128} {
		for _, c := range []struct{ n, heads, pos int }{{1, 1, 0}, {1, 16, 37}, {5, 8, 1000}, {3, 2, 40000}} {
			x := randVec(rng, c.n*c.heads*headDim, 1)
			y := append([]float32(nil), x...)
			ops.RoPE(y, positions(c.pos, c.n), c.heads, headDim, headDim, &arch.Rope{Theta: 1e6})
			half := headDim / 2
			for tok := range c.n {
				for h := range c.heads {
					v := x[(tok*c.heads+h)*headDim:]
					got := y[(tok*c.heads+h)*headDim:]
					for i := range half {
						ang := float64(c.pos+tok) * math.Pow(1e6, -float64(2*i)/float64(headDim))
						s, co := math.Sincos(ang)
						a, b := float64(v[i]), float64(v[i+half])
						wa, wb := a*co-b*s, a*s+b*co
						tol := 1e-6 * (math.Abs(a) + math.Abs(b))
						if math.Abs(float64(got[i])-wa) > tol || math.Abs(float64(got[i+half])-wb) > tol {
							t.Fatalf("headDim %d %+v token %d head %d pair %d: (%g, %g), want (%g, %g)",
								headDim, c, tok, h, i, got[i], got[i+half], wa, wb)
						}
					}
				}
			}
		}
	}
}

func TestExpAccuracy(t *testing.T) {
	worst := 0.0
	for x := float32(-87); x <= 88; x += 0.0137 {
		want := math.Exp(float64(x))
		e := math.Abs(float64(expf(x))-want) / want
		worst = max(worst, e)
	}
	if worst > 5e-7 {
		t.Fatalf("expf relative error %.3g", worst)
	}
	for _, x := range []float32{-87.01, -1000, float32(math.Inf(-1)), float32(math.NaN())} {
		if y := expf(x); y != 0 {
			t.Errorf("expf(%g) = %g, want 0", x, y)
		}
	}
	if y := expf(float32(math.Inf(1))); y != expf(88) {
		t.Errorf("expf(+Inf) = %g", y)
	}
	if y := expf(0); y != 1 {
		t.Errorf("expf(0) = %g", y)
	}
}

// positions returns the n positions pos..pos+n-1.
func positions(pos, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(pos + i)
	}
	return p
}

// TestGatedActivations checks GeGLU and SwiGLUOAI against float64.
func TestGatedActivations(t *testing.T) {
	glutest.Check(t, New(), 17)
}
