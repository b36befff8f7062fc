// quant8.glsl: the weight formats' blocks as 8-bit integers, for the
// integer dot products of mul_mvq.comp. Exactly one TYPE_<name> is
// defined (build.sh's -D); common.glsl is included first.
//
// A row of cols values is cols/QK blocks of BB bytes, a block UNITS units
// of 32 values. Unit j holds two runs of 16 values, at offsets pos.x ..
// pos.x+15 and pos.y .. pos.y+15 of the block (pos = unit_pos(j), multiples
// of 16), each run with one scale a and one offset c: value = a*q + c, q a
// signed 8-bit integer. unit_q(blk, j, qa, qb, ac) decodes unit j of the
// block at address blk: qa, qb the runs' 16 q each (four to a word, the
// lowest value in the low byte), ac = (a of run x, a of run y, c of run x,
// c of run y); HAS_C says whether a format has offsets at all (mins), the
// others' ac.zw being 0. A format's fixed integer offset (Q4_0's 8, Q6_K's
// 32, ...) is subtracted from the bytes (sub8), so that no sum of the
// activations is needed for it. The units of a block cover it once;
// neighbouring units read neighbouring bytes.
//
// The arithmetic is numfmt's decoding, reordered: a*q + c equals its
// value up to float32 rounding (the scales' products).

// sub8 subtracts c (at most 128) from each byte of q (each below 128), the
// results as signed bytes: no borrow crosses a byte.
uvec4 sub8(uvec4 q, uint c) { return ((q | 0x80808080u) - c * 0x01010101u) ^ 0x80808080u; }

// spread4 puts bits 0..3 of b at bit 0 of bytes 0..3.
uint spread4(uint b) { return (b & 1u) | ((b & 2u) << 7) | ((b & 4u) << 14) | ((b & 8u) << 21); }

// spread16 is spread4 of the four nibbles of the low 16 bits of b.
uvec4 spread16(uint b) { return uvec4(spread4(b), spread4(b >> 4), spread4(b >> 8), spread4(b >> 12)); }

// ld128a4 is the 16 bytes at address a (4-byte aligned).
uvec4 ld128a4(uint64_t a) { return uvec4(ld32(a), ld32(a + 4), ld32(a + 8), ld32(a + 12)); }

const uint LO4 = 0x0f0f0f0fu;

#if defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// The formats of 4-bit indices of 16 int8 levels, packed as Q4_0 (byte i
// of a group of 32 values holds value i in the low nibble, i+16 in the
// high): lut8[b] holds the levels of both nibbles of byte b (the low
// nibble's in bits 0..7, the high's in 8..15), filled by lut_init, which
// mul_mvq calls first (in uniform control flow).
#if defined(TYPE_MXFP4)
// numfmt.KValuesMXFP4: 0, 1, 2, 3, 4, 6, 8, 12 and their negations.
const uvec4 KVALUES = uvec4(0x03020100u, 0x0c080604u, 0xfdfeff00u, 0xf4f8fafcu);
#else
// numfmt.KValuesIQ4NL: -127, -104, -83, -65, -49, -35, -22, -10, 1, 13,
// 25, 38, 53, 69, 89, 113.
const uvec4 KVALUES = uvec4(0xbfad9881u, 0xf6eaddcfu, 0x26190d01u, 0x71594535u);
#endif
shared uint lut8[256];
uint level(uint k) { return (KVALUES[k >> 2] >> (8 * (k & 3u))) & 0xffu; }
void lut_init() {
	for (uint i = gl_LocalInvocationID.x; i < 256; i += gl_WorkGroupSize.x) {
		lut8[i] = level(i & 15u) | (level(i >> 4) << 8);
	}
	barrier();
}
// levels16 are the levels of the 32 nibbles of q: qa the low nibbles',
// qb the high nibbles'.
void levels16(uvec4 q, out uvec4 qa, out uvec4 qb) {
	for (uint k = 0; k < 4; k++) {
		uint a = 0, b = 0;
		for (uint i = 0; i < 4; i++) {
			const uint e = lut8[(q[k] >> (8 * i)) & 0xffu];
			a |= (e & 0xffu) << (8 * i);
			b |= (e >> 8) << (8 * i);
		}
		qa[k] = a;
		qb[k] = b;
	}
}
#else
void lut_init() {}
#endif

