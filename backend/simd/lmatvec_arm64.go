//go:build arm64 && !purego

package simd

import "inferno/numfmt"

// The legacy and table formats' matrix-vector kernels with SDOT
// (lmatvec_arm64.s): rows of rb bytes times one token, four at a time,
// the bits of dot32. len(y) is a multiple of 8 (matVecFunc); the kernels
// are given len(y) rounded down to a multiple of 4, so that they never
// run past y.

//go:noescape
func q4_0MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, nb int)

//go:noescape
func q5_0MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, nb int)

//go:noescape
func q4_1MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, sx *float32, nb int)

//go:noescape
func q5_1MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, sx *float32, nb int)

//go:noescape
func iq4NLMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, kv *[16]int8, nb int)

//go:noescape
func mxfp4MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, kv *[16]int8, nb int)

// l32MatVecArgs checks the arguments of a legacy matrix-vector kernel for
// rows of rb bytes of nb blocks of bb bytes and returns token t's
// activations.
func l32MatVecArgs(y []float32, w []byte, rb, bb int, a *Acts, t int) (qs []int8, ds []float32, sx []float32) {
	nb := a.nb
	_ = w[(len(y)-1)*rb+nb*bb-1]
	if a.k.act == actQ8_1 {
		sx = a.sx[t*nb : (t+1)*nb]
	}
	return a.qs[t*a.cols : (t+1)*a.cols], a.ds[t*nb : (t+1)*nb], sx
}

func matVecQ4_0(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) >= 4 {
		qs, ds, _ := l32MatVecArgs(y, w, rb, numfmt.BlockQ4_0Bytes, a, t)
		q4_0MatVecNEON(&y[0], &w[0], rb, len(y)&^3, &qs[0], &ds[0], a.nb)
	}
}

func matVecQ5_0(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) >= 4 {
		qs, ds, _ := l32MatVecArgs(y, w, rb, numfmt.BlockQ5_0Bytes, a, t)
		q5_0MatVecNEON(&y[0], &w[0], rb, len(y)&^3, &qs[0], &ds[0], a.nb)
	}
}

func matVecQ4_1(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) >= 4 {
		qs, ds, sx := l32MatVecArgs(y, w, rb, numfmt.BlockQ4_1Bytes, a, t)
		q4_1MatVecNEON(&y[0], &w[0], rb, len(y)&^3, &qs[0], &ds[0], &sx[0], a.nb)
	}
}

func matVecQ5_1(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) >= 4 {
		qs, ds, sx := l32MatVecArgs(y, w, rb, numfmt.BlockQ5_1Bytes, a, t)
		q5_1MatVecNEON(&y[0], &w[0], rb, len(y)&^3, &qs[0], &ds[0], &sx[0], a.nb)
	}
}

func matVecIQ4NL(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) >= 4 {
		qs, ds, _ := l32MatVecArgs(y, w, rb, numfmt.BlockIQ4_NLBytes, a, t)
		iq4NLMatVecNEON(&y[0], &w[0], rb, len(y)&^3, &qs[0], &ds[0], &tabIQ4NL.kv, a.nb)
	}
}

func matVecMXFP4(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) >= 4 {
		qs, ds, _ := l32MatVecArgs(y, w, rb, numfmt.BlockMXFP4Bytes, a, t)
		mxfp4MatVecNEON(&y[0], &w[0], rb, len(y)&^3, &qs[0], &ds[0], &tabMXFP4.kv, a.nb)
	}
}
