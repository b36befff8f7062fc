#version 450
// mul_mv_id.comp: the experts' matrix-vector products of a mixture of
// experts (arch.OpMoE) in decode passes, compiled per weight type
// (quant.glsl, TYPE_<name>) into mul_mv_id_<type>. W is a stack of
// experts' matrices of rows rows each (expert e's row r at w + (e*rows +
// r)*rowBytes); pair q (a token's slot) multiplies the matrix of expert
// ids[q] by its input x_q:
//   COMBINE 0: y[q*ldy + r] = (flags & 1 ? y[q*ldy + r] : 0)
//                             + (W[ids[q]] x_q)[r] (+ dbias[ids[q]*rows + r] with flags & 2)
//              for the pairs q < n;
//   COMBINE 1: y[t*ldy + r] = (flags & 1 ? y[t*ldy + r] : 0)
//                             + sum_j wts[q] * ((W[ids[q]] x_q)[r] (+ dbias[ids[q]*rows + r]))
//              for the tokens t < n, q = t*k + j over the slots j < k:
//              the down products weighted and summed into the residual
//              stream in one dispatch (moe_combine's sum, slot by slot).
// Only the chosen experts' rows are read. An expert id out of range is
// clamped into it (a read past the stack could lose the device).
//
// The input x_q (XMODE, specialization id 2), accumulated in float32:
//   0: x[(q / xdiv)*cols ..]: xdiv is the pairs a row of x serves (the
//      slots of a token, TopK, when every slot reads the token's input);
//   1: RMSNorm(x_t) * gain of t = q / xdiv, its sum of squares gathered
//      as the loop reads it (mul_mv.comp's XMODE 1; COMBINE 0 only);
//   2: Act(g, u) of the pair's packed gate-and-up row, g at x +
//      4*q*xstride, u cols values after it, each plus its expert's bias
//      (gbias, ubias: experts*cols values) with flags & 4; Act by act: 0
//      SwiGLU, 1 OpenAI's clamped SwiGLU, 2 GeGLU (moe_glu.comp's).
//
// Push constants (Go: pushMulMVID in moe.go):
//   uint64 w      address of expert 0's row 0 (16-byte aligned)
//   uint64 x      address of the activations, float32 (16-byte aligned)
//   uint64 y      address of the outputs, float32
//   uint64 ids    address of the pairs' int32 expert ids
//   uint64 gain   XMODE 1: cols float32 gains
//   uint64 wts    COMBINE 1: the pairs' float32 gating weights
//   uint64 gbias, ubias   XMODE 2 with flags & 4: experts*cols float32
//   uint64 dbias  flags & 2: experts*rows float32
//   uint32 rows   rows of one expert's matrix
//   uint32 cols   a multiple of the format's block (QK)
//   uint32 n      pairs (COMBINE 0) or tokens (COMBINE 1)
//   uint32 rowBytes, xdiv, ldy, experts, xstride, act, k, flags
//   float  eps    XMODE 1
//
// Specialization: id 0 local_size_x (L), id 1 ROWS (R), id 2 XMODE, id 3
// COMBINE. A workgroup computes R rows of one pair's expert (of each of a
// token's pairs in turn with COMBINE 1): invocation i takes the 16-value
// units i, i+L, ... of each row (mul_mv.comp's walk), partial sums added
// within subgroups, then across them in shared memory. Dispatch
// ceil(rows/R) x n workgroups; either count may be clamped to the
// device's limit, the workgroups then stride over the rest.

#include "common.glsl"
#include "quant.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint XMODE = 0;
layout(constant_id = 3) const uint COMBINE = 0;

layout(push_constant, std430) uniform Push {
	uint64_t w;
	uint64_t x;
	uint64_t y;
	uint64_t ids;
	uint64_t gain;
	uint64_t wts;
	uint64_t gbias;
	uint64_t ubias;
	uint64_t dbias;
	uint rows;
	uint cols;
	uint n;
	uint rowBytes;
	uint xdiv;
	uint ldy;
	uint experts;
	uint xstride;
	uint act;
	uint k;
	uint flags;
	float eps;
} p;

shared float red[ROWS];
shared float redss;

// expert is pair q's expert, clamped below p.experts.
uint expert(uint q) { return uint(clamp(I32s(p.ids).v[q], 0, int(p.experts) - 1)); }

// glu is the gated activation act of g and u, element-wise.
vec4 glu(vec4 g, vec4 u) {
	if (p.act == 1u) {
		g = min(g, 7.0);             // arch.SwiGLUOAILimit
		u = clamp(u, -7.0, 7.0);
		return g / (1.0 + exp(-1.702 * g)) * (u + 1.0); // arch.SwiGLUOAIAlpha
	}
	if (p.act == 2u) {
		const vec4 z2 = 2.0 * 0.7978845608028654 * (g + 0.044715 * g * g * g); // 2 sqrt(2/pi) (...)
		return g / (1.0 + exp(-z2)) * u;
	}
	return g / (1.0 + exp(-g)) * u;
}

