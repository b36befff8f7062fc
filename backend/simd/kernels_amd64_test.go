//go:build amd64 && !purego

package simd

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/arch"
	"inferno/gguf"
	"inferno/internal/floatbits"
)

// withGo runs f with the assembly kernels switched off.
func withGo(f func()) {
	savedAccel, savedVNNI := accel, vnni
	accel, vnni = false, false
	defer func() { accel, vnni = savedAccel, savedVNNI }()
	f()
}

// withoutVNNI runs f with the AVX2 kernels only.
func withoutVNNI(f func()) {
	saved := vnni
	vnni = false
	defer func() { vnni = saved }()
	f()
}

// TestAssemblyMatchesGo checks the kernels that promise the bits of their
// Go versions: Q8_0 quantization and products, SwiGLU, GeGLU and
// SwiGLUOAI, the softmax exponentials, RoPE and the RMSNorm scaling.
func TestAssemblyMatchesGo(t *testing.T) {
	if !accel {
		t.Skip("no AVX2/FMA/F16C")
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
		withoutVNNI(func() { c = f() })
		if i := floatbits.FirstDiff(c, b); i >= 0 {
			t.Fatalf("%s: element %d: AVX2 %g, Go %g", what, i, c[i], b[i])
		}
	}

	// Q8_0 products, every path (the VNNI tiles of sixteen rows by eight
	// and four tokens and of eight rows by four, the AVX2 tiles,
	// matrix-vector, Go tails).
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

// BenchmarkMatMulQ8AVX2 is BenchmarkMatMulQ8 without the VNNI kernel, for
// CPUs with AVX2 only.
func BenchmarkMatMulQ8AVX2(b *testing.B) {
	withoutVNNI(func() { BenchmarkMatMulQ8(b) })
}
