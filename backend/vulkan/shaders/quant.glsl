// quant.glsl: the decoding of each weight format's blocks, the one both
// mul_mv.comp and get_rows.comp use. Exactly one TYPE_<name> is defined
// (build.sh's -D); common.glsl is included first.
//
// A row of cols values is cols/QK blocks of BB bytes. A block is decoded in
// units of 16 values: unit j (0 <= j < UNITS = QK/16) holds the values at
// offsets pos.x .. pos.x+7 and pos.y .. pos.y+7 of the block, pos =
// unit_pos(j), and dequant_unit(blk, j, v) decodes them from the block at
// address blk: v[0], v[1] the first run of 8, v[2], v[3] the second. The
// units of a block cover it once, sharing the decoding of its scales by
// 16 values; neighbouring units read neighbouring bytes, so that
// consecutive invocations read a row's bytes consecutively.
//
// The arithmetic is numfmt's (ggml's dequantize_row_*) in float32; a
// driver may fuse a product and a sum into one FMA (within one rounding
// of numfmt). The block layouts are numfmt's constants' comments
// (numfmt/legacy.go, kquants.go, iquants.go, mxfp4.go). F32, F16 and BF16
// are read as blocks of 16 values (cols a multiple of 16). Rows start
// 16-byte aligned.

// ---------------------------------------------------------------- shared by families

// nibbles8 unpacks the 8 bytes q: v[0], v[1] their low nibbles, v[2], v[3]
// their high nibbles, as unsigned integers.
void nibbles8(uvec2 q, out uvec4 v[4]) {
	v[0] = nibbles4(q.x);
	v[1] = nibbles4(q.y);
	v[2] = hnibbles4(q.x);
	v[3] = hnibbles4(q.y);
}

#if defined(TYPE_Q4_0) || defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1) || \
    defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// The formats of nibbles packed as Q4_0, value i of a group of 32 in the
// low nibble of byte i (i < 16), value i+16 in its high nibble: unit j
// holds the 8 bytes 8*(j%2).. of group j/2, values 8*(j%2).. (low
// nibbles) and 8*(j%2)+16.. (high).
uvec2 unit_pos(uint j) {
	const uint base = 32 * (j / 2) + 8 * (j % 2);
	return uvec2(base, base + 16);
}
#endif

#if defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// level4 is entry k (0..15) of the 16 int8 levels packed four a word in
// t (a vector, not an array: no memory lookup).
float level4(uvec4 t, uint k) { return float(bitfieldExtract(int(t[k >> 2]), int(8 * (k & 3)), 8)); }
vec4 levels4(uvec4 t, uvec4 k) { return vec4(level4(t, k.x), level4(t, k.y), level4(t, k.z), level4(t, k.w)); }

// levels8 is the levels of t the nibbles of q code, times d.
void levels8(uvec4 t, uvec2 q, float d, out vec4 v[4]) {
	uvec4 k[4];
	nibbles8(q, k);
	for (int i = 0; i < 4; i++) {
		v[i] = levels4(t, k[i]) * d;
	}
}

// KVALUES_IQ4NL are numfmt.KValuesIQ4NL: -127, -104, -83, -65, -49, -35,
// -22, -10, 1, 13, 25, 38, 53, 69, 89, 113.
const uvec4 KVALUES_IQ4NL = uvec4(0xbfad9881u, 0xf6eaddcfu, 0x26190d01u, 0x71594535u);
#endif

// ---------------------------------------------------------------- floats: groups of 16 values

#if defined(TYPE_F32)
const uint QK = 16, BB = 64, UNITS = 1;
uvec2 unit_pos(uint j) { return uvec2(0, 8); }
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	for (int i = 0; i < 4; i++) {
		v[i] = uintBitsToFloat(ld128(blk + 16 * i));
	}
}
#elif defined(TYPE_F16)
const uint QK = 16, BB = 32, UNITS = 1;
uvec2 unit_pos(uint j) { return uvec2(0, 8); }
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const uvec4 a = ld128(blk), b = ld128(blk + 16);
	v[0] = vec4(unpackHalf2x16(a.x), unpackHalf2x16(a.y));
	v[1] = vec4(unpackHalf2x16(a.z), unpackHalf2x16(a.w));
	v[2] = vec4(unpackHalf2x16(b.x), unpackHalf2x16(b.y));
	v[3] = vec4(unpackHalf2x16(b.z), unpackHalf2x16(b.w));
}
#elif defined(TYPE_BF16)
const uint QK = 16, BB = 32, UNITS = 1;
uvec2 unit_pos(uint j) { return uvec2(0, 8); }
// bf4 are the four BF16 values of q (lowest first).
vec4 bf4(uvec2 q) { return uintBitsToFloat(uvec4(q.x << 16, q.x & 0xffff0000u, q.y << 16, q.y & 0xffff0000u)); }
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const uvec4 a = ld128(blk), b = ld128(blk + 16);
	v[0] = bf4(a.xy);
	v[1] = bf4(a.zw);
	v[2] = bf4(b.xy);
	v[3] = bf4(b.zw);
}

