//go:build amd64 && !purego

package simd

import "inferno/numfmt"

// blockAsm reports whether the block formats' assembly kernels run: with
// the other kernels.
func blockAsm() bool { return accel }

// q8Kernels reports, for Kernels, whether Q8_0 weights are repacked and
// which multi-token kernel they take: the VNNI tiles over packed rows, or
// AVX2's over the file's layout.
func q8Kernels() (pack bool, tile string) {
	if vnni {
		return true, "vnni"
	}
	return false, "avx2"
}

// tileName returns the multi-token kernel k uses on this CPU.
func tileName(k *typeKernels) string {
	switch {
	case !accel:
		return ""
	case k.tile == tileK && vnni:
		return "vnni"
	case k.tile == tileK && k.k.off < 64: // the AVX2 tile's int16 pairs hold (q+off)*x
		return "avx2"
	case k.tile == tileQ8 && vnni:
		return "vnni"
	}
	return ""
}

//go:noescape
func quantizeQ8KAVX2(qs *int8, ds *float32, bs *int16, x *float32, nb int)

// quantizeQ8K quantizes len(x)/256 blocks of x to Q8_K; see quantizeQ8KGo.
func quantizeQ8K(qs []int8, ds []float32, bs []int16, x []float32) {
	nb := len(x) / qkK
	if !accel || nb == 0 {
		quantizeQ8KGo(qs, ds, bs, x)
		return
	}
	_, _, _ = qs[nb*qkK-1], ds[nb-1], bs[nb*bsK-1]
	quantizeQ8KAVX2(&qs[0], &ds[0], &bs[0], &x[0], nb)
}

//go:noescape
func kTile32VNNI(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)

//go:noescape
func kTile32AVX2(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)

//go:noescape
func kTile16AVX2(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)

//go:noescape
func kTile16VNNI(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)

// kTile multiplies eight packed rows by four tokens qstride values apart
// (scales nb apart, sums nb*bsK apart), token j's results going to
// y[j*ldy:][:8]: the VNNI kernel (vnni) or the AVX2 one; see kTileGo.
func kTile(y []float32, ldy int, f *kFormat, pack []byte, qs []int8, qstride int, ds []float32, bs []int16, nb int, vnni bool) {
	_, _, _, _, _ = y[3*ldy+7], pack[nb*kPackBytes(f.nsub)-1], qs[3*qstride+nb*qkK-1], ds[4*nb-1], bs[4*nb*bsK-1]
	mn := 0
	if f.min {
		mn = 1
	}
	switch {
	case !vnni && f.off >= 64:
		kTileGo(y, ldy, f, pack, qs, qstride, ds, bs, nb)
	case !vnni && f.nsub == 8:
		kTile32AVX2(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &bs[0], nb, mn)
	case !vnni:
		kTile16AVX2(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &bs[0], nb, mn)
	case f.nsub == 8:
		kTile32VNNI(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &bs[0], nb, mn)
	default:
		kTile16VNNI(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &bs[0], nb, mn)
	}
}

//go:noescape
func kTile32ZMM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)

//go:noescape
func kTile16ZMM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)

// kTileWide multiplies sixteen packed rows (two tiles interleaved, see
// Ops.packRows16) by four tokens qstride values apart, token j's results
// going to y[j*ldy:][:16], with the AVX-512 kernels; the bits are kTile's.
func kTileWide(y []float32, ldy int, f *kFormat, pack []byte, qs []int8, qstride int, ds []float32, bs []int16, nb int) {
	_, _, _, _, _ = y[3*ldy+15], pack[2*nb*kPackBytes(f.nsub)-1], qs[3*qstride+nb*qkK-1], ds[4*nb-1], bs[4*nb*bsK-1]
	mn := 0
	if f.min {
		mn = 1
	}
	if f.nsub == 8 {
		kTile32ZMM(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &bs[0], nb, mn)
		return
	}
	kTile16ZMM(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &bs[0], nb, mn)
}

//go:noescape
func q4KMatVecZMM(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

//go:noescape
func q4KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

// kMatVecArgs checks the arguments of a K matrix-vector kernel for rows
// of rb bytes of nb super-blocks of bb bytes and returns token t's
// activations.
func kMatVecArgs(y []float32, w []byte, rb, bb int, a *Acts, t int) (qs []int8, ds []float32, bs []int16) {
	nb := a.nb
	_ = w[(len(y)-1)*rb+nb*bb-1]
	return a.qs[t*a.cols : (t+1)*a.cols], a.ds[t*nb : (t+1)*nb], a.bs[t*nb*bsK : (t+1)*nb*bsK]
}

func matVecQ4K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) == 0 {
		return
	}
	qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ4_KBytes, a, t)
	if vnni {
		q4KMatVecZMM(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
		return
	}
	q4KMatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
}

//go:noescape
func q6KMatVecZMM(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

//go:noescape
func q6KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

func matVecQ6K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) == 0 {
		return
	}
	qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ6_KBytes, a, t)
	if vnni {
		q6KMatVecZMM(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
		return
	}
	q6KMatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
}

//go:noescape
func packQ4KAVX2(dst, w *byte, rb, nb int)

//go:noescape
func packQ6KAVX2(dst, w *byte, rb, nb int)

