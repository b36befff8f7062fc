#version 450
// moe_glu: the gated activation of a mixture of experts' pairs (arch.OpMoE;
// a pair is a token's slot): out[q*width + i] = Act(g, u) with
//   g = gu[q*stride + i]         (+ gbias[ids[q]*width + i] with hasBias)
//   u = gu[q*stride + width + i] (+ ubias[ids[q]*width + i] with hasBias)
// the pair's gate and up products, packed in a row of stride values, and
// its expert's biases (gpt-oss). Act (act): 0 SwiGLU, silu(g) * u; 1
// OpenAI's clamped SwiGLU (swiglu_oai.comp's); 2 GeGLU (geglu.comp's).
//
// Push block (Go: pushMoEGLU in moe.go):
//   out    address of n float32 (pairs*width)
//   gu     address of the gate/up rows, pairs*stride float32
//   ids    address of pairs int32 expert ids (read with hasBias)
//   gbias, ubias  addresses of experts*width float32 (read with hasBias)
//   n, width, stride, act, hasBias, experts  uint
// Grid: one invocation a value, groups2D(n, WG).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s dst;
  F32s gu;
  I32s ids;
  F32s gbias;
  F32s ubias;
  uint n;
  uint width;
  uint stride;
  uint act;
  uint hasBias;
  uint experts;
} p;

void main() {
  uint i = global_index();
  if (i >= p.n) {
    return;
  }
  uint q = i / p.width, c = i % p.width;
  float g = p.gu.v[q * p.stride + c];
  float u = p.gu.v[q * p.stride + p.width + c];
  if (p.hasBias != 0u) {
    uint e = uint(clamp(p.ids.v[q], 0, int(p.experts) - 1));
    g += p.gbias.v[e * p.width + c];
    u += p.ubias.v[e * p.width + c];
  }
  float v;
  if (p.act == 1u) {
    const float alpha = 1.702; // arch.SwiGLUOAIAlpha
    const float limit = 7.0;   // arch.SwiGLUOAILimit
    g = min(g, limit);
    u = clamp(u, -limit, limit);
    v = g / (1.0 + exp(-alpha * g)) * (u + 1.0);
  } else if (p.act == 2u) {
    const float c2 = 2.0 * 0.7978845608028654; // 2 sqrt(2/pi)
    float z2 = c2 * (g + 0.044715 * g * g * g);
    v = g / (1.0 + exp(-z2)) * u;
  } else {
    v = silu_mul(g, u);
  }
  p.dst.v[i] = v;
}
