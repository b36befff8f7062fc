#version 450
// add_bias: x[r*d + i] += bias[i] for rows r < rows and i < d: a bias
// vector added to each token's row.
//
// Push block (Go: pushAddBias):
//   x     address of rows*d float32 values
//   bias  address of d float32 values
//   rows  uint
//   d     uint
// Grid: one invocation a value, groups2D(rows*d, WG).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s x;
  F32s bias;
  uint rows;
  uint d;
} p;

void main() {
  uint i = global_index();
  if (i >= p.rows * p.d) {
    return;
  }
  p.x.v[i] += p.bias.v[i % p.d];
}
