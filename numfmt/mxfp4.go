package numfmt

import "math"

// MXFP4, the Open Compute Project's microscaling format of 4-bit floats
// (the experts of gpt-oss): blocks of 32 E2M1 values sharing one E8M0
// exponent. ggml keeps the E2M1 values doubled, as the integers of
// KValuesMXFP4, and halves the scale to match (E8M0Half), so that a value
// is E8M0Half(e)*KValuesMXFP4[q], as for IQ4_NL with another table and
// scale.
const (
	QK_MXFP4 = 32 // values per MXFP4 block

	// BlockMXFP4Bytes: the E8M0 exponent e at 0, qs[16] at 1 (value j in
	// the low nibble of qs[j], value j+16 in the high one, as IQ4_NL);
	// value = E8M0Half(e)*KValuesMXFP4[q].
	BlockMXFP4Bytes = 1 + QK_MXFP4/2
)

// KValuesMXFP4 are the 16 E2M1 values doubled (ggml's kvalues_mxfp4):
// codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 times two, codes 8..15 the
// same negated. A copy: changing it changes nothing in numfmt.
var KValuesMXFP4 = kvaluesMXFP4

var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// mxfp4Levels are the levels as float32, in code order.
var mxfp4Levels = [16]float32{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// E8M0Half returns half the scale the E8M0 byte e stands for, 2^(e-128)
// (ggml's GGML_E8M0_TO_FP32_HALF): subnormal for e = 0 and 1, and 2^127
// for 255, which OCP's format reserves for NaN and ggml decodes as a
// number.
func E8M0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// mxfp4Exponent is quantize_row_mxfp4_ref's exponent for a block whose
// largest magnitude is amax: (uint8_t)(floorf(log2f(amax)) - 2 + 127), 0
// for amax = 0. The conversion to uint8_t is gcc's on x86-64, truncation
// to int32 (cvttss2si) keeping the low byte: a block below 2^-125 wraps
// around to a huge scale (its values all quantize to 0), an infinite one
// gets 0.
func mxfp4Exponent(amax float32) uint8 {
	if !(amax > 0) {
		return 0
	}
	return uint8(cvtt(floorLog2f(amax) - 2 + 127))
}

// floorLog2f is floorf(log2f(x)) for x > 0 with glibc's log2f, which
// rounds to nearest: within a few ulps below a power of two 2^k the
// result is k, not k-1 (up to 44 ulps in the top binades). log2 rounded to
// float32 floors to the same integer for every positive float32 (checked
// exhaustively against glibc 2.36; TestMXFP4ExponentGlibc checks each
// binade's threshold, testdata/ggml/log2f.txt).
func floorLog2f(x float32) float32 {
	return float32(math.Floor(float64(float32(math.Log2(float64(x))))))
}

// bestIndexMXFP4 is ggml's best_index_mxfp4: the first code whose level
// times d is nearest x, |level*d - x| rounded in float32. Only code 0 and
// the codes of x's sign can win (a level of the other sign is never
// strictly nearer than its mirror image, which comes first, nor than 0),
// and along one sign the error falls then rises (float32 rounding keeps
// it monotonic on either side of x), so the search stops at the first
// rise; it returns what the loop over all 16 codes returns, NaN included
// (code 0).
func bestIndexMXFP4(x, d float32) uint8 {
	best, bestErr := uint8(0), fabsf(x) // code 0: |0*d - x|
	first := uint8(1)
	if x < 0 {
		first = 9
	}
	for i := first; i < first+7; i++ {
		err := fabsf(float32(mxfp4Levels[i]*d) - x)
		if err < bestErr {
			best, bestErr = i, err
		} else if err > bestErr {
			break
		}
	}
	return best
}

// quantizeMXFP4 is quantize_row_mxfp4_ref (what ggml_quantize_chunk
// writes, with or without an importance matrix): the exponent from the
// block's largest magnitude, then each value's nearest code.
func quantizeMXFP4(dst []byte, src []float32) {
	nb := len(src) / QK_MXFP4
	dst = need(dst, nb*BlockMXFP4Bytes)
	for i := range nb {
		x := src[i*QK_MXFP4 : i*QK_MXFP4+QK_MXFP4 : i*QK_MXFP4+QK_MXFP4]
		y := dst[i*BlockMXFP4Bytes : i*BlockMXFP4Bytes+BlockMXFP4Bytes : i*BlockMXFP4Bytes+BlockMXFP4Bytes]
		var amax float32
		for _, v := range x {
			if a := fabsf(v); amax < a {
				amax = a
			}
		}
		e := mxfp4Exponent(amax)
		d := E8M0Half(e)
		y[0] = e
		for j := range 16 {
			y[1+j] = bestIndexMXFP4(x[j], d) | bestIndexMXFP4(x[j+16], d)<<4
		}
	}
}

// dequantizeMXFP4 is dequantize_row_mxfp4.
func dequantizeMXFP4(dst []float32, src []byte) {
	nb := len(dst) / QK_MXFP4
	src = need(src, nb*BlockMXFP4Bytes)
	for i := range nb {
		b := src[i*BlockMXFP4Bytes : i*BlockMXFP4Bytes+BlockMXFP4Bytes : i*BlockMXFP4Bytes+BlockMXFP4Bytes]
		y := dst[i*QK_MXFP4 : i*QK_MXFP4+QK_MXFP4 : i*QK_MXFP4+QK_MXFP4]
		d := E8M0Half(b[0])
		for j := range 16 {
			q := b[1+j]
			y[j] = mxfp4Levels[q&0xf] * d
			y[j+16] = mxfp4Levels[q>>4] * d
		}
	}
}
