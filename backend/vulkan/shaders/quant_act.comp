#version 450
// quant_act.comp: the activations of mul_mvq (the integer dot product
// decode products), quantized to 16-bit integers held as two planes of
// signed bytes (as CUDA's quant_act for its Q8_0 products), in chunks of
// 16 as act16.glsl defines them (mul_mvq quantizes its input the same way
// itself where it takes a few tokens whole). The 16 bytes of chunk c of
// token t's hi, then the 16 of its lo, at xq + 32*(t*cols/16 + c); its
// (d, s) as two float32 at xm + 8*(t*cols/16 + c), s = d * sum q[i].
//
// The input is, with XMODE (specialization id 1), act16.glsl's:
//   0: x itself, token t's cols values at x + 4*t*cols;
//   1: RMSNorm(x_t) * gain, as rms_norm computes it: x_t * gain
//      quantized, its scales d times 1/rms(x_t) (each workgroup adds the
//      token's squares itself: the grid spreads a token's chunks);
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

#include "act16.glsl"

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

// quant quantizes chunk c of token t (those below the row's chunks);
// called in uniform control flow (XMODE 1's sum over the workgroup).
void quant(uint t, uint c) {
	const uint nc = p.cols / 16;
	const uint xt = t * (XMODE == 2 ? p.xstride / 4 : p.cols / 4);
	float scale = 1.0;
	if (XMODE == 1) {
		Vec4s X = Vec4s(p.x);
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
	float unused = 0.0;
	act16_load(p.x, p.gain, xt, p.cols, c, v, unused);
	uvec4 hi, lo;
	int sum;
	const float d = act16_quant(v, hi, lo, sum) * scale;
	const uint i = t * nc + c;
	UVec4s(p.xq).v[2 * i] = hi;
	UVec4s(p.xq).v[2 * i + 1] = lo;
	UVec2s(p.xm).v[i] = floatBitsToUint(vec2(d, d * float(sum)));
}

void main() {
	// The workgroups stride over the tokens past the grid's (uniform).
	for (uint t = gl_WorkGroupID.y; t < p.n; t += gl_NumWorkGroups.y) {
		quant(t, gl_WorkGroupID.x * WG + gl_LocalInvocationID.x);
	}
}