#if defined(TYPE_Q8_0)
// d F16 at 0, qs[32] int8 at 2: one unit a block.
const uint QK = 32, BB = 34, UNITS = 1;
const bool HAS_C = false;
uvec2 unit_pos(uint j) { return uvec2(0, 16); }
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
	const float d = half2f(ld16(blk));
	qa = ld128a2(blk + 2);
	qb = ld128a2(blk + 18);
	ac = vec4(d, d, 0.0, 0.0);
}
#elif defined(TYPE_Q4_0) || defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
// Q4_0: d F16 at 0, qs[16] at 2, value (q-8)*d; Q4_1: d, m F16 at 0, qs at
// 4, value q*d + m; Q5_0: d at 0, qh uint32 at 2 (bit i: the fifth bit of
// value i), qs at 6, value (q-16)*d; Q5_1: d, m at 0, qh at 4, qs at 8,
// value q*d + m. Byte i of qs holds value i (low nibble) and i+16 (high):
// one unit a block.
const uint QK = 32, UNITS = 1;
uvec2 unit_pos(uint j) { return uvec2(0, 16); }
#if defined(TYPE_Q4_0)
const uint BB = 18;
const bool HAS_C = false;
#elif defined(TYPE_Q4_1)
const uint BB = 20;
const bool HAS_C = true;
#elif defined(TYPE_Q5_0)
const uint BB = 22;
const bool HAS_C = false;
#else
const uint BB = 24;
const bool HAS_C = true;
#endif
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
#if defined(TYPE_Q4_0)
	const float d = half2f(ld16(blk));
	const uvec4 q = ld128a2(blk + 2);
	qa = sub8(q & LO4, 8);
	qb = sub8((q >> 4) & LO4, 8);
	ac = vec4(d, d, 0.0, 0.0);
#elif defined(TYPE_Q4_1)
	const vec2 dm = unpackHalf2x16(ld32(blk));
	const uvec4 q = ld128a4(blk + 4);
	qa = q & LO4;
	qb = (q >> 4) & LO4;
	ac = dm.xxyy;
#elif defined(TYPE_Q5_0)
	const float d = half2f(ld16(blk));
	const uint qh = ld32a2(blk + 2);
	const uvec4 q = ld128a2(blk + 6);
	qa = sub8((q & LO4) | (spread16(qh) << 4), 16);
	qb = sub8(((q >> 4) & LO4) | (spread16(qh >> 16) << 4), 16);
	ac = vec4(d, d, 0.0, 0.0);
#else
	const vec2 dm = unpackHalf2x16(ld32(blk));
	const uint qh = ld32(blk + 4);
	const uvec4 q = uvec4(ld64(blk + 8), ld64(blk + 16));
	qa = (q & LO4) | (spread16(qh) << 4);
	qb = ((q >> 4) & LO4) | (spread16(qh >> 16) << 4);
	ac = dm.xxyy;
#endif
}

