package simd

import (
	"encoding/binary"
	"math"

	"inferno/gguf"
	"inferno/numfmt"
)

// The K-quants (Q2_K..Q6_K) and IQ4_XS: super-blocks of 256 values in
// sub-blocks of 16 or 32, multiplied by activations quantized to Q8_K
// (256 int8 values, a float32 scale dx, and the sums of every 16 and every
// 32 values).
//
// Every format is read as: values q (small signed integers), an integer
// scale sc_j and an integer min mn_j per sub-block j, and two float
// super-block scales d and dm, so that weight i of sub-block j is
// d*sc_j*q_i - dm*mn_j (mn and dm zero for the formats without mins). The
// product of a row with a token is then, per super-block, two exact
// integers
//
//	A = sum_j sc_j * (sum_i q_i*x_i)    B = sum_j mn_j * (sum_i x_i)
//
// combined in float32 as
//
//	acc += float32(A)*(d*dx) - float32(B)*(dm*dx)
//
// (for formats without mins acc += float32(A)*(d*dx), the same bits),
// rounding after every operation (no fused multiply-add), super-blocks in
// order. dotK is that definition in Go; every kernel computes A and B
// exactly, in whatever order suits it, and then these float operations, so
// a row's result does not depend on the kernel, the thread or the tokens
// beside it.

// qkK is the size of a K-quant super-block and of a Q8_K block.
const qkK = numfmt.QK_K

// bsK is the number of int16 sums a Q8_K block keeps: 16 sums of 16
// values, then 8 sums of 32.
const bsK = 24

// kBlock is one super-block of a K-quant row, decoded.
type kBlock struct {
	q      [qkK]int8 // the values
	sc, mn [16]int32 // per sub-block: scale and min
	d, dm  float32
}

// kFormat describes a K-quant format to the generic kernels.
type kFormat struct {
	nsub int   // sub-blocks per super-block: 8 (of 32 values) or 16 (of 16)
	min  bool  // whether it has mins (mn, dm)
	off  uint8 // added to q to make it unsigned for the packed tiles (formats without mins)
	typ  gguf.TensorType
}

// decode decodes the super-block blk. (A switch, not a function value, so
// that k does not escape.)
func (f *kFormat) decode(k *kBlock, blk []byte) {
	switch f.typ {
	case gguf.TensorQ2_K:
		decodeQ2K(k, blk)
	case gguf.TensorQ3_K:
		decodeQ3K(k, blk)
	case gguf.TensorQ4_K:
		decodeQ4K(k, blk)
	case gguf.TensorQ5_K:
		decodeQ5K(k, blk)
	case gguf.TensorQ6_K:
		decodeQ6K(k, blk)
	case gguf.TensorIQ4_XS:
		decodeIQ4XS(k, blk)
	}
}

func half(b []byte) float32 { return numfmt.F16ToF32(binary.LittleEndian.Uint16(b)) }

// decodeQ4K: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of
// nibbles (byte 32h+l: value 64h+l low, 64h+32+l high).
func decodeQ4K(k *kBlock, b []byte) {
	b = b[:numfmt.BlockQ4_KBytes]
	k.d, k.dm = half(b[0:]), half(b[2:])
	for j := range 8 {
		sc, m := numfmt.ScaleMinK4(j, b[4:16])
		k.sc[j], k.mn[j] = int32(sc), int32(m)
	}
	qs := b[16:]
	for h := range 4 {
		for l := range 32 {
			v := qs[32*h+l]
			k.q[64*h+l] = int8(v & 0xf)
			k.q[64*h+32+l] = int8(v >> 4)
		}
	}
}

