//go:build (amd64 || arm64) && !purego

package simd

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/arch"
	"inferno/gguf"
	"inferno/internal/floatbits"
)

// TestAssemblyMatchesGo checks the kernels that promise the bits of their
// Go versions: Q8_0 quantization and products, SwiGLU, GeGLU and
// SwiGLUOAI, the softmax exponentials, RoPE, the RMSNorm scaling, Add and
// the conversion to half precision; and, within rounding, the float
// products, the sum of squares and the softmax sums. Each runs with the
// CPU's kernels, with each of kernelVariants (the kernels a CPU with fewer
// features runs) and with the Go versions.
func TestAssemblyMatchesGo(t *testing.T) {
	if !accel {
		t.Skip("the CPU lacks the features of the assembly kernels")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	check := func(what string, f func() []float32) {
		t.Helper()
		a := f()
		var b, c []float32
		withGo(func() { b = f() })
		if i := floatbits.FirstDiff(a, b); i >= 0 {
			t.Fatalf("%s: element %d: assembly %g, Go %g", what, i, a[i], b[i])
		}
		for _, v := range kernelVariants {
			v.run(func() { c = f() })
			if i := floatbits.FirstDiff(c, b); i >= 0 {
				t.Fatalf("%s: element %d: %s %g, Go %g", what, i, v.name, c[i], b[i])
			}
		}
	}
	// near is check within a relative error of tol of the largest value.
	near := func(what string, tol float64, f func() []float32) {
		t.Helper()
		a := f()
		var b []float32
		withGo(func() { b = f() })
		var big float64
		for _, v := range b {
			big = max(big, math.Abs(float64(v)))
		}
		for i := range a {
			if d := math.Abs(float64(a[i]) - float64(b[i])); !(d <= tol*big) {
				t.Fatalf("%s: element %d: assembly %g, Go %g", what, i, a[i], b[i])
			}
		}
	}

	// Q8_0 products, every path (on amd64 the VNNI tiles of sixteen rows
	// by eight and four tokens and of eight rows by four, the AVX2 tiles;
	// on arm64 the 4x4 tiles; matrix-vector, Go tails).
	for _, n := range []int{1, 4, 6, 8, 9, 12, 17} {
		w := randWeight(t, rng, gguf.TensorQ8_0, 45, 320)
		x := randVec(rng, n*320, 2)
		check("MatMul Q8_0", func() []float32 {
			y := make([]float32, n*45)
			New().MatMul(y, w, x, n)
			return y
		})
		check("quantized scales", func() []float32 {
			var a Acts
			a.Prepare(w, x, n)
			a.Quantize(0, n)
			return a.ds
		})
	}

	// Element-wise kernels on lengths with and without a Go tail, over
	// the whole range of the exponential.
	for _, n := range []int{8, 29, 1024} {
		g := randVec(rng, n, 30)
		g[0], g[n-1] = -100, 100
		u := randVec(rng, n, 1)
		check("SwiGLU", func() []float32 {
			out := make([]float32, n)
			New().SwiGLU(out, g, u)
			return out
		})
		check("GeGLU", func() []float32 {
			out := make([]float32, n)
			New().GeGLU(out, g, u)
			return out
		})
		// Up values past the clamps, and a NaN gate and up.
		u8 := randVec(rng, n, 8)
		g8 := append([]float32(nil), g...)
		g8[n/2], u8[n/3] = float32(math.NaN()), float32(math.NaN())
		check("SwiGLUOAI", func() []float32 {
			out := make([]float32, n)
			New().SwiGLUOAI(out, g8, u8)
			return out
		})
		check("expSub", func() []float32 {
			p := make([]float32, n) // the sums are added in different orders
			expSub(p, g, 3)
			return p
		})
		check("scaleMul", func() []float32 {
			y := make([]float32, n)
			scaleMul(y, g, u, 0.37)
			return y
		})
		check("Add", func() []float32 {
			y := append([]float32(nil), g...)
			New().Add(y, u)
			return y
		})
		near("expSub's sum", 1e-6, func() []float32 {
			p := make([]float32, n)
			return []float32{expSub(p, u, 0.5)}
		})
		near("sumSquares", 1e-6, func() []float32 {
			return []float32{float32(sumSquares(g))}
		})
		check("ToF16", func() []float32 {
			h := make([]uint16, n)
			New().ToF16(h, g)
			y := make([]float32, n)
			for i, v := range h {
				y[i] = float32(v)
			}
			return y
		})
	}

	// Float products: four rows at a time and one, with and without a Go
	// tail of columns.
	for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16} {
		for _, cols := range []int{8, 64, 100} {
			w := randWeight(t, rng, typ, 7, cols)
			x := randVec(rng, 3*cols, 1)
			near("MatMul "+typ.String(), 1e-5, func() []float32 {
				y := make([]float32, 3*7)
				New().MatMul(y, w, x, 3)
				return y
			})
		}
	}
	yarn := &arch.Rope{Theta: 150000, Scaling: arch.ScaleYaRN, Factor: 32, OrigContext: 4096, BetaFast: 32, BetaSlow: 1}
	for _, headDim := range []int{16, 64, 128} {
		x := randVec(rng, 3*5*headDim, 1)
		check("RoPE", func() []float32 {
			y := append([]float32(nil), x...)
			New().RoPE(y, []int32{1000, 3, 40000}, 5, headDim, headDim, &arch.Rope{Theta: 1e6})
			return y
		})
		check("RoPE YaRN, partial", func() []float32 {
			y := append([]float32(nil), x...)
			New().RoPE(y, []int32{1000, 3, 40000}, 5, headDim, headDim/2, yarn)
			return y
		})
	}

	b := make([]byte, 3000)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	if s, want := memSum(b), memSumGo(b); s != want {
		t.Fatalf("memSum = %d, want %d", s, want)
	}
}
