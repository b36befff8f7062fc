package numfmt

import (
	"encoding/binary"
	"math"
)

// The legacy block formats: 32 values per block, one F16 scale (and for
// the _1 types an F16 offset), ggml's block_q4_0 .. block_q8_1. Every
// multi-byte field is little-endian. In each block the values pair up as
// j and j+16: a byte of qs holds value j in its low nibble and value j+16
// in its high nibble.
const (
	QK4_0 = 32 // values per Q4_0 block
	QK4_1 = 32 // values per Q4_1 block
	QK5_0 = 32 // values per Q5_0 block
	QK5_1 = 32 // values per Q5_1 block
	QK8_0 = 32 // values per Q8_0 block
	QK8_1 = 32 // values per Q8_1 block

	// BlockQ4_0Bytes: d F16 at 0, qs[16] at 2; value = d*(q-8), q in 0..15.
	BlockQ4_0Bytes = 2 + QK4_0/2
	// BlockQ4_1Bytes: d F16 at 0, m F16 at 2, qs[16] at 4; value = d*q + m.
	BlockQ4_1Bytes = 4 + QK4_1/2
	// BlockQ5_0Bytes: d F16 at 0, qh uint32 at 2 (bit j: the fifth bit of
	// value j), qs[16] at 6 (low four bits); value = d*(q-16), q in 0..31.
	BlockQ5_0Bytes = 2 + 4 + QK5_0/2
	// BlockQ5_1Bytes: d F16 at 0, m F16 at 2, qh uint32 at 4, qs[16] at 8;
	// value = d*q + m, q in 0..31.
	BlockQ5_1Bytes = 4 + 4 + QK5_1/2
	// BlockQ8_0Bytes: d F16 at 0, qs[32] int8 at 2, one per value in
	// order; value = d*q.
	BlockQ8_0Bytes = 2 + QK8_0
	// BlockQ8_1Bytes: d F16 at 0, s F16 at 2 (d times the sum of the
	// quants), qs[32] int8 at 4; value = d*q. An activation format.
	BlockQ8_1Bytes = 4 + QK8_1
)

// absMax finds the value of largest magnitude as ggml's legacy quantizers
// do: the first one of largest |v| (NaN never wins).
func absMax(x []float32) (amax, vmax float32) {
	for _, v := range x {
		if a := fabsf(v); amax < a {
			amax, vmax = a, v
		}
	}
	return amax, vmax
}

