package numfmt

import (
	"encoding/binary"
	"fmt"
	"math"

	"inferno/gguf"
)

// Format is one tensor type's block encoding: its geometry, the activation
// format its integer dot product takes, and its conversions to and from
// float32. It is the format half of ggml's type_traits; backends register
// their kernels per type on their own side.
type Format struct {
	Type       gguf.TensorType
	BlockSize  int // values per block (ggml's QK; 1 for F32, F16, BF16)
	BlockBytes int // bytes per block

	// DotType is the activation format the type's integer dot product
	// takes (ggml's vec_dot_type): Q8_0 for Q4_0, Q5_0, Q8_0, IQ4_NL and
	// MXFP4; Q8_1 for Q4_1, Q5_1 and Q8_1; Q8_K for Q2_K..Q6_K, IQ4_XS
	// and Q8_K; F32 for F32, F16 and BF16.
	DotType gguf.TensorType

	// Dequantize decodes len(dst)/BlockSize whole blocks from src into
	// dst, bit for bit as ggml's dequantize_row_* (to_float), for any
	// bytes. src must hold that many blocks; it panics otherwise. Q8_1,
	// which ggml does not dequantize, decodes as d*q; F16 keeps a
	// signalling NaN's payload (F16ToF32) where ggml quiets it.
	Dequantize func(dst []float32, src []byte)

	// Quantize encodes len(src)/BlockSize whole blocks of src into
	// dst[:n*BlockBytes], bit for bit as ggml_quantize_chunk with no
	// importance matrix (what llama-quantize writes without --imatrix);
	// for the activation formats Q8_1 and Q8_K, as quantize_row_q8_1_ref
	// and quantize_row_q8_K_ref. It allocates nothing. dst must be large
	// enough; it panics otherwise. NaN or infinite inputs do not panic:
	// the block they fall in gets the bytes ggml's arithmetic gives it
	// (mostly garbage, as in ggml; the fixtures check NaN and ±Inf), the
	// other blocks are unaffected. One exception: F16 keeps a NaN's
	// payload (F32ToF16) where ggml writes 0x7e00 with the sign.
	Quantize func(dst []byte, src []float32)
}

// formats is the table, indexed by type id; nil where unsupported.
var formats = [...]*Format{
	gguf.TensorF32:    {gguf.TensorF32, 1, 4, gguf.TensorF32, dequantizeF32, quantizeF32},
	gguf.TensorF16:    {gguf.TensorF16, 1, 2, gguf.TensorF32, dequantizeF16, quantizeF16},
	gguf.TensorQ4_0:   {gguf.TensorQ4_0, QK4_0, BlockQ4_0Bytes, gguf.TensorQ8_0, dequantizeQ4_0, quantizeQ4_0},
	gguf.TensorQ4_1:   {gguf.TensorQ4_1, QK4_1, BlockQ4_1Bytes, gguf.TensorQ8_1, dequantizeQ4_1, quantizeQ4_1},
	gguf.TensorQ5_0:   {gguf.TensorQ5_0, QK5_0, BlockQ5_0Bytes, gguf.TensorQ8_0, dequantizeQ5_0, quantizeQ5_0},
	gguf.TensorQ5_1:   {gguf.TensorQ5_1, QK5_1, BlockQ5_1Bytes, gguf.TensorQ8_1, dequantizeQ5_1, quantizeQ5_1},
	gguf.TensorQ8_0:   {gguf.TensorQ8_0, QK8_0, BlockQ8_0Bytes, gguf.TensorQ8_0, dequantizeQ8_0, quantizeQ8_0},
	gguf.TensorQ8_1:   {gguf.TensorQ8_1, QK8_1, BlockQ8_1Bytes, gguf.TensorQ8_1, dequantizeQ8_1, quantizeQ8_1},
	gguf.TensorQ2_K:   {gguf.TensorQ2_K, QK_K, BlockQ2_KBytes, gguf.TensorQ8_K, dequantizeQ2_K, quantizeQ2_K},
	gguf.TensorQ3_K:   {gguf.TensorQ3_K, QK_K, BlockQ3_KBytes, gguf.TensorQ8_K, dequantizeQ3_K, quantizeQ3_K},
	gguf.TensorQ4_K:   {gguf.TensorQ4_K, QK_K, BlockQ4_KBytes, gguf.TensorQ8_K, dequantizeQ4_K, quantizeQ4_K},
	gguf.TensorQ5_K:   {gguf.TensorQ5_K, QK_K, BlockQ5_KBytes, gguf.TensorQ8_K, dequantizeQ5_K, quantizeQ5_K},
	gguf.TensorQ6_K:   {gguf.TensorQ6_K, QK_K, BlockQ6_KBytes, gguf.TensorQ8_K, dequantizeQ6_K, quantizeQ6_K},
	gguf.TensorQ8_K:   {gguf.TensorQ8_K, QK_K, BlockQ8_KBytes, gguf.TensorQ8_K, dequantizeQ8_K, quantizeQ8_K},
	gguf.TensorIQ4_NL: {gguf.TensorIQ4_NL, QK4_NL, BlockIQ4_NLBytes, gguf.TensorQ8_0, dequantizeIQ4_NL, quantizeIQ4_NL},
	gguf.TensorIQ4_XS: {gguf.TensorIQ4_XS, QK_K, BlockIQ4_XSBytes, gguf.TensorQ8_K, dequantizeIQ4_XS, quantizeIQ4_XS},
	gguf.TensorBF16:   {gguf.TensorBF16, 1, 2, gguf.TensorF32, dequantizeBF16, quantizeBF16},
	gguf.TensorMXFP4:  {gguf.TensorMXFP4, QK_MXFP4, BlockMXFP4Bytes, gguf.TensorQ8_0, dequantizeMXFP4, quantizeMXFP4},
}

