//go:build !(amd64 || arm64) || purego

package simd

import "inferno/gguf"

// accel is false: there are no assembly kernels on this architecture or
// with the purego build tag, and every kernel runs its Go version
// (blocks_generic.go: the block formats' kernels).
const accel = false

// q8Kernels is never reached without assembly kernels (Kernels checks
// accel): Q8_0 takes no repacking and no multi-token kernel.
func q8Kernels() (pack bool, tile string) { return false, "" }

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
