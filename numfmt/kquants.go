package numfmt

import (
	"encoding/binary"
	"math"
)

// The K-quants: super-blocks of QK_K = 256 values in sub-blocks of 16 or
// 32, with quantized sub-block scales under F16 super-block scales,
// ggml's block_q2_K .. block_q8_K. Multi-byte fields are little-endian.
const (
	QK_K = 256 // values per K-quant (and IQ4_XS) super-block

	// KScaleSize is the size of the packed 6-bit scales and mins of Q4_K
	// and Q5_K (ggml's K_SCALE_SIZE); read them with ScaleMinK4.
	KScaleSize = 12

	// BlockQ2_KBytes: scales[16] at 0 (low nibble: sub-block scale, high
	// nibble: sub-block min, one per 16 values), qs[64] at 16 (2 bits per
	// value), d F16 at 80, dmin F16 at 82. Value = d*sc*q - dmin*m.
	// qs byte 32*h+l holds, at bits 2k, value 128*h + 32*k + l.
	BlockQ2_KBytes = QK_K/16 + QK_K/4 + 4
	// BlockQ3_KBytes: hmask[32] at 0, qs[64] at 32 (the low 2 bits,
	// packed as Q2_K's), scales[12] at 96 (16 6-bit scales, see Q3KScale),
	// d F16 at 108. Value i's high bit is bit i/32 of hmask[i%32]; value =
	// d*(sc-32)*(q-4), where q is the 3-bit value and a clear high bit
	// subtracts the 4.
	BlockQ3_KBytes = QK_K/8 + QK_K/4 + 12 + 2
	// BlockQ4_KBytes: d F16 at 0, dmin F16 at 2, scales[12] at 4 (eight
	// 6-bit scales and mins, see ScaleMinK4), qs[128] at 16. qs byte
	// 32*h+l holds value 64*h+l in its low nibble and 64*h+32+l in its
	// high nibble; value = d*sc*q - dmin*m, with sub-block j = value/32.
	BlockQ4_KBytes = 4 + KScaleSize + QK_K/2
	// BlockQ5_KBytes: d F16 at 0, dmin F16 at 2, scales[12] at 4, qh[32]
	// at 16, qs[128] at 48 (the low 4 bits, as Q4_K). The fifth bit of
	// value 64*h+l is bit 2h of qh[l], of value 64*h+32+l bit 2h+1.
	BlockQ5_KBytes = 4 + KScaleSize + QK_K/8 + QK_K/2
	// BlockQ6_KBytes: ql[128] at 0, qh[64] at 128, scales[16] int8 at 192,
	// d F16 at 208. Value = d*sc*(q-32), sub-block = value/16. For half h
	// (values 128*h..), l < 32: ql[64*h+l] holds values +l (low) and +64+l
	// (high nibble), ql[64*h+32+l] values +32+l and +96+l; qh[32*h+l]
	// holds the top 2 bits of values +l, +32+l, +64+l, +96+l at bits 0, 2,
	// 4, 6.
	BlockQ6_KBytes = QK_K/2 + QK_K/4 + QK_K/16 + 2
	// BlockQ8_KBytes: d float32 at 0, qs[256] int8 at 4, bsums[16] int16
	// at 260 (sums of 16 consecutive quants). Value = d*q. An activation
	// format.
	BlockQ8_KBytes = 4 + QK_K + QK_K/16*2
)

