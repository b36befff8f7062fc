#version 450
// quant_act.comp: the activations of mul_mvq (the integer dot product
// decode products), quantized to 16-bit integers held as two planes of
// signed bytes (as CUDA's quant_act for its Q8_0 products): for each of n
// tokens, its cols input values v in chunks of 16 (cols a multiple of
// 32), chunk c as
//   q[i] = roundEven(v[i] * QMAX / max|v|), QMAX = 32512 = 127*256,
//   hi[i] = round(q[i] / 256) (within -127..127), lo[i] = q[i] - 256*hi[i]
//   (within -128..127), d = max|v| / QMAX, s = d * sum q[i],
// so that a dot product with signed bytes w is 256*dot(w, hi) + dot(w, lo)
// in two 8-bit integer dot products, exact; the rounding of v is 1/65024
// of the chunk's largest value (8-bit activations' 1/254 put a model's
// logits 4e-3 to 2e-2 relative L2 off, over the tests' 2e-3). The 16 bytes of
// hi, then the 16 of lo, at xq + 32*(t*cols/16 + c); (d, s) as two
// float32 at xm + 8*(t*cols/16 + c).
//
// The input v is, with XMODE (specialization id 1):
//   0: x itself, token t's cols values at x + 4*t*cols;
//   1: RMSNorm(x_t) * gain, as rms_norm computes it (each workgroup adds
//      the token's squares itself: the grid spreads a token's chunks);
//   2: silu(g) * u, the SwiGLU of the packed gate-and-up row of token t:
//      g at x + 4*t*xstride, u cols values after it.
//
// Push constants (Go: pushQuantAct in intdot.go):
//   uint64 x     float32 activations (16-byte aligned)
//   uint64 gain  cols float32 gains (XMODE 1)
//   uint64 xq    n*cols*2 bytes (16-byte aligned)
//   uint64 xm    n*cols/16 pairs of float32 (8-byte aligned)
//   uint32 cols, n
//   float  eps   (XMODE 1)
//   uint32 xstride (XMODE 2)
//
// Specialization: id 0 local_size_x (WG), id 1 XMODE. Invocation i of
// workgroup (gx, t) quantizes chunk gx*WG + i of token t: dispatch
// ceil(cols/16/WG) x n workgroups; fewer in y (at most 65535) stride over
// the tokens.

#include "common.glsl"
#include "ops.glsl"

layout(constant_id = 1) const uint XMODE = 0;

layout(push_constant, std430) uniform Push {
	uint64_t x;
	uint64_t gain;
	uint64_t xq;
	uint64_t xm;
	uint cols;
	uint n;
	float eps;
	uint xstride;
} p;

vec4 silu_mul(vec4 g, vec4 u) { return g / (1.0 + exp(-g)) * u; }

// quant quantizes chunk c of token t (those below the row's chunks);
// called in uniform control flow (XMODE 1's sum over the workgroup).
void quant(uint t, uint c) {
	const uint nc = p.cols / 16;
	Vec4s X = Vec4s(p.x);
	const uint xt = t * (XMODE == 2 ? p.xstride / 4 : p.cols / 4);
	float scale = 1.0;
	if (XMODE == 1) {
		float ss = 0.0;
		for (uint i = gl_LocalInvocationID.x; i < p.cols / 4; i += WG) {
			const vec4 v = X.v[xt + i];
			ss += dot(v, v);
		}
		ss = wg_sum(ss);
		scale = 1.0 / sqrt(ss / float(p.cols) + p.eps);
	}
	if (c >= nc) {
		return;
	}
	vec4 v[4];
	for (uint k = 0; k < 4; k++) {
		v[k] = X.v[xt + 4 * c + k];
		if (XMODE == 1) {
			precise vec4 s = v[k] * scale;
			v[k] = s * Vec4s(p.gain).v[4 * c + k];
		} else if (XMODE == 2) {
			v[k] = silu_mul(v[k], X.v[xt + p.cols / 4 + 4 * c + k]);
		}
	}
	vec4 a = max(max(abs(v[0]), abs(v[1])), max(abs(v[2]), abs(v[3])));
	const float amax = max(max(a.x, a.y), max(a.z, a.w));
	const float QMAX = 32512.0;
	// Chunks below 1e-30 (QMAX/amax would overflow) are zeros.
	const float inv = amax > 1e-30 ? QMAX / amax : 0.0;
	uvec4 hi, lo;
	int sum = 0;
	for (uint k = 0; k < 4; k++) {
		const ivec4 q = clamp(ivec4(roundEven(v[k] * inv)), -32512, 32512);
		sum += q.x + q.y + q.z + q.w;
		const ivec4 h = (q + 128) >> 8;
		const uvec4 hb = uvec4(h) & 0xffu, lb = uvec4(q - 256 * h) & 0xffu;
		hi[k] = hb.x | (hb.y << 8) | (hb.z << 16) | (hb.w << 24);
		lo[k] = lb.x | (lb.y << 8) | (lb.z << 16) | (lb.w << 24);
	}
	const uint i = t * nc + c;
	UVec4s(p.xq).v[2 * i] = hi;
	UVec4s(p.xq).v[2 * i + 1] = lo;
	const float d = amax / QMAX;
	UVec2s(p.xm).v[i] = floatBitsToUint(vec2(d, d * float(sum)));
}

void main() {
	// The workgroups stride over the tokens past the grid's (uniform).
	for (uint t = gl_WorkGroupID.y; t < p.n; t += gl_NumWorkGroups.y) {
		quant(t, gl_WorkGroupID.x * WG + gl_LocalInvocationID.x);
	}
}
