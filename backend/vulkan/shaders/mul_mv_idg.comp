#version 450
// mul_mv_idg.comp: the experts' products of a mixture of experts in
// large decode batches (arch.OpMoE), mul_mv.comp's tiles of tokens over
// the pairs grouped by expert (moe_group.comp), compiled per weight type
// (quant.glsl, TYPE_<name>) into mul_mv_idg_<type>: W is a stack of
// experts' matrices of rows rows each (expert e's row r at w + (e*rows +
// r)*rowBytes), and for each pair q of moe_group's tiles
//   y[q*ldy + r] = sum_c W[ids[q]][r][c] * x_q[c]
// for rows r < rows, accumulated in float32 (mul_mv_id.comp's product
// with COMBINE 0, without its flags 1 and 2). A workgroup computes ROWS
// rows of one tile: up to TOKENS pairs of one expert, each unit of the
// expert's rows decoded once for them all. Only the chosen experts' rows
// are read.
//
// The input x_q (XMODE, specialization id 2): mul_mv_id.comp's.
//   0: x[(q / xdiv)*cols ..];
//   1: RMSNorm(x_t) * gain of t = q / xdiv;
//   2: Act(g, u) of the pair's packed gate-and-up row at x + 4*q*xstride
//      (u cols values after g), each plus its expert's bias (gbias,
//      ubias) with flags & 4; Act by act: 0 SwiGLU, 1 OpenAI's clamped
//      SwiGLU, 2 GeGLU.
//
// Push constants (Go: pushMulMVIDG in moe.go):
//   uint64 w, x, y          as mul_mv_id's
//   uint64 order, tiles     moe_group's: the pairs grouped by expert and
//                           ntiles tiles (expert, first, pairs) int32,
//                           pairs at most TOKENS (0: an empty tile)
//   uint64 gain, gbias, ubias   as mul_mv_id's
//   uint32 rows, cols, rowBytes, xdiv, ldy, ntiles, experts, xstride,
//          act, flags
//   float  eps
//
// Specialization: id 0 local_size_x (L), id 1 ROWS (R), id 2 XMODE, id 3
// TOKENS (T). Dispatch ceil(rows/R) x ntiles workgroups; either count may
// be clamped to the device's limit, the workgroups then stride over the
// rest.

#include "common.glsl"
#include "quant.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint XMODE = 0;
layout(constant_id = 3) const uint TOKENS = 8;

layout(push_constant, std430) uniform Push {
	uint64_t w;
	uint64_t x;
	uint64_t y;
	uint64_t order;
	uint64_t tiles;
	uint64_t gain;
	uint64_t gbias;
	uint64_t ubias;
	uint rows;
	uint cols;
	uint rowBytes;
	uint xdiv;
	uint ldy;
	uint ntiles;
	uint experts;
	uint xstride;
	uint act;
	uint flags;
	float eps;
} p;

shared float red[ROWS * TOKENS];
shared float redss[TOKENS];

// glu is the gated activation act of g and u, element-wise
// (mul_mv_id.comp's).
vec4 glu(vec4 g, vec4 u) {
	if (p.act == 1u) {
		g = min(g, 7.0);
		u = clamp(u, -7.0, 7.0);
		return g / (1.0 + exp(-1.702 * g)) * (u + 1.0);
	}
	if (p.act == 2u) {
		const vec4 z2 = 2.0 * 0.7978845608028654 * (g + 0.044715 * g * g * g);
		return g / (1.0 + exp(-z2)) * u;
	}
	return g / (1.0 + exp(-g)) * u;
}

