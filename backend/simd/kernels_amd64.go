//go:build amd64 && !purego

package simd

import (
	"golang.org/x/sys/cpu"
)

// accel reports whether the AVX2/FMA/F16C assembly kernels run. HasAVX2 is
// only set when the OS saves the YMM registers.
var accel = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// ropeStep and accumStep are the multiples of half a head (rope) and of
// the head (attnAccum) the assembly takes.
const ropeStep, accumStep = 8, 32

// The assembly kernels of this architecture alone, in *_amd64.s (the
// shared ones: kernels_asm.go).

//go:noescape
func q8MatVecAsm(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, nb int)

//go:noescape
func q8TileAsm(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)

//go:noescape
func sumSqAVX2(x *float32, n int) float32

//go:noescape
func attnScores2F16AVX2(s *float32, sstride int, q *float32, k, v *uint16, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnScores1F16AVX2(s, q *float32, k, v *uint16, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnAccum2F16AVX2(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)

//go:noescape
func attnAccum1F16AVX2(o, p *float32, v *uint16, vstride, nkeys, hd int, corr float32)

// sumSquares returns the sum of x[i]^2.
func sumSquares(x []float32) float64 {
	n := len(x) &^ 7
	if !accel || n == 0 {
		return sumSquaresGo(x)
	}
	return float64(sumSqAVX2(&x[0], n)) + sumSquaresGo(x[n:])
}

// attnScoresF16 is attnScores with half-precision keys: the assembly
// widens each group of 8 with VCVTPH2PS and computes as attnScores's, so
// the scores are those of the keys widened to float32. v holds the values
// of the keys, laid out as k; the assembly prefetches them. Where the CPU
// has AVX-512 and hd is a multiple of 32, pairs of heads go to the 512-bit
// kernel eight keys at a time, which gives the same bits.
func attnScoresF16(s []float32, sstride int, q []float32, hd, nh int, k, v []uint16, kstride, nk int, scale float32) {
	if !accel || hd%8 != 0 {
		attnScoresF16Go(s, sstride, q, hd, nh, k, kstride, nk, scale)
		return
	}
	_, _, _, _ = s[(nh-1)*sstride+nk-1], q[nh*hd-1], k[(nk-1)*kstride+hd-1], v[(nk-1)*kstride+hd-1]
	i := 0
	if n8 := nk &^ 7; zmm && hd%32 == 0 && n8 > 0 {
		// Eight keys at a time on 512-bit vectors, the rest on 256-bit.
		ko := n8 * kstride
		for ; i+2 <= nh; i += 2 {
			attnScores2F16AVX512(&s[i*sstride], sstride*4, &q[i*hd], &k[0], &v[0], kstride*2, n8, hd, scale)
			if nk > n8 {
				attnScores2F16AVX2(&s[i*sstride+n8], sstride*4, &q[i*hd], &k[ko], &v[ko], kstride*2, nk-n8, hd, scale)
			}
		}
	}
	for ; i+2 <= nh; i += 2 {
		attnScores2F16AVX2(&s[i*sstride], sstride*4, &q[i*hd], &k[0], &v[0], kstride*2, nk, hd, scale)
	}
	if i < nh {
		attnScores1F16AVX2(&s[i*sstride], &q[i*hd], &k[0], &v[0], kstride*2, nk, hd, scale)
	}
}

// attnAccumF16 is attnAccum with half-precision values, widened by the
// assembly with VCVTPH2PS; the sums are attnAccum's on the widened values.
// The assembly does not prefetch: attnScoresF16 did. Where the CPU has
// AVX-512 and hd is a multiple of 128, pairs of heads go to the 512-bit
// kernel, which gives the same bits.
func attnAccumF16(o []float32, hd, nh int, p []float32, pstride int, v []uint16, vstride, nk int, corr []float32) {
	if !accel || hd%32 != 0 {
		attnAccumF16Go(o, hd, nh, p, pstride, v, vstride, nk, corr)
		return
	}
	_, _, _, _ = o[nh*hd-1], p[(nh-1)*pstride+nk-1], v[(nk-1)*vstride+hd-1], corr[nh-1]
	i := 0
	if zmm && hd%128 == 0 {
		for ; i+2 <= nh; i += 2 {
			attnAccum2F16AVX512(&o[i*hd], hd*4, &p[i*pstride], pstride*4, &v[0], vstride*2, nk, hd, corr[i], corr[i+1])
		}
	}
	for ; i+2 <= nh; i += 2 {
		attnAccum2F16AVX2(&o[i*hd], hd*4, &p[i*pstride], pstride*4, &v[0], vstride*2, nk, hd, corr[i], corr[i+1])
	}
	if i < nh {
		attnAccum1F16AVX2(&o[i*hd], &p[i*pstride], &v[0], vstride*2, nk, hd, corr[i])
	}
}
