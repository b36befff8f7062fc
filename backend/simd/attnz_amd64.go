//go:build amd64 && !purego

package simd

import "golang.org/x/sys/cpu"

// zmm reports whether attnAccumF16 runs its two-head kernel on 512-bit
// vectors (attnz_amd64.s) where the head size allows; its results are
// those of the 256-bit kernel, bit for bit.
var zmm = accel && cpu.X86.HasAVX512F

//go:noescape
func attnAccum2F16AVX512(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)
