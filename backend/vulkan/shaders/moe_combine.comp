#version 450
// moe_combine: a mixture of experts' weighted sum (arch.OpMoE): for
// tokens t < n/hidden and values c < hidden,
//   d = sum_j wts[t*k + j] * (y[(t*k + j)*hidden + c]
//                              (+ bias[ids[t*k + j]*hidden + c] with flags & 2))
//   x[t*hidden + c] = d, or += d with flags & 1 (the residual stream),
// y the pairs' down products, slot by slot in the order moe_route wrote
// them, and bias the experts' down biases (gpt-oss).
//
// Push block (Go: pushMoECombine in moe.go):
//   x     address of the output, n float32 values
//   y     address of the pairs' outputs, n*k float32
//   ids   address of (n/hidden)*k int32 expert ids (read with flags & 2)
//   wts   address of (n/hidden)*k float32 gating weights
//   bias  address of experts*hidden float32 (read with flags & 2)
//   n, hidden, k, flags, experts  uint
// Grid: one invocation a value, groups2D(n, WG).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s x;
  F32s y;
  I32s ids;
  F32s wts;
  F32s bias;
  uint n;
  uint hidden;
  uint k;
  uint flags;
  uint experts;
} p;

void main() {
  uint i = global_index();
  if (i >= p.n) {
    return;
  }
  uint t = i / p.hidden, c = i % p.hidden;
  float d = 0.0;
  for (uint j = 0; j < p.k; j++) {
    uint q = t * p.k + j;
    float v = p.y.v[q * p.hidden + c];
    if ((p.flags & 2u) != 0u) {
      uint e = uint(clamp(p.ids.v[q], 0, int(p.experts) - 1));
      v += p.bias.v[e * p.hidden + c];
    }
    d += p.wts.v[q] * v;
  }
  p.x.v[i] = ((p.flags & 1u) != 0u ? p.x.v[i] : 0.0) + d;
}
