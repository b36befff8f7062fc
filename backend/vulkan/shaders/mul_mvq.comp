#version 450
// mul_mvq.comp: mul_mv.comp's matrix-vector product on 8-bit integer dot
// products (GL_EXT_integer_dot_product, VK_KHR_shader_integer_dot_product),
// compiled per type into mul_mvq_<type>: the weights' units as signed
// bytes (quant8.glsl) against the activations quantized to 16-bit integers
// in two planes of bytes (hi, lo), in chunks of 16 with a scale and a sum
// each (act16.glsl):
//   y[t*ldy + r] = (add != 0 ? y[t*ldy + r] : 0)
//                  + sum over runs of 16 (a*dx*(256*dot(q, hi) + dot(q, lo)) + c*sx)
// for rows r < rows and tokens t < n: a run's weights a*q + c, its
// activations dx*(256*hi + lo) with sx = dx*sum(256*hi + lo); the dot
// products exact in int32, the rest accumulated in float32.
//
// With FUSED (specialization id 3) 0 the activations are quant_act.comp's
// (xq, xm); with 1 the workgroup quantizes its float input itself as it
// reads it, in input mode XMODE (id 4; act16.glsl's, as mul_mv's: 0 x,
// 1 RMSNorm(x) * gain, its 1/rms applied to the sums at the end, 2 the
// SwiGLU of the packed gate-and-up rows), to the same integers as
// quant_act's: the quantizing dispatch and its barrier are spared, at the
// cost of every workgroup reading the n tokens' inputs (the Go side
// chooses it for a few tokens and small products: mulMVQFused).
//
// Push constants (Go: pushMulMVQ in intdot.go):
//   uint64 w     address of row 0 of W (16-byte aligned); row r starts at
//                w + r*rowBytes
//   uint64 xq    the n*cols*2 bytes of activations (quant_act's; FUSED 0)
//   uint64 xm    their n*cols/16 (dx, sx) pairs of float32 (FUSED 0)
//   uint64 y     address of the outputs, float32
//   uint32 rows, cols, n, rowBytes, ldy, add
//   uint64 x     the float32 input (FUSED 1), rows of cols values (of
//                xstride with XMODE 2), 16-byte aligned
//   uint64 gain  cols float32 gains (XMODE 1)
//   float  eps   (XMODE 1)
//   uint32 xstride (XMODE 2)
// cols is a multiple of the format's block (QK).
//
// Specialization: id 0 local_size_x (L), id 1 ROWS (R), id 2 TOKENS (T),
// as mul_mv's: a workgroup computes a tile of R rows by T tokens, walking
// the tile's rows unit by unit (32 values), invocation i taking units i,
// i+L, ... of each row; reading each unit of the R rows once for all T
// tokens. Partial sums are added within subgroups, then across them in
// shared memory. Dispatch ceil(rows/R) x ceil(n/T) workgroups; either
// count may be clamped, the workgroups then stride.

#extension GL_EXT_integer_dot_product : require
#extension GL_GOOGLE_include_directive : require

#include "common.glsl"

layout(local_size_x_id = 0) in;

#include "quant8.glsl"
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint TOKENS = 1;
layout(constant_id = 3) const uint FUSED = 0;
layout(constant_id = 4) const uint XMODE = 0;

#include "act16.glsl"

layout(push_constant, std430) uniform Push {
	uint64_t w;
	uint64_t xq;
	uint64_t xm;
	uint64_t y;
	uint rows;
	uint cols;
	uint n;
	uint rowBytes;
	uint ldy;
	uint add;
	uint64_t x;
	uint64_t gain;
	float eps;
	uint xstride;
} p;

shared float red[ROWS * TOKENS];
shared float redss[TOKENS];

// dot16 is the dot product of the 16 signed bytes of w and x.
int dot16(uvec4 w, uvec4 x) {
	return dotPacked4x8EXT(int(w.x), int(x.x)) + dotPacked4x8EXT(int(w.y), int(x.y)) +
	       dotPacked4x8EXT(int(w.z), int(x.z)) + dotPacked4x8EXT(int(w.w), int(x.w));
}

// dot16x2 is the dot product of the 16 signed bytes of w and the 16-bit
// integers 256*hi + lo (exact: |w| <= 128, |256*hi + lo| <= 32512).
int dot16x2(uvec4 w, uvec4 hi, uvec4 lo) { return 256 * dot16(w, hi) + dot16(w, lo); }

