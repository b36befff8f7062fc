package numfmt

import "encoding/binary"

// The non-linear 4-bit formats: each 4-bit index selects one of the 16
// levels of KValuesIQ4NL, times a scale.
const (
	QK4_NL = 32 // values per IQ4_NL block

	// BlockIQ4_NLBytes: d F16 at 0, qs[16] at 2 (value j in the low
	// nibble of qs[j], value j+16 in the high one); value =
	// d*KValuesIQ4NL[q].
	BlockIQ4_NLBytes = 2 + QK4_NL/2
	// BlockIQ4_XSBytes: d F16 at 0, scales_h uint16 at 2, scales_l[4] at
	// 4, qs[128] at 8. Sub-block ib (32 values) has the 6-bit scale
	// IQ4XSScale(ib, block) and its 16 bytes at 8+16*ib, packed as IQ4_NL;
	// value = d*scale*KValuesIQ4NL[q].
	BlockIQ4_XSBytes = 2 + 2 + QK_K/64 + QK_K/2
)

// KValuesIQ4NL are the 16 levels of IQ4_NL and IQ4_XS (ggml's
// kvalues_iq4nl). A copy: changing it changes nothing in quant.
var KValuesIQ4NL = kvaluesIQ4NL

var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// IQ4XSScale returns the signed scale (-32..31) of sub-block ib (0..7) of
// the IQ4_XS block b.
func IQ4XSScale(ib int, b []byte) int {
	b = b[:8]
	h := binary.LittleEndian.Uint16(b[2:])
	ls := int(b[4+ib/2]>>(4*(ib%2)))&0xf | int(h>>(2*ib))&3<<4
	return ls - 32
}

// iq4Levels are the levels as float32; iq4Upper[k+127], for k = floor(x)
// in -127..112, is the first level above k: ggml's binary search ends
// with that level and the one below it.
var (
	iq4Levels [16]float32
	iq4Upper  [240]uint8
)

func init() {
	for i, v := range kvaluesIQ4NL {
		iq4Levels[i] = float32(v)
	}
	for k := -127; k <= 112; k++ {
		mu := 1
		for int(kvaluesIQ4NL[mu]) <= k {
			mu++
		}
		iq4Upper[k+127] = uint8(mu)
	}
}

// bestIndexInt8 is ggml's best_index_int8 over the IQ4_NL levels: the
// index of the level nearest x, the upper one unless x is nearer the
// lower one in float32 arithmetic; 15 for NaN. ggml finds the two
// neighbouring levels by binary search; as the levels are integers, the
// floor of x finds the same two.
func bestIndexInt8(x float32) uint8 {
	x = float32(x) // rounded: see nearestInt
	if x <= -127 {
		return 0
	}
	if !(x < 113) { // also NaN, which ggml's search sends to 15
		return 15
	}
	k := int(x) // x in (-127, 113): truncation toward zero, then floor
	if float32(k) > x {
		k--
	}
	mu := iq4Upper[k+127]
	if x-iq4Levels[(mu-1)&15] < iq4Levels[mu&15]-x {
		return mu - 1
	}
	return mu
}

