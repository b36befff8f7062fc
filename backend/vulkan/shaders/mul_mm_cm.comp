#version 450
// mul_mm_cm.comp: mul_mm.comp's product on the device's matrix units
// through VK_KHR_cooperative_matrix, compiled per weight format into
// mul_mm_cm_<type>:
//   y[t*ldy + r] = (add != 0 ? y[t*ldy + r] : 0) + sx[t] * sum_c W[r][c] * xh[t*cols + c]
// over act_h's float16 activations (xh, each token's scaled by the power
// of two 1/sx[t]), the weights rounded to float16 and the sums taken in
// float32 (the tensor cores' float16 x float16 + float32 shape).
//
// A workgroup computes a tile of BM rows by BN tokens, walking the rows'
// 16-value units (quant.glsl) BK/16 at a time, as mul_mm does: the slab of
// BM rows' units is decoded into shared memory once for the BN tokens, as
// float16, beside the BN tokens' activations of the same columns (in the
// same order, so the order of a block's columns does not matter). Each of
// its subgroups then multiplies its WM x WN part of the tile from the
// slabs, in products of TM x TK by TK x TN (a shape the device lists),
// its 2 x 2 float32 accumulators (WM = 2*TM, WN = 2*TN) held as four
// named cooperative matrices for the whole row (not an array: a driver
// may keep an array of them in memory). At the end each accumulator goes
// through a TM x TN staging area of the subgroup's in shared memory to
// the outputs in range.
//
// The weights' slab is row major (row m's BK values at As[m*SK4 ..] as
// f16vec4s), the activations' is token major (token t's at Bs[t*SK4 ..]):
// the B matrix (K x N) is read column major from it. SK4 pads each row by
// 8 values so that the rows a cooperative load reads fall in different
// banks.
//
// Push constants (Go: pushMulMM in mm.go): mul_mm's, with x the float16
// activations (8-byte aligned), and the address of sx after add.
//
// Specialization: id 0 local_size_x (L = NSG subgroups, NSG =
// (BM/WM)*(BN/WN)), 1 BM, 2 BN (multiples of WM and WN), 3 BK (a multiple
// of 16 and of TK), 4 TM, 5 TN, 6 TK, 7 PREFETCH (nonzero:
// the next slab's global loads in flight during this one's products, held
// in registers). Dispatch ceil(rows/BM)
// x ceil(n/BN) workgroups; either count may be clamped, the workgroups
// then stride over the tiles.

#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_GOOGLE_include_directive : require

#include "common.glsl"
#include "quant.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 64;
layout(constant_id = 4) const uint TM = 16;
layout(constant_id = 5) const uint TN = 16;
layout(constant_id = 6) const uint TK = 16;
layout(constant_id = 7) const uint PREFETCH = 0;
layout(constant_id = 0) const uint L = 128;

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
	uint64_t sx;
} p;

// The weights' first row, and column t of the tile of tokens t0..:
// whether it is there, the row of x it reads, the offset of its outputs.
#define wbase p.w
bool col_in(uint t0, uint t) { return t0 + t < p.n; }
uint col_x(uint t0, uint t) { return t0 + t; }
uint col_y(uint t0, uint t) { return (t0 + t) * p.ldy; }

const uint BKU = BK / 16;       // units a slab row
const uint SK4 = (BK + 8) / 4;  // f16vec4s a slab row
const uint WM = 2 * TM;         // rows of a subgroup's part of the tile
const uint WN = 2 * TN;         // tokens of it
const uint SGM = BM / WM;       // subgroups down the tile
const uint NSG = SGM * (BN / WN);

shared f16vec4 As[BM * SK4];
shared f16vec4 Bs[BN * SK4];
shared float Cs[NSG * TM * TN];

// The slabs' loads: invocation tid takes the weights' units q = tid +
// i*L (i < AN) of the slab, unit ju of row m (q = m*BKU + ju), and the
// activations' vec4s q = tid + i*L (i < BN4), part of unit ju of token t
// (q = (t*BKU + ju)*4 + part).
const uint AN = (BM * BKU + L - 1) / L;
const uint BN4 = (BN * BKU * 4 + L - 1) / L;

// fetch reads into ra and rb (this invocation's registers) the units u0 .. u0+BKU-1 of rows r0.. and
// tokens t0.. that this invocation stores (zeros past the rows, the tokens
// and the row's end).
f16vec4 ra[AN * 4], rb[BN4];