// ---------------------------------------------------------------- legacy: blocks of 32

#elif defined(TYPE_Q8_0)
// d F16 at 0, qs[32] int8 at 2; unit j: the 16 values 16j.. .
const uint QK = 32, BB = 34, UNITS = 2;
uvec2 unit_pos(uint j) { return uvec2(16 * j, 16 * j + 8); }
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const float d = half2f(ld16(blk));
	const uvec4 q = ld128a2(blk + 2 + 16 * j);
	for (int i = 0; i < 4; i++) {
		v[i] = vec4(sbytes4(q[i])) * d;
	}
}
#elif defined(TYPE_Q4_0)
// d F16 at 0, qs[16] at 2; value = (q-8)*d.
const uint QK = 32, BB = 18, UNITS = 2;
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const float d = half2f(ld16(blk));
	uvec4 q[4];
	nibbles8(ld64a2(blk + 2 + 8 * j), q);
	for (int i = 0; i < 4; i++) {
		v[i] = vec4(ivec4(q[i]) - 8) * d;
	}
}
#elif defined(TYPE_Q4_1)
// d F16 at 0, m F16 at 2, qs[16] at 4; value = q*d + m.
const uint QK = 32, BB = 20, UNITS = 2;
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const vec2 dm = unpackHalf2x16(ld32(blk));
	uvec4 q[4];
	nibbles8(ld64a4(blk + 4 + 8 * j), q);
	for (int i = 0; i < 4; i++) {
		v[i] = vec4(q[i]) * dm.x + dm.y;
	}
}
#elif defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
// Q5_0: d F16 at 0, qh uint32 at 2 (bit i: the fifth bit of value i),
// qs[16] at 6; value = (q-16)*d. Q5_1: d F16 at 0, m F16 at 2, qh at 4,
// qs at 8; value = q*d + m.
const uint QK = 32, UNITS = 2;
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
#if defined(TYPE_Q5_0)
	const vec2 dm = vec2(half2f(ld16(blk)), 0.0);
	const uint qh = ld32a2(blk + 2);
	const uvec2 qs = ld64a2(blk + 6 + 8 * j);
#else
	const vec2 dm = unpackHalf2x16(ld32(blk));
	const uint qh = ld32(blk + 4);
	const uvec2 qs = ld64(blk + 8 + 8 * j);
#endif
	uvec4 q[4];
	nibbles8(qs, q);
	for (int i = 0; i < 4; i++) {
		// run i/2 starts at value 8j + 16*(i/2); its fifth bits are there
		q[i] |= bits4(qh >> (8 * j + 16 * (i / 2) + 4 * (i % 2))) << 4;
#if defined(TYPE_Q5_0)
		v[i] = vec4(ivec4(q[i]) - 16) * dm.x;
#else
		v[i] = vec4(q[i]) * dm.x + dm.y;
#endif
	}
}
#if defined(TYPE_Q5_0)
const uint BB = 22;
#else
const uint BB = 24;
#endif

// ---------------------------------------------------------------- non-linear 4-bit levels

#elif defined(TYPE_IQ4_NL)
// d F16 at 0, qs[16] at 2; value = d*level.
const uint QK = 32, BB = 18, UNITS = 2;
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	levels8(KVALUES_IQ4NL, ld64a2(blk + 2 + 8 * j), half2f(ld16(blk)), v);
}
#elif defined(TYPE_IQ4_XS)
// d F16 at 0, scales_h uint16 at 2, scales_l[4] at 4, qs[128] at 8: 8
// sub-blocks of 32 packed as IQ4_NL, sub-block ib with the 6-bit scale
// (scales_l[ib/2] >> 4*(ib%2) & 15 | (scales_h >> 2*ib & 3) << 4) - 32;
// value = d*scale*level.
const uint QK = 256, BB = 136, UNITS = 16;
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const uint ib = j / 2;
	const uint dh = ld32(blk);
	const uint sl = ld32(blk + 4);
	const int ls = int(((sl >> (4 * ib)) & 15u) | (((dh >> (16 + 2 * ib)) & 3u) << 4)) - 32;
	levels8(KVALUES_IQ4NL, ld64(blk + 8 + 8 * j), half2f(dh) * float(ls), v);
}
#elif defined(TYPE_MXFP4)
// e E8M0 at 0, qs[16] at 1; value = level*E8M0Half(e), the levels
// numfmt.KValuesMXFP4: 0, 1, 2, 3, 4, 6, 8, 12 and their negations.
const uint QK = 32, BB = 17, UNITS = 2;
const uvec4 KVALUES_MXFP4 = uvec4(0x03020100u, 0x0c080604u, 0xfdfeff00u, 0xf4f8fafcu);
// e8m0half is numfmt.E8M0Half: 2^(e-128) (subnormal for e < 2).
float e8m0half(uint e) { return uintBitsToFloat(e < 2 ? 0x00200000u << e : (e - 1) << 23); }
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	levels8(KVALUES_MXFP4, ld64a1(blk + 1 + 8 * j), e8m0half(ld8(blk)), v);
}

