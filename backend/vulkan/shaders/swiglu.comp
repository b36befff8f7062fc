#version 450
// swiglu: out[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x), for
// i < n (scalar.SwiGLU); out may alias gate.
//
// Push block (Go: pushGLU):
//   out            address of n float32 values
//   gate, up       addresses of the inputs: value i of out reads value
//                  (i / width) * stride + i % width of each (glu_src);
//                  width 0: value i (packed rows)
//   n, width, stride  uint
// Grid: one invocation a value, groups2D(n, WG).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s dst;
  F32s gate;
  F32s up;
  uint n;
  uint width;
  uint stride;
} p;

void main() {
  uint i = global_index();
  if (i >= p.n) {
    return;
  }
  uint j = glu_src(i, p.width, p.stride);
  float g = p.gate.v[j];
  p.dst.v[i] = silu_mul(g, p.up.v[j]);
}
