// act16.glsl: the activations of the integer dot product products, read
// and quantized in chunks of 16 values, shared by quant_act.comp (which
// writes them for mul_mvq to read) and mul_mvq.comp (which, for a few
// tokens, quantizes them itself as it reads its input), so that both
// produce the same integers from the same input. Included after
// common.glsl, with XMODE (a constant) defined before:
//   0: the input is x itself, token t's values at x + 4*t*cols;
//   1: x times the RMSNorm's gain (the norm's 1/rms is a factor of the
//      token's whole row: the quantization does not change with it, the
//      caller multiplies it into the scales or the sums);
//   2: silu(g) * u, the SwiGLU of the packed gate-and-up row of token t:
//      g at x + 4*t*xstride, u cols values after it.
//
// A chunk of 16 values v is quantized to 16-bit integers held as two
// planes of signed bytes:
//   q[i] = roundEven(v[i] * QMAX / max|v|), QMAX = 32512 = 127*256,
//   hi[i] = round(q[i] / 256) (within -127..127), lo[i] = q[i] - 256*hi[i]
//   (within -128..127), d = max|v| / QMAX,
// so that a dot product with signed bytes w is 256*dot(w, hi) + dot(w, lo)
// in two 8-bit integer dot products, exact; the rounding of v is 1/65024
// of the chunk's largest value. A chunk whose largest |v| is below 1e-30
// (QMAX/max would overflow) is zeros.

const float ACT16_QMAX = 32512.0;

// act16_load returns in v the input values of chunk c (values 16c ..
// 16c+15) of the token whose row starts at vec4 xt of x (t*cols/4, or
// t*xstride/4 with XMODE 2), and adds their squares to ss (XMODE 1: the
// token's sum of squares, of x before the gain).
void act16_load(uint64_t x, uint64_t gain, uint xt, uint cols, uint c, out vec4 v[4], inout float ss) {
	Vec4s X = Vec4s(x);
	for (uint k = 0; k < 4; k++) {
		v[k] = X.v[xt + 4 * c + k];
		if (XMODE == 1) {
			ss += dot(v[k], v[k]);
			v[k] *= Vec4s(gain).v[4 * c + k];
		} else if (XMODE == 2) {
			v[k] = silu_mul(v[k], X.v[xt + cols / 4 + 4 * c + k]);
		}
	}
}

// act16_quant quantizes the 16 values v into the planes hi and lo (four
// bytes to a word, the lowest value in the low byte) and returns the
// chunk's scale d and the sum of its integers.
float act16_quant(vec4 v[4], out uvec4 hi, out uvec4 lo, out int sum) {
	const vec4 a = max(max(abs(v[0]), abs(v[1])), max(abs(v[2]), abs(v[3])));
	const float amax = max(max(a.x, a.y), max(a.z, a.w));
	const float inv = amax > 1e-30 ? ACT16_QMAX / amax : 0.0;
	sum = 0;
	for (uint k = 0; k < 4; k++) {
		const ivec4 q = clamp(ivec4(roundEven(v[k] * inv)), -32512, 32512);
		sum += q.x + q.y + q.z + q.w;
		const ivec4 h = (q + 128) >> 8;
		const uvec4 hb = uvec4(h) & 0xffu, lb = uvec4(q - 256 * h) & 0xffu;
		hi[k] = hb.x | (hb.y << 8) | (hb.z << 16) | (hb.w << 24);
		lo[k] = lb.x | (lb.y << 8) | (lb.z << 16) | (lb.w << 24);
	}
	return amax / ACT16_QMAX;
}
