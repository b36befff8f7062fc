//go:build arm64 && !purego

package simd

import "inferno/numfmt"

// The K-quants' and IQ4_XS's matrix-vector kernels with SDOT, and the Q8_K
// quantizer (kquant_arm64.s): the bits of dotK and quantizeQ8KGo.

//go:noescape
func q2KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)

//go:noescape
func q3KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)

//go:noescape
func q4KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)

//go:noescape
func q5KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)

//go:noescape
func q6KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)

//go:noescape
func iq4XSMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, kv *[16]int8, nb int)

//go:noescape
func quantizeQ8KNEON(qs *int8, ds *float32, bs *int16, x *float32, nb int)

// quantizeQ8K quantizes len(x)/256 blocks of x to Q8_K; see quantizeQ8KGo.
func quantizeQ8K(qs []int8, ds []float32, bs []int16, x []float32) {
	nb := len(x) / qkK
	if !blockAccel || nb == 0 {
		quantizeQ8KGo(qs, ds, bs, x)
		return
	}
	_, _, _ = qs[nb*qkK-1], ds[nb-1], bs[nb*bsK-1]
	quantizeQ8KNEON(&qs[0], &ds[0], &bs[0], &x[0], nb)
}

// kMatVecArgs checks the arguments of a K matrix-vector kernel for rows
// of rb bytes of nb super-blocks of bb bytes and returns token t's
// activations.
func kMatVecArgs(y []float32, w []byte, rb, bb int, a *Acts, t int) (qs []int8, ds []float32, bs []int16) {
	nb := a.nb
	_ = w[(len(y)-1)*rb+nb*bb-1]
	return a.qs[t*a.cols : (t+1)*a.cols], a.ds[t*nb : (t+1)*nb], a.bs[t*nb*bsK : (t+1)*nb*bsK]
}

func matVecQ2K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ2_KBytes, a, t)
		q2KMatVecNEON(&y[0], &w[0], rb, len(y), &qs[0], &ds[0], &bs[0], a.nb)
	}
}

func matVecQ3K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ3_KBytes, a, t)
		q3KMatVecNEON(&y[0], &w[0], rb, len(y), &qs[0], &ds[0], &bs[0], a.nb)
	}
}

func matVecQ4K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ4_KBytes, a, t)
		q4KMatVecNEON(&y[0], &w[0], rb, len(y), &qs[0], &ds[0], &bs[0], a.nb)
	}
}

func matVecQ5K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ5_KBytes, a, t)
		q5KMatVecNEON(&y[0], &w[0], rb, len(y), &qs[0], &ds[0], &bs[0], a.nb)
	}
}

func matVecQ6K(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, bs := kMatVecArgs(y, w, rb, numfmt.BlockQ6_KBytes, a, t)
		q6KMatVecNEON(&y[0], &w[0], rb, len(y), &qs[0], &ds[0], &bs[0], a.nb)
	}
}

func matVecIQ4XS(y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, _ := kMatVecArgs(y, w, rb, numfmt.BlockIQ4_XSBytes, a, t)
		iq4XSMatVecNEON(&y[0], &w[0], rb, len(y), &qs[0], &ds[0], &tabIQ4NL.kv, a.nb)
	}
}
