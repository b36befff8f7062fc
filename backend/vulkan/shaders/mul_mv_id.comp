#version 450
// mul_mv_id.comp: the experts' matrix-vector products of a mixture of
// experts (arch.OpMoE), compiled per weight type (quant.glsl, TYPE_<name>)
// into mul_mv_id_<type>. W is a stack of experts' matrices of rows rows
// each (expert e's row r at w + (e*rows + r)*rowBytes); pair q (a token's
// slot) multiplies the matrix of expert ids[q] by its activations:
//   y[q*ldy + r] = sum_c W[ids[q]][r][c] * x[(q / xdiv)*cols + c]
// for rows r < rows and pairs q < pairs, accumulated in float32. xdiv is
// the pairs a row of x serves: the slots of a token (TopK) when every
// slot reads the token's normalized input, 1 when each pair has its own
// (the down product of the pairs' activations). Only the chosen experts'
// rows are read. An expert id out of range is clamped into it (a read
// past the stack could lose the device).
//
// Push constants (Go: pushMulMVID in moe.go):
//   uint64 w     address of expert 0's row 0 (16-byte aligned)
//   uint64 x     address of the activations, float32 rows of cols values
//                (16-byte aligned)
//   uint64 y     address of the outputs, float32
//   uint64 ids   address of pairs int32 expert ids
//   uint32 rows  rows of one expert's matrix
//   uint32 cols  a multiple of the format's block (QK)
//   uint32 pairs, rowBytes, xdiv, ldy, experts
//
// Specialization: id 0 local_size_x (L), id 1 ROWS (R). A workgroup
// computes R rows of one pair's expert: invocation i takes the 16-value
// units i, i+L, ... of each row (mul_mv.comp's walk), partial sums added
// within subgroups, then across them in shared memory. Dispatch
// ceil(rows/R) x pairs workgroups; either count may be clamped to the
// device's limit, the workgroups then stride over the rest.

#include "common.glsl"
#include "quant.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;

layout(push_constant, std430) uniform Push {
	uint64_t w;
	uint64_t x;
	uint64_t y;
	uint64_t ids;
	uint rows;
	uint cols;
	uint pairs;
	uint rowBytes;
	uint xdiv;
	uint ldy;
	uint experts;
} p;

shared float red[ROWS];

// tile computes rows r0 .. r0+ROWS-1 (those below p.rows) of pair q.
void tile(uint r0, uint q) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / QK * UNITS;
	const uint e = uint(clamp(I32s(p.ids).v[q], 0, int(p.experts) - 1));
	const uint64_t w = p.w + uint64_t(e) * p.rows * p.rowBytes;
	Vec4s X = Vec4s(p.x);
	const uint xt = (q / p.xdiv) * (p.cols / 4);

	float acc[ROWS];
	for (uint r = 0; r < ROWS; r++) {
		acc[r] = 0.0;
	}
	for (uint u = tid; u < nunits; u += gl_WorkGroupSize.x) {
		const uint b = u / UNITS, j = u % UNITS;
		const uvec2 pos = (b * QK + unit_pos(j)) / 4; // in vec4s
		const vec4 x0 = X.v[xt + pos.x], x1 = X.v[xt + pos.x + 1];
		const vec4 x2 = X.v[xt + pos.y], x3 = X.v[xt + pos.y + 1];
		for (uint r = 0; r < ROWS; r++) {
			if (r0 + r < p.rows) {
				vec4 v[4];
				dequant_unit(w + uint64_t(r0 + r) * p.rowBytes + uint64_t(b) * BB, j, v);
				acc[r] += dot(v[0], x0) + dot(v[1], x1) + dot(v[2], x2) + dot(v[3], x3);
			}
		}
	}

	// Sums within each subgroup, then the subgroups' in turn.
	for (uint r = 0; r < ROWS; r++) {
		acc[r] = subgroupAdd(acc[r]);
	}
	for (uint s = 0; s < gl_NumSubgroups; s++) {
		if (gl_SubgroupID == s && subgroupElect()) {
			for (uint r = 0; r < ROWS; r++) {
				red[r] = (s == 0 ? 0.0 : red[r]) + acc[r];
			}
		}
		barrier();
	}
	F32s Y = F32s(p.y);
	for (uint r = tid; r < ROWS; r += gl_WorkGroupSize.x) {
		if (r0 + r < p.rows) {
			Y.v[q * p.ldy + r0 + r] = red[r];
		}
	}
	barrier(); // red is reused by the next tile
}

void main() {
	const uint ntiles = (p.rows + ROWS - 1) / ROWS;
	for (uint q = gl_WorkGroupID.y; q < p.pairs; q += gl_NumWorkGroups.y) {
		for (uint i = gl_WorkGroupID.x; i < ntiles; i += gl_NumWorkGroups.x) {
			tile(i * ROWS, q);
		}
	}
}
