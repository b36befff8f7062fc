#version 450
// swiglu_oai: OpenAI's clamped SwiGLU (arch.SwiGLUOAI, scalar.SwiGLUOAI):
// g = min(gate, 7), u = clamp(up, -7, 7), out = g * sigmoid(1.702 g) *
// (u + 1). out may alias gate.
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

const float alpha = 1.702; // arch.SwiGLUOAIAlpha
const float limit = 7.0;   // arch.SwiGLUOAILimit

void main() {
  uint i = global_index();
  if (i >= p.n) {
    return;
  }
  uint j = glu_src(i, p.width, p.stride);
  float g = min(p.gate.v[j], limit);
  float u = clamp(p.up.v[j], -limit, limit);
  p.dst.v[i] = g / (1.0 + exp(-alpha * g)) * (u + 1.0);
}