// minMax is ggml's min/max scan starting from FLT_MAX and -FLT_MAX.
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// inv is ggml's `d ? 1.0f/d : 0.0f`.
func inv(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

// quantizeQ4_0 is quantize_row_q4_0_ref.
func quantizeQ4_0(dst []byte, src []float32) {
	nb := len(src) / QK4_0
	dst = need(dst, nb*BlockQ4_0Bytes)
	for i := range nb {
		x := src[i*QK4_0 : i*QK4_0+QK4_0 : i*QK4_0+QK4_0]
		y := dst[i*BlockQ4_0Bytes : i*BlockQ4_0Bytes+BlockQ4_0Bytes : i*BlockQ4_0Bytes+BlockQ4_0Bytes]
		_, vmax := absMax(x)
		d := vmax / -8
		id := inv(d)
		putHalf(y, d)
		for j := range QK4_0 / 2 {
			xi0 := min(15, int(cInt8(float32(x[j]*id)+8.5)))
			xi1 := min(15, int(cInt8(float32(x[j+16]*id)+8.5)))
			y[2+j] = uint8(xi0) | uint8(xi1)<<4
		}
	}
}

// dequantizeQ4_0 is dequantize_row_q4_0.
func dequantizeQ4_0(dst []float32, src []byte) {
	nb := len(dst) / QK4_0
	src = need(src, nb*BlockQ4_0Bytes)
	for i := range nb {
		b := src[i*BlockQ4_0Bytes : i*BlockQ4_0Bytes+BlockQ4_0Bytes : i*BlockQ4_0Bytes+BlockQ4_0Bytes]
		y := dst[i*QK4_0 : i*QK4_0+QK4_0 : i*QK4_0+QK4_0]
		d := halfAt(b)
		for j := range QK4_0 / 2 {
			q := b[2+j]
			y[j] = float32(int(q&0xf)-8) * d
			y[j+16] = float32(int(q>>4)-8) * d
		}
	}
}

// quantizeQ4_1 is quantize_row_q4_1_ref.
func quantizeQ4_1(dst []byte, src []float32) {
	nb := len(src) / QK4_1
	dst = need(dst, nb*BlockQ4_1Bytes)
	for i := range nb {
		x := src[i*QK4_1 : i*QK4_1+QK4_1 : i*QK4_1+QK4_1]
		y := dst[i*BlockQ4_1Bytes : i*BlockQ4_1Bytes+BlockQ4_1Bytes : i*BlockQ4_1Bytes+BlockQ4_1Bytes]
		lo, hi := minMax(x)
		d := (hi - lo) / 15
		id := inv(d)
		putHalf(y, d)
		putHalf(y[2:], lo)
		for j := range QK4_1 / 2 {
			xi0 := min(15, int(cInt8(float32((x[j]-lo)*id)+0.5)))
			xi1 := min(15, int(cInt8(float32((x[j+16]-lo)*id)+0.5)))
			y[4+j] = uint8(xi0) | uint8(xi1)<<4
		}
	}
}

// dequantizeQ4_1 is dequantize_row_q4_1.
func dequantizeQ4_1(dst []float32, src []byte) {
	nb := len(dst) / QK4_1
	src = need(src, nb*BlockQ4_1Bytes)
	for i := range nb {
		b := src[i*BlockQ4_1Bytes : i*BlockQ4_1Bytes+BlockQ4_1Bytes : i*BlockQ4_1Bytes+BlockQ4_1Bytes]
		y := dst[i*QK4_1 : i*QK4_1+QK4_1 : i*QK4_1+QK4_1]
		d, m := halfAt(b), halfAt(b[2:])
		for j := range QK4_1 / 2 {
			q := b[4+j]
			y[j] = float32(float32(q&0xf)*d) + m
			y[j+16] = float32(float32(q>>4)*d) + m
		}
	}
}

// quantizeQ5_0 is quantize_row_q5_0_ref.
func quantizeQ5_0(dst []byte, src []float32) {
	nb := len(src) / QK5_0
	dst = need(dst, nb*BlockQ5_0Bytes)
	for i := range nb {
		x := src[i*QK5_0 : i*QK5_0+QK5_0 : i*QK5_0+QK5_0]
		y := dst[i*BlockQ5_0Bytes : i*BlockQ5_0Bytes+BlockQ5_0Bytes : i*BlockQ5_0Bytes+BlockQ5_0Bytes]
		_, vmax := absMax(x)
		d := vmax / -16
		id := inv(d)
		putHalf(y, d)
		var qh uint32
		for j := range QK5_0 / 2 {
			xi0 := uint8(min(31, int(cInt8(float32(x[j]*id)+16.5))))
			xi1 := uint8(min(31, int(cInt8(float32(x[j+16]*id)+16.5))))
			y[6+j] = xi0&0xf | (xi1&0xf)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + 16)
		}
		binary.LittleEndian.PutUint32(y[2:], qh)
	}
}

// dequantizeQ5_0 is dequantize_row_q5_0.
func dequantizeQ5_0(dst []float32, src []byte) {
	nb := len(dst) / QK5_0
	src = need(src, nb*BlockQ5_0Bytes)
	for i := range nb {
		b := src[i*BlockQ5_0Bytes : i*BlockQ5_0Bytes+BlockQ5_0Bytes : i*BlockQ5_0Bytes+BlockQ5_0Bytes]
		y := dst[i*QK5_0 : i*QK5_0+QK5_0 : i*QK5_0+QK5_0]
		d := halfAt(b)
		qh := binary.LittleEndian.Uint32(b[2:])
		for j := range QK5_0 / 2 {
			q := b[6+j]
			h0 := int(qh>>j<<4) & 0x10
			h1 := int(qh>>(j+12)) & 0x10
			y[j] = float32((int(q&0xf)|h0)-16) * d
			y[j+16] = float32((int(q>>4)|h1)-16) * d
		}
	}
}

// quantizeQ5_1 is quantize_row_q5_1_ref.
func quantizeQ5_1(dst []byte, src []float32) {
	nb := len(src) / QK5_1
	dst = need(dst, nb*BlockQ5_1Bytes)
	for i := range nb {
		x := src[i*QK5_1 : i*QK5_1+QK5_1 : i*QK5_1+QK5_1]
		y := dst[i*BlockQ5_1Bytes : i*BlockQ5_1Bytes+BlockQ5_1Bytes : i*BlockQ5_1Bytes+BlockQ5_1Bytes]
		lo, hi := minMax(x)
		d := (hi - lo) / 31
		id := inv(d)
		putHalf(y, d)
		putHalf(y[2:], lo)
		var qh uint32
		for j := range QK5_1 / 2 {
			xi0 := uint8(cvtt(float32((x[j]-lo)*id) + 0.5))
			xi1 := uint8(cvtt(float32((x[j+16]-lo)*id) + 0.5))
			y[8+j] = xi0&0xf | (xi1&0xf)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + 16)
		}
		binary.LittleEndian.PutUint32(y[4:], qh)
	}
}

