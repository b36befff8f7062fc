//go:build (amd64 || arm64) && !purego

package simd

import "inferno/gguf"

// The kernels' wrappers on the architectures with assembly: each checks
// the lengths, runs the architecture's kernel (*_amd64.s: AVX2, FMA and
// F16C; *_arm64.s: NEON) where accel is set and the Go reference
// otherwise. What differs by architecture is in kernels_amd64.go and
// kernels_arm64.go: the CPU features, the variants q8MatVecAsm and
// q8TileAsm pick among, the multiples the kernels take (ropeStep,
// accumStep), sumSquares and the half-precision attention kernels. Callers
// of the assembly check every length first; counts are positive.

//go:noescape
func quantizeQ8Asm(qs *int8, qstride int, ds *float32, cx *int32, x *float32, nb int)

//go:noescape
func dot4F32Asm(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func dot4F16Asm(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func dot4BF16Asm(y *float32, w *byte, rb int, x *float32, n int)

//go:noescape
func ropeAsm(x, cos, sin *float32, nHeads, half int)

//go:noescape
func attnScores2Asm(s *float32, sstride int, q *float32, k *float32, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnScores1Asm(s, q, k *float32, kstride, nkeys, hd int, scale float32)

//go:noescape
func attnAccum2Asm(o *float32, ostride int, p *float32, pstride int, v *float32, vstride, nkeys, hd int, corr0, corr1 float32)

//go:noescape
func attnAccum1Asm(o, p, v *float32, vstride, nkeys, hd int, corr float32)

//go:noescape
func toF16Asm(dst *uint16, src *float32, n int)

//go:noescape
func memSumAsm(p *byte, n int) uint64

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
	quantizeQ8Asm(&qs[0], qstride, &ds[0], &cx[0], &x[0], nb)
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
	q8MatVecAsm(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], nb)
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
	q8TileAsm(&y[0], ldy, &w[0], rb, &qs[0], &dsx[0], nb)
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
		dot4F32Asm(&y[0], &w[0], rb, &x[0], n)
	case gguf.TensorF16:
		dot4F16Asm(&y[0], &w[0], rb, &x[0], n)
	case gguf.TensorBF16:
		dot4BF16Asm(&y[0], &w[0], rb, &x[0], n)
	}
	if n < len(x) {
		for r := range 4 {
			y[r] = dotRowGo(y[r], w[r*rb:], typ, x, n)
		}
	}
}

// rope rotates the nHeads heads of one token; see ropeGo.
func rope(x, cos, sin []float32, nHeads int) {
	half := len(cos)
	if !accel || half%ropeStep != 0 {
		ropeGo(x, cos, sin, nHeads)
		return
	}
	_, _ = x[nHeads*2*half-1], sin[half-1]
	ropeAsm(&x[0], &cos[0], &sin[0], nHeads, half)
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
		attnScores2Asm(&s[i*sstride], sstride*4, &q[i*hd], &k[0], kstride*4, nk, hd, scale)
	}
	if i < nh {
		attnScores1Asm(&s[i*sstride], &q[i*hd], &k[0], kstride*4, nk, hd, scale)
	}
}

// attnAccum computes, for the nh heads i, o_i = o_i*corr[i] + sum over j
// of p[i*pstride+j] * v_j, with o_i = o[i*hd:][:hd] and the nk values
// v_j = v[j*vstride:][:hd]. The assembly, for hd a multiple of accumStep,
// reads each value once per two heads.
func attnAccum(o []float32, hd, nh int, p []float32, pstride int, v []float32, vstride, nk int, corr []float32) {
	if !accel || hd%accumStep != 0 {
		attnAccumGo(o, hd, nh, p, pstride, v, vstride, nk, corr)
		return
	}
	_, _, _, _ = o[nh*hd-1], p[(nh-1)*pstride+nk-1], v[(nk-1)*vstride+hd-1], corr[nh-1]
	i := 0
	for ; i+2 <= nh; i += 2 {
		attnAccum2Asm(&o[i*hd], hd*4, &p[i*pstride], pstride*4, &v[0], vstride*4, nk, hd, corr[i], corr[i+1])
	}
	if i < nh {
		attnAccum1Asm(&o[i*hd], &p[i*pstride], &v[0], vstride*4, nk, hd, corr[i])
	}
}

// toF16 converts src to half precision into dst, len(dst) >= len(src):
// the assembly (VCVTPS2PH; FCVTN) with round-to-nearest-even for the first
// len(src)&^7 values, Go for the rest, both with the bits of
// quant.F32ToF16.
func toF16(dst []uint16, src []float32) {
	n := 0
	if accel {
		n = len(src) &^ 7
	}
	if n > 0 {
		_ = dst[n-1]
		toF16Asm(&dst[0], &src[0], n)
	}
	toF16Go(dst[n:], src[n:])
}

// memSum returns a checksum of b, 256 bytes a step of the assembly; it is
// the kernel of the memory bandwidth benchmark.
func memSum(b []byte) uint64 {
	n := len(b) &^ 255
	var s uint64
	if accel && n > 0 {
		s = memSumAsm(&b[0], n)
	}
	return s + memSumGo(b[n:])
}
