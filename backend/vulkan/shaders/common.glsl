// common.glsl: what every shader of backend/vulkan includes: the
// extensions, the buffer reference types (declared here once; buffers are
// reached through device addresses in the push constants, never through
// descriptor sets) and small helpers.
//
// A reference is made from an address: F32s(p.y).v[i], or U16s(a).v[0]
// for the 16 bits at address a. The alignment of each type is the
// alignment every address given to it must have.

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32s { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vec4s { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer F16s { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer F16Vec4s { f16vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8s { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer U16s { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32s { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer UVec2s { uvec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer UVec4s { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer I32s { int v[]; };

// ld8 is the byte at address a.
uint ld8(uint64_t a) { return uint(U8s(a).v[0]); }

// ld16 is the little-endian 16 bits at address a (2-byte aligned).
uint ld16(uint64_t a) { return uint(U16s(a).v[0]); }

// ld32 is the little-endian 32 bits at address a (4-byte aligned).
uint ld32(uint64_t a) { return U32s(a).v[0]; }

// ld32a2 is the little-endian 32 bits at address a (2-byte aligned).
uint ld32a2(uint64_t a) { return ld16(a) | (ld16(a + 2) << 16); }

// ld64 is the 8 bytes at address a (8-byte aligned), ld64a4 at address a
// 4-byte aligned.
uvec2 ld64(uint64_t a) { return UVec2s(a).v[0]; }
uvec2 ld64a4(uint64_t a) { return uvec2(ld32(a), ld32(a + 4)); }

// The loads of less aligned data read the aligned words that hold it
// (every word read holds one of its bytes: nothing past the end of a
// buffer whose start is 4-byte aligned), as many whatever the alignment
// (no divergence between invocations of different alignments), and
// shift them into place.

// ld64a2 is the 8 bytes at address a (2-byte aligned).
uvec2 ld64a2(uint64_t a) {
	const uint64_t w = a & ~uint64_t(3);
	const bool odd = (a & 2) != 0;
	const uint x = ld32(w), y = ld32(w + 4), z = ld16(odd ? w + 8 : w + 4);
	return odd ? uvec2((x >> 16) | (y << 16), (y >> 16) | (z << 16)) : uvec2(x, y);
}

// ld128a2 is the 16 bytes at address a (2-byte aligned).
uvec4 ld128a2(uint64_t a) {
	const uint64_t w = a & ~uint64_t(3);
	const bool odd = (a & 2) != 0;
	const uvec4 x = uvec4(ld32(w), ld32(w + 4), ld32(w + 8), ld32(w + 12));
	const uint z = ld16(odd ? w + 16 : w + 12);
	return odd ? (x >> 16) | (uvec4(x.yzw, z) << 16) : x;
}

// ld64a1 is the 8 bytes at address a (any alignment).
uvec2 ld64a1(uint64_t a) {
	const uint64_t w = a & ~uint64_t(3);
	const uint s = 8 * uint(a & 3);
	const uint x = ld32(w), y = ld32(w + 4), z = ld32(s != 0 ? w + 8 : w + 4);
	return s == 0 ? uvec2(x, y) : uvec2((x >> s) | (y << (32 - s)), (y >> s) | (z << (32 - s)));
}

// ld128 is the 16 bytes at address a (16-byte aligned).
uvec4 ld128(uint64_t a) { return UVec4s(a).v[0]; }

// half2f is the IEEE half in the low 16 bits of h as float (exact).
float half2f(uint h) { return unpackHalf2x16(h).x; }

// silu_mul returns silu(g) * u = g / (1 + e^-g) * u: SwiGLU's, in every
// shader that computes it (swiglu, moe_glu, mul_mv's and the integer
// products' inputs), so that they give the same bits.
float silu_mul(float g, float u) { return g / (1.0 + exp(-g)) * u; }
vec4 silu_mul(vec4 g, vec4 u) { return g / (1.0 + exp(-g)) * u; }

// bytes4 spreads the four bytes of q (lowest first) over a uvec4.
uvec4 bytes4(uint q) { return uvec4(q, q >> 8, q >> 16, q >> 24) & 0xffu; }

// sbytes4 is bytes4 with each byte read as a signed int8.
ivec4 sbytes4(uint q) {
	return ivec4(bitfieldExtract(int(q), 0, 8), bitfieldExtract(int(q), 8, 8), bitfieldExtract(int(q), 16, 8),
	             bitfieldExtract(int(q), 24, 8));
}

// nibbles4 are the low nibbles of the four bytes of q (hi: the high ones).
uvec4 nibbles4(uint q) { return bytes4(q & 0x0f0f0f0fu); }
uvec4 hnibbles4(uint q) { return bytes4((q >> 4) & 0x0f0f0f0fu); }

// bits4 spreads bits 0..3 of b over a uvec4.
uvec4 bits4(uint b) { return uvec4(b, b >> 1, b >> 2, b >> 3) & 1u; }