// tile computes rows r0 .. r0+ROWS-1 (those below p.rows) for tokens t0 ..
// t0+nt-1 (nt <= TOKENS).
void tile(uint r0, uint t0, uint nt) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / QK * UNITS;
	const uint nc = p.cols / 16;
	UVec4s XQ = UVec4s(p.xq);
	UVec2s XM = UVec2s(p.xm);
	F32s Y = F32s(p.y);

	float acc[ROWS][TOKENS];
	float ss[TOKENS];  // FUSED, XMODE 1: each token's sum of squares
	for (uint t = 0; t < TOKENS; t++) {
		ss[t] = 0.0;
		for (uint r = 0; r < ROWS; r++) {
			acc[r][t] = 0.0;
		}
	}
	for (uint u = tid; u < nunits; u += gl_WorkGroupSize.x) {
		const uint b = u / UNITS, j = u % UNITS;
		uvec4 qa[ROWS], qb[ROWS];
		vec4 ac[ROWS];
		for (uint r = 0; r < ROWS; r++) {
			if (r0 + r < p.rows) {
				unit_q(p.w + uint64_t(r0 + r) * p.rowBytes + uint64_t(b) * BB, j, qa[r], qb[r], ac[r]);
			} else {
				qa[r] = uvec4(0);
				qb[r] = uvec4(0);
				ac[r] = vec4(0.0);
			}
		}
		const uvec2 pos = (b * QK + unit_pos(j)) / 16;  // in chunks of 16
		for (uint t = 0; t < TOKENS; t++) {
			if (t < nt) {
				uvec4 ha, la, hb, lb;
				vec2 ma, mb;
				if (FUSED == 1) {
					const uint xt = (t0 + t) * (XMODE == 2 ? p.xstride / 4 : p.cols / 4);
					vec4 v[4];
					int sum;
					act16_load(p.x, p.gain, xt, p.cols, pos.x, v, ss[t]);
					ma.x = act16_quant(v, ha, la, sum);
					ma.y = ma.x * float(sum);
					act16_load(p.x, p.gain, xt, p.cols, pos.y, v, ss[t]);
					mb.x = act16_quant(v, hb, lb, sum);
					mb.y = mb.x * float(sum);
				} else {
					const uint ct = (t0 + t) * nc;
					const uint ia = 2 * (ct + pos.x), ib = 2 * (ct + pos.y);
					ha = XQ.v[ia];
					la = XQ.v[ia + 1];
					hb = XQ.v[ib];
					lb = XQ.v[ib + 1];
					ma = uintBitsToFloat(XM.v[ct + pos.x]);
					mb = uintBitsToFloat(XM.v[ct + pos.y]);
				}
				for (uint r = 0; r < ROWS; r++) {
					float s = ac[r].x * ma.x * float(dot16x2(qa[r], ha, la)) + ac[r].y * mb.x * float(dot16x2(qb[r], hb, lb));
					if (HAS_C) {
						s += ac[r].z * ma.y + ac[r].w * mb.y;
					}
					acc[r][t] += s;
				}
			}
		}
	}

	// Sums within each subgroup, then the subgroups' in turn.
	for (uint r = 0; r < ROWS; r++) {
		for (uint t = 0; t < TOKENS; t++) {
			acc[r][t] = subgroupAdd(acc[r][t]);
		}
	}
	const bool norm = FUSED == 1 && XMODE == 1;
	if (norm) {
		for (uint t = 0; t < TOKENS; t++) {
			ss[t] = subgroupAdd(ss[t]);
		}
	}
	for (uint s = 0; s < gl_NumSubgroups; s++) {
		if (gl_SubgroupID == s && subgroupElect()) {
			for (uint r = 0; r < ROWS; r++) {
				for (uint t = 0; t < TOKENS; t++) {
					red[t * ROWS + r] = (s == 0 ? 0.0 : red[t * ROWS + r]) + acc[r][t];
				}
			}
			if (norm) {
				for (uint t = 0; t < TOKENS; t++) {
					redss[t] = (s == 0 ? 0.0 : redss[t]) + ss[t];
				}
			}
		}
		barrier();
	}
	for (uint k = tid; k < ROWS * TOKENS; k += gl_WorkGroupSize.x) {
		const uint r = r0 + k % ROWS, t = k / ROWS;
		if (r < p.rows && t < nt) {
			const uint i = (t0 + t) * p.ldy + r;
			float v = red[k];
			if (norm) {
				v *= 1.0 / sqrt(redss[t] / float(p.cols) + p.eps);
			}
			Y.v[i] = (p.add != 0 ? Y.v[i] : 0.0) + v;
		}
	}
	barrier();  // red is reused by the next tile
}

void main() {
	lut_init();  // the level tables of IQ4_NL, IQ4_XS and MXFP4
	const uint ntiles = (p.rows + ROWS - 1) / ROWS;
	for (uint t0 = gl_WorkGroupID.y * TOKENS; t0 < p.n; t0 += gl_NumWorkGroups.y * TOKENS) {
		for (uint i = gl_WorkGroupID.x; i < ntiles; i += gl_NumWorkGroups.x) {
			tile(i * ROWS, t0, min(TOKENS, p.n - t0));
		}
	}
}