// ---------------------------------------------------------------- k-quants: super-blocks of 256

#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
const uint QK = 256, UNITS = 16;
// qs[64] 2 bits a value: byte 32h+l holds value 128h+32k+l at bits 2k.
// Unit j: bytes 32h+l0..+7 (h = j/8, l0 = 8*(j%4)), values at k and k+1
// (k = 2*(j/4 % 2)), of the sub-blocks of 16 values 8h+2k+l0/16 and
// 8h+2k+2+l0/16.
uvec2 unit_pos(uint j) {
	const uint base = 128 * (j / 8) + 64 * ((j / 4) % 2) + 8 * (j % 4);
	return uvec2(base, base + 32);
}

// crumbs8 are the 2-bit values at bits 2k of the 8 bytes q: v[0], v[1]
// at k, v[2], v[3] at k+1.
void crumbs8(uvec2 q, uint k, out uvec4 v[4]) {
	v[0] = bytes4((q.x >> (2 * k)) & 0x03030303u);
	v[1] = bytes4((q.y >> (2 * k)) & 0x03030303u);
	v[2] = bytes4((q.x >> (2 * k + 2)) & 0x03030303u);
	v[3] = bytes4((q.y >> (2 * k + 2)) & 0x03030303u);
}

#if defined(TYPE_Q2_K)
// scales[16] at 0 (scale in the low nibble, min in the high), qs[64] at
// 16, d F16 at 80, dmin F16 at 82; value = d*sc*q - dmin*m.
const uint BB = 84;
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const uint h = j / 8, k = 2 * ((j / 4) % 2), l0 = 8 * (j % 4);
	const vec2 dm = unpackHalf2x16(ld32(blk + 80));
	const uint is = 8 * h + 2 * k + l0 / 16;
	const uvec2 s = uvec2(ld8(blk + is), ld8(blk + is + 2));
	const vec2 dl = dm.x * vec2(s & 15u), ml = dm.y * vec2(s >> 4);
	uvec4 q[4];
	crumbs8(ld64a4(blk + 16 + 32 * h + l0), k, q);
	for (int i = 0; i < 4; i++) {
		v[i] = dl[i / 2] * vec4(q[i]) - ml[i / 2];
	}
}

#else
// hmask[32] at 0 (the third bit of value i is bit i/32 of hmask[i%32]),
// qs[64] at 32, scales[12] at 96 (16 6-bit scales), d F16 at 108; value =
// d*(sc-32)*(q-4 unless the third bit is set).
const uint BB = 110;
// q3scale is numfmt.Q3KScale(is, block's scales).
float q3scale(uint64_t blk, uint is) {
	const uint lo = (ld8(blk + 96 + is % 8) >> (4 * (is / 8))) & 15u;
	const uint hi = (ld8(blk + 104 + is % 4) >> (2 * (is / 4))) & 3u;
	return float(int(lo | (hi << 4)) - 32);
}
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const uint h = j / 8, k = 2 * ((j / 4) % 2), l0 = 8 * (j % 4);
	const float d = half2f(ld16(blk + 108));
	const uint is = 8 * h + 2 * k + l0 / 16;
	const vec2 dl = d * vec2(q3scale(blk, is), q3scale(blk, is + 2));
	uvec4 q[4];
	crumbs8(ld64a2(blk + 32 + 32 * h + l0), k, q);
	const uvec2 hm = ld64a2(blk + l0) >> (4 * h + k);  // the third bits at bits 0 (k) and 1 (k+1)
	const uvec4 hb[4] = uvec4[4](bytes4(hm.x & 0x01010101u), bytes4(hm.y & 0x01010101u),
	                             bytes4((hm.x >> 1) & 0x01010101u), bytes4((hm.y >> 1) & 0x01010101u));
	for (int i = 0; i < 4; i++) {
		v[i] = dl[i / 2] * vec4(ivec4(q[i]) - 4 * ivec4(1u - hb[i]));
	}
}
#endif // Q2_K, Q3_K