// tile computes rows r0 .. r0+ROWS-1 (those below p.rows) of the nt
// pairs qs of expert e.
void tile(uint r0, uint e, uint nt, uint qs[TOKENS]) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / QK * UNITS;
	const uint64_t wbase = p.w + uint64_t(e) * p.rows * p.rowBytes;
	Vec4s X = Vec4s(p.x);

	float acc[ROWS][TOKENS];
	float ss[TOKENS];
	for (uint t = 0; t < TOKENS; t++) {
		ss[t] = 0.0;
		for (uint r = 0; r < ROWS; r++) {
			acc[r][t] = 0.0;
		}
	}
	for (uint u = tid; u < nunits; u += gl_WorkGroupSize.x) {
		const uint b = u / UNITS, j = u % UNITS;
		vec4 w[ROWS][4];
		for (uint r = 0; r < ROWS; r++) {
			if (r0 + r < p.rows) {
				dequant_unit(wbase + uint64_t(r0 + r) * p.rowBytes + uint64_t(b) * BB, j, w[r]);
			} else {
				w[r] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
			}
		}
		const uvec2 pos = (b * QK + unit_pos(j)) / 4; // in vec4s
		vec4 g0, g1, g2, g3;
		if (XMODE == 1) {
			Vec4s G = Vec4s(p.gain);
			g0 = G.v[pos.x];
			g1 = G.v[pos.x + 1];
			g2 = G.v[pos.y];
			g3 = G.v[pos.y + 1];
		}
		for (uint t = 0; t < TOKENS; t++) {
			if (t < nt) {
				const uint q = qs[t];
				const uint xt = XMODE == 2 ? q * (p.xstride / 4) : (q / p.xdiv) * (p.cols / 4);
				vec4 x0 = X.v[xt + pos.x], x1 = X.v[xt + pos.x + 1];
				vec4 x2 = X.v[xt + pos.y], x3 = X.v[xt + pos.y + 1];
				if (XMODE == 1) {
					ss[t] += dot(x0, x0) + dot(x1, x1) + dot(x2, x2) + dot(x3, x3);
					x0 *= g0;
					x1 *= g1;
					x2 *= g2;
					x3 *= g3;
				} else if (XMODE == 2) {
					const uint ut = xt + p.cols / 4;
					vec4 u0 = X.v[ut + pos.x], u1 = X.v[ut + pos.x + 1];
					vec4 u2 = X.v[ut + pos.y], u3 = X.v[ut + pos.y + 1];
					if ((p.flags & 4u) != 0u) { // the expert's biases (cached after the first token's reads)
						Vec4s GB = Vec4s(p.gbias), UB = Vec4s(p.ubias);
						const uint eb = e * (p.cols / 4);
						x0 += GB.v[eb + pos.x];
						x1 += GB.v[eb + pos.x + 1];
						x2 += GB.v[eb + pos.y];
						x3 += GB.v[eb + pos.y + 1];
						u0 += UB.v[eb + pos.x];
						u1 += UB.v[eb + pos.x + 1];
						u2 += UB.v[eb + pos.y];
						u3 += UB.v[eb + pos.y + 1];
					}
					x0 = glu(x0, u0);
					x1 = glu(x1, u1);
					x2 = glu(x2, u2);
					x3 = glu(x3, u3);
				}
				for (uint r = 0; r < ROWS; r++) {
					acc[r][t] += dot(w[r][0], x0) + dot(w[r][1], x1) + dot(w[r][2], x2) + dot(w[r][3], x3);
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
	if (XMODE == 1) {
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
			if (XMODE == 1) {
				for (uint t = 0; t < TOKENS; t++) {
					redss[t] = (s == 0 ? 0.0 : redss[t]) + ss[t];
				}
			}
		}
		barrier();
	}
	F32s Y = F32s(p.y);
	for (uint k = tid; k < ROWS * TOKENS; k += gl_WorkGroupSize.x) {
		const uint r = k % ROWS, t = k / ROWS;
		if (r0 + r < p.rows && t < nt) {
			float v = red[k];
			if (XMODE == 1) {
				v *= 1.0 / sqrt(redss[t] / float(p.cols) + p.eps);
			}
			Y.v[qs[t] * p.ldy + r0 + r] = v;
		}
	}
	barrier(); // red is reused by the next tile
}

void main() {
	const uint ntiles = (p.rows + ROWS - 1) / ROWS;
	for (uint k = gl_WorkGroupID.y; k < p.ntiles; k += gl_NumWorkGroups.y) {
		const uint e = uint(clamp(I32s(p.tiles).v[3 * k], 0, int(p.experts) - 1));
		const uint first = uint(I32s(p.tiles).v[3 * k + 1]);
		const uint nt = min(uint(I32s(p.tiles).v[3 * k + 2]), TOKENS);
		if (nt == 0) {
			continue; // uniform: the whole workgroup skips
		}
		uint qs[TOKENS];
		for (uint t = 0; t < TOKENS; t++) {
			qs[t] = t < nt ? uint(I32s(p.order).v[first + t]) : 0u;
		}
		for (uint i = gl_WorkGroupID.x; i < ntiles; i += gl_NumWorkGroups.x) {
			tile(i * ROWS, e, nt, qs);
		}
	}
}
