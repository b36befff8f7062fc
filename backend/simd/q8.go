package simd

import (
	"encoding/binary"
	"math"

	"inferno/numfmt"
)

// Q8_0 block geometry.
const (
	qk         = numfmt.QK8_0          // values per block
	blockBytes = numfmt.BlockQ8_0Bytes // bytes per weight block: f16 scale, 32 int8
)

// The pure-Go Q8_0 kernels. They define the arithmetic the assembly
// reproduces bit for bit: per block an exact int32 dot product s, then
//
//	acc += float32(s) * (dw * dx)
//
// rounding after the product and after the sum (no fused multiply-add),
// blocks in order.

// q8Scale returns a block's 8-bit scale d = max|x|/127 and its inverse
// (0 for a block of zeros), as ggml's Q8_0 and Q8_K quantizers compute them.
func q8Scale(blk []float32) (d, id float32) {
	var amax float32
	for _, v := range blk {
		amax = max(amax, math.Float32frombits(math.Float32bits(v)&^(1<<31)))
	}
	d = amax / 127
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// quantizeQ8Go quantizes len(x)/32 blocks of x: scale d = max|x|/127 into
// ds[b], values round(x/d) (to nearest even) into qs[b*qstride:][:32], and
// -128 times their sum into cx[b] (the correction of the VNNI kernel, which
// multiplies weights offset by 128).
func quantizeQ8Go(qs []int8, qstride int, ds []float32, cx []int32, x []float32) {
	for b := range len(x) / qk {
		blk := x[b*qk : (b+1)*qk]
		d, id := q8Scale(blk)
		ds[b] = d
		q := qs[b*qstride : b*qstride+qk]
		var sum int32
		for j, v := range blk {
			q[j] = int8(math.RoundToEven(float64(v * id)))
			sum += int32(q[j])
		}
		cx[b] = -128 * sum
	}
}

// q8DotGo returns the product of one Q8_0 weight row of nb blocks with one
// quantized token whose block b starts at qs[b*qstride] and has scale
// ds[b*dstride].
func q8DotGo(w []byte, qs []int8, qstride int, ds []float32, dstride int, nb int) float32 {
	var acc float32
	for b := range nb {
		blk := w[b*blockBytes : (b+1)*blockBytes]
		q := qs[b*qstride : b*qstride+qk]
		var s int32
		for j, v := range q {
			s += int32(int8(blk[2+j])) * int32(v)
		}
		dw := numfmt.F16ToF32(binary.LittleEndian.Uint16(blk))
		acc += float32(float32(s) * (dw * ds[b*dstride]))
	}
	return acc
}

// q8MatVecGo computes len(y) rows of rb bytes of w times one token stored
// contiguously (qs, ds).
func q8MatVecGo(y []float32, w []byte, rb int, qs []int8, ds []float32, nb int) {
	for r := range y {
		y[r] = q8DotGo(w[r*rb:], qs, qk, ds, 1, nb)
	}
}

// q8TileGo computes four rows of w times a group of four tokens (qs
// block-interleaved, dsx holding each scale four times), token j's results
// going to y[j*ldy:][:4].
func q8TileGo(y []float32, ldy int, w []byte, rb int, qs []int8, dsx []float32, nb int) {
	for j := range 4 {
		for r := range 4 {
			y[j*ldy+r] = q8DotGo(w[r*rb:], qs[j*qk:], 4*qk, dsx[j*4:], 16, nb)
		}
	}
}