// dequantizeQ5_1 is dequantize_row_q5_1.
func dequantizeQ5_1(dst []float32, src []byte) {
	nb := len(dst) / QK5_1
	src = need(src, nb*BlockQ5_1Bytes)
	for i := range nb {
		b := src[i*BlockQ5_1Bytes : i*BlockQ5_1Bytes+BlockQ5_1Bytes : i*BlockQ5_1Bytes+BlockQ5_1Bytes]
		y := dst[i*QK5_1 : i*QK5_1+QK5_1 : i*QK5_1+QK5_1]
		d, m := halfAt(b), halfAt(b[2:])
		qh := binary.LittleEndian.Uint32(b[4:])
		for j := range QK5_1 / 2 {
			q := b[8+j]
			h0 := int(qh>>j<<4) & 0x10
			h1 := int(qh>>(j+12)) & 0x10
			y[j] = float32(float32(int(q&0xf)|h0)*d) + m
			y[j+16] = float32(float32(int(q>>4)|h1)*d) + m
		}
	}
}

// q8Scale is the scale of ggml's 8-bit quantizers: max|x|/127 with ggml's
// MAX macro (a NaN is kept only when it comes last).
func q8Scale(x []float32) float32 {
	var amax float32
	for _, v := range x {
		if a := fabsf(v); !(amax > a) {
			amax = a
		}
	}
	return amax / 127
}

// quantizeQ8_0 is quantize_row_q8_0_ref.
func quantizeQ8_0(dst []byte, src []float32) {
	nb := len(src) / QK8_0
	dst = need(dst, nb*BlockQ8_0Bytes)
	for i := range nb {
		x := src[i*QK8_0 : i*QK8_0+QK8_0 : i*QK8_0+QK8_0]
		y := dst[i*BlockQ8_0Bytes : i*BlockQ8_0Bytes+BlockQ8_0Bytes : i*BlockQ8_0Bytes+BlockQ8_0Bytes]
		d := q8Scale(x)
		id := inv(d)
		putHalf(y, d)
		for j, v := range x {
			y[2+j] = uint8(cInt8(roundf(v * id)))
		}
	}
}

// dequantizeQ8_0 is dequantize_row_q8_0.
func dequantizeQ8_0(dst []float32, src []byte) {
	nb := len(dst) / QK8_0
	src = need(src, nb*BlockQ8_0Bytes)
	for i := range nb {
		b := src[i*BlockQ8_0Bytes : i*BlockQ8_0Bytes+BlockQ8_0Bytes : i*BlockQ8_0Bytes+BlockQ8_0Bytes]
		y := dst[i*QK8_0 : i*QK8_0+QK8_0 : i*QK8_0+QK8_0]
		d := halfAt(b)
		for j := range y {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
}

// quantizeQ8_1 is quantize_row_q8_1_ref.
func quantizeQ8_1(dst []byte, src []float32) {
	nb := len(src) / QK8_1
	dst = need(dst, nb*BlockQ8_1Bytes)
	for i := range nb {
		x := src[i*QK8_1 : i*QK8_1+QK8_1 : i*QK8_1+QK8_1]
		y := dst[i*BlockQ8_1Bytes : i*BlockQ8_1Bytes+BlockQ8_1Bytes : i*BlockQ8_1Bytes+BlockQ8_1Bytes]
		d := q8Scale(x)
		id := inv(d)
		putHalf(y, d)
		var sum int32
		for j, v := range x {
			q := cInt8(roundf(v * id))
			y[4+j] = uint8(q)
			sum += int32(q)
		}
		putHalf(y[2:], float32(sum)*d)
	}
}

// dequantizeQ8_1 decodes Q8_1 as d*q, the formula of dequantize_row_q8_0
// (ggml has no Q8_1 dequantizer); s is not read.
func dequantizeQ8_1(dst []float32, src []byte) {
	nb := len(dst) / QK8_1
	src = need(src, nb*BlockQ8_1Bytes)
	for i := range nb {
		b := src[i*BlockQ8_1Bytes : i*BlockQ8_1Bytes+BlockQ8_1Bytes : i*BlockQ8_1Bytes+BlockQ8_1Bytes]
		y := dst[i*QK8_1 : i*QK8_1+QK8_1 : i*QK8_1+QK8_1]
		d := halfAt(b)
		for j := range y {
			y[j] = float32(int8(b[4+j])) * d
		}
	}
}
