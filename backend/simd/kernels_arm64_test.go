//go:build arm64 && !purego

package simd

import "testing"

// withGo runs f with the assembly kernels switched off.
func withGo(f func()) {
	saved := accel
	accel = false
	defer func() { accel = saved }()
	f()
}

// withoutDotProd runs f with the kernels of a CPU without SDOT (the
// Cortex-A53 and A72), and so without I8MM.
func withoutDotProd(f func()) {
	savedDot, savedMM := dotProd, q8MMLA
	dotProd, q8MMLA = false, false
	defer func() { dotProd, q8MMLA = savedDot, savedMM }()
	f()
}

// withoutI8MM runs f with the kernels of a CPU with SDOT but no SMMLA
// (Apple M1, Graviton 2, Cortex-A76).
func withoutI8MM(f func()) {
	saved := q8MMLA
	q8MMLA = false
	defer func() { q8MMLA = saved }()
	f()
}

// kernelVariants are the kernels of CPUs with fewer features that
// TestAssemblyMatchesGo checks besides the CPU's own: SDOT without
// SMMLA, NEON without SDOT.
var kernelVariants = []struct {
	name string
	run  func(func())
}{{"SDOT without SMMLA", withoutI8MM}, {"NEON without SDOT", withoutDotProd}}

// TestWithoutDotProd runs the Q8_0 product tests with the kernels of a
// CPU without SDOT, whatever this one has.
func TestWithoutDotProd(t *testing.T) {
	withoutDotProd(func() {
		t.Run("MatMulQ8", TestMatMulQ8)
		t.Run("MatMulTokensBitwise", TestMatMulTokensBitwise)
	})
}

// TestWithoutI8MM runs the Q8_0 product tests with the kernels of a CPU
// with SDOT but no SMMLA, whatever this one has.
func TestWithoutI8MM(t *testing.T) {
	withoutI8MM(func() {
		t.Run("MatMulQ8", TestMatMulQ8)
		t.Run("MatMulTokensBitwise", TestMatMulTokensBitwise)
	})
}

// BenchmarkMatMulQ8NoDotProd is BenchmarkMatMulQ8 without SDOT.
func BenchmarkMatMulQ8NoDotProd(b *testing.B) {
	withoutDotProd(func() { BenchmarkMatMulQ8(b) })
}
