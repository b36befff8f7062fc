#version 450
// mul_mm_id.comp: the experts' products of a mixture of experts in
// prompts (arch.OpMoE), mul_mm.comp's tiles over the pairs grouped by
// expert (moe_group.comp), compiled per type into mul_mm_id_<type>: W is
// a stack of experts' matrices of rows rows each (expert e's row r at w +
// (e*rows + r)*rowBytes), and for each pair q (a token's slot) of the
// expert ids[q]
//   y[q*ldy + r] = sum_c W[ids[q]][r][c] * x[(q / xdiv)*cols + c]
// for rows r < rows, accumulated in float32: mul_mv_id.comp's product.
// A workgroup computes BM rows of one tile of moe_group's: up to BN pairs
// of one expert (order[first ..]), so that the expert's rows decoded into
// shared memory serve them all. Only the chosen experts' rows are read.
//
// Push constants (Go: pushMulMMID in moe.go):
//   uint64 w      address of expert 0's row 0 (16-byte aligned)
//   uint64 x      address of the activations, float32 rows of cols values
//                 (16-byte aligned)
//   uint64 y      address of the outputs, float32
//   uint64 order  address of the pairs grouped by expert, int32
//   uint64 tiles  address of ntiles tiles, each (expert, first, pairs)
//                 int32, pairs at most BN (0: an empty tile)
//   uint32 rows, cols, rowBytes, xdiv, ldy, ntiles, experts
//
// Specialization, slabs and the walk: mul_mm.comp's (id 0 local_size_x,
// ids 1..5 BM, BN, BK, TM, TN). Dispatch ceil(rows/BM) x ntiles
// workgroups; either count may be clamped to the device's limit, the
// workgroups then stride over the rest.

#include "common.glsl"
#include "quant.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;

layout(push_constant, std430) uniform Push {
	uint64_t w;
	uint64_t x;
	uint64_t y;
	uint64_t order;
	uint64_t tiles;
	uint rows;
	uint cols;
	uint rowBytes;
	uint xdiv;
	uint ldy;
	uint ntiles;
	uint experts;
} p;

// The slabs, row (token) major: the BK values of row m at As[m*BKP ..],
// token t's at Bs[t*BKP ..], as vec4s (As[(m*BKP)/4 ..]). The padding
// keeps each row 16-byte aligned and puts the vec4s of consecutive rows
// in different banks.
const uint BKU = BK / 16;  // units a row of the slab
const uint BKP = BK + 4;
shared vec4 As[BM * BKP / 4];
shared vec4 Bs[BN * BKP / 4];

// The tile's pairs (order's entries), its expert's matrix and its pairs.
shared uint qs[BN];
uint64_t wexp;
uint npairs;

// load fills the slabs with the units u0 .. u0+BKU-1 of rows r0.. of the
// tile's expert and of its pairs' activations. Invocations take
// consecutive units of a row (consecutive bytes of it), then the next row.
void load(uint r0, uint u0) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / 16;
	for (uint q = tid; q < BM * BKU; q += gl_WorkGroupSize.x) {
		const uint m = q / BKU, ju = q % BKU, u = u0 + ju;
		vec4 v[4];
		if (r0 + m < p.rows && u < nunits) {
			dequant_unit(wexp + uint64_t(r0 + m) * p.rowBytes + uint64_t(u / UNITS) * BB, u % UNITS, v);
		} else {
			v = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
		}
		const uint o = m * BKP + 16 * ju;
		for (uint i = 0; i < 4; i++) {
			As[o / 4 + i] = v[i];
		}
	}
	// The activations: four vec4s a unit (runs of 8 at pos.x and pos.y).
	Vec4s X = Vec4s(p.x);
	for (uint q = tid; q < BN * BKU * 4; q += gl_WorkGroupSize.x) {
		const uint t = q / (BKU * 4), ju = (q / 4) % BKU, part = q % 4, u = u0 + ju;
		vec4 v = vec4(0.0);
		if (t < npairs && u < nunits) {
			const uvec2 pos = unit_pos(u % UNITS);
			const uint c = (u / UNITS) * QK + (part < 2 ? pos.x + 4 * part : pos.y + 4 * (part - 2));
			v = X.v[((qs[t] / p.xdiv) * p.cols + c) / 4];
		}
		const uint o = t * BKP + 16 * ju + 4 * part;
		Bs[o / 4] = v;
	}
}

// store writes out value s of row r0+m, the tile's pair t if both are in
// range.
void store(uint r0, uint m, uint t, float s) {
	if (r0 + m < p.rows && t < npairs) {
		F32s(p.y).v[qs[t] * p.ldy + r0 + m] = s;
	}
}

// tile computes the outputs of rows r0.. of the tile's pairs, each
// invocation its TM x TN in float32 registers.
void tile(uint r0) {
	const uint nunits = p.cols / 16;
	const uint tid = gl_LocalInvocationID.x;
	const uint tm = tid % (BM / TM), tn = tid / (BM / TM);
	float acc[TM][TN];
	for (uint i = 0; i < TM; i++) {
		for (uint j = 0; j < TN; j++) {
			acc[i][j] = 0.0;
		}
	}
	for (uint u0 = 0; u0 < nunits; u0 += BKU) {
		load(r0, u0);
		barrier();
		for (uint k = 0; k < BK / 4; k++) {
			vec4 a[TM], b[TN];
			for (uint i = 0; i < TM; i++) {
				a[i] = As[(tm + i * (BM / TM)) * (BKP / 4) + k];
			}
			for (uint j = 0; j < TN; j++) {
				b[j] = Bs[(tn + j * (BN / TN)) * (BKP / 4) + k];
			}
			for (uint i = 0; i < TM; i++) {
				for (uint j = 0; j < TN; j++) {
					// a chain in the order of k, not dot()'s pairs: a
					// token's sums then stay within TestBatchedEqualsAlone's
					// 1e-5 of mul_mv's (dot() moved them by 2e-5)
					for (uint e = 0; e < 4; e++) {
						acc[i][j] += a[i][e] * b[j][e];
					}
				}
			}
		}
		barrier();
	}
	for (uint i = 0; i < TM; i++) {
		for (uint j = 0; j < TN; j++) {
			store(r0, tm + i * (BM / TM), tn + j * (BN / TN), acc[i][j]);
		}
	}
}

void main() {
	const uint ntiles = (p.rows + BM - 1) / BM;
	for (uint k = gl_WorkGroupID.y; k < p.ntiles; k += gl_NumWorkGroups.y) {
		const uint e = uint(clamp(I32s(p.tiles).v[3 * k], 0, int(p.experts) - 1));
		const uint first = uint(I32s(p.tiles).v[3 * k + 1]);
		npairs = min(uint(I32s(p.tiles).v[3 * k + 2]), BN);
		if (npairs == 0) {
			continue; // uniform: the whole workgroup skips
		}
		wexp = p.w + uint64_t(e) * p.rows * p.rowBytes;
		for (uint t = gl_LocalInvocationID.x; t < npairs; t += gl_WorkGroupSize.x) {
			qs[t] = uint(I32s(p.order).v[first + t]);
		}
		barrier();
		for (uint i = gl_WorkGroupID.x; i < ntiles; i += gl_NumWorkGroups.x) {
			tile(i * BM);
		}
		barrier(); // qs is rewritten by the next tile
	}
}
