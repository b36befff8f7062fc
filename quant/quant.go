// Package quant converts between float32 and the number formats GGUF
// tensors are stored in: IEEE half (F16), bfloat16 (BF16) and Q8_0 blocks.
package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"inferno/gguf"
)

// Q8_0 layout: blocks of QK8_0 weights, each a little-endian F16 scale d
// followed by QK8_0 int8 values q; weight = d * q.
const (
	QK8_0          = 32
	BlockQ8_0Bytes = 2 + QK8_0
)

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

// DequantizeRow decodes n values of type t from src into dst[:n].
func DequantizeRow(dst []float32, src []byte, t gguf.TensorType, n int) error {
	if n < 0 {
		return fmt.Errorf("quant: cannot decode %d values", n)
	}
	need, ok := t.RowBytes(uint64(n))
	if !ok {
		return fmt.Errorf("quant: cannot decode %d values of type %s", n, t)
	}
	if uint64(len(src)) < need || len(dst) < n {
		return fmt.Errorf("quant: %d values of %s need %d bytes, have %d (dst %d)", n, t, need, len(src), len(dst))
	}
	switch t {
	case gguf.TensorF32:
		for i := range n {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case gguf.TensorF16:
		for i := range n {
			dst[i] = F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case gguf.TensorBF16:
		for i := range n {
			dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case gguf.TensorQ8_0:
		for b := 0; b < n/QK8_0; b++ {
			blk := src[b*BlockQ8_0Bytes : (b+1)*BlockQ8_0Bytes]
			d := F16ToF32(binary.LittleEndian.Uint16(blk))
			for j := range QK8_0 {
				dst[b*QK8_0+j] = d * float32(int8(blk[2+j]))
			}
		}
	default:
		return fmt.Errorf("quant: decoding %s is not supported", t)
	}
	return nil
}

// QuantizeRow encodes src as type t, appending to dst. For Q8_0, len(src)
// must be a multiple of QK8_0; each block gets scale max|x|/127 and values
// rounded half away from zero, as ggml computes them.
func QuantizeRow(dst []byte, src []float32, t gguf.TensorType) ([]byte, error) {
	switch t {
	case gguf.TensorF32:
		for _, x := range src {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
		}
	case gguf.TensorF16:
		for _, x := range src {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(x))
		}
	case gguf.TensorBF16:
		for _, x := range src {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToBF16(x))
		}
	case gguf.TensorQ8_0:
		if len(src)%QK8_0 != 0 {
			return dst, fmt.Errorf("quant: Q8_0 needs a multiple of %d values, have %d", QK8_0, len(src))
		}
		for b := 0; b < len(src); b += QK8_0 {
			blk := src[b : b+QK8_0]
			var amax float32
			for _, x := range blk {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			d := amax / 127
			id := float32(0)
			if d != 0 {
				id = 1 / d
			}
			dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
			for _, x := range blk {
				dst = append(dst, byte(int8(math.Round(float64(x*id)))))
			}
		}
	default:
		return dst, fmt.Errorf("quant: encoding %s is not supported", t)
	}
	return dst, nil
}
