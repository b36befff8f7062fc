//go:build amd64 && !purego

package simd

import "testing"

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

// kernelVariants are the kernels of CPUs with fewer features that
// TestAssemblyMatchesGo checks besides the CPU's own: AVX2 without VNNI.
var kernelVariants = []struct {
	name string
	run  func(func())
}{{"AVX2", withoutVNNI}}

// BenchmarkMatMulQ8AVX2 is BenchmarkMatMulQ8 without the VNNI kernel, for
// CPUs with AVX2 only.
func BenchmarkMatMulQ8AVX2(b *testing.B) {
	withoutVNNI(func() { BenchmarkMatMulQ8(b) })
}
