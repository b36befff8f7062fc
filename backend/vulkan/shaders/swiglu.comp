#version 450
// swiglu: out[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x), for
// i < n (scalar.SwiGLU); out may alias gate.
//
// Push block (Go: pushGLU):
//   out, gate, up  addresses of n float32 values each
//   n              uint
// Grid: one invocation a value, groups2D(n, WG).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s dst;
  F32s gate;
  F32s up;
  uint n;
} p;

void main() {
  uint i = global_index();
  if (i >= p.n) {
    return;
  }
  float g = p.gate.v[i];
  p.dst.v[i] = g / (1.0 + exp(-g)) * p.up.v[i];
}
