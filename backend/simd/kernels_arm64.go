//go:build arm64 && !purego

package simd

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// accel reports whether the NEON kernels run. Advanced SIMD is part of
// every ARMv8-A CPU, so it is true on arm64 but where tests turn it off to
// run the Go versions.
var accel = cpu.ARM64.HasASIMD

// dotProd reports whether the Q8_0 kernels use SDOT (FEAT_DotProd,
// ASIMDDP: Apple M1 and later, Graviton 2 and later, Cortex-A76, the
// Raspberry Pi 5; every Apple silicon CPU has it, and macOS 11 does not
// report it). Without it they multiply with SMULL and SMULL2 and add pairs
// with SADDLP and SADALP (Cortex-A53/A72: the Raspberry Pi 3 and 4); both
// give the same exact integer sums. Tests turn it off to check that path.
var dotProd = cpu.ARM64.HasASIMDDP || runtime.GOOS == "darwin"

// q8MMLA reports whether the Q8_0 tiles of four rows by four tokens use
// SMMLA (FEAT_I8MM: Apple M2 and later, Graviton 3 and later), which
// multiplies two rows by two tokens at once; it implies dotProd. Tests
// turn it off to check the SDOT tiles.
var q8MMLA = dotProd && cpu.ARM64.HasI8MM

// q8Kernels reports, for Kernels, whether Q8_0 weights are repacked (no:
// the tiles read the file's layout) and which multi-token kernel they
// take: SMMLA, SDOT, or the widening multiplies without either.
func q8Kernels() (pack bool, tile string) {
	switch {
	case q8MMLA:
		return false, "smmla"
	case dotProd:
		return false, "sdot"
	}
	return false, "neon"
}

// ropeStep and accumStep are the multiples of half a head (rope) and of
// the head (attnAccum) the assembly takes.
const ropeStep, accumStep = 4, 16

// The assembly kernels of this architecture alone, in *_arm64.s (the
// shared ones: kernels_asm.go).

//go:noescape
func q8MatVecSDOT(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, nb int)

//go:noescape
func q8MatVecNEON(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, nb int)

//go:noescape
func q8TileSDOT(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)

//go:noescape
func q8TileSMMLA(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)

//go:noescape
func q8TileNEON(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)

//go:noescape
func sumSqNEON(x *float32, n int) float64

//go:noescape
func attnScores2F16NEON(s *float32, sstride int, q *float32, k *uint16, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnScores1F16NEON(s, q *float32, k *uint16, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnAccum2F16NEON(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)

//go:noescape
func attnAccum1F16NEON(o, p *float32, v *uint16, vstride, nkeys, hd int, corr float32)

// q8MatVecAsm runs the Q8_0 matrix-vector kernel the CPU takes: SDOT,
// else the widening multiplies.
func q8MatVecAsm(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, nb int) {
	if dotProd {
		q8MatVecSDOT(y, w, rb, groups, qs, ds, nb)
	} else {
		q8MatVecNEON(y, w, rb, groups, qs, ds, nb)
	}
}

// q8TileAsm runs the Q8_0 4x4 tile kernel the CPU takes: SMMLA, SDOT, or
// the widening multiplies.
func q8TileAsm(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int) {
	switch {
	case q8MMLA:
		q8TileSMMLA(y, ldy, w, rb, qs, dsx, nb)
	case dotProd:
		q8TileSDOT(y, ldy, w, rb, qs, dsx, nb)
	default:
		q8TileNEON(y, ldy, w, rb, qs, dsx, nb)
	}
}

// sumSquares returns the sum of x[i]^2: the assembly sums the first
// len(x)&^7 squares in float64, Go the rest.
func sumSquares(x []float32) float64 {
	n := len(x) &^ 7
	if !accel || n == 0 {
		return sumSquaresGo(x)
	}
	return sumSqNEON(&x[0], n) + sumSquaresGo(x[n:])
}

// attnScoresF16 is attnScores with half-precision keys: the assembly
// widens each group of 8 with FCVTL and FCVTL2 and computes as
// attnScores's, so the scores are those of the keys widened to float32.
// v, the values of the keys, is not read.
func attnScoresF16(s []float32, sstride int, q []float32, hd, nh int, k, v []uint16, kstride, nk int, scale float32) {
	if !accel || hd%8 != 0 {
		attnScoresF16Go(s, sstride, q, hd, nh, k, kstride, nk, scale)
		return
	}
	_, _, _ = s[(nh-1)*sstride+nk-1], q[nh*hd-1], k[(nk-1)*kstride+hd-1]
	i := 0
	for ; i+2 <= nh; i += 2 {
		attnScores2F16NEON(&s[i*sstride], sstride*4, &q[i*hd], &k[0], kstride*2, nk, hd, scale)
	}
	if i < nh {
		attnScores1F16NEON(&s[i*sstride], &q[i*hd], &k[0], kstride*2, nk, hd, scale)
	}
}

// attnAccumF16 is attnAccum with half-precision values, widened by the
// assembly with FCVTL and FCVTL2; the sums are attnAccum's on the widened
// values.
func attnAccumF16(o []float32, hd, nh int, p []float32, pstride int, v []uint16, vstride, nk int, corr []float32) {
	if !accel || hd%16 != 0 {
		attnAccumF16Go(o, hd, nh, p, pstride, v, vstride, nk, corr)
		return
	}
	_, _, _, _ = o[nh*hd-1], p[(nh-1)*pstride+nk-1], v[(nk-1)*vstride+hd-1], corr[nh-1]
	i := 0
	for ; i+2 <= nh; i += 2 {
		attnAccum2F16NEON(&o[i*hd], hd*4, &p[i*pstride], pstride*4, &v[0], vstride*2, nk, hd, corr[i], corr[i+1])
	}
	if i < nh {
		attnAccum1F16NEON(&o[i*hd], &p[i*pstride], &v[0], vstride*2, nk, hd, corr[i])
	}
}
