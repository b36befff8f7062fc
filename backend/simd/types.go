package simd

import (
	"inferno/gguf"
)

// The one table of the weight types this backend computes with (ggml's
// type_traits, CPU side): for each type the activation format its
// products take and its kernels. The formats themselves (block layouts,
// dequantization) are package numfmt's.
//
// Every type has a Go reference, the product of one row with one token
// (dotK for the K-quants, dot32 for the legacy formats, q8DotGo for Q8_0,
// dot4Go for the float types), which defines the bits. The assembly
// kernels reproduce it exactly:
//
//   - matVec: rows (8 at a time) times one token, reading the weights in
//     their file encoding (decode and single-sequence products);
//   - pack + tile: eight rows unpacked once into a tile (kPackBytes for the
//     K-quants, packBlockBytes for the Q8_0-like formats), multiplied by
//     four tokens at a time (prompts and batches). The K tile has an AVX2
//     kernel and AVX-512 VNNI ones (eight rows on 256-bit vectors, and
//     sixteen, two tiles interleaved, on 512-bit vectors, which runs
//     wherever VNNI does); the Q8_0-like tile VNNI ones (sixteen rows,
//     two tiles interleaved, by eight or four tokens on 512-bit vectors,
//     prefetching the next sixteen rows; eight rows by four tokens on
//     256-bit vectors for the rows left).
//
// A nil assembly field means the Go version runs: the Go reference per row
// for matVec, the Go packer for pack; a type without a tile multiplies
// several tokens with matVec, one token at a time over row chunks that stay
// in cache.

// actKind is the format activations are quantized to for a product.
type actKind uint8

const (
	actF32  actKind = iota // the float32 activations themselves
	actQ8_0                // blocks of 32: int8 values, float32 scale, -128*sum
	actQ8_1                // actQ8_0, and scale*sum per block
	actQ8K                 // blocks of 256: int8 values, float32 scale, int16 sums of 16 and 32
)

// tileKind is the multi-token kernel of a type.
type tileKind uint8

const (
	tileNone tileKind = iota // matVec token by token
	tileK                    // the K tile (kPackBytes), AVX2 or VNNI
	tileQ8                   // the Q8_0 tile (packBlockBytes), VNNI
)

// matVecFunc computes len(y) rows, a multiple of 8, of rb bytes each from
// w, times token t of a.
type matVecFunc func(y []float32, w []byte, rb int, a *Acts, t int)

// packFunc packs eight rows of rb bytes, nb blocks each, into dst.
type packFunc func(dst, w []byte, rb, nb int)

// typeKernels is a weight type's entry in the table.
type typeKernels struct {
	act    actKind
	k      *kFormat   // K-quants and IQ4_XS: Go reference, decoder, packed tile
	l      *l32Format // legacy formats: Go reference and decoder
	matVec matVecFunc // assembly matrix-vector kernel, or nil
	pack   packFunc   // assembly packer for the tile, or nil
	tile   tileKind
}

var table = [...]*typeKernels{
	gguf.TensorF32:  {act: actF32},
	gguf.TensorF16:  {act: actF32},
	gguf.TensorBF16: {act: actF32},

	gguf.TensorQ8_0:   {act: actQ8_0, l: lQ8_0, tile: tileQ8}, // its own kernels: q8.go
	gguf.TensorQ4_0:   {act: actQ8_0, l: lQ4_0, matVec: matVecQ4_0, pack: packQ4_0, tile: tileQ8},
	gguf.TensorQ5_0:   {act: actQ8_0, l: lQ5_0, matVec: matVecQ5_0, pack: packQ5_0, tile: tileQ8},
	gguf.TensorIQ4_NL: {act: actQ8_0, l: lIQ4NL, matVec: matVecIQ4NL, pack: packIQ4NL, tile: tileQ8},
	gguf.TensorMXFP4:  {act: actQ8_0, l: lMXFP4, matVec: matVecMXFP4, pack: packMXFP4, tile: tileQ8},
	gguf.TensorQ4_1:   {act: actQ8_1, l: lQ4_1, matVec: matVecQ4_1},
	gguf.TensorQ5_1:   {act: actQ8_1, l: lQ5_1, matVec: matVecQ5_1},

	gguf.TensorQ2_K:   {act: actQ8K, k: kQ2K, matVec: matVecQ2K, pack: packQ2K, tile: tileK},
	gguf.TensorQ3_K:   {act: actQ8K, k: kQ3K, matVec: matVecQ3K, pack: packQ3K, tile: tileK},
	gguf.TensorQ4_K:   {act: actQ8K, k: kQ4K, matVec: matVecQ4K, pack: packQ4K, tile: tileK},
	gguf.TensorQ5_K:   {act: actQ8K, k: kQ5K, matVec: matVecQ5K, pack: packQ5K, tile: tileK},
	gguf.TensorQ6_K:   {act: actQ8K, k: kQ6K, matVec: matVecQ6K, pack: packQ6K, tile: tileK},
	gguf.TensorIQ4_XS: {act: actQ8K, k: kIQ4XS, matVec: matVecIQ4XS, pack: packIQ4XS, tile: tileK},
}

// kernelsOf returns t's entry, or nil if the backend cannot compute with t.
func kernelsOf(t gguf.TensorType) *typeKernels {
	if uint64(t) >= uint64(len(table)) {
		return nil
	}
	return table[t]
}

// Supports reports whether the backend computes with weights of type t.
func Supports(t gguf.TensorType) bool { return kernelsOf(t) != nil }

// Supports reports whether MatMul computes with weights of type t.
func (o *Ops) Supports(t gguf.TensorType) bool { return Supports(t) }

// Kernels describes, for reports and tests, the kernels type t runs on this
// CPU: whether its matrix-vector and packing kernels are assembly, and
// which multi-token kernel it uses ("vnni" or "avx2" on amd64, "i8mm" or
// "sdot" on arm64, "" for none).
func Kernels(t gguf.TensorType) (matVecAsm, packAsm bool, tile string) {
	k := kernelsOf(t)
	if k == nil {
		return false, false, ""
	}
	if k.act != actF32 && t != gguf.TensorQ8_0 {
		if !blockAsm() {
			return false, false, ""
		}
		return k.matVec != nil, k.pack != nil, tileName(k)
	}
	if !accel {
		return false, false, ""
	}
	if k.act == actF32 {
		return true, false, "" // dot4: four rows at a time, token by token
	}
	pack, tile := q8Kernels()
	return true, pack, tile
}
