#version 450
// geglu: out[i] = gelu(gate[i]) * up[i] with gelu's tanh approximation
// (arch.GeGLU, scalar.GeGLU): x/2 (1 + tanh(z)), z = sqrt(2/pi) (x +
// 0.044715 x^3), evaluated as x / (1 + e^(-2z)), the same number without
// the cancellation of 1 + tanh(z) for z far below 0. out may alias gate.
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
  const float c2 = 2.0 * 0.7978845608028654; // 2 sqrt(2/pi)
  float x = p.gate.v[j];
  float z2 = c2 * (x + 0.044715 * x * x * x);
  p.dst.v[i] = x / (1.0 + exp(-z2)) * p.up.v[j];
}
