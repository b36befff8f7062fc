package simd

import (
	"encoding/binary"
	"math"

	"inferno/gguf"
	"inferno/numfmt"
)

// The legacy block formats other than Q8_0 (Q4_0, Q4_1, Q5_0, Q5_1) and
// the table formats IQ4_NL and MXFP4 (tab.go): blocks of 32 values with a
// scale d (float16, MXFP4's an E8M0 exponent; and a float16 min m for
// Q4_1 and Q5_1), multiplied by activations quantized to blocks of 32
// (Q8_0 activations: int8 values and a float32 scale dx; for the formats
// with a min also sx = dx*float32(sum of the values), ggml's Q8_1).
//
// Per block the exact integer s = sum_i q_i*x_i of the block's values q
// (signed, as decoded below) and the token's int8 values, then
//
//	acc += float32(s)*(d*dx)                   (Q4_0, Q5_0, IQ4_NL, MXFP4: as Q8_0)
//	acc += float32(s)*(d*dx) + m*sx            (Q4_1, Q5_1)
//
// rounding after every operation, blocks in order. dot32 is that
// definition in Go; the kernels reproduce it bit for bit.

// l32Format describes a legacy format to the generic kernels.
type l32Format struct {
	bytes int  // bytes per block
	min   bool // Q4_1 and Q5_1: a min m, and Q8_1 activations
	typ   gguf.TensorType
	tab   *tabFormat // IQ4_NL and MXFP4: levels and scale
}

// decode decodes the block blk into q and returns its scale and min. (A
// switch, not a function value, so that q does not escape.)
func (f *l32Format) decode(q *[32]int8, blk []byte) (d, m float32) {
	switch f.typ {
	case gguf.TensorQ4_0:
		return decodeQ4_0(q, blk)
	case gguf.TensorQ4_1:
		return decodeQ4_1(q, blk)
	case gguf.TensorQ5_0:
		return decodeQ5_0(q, blk)
	case gguf.TensorQ5_1:
		return decodeQ5_1(q, blk)
	case gguf.TensorIQ4_NL, gguf.TensorMXFP4:
		return decodeTab(q, blk, f.tab)
	}
	return decodeQ8_0(q, blk)
}

func decodeQ4_0(q *[32]int8, b []byte) (float32, float32) {
	b = b[:numfmt.BlockQ4_0Bytes]
	for j, v := range b[2:] {
		q[j], q[j+16] = int8(v&0xf)-8, int8(v>>4)-8
	}
	return half(b), 0
}

func decodeQ4_1(q *[32]int8, b []byte) (float32, float32) {
	b = b[:numfmt.BlockQ4_1Bytes]
	for j, v := range b[4:] {
		q[j], q[j+16] = int8(v&0xf), int8(v>>4)
	}
	return half(b), half(b[2:])
}

func decodeQ5_0(q *[32]int8, b []byte) (float32, float32) {
	b = b[:numfmt.BlockQ5_0Bytes]
	qh := binary.LittleEndian.Uint32(b[2:])
	for j, v := range b[6:] {
		q[j] = int8(v&0xf|uint8(qh>>j&1)<<4) - 16
		q[j+16] = int8(v>>4|uint8(qh>>(j+16)&1)<<4) - 16
	}
	return half(b), 0
}

func decodeQ5_1(q *[32]int8, b []byte) (float32, float32) {
	b = b[:numfmt.BlockQ5_1Bytes]
	qh := binary.LittleEndian.Uint32(b[4:])
	for j, v := range b[8:] {
		q[j] = int8(v&0xf | uint8(qh>>j&1)<<4)
		q[j+16] = int8(v>>4 | uint8(qh>>(j+16)&1)<<4)
	}
	return half(b), half(b[2:])
}

func decodeQ8_0(q *[32]int8, b []byte) (float32, float32) {
	b = b[:numfmt.BlockQ8_0Bytes]
	for j, v := range b[2:] {
		q[j] = int8(v)
	}
	return half(b), 0
}

var (
	lQ4_0  = &l32Format{bytes: numfmt.BlockQ4_0Bytes, typ: gguf.TensorQ4_0}
	lQ4_1  = &l32Format{bytes: numfmt.BlockQ4_1Bytes, min: true, typ: gguf.TensorQ4_1}
	lQ5_0  = &l32Format{bytes: numfmt.BlockQ5_0Bytes, typ: gguf.TensorQ5_0}
	lQ5_1  = &l32Format{bytes: numfmt.BlockQ5_1Bytes, min: true, typ: gguf.TensorQ5_1}
	lIQ4NL = &l32Format{bytes: numfmt.BlockIQ4_NLBytes, typ: gguf.TensorIQ4_NL, tab: tabIQ4NL}
	lMXFP4 = &l32Format{bytes: numfmt.BlockMXFP4Bytes, typ: gguf.TensorMXFP4, tab: tabMXFP4}
	lQ8_0  = &l32Format{bytes: numfmt.BlockQ8_0Bytes, typ: gguf.TensorQ8_0}
)

// dot32 is the Go reference of a legacy product: one row of nb blocks
// times one token (values qs, scales ds, and for formats with a min the
// sums sx). See the top of this file.
func dot32(f *l32Format, row []byte, qs []int8, ds, sx []float32, nb int) float32 {
	var q [32]int8
	var acc float32
	for b := range nb {
		d, m := f.decode(&q, row[b*f.bytes:(b+1)*f.bytes])
		x := qs[b*32 : (b+1)*32]
		var s int32
		for i, v := range q {
			s += int32(v) * int32(x[i])
		}
		v := float32(float32(s) * (d * ds[b]))
		if f.min {
			v += float32(m * sx[b])
		}
		acc += v
	}
	return acc
}

// packQ8Go repacks eight rows of rb bytes (nb blocks) of a format without a
// min into the layout of q8Repack8 (values plus 128, transposed by 4-byte
// groups, then the eight scales as float32), for the VNNI kernel.
func packQ8Go(f *l32Format, dst []byte, w []byte, rb, nb int) {
	var q [32]int8
	for b := range nb {
		p := dst[b*packBlockBytes : (b+1)*packBlockBytes]
		for r := range 8 {
			d, _ := f.decode(&q, w[r*rb+b*f.bytes:])
			for k := range 8 {
				for i := range 4 {
					p[k*32+r*4+i] = uint8(q[4*k+i]) + 128
				}
			}
			binary.LittleEndian.PutUint32(p[256+4*r:], math.Float32bits(d))
		}
	}
}
