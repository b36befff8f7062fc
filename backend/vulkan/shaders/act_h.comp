#version 450
// act_h.comp: the activations of mul_mm_cm (the prompt products on
// cooperative matrices) as float16, each token's scaled by a power of two
// as CUDA's qact_h scales them: token t's cols values at x + 4*t*cols,
// times 2^(12-e) where 2^e is the least power of two above their largest
// |value| (e = 0 for a token of zeros or with a value that is not finite;
// e at least -100), rounded to float16 into xh + 2*t*cols, and 2^(e-12)
// into sx[t], by which mul_mm_cm multiplies the token's sums. The largest
// value lands in [2^11, 2^12): far from float16's largest, 65,504, and
// from its subnormals, whatever the activations' range; the scaling
// itself is exact.
//
// Push constants (Go: pushActH in mm.go):
//   uint64 x   n*cols float32 (16-byte aligned)
//   uint64 xh  n*cols float16 (8-byte aligned)
//   uint64 sx  n float32
//   uint32 cols (a multiple of 4), n
//
// Specialization: id 0 local_size_x (WG). Grid: one workgroup a token,
// groups2D(n, 1).

#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
	uint64_t x;
	uint64_t xh;
	uint64_t sx;
	uint cols;
	uint n;
} p;

void main() {
	const uint t = group_index();
	if (t >= p.n) {
		return; // the whole workgroup: barriers stay uniform
	}
	Vec4s X = Vec4s(p.x);
	const uint base = t * (p.cols / 4);
	float amax = 0.0;
	for (uint i = gl_LocalInvocationID.x; i < p.cols / 4; i += WG) {
		const vec4 a = abs(X.v[base + i]);
		amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
	}
	amax = wg_max(amax);
	int e = 0;
	if (amax > 0.0 && amax <= 3.4028234664e38) {
		frexp(amax, e); // amax < 2^e <= 2 amax
		e = max(e, -100);
	}
	const float inv = ldexp(1.0, 12 - e);
	F16Vec4s XH = F16Vec4s(p.xh);
	for (uint i = gl_LocalInvocationID.x; i < p.cols / 4; i += WG) {
		XH.v[base + i] = f16vec4(X.v[base + i] * inv);
	}
	if (gl_LocalInvocationID.x == 0) {
		F32s(p.sx).v[t] = ldexp(1.0, e - 12);
	}
}
