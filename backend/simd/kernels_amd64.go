//go:build amd64 && !purego

package simd

import (
	"golang.org/x/sys/cpu"

	"inferno/gguf"
)

// accel reports whether the AVX2/FMA/F16C assembly kernels run. HasAVX2 is
// only set when the OS saves the YMM registers.
var accel = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// The assembly kernels, in *_amd64.s. Callers check every length first;
// counts are positive.

//go:noescape
func quantizeQ8AVX2(qs *int8, qstride int, ds *float32, cx *int32, x *float32, nb int)

//go:noescape
func q8MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, nb int)

//go:noescape
func q8TileAVX2(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)

//go:noescape
func dot4F32AVX2(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func dot4F16AVX2(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func dot4BF16AVX2(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func sumSqAVX2(x *float32, n int) float32

//go:noescape
func ropeAVX2(x, cos, sin *float32, nHeads, half int)

//go:noescape
func attnScores2AVX2(s *float32, sstride int, q *float32, k *float32, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnScores1AVX2(s, q, k *float32, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnAccum2AVX2(o *float32, ostride int, p *float32, pstride int, v *float32, vstride, nkeys, hd int, corr0, corr1 float32)

//go:noescape
func attnAccum1AVX2(o, p, v *float32, vstride, nkeys, hd int, corr float32)

//go:noescape
func attnScores2F16AVX2(s *float32, sstride int, q *float32, k, v *uint16, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnScores1F16AVX2(s, q *float32, k, v *uint16, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnAccum2F16AVX2(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)

//go:noescape
func attnAccum1F16AVX2(o, p *float32, v *uint16, vstride, nkeys, hd int, corr float32)

//go:noescape
func toF16AVX2(dst *uint16, src *float32, n int)

//go:noescape
func memSumAVX2(p *byte, n int) uint64

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
	quantizeQ8AVX2(&qs[0], qstride, &ds[0], &cx[0], &x[0], nb)
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
	q8MatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], nb)
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
	q8TileAVX2(&y[0], ldy, &w[0], rb, &qs[0], &dsx[0], nb)
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
		dot4F32AVX2(&y[0], &w[0], rb, &x[0], n)
	case gguf.TensorF16:
		dot4F16AVX2(&y[0], &w[0], rb, &x[0], n)
	case gguf.TensorBF16:
		dot4BF16AVX2(&y[0], &w[0], rb, &x[0], n)
	}
	if n < len(x) {
		for r := range 4 {
			y[r] = dotRowGo(y[r], w[r*rb:], typ, x, n)
		}
	}
}

// sumSquares returns the sum of x[i]^2.
func sumSquares(x []float32) float64 {
	n := len(x) &^ 7
	if !accel || n == 0 {
		return sumSquaresGo(x)
	}
	return float64(sumSqAVX2(&x[0], n)) + sumSquaresGo(x[n:])
}

// rope rotates the nHeads heads of one token; see ropeGo.
func rope(x, cos, sin []float32, nHeads int) {
	half := len(cos)
	if !accel || half%8 != 0 {
		ropeGo(x, cos, sin, nHeads)
		return
	}
	_, _ = x[nHeads*2*half-1], sin[half-1]
	ropeAVX2(&x[0], &cos[0], &sin[0], nHeads, half)
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
		attnScores2AVX2(&s[i*sstride], sstride*4, &q[i*hd], &k[0], kstride*4, nk, hd, scale)
	}
	if i < nh {
		attnScores1AVX2(&s[i*sstride], &q[i*hd], &k[0], kstride*4, nk, hd, scale)
	}
}

// attnAccum computes, for the nh heads i, o_i = o_i*corr[i] + sum over j
// of p[i*pstride+j] * v_j, with o_i = o[i*hd:][:hd] and the nk values
// v_j = v[j*vstride:][:hd]. The assembly, for hd a multiple of 32, reads
// each value once per two heads.
func attnAccum(o []float32, hd, nh int, p []float32, pstride int, v []float32, vstride, nk int, corr []float32) {
	if !accel || hd%32 != 0 {
		attnAccumGo(o, hd, nh, p, pstride, v, vstride, nk, corr)
		return
	}
	_, _, _, _ = o[nh*hd-1], p[(nh-1)*pstride+nk-1], v[(nk-1)*vstride+hd-1], corr[nh-1]
	i := 0
	for ; i+2 <= nh; i += 2 {
		attnAccum2AVX2(&o[i*hd], hd*4, &p[i*pstride], pstride*4, &v[0], vstride*4, nk, hd, corr[i], corr[i+1])
	}
	if i < nh {
		attnAccum1AVX2(&o[i*hd], &p[i*pstride], &v[0], vstride*4, nk, hd, corr[i])
	}
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

// toF16 converts src to half precision into dst, len(dst) >= len(src):
// VCVTPS2PH with round-to-nearest-even for the first len(src)&^7 values,
// Go for the rest, both with the bits of quant.F32ToF16.
func toF16(dst []uint16, src []float32) {
	n := 0
	if accel {
		n = len(src) &^ 7
	}
	if n > 0 {
		_ = dst[n-1]
		toF16AVX2(&dst[0], &src[0], n)
	}
	toF16Go(dst[n:], src[n:])
}

// memSum returns a checksum of b, reading it with 256-bit loads; it is the
// kernel of the memory bandwidth benchmark.
func memSum(b []byte) uint64 {
	n := len(b) &^ 255
	var s uint64
	if accel && n > 0 {
		s = memSumAVX2(&b[0], n)
	}
	return s + memSumGo(b[n:])
}
