//go:build amd64 && !purego

package simd

import "testing"

// BenchmarkMatMulTypesAVX2 is BenchmarkMatMulTypes with the VNNI kernels
// turned off, as on a CPU with AVX2 only.
func BenchmarkMatMulTypesAVX2(b *testing.B) {
	if !vnni {
		b.Skip("the CPU has no VNNI: BenchmarkMatMulTypes measures AVX2")
	}
	vnni = false
	defer func() { vnni = true }()
	BenchmarkMatMulTypes(b)
}

// TestBlockTypesAVX2 runs the block-type tests with the VNNI kernels
// turned off, as on a CPU with AVX2 only.
func TestBlockTypesAVX2(t *testing.T) {
	if !vnni {
		t.Skip("the CPU has no VNNI: the other tests cover AVX2")
	}
	vnni = false
	defer func() { vnni = true }()
	t.Run("TokensAndRows", TestBlockTypesTokensAndRows)
	t.Run("AgainstDequantize", TestBlockTypesAgainstDequantize)
	t.Run("KernelsBitwise", TestBlockKernelsBitwise)
}