#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
// qs[64] 2 bits a value: byte 32h+l holds value 128h+32k+l at bits 2k.
// Unit j: qs bytes 32h+l0..+15 (h = j/4, l0 = 16*(j%2)), the values at
// k and k+1 (k = 2*((j/2)%2)), each run of 16 in one sub-block of 16.
const uint QK = 256, UNITS = 8;
uvec2 unit_pos(uint j) {
	const uint base = 128 * (j / 4) + 64 * ((j / 2) % 2) + 16 * (j % 2);
	return uvec2(base, base + 32);
}
#if defined(TYPE_Q2_K)
// scales[16] at 0 (scale in the low nibble, min in the high), qs at 16, d,
// dmin F16 at 80; value = d*sc*q - dmin*m.
const uint BB = 84;
const bool HAS_C = true;
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
	const uint h = j / 4, k = 2 * ((j / 2) % 2), l0 = 16 * (j % 2);
	const vec2 dm = unpackHalf2x16(ld32(blk + 80));
	const uint is = 8 * h + 2 * k + l0 / 16;
	const uvec2 s = uvec2(ld8(blk + is), ld8(blk + is + 2));
	const uvec4 q = ld128a4(blk + 16 + 32 * h + l0);
	qa = (q >> (2 * k)) & 0x03030303u;
	qb = (q >> (2 * k + 2)) & 0x03030303u;
	ac = vec4(dm.x * vec2(s & 15u), -dm.y * vec2(s >> 4));
}
#else
// hmask[32] at 0 (the third bit of value 128h+32k+l is bit 4h+k of
// hmask[l]), qs at 32, scales[12] at 96 (16 6-bit scales), d F16 at 108;
// value = d*(sc-32)*((q | third bit << 2) - 4).
const uint BB = 110;
const bool HAS_C = false;
// q3scale is numfmt.Q3KScale(is, block's scales).
float q3scale(uint64_t blk, uint is) {
	const uint lo = (ld8(blk + 96 + is % 8) >> (4 * (is / 8))) & 15u;
	const uint hi = (ld8(blk + 104 + is % 4) >> (2 * (is / 4))) & 3u;
	return float(int(lo | (hi << 4)) - 32);
}
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
	const uint h = j / 4, k = 2 * ((j / 2) % 2), l0 = 16 * (j % 2);
	const float d = half2f(ld16(blk + 108));
	const uint is = 8 * h + 2 * k + l0 / 16;
	const uvec4 q = ld128a2(blk + 32 + 32 * h + l0);
	const uvec4 hm = ld128a2(blk + l0) >> (4 * h + k);
	qa = sub8(((q >> (2 * k)) & 0x03030303u) | ((hm & 0x01010101u) << 2), 4);
	qb = sub8(((q >> (2 * k + 2)) & 0x03030303u) | (((hm >> 1) & 0x01010101u) << 2), 4);
	ac = vec4(d * q3scale(blk, is), d * q3scale(blk, is + 2), 0.0, 0.0);
}
#endif

#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// d F16 at 0, dmin F16 at 2, scales[12] at 4 (8 6-bit scales and mins),
// then (Q5_K) qh[32] at 16, and qs[128] (at 16 or 48): byte 32h+l holds
// value 64h+l in the low nibble, 64h+32+l in the high; Q5_K's fifth bit
// of value 64h+l is bit 2h of qh[l], of 64h+32+l bit 2h+1. Unit j: qs
// bytes 32h+l0..+15, h = j/2, l0 = 16*(j%2), of sub-blocks 2h and 2h+1;
// value = d*sc*q - dmin*m.
const uint QK = 256, UNITS = 8;
const bool HAS_C = true;
uvec2 unit_pos(uint j) {
	const uint base = 64 * (j / 2) + 16 * (j % 2);
	return uvec2(base, base + 32);
}
#if defined(TYPE_Q4_K)
const uint BB = 144;
#else
const uint BB = 176;
#endif
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
	const uint h = j / 2, l0 = 16 * (j % 2);
	const vec2 dm = unpackHalf2x16(ld32(blk));
	// numfmt.ScaleMinK4 of sub-blocks 2h and 2h+1 (quant.glsl's).
	const uint sh = 16 * (h % 2);
	const uint x = ld32(blk + 4) >> sh, y = ld32(blk + 8) >> sh, z = ld32(blk + 12) >> sh;
	const uint sc = h < 2 ? x & 0x3f3fu : (z & 0x0f0fu) | ((x >> 2) & 0x3030u);
	const uint mn = h < 2 ? y & 0x3f3fu : ((z >> 4) & 0x0f0fu) | ((y >> 2) & 0x3030u);
	ac = vec4(dm.x * vec2(sc & 255u, sc >> 8), -dm.y * vec2(mn & 255u, mn >> 8));
#if defined(TYPE_Q4_K)
	const uvec4 q = ld128(blk + 16 + 32 * h + l0);
	qa = q & LO4;
	qb = (q >> 4) & LO4;
#else
	const uvec4 q = ld128(blk + 48 + 32 * h + l0);
	const uvec4 qh = ld128(blk + 16 + l0) >> (2 * h);
	qa = (q & LO4) | ((qh & 0x01010101u) << 4);
	qb = ((q >> 4) & LO4) | (((qh >> 1) & 0x01010101u) << 4);