// FormatOf returns the format of t, and false if quant cannot encode and
// decode t.
func FormatOf(t gguf.TensorType) (*Format, bool) {
	if uint64(t) >= uint64(len(formats)) || formats[t] == nil {
		return nil, false
	}
	return formats[t], true
}

// Formats returns every supported format in type-id order (a new slice
// each call; the formats themselves are shared and must not be changed).
func Formats() []*Format {
	out := make([]*Format, 0, len(formats))
	for _, f := range formats {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
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
	f, ok := FormatOf(t)
	if !ok {
		return fmt.Errorf("quant: decoding %s is not supported", t)
	}
	f.Dequantize(dst[:n], src[:need])
	return nil
}

// QuantizeRow encodes src as type t, appending to dst, with ggml's
// rounding (see Format.Quantize). len(src) must be a multiple of the
// type's block size.
func QuantizeRow(dst []byte, src []float32, t gguf.TensorType) ([]byte, error) {
	f, ok := FormatOf(t)
	if !ok {
		return dst, fmt.Errorf("quant: encoding %s is not supported", t)
	}
	if len(src)%f.BlockSize != 0 {
		return dst, fmt.Errorf("quant: %s needs a multiple of %d values, have %d", t, f.BlockSize, len(src))
	}
	n := len(src) / f.BlockSize * f.BlockBytes
	dst = grow(dst, n)
	f.Quantize(dst[len(dst)-n:], src)
	return dst, nil
}

// grow extends b by n bytes (contents unspecified).
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n+len(b)/4)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func dequantizeF32(dst []float32, src []byte) {
	src = need(src, 4*len(dst))
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func quantizeF32(dst []byte, src []float32) {
	dst = need(dst, 4*len(src))
	for i, x := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
	}
}

// F16 and BF16 are bit-exact with ggml for every value but NaN: ggml
// writes every float32 NaN as the quiet half NaN 0x7e00 (with its sign)
// and quiets signalling half NaNs when decoding; F32ToF16 and F16ToF32
// keep the payload (as numpy does), which convert relies on.

func dequantizeF16(dst []float32, src []byte) {
	src = need(src, 2*len(dst))
	for i := range dst {
		dst[i] = F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func quantizeF16(dst []byte, src []float32) {
	dst = need(dst, 2*len(src))
	for i, x := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(x))
	}
}

func dequantizeBF16(dst []float32, src []byte) {
	src = need(src, 2*len(dst))
	for i := range dst {
		dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func quantizeBF16(dst []byte, src []float32) {
	dst = need(dst, 2*len(src))
	for i, x := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(x))
	}
}

// Helpers shared by the block formats, each the exact float32 arithmetic
// of its ggml counterpart.

// halfAt reads the little-endian F16 at b[0:2] as float32
// (ggml's GGML_FP16_TO_FP32).
func halfAt(b []byte) float32 { return F16ToF32(binary.LittleEndian.Uint16(b)) }

// putHalf writes F16(f) at b[0:2] (ggml's GGML_FP32_TO_FP16 for non-NaN f).
func putHalf(b []byte, f float32) { binary.LittleEndian.PutUint16(b, F32ToF16(f)) }

// fabsf is C's fabsf: clears the sign bit.
func fabsf(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// sqrtf is C's sqrtf (correctly rounded, as sqrtss).
func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// nearestInt is ggml's nearest_int: round to nearest, ties to even, for
// |f| <= 4194303, by adding 1.5*2^23 and reading the mantissa. Outside
// that range (and for NaN) it returns what ggml's bit trick returns.
//
// The explicit conversion keeps f rounded when a call nearestInt(a*b) is
// inlined: otherwise the Go compiler may fuse a*b+12582912 into one FMA
// (with GOAMD64=v3 and on FMA targets), which ggml's build does not do.
func nearestInt(f float32) int {
	v := float32(f) + 12582912
	return int(int32(math.Float32bits(v)&0x007fffff) - 0x00400000)
}

// roundf is C's roundf: to nearest, halves away from zero.
func roundf(x float32) float32 { return float32(math.Round(float64(x))) }

// cInt8 is C's (int8_t) conversion of a float on x86-64 as gcc compiles
// it: truncate toward zero to int32 (cvttss2si; 0x80000000 when out of
// range), keep the low byte.
func cInt8(x float32) int8 { return int8(cvtt(x)) }

// cvtt is cvttss2si: truncation to int32, 0x80000000 for NaN and out of
// range values.
func cvtt(x float32) int32 {
	if !(x > -2147483904) || !(x < 2147483648) { // NaN or out of range
		return math.MinInt32
	}
	return int32(x)
}

// need returns b[:n], panicking if b is shorter (slicing alone would
// reach into b's capacity).
func need(b []byte, n int) []byte {
	if len(b) < n {
		shortBuffer(len(b), n)
	}
	return b[:n]
}

//go:noinline
func shortBuffer(have, want int) {
	panic(fmt.Sprintf("quant: %d bytes, need %d", have, want))
}
