//go:build amd64 && !purego

package simd

import (
	"golang.org/x/sys/cpu"

	"inferno/backend"
)

// vnni reports whether the AVX-512 kernels run rather than the AVX2 ones:
// the multi-token products' VNNI tiles (VPDPBUSD on 256-bit and 512-bit
// vectors: vnni_amd64.s, q8z_amd64.s, ktile*_amd64.s) and the Q4_K and
// Q6_K matrix-vector kernels on 512-bit vectors (kzmm_amd64.s). The integer block sums are exact either way and the
// float operations the same, so the results are bitwise identical.
var vnni = accel && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW

// packBlockBytes is the size of one block of a repacked tile of eight
// rows: eight vectors of the rows' 4-byte groups k, then eight float32
// scales.
const packBlockBytes = 8*32 + 8*4

//go:noescape
func q8Repack8AVX2(dst *byte, w *byte, rb int, nb int, vs int)

//go:noescape
func q8VNNI8x4AVX512(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, cx *int32, dstride int, nb int)

// q8Repack8 repacks eight Q8_0 rows of rb bytes (nb blocks) into dst: per
// block, vector k holds bytes 4k..4k+3 of each row, plus 128, then the rows'
// scales as float32.
func q8Repack8(dst []byte, w []byte, rb, nb int) {
	_, _ = dst[nb*packBlockBytes-1], w[7*rb+nb*blockBytes-1]
	q8Repack8AVX2(&dst[0], &w[0], rb, nb, 32)
}

// q8VNNI8x4 multiplies a repacked tile of eight rows by four contiguous
// tokens, qstride values apart (their scales and corrections nb apart),
// token j's eight results going to y[j*ldy:][:8].
func q8VNNI8x4(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int) {
	_, _, _, _, _ = y[3*ldy+7], pack[nb*packBlockBytes-1], qs[3*qstride+nb*qk-1], ds[3*nb+nb-1], cx[3*nb+nb-1]
	q8VNNI8x4AVX512(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &cx[0], nb, nb)
}

// q8Repack16 repacks sixteen Q8_0 rows into the tile of q8VNNI16x8: the
// tiles of rows 0..7 and 8..15 interleaved by 32-byte pieces, so that a
// 64-byte vector holds one piece of each.
func q8Repack16(dst []byte, w []byte, rb, nb int) {
	_, _ = dst[nb*2*packBlockBytes-1], w[15*rb+nb*blockBytes-1]
	q8Repack8AVX2(&dst[0], &w[0], rb, nb, 64)
	q8Repack8AVX2(&dst[32], &w[8*rb], rb, nb, 64)
}

// q8VNNI16x8 multiplies a tile of sixteen rows (two repacked tiles of
// eight, interleaved by 32-byte pieces) by eight contiguous tokens,
// qstride values apart (their scales and corrections nb apart), token j's
// sixteen results going to y[j*ldy:][:16]. Meanwhile it prefetches the
// weight rows that come next: pf (it may be empty), pfs bytes a block.
func q8VNNI16x8(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int, pf []byte, pfs int) {
	_, _, _, _, _ = y[7*ldy+15], pack[nb*2*packBlockBytes-1], qs[7*qstride+nb*qk-1], ds[7*nb+nb-1], cx[7*nb+nb-1]
	p := &pack[0] // a prefetch never faults, but the pointer must be one
	if len(pf) > 0 {
		p = &pf[0]
	}
	q8VNNI16x8AVX512(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &cx[0], nb, nb, p, pfs)
}

// q8VNNI16x4 is q8VNNI16x8 for four tokens.
func q8VNNI16x4(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int, pf []byte, pfs int) {
	_, _, _, _, _ = y[3*ldy+15], pack[nb*2*packBlockBytes-1], qs[3*qstride+nb*qk-1], ds[3*nb+nb-1], cx[3*nb+nb-1]
	p := &pack[0]
	if len(pf) > 0 {
		p = &pf[0]
	}
	q8VNNI16x4AVX512(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &cx[0], nb, nb, p, pfs)
}

// matMulQ8VNNI computes rows r0..r1-1 for Q8_0 weights with the AVX-512
// VNNI kernels: each tile of sixteen rows (then of eight) is repacked once
// (transposed by 4-byte groups, offset to unsigned, scales to float32) and
// multiplied by every token, eight or four at a time, with no horizontal
// sums; leftover tokens go to the matrix-vector kernel, leftover rows to
// Go. The bits are those of the other kernels.
func (o *Ops) matMulQ8VNNI(y []float32, w *backend.Weight, a *Acts, r0, r1 int) {
	rows, cols, nb, n := w.Rows, w.Cols, a.nb, a.n
	rb := nb * blockBytes
	r := r0
	if r+16 <= r1 {
		o.pack16 = grow(o.pack16, nb*2*packBlockBytes)
	}
	for ; r+16 <= r1; r += 16 {
		q8Repack16(o.pack16, w.Data[r*rb:(r+16)*rb], rb, nb)
		for t := o.q8Tile16(y[r:], rows, a, w.Data[(r+16)*rb:], rb); t < n; t++ {
			q8MatVec(y[t*rows+r:t*rows+r+16], w.Data[r*rb:(r+16)*rb], rb, a.qs[t*cols:(t+1)*cols], a.ds[t*nb:(t+1)*nb], nb)
		}
	}
	o.pack = grow(o.pack, nb*packBlockBytes)
	for ; r+8 <= r1; r += 8 {
		q8Repack8(o.pack, w.Data[r*rb:(r+8)*rb], rb, nb)
		t := 0
		for ; t+4 <= n; t += 4 {
			q8VNNI8x4(y[t*rows+r:], rows, o.pack, a.qs[t*cols:(t+4)*cols], cols, a.ds[t*nb:(t+4)*nb], a.cx[t*nb:(t+4)*nb], nb)
		}
		for ; t < n; t++ {
			q8MatVec(y[t*rows+r:t*rows+r+8], w.Data[r*rb:(r+8)*rb], rb, a.qs[t*cols:(t+1)*cols], a.ds[t*nb:(t+1)*nb], nb)
		}
	}
	for ; r < r1; r++ {
		row := w.Data[r*rb : (r+1)*rb]
		for t := range n {
			y[t*rows+r] = q8DotGo(row, a.qs[t*cols:], qk, a.ds[t*nb:], 1, nb)
		}
	}
}

//go:noescape
func q8VNNI16x8AVX512(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, cx *int32, dstride int, nb int, pf *byte, pfs int)

//go:noescape
func q8VNNI16x4AVX512(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, cx *int32, dstride int, nb int, pf *byte, pfs int)
