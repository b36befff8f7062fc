//go:build arm64 && !purego

package simd

import (
	"runtime"

	"golang.org/x/sys/cpu"

	"inferno/gguf"
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

// The assembly kernels, in *_arm64.s. Callers check every length first;
// counts are positive.

//go:noescape
func quantizeQ8NEON(qs *int8, qstride int, ds *float32, cx *int32, x *float32, nb int)

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
func dot4F32NEON(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func dot4F16NEON(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func dot4BF16NEON(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func sumSqNEON(x *float32, n int) float64

//go:noescape
func ropeNEON(x, cos, sin *float32, nHeads, half int)

//go:noescape
func attnScores2NEON(s *float32, sstride int, q *float32, k *float32, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnScores1NEON(s, q, k *float32, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnAccum2NEON(o *float32, ostride int, p *float32, pstride int, v *float32, vstride, nkeys, hd int, corr0, corr1 float32)

//go:noescape
func attnAccum1NEON(o, p, v *float32, vstride, nkeys, hd int, corr float32)

//go:noescape
func attnScores2F16NEON(s *float32, sstride int, q *float32, k *uint16, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnScores1F16NEON(s, q *float32, k *uint16, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnAccum2F16NEON(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)

//go:noescape
func attnAccum1F16NEON(o, p *float32, v *uint16, vstride, nkeys, hd int, corr float32)

//go:noescape
func toF16NEON(dst *uint16, src *float32, n int)

//go:noescape
func memSumNEON(p *byte, n int) uint64

// quantizeQ8 quantizes len(x)/32 blocks of x; see quantizeQ8Go.
func quantizeQ8(qs []int8, qstride int, ds []float32, cx []int32, x []float32) {
	nb := len(x) / qk
	if nb == 0 {
		return
	}
	if !accel {
		quantizeQ8Go(qs, qstride, ds, cx, x)
		return
	}
	_, _, _ = qs[(nb-1)*qstride+qk-1], ds[nb-1], cx[nb-1]
	quantizeQ8NEON(&qs[0], qstride, &ds[0], &cx[0], &x[0], nb)
}

// q8MatVec computes len(y) rows, a multiple of 8; see q8MatVecGo.
func q8MatVec(y []float32, w []byte, rb int, qs []int8, ds []float32, nb int) {
	if !accel {
		q8MatVecGo(y, w, rb, qs, ds, nb)
		return
	}
	if len(y) == 0 || nb == 0 {
		clear(y)
		return
	}
	_, _, _ = w[(len(y)-1)*rb+nb*blockBytes-1], qs[nb*qk-1], ds[nb-1]
	if dotProd {
		q8MatVecSDOT(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], nb)
	} else {
		q8MatVecNEON(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], nb)
	}
}

// q8Tile computes a 4x4 tile; see q8TileGo.
func q8Tile(y []float32, ldy int, w []byte, rb int, qs []int8, dsx []float32, nb int) {
	if !accel {
		q8TileGo(y, ldy, w, rb, qs, dsx, nb)
		return
	}
	if nb == 0 {
		for j := range 4 {
			clear(y[j*ldy : j*ldy+4])
		}
		return
	}
	_, _, _, _ = y[3*ldy+3], w[3*rb+nb*blockBytes-1], qs[nb*4*qk-1], dsx[nb*16-1]
	switch {
	case q8MMLA:
		q8TileSMMLA(&y[0], ldy, &w[0], rb, &qs[0], &dsx[0], nb)
	case dotProd:
		q8TileSDOT(&y[0], ldy, &w[0], rb, &qs[0], &dsx[0], nb)
	default:
		q8TileNEON(&y[0], ldy, &w[0], rb, &qs[0], &dsx[0], nb)
	}
}

// dot4 computes y[r] = w_r . x for the four rows w[r*rb:], r < 4, of a
// float weight. The assembly sums the first len(x)&^7 columns, Go the rest.
func dot4(y []float32, w []byte, rb int, typ gguf.TensorType, x []float32) {
	n := len(x) &^ 7
	if !accel || n == 0 {
		dot4Go(y, w, rb, typ, x)
		return
	}
	esize := 2
	if typ == gguf.TensorF32 {
		esize = 4
	}
	_, _ = y[3], w[3*rb+len(x)*esize-1]
	switch typ {
	case gguf.TensorF32:
		dot4F32NEON(&y[0], &w[0], rb, &x[0], n)
	case gguf.TensorF16:
		dot4F16NEON(&y[0], &w[0], rb, &x[0], n)
	case gguf.TensorBF16:
		dot4BF16NEON(&y[0], &w[0], rb, &x[0], n)
	}
	if n < len(x) {
		for r := range 4 {
			y[r] = dotRowGo(y[r], w[r*rb:], typ, x, n)
		}
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

// rope rotates the nHeads heads of one token; see ropeGo.
func rope(x, cos, sin []float32, nHeads int) {
	half := len(cos)
	if !accel || half%4 != 0 {
		ropeGo(x, cos, sin, nHeads)
		return
	}
	_, _ = x[nHeads*2*half-1], sin[half-1]
	ropeNEON(&x[0], &cos[0], &sin[0], nHeads, half)
}

// attnScores sets s[i*sstride+j] = scale * (q_i . k_j) for the nh heads
// q_i = q[i*hd:][:hd] and the nk keys k_j = k[j*kstride:][:hd]. The
// assembly, for hd a multiple of 8, reads each key once per two heads.
func attnScores(s []float32, sstride int, q []float32, hd, nh int, k []float32, kstride, nk int, scale float32) {
	if !accel || hd%8 != 0 {
		attnScoresGo(s, sstride, q, hd, nh, k, kstride, nk, scale)
		return
	}
	_, _, _ = s[(nh-1)*sstride+nk-1], q[nh*hd-1], k[(nk-1)*kstride+hd-1]
	i := 0
	for ; i+2 <= nh; i += 2 {
		attnScores2NEON(&s[i*sstride], sstride*4, &q[i*hd], &k[0], kstride*4, nk, hd, scale)
	}
	if i < nh {
		attnScores1NEON(&s[i*sstride], &q[i*hd], &k[0], kstride*4, nk, hd, scale)
	}
}

// attnAccum computes, for the nh heads i, o_i = o_i*corr[i] + sum over j
// of p[i*pstride+j] * v_j, with o_i = o[i*hd:][:hd] and the nk values
// v_j = v[j*vstride:][:hd]. The assembly, for hd a multiple of 16, reads
// each value once per two heads.
func attnAccum(o []float32, hd, nh int, p []float32, pstride int, v []float32, vstride, nk int, corr []float32) {
	if !accel || hd%16 != 0 {
		attnAccumGo(o, hd, nh, p, pstride, v, vstride, nk, corr)
		return
	}
	_, _, _, _ = o[nh*hd-1], p[(nh-1)*pstride+nk-1], v[(nk-1)*vstride+hd-1], corr[nh-1]
	i := 0
	for ; i+2 <= nh; i += 2 {
		attnAccum2NEON(&o[i*hd], hd*4, &p[i*pstride], pstride*4, &v[0], vstride*4, nk, hd, corr[i], corr[i+1])
	}
	if i < nh {
		attnAccum1NEON(&o[i*hd], &p[i*pstride], &v[0], vstride*4, nk, hd, corr[i])
	}
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

// toF16 converts src to half precision into dst, len(dst) >= len(src):
// FCVTN with round-to-nearest-even (the FPCR's default rounding) for the
// first len(src)&^7 values, Go for the rest, both with the bits of
// quant.F32ToF16.
func toF16(dst []uint16, src []float32) {
	n := 0
	if accel {
		n = len(src) &^ 7
	}
	if n > 0 {
		_ = dst[n-1]
		toF16NEON(&dst[0], &src[0], n)
	}
	toF16Go(dst[n:], src[n:])
}

// memSum returns a checksum of b, reading it with 128-bit loads, 256
// bytes a step; it is the kernel of the memory bandwidth benchmark.
func memSum(b []byte) uint64 {
	n := len(b) &^ 255
	var s uint64
	if accel && n > 0 {
		s = memSumNEON(&b[0], n)
	}
	return s + memSumGo(b[n:])
}
