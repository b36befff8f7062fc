//go:build !(amd64 || arm64) || purego

package simd

// The block formats' kernels (matrix-vector products, packing and the
// multi-token tiles) where there are no assembly kernels: the Go versions
// run. kernels_generic.go holds the other kernels' fallbacks.

import "inferno/backend"

// blockAsm reports whether the block formats' assembly kernels run: never
// here.
func blockAsm() bool { return false }

// tileName returns the multi-token kernel k uses: none here.
func tileName(k *typeKernels) string { return "" }

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