// decodeQ5K: as Q4_K, with the fifth bits in qh[32] (value 64h+l: bit 2h
// of qh[l]; value 64h+32+l: bit 2h+1).
func decodeQ5K(k *kBlock, b []byte) {
	b = b[:numfmt.BlockQ5_KBytes]
	k.d, k.dm = half(b[0:]), half(b[2:])
	for j := range 8 {
		sc, m := numfmt.ScaleMinK4(j, b[4:16])
		k.sc[j], k.mn[j] = int32(sc), int32(m)
	}
	qh, qs := b[16:48], b[48:]
	for h := range 4 {
		for l := range 32 {
			v := qs[32*h+l]
			k.q[64*h+l] = int8(v&0xf | (qh[l]>>(2*h)&1)<<4)
			k.q[64*h+32+l] = int8(v>>4 | (qh[l]>>(2*h+1)&1)<<4)
		}
	}
}

// decodeQ6K: ql[128], qh[64], int8 scales[16], d; values q-32.
func decodeQ6K(k *kBlock, b []byte) {
	b = b[:numfmt.BlockQ6_KBytes]
	k.d, k.dm = half(b[208:]), 0
	for j := range 16 {
		k.sc[j], k.mn[j] = int32(int8(b[192+j])), 0
	}
	for h := range 2 {
		ql, qh := b[64*h:], b[128+32*h:]
		for l := range 32 {
			hb := qh[l]
			k.q[128*h+l] = int8(ql[l]&0xf|(hb&3)<<4) - 32
			k.q[128*h+32+l] = int8(ql[32+l]&0xf|(hb>>2&3)<<4) - 32
			k.q[128*h+64+l] = int8(ql[l]>>4|(hb>>4&3)<<4) - 32
			k.q[128*h+96+l] = int8(ql[32+l]>>4|(hb>>6&3)<<4) - 32
		}
	}
}

// decodeQ3K: hmask[32], qs[64], 12 bytes of 6-bit scales, d; value
// 128c+32j+l is bits 2j of qs[32c+l], minus 4 unless bit 4c+j of
// hmask[l] is set.
func decodeQ3K(k *kBlock, b []byte) {
	b = b[:numfmt.BlockQ3_KBytes]
	k.d, k.dm = half(b[108:]), 0
	for j := range 16 {
		k.sc[j], k.mn[j] = int32(numfmt.Q3KScale(j, b[96:108])), 0
	}
	hm, qs := b[0:32], b[32:96]
	for c := range 2 {
		for j := range 4 {
			for l := range 32 {
				v := int8(qs[32*c+l] >> (2 * j) & 3)
				if hm[l]>>(4*c+j)&1 == 0 {
					v -= 4
				}
				k.q[128*c+32*j+l] = v
			}
		}
	}
}

// decodeQ2K: scales[16] (low nibble scale, high nibble min), qs[64] (as
// Q3_K's low bits), d, dmin.
func decodeQ2K(k *kBlock, b []byte) {
	b = b[:numfmt.BlockQ2_KBytes]
	k.d, k.dm = half(b[80:]), half(b[82:])
	for j := range 16 {
		k.sc[j], k.mn[j] = int32(b[j]&0xf), int32(b[j]>>4)
	}
	qs := b[16:80]
	for c := range 2 {
		for j := range 4 {
			for l := range 32 {
				k.q[128*c+32*j+l] = int8(qs[32*c+l] >> (2 * j) & 3)
			}
		}
	}
}

// decodeIQ4XS: d, 6-bit scales (minus 32), and 8 sub-blocks of 16 bytes
// of indices into KValuesIQ4NL (byte j: value j low, j+16 high).
func decodeIQ4XS(k *kBlock, b []byte) {
	b = b[:numfmt.BlockIQ4_XSBytes]
	k.d, k.dm = half(b[0:]), 0
	for ib := range 8 {
		k.sc[ib], k.mn[ib] = int32(numfmt.IQ4XSScale(ib, b)), 0
		qs := b[8+16*ib : 8+16*ib+16]
		for j, v := range qs {
			k.q[32*ib+j] = numfmt.KValuesIQ4NL[v&0xf]
			k.q[32*ib+16+j] = numfmt.KValuesIQ4NL[v>>4]
		}
	}
}