// iq4nlBlockScale is the per-32 search of quantize_row_iq4_nl_impl with
// no importance matrix and ntry = 7 (weights x*x): the best scale for xb,
// 0 for a block below GROUP_MAX_EPS. Lb gets the first pass's indices
// (unchanged for such a block).
func iq4nlBlockScale(xb []float32, Lb []uint8) float32 {
	const ntry = 7
	xb, Lb = xb[:32], Lb[:32]
	var amax, vmax float32
	for _, v := range xb {
		if ax := fabsf(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		return 0
	}
	v0 := iq4Levels[0]
	d := -vmax / v0
	id := 1 / d
	var sumqx, sumq2 float32
	for j, x := range xb {
		l := bestIndexInt8(id * x)
		Lb[j] = l
		q := iq4Levels[l&15]
		w := x * x
		sumqx += float32(w * q * x)
		sumq2 += float32(w * q * q)
	}
	d = 0
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -ntry; itry <= ntry; itry++ {
		id = float32(itry+int(kvaluesIQ4NL[0])) / vmax
		sumqx, sumq2 = 0, 0
		for _, x := range xb {
			q := iq4Levels[bestIndexInt8(id*x)&15]
			w := x * x
			sumqx += float32(w * q * x)
			sumq2 += float32(w * q * q)
		}
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d
}

// packIQ4 packs 32*k indices as IQ4_NL does: byte 16*i+j holds index
// 32*i+j (low nibble) and 32*i+16+j (high nibble).
func packIQ4(q4 []byte, L []uint8) {
	for i := range len(L) / 32 {
		for j := range 16 {
			q4[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
		}
	}
}

// quantizeIQ4_NL is quantize_iq4_nl with no importance matrix (ntry 7,
// not quantize_row_iq4_nl_ref's -1).
func quantizeIQ4_NL(dst []byte, src []float32) {
	nb := len(src) / QK4_NL
	dst = need(dst, nb*BlockIQ4_NLBytes)
	var L [QK4_NL]uint8
	for i := range nb {
		x := src[i*QK4_NL : i*QK4_NL+QK4_NL : i*QK4_NL+QK4_NL]
		y := dst[i*BlockIQ4_NLBytes : i*BlockIQ4_NLBytes+BlockIQ4_NLBytes : i*BlockIQ4_NLBytes+BlockIQ4_NLBytes]
		d := iq4nlBlockScale(x, L[:])
		putHalf(y, d)
		id := inv(d)
		for j, v := range x {
			L[j] = bestIndexInt8(id * v)
		}
		packIQ4(y[2:], L[:])
	}
}

// dequantizeIQ4_NL is dequantize_row_iq4_nl.
func dequantizeIQ4_NL(dst []float32, src []byte) {
	nb := len(dst) / QK4_NL
	src = need(src, nb*BlockIQ4_NLBytes)
	for i := range nb {
		b := src[i*BlockIQ4_NLBytes : i*BlockIQ4_NLBytes+BlockIQ4_NLBytes : i*BlockIQ4_NLBytes+BlockIQ4_NLBytes]
		y := dst[i*QK4_NL : i*QK4_NL+QK4_NL : i*QK4_NL+QK4_NL]
		d := halfAt(b)
		for j := range 16 {
			q := b[2+j]
			y[j] = d * iq4Levels[q&0xf]
			y[j+16] = d * iq4Levels[q>>4]
		}
	}
}

// quantizeIQ4_XS is quantize_iq4_xs with no importance matrix.
func quantizeIQ4_XS(dst []byte, src []float32) {
	nb := len(src) / QK_K
	dst = need(dst, nb*BlockIQ4_XSBytes)
	var (
		L      [QK_K]uint8
		scales [QK_K / 32]float32
	)
	for i := range nb {
		x := src[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		y := dst[i*BlockIQ4_XSBytes : i*BlockIQ4_XSBytes+BlockIQ4_XSBytes : i*BlockIQ4_XSBytes+BlockIQ4_XSBytes]
		var maxScale, amaxScale float32
		for ib := range QK_K / 32 {
			d := iq4nlBlockScale(x[32*ib:32*ib+32], L[32*ib:32*ib+32])
			scales[ib] = d
			if a := fabsf(d); a > amaxScale {
				amaxScale, maxScale = a, d
			}
		}
		d := -maxScale / 32
		putHalf(y, d)
		id := inv(d)
		var sh uint16
		sl := y[4:8]
		for ib := range QK_K / 32 {
			l := max(-32, min(31, nearestInt(id*scales[ib])))
			dl := d * float32(l)
			idl := inv(dl)
			for j, v := range x[32*ib : 32*ib+32] {
				L[32*ib+j] = bestIndexInt8(idl * v)
			}
			l += 32
			ll, lh := uint8(l&0xf), uint16(l>>4)
			if ib%2 == 0 {
				sl[ib/2] = ll
			} else {
				sl[ib/2] |= ll << 4
			}
			sh |= lh << (2 * ib)
		}
		binary.LittleEndian.PutUint16(y[2:], sh)
		packIQ4(y[8:], L[:])
	}
}

// dequantizeIQ4_XS is dequantize_row_iq4_xs.
func dequantizeIQ4_XS(dst []float32, src []byte) {
	nb := len(dst) / QK_K
	src = need(src, nb*BlockIQ4_XSBytes)
	for i := range nb {
		b := src[i*BlockIQ4_XSBytes : i*BlockIQ4_XSBytes+BlockIQ4_XSBytes : i*BlockIQ4_XSBytes+BlockIQ4_XSBytes]
		y := dst[i*QK_K : i*QK_K+QK_K : i*QK_K+QK_K]
		d := halfAt(b)
		for ib := range QK_K / 32 {
			dl := d * float32(IQ4XSScale(ib, b))
			qs := b[8+16*ib : 8+16*ib+16]
			yy := y[32*ib : 32*ib+32]
			for j := range 16 {
				yy[j] = dl * iq4Levels[qs[j]&0xf]
				yy[j+16] = dl * iq4Levels[qs[j]>>4]
			}
		}
	}
}