// kPackArgs checks the arguments of a K packer.
func kPackArgs(dst, w []byte, rb, bb, nb, nsub int) {
	_, _ = dst[nb*kPackBytes(nsub)-1], w[7*rb+nb*bb-1]
}

func packQ4K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ4_KBytes, nb, 8)
	packQ4KAVX2(&dst[0], &w[0], rb, nb)
}

func packQ6K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ6_KBytes, nb, 16)
	packQ6KAVX2(&dst[0], &w[0], rb, nb)
}

//go:noescape
func q4_0MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, cx *int32, nb int)

//go:noescape
func q5_0MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, cx *int32, nb int)

//go:noescape
func q4_1MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, sx *float32, nb int)

//go:noescape
func q5_1MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, sx *float32, nb int)

// l32MatVecArgs checks the arguments of a legacy matrix-vector kernel for
// rows of rb bytes of nb blocks of bb bytes and returns token t's
// activations.
func l32MatVecArgs(y []float32, w []byte, rb, bb int, a *Acts, t int) (qs []int8, ds []float32, cx []int32, sx []float32) {
	nb := a.nb
	_ = w[(len(y)-1)*rb+nb*bb-1]
	if a.k.act == actQ8_1 {
		sx = a.sx[t*nb : (t+1)*nb]
	}
	return a.qs[t*a.cols : (t+1)*a.cols], a.ds[t*nb : (t+1)*nb], a.cx[t*nb : (t+1)*nb], sx
}

func matVecQ4_0(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, cx, _ := l32MatVecArgs(y, w, rb, numfmt.BlockQ4_0Bytes, a, t)
		q4_0MatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &cx[0], a.nb)
	}
}

func matVecQ5_0(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, cx, _ := l32MatVecArgs(y, w, rb, numfmt.BlockQ5_0Bytes, a, t)
		q5_0MatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &cx[0], a.nb)
	}
}

func matVecQ4_1(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, _, sx := l32MatVecArgs(y, w, rb, numfmt.BlockQ4_1Bytes, a, t)
		q4_1MatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &sx[0], a.nb)
	}
}

func matVecQ5_1(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, _, sx := l32MatVecArgs(y, w, rb, numfmt.BlockQ5_1Bytes, a, t)
		q5_1MatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &sx[0], a.nb)
	}
}

//go:noescape
func packQ4_0AVX2(dst, w *byte, rb, nb int)

//go:noescape
func packQ5_0AVX2(dst, w *byte, rb, nb int)

func packQ4_0(dst, w []byte, rb, nb int) {
	_, _ = dst[nb*packBlockBytes-1], w[7*rb+nb*numfmt.BlockQ4_0Bytes-1]
	packQ4_0AVX2(&dst[0], &w[0], rb, nb)
}

func packQ5_0(dst, w []byte, rb, nb int) {
	_, _ = dst[nb*packBlockBytes-1], w[7*rb+nb*numfmt.BlockQ5_0Bytes-1]
	packQ5_0AVX2(&dst[0], &w[0], rb, nb)
}

//go:noescape
func q5KMatVecVNNI(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

//go:noescape
func q5KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

func matVecQ5K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) == 0 {
		return
	}
	qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ5_KBytes, a, t)
	if vnni {
		q5KMatVecVNNI(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
		return
	}
	q5KMatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
}

//go:noescape
func packQ5KAVX2(dst, w *byte, rb, nb int)

func packQ5K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ5_KBytes, nb, 8)
	packQ5KAVX2(&dst[0], &w[0], rb, nb)
}

//go:noescape
func q2KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

func matVecQ2K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) == 0 {
		return
	}
	qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ2_KBytes, a, t)
	q2KMatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
}

//go:noescape
func q3KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

func matVecQ3K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) == 0 {
		return
	}
	qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ3_KBytes, a, t)
	q3KMatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
}

//go:noescape
func iq4XSMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)

func matVecIQ4XS(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) == 0 {
		return
	}
	qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockIQ4_XSBytes, a, t)
	iq4XSMatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &bs[0], a.nb, kPrefetch(rb))
}

//go:noescape
func packQ2KAVX2(dst, w *byte, rb, nb int)

func packQ2K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ2_KBytes, nb, 16)
	packQ2KAVX2(&dst[0], &w[0], rb, nb)
}

//go:noescape
func packQ3KAVX2(dst, w *byte, rb, nb int)

func packQ3K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ3_KBytes, nb, 16)
	packQ3KAVX2(&dst[0], &w[0], rb, nb)
}

//go:noescape
func packIQ4XSAVX2(dst, w *byte, rb, nb int)

func packIQ4XS(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockIQ4_XSBytes, nb, 8)
	packIQ4XSAVX2(&dst[0], &w[0], rb, nb)
}

// kPrefetch returns how far ahead the K matrix-vector kernels prefetch:
// each group of eight rows, rb bytes each, prefetches the rows kPrefetch
// bytes after its own start as it reads its blocks, a whole number of
// groups, about kPrefetchBytes (at least the next group).
func kPrefetch(rb int) int {
	g := max(1, (kPrefetchBytes+4*rb)/(8*rb))
	return g * 8 * rb
}

const kPrefetchBytes = 4 << 10
