#version 450
// mul_mm.comp: the matrix-matrix product of a weight matrix in one GGUF
// format (quant.glsl, TYPE_<name>) with many tokens' activations (a
// prompt), compiled per type into mul_mm_<type>. The same product as
// mul_mv.comp:
//   y[t*ldy + r] = (add != 0 ? y[t*ldy + r] : 0) + sum_c W[r][c] * x[t*cols + c]
// for rows r < rows and tokens t < n, accumulated in float32.
//
// Push constants (Go: pushMulMM in mm.go):
//   uint64 w     address of row 0 of W (16-byte aligned); row r starts at
//                w + r*rowBytes
//   uint64 x     address of the activations, n*cols float32 (16-byte aligned)
//   uint64 y     address of the outputs, float32
//   uint32 rows, cols, n, rowBytes, ldy, add
// cols is a multiple of 16 (of the format's block, QK).
//
// A workgroup computes a tile of BM rows by BN tokens, walking the row's
// 16-value units (quant.glsl) BK/16 at a time: the slab of BM rows' units
// is decoded into shared memory once for the BN tokens, the BN tokens'
// activations of the same columns are copied beside it, and the products
// are summed from there. The slab's k-th value is column
// b*QK + unit_pos(j) of the units it holds, in the same order for the
// weights and the activations, so that the order of the columns within a
// block does not matter. Rows past rows, tokens past n and units past the
// row's end are zeros in the slab; only the outputs in range are written.
//
// Specialization: id 0 local_size_x (L), id 1 BM, id 2 BN, id 3 BK (a
// multiple of 16), id 4 TM, id 5 TN. The slabs hold float32; invocation
// i computes the TM x TN outputs of rows i%(BM/TM) + k*(BM/TM) and
// tokens i/(BM/TM) + k*(BN/TN) of the tile in registers, reading the
// slabs a vec4 at a time (TM + TN reads for 4 TM TN products); L =
// (BM/TM)*(BN/TN).
// Dispatch ceil(rows/BM) x ceil(n/BN) workgroups; either count may be
// clamped to the device's limit, the workgroups then stride over the
// tiles.

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
	uint rows;
	uint cols;
	uint n;
	uint rowBytes;
	uint ldy;
	uint add;
} p;

// The slabs, row (token) major: the BK values of row m at As[m*BKP ..],
// token t's at Bs[t*BKP ..], as vec4s (As[(m*BKP)/4 ..]). The padding
// keeps each row 16-byte aligned and puts the vec4s of consecutive rows
// in different banks.
const uint BKU = BK / 16;  // units a row of the slab
const uint BKP = BK + 4;
shared vec4 As[BM * BKP / 4];
shared vec4 Bs[BN * BKP / 4];

// load fills the slabs with the units u0 .. u0+BKU-1 of rows r0.. and
// tokens t0.. . Invocations take consecutive units of a row (consecutive
// bytes of it), then the next row.
void load(uint r0, uint t0, uint u0) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / 16;
	for (uint q = tid; q < BM * BKU; q += gl_WorkGroupSize.x) {
		const uint m = q / BKU, ju = q % BKU, u = u0 + ju;
		vec4 v[4];
		if (r0 + m < p.rows && u < nunits) {
			dequant_unit(p.w + uint64_t(r0 + m) * p.rowBytes + uint64_t(u / UNITS) * BB, u % UNITS, v);
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
		if (t0 + t < p.n && u < nunits) {
			const uvec2 pos = unit_pos(u % UNITS);
			const uint c = (u / UNITS) * QK + (part < 2 ? pos.x + 4 * part : pos.y + 4 * (part - 2));
			v = X.v[((t0 + t) * p.cols + c) / 4];
		}
		const uint o = t * BKP + 16 * ju + 4 * part;
		Bs[o / 4] = v;
	}
}

// store writes out value s of row r0+m, token t0+t if both are in range.
void store(uint r0, uint t0, uint m, uint t, float s) {
	if (r0 + m < p.rows && t0 + t < p.n) {
		const uint i = (t0 + t) * p.ldy + r0 + m;
		F32s Y = F32s(p.y);
		Y.v[i] = (p.add != 0 ? Y.v[i] : 0.0) + s;
	}
}

// tile computes the outputs of the tile of rows r0.. and tokens t0.., each
// invocation its TM x TN in float32 registers.
void tile(uint r0, uint t0) {
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
		load(r0, t0, u0);
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
			store(r0, t0, tm + i * (BM / TM), tn + j * (BN / TN), acc[i][j]);
		}
	}
}

void main() {
	const uint ntiles = (p.rows + BM - 1) / BM;
	for (uint t0 = gl_WorkGroupID.y * BN; t0 < p.n; t0 += gl_NumWorkGroups.y * BN) {
		for (uint i = gl_WorkGroupID.x; i < ntiles; i += gl_NumWorkGroups.x) {
			tile(i * BM, t0);
		}
	}
}
