#version 450
// add: x[i] += y[i] for i < n (scalar.Add).
//
// Push block (Go: pushAdd):
//   x, y  addresses of n float32 values each
//   n     uint
// Grid: one invocation a value, groups2D(n, WG).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s x;
  F32s y;
  uint n;
} p;

void main() {
  uint i = global_index();
  if (i >= p.n) {
    return;
  }
  p.x.v[i] += p.y.v[i];
}
