#version 450
// rms_norm: y = x / sqrt(mean(x^2) + eps) * gain over each of rows rows of
// d values (scalar.RMSNorm); y may alias x. The same shader normalizes
// whole tokens (rows = tokens, d = the model width) and heads (QK-norm:
// rows = tokens*heads, d = headDim). The rows come in groups of group rows
// of d values each, one group every stride values: row r starts at value
// (r / group) * stride + (r % group) * d of x and of y (packed rows: group
// 1, stride d; the query heads of a fused QKV product: group nHeads,
// stride the product's width).
//
// Push block (Go: pushRMSNorm):
//   x, y   addresses of the rows (float32)
//   gain   address of d float32 values
//   rows   uint
//   d      uint
//   eps    float
//   group  uint (at least 1)
//   stride uint
// Grid: one workgroup a row, groups2D(rows, 1).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s x;
  F32s y;
  F32s gain;
  uint rows;
  uint d;
  float eps;
  uint group;
  uint stride;
} p;

void main() {
  uint row = group_index();
  if (row >= p.rows) {
    return; // the whole workgroup: barriers stay uniform
  }
  uint base = (row / p.group) * p.stride + (row % p.group) * p.d;
  float ss = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < p.d; i += WG) {
    float v = p.x.v[base + i];
    ss += v * v;
  }
  ss = wg_sum(ss);
  float scale = 1.0 / sqrt(ss / float(p.d) + p.eps);
  for (uint i = gl_LocalInvocationID.x; i < p.d; i += WG) {
    precise float v = p.x.v[base + i] * scale;
    p.y.v[base + i] = v * p.gain.v[i];
  }
}