#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
const uint QK = 256, UNITS = 16;
// d F16 at 0, dmin F16 at 2, scales[12] at 4 (8 6-bit scales and mins),
// then (Q5_K) qh[32] at 16, and qs[128] (at 16 or 48): byte 32h+l holds
// value 64h+l in the low nibble, 64h+32+l in the high; Q5_K's fifth bit
// of value 64h+l is bit 2h of qh[l], of 64h+32+l bit 2h+1. Unit j: bytes
// 32h+l0..+7, h = j/4, l0 = 8*(j%4), of sub-blocks 2h and 2h+1; value =
// d*sc*q - dmin*m.
uvec2 unit_pos(uint j) {
	const uint base = 64 * (j / 4) + 8 * (j % 4);
	return uvec2(base, base + 32);
}
#if defined(TYPE_Q4_K)
const uint BB = 144;
#else
const uint BB = 176;
#endif
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const uint h = j / 4, l0 = 8 * (j % 4);
	// d, dmin and the scales in one load (blocks of 144 and 176 bytes in
	// rows 16-byte aligned start 16-byte aligned).
	const uvec4 hd = ld128(blk);
	const vec2 dm = unpackHalf2x16(hd.x);
	// numfmt.ScaleMinK4 of sub-blocks 2h and 2h+1: the 16 bits of each
	// scale word holding them, the low byte sub-block 2h's.
	const uint sh = 16 * (h % 2);
	const uint x = hd.y >> sh, y = hd.z >> sh, z = hd.w >> sh;
	const uint sc = h < 2 ? x & 0x3f3fu : (z & 0x0f0fu) | ((x >> 2) & 0x3030u);
	const uint mn = h < 2 ? y & 0x3f3fu : ((z >> 4) & 0x0f0fu) | ((y >> 2) & 0x3030u);
	const vec2 dl = dm.x * vec2(sc & 255u, sc >> 8), ml = dm.y * vec2(mn & 255u, mn >> 8);
	uvec4 q[4];
#if defined(TYPE_Q4_K)
	nibbles8(ld64(blk + 16 + 32 * h + l0), q);
#else
	nibbles8(ld64(blk + 48 + 32 * h + l0), q);
	const uvec2 qh = ld64(blk + 16 + l0) >> (2 * h);
	q[0] |= bytes4(qh.x & 0x01010101u) << 4;
	q[1] |= bytes4(qh.y & 0x01010101u) << 4;
	q[2] |= bytes4((qh.x >> 1) & 0x01010101u) << 4;
	q[3] |= bytes4((qh.y >> 1) & 0x01010101u) << 4;
#endif
	for (int i = 0; i < 4; i++) {
		v[i] = dl[i / 2] * vec4(q[i]) - ml[i / 2];
	}
}

#elif defined(TYPE_Q6_K)
const uint QK = 256, UNITS = 16;
// ql[128] at 0, qh[64] at 128, scales[16] int8 at 192, d F16 at 208. For
// half h (values 128h..), l < 64: ql[64h+l] holds value 128h+l (low
// nibble) and 128h+64+l (high); their top two bits are qh[32h+l%32] at
// bits 0 (l < 32) or 2, and 4 or 6; value v's scale is scales[v/16];
// value = d*sc*(q-32). Unit j: ql bytes 64h+l0..+7, h = j/8, l0 =
// 8*(j%8).
const uint BB = 210;
uvec2 unit_pos(uint j) {
	const uint base = 128 * (j / 8) + 8 * (j % 8);
	return uvec2(base, base + 64);
}
void dequant_unit(uint64_t blk, uint j, out vec4 v[4]) {
	const uint h = j / 8, l0 = 8 * (j % 8);
	const float d = half2f(ld16(blk + 208));
	const uint is = 192 + 8 * h + l0 / 16;
	const vec2 dl = d * vec2(bitfieldExtract(int(ld8(blk + is)), 0, 8), bitfieldExtract(int(ld8(blk + is + 4)), 0, 8));
	uvec4 q[4];
	nibbles8(ld64a2(blk + 64 * h + l0), q);
	const uvec2 qh = ld64a2(blk + 128 + 32 * h + l0 % 32) >> (2 * (l0 / 32));
	q[0] |= bytes4(qh.x & 0x03030303u) << 4;
	q[1] |= bytes4(qh.y & 0x03030303u) << 4;
	q[2] |= bytes4((qh.x >> 4) & 0x03030303u) << 4;
	q[3] |= bytes4((qh.y >> 4) & 0x03030303u) << 4;
	for (int i = 0; i < 4; i++) {
		v[i] = dl[i / 2] * vec4(ivec4(q[i]) - 32);
	}
}

#else
#error quant.glsl: no TYPE_<name> defined
#endif