// ScaleMinK4 unpacks the 6-bit scale and min of sub-block j (0..7) from
// the 12 packed bytes q of a Q4_K or Q5_K block (ggml's get_scale_min_k4).
func ScaleMinK4(j int, q []byte) (sc, m uint8) {
	q = q[:KScaleSize]
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// Q3KScale returns the signed scale (-32..31) of sub-block j (0..15) from
// the 12 packed scale bytes s of a Q3_K block.
func Q3KScale(j int, s []byte) int8 {
	s = s[:12]
	var lo uint8
	if j < 8 {
		lo = s[j] & 0xf
	} else {
		lo = s[j-8] >> 4
	}
	hi := (s[8+j%4] >> (2 * (j / 4))) & 3
	return int8(lo|hi<<4) - 32
}

// pack2 stores 256 2-bit values as Q2_K and Q3_K do: byte 32*h+l of qs
// holds value 128*h+32*k+l at bits 2k.
func pack2(qs []byte, L *[QK_K]uint8) {
	qs = qs[:QK_K/4]
	for j := 0; j < QK_K; j += 128 {
		for l := range 32 {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// quantizeQ2_K is quantize_row_q2_K_ref (what quantize_q2_K runs without
// an importance matrix).
func quantizeQ2_K(dst []byte, src []float32) {
	nb := len(src) / QK_K
	dst = need(dst, nb*BlockQ2_KBytes)
	var (
		L       [QK_K]uint8
		Laux    [16]uint8
		weights [16]float32
		mins    [QK_K / 16]float32
		scales  [QK_K / 16]float32
	)
	const q4scale = 15
	for i := range nb {
		x := src[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		y := dst[i*BlockQ2_KBytes : i*BlockQ2_KBytes+BlockQ2_KBytes : i*BlockQ2_KBytes+BlockQ2_KBytes]
		ysc := y[:16]
		var maxScale, maxMin float32
		for j := range QK_K / 16 {
			xs := x[16*j : 16*j+16]
			for l, v := range xs {
				weights[l] = fabsf(v)
			}
			scales[j] = makeQKX2Quants(3, xs, weights[:], L[16*j:16*j+16], Laux[:], &mins[j], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range ysc {
				ysc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putHalf(y[80:], maxScale/q4scale)
		} else {
			clear(ysc)
			putHalf(y[80:], 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range ysc {
				ysc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putHalf(y[82:], maxMin/q4scale)
		} else {
			putHalf(y[82:], 0)
		}
		dAll, mAll := halfAt(y[80:]), halfAt(y[82:])
		for j := range QK_K / 16 {
			d := dAll * float32(ysc[j]&0xf)
			if d == 0 {
				continue
			}
			dm := mAll * float32(ysc[j]>>4)
			for ii := range 16 {
				l := nearestInt((x[16*j+ii] + dm) / d)
				L[16*j+ii] = uint8(max(0, min(3, l)))
			}
		}
		pack2(y[16:], &L)
	}
}

// dequantizeQ2_K is dequantize_row_q2_K.
func dequantizeQ2_K(dst []float32, src []byte) {
	nb := len(dst) / QK_K
	src = need(src, nb*BlockQ2_KBytes)
	for i := range nb {
		b := src[i*BlockQ2_KBytes : i*BlockQ2_KBytes+BlockQ2_KBytes : i*BlockQ2_KBytes+BlockQ2_KBytes]
		y := dst[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		d, mn := halfAt(b[80:]), halfAt(b[82:])
		sc := b[:16]
		for h := range 2 {
			q := b[16+32*h : 16+32*h+32]
			for k := range 4 {
				shift := 2 * k
				for half := range 2 {
					s := sc[8*h+2*k+half]
					dl := d * float32(s&0xf)
					ml := mn * float32(s>>4)
					out := y[128*h+32*k+16*half : 128*h+32*k+16*half+16]
					qq := q[16*half : 16*half+16]
					for l := range out {
						out[l] = float32(dl*float32((qq[l]>>shift)&3)) - ml
					}
				}
			}
		}
	}
}

// quantizeQ3_K is quantize_row_q3_K_ref (what quantize_q3_K runs without
// an importance matrix).
func quantizeQ3_K(dst []byte, src []float32) {
	nb := len(src) / QK_K
	dst = need(dst, nb*BlockQ3_KBytes)
	var (
		L      [QK_K]int8
		scales [QK_K / 16]float32
	)
	for i := range nb {
		x := src[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		y := dst[i*BlockQ3_KBytes : i*BlockQ3_KBytes+BlockQ3_KBytes : i*BlockQ3_KBytes+BlockQ3_KBytes]
		hmask, qs, ysc := y[0:32], y[32:96], y[96:108]
		var maxScale, amax float32
		for j := range QK_K / 16 {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
			if s := fabsf(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		clear(ysc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := range QK_K / 16 {
				l := int8(nearestInt(iscale * scales[j]))
				l = int8(max(-32, min(31, int(l))) + 32)
				if j < 8 {
					ysc[j] = uint8(l) & 0xf
				} else {
					ysc[j-8] |= (uint8(l) & 0xf) << 4
				}
				l >>= 4
				ysc[j%4+8] |= uint8(l) << (2 * (j / 4))
			}
			putHalf(y[108:], 1/iscale)
		} else {
			putHalf(y[108:], 0)
		}
		dAll := halfAt(y[108:])
		for j := range QK_K / 16 {
			d := dAll * float32(Q3KScale(j, ysc))
			if d == 0 {
				continue
			}
			for ii := range 16 {
				l := nearestInt(x[16*j+ii] / d)
				L[16*j+ii] = int8(max(-4, min(3, l)) + 4)
			}
		}
		clear(hmask)
		var L2 [QK_K]uint8
		for j := range QK_K {
			l := L[j]
			if l > 3 {
				hmask[j%32] |= 1 << (j / 32)
				l -= 4
			}
			L2[j] = uint8(l)
		}
		pack2(qs, &L2)
	}
}

// dequantizeQ3_K is dequantize_row_q3_K.
func dequantizeQ3_K(dst []float32, src []byte) {
	nb := len(dst) / QK_K
	src = need(src, nb*BlockQ3_KBytes)
	for i := range nb {
		b := src[i*BlockQ3_KBytes : i*BlockQ3_KBytes+BlockQ3_KBytes : i*BlockQ3_KBytes+BlockQ3_KBytes]
		y := dst[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		hm, ysc := b[0:32], b[96:108]
		dAll := halfAt(b[108:])
		for h := range 2 {
			q := b[32+32*h : 32+32*h+32]
			for k := range 4 {
				shift := 2 * k
				m := uint8(1) << (4*h + k)
				for half := range 2 {
					dl := dAll * float32(Q3KScale(8*h+2*k+half, ysc))
					out := y[128*h+32*k+16*half : 128*h+32*k+16*half+16]
					for l := range out {
						ql := int((q[16*half+l] >> shift) & 3)
						if hm[16*half+l]&m == 0 {
							ql -= 4
						}
						out[l] = dl * float32(ql)
					}
				}
			}
		}
	}
}

// putScaleMinK4 packs a 6-bit scale and min for sub-block j as
// quantize_row_q4_K_ref does; sub-blocks 0..3 must be written first.
func putScaleMinK4(s []byte, j int, ls, lm uint8) {
	if j < 4 {
		s[j] = ls
		s[j+4] = lm
	} else {
		s[j+4] = ls&0xf | (lm&0xf)<<4
		s[j-4] |= (ls >> 4) << 6
		s[j] |= (lm >> 4) << 6
	}
}

// quantizeK32 is the common part of quantize_row_q4_K_ref and
// quantize_row_q5_K_ref for one super-block: scales and mins of the eight
// sub-blocks of 32 (written to y at 0..16), and the levels in L.
func quantizeK32(x []float32, y []byte, L *[QK_K]uint8, nmax int, rmin, rdelta float32, nstep int) {
	var (
		Laux    [32]uint8
		weights [32]float32
		mins    [QK_K / 32]float32
		scales  [QK_K / 32]float32
	)
	var maxScale, maxMin float32
	for j := range QK_K / 32 {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrtf(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + fabsf(v)
		}
		scales[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], Laux[:], &mins[j], rmin, rdelta, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	ys := y[4:16]
	for j := range QK_K / 32 {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		putScaleMinK4(ys, j, ls, lm)
	}
	putHalf(y[0:], maxScale/63)
	putHalf(y[2:], maxMin/63)
	dAll, mAll := halfAt(y[0:]), halfAt(y[2:])
	for j := range QK_K / 32 {
		sc, m := ScaleMinK4(j, ys)
		d := dAll * float32(sc)
		if d == 0 {
			continue
		}
		dm := mAll * float32(m)
		for ii := range 32 {
			l := nearestInt((x[32*j+ii] + dm) / d)
			L[32*j+ii] = uint8(max(0, min(nmax, l)))
		}
	}
}

// quantizeQ4_K is quantize_row_q4_K_ref (what quantize_q4_K runs without
// an importance matrix).
func quantizeQ4_K(dst []byte, src []float32) {
	nb := len(src) / QK_K
	dst = need(dst, nb*BlockQ4_KBytes)
	var L [QK_K]uint8
	for i := range nb {
		x := src[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		y := dst[i*BlockQ4_KBytes : i*BlockQ4_KBytes+BlockQ4_KBytes : i*BlockQ4_KBytes+BlockQ4_KBytes]
		quantizeK32(x, y, &L, 15, -1, 0.1, 20)
		q := y[16:144]
		for j := 0; j < QK_K; j += 64 {
			for l := range 32 {
				q[j/2+l] = L[j+l] | L[j+l+32]<<4
			}
		}
	}
}

// dequantizeQ4_K is dequantize_row_q4_K.
func dequantizeQ4_K(dst []float32, src []byte) {
	nb := len(dst) / QK_K
	src = need(src, nb*BlockQ4_KBytes)
	for i := range nb {
		b := src[i*BlockQ4_KBytes : i*BlockQ4_KBytes+BlockQ4_KBytes : i*BlockQ4_KBytes+BlockQ4_KBytes]
		y := dst[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		d, mn := halfAt(b[0:]), halfAt(b[2:])
		s := b[4:16]
		for h := range 4 {
			q := b[16+32*h : 16+32*h+32]
			sc, m := ScaleMinK4(2*h, s)
			d1, m1 := d*float32(sc), mn*float32(m)
			sc, m = ScaleMinK4(2*h+1, s)
			d2, m2 := d*float32(sc), mn*float32(m)
			lo, hi := y[64*h:64*h+32], y[64*h+32:64*h+64]
			for l := range 32 {
				lo[l] = float32(d1*float32(q[l]&0xf)) - m1
				hi[l] = float32(d2*float32(q[l]>>4)) - m2
			}
		}
	}
}

// quantizeQ5_K is quantize_row_q5_K_ref (what quantize_q5_K runs without
// an importance matrix).
func quantizeQ5_K(dst []byte, src []float32) {
	nb := len(src) / QK_K
	dst = need(dst, nb*BlockQ5_KBytes)
	var L [QK_K]uint8
	for i := range nb {
		x := src[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		y := dst[i*BlockQ5_KBytes : i*BlockQ5_KBytes+BlockQ5_KBytes : i*BlockQ5_KBytes+BlockQ5_KBytes]
		quantizeK32(x, y, &L, 31, -0.5, 0.1, 15)
		qh, ql := y[16:48], y[48:176]
		clear(qh)
		m1, m2 := uint8(1), uint8(2)
		for n := 0; n < QK_K; n += 64 {
			for j := range 32 {
				l1, l2 := L[n+j], L[n+j+32]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				ql[n/2+j] = l1 | l2<<4
			}
			m1 <<= 2
			m2 <<= 2
		}
	}
}

// dequantizeQ5_K is dequantize_row_q5_K.
func dequantizeQ5_K(dst []float32, src []byte) {
	nb := len(dst) / QK_K
	src = need(src, nb*BlockQ5_KBytes)
	for i := range nb {
		b := src[i*BlockQ5_KBytes : i*BlockQ5_KBytes+BlockQ5_KBytes : i*BlockQ5_KBytes+BlockQ5_KBytes]
		y := dst[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		d, mn := halfAt(b[0:]), halfAt(b[2:])
		s, qh := b[4:16], b[16:48]
		u1, u2 := uint8(1), uint8(2)
		for h := range 4 {
			ql := b[48+32*h : 48+32*h+32]
			sc, m := ScaleMinK4(2*h, s)
			d1, m1 := d*float32(sc), mn*float32(m)
			sc, m = ScaleMinK4(2*h+1, s)
			d2, m2 := d*float32(sc), mn*float32(m)
			lo, hi := y[64*h:64*h+32], y[64*h+32:64*h+64]
			for l := range 32 {
				q1, q2 := ql[l]&0xf, ql[l]>>4
				if qh[l]&u1 != 0 {
					q1 += 16
				}
				if qh[l]&u2 != 0 {
					q2 += 16
				}
				lo[l] = float32(d1*float32(q1)) - m1
				hi[l] = float32(d2*float32(q2)) - m2
			}
			u1 <<= 2
			u2 <<= 2
		}
	}
}

// quantizeQ6_K is quantize_row_q6_K_ref (what quantize_q6_K runs without
// an importance matrix).
func quantizeQ6_K(dst []byte, src []float32) {
	nb := len(src) / QK_K
	dst = need(dst, nb*BlockQ6_KBytes)
	var (
		L      [QK_K]uint8
		scales [QK_K / 16]float32
	)
	for i := range nb {
		x := src[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		y := dst[i*BlockQ6_KBytes : i*BlockQ6_KBytes+BlockQ6_KBytes : i*BlockQ6_KBytes+BlockQ6_KBytes]
		var maxScale, maxAbsScale float32
		for ib := range QK_K / 16 {
			s := makeQXQuants(32, x[16*ib:16*ib+16], L[16*ib:16*ib+16])
			scales[ib] = s
			if a := fabsf(s); a > maxAbsScale {
				maxAbsScale, maxScale = a, s
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(y)
			continue
		}
		ysc := y[192:208]
		iscale := -128 / maxScale
		putHalf(y[208:], 1/iscale)
		for ib := range ysc {
			ysc[ib] = uint8(int8(min(127, nearestInt(iscale*scales[ib]))))
		}
		dAll := halfAt(y[208:])
		for j := range QK_K / 16 {
			d := dAll * float32(int8(ysc[j]))
			if d == 0 {
				continue
			}
			for ii := range 16 {
				l := nearestInt(x[16*j+ii] / d)
				L[16*j+ii] = uint8(max(-32, min(31, l)) + 32)
			}
		}
		for h := range 2 {
			j := 128 * h
			ql := y[64*h : 64*h+64]
			qh := y[128+32*h : 128+32*h+32]
			for l := range 32 {
				q1, q2, q3, q4 := L[j+l], L[j+l+32], L[j+l+64], L[j+l+96]
				ql[l] = q1&0xf | (q3&0xf)<<4
				ql[l+32] = q2&0xf | (q4&0xf)<<4
				qh[l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}

// dequantizeQ6_K is dequantize_row_q6_K.
func dequantizeQ6_K(dst []float32, src []byte) {
	nb := len(dst) / QK_K
	src = need(src, nb*BlockQ6_KBytes)
	for i := range nb {
		b := src[i*BlockQ6_KBytes : i*BlockQ6_KBytes+BlockQ6_KBytes : i*BlockQ6_KBytes+BlockQ6_KBytes]
		y := dst[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		d := halfAt(b[208:])
		for h := range 2 {
			ql := b[64*h : 64*h+64]
			qh := b[128+32*h : 128+32*h+32]
			sc := b[192+8*h : 192+8*h+8]
			yy := y[128*h : 128*h+128]
			for l := range 32 {
				is := l / 16
				q1 := int8(ql[l]&0xf|(qh[l]&3)<<4) - 32
				q2 := int8(ql[l+32]&0xf|((qh[l]>>2)&3)<<4) - 32
				q3 := int8(ql[l]>>4|((qh[l]>>4)&3)<<4) - 32
				q4 := int8(ql[l+32]>>4|((qh[l]>>6)&3)<<4) - 32
				yy[l] = d * float32(int8(sc[is])) * float32(q1)
				yy[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
				yy[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
				yy[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
			}
		}
	}
}

// quantizeQ8_K is quantize_row_q8_K_ref. For an all-zero block ggml
// leaves bsums unwritten; here they are written as 0 (their value).
func quantizeQ8_K(dst []byte, src []float32) {
	nb := len(src) / QK_K
	dst = need(dst, nb*BlockQ8_KBytes)
	for i := range nb {
		x := src[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		y := dst[i*BlockQ8_KBytes : i*BlockQ8_KBytes+BlockQ8_KBytes : i*BlockQ8_KBytes+BlockQ8_KBytes]
		var vmax, amax float32
		for _, v := range x {
			if ax := fabsf(v); ax > amax {
				amax, vmax = ax, v
			}
		}
		if amax == 0 {
			clear(y)
			continue
		}
		qs := y[4:260]
		iscale := -127 / vmax
		for j, v := range x {
			qs[j] = uint8(int8(min(127, nearestInt(iscale*v))))
		}
		for j := range QK_K / 16 {
			var sum int
			for _, q := range qs[16*j : 16*j+16] {
				sum += int(int8(q))
			}
			binary.LittleEndian.PutUint16(y[260+2*j:], uint16(int16(sum)))
		}
		binary.LittleEndian.PutUint32(y, math.Float32bits(1/iscale))
	}
}

// dequantizeQ8_K is dequantize_row_q8_K.
func dequantizeQ8_K(dst []float32, src []byte) {
	nb := len(dst) / QK_K
	src = need(src, nb*BlockQ8_KBytes)
	for i := range nb {
		b := src[i*BlockQ8_KBytes : i*BlockQ8_KBytes+BlockQ8_KBytes : i*BlockQ8_KBytes+BlockQ8_KBytes]
		y := dst[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		d := math.Float32frombits(binary.LittleEndian.Uint32(b))
		for j := range y {
			y[j] = d * float32(int8(b[4+j]))
		}
	}
}
