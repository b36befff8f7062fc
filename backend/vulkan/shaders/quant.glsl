// quant.glsl: the decoding of each weight format's blocks, the one both
// mul_mv.comp and get_rows.comp use. Exactly one TYPE_<name> is defined
// (build.sh's -D); common.glsl is included first.
//
// A row of cols values is cols/QK blocks of BB bytes. A block is decoded in
// units of 8 values: unit j (0 <= j < UNITS = QK/8) holds the values at
// offsets pos.x .. pos.x+3 and pos.y .. pos.y+3 of the block, pos =
// unit_pos(j), and dequant_unit(blk, j, lo, hi) decodes them (lo: the
// first run, hi: the second) from the block at address blk. The units of
// a block cover it once; neighbouring units read neighbouring bytes, so
// that consecutive invocations read a row's bytes consecutively.
//
// The arithmetic is numfmt's (ggml's dequantize_row_*) in float32; a
// driver may fuse a product and a sum into one FMA (within one rounding
// of numfmt). The block layouts are numfmt's constants' comments
// (numfmt/legacy.go, kquants.go, iquants.go, mxfp4.go). F32, F16 and BF16
// are read as blocks of 8 values (16-byte aligned rows: cols a multiple
// of 8, the row addresses 16-byte aligned).

// ---------------------------------------------------------------- shared by families

#if defined(TYPE_Q4_0) || defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1) || \
    defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// The formats whose units are 4 bytes of packed nibbles: unit j holds
// values 4*(j%4).. (low nibbles) and 4*(j%4)+16.. (high) of its group of
// 32 values, 32*(j/4).
uvec2 unit_pos(uint j) {
	const uint base = 32 * (j / 4) + 4 * (j % 4);
	return uvec2(base, base + 16);
}
#endif

#if defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// level4 is entry k (0..15) of the 16 int8 levels packed four a word in
// t (a vector, not an array: no memory lookup).
float level4(uvec4 t, uint k) { return float(bitfieldExtract(int(t[k >> 2]), int(8 * (k & 3)), 8)); }
vec4 levels4(uvec4 t, uvec4 k) { return vec4(level4(t, k.x), level4(t, k.y), level4(t, k.z), level4(t, k.w)); }

// KVALUES_IQ4NL are numfmt.KValuesIQ4NL: -127, -104, -83, -65, -49, -35,
// -22, -10, 1, 13, 25, 38, 53, 69, 89, 113.
const uvec4 KVALUES_IQ4NL = uvec4(0xbfad9881u, 0xf6eaddcfu, 0x26190d01u, 0x71594535u);
#endif

// ---------------------------------------------------------------- floats: groups of 8 values

#if defined(TYPE_F32)
const uint QK = 8, BB = 32, UNITS = 1;
uvec2 unit_pos(uint j) { return uvec2(0, 4); }
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	lo = uintBitsToFloat(ld128(blk));
	hi = uintBitsToFloat(ld128(blk + 16));
}
#elif defined(TYPE_F16)
const uint QK = 8, BB = 16, UNITS = 1;
uvec2 unit_pos(uint j) { return uvec2(0, 4); }
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const uvec4 q = ld128(blk);
	lo = vec4(unpackHalf2x16(q.x), unpackHalf2x16(q.y));
	hi = vec4(unpackHalf2x16(q.z), unpackHalf2x16(q.w));
}
#elif defined(TYPE_BF16)
const uint QK = 8, BB = 16, UNITS = 1;
uvec2 unit_pos(uint j) { return uvec2(0, 4); }
// bf2 are the two BF16 values of q (low half first).
vec2 bf2(uint q) { return uintBitsToFloat(uvec2(q << 16, q & 0xffff0000u)); }
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const uvec4 q = ld128(blk);
	lo = vec4(bf2(q.x), bf2(q.y));
	hi = vec4(bf2(q.z), bf2(q.w));
}

// ---------------------------------------------------------------- legacy: blocks of 32

