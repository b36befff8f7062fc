#version 450
// mul_mv.comp: the matrix-vector product of a weight matrix in one GGUF
// format (quant.glsl, TYPE_<name>) with up to a few tokens' activations,
// compiled per type into mul_mv_<type>:
//   y[t*ldy + r] = (add != 0 ? y[t*ldy + r] : 0) + sum_c W[r][c] * x[t*cols + c]
// for rows r < rows and tokens t < n, accumulated in float32.
//
// With XMODE (specialization id 3) the product's input is computed from x
// as it is read, sparing the dispatch that would write it:
//   1: RMSNorm(x_t) * gain, x_t's sum of squares gathered by the same
//      loop that reads x_t (every value of it passes through the
//      workgroup), its factor applied to the sums at the end;
//   2: silu(g) * u, the SwiGLU of the packed gate-and-up row of token t:
//      g at x + 4*t*xstride, u cols values after it.
//
// Push constants (Go: pushMulMV in weights.go):
//   uint64 w     address of row 0 of W (16-byte aligned); row r starts at
//                w + r*rowBytes
//   uint64 x     address of the activations, n*cols float32 (16-byte
//                aligned), rows of xstride values with XMODE 2
//   uint64 y     address of the outputs, float32
//   uint64 gain  address of cols float32 gains (XMODE 1)
//   uint32 rows, cols, n, rowBytes, ldy, add
//   float  eps   (XMODE 1)
//   uint32 xstride (XMODE 2)
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
layout(constant_id = 3) const uint XMODE = 0;

layout(push_constant, std430) uniform Push {
	uint64_t w;
	uint64_t x;
	uint64_t y;
	uint64_t gain;
	uint rows;
	uint cols;
	uint n;
	uint rowBytes;
	uint ldy;
	uint add;
	float eps;
	uint xstride;
} p;

shared float red[ROWS * TOKENS];
shared float redss[TOKENS];

// tile computes rows r0 .. r0+ROWS-1 (those below p.rows) for tokens t0 ..
// t0+nt-1 (nt <= TOKENS).
void tile(uint r0, uint t0, uint nt) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / QK * UNITS;
	Vec4s X = Vec4s(p.x);
	F32s Y = F32s(p.y);

	float acc[ROWS][TOKENS];
	float ss[TOKENS]; // XMODE 1: each token's sum of squares
	for (uint t = 0; t < TOKENS; t++) {
		ss[t] = 0.0;
		for (uint r = 0; r < ROWS; r++) {
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
				const uint xt = (t0 + t) * (XMODE == 2 ? p.xstride / 4 : p.cols / 4);
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
					x0 = silu_mul(x0, X.v[ut + pos.x]);
					x1 = silu_mul(x1, X.v[ut + pos.x + 1]);
					x2 = silu_mul(x2, X.v[ut + pos.y]);
					x3 = silu_mul(x3, X.v[ut + pos.y + 1]);
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
	for (uint k = tid; k < ROWS * TOKENS; k += gl_WorkGroupSize.x) {
		const uint r = r0 + k % ROWS, t = k / ROWS;
		if (r < p.rows && t < nt) {
			const uint i = (t0 + t) * p.ldy + r;
			float v = red[k];
			if (XMODE == 1) {
				v *= 1.0 / sqrt(redss[t] / float(p.cols) + p.eps);
			}
			Y.v[i] = (p.add != 0 ? Y.v[i] : 0.0) + v;
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
