// common.glsl: the extensions and buffer reference types every shader of
// backend/vulkan uses (included first, after #version). Buffers are reached
// through their device addresses, passed in the push constants; each type
// below is declared once here.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32s { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer F16s { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8s { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer U16s { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32s { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer I32s { int v[]; };