#elif defined(TYPE_Q8_0)
// d F16 at 0, qs[32] int8 at 2; unit j: the 8 values 8j..8j+7.
const uint QK = 32, BB = 34, UNITS = 4;
uvec2 unit_pos(uint j) { return uvec2(8 * j, 8 * j + 4); }
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const float d = half2f(ld16(blk));
	const uint64_t q = blk + 2 + 8 * j;
	lo = vec4(sbytes4(ld32a2(q))) * d;
	hi = vec4(sbytes4(ld32a2(q + 4))) * d;
}
#elif defined(TYPE_Q4_0)
// d F16 at 0, qs[16] at 2; value = (q-8)*d.
const uint QK = 32, BB = 18, UNITS = 4;
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const float d = half2f(ld16(blk));
	const uint q = ld32a2(blk + 2 + 4 * j);
	lo = vec4(ivec4(nibbles4(q)) - 8) * d;
	hi = vec4(ivec4(hnibbles4(q)) - 8) * d;
}
#elif defined(TYPE_Q4_1)
// d F16 at 0, m F16 at 2, qs[16] at 4; value = q*d + m.
const uint QK = 32, BB = 20, UNITS = 4;
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const vec2 dm = unpackHalf2x16(ld32(blk));
	const uint q = ld32(blk + 4 + 4 * j);
	lo = vec4(nibbles4(q)) * dm.x + dm.y;
	hi = vec4(hnibbles4(q)) * dm.x + dm.y;
}
#elif defined(TYPE_Q5_0)
// d F16 at 0, qh uint32 at 2 (bit i: the fifth bit of value i), qs[16]
// at 6; value = (q-16)*d.
const uint QK = 32, BB = 22, UNITS = 4;
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const float d = half2f(ld16(blk));
	const uint qh = ld32a2(blk + 2);
	const uint q = ld32a2(blk + 6 + 4 * j);
	lo = vec4(ivec4(nibbles4(q) | (bits4(qh >> (4 * j)) << 4)) - 16) * d;
	hi = vec4(ivec4(hnibbles4(q) | (bits4(qh >> (4 * j + 16)) << 4)) - 16) * d;
}
#elif defined(TYPE_Q5_1)
// d F16 at 0, m F16 at 2, qh uint32 at 4, qs[16] at 8; value = q*d + m.
const uint QK = 32, BB = 24, UNITS = 4;
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const vec2 dm = unpackHalf2x16(ld32(blk));
	const uint qh = ld32(blk + 4);
	const uint q = ld32(blk + 8 + 4 * j);
	lo = vec4(nibbles4(q) | (bits4(qh >> (4 * j)) << 4)) * dm.x + dm.y;
	hi = vec4(hnibbles4(q) | (bits4(qh >> (4 * j + 16)) << 4)) * dm.x + dm.y;
}

// ---------------------------------------------------------------- non-linear 4-bit levels

#elif defined(TYPE_IQ4_NL)
// d F16 at 0, qs[16] at 2; value = d*level.
const uint QK = 32, BB = 18, UNITS = 4;
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const float d = half2f(ld16(blk));
	const uint q = ld32a2(blk + 2 + 4 * j);
	lo = d * levels4(KVALUES_IQ4NL, nibbles4(q));
	hi = d * levels4(KVALUES_IQ4NL, hnibbles4(q));
}
#elif defined(TYPE_IQ4_XS)
// d F16 at 0, scales_h uint16 at 2, scales_l[4] at 4, qs[128] at 8: 8
// sub-blocks of 32 packed as IQ4_NL, sub-block ib with the 6-bit scale
// (scales_l[ib/2] >> 4*(ib%2) & 15 | (scales_h >> 2*ib & 3) << 4) - 32;
// value = d*scale*level.
const uint QK = 256, BB = 136, UNITS = 32;
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const uint ib = j / 4;
	const uint dh = ld32(blk);
	const uint sl = ld32(blk + 4);
	const int ls = int(((sl >> (4 * ib)) & 15u) | (((dh >> (16 + 2 * ib)) & 3u) << 4)) - 32;
	const float dl = half2f(dh) * float(ls);
	const uint q = ld32(blk + 8 + 4 * j);
	lo = dl * levels4(KVALUES_IQ4NL, nibbles4(q));
	hi = dl * levels4(KVALUES_IQ4NL, hnibbles4(q));
}
#elif defined(TYPE_MXFP4)
// e E8M0 at 0, qs[16] at 1; value = level*E8M0Half(e), the levels
// numfmt.KValuesMXFP4: 0, 1, 2, 3, 4, 6, 8, 12 and their negations.
const uint QK = 32, BB = 17, UNITS = 4;
const uvec4 KVALUES_MXFP4 = uvec4(0x03020100u, 0x0c080604u, 0xfdfeff00u, 0xf4f8fafcu);
// e8m0half is numfmt.E8M0Half: 2^(e-128) (subnormal for e < 2).
float e8m0half(uint e) { return uintBitsToFloat(e < 2 ? 0x00200000u << e : (e - 1) << 23); }
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const float d = e8m0half(ld8(blk));
	const uint q = ld32a1(blk + 1 + 4 * j);
	lo = levels4(KVALUES_MXFP4, nibbles4(q)) * d;
	hi = levels4(KVALUES_MXFP4, hnibbles4(q)) * d;
}

