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
// Cortex-A53 and A72).
func withoutDotProd(f func()) {
	saved := dotProd
	dotProd = false
	defer func() { dotProd = saved }()
	f()
}

// kernelVariants are the kernels of CPUs with fewer features that
// TestAssemblyMatchesGo checks besides the CPU's own: NEON without SDOT.
var kernelVariants = []struct {
	name string
	run  func(func())
}{{"NEON without SDOT", withoutDotProd}}

// TestWithoutDotProd runs the Q8_0 product tests with the kernels of a
// CPU without SDOT, whatever this one has.
func TestWithoutDotProd(t *testing.T) {
	withoutDotProd(func() {
		t.Run("MatMulQ8", TestMatMulQ8)
		t.Run("MatMulTokensBitwise", TestMatMulTokensBitwise)
	})
}

// BenchmarkMatMulQ8NoDotProd is BenchmarkMatMulQ8 without SDOT.
func BenchmarkMatMulQ8NoDotProd(b *testing.B) {
	withoutDotProd(func() { BenchmarkMatMulQ8(b) })
}
