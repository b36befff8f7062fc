//go:build amd64 && !purego

package simd

import "testing"

// asmTiles returns the assembly tiles TestBlockKernelsBitwise checks for
// k's type on this CPU: the VNNI tile where the CPU has VNNI, the AVX2 K
// tile for the K formats whose offset values fit its int16 pairs.
func asmTiles(k *typeKernels) []string {
	var tiles []string
	if vnni && k.tile != tileNone {
		tiles = append(tiles, "vnni")
	}
	if k.tile == tileK && k.k.off < 64 {
		tiles = append(tiles, "avx2")
	}
	return tiles
}

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
