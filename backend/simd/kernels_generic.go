//go:build !amd64 || purego

package simd

import (
	"inferno/backend"
	"inferno/gguf"
)

// accel is false: there are no assembly kernels on this architecture or
// with the purego build tag, and every kernel runs its Go version.
const accel = false

func quantizeQ8(qs []int8, qstride int, ds []float32, cx []int32, x []float32) {
	quantizeQ8Go(qs, qstride, ds, cx, x)
}

func q8MatVec(y []float32, w []byte, rb int, qs []int8, ds []float32, nb int) {
	q8MatVecGo(y, w, rb, qs, ds, nb)
}

func q8Tile(y []float32, ldy int, w []byte, rb int, qs []int8, dsx []float32, nb int) {
	q8TileGo(y, ldy, w, rb, qs, dsx, nb)
}

func dot4(y []float32, w []byte, rb int, typ gguf.TensorType, x []float32) {
	dot4Go(y, w, rb, typ, x)
}

func sumSquares(x []float32) float64 { return sumSquaresGo(x) }

func scaleMul(y, x, g []float32, s float32) { scaleMulGo(y, x, g, s) }

func add(x, y []float32) { addGo(x, y) }

func swiglu(out, gate, up []float32) { swigluGo(out, gate, up) }

func geglu(out, gate, up []float32) { gegluGo(out, gate, up) }

func swigluOAI(out, gate, up []float32) { swigluOAIGo(out, gate, up) }

func expSub(p, s []float32, m float32) float32 { return expSubGo(p, s, m) }

func rope(x, cos, sin []float32, nHeads int) { ropeGo(x, cos, sin, nHeads) }

func attnScores(s []float32, sstride int, q []float32, hd, nh int, k []float32, kstride, nk int, scale float32) {
	attnScoresGo(s, sstride, q, hd, nh, k, kstride, nk, scale)
}

func attnAccum(o []float32, hd, nh int, p []float32, pstride int, v []float32, vstride, nk int, corr []float32) {
	attnAccumGo(o, hd, nh, p, pstride, v, vstride, nk, corr)
}

func attnScoresF16(s []float32, sstride int, q []float32, hd, nh int, k, v []uint16, kstride, nk int, scale float32) {
	attnScoresF16Go(s, sstride, q, hd, nh, k, kstride, nk, scale)
}

func attnAccumF16(o []float32, hd, nh int, p []float32, pstride int, v []uint16, vstride, nk int, corr []float32) {
	attnAccumF16Go(o, hd, nh, p, pstride, v, vstride, nk, corr)
}

func toF16(dst []uint16, src []float32) { toF16Go(dst, src) }

func memSum(b []byte) uint64 { return memSumGo(b) }

// vnni is false: see vnni_amd64.go.
const vnni = false

// matMulQ8VNNI is never called without VNNI kernels.
func (o *Ops) matMulQ8VNNI(y []float32, w *backend.Weight, a *Acts, r0, r1 int) {
	matMulQ8(y, w, a, r0, r1)
}

// packBlockBytes is the size of one block of a repacked Q8_0 tile; see
// vnni_amd64.go.
const packBlockBytes = 8*32 + 8*4

// The table's assembly kernels do not exist here.
var (
	matVecQ4_0, matVecQ5_0, matVecIQ4NL, matVecMXFP4, matVecQ4_1, matVecQ5_1 matVecFunc
	matVecQ2K, matVecQ3K, matVecQ4K, matVecQ5K, matVecQ6K, matVecIQ4XS       matVecFunc
	packQ4_0, packQ5_0, packIQ4NL, packMXFP4, packQ2K, packQ3K, packQ4K      packFunc
	packQ5K, packQ6K, packIQ4XS                                              packFunc
)

func quantizeQ8K(qs []int8, ds []float32, bs []int16, x []float32) { quantizeQ8KGo(qs, ds, bs, x) }

func q8VNNI8x4(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int) {
	panic("simd: no VNNI kernels")
}

func q8VNNI16x8(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int, pf []byte, pfs int) {
	panic("simd: no VNNI kernels")
}

func q8VNNI16x4(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int, pf []byte, pfs int) {
	panic("simd: no VNNI kernels")
}

func kTile(y []float32, ldy int, f *kFormat, pack []byte, qs []int8, qstride int, ds []float32, bs []int16, nb int, vnni bool) {
	panic("simd: no tile kernels")
}

func kTileWide(y []float32, ldy int, f *kFormat, pack []byte, qs []int8, qstride int, ds []float32, bs []int16, nb int) {
	panic("simd: no tile kernels")
}