// ---------------------------------------------------------------- k-quants: super-blocks of 256

#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
const uint QK = 256, UNITS = 32;
// qs[64] 2 bits a value: byte 32h+l holds value 128h+32k+l at bits 2k.
// Unit j: bytes 32h+l0..+3 (h = j/16, l0 = 4*(j%8)), values at k and k+1
// (k = 2*(j/8 % 2)), sub-blocks of 16 values 8h+2k+l0/16 and 8h+2k+2+l0/16.
uvec2 unit_pos(uint j) {
	const uint base = 128 * (j / 16) + 64 * ((j / 8) % 2) + 4 * (j % 8);
	return uvec2(base, base + 32);
}

#if defined(TYPE_Q2_K)
// scales[16] at 0 (scale in the low nibble, min in the high), qs[64] at
// 16, d F16 at 80, dmin F16 at 82; value = d*sc*q - dmin*m.
const uint BB = 84;
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const uint h = j / 16, k = 2 * ((j / 8) % 2), l0 = 4 * (j % 8);
	const vec2 dm = unpackHalf2x16(ld32(blk + 80));
	const uint q = ld32(blk + 16 + 32 * h + l0);
	const uint is = 8 * h + 2 * k + l0 / 16;
	const uint s0 = ld8(blk + is), s1 = ld8(blk + is + 2);
	lo = dm.x * float(s0 & 15u) * vec4(bytes4((q >> (2 * k)) & 0x03030303u)) - dm.y * float(s0 >> 4);
	hi = dm.x * float(s1 & 15u) * vec4(bytes4((q >> (2 * k + 2)) & 0x03030303u)) - dm.y * float(s1 >> 4);
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
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const uint h = j / 16, k = 2 * ((j / 8) % 2), l0 = 4 * (j % 8);
	const float d = half2f(ld16(blk + 108));
	const uint q = ld32a2(blk + 32 + 32 * h + l0);
	const uint m = ld32a2(blk + l0) >> (4 * h + k);
	const uint is = 8 * h + 2 * k + l0 / 16;
	const ivec4 q0 = ivec4(bytes4((q >> (2 * k)) & 0x03030303u)) - 4 * ivec4(1u - bytes4(m & 0x01010101u));
	const ivec4 q1 = ivec4(bytes4((q >> (2 * k + 2)) & 0x03030303u)) - 4 * ivec4(1u - bytes4((m >> 1) & 0x01010101u));
	lo = d * q3scale(blk, is) * vec4(q0);
	hi = d * q3scale(blk, is + 2) * vec4(q1);
}
#endif // Q2_K, Q3_K

