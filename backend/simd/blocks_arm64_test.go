//go:build arm64 && !purego

package simd

import (
	"testing"

	"inferno/gguf"
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