#endif
}

#elif defined(TYPE_Q6_K)
// ql[128] at 0, qh[64] at 128, scales[16] int8 at 192, d F16 at 208. For
// half h (values 128h..), l < 64: ql[64h+l] holds value 128h+l (low
// nibble) and 128h+64+l (high); their top two bits are qh[32h+l%32] at
// bits 0 (l < 32) or 2, and 4 or 6; value v's scale is scales[v/16];
// value = d*sc*(q-32). Unit j: ql bytes 64h+l0..+15, h = j/4, l0 =
// 16*(j%4).
const uint QK = 256, BB = 210, UNITS = 8;
const bool HAS_C = false;
uvec2 unit_pos(uint j) {
	const uint base = 128 * (j / 4) + 16 * (j % 4);
	return uvec2(base, base + 64);
}
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
	const uint h = j / 4, l0 = 16 * (j % 4);
	const float d = half2f(ld16(blk + 208));
	const uint is = 192 + 8 * h + l0 / 16;
	ac = vec4(d * vec2(bitfieldExtract(int(ld8(blk + is)), 0, 8), bitfieldExtract(int(ld8(blk + is + 4)), 0, 8)), 0.0, 0.0);
	const uvec4 ql = ld128a2(blk + 64 * h + l0);
	const uvec4 qh = ld128a2(blk + 128 + 32 * h + l0 % 32) >> (2 * (l0 / 32));
	qa = sub8((ql & LO4) | ((qh & 0x03030303u) << 4), 32);
	qb = sub8(((ql >> 4) & LO4) | (((qh >> 4) & 0x03030303u) << 4), 32);
}

#elif defined(TYPE_IQ4_NL) || defined(TYPE_MXFP4)
// IQ4_NL: d F16 at 0, qs[16] at 2; value = d*level. MXFP4: e E8M0 at 0,
// qs[16] at 1; value = level*E8M0Half(e). One unit a block.
const uint QK = 32, UNITS = 1;
const bool HAS_C = false;
uvec2 unit_pos(uint j) { return uvec2(0, 16); }
#if defined(TYPE_IQ4_NL)
const uint BB = 18;
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
	const float d = half2f(ld16(blk));
	levels16(ld128a2(blk + 2), qa, qb);
	ac = vec4(d, d, 0.0, 0.0);
}
#else
const uint BB = 17;
// e8m0half is numfmt.E8M0Half: 2^(e-128) (subnormal for e < 2).
float e8m0half(uint e) { return uintBitsToFloat(e < 2 ? 0x00200000u << e : (e - 1) << 23); }
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
	const float d = e8m0half(ld8(blk));
	levels16(uvec4(ld64a1(blk + 1), ld64a1(blk + 9)), qa, qb);
	ac = vec4(d, d, 0.0, 0.0);
}
#endif

#elif defined(TYPE_IQ4_XS)
// d F16 at 0, scales_h uint16 at 2, scales_l[4] at 4, qs[128] at 8: 8
// sub-blocks of 32 packed as IQ4_NL, sub-block ib with the 6-bit scale
// (scales_l[ib/2] >> 4*(ib%2) & 15 | (scales_h >> 2*ib & 3) << 4) - 32;
// value = d*scale*level. Unit j: sub-block j.
const uint QK = 256, BB = 136, UNITS = 8;
const bool HAS_C = false;
uvec2 unit_pos(uint j) { return uvec2(32 * j, 32 * j + 16); }
void unit_q(uint64_t blk, uint j, out uvec4 qa, out uvec4 qb, out vec4 ac) {
	const uint dh = ld32(blk);
	const uint sl = ld32(blk + 4);
	const int ls = int(((sl >> (4 * j)) & 15u) | (((dh >> (16 + 2 * j)) & 3u) << 4)) - 32;
	const float a = half2f(dh) * float(ls);
	levels16(uvec4(ld64(blk + 8 + 16 * j), ld64(blk + 16 + 16 * j)), qa, qb);
	ac = vec4(a, a, 0.0, 0.0);
}

#else
#error quant8.glsl: no TYPE_<name> with integer units defined
#endif