void fetch(uint r0, uint t0, uint u0) {
	const uint tid = gl_LocalInvocationID.x;
	const uint nunits = p.cols / 16;
	for (uint i = 0; i < AN; i++) {
		const uint q = tid + i * L;
		const uint m = q / BKU, ju = q % BKU, u = u0 + ju;
		vec4 v[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
		if (q < BM * BKU && r0 + m < p.rows && u < nunits) {
			dequant_unit(wbase + uint64_t(r0 + m) * p.rowBytes + uint64_t(u / UNITS) * BB, u % UNITS, v);
		}
		for (uint k = 0; k < 4; k++) {
			ra[4 * i + k] = f16vec4(v[k]);
		}
	}
	// The activations: four f16vec4s a unit (runs of 8 at pos.x and
	// pos.y).
	F16Vec4s X = F16Vec4s(p.x);
	for (uint i = 0; i < BN4; i++) {
		const uint q = tid + i * L;
		const uint t = q / (BKU * 4), ju = (q / 4) % BKU, part = q % 4, u = u0 + ju;
		f16vec4 v = f16vec4(0.0);
		if (q < BN * BKU * 4 && col_in(t0, t) && u < nunits) {
			const uvec2 pos = unit_pos(u % UNITS);
			const uint c = (u / UNITS) * QK + (part < 2 ? pos.x + 4 * part : pos.y + 4 * (part - 2));
			v = X.v[(col_x(t0, t) * p.cols + c) / 4];
		}
		rb[i] = v;
	}
}

// stash writes what fetch read into the slabs.
void stash() {
	const uint tid = gl_LocalInvocationID.x;
	for (uint i = 0; i < AN; i++) {
		const uint q = tid + i * L;
		if (q < BM * BKU) {
			const uint m = q / BKU, ju = q % BKU;
			for (uint k = 0; k < 4; k++) {
				As[m * SK4 + 4 * ju + k] = ra[4 * i + k];
			}
		}
	}
	for (uint i = 0; i < BN4; i++) {
		const uint q = tid + i * L;
		if (q < BN * BKU * 4) {
			const uint t = q / (BKU * 4), r = q % (BKU * 4);
			Bs[t * SK4 + r] = rb[i];
		}
	}
}

// STORE writes accumulator c, part (i, j) of the subgroup's, out through
// the subgroup's staging area, column major (token n's TM rows at
// Cs[base + n*TM ..]): a run of TM rows of one token a store, times the
// token's scale. Uses tile's r0, t0, wr, wc, base, Y and SX.
#define STORE(c, i, j) \
	coopMatStore(c, Cs, base, TM, gl_CooperativeMatrixLayoutColumnMajor); \
	subgroupMemoryBarrierShared(); \
	subgroupBarrier(); \
	for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += gl_SubgroupSize) { \
		const uint r = r0 + wr + (i) * TM + e % TM, t = wc + (j) * TN + e / TM; \
		if (r < p.rows && col_in(t0, t)) { \
			const uint o = col_y(t0, t) + r; \
			Y.v[o] = (p.add != 0 ? Y.v[o] : 0.0) + Cs[base + e] * SX.v[col_x(t0, t)]; \
		} \
	} \
	subgroupBarrier()

// tile computes the outputs of the tile of rows r0.. and tokens t0...
void tile(uint r0, uint t0) {
	const uint nunits = p.cols / 16;
	const uint sg = gl_SubgroupID;
	const uint wr = (sg % SGM) * WM, wc = (sg / SGM) * WN;
	// The subgroup's 2 x 2 accumulators.
	coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c00 = coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(0.0);
	coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c01 = c00, c10 = c00, c11 = c00;
	// With PREFETCH the next slab's loads are issued before the products
	// of this one, and stored after them.
	fetch(r0, t0, 0);
	for (uint u0 = 0; u0 < nunits; u0 += BKU) {
		if (PREFETCH == 0 || u0 == 0) {
			if (u0 != 0) {
				fetch(r0, t0, u0);
			}
			stash();
			barrier();
		}
		if (PREFETCH != 0 && u0 + BKU < nunits) {
			fetch(r0, t0, u0 + BKU);
		}
		if (sg < NSG) {
			for (uint k = 0; k < BK; k += TK) {
				coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> a0, a1;
				coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> b0, b1;
				coopMatLoad(a0, As, wr * SK4 + k / 4, SK4, gl_CooperativeMatrixLayoutRowMajor);
				coopMatLoad(a1, As, (wr + TM) * SK4 + k / 4, SK4, gl_CooperativeMatrixLayoutRowMajor);
				coopMatLoad(b0, Bs, wc * SK4 + k / 4, SK4, gl_CooperativeMatrixLayoutColumnMajor);
				coopMatLoad(b1, Bs, (wc + TN) * SK4 + k / 4, SK4, gl_CooperativeMatrixLayoutColumnMajor);
				c00 = coopMatMulAdd(a0, b0, c00);
				c01 = coopMatMulAdd(a0, b1, c01);
				c10 = coopMatMulAdd(a1, b0, c10);
				c11 = coopMatMulAdd(a1, b1, c11);
			}
		}
		barrier();
		if (PREFETCH != 0 && u0 + BKU < nunits) {
			stash();
			barrier();
		}
	}
	if (sg >= NSG) {
		return;
	}
	F32s Y = F32s(p.y), SX = F32s(p.sx);
	const uint base = sg * TM * TN;
	STORE(c00, 0, 0);
	STORE(c01, 0, 1);
	STORE(c10, 1, 0);
	STORE(c11, 1, 1);
}

void main() {
	const uint ntiles = (p.rows + BM - 1) / BM;
	for (uint t0 = gl_WorkGroupID.y * BN; t0 < p.n; t0 += gl_NumWorkGroups.y * BN) {
		for (uint i = gl_WorkGroupID.x; i < ntiles; i += gl_NumWorkGroups.x) {
			tile(i * BM, t0);
		}
	}
}
