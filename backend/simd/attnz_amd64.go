//go:build amd64 && !purego

package simd

import "golang.org/x/sys/cpu"

// zmm reports whether attnScoresF16 and attnAccumF16 run their two-head
// kernels on 512-bit vectors (attnz_amd64.s) where the head size allows;
// their results are those of the 256-bit kernels, bit for bit.
var zmm = accel && cpu.X86.HasAVX512F

//go:noescape
func attnAccum2F16AVX512(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)

//go:noescape
func attnScores2F16AVX512(s *float32, sstride int, q *float32, k, v *uint16, kstride, nkeys, hd int, scale float32)
