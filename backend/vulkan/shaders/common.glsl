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
layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8s { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer U16s { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32s { uint v[]; };
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

// ld32a1 is the little-endian 32 bits at address a (any alignment).
uint ld32a1(uint64_t a) { return ld8(a) | (ld8(a + 1) << 8) | (ld8(a + 2) << 16) | (ld8(a + 3) << 24); }

// ld128 is the 16 bytes at address a (16-byte aligned).
uvec4 ld128(uint64_t a) { return UVec4s(a).v[0]; }

// half2f is the IEEE half in the low 16 bits of h as float (exact).
float half2f(uint h) { return unpackHalf2x16(h).x; }

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
