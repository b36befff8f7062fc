//go:build !amd64 || purego

package numfmt

var fitAccel = false

func fitSumsAVX2(xm, x, u, w *float32, n int, iscale *float32, ngroups int, lo, hi int32, sums, lbuf *float32) {
	panic("unreachable")
}

func fitErrAVX2(x, w *float32, n int, scale, mn *float32, ngroups int, mad bool, lbuf, errs *float32) {
	panic("unreachable")
}

func fitQKX2AVX2(xm, x, w *float32, n int, num *float32, den, sumW, sumX float32, nmax int32, mad bool, ov *float32, lbuf, out *float32) {
	panic("unreachable")
}