// The K formats. off makes the values of formats without mins unsigned:
// Q6_K's -32..31, Q3_K's -4..3, IQ4_XS's -127..113.
var (
	kQ2K   = &kFormat{nsub: 16, min: true, typ: gguf.TensorQ2_K}
	kQ3K   = &kFormat{nsub: 16, off: 4, typ: gguf.TensorQ3_K}
	kQ4K   = &kFormat{nsub: 8, min: true, typ: gguf.TensorQ4_K}
	kQ5K   = &kFormat{nsub: 8, min: true, typ: gguf.TensorQ5_K}
	kQ6K   = &kFormat{nsub: 16, off: 32, typ: gguf.TensorQ6_K}
	kIQ4XS = &kFormat{nsub: 8, off: 128, typ: gguf.TensorIQ4_XS}
)

// xsum returns the sum of the activations of sub-block j of a Q8_K block
// whose sums are bs (bsK values).
func xsum(bs []int16, j, nsub int) int32 {
	if nsub == 16 {
		return int32(bs[j])
	}
	return int32(bs[16+j])
}

// dotK is the Go reference of a K-quant product: one row of nb
// super-blocks of bb bytes times one Q8_K token (values qs, scales ds,
// sums bs). See the top of this file.
func dotK(f *kFormat, row []byte, bb int, qs []int8, ds []float32, bs []int16, nb int) float32 {
	var k kBlock
	var acc float32
	sub := qkK / f.nsub
	for b := range nb {
		f.decode(&k, row[b*bb:(b+1)*bb])
		x := qs[b*qkK : (b+1)*qkK]
		sums := bs[b*bsK : (b+1)*bsK]
		var A, B int32
		for j := range f.nsub {
			var s int32
			for i := j * sub; i < (j+1)*sub; i++ {
				s += int32(k.q[i]) * int32(x[i])
			}
			A += k.sc[j] * s
			B += k.mn[j] * xsum(sums, j, f.nsub)
		}
		dx := ds[b]
		v := float32(float32(A) * (k.d * dx))
		if f.min {
			v -= float32(float32(B) * (k.dm * dx))
		}
		acc += v
	}
	return acc
}

// quantizeQ8KGo quantizes len(x)/256 blocks of x to Q8_K: scale d =
// max|x|/127 into ds[b], values round(x/d) (to nearest even) into
// qs[b*256:], the sums of each 16 and each 32 of them into bs[b*24:].
// The rounding is quantizeQ8Go's.
func quantizeQ8KGo(qs []int8, ds []float32, bs []int16, x []float32) {
	for b := range len(x) / qkK {
		blk := x[b*qkK : (b+1)*qkK]
		d, id := q8Scale(blk)
		ds[b] = d
		q := qs[b*qkK : (b+1)*qkK]
		sums := bs[b*bsK : (b+1)*bsK]
		for j := range 16 {
			var s int32
			for i := 16 * j; i < 16*j+16; i++ {
				q[i] = int8(math.RoundToEven(float64(blk[i] * id)))
				s += int32(q[i])
			}
			sums[j] = int16(s)
		}
		for j := range 8 {
			sums[16+j] = sums[2*j] + sums[2*j+1]
		}
	}
}

// The packed tile of the multi-token K kernels: eight rows of one
// super-block, laid out so that a vector lane holds one row (no horizontal
// sums), values made unsigned by the format's offset:
//
//	q     64 groups g of 32 bytes: row r's values 4g..4g+3 (plus off) at 4r
//	sc32  nsub vectors: row r's sc_j as int32 in lane r
//	sc16  nsub vectors: row r's sc_j twice as int16 in lane r
//	cf    nsub/2 vectors: row r's (c_2k, c_2k+1) as int16 in lane r, where
//	      c_j is mn_j (formats with mins) or off*sc_j (without)
//	d     8 float32
//	dm    8 float32
//
// The kernels compute per row and token Au = sum_j sc_j*(sum_i (q_i+off)*x_i)
// and C = sum_j c_j*xsum_j, so that A = Au - C and B = 0 without mins,
// A = Au and B = C with them.
func kPackBytes(nsub int) int { return 64*32 + nsub*32 + nsub*32 + nsub/2*32 + 64 }

