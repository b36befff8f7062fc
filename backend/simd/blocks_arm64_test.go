//go:build arm64 && !purego

package simd

import (
	"math/rand/v2"
	"testing"

	"inferno/gguf"
	"inferno/internal/floatbits"
)

// asmTiles returns the assembly tiles TestBlockKernelsBitwise checks for
// k's type on this CPU: the one tileName chooses (SMMLA or SDOT), if any.
func asmTiles(k *typeKernels) []string {
	if tile := tileName(k); tile != "" {
		return []string{tile}
	}
	return nil
}

// TestBlockTypesSDOT runs the block-type tests with the SDOT tiles, as on
// a CPU without I8MM.
func TestBlockTypesSDOT(t *testing.T) {
	if !i8mm {
		t.Skip("the CPU has no I8MM: the other tests cover SDOT")
	}
	i8mm = false
	defer func() { i8mm = true }()
	if _, _, tile := Kernels(gguf.TensorQ4_K); tile != "sdot" {
		t.Fatalf("Q4_K tile %q without I8MM, want sdot", tile)
	}
	t.Run("TokensAndRows", TestBlockTypesTokensAndRows)
	t.Run("KernelsBitwise", TestBlockKernelsBitwise)
}

// TestBlockTypesNoSDOT runs the block-type tests with the Go kernels, as
// on a CPU without the dot product instructions.
func TestBlockTypesNoSDOT(t *testing.T) {
	if !blockAccel {
		t.Skip("the CPU has no SDOT: the other tests run Go")
	}
	withoutBlocks(func() { noSDOT(t) })
}

func noSDOT(t *testing.T) {
	if mv, pk, tile := Kernels(gguf.TensorQ4_K); mv || pk || tile != "" {
		t.Fatalf("Q4_K kernels %v %v %q without SDOT, want none", mv, pk, tile)
	}
	t.Run("TokensAndRows", TestBlockTypesTokensAndRows)
	t.Run("AgainstDequantize", TestBlockTypesAgainstDequantize)
	t.Run("MXFP4ScaleEdges", TestMXFP4ScaleEdges)
	t.Run("QuantizeQ8K", TestQuantizeQ8K)
}

// TestBlockMatMulMatchesGo checks MatMul of every block type with the
// NEON kernels (the matrix-vector kernels, the SMMLA and the SDOT tiles)
// against MatMul with the Go ones, bit for bit.
func TestBlockMatMulMatchesGo(t *testing.T) {
	if !blockAccel {
		t.Skip("the CPU has no SDOT")
	}
	rng := rand.New(rand.NewPCG(33, 64))
	for _, typ := range blockTypes {
		if typ == gguf.TensorQ8_0 {
			continue
		}
		rows, cols := 27, blockCols(typ, 512)
		w := randBlockWeight(t, rng, typ, rows, cols, true)
		for _, n := range []int{1, 13} {
			x := randVec(rng, n*cols, 1)
			run := func() []float32 {
				y := make([]float32, n*rows)
				New().MatMul(y, w, x, n)
				return y
			}
			neon := run()
			var sdot, goY []float32
			withoutBlocks(func() { goY = run() })
			savedI8MM := i8mm
			i8mm = false
			sdot = run()
			i8mm = savedI8MM
			if i := floatbits.FirstDiff(neon, goY); i >= 0 {
				t.Fatalf("%s n=%d: element %d: NEON %g, Go %g", typ, n, i, neon[i], goY[i])
			}
			if i := floatbits.FirstDiff(sdot, goY); i >= 0 {
				t.Fatalf("%s n=%d: element %d: SDOT %g, Go %g", typ, n, i, sdot[i], goY[i])
			}
		}
	}
}

// withoutBlocks runs f with the block formats' Go kernels, as on a CPU
// without SDOT.
func withoutBlocks(f func()) {
	savedAccel, savedI8MM := blockAccel, i8mm
	blockAccel, i8mm = false, false
	defer func() { blockAccel, i8mm = savedAccel, savedI8MM }()
	f()
}

// BenchmarkMatVecTypesGo is BenchmarkMatVecTypes with the Go kernels.
func BenchmarkMatVecTypesGo(b *testing.B) { withoutBlocks(func() { BenchmarkMatVecTypes(b) }) }

// BenchmarkMatMulTypesGo is BenchmarkMatMulTypes with the Go kernels.
func BenchmarkMatMulTypesGo(b *testing.B) { withoutBlocks(func() { BenchmarkMatMulTypes(b) }) }

// BenchmarkMatMulTypesSDOT is BenchmarkMatMulTypes with the SDOT tiles, as
// on a CPU without I8MM.
func BenchmarkMatMulTypesSDOT(b *testing.B) {
	if !i8mm {
		b.Skip("the CPU has no I8MM: BenchmarkMatMulTypes measures SDOT")
	}
	i8mm = false
	defer func() { i8mm = true }()
	BenchmarkMatMulTypes(b)
}