#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
const uint QK = 256, UNITS = 32;
// d F16 at 0, dmin F16 at 2, scales[12] at 4 (8 6-bit scales and mins),
// then (Q5_K) qh[32] at 16, and qs[128] (at 16 or 48): byte 32h+l holds
// value 64h+l in the low nibble, 64h+32+l in the high; Q5_K's fifth bit
// of value 64h+l is bit 2h of qh[l], of 64h+32+l bit 2h+1. Unit j: bytes
// 32h+l0..+3, h = j/8, l0 = 4*(j%8); value = d*sc*q - dmin*m.
uvec2 unit_pos(uint j) {
	const uint base = 64 * (j / 8) + 4 * (j % 8);
	return uvec2(base, base + 32);
}
// scale_min_k4 is numfmt.ScaleMinK4(is, scales) as (scale, min), s the 12
// scale bytes as three words.
uvec2 scale_min_k4(uvec3 s, uint is) {
	const uint b = 8 * (is % 4);
	if (is < 4) {
		return uvec2((s.x >> b) & 63u, (s.y >> b) & 63u);
	}
	return uvec2(((s.z >> b) & 15u) | (((s.x >> b) >> 6) & 3u) << 4,
	             ((s.z >> b) >> 4 & 15u) | (((s.y >> b) >> 6) & 3u) << 4);
}
#if defined(TYPE_Q4_K)
const uint BB = 144;
#else
const uint BB = 176;
#endif
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const uint h = j / 8, l0 = 4 * (j % 8);
	const vec2 dm = unpackHalf2x16(ld32(blk));
	const uvec3 s = uvec3(ld32(blk + 4), ld32(blk + 8), ld32(blk + 12));
	const uvec2 sm0 = scale_min_k4(s, 2 * h), sm1 = scale_min_k4(s, 2 * h + 1);
#if defined(TYPE_Q4_K)
	const uint q = ld32(blk + 16 + 32 * h + l0);
	const uvec4 q0 = nibbles4(q), q1 = hnibbles4(q);
#else
	const uint q = ld32(blk + 48 + 32 * h + l0);
	const uint qh = ld32(blk + 16 + l0) >> (2 * h);
	const uvec4 q0 = nibbles4(q) | (bytes4(qh & 0x01010101u) << 4);
	const uvec4 q1 = hnibbles4(q) | (bytes4((qh >> 1) & 0x01010101u) << 4);
#endif
	lo = dm.x * float(sm0.x) * vec4(q0) - dm.y * float(sm0.y);
	hi = dm.x * float(sm1.x) * vec4(q1) - dm.y * float(sm1.y);
}

#elif defined(TYPE_Q6_K)
const uint QK = 256, UNITS = 32;
// ql[128] at 0, qh[64] at 128, scales[16] int8 at 192, d F16 at 208. For
// half h (values 128h..), l < 64: ql[64h+l] holds value 128h+l (low
// nibble) and 128h+64+l (high); their top two bits are qh[32h+l%32] at
// bits 0 (l < 32) or 2, and 4 or 6; value v's scale is scales[v/16];
// value = d*sc*(q-32). Unit j: ql bytes 64h+l0..+3, h = j/16, l0 =
// 4*(j%16).
const uint BB = 210;
uvec2 unit_pos(uint j) {
	const uint base = 128 * (j / 16) + 4 * (j % 16);
	return uvec2(base, base + 64);
}
void dequant_unit(uint64_t blk, uint j, out vec4 lo, out vec4 hi) {
	const uint h = j / 16, l0 = 4 * (j % 16);
	const float d = half2f(ld16(blk + 208));
	const uint ql = ld32a2(blk + 64 * h + l0);
	const uint qh = ld32a2(blk + 128 + 32 * h + l0 % 32) >> (2 * (l0 / 32));
	const ivec4 q0 = ivec4(nibbles4(ql) | (bytes4(qh & 0x03030303u) << 4)) - 32;
	const ivec4 q1 = ivec4(hnibbles4(ql) | (bytes4((qh >> 4) & 0x03030303u) << 4)) - 32;
	const uint is = 192 + 8 * h + l0 / 16;
	lo = d * float(bitfieldExtract(int(ld8(blk + is)), 0, 8)) * vec4(q0);
	hi = d * float(bitfieldExtract(int(ld8(blk + is + 4)), 0, 8)) * vec4(q1);
}

#else
#error quant.glsl: no TYPE_<name> defined
#endif
