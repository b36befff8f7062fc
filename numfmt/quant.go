// Package numfmt converts between float32 and the number formats GGUF
// tensors are stored in: IEEE half (F16), bfloat16 (BF16) and ggml's block
// formats (Q4_0 .. Q8_1, the K-quants Q2_K .. Q8_K, IQ4_NL, IQ4_XS and
// MXFP4).
//
// Each supported type has one Format (FormatOf, Formats): its block
// geometry, the activation format its dot product takes, and Dequantize
// and Quantize, bit for bit as ggml's dequantize_row_* and
// ggml_quantize_chunk without an importance matrix. The block layouts are
// ggml's (ggml-common.h); the exported constants and helpers (QK_K,
// BlockQ4_KBytes, ScaleMinK4, KValuesIQ4NL, E8M0Half, ...) describe them
// for kernel writers.
package numfmt

import "math"

// F16ToF32 converts an IEEE 754 half-precision value to float32 exactly,
// including subnormals, infinities and NaN (whose payload is kept).
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0: // signed zero
		return math.Float32frombits(sign)
	}
	// Subnormal: value = mant * 2^-24, exact in float32.
	f := float32(mant) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}

// F32ToF16 converts a float32 to IEEE half precision, rounding to nearest
// even. Values too large become infinity; NaN stays NaN (quiet).
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 { // NaN: keep the top payload bits, force quiet
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal or zero in half precision.
		if e < -10 {
			return sign
		}
		m := mant | 0x800000 // implicit leading one
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := m >> shift
		rem := m & (1<<shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, up to infinity: correct
	}
	return sign | uint16(r)
}

// BF16ToF32 converts a bfloat16 value to float32 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 converts a float32 to bfloat16, rounding to nearest even; NaN
// stays NaN (quiet).
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
