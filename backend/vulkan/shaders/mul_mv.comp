#version 450
// mul_mv.comp: the matrix-vector product of a weight matrix in one GGUF
// format (quant.glsl, TYPE_<name>) with up to a few tokens' activations,
// compiled per type into mul_mv_<type>:
//   y[t*ldy + r] = (add != 0 ? y[t*ldy + r] : 0) + sum_c W[r][c] * x[t*cols + c]
// for rows r < rows and tokens t < n, accumulated in float32.
//
// Push constants (Go: pushMulMV in weights.go):
//   uint64 w     address of row 0 of W (16-byte aligned); row r starts at
//                w + r*rowBytes
//   uint64 x     address of the activations, n*cols float32 (16-byte aligned)
//   uint64 y     address of the outputs, float32
//   uint32 rows, cols, n, rowBytes, ldy, add
// cols is a multiple of the format's block (QK: 16 for F32, F16, BF16).
//
// Specialization: id 0 local_size_x (L), id 1 ROWS (R), id 2 TOKENS (T).
// A workgroup computes a tile of R rows by T tokens; it walks the tile's
// rows block by block, invocation i taking the 16-value units i, i+L, ...
// of each row (consecutive invocations read consecutive bytes), reading
// each unit of the R rows once for all T tokens and each 16 activations
// of a token once for all R rows. Partial sums are added within subgroups
// (subgroupAdd), then across the workgroup's subgroups in shared memory,
// one subgroup after the other (right for any subgroup size).
// Dispatch ceil(rows/R) x ceil(n/T) workgroups; either count may be
// clamped to the device's limit, the workgroups then stride over the row
// tiles or token groups.

#include "common.glsl"
#include "quant.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint TOKENS = 1;

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

shared float red[ROWS * TOKENS];

// tile computes rows r0 .. r0+ROWS-1 (those below p.rows) for tokens t0 ..
// t0+nt-1 (nt <= TOKENS).
void tile(uint r0, uint t0, uint nt) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / QK * UNITS;
	Vec4s X = Vec4s(p.x);
	F32s Y = F32s(p.y);

	float acc[ROWS][TOKENS];
	for (uint r = 0; r < ROWS; r++) {
		for (uint t = 0; t < TOKENS; t++) {
			acc[r][t] = 0.0;
		}
	}
	for (uint u = tid; u < nunits; u += gl_WorkGroupSize.x) {
		const uint b = u / UNITS, j = u % UNITS;
		// The unit of each row (zero past the last row), then each token's
		// activations against all of them.
		vec4 w[ROWS][4];
		for (uint r = 0; r < ROWS; r++) {
			if (r0 + r < p.rows) {
				dequant_unit(p.w + uint64_t(r0 + r) * p.rowBytes + uint64_t(b) * BB, j, w[r]);
			} else {
				w[r] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
			}
		}
		const uvec2 pos = (b * QK + unit_pos(j)) / 4;  // in vec4s
		for (uint t = 0; t < TOKENS; t++) {
			if (t < nt) {
				const uint xt = (t0 + t) * (p.cols / 4);
				const vec4 x0 = X.v[xt + pos.x], x1 = X.v[xt + pos.x + 1];
				const vec4 x2 = X.v[xt + pos.y], x3 = X.v[xt + pos.y + 1];
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
	for (uint s = 0; s < gl_NumSubgroups; s++) {
		if (gl_SubgroupID == s && subgroupElect()) {
			for (uint r = 0; r < ROWS; r++) {
				for (uint t = 0; t < TOKENS; t++) {
					red[t * ROWS + r] = (s == 0 ? 0.0 : red[t * ROWS + r]) + acc[r][t];
				}
			}
		}
		barrier();
	}
	for (uint k = tid; k < ROWS * TOKENS; k += gl_WorkGroupSize.x) {
		const uint r = r0 + k % ROWS, t = k / ROWS;
		if (r < p.rows && t < nt) {
			const uint i = (t0 + t) * p.ldy + r;
			Y.v[i] = (p.add != 0 ? Y.v[i] : 0.0) + red[k];
		}
	}
	barrier();  // red is reused by the next tile
}

void main() {
	const uint ntiles = (p.rows + ROWS - 1) / ROWS;
	for (uint t0 = gl_WorkGroupID.y * TOKENS; t0 < p.n; t0 += gl_NumWorkGroups.y * TOKENS) {
		for (uint i = gl_WorkGroupID.x; i < ntiles; i += gl_NumWorkGroups.x) {
			tile(i * ROWS, t0, min(TOKENS, p.n - t0));
		}
	}
}
