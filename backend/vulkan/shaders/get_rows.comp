#version 450
// get_rows.comp: the embedding lookup of a weight matrix in one GGUF
// format (quant.glsl, TYPE_<name>), compiled per type into
// get_rows_<type>:
//   out[i*cols + c] = W[ids[i]][c] (* scale)   for i < n, c < cols
//
// Push constants (Go: pushGetRows in weights.go):
//   uint64 w     address of row 0 of W (16-byte aligned); row r starts at
//                w + r*rowBytes
//   uint64 ids   address of n int32 row numbers (each in 0..rows-1)
//   uint64 out   address of n*cols float32 (16-byte aligned)
//   uint32 cols, rowBytes, n
//   float  scale (0: none) multiplies the values (a scaled embedding)
// cols is a multiple of the format's block (QK: 16 for F32, F16, BF16).
//
// Specialization: id 0 local_size_x. Invocation x decodes the 16-value
// unit x of a row (quant.glsl), workgroup y the rows y, y + (y count), ...
// Dispatch ceil(cols/16 / local_size_x) x min(n, the device's limit).

#include "common.glsl"
#include "quant.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform Push {
	uint64_t w;
	uint64_t ids;
	uint64_t out_;
	uint cols;
	uint rowBytes;
	uint n;
	float scale;
} p;

void main() {
	const uint u = gl_GlobalInvocationID.x;
	if (u >= p.cols / QK * UNITS) {
		return;
	}
	const uint b = u / UNITS, j = u % UNITS;
	const uvec2 pos = (b * QK + unit_pos(j)) / 4;  // in vec4s
	I32s ids = I32s(p.ids);
	Vec4s o = Vec4s(p.out_);
	for (uint i = gl_WorkGroupID.y; i < p.n; i += gl_NumWorkGroups.y) {
		const uint row = uint(ids.v[i]);
		vec4 v[4];
		dequant_unit(p.w + uint64_t(row) * p.rowBytes + uint64_t(b) * BB, j, v);
		if (p.scale != 0.0) {
			for (uint k = 0; k < 4; k++) {
				v[k] *= p.scale;
			}
		}
		const uint oi = i * (p.cols / 4);
		o.v[oi + pos.x] = v[0];
		o.v[oi + pos.x + 1] = v[1];
		o.v[oi + pos.y] = v[2];
		o.v[oi + pos.y + 1] = v[3];
	}
}
