//go:build amd64 && !purego

package numfmt

import "golang.org/x/sys/cpu"

// fitAccel reports whether the scale searches run their candidate scales
// eight at a time in AVX2 (fit_amd64.s); tests turn it off to compare
// with the plain Go searches.
var fitAccel = cpu.X86.HasAVX2

// fitSumsAVX2 quantizes the n values xm at each of ngroups*8 candidate
// scales iscale[k] (level clamp(nearest_int(iscale[k]*xm[i]), lo, hi),
// stored as float32 at lbuf[(k/8)*n*8 + i*8 + k%8]) and accumulates, in
// order of i and in float32 as ggml does, for each candidate:
// sums[k] = Σ u[i]*l, sums[24+k] = Σ (w[i]*l)*l, sums[48+k] = Σ (w[i]*l)*x[i].
// ngroups is 1..3, n at least 1.
//
//go:noescape
func fitSumsAVX2(xm, x, u, w *float32, n int, iscale *float32, ngroups int, lo, hi int32, sums, lbuf *float32)

// fitErrAVX2 returns in errs[k], for each of the ngroups*8 candidates of
// fitSumsAVX2 (levels read back from lbuf), Σ w[i]*e(((scale[k]*l)+mn[k])-x[i])
// with e = |.| when mad, squaring otherwise.
//
//go:noescape
func fitErrAVX2(x, w *float32, n int, scale, mn *float32, ngroups int, mad bool, lbuf, errs *float32)

// fitQKX2AVX2 evaluates eight candidates of make_qkx2_quants at once
// (fit_amd64.s): out[k] is the weighted error of candidate k (NaN when
// its D <= 0), out[8+k] its scale, out[16+k] its min.
//
//go:noescape
func fitQKX2AVX2(xm, x, w *float32, n int, num *float32, den, sumW, sumX float32, nmax int32, mad bool, ov *float32, lbuf, out *float32)