// tile computes rows r0 .. r0+ROWS-1 (those below p.rows) of item i: a
// pair (COMBINE 0) or a token's pairs (COMBINE 1).
void tile(uint r0, uint i) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / QK * UNITS;
	const uint slots = COMBINE == 1 ? p.k : 1;
	Vec4s X = Vec4s(p.x);

	float acc[ROWS];
	for (uint r = 0; r < ROWS; r++) {
		acc[r] = 0.0;
	}
	float ss = 0.0; // XMODE 1: the sum of squares of x_t
	for (uint j = 0; j < slots; j++) {
		const uint q = COMBINE == 1 ? i * p.k + j : i;
		const uint e = expert(q);
		const float wq = COMBINE == 1 ? F32s(p.wts).v[q] : 1.0;
		const uint64_t w = p.w + uint64_t(e) * p.rows * p.rowBytes;
		const uint xt = XMODE == 2 ? q * (p.xstride / 4) : (q / p.xdiv) * (p.cols / 4);
		for (uint u = tid; u < nunits; u += gl_WorkGroupSize.x) {
			const uint b = u / UNITS, jj = u % UNITS;
			const uvec2 pos = (b * QK + unit_pos(jj)) / 4; // in vec4s
			vec4 x0 = X.v[xt + pos.x], x1 = X.v[xt + pos.x + 1];
			vec4 x2 = X.v[xt + pos.y], x3 = X.v[xt + pos.y + 1];
			if (XMODE == 1) {
				Vec4s G = Vec4s(p.gain);
				ss += dot(x0, x0) + dot(x1, x1) + dot(x2, x2) + dot(x3, x3);
				x0 *= G.v[pos.x];
				x1 *= G.v[pos.x + 1];
				x2 *= G.v[pos.y];
				x3 *= G.v[pos.y + 1];
			} else if (XMODE == 2) {
				const uint ut = xt + p.cols / 4;
				vec4 u0 = X.v[ut + pos.x], u1 = X.v[ut + pos.x + 1];
				vec4 u2 = X.v[ut + pos.y], u3 = X.v[ut + pos.y + 1];
				if ((p.flags & 4u) != 0u) {
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
				if (r0 + r < p.rows) {
					vec4 v[4];
					dequant_unit(w + uint64_t(r0 + r) * p.rowBytes + uint64_t(b) * BB, jj, v);
					acc[r] += wq * (dot(v[0], x0) + dot(v[1], x1) + dot(v[2], x2) + dot(v[3], x3));
				}
			}
		}
	}

	// Sums within each subgroup, then the subgroups' in turn.
	for (uint r = 0; r < ROWS; r++) {
		acc[r] = subgroupAdd(acc[r]);
	}
	if (XMODE == 1) {
		ss = subgroupAdd(ss);
	}
	for (uint s = 0; s < gl_NumSubgroups; s++) {
		if (gl_SubgroupID == s && subgroupElect()) {
			for (uint r = 0; r < ROWS; r++) {
				red[r] = (s == 0 ? 0.0 : red[r]) + acc[r];
			}
			if (XMODE == 1) {
				redss = (s == 0 ? 0.0 : redss) + ss;
			}
		}
		barrier();
	}
	F32s Y = F32s(p.y);
	for (uint r = tid; r < ROWS; r += gl_WorkGroupSize.x) {
		if (r0 + r < p.rows) {
			float v = red[r];
			if (XMODE == 1) {
				v *= 1.0 / sqrt(redss / float(p.cols) + p.eps);
			}
			if ((p.flags & 2u) != 0u) {
				for (uint j = 0; j < slots; j++) {
					const uint q = COMBINE == 1 ? i * p.k + j : i;
					const float wq = COMBINE == 1 ? F32s(p.wts).v[q] : 1.0;
					v += wq * F32s(p.dbias).v[expert(q) * p.rows + r0 + r];
				}
			}
			const uint o = i * p.ldy + r0 + r;
			Y.v[o] = ((p.flags & 1u) != 0u ? Y.v[o] : 0.0) + v;
		}
	}
	barrier(); // red is reused by the next tile
}

void main() {
	const uint ntiles = (p.rows + ROWS - 1) / ROWS;
	for (uint i = gl_WorkGroupID.y; i < p.n; i += gl_NumWorkGroups.y) {
		for (uint t = gl_WorkGroupID.x; t < ntiles; t += gl_NumWorkGroups.x) {
			tile(t * ROWS, i);
		}
	}
}