// packKGo packs eight rows of rb bytes (nb super-blocks of bb bytes) into
// dst, nb tiles of kPackBytes(f.nsub) bytes.
func packKGo(f *kFormat, dst []byte, w []byte, rb, bb, nb int) {
	var k kBlock
	pb := kPackBytes(f.nsub)
	for b := range nb {
		p := dst[b*pb : (b+1)*pb]
		sc32 := p[2048:]
		sc16 := sc32[f.nsub*32:]
		cf := sc16[f.nsub*32:]
		ds := cf[f.nsub/2*32:]
		for r := range 8 {
			f.decode(&k, w[r*rb+b*bb:r*rb+(b+1)*bb])
			for g := range 64 {
				for i := range 4 {
					p[g*32+r*4+i] = uint8(k.q[4*g+i]) + f.off
				}
			}
			for j := range f.nsub {
				binary.LittleEndian.PutUint32(sc32[j*32+r*4:], uint32(k.sc[j]))
				s := uint32(uint16(int16(k.sc[j])))
				binary.LittleEndian.PutUint32(sc16[j*32+r*4:], s|s<<16)
			}
			for j := 0; j < f.nsub; j += 2 {
				c0, c1 := k.mn[j], k.mn[j+1]
				if !f.min {
					c0, c1 = int32(f.off)*k.sc[j], int32(f.off)*k.sc[j+1]
				}
				binary.LittleEndian.PutUint32(cf[j/2*32+r*4:], uint32(uint16(int16(c0)))|uint32(uint16(int16(c1)))<<16)
			}
			binary.LittleEndian.PutUint32(ds[r*4:], math.Float32bits(k.d))
			binary.LittleEndian.PutUint32(ds[32+r*4:], math.Float32bits(k.dm))
		}
	}
}

// kTileGo is the multi-token K kernel in Go, from a packed tile (see
// kPackBytes): eight rows times four tokens qstride values apart (their
// scales nb apart, their sums nb*bsK apart), token j's results going to
// y[j*ldy:][:8]. It gives dotK's bits; the assembly tiles are checked
// against both.
func kTileGo(y []float32, ldy int, f *kFormat, pack []byte, qs []int8, qstride int, ds []float32, bs []int16, nb int) {
	pb := kPackBytes(f.nsub)
	sub := qkK / f.nsub
	le := binary.LittleEndian
	for j := range 4 {
		for r := range 8 {
			var acc float32
			for b := range nb {
				p := pack[b*pb : (b+1)*pb]
				sc32 := p[2048:]
				cf := sc32[2*f.nsub*32:]
				dd := cf[f.nsub/2*32:]
				x := qs[j*qstride+b*qkK : j*qstride+(b+1)*qkK]
				sums := bs[(j*nb+b)*bsK : (j*nb+b+1)*bsK]
				var au, c int32
				for s := range f.nsub {
					var dot int32
					for i := s * sub; i < (s+1)*sub; i++ {
						dot += int32(p[i/4*32+r*4+i%4]) * int32(x[i])
					}
					au += int32(le.Uint32(sc32[s*32+r*4:])) * dot
				}
				for k := range f.nsub / 2 {
					cc := le.Uint32(cf[k*32+r*4:])
					c += int32(int16(cc))*xsum(sums, 2*k, f.nsub) + int32(int16(cc>>16))*xsum(sums, 2*k+1, f.nsub)
				}
				d := math.Float32frombits(le.Uint32(dd[r*4:]))
				dm := math.Float32frombits(le.Uint32(dd[32+r*4:]))
				dx := ds[j*nb+b]
				var v float32
				if f.min {
					v = float32(float32(au) * (d * dx))
					v -= float32(float32(c) * (dm * dx))
				} else {
					v = float32(float32(au-c) * (d * dx))
				}
				acc += v
			}
			y[j*ldy+r] = acc
		}
	}
}
