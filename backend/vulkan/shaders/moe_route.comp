#version 450
// moe_route: a mixture of experts' routing (arch.OpMoE): each token's
// TopK experts from its router logits, and their gating weights, as
// backend/forward's route picks them:
//   s_e = logits[t*experts + e] (+ bias[e] with flags & 1);
//   the k largest s_e, the lowest e first among equals, best first;
//   weights exp(s_e - s_best) / sum, the sum over the k chosen (flags & 2:
//   arch.MoE.NormTopK, or arch.GateSoftmaxTopK, the softmax over the top
//   k) or over all experts (the softmax's share, not renormalized).
//
// Push block (Go: pushMoERoute in moe.go):
//   logits   address of n*experts float32
//   bias     address of experts float32 (read with flags & 1)
//   ids      address of n*k int32: token t's experts at t*k, best first
//   wts      address of n*k float32: their weights
//   n, experts, k, flags  uint (k at most MAXK)
// Grid: one invocation a token, groups2D(n, WG). The choice is serial
// (experts * k steps a token): a few thousand operations for the largest
// routers (128 experts, 8 a token), against a decode step's milliseconds.
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s logits;
  F32s bias;
  I32s ids;
  F32s wts;
  uint n;
  uint experts;
  uint k;
  uint flags;
} p;

const uint MAXK = 32; // moeMaxTopK in moe.go

void main() {
  uint t = global_index();
  if (t >= p.n) {
    return;
  }
  float ts[MAXK];
  int te[MAXK];
  uint cnt = 0;
  uint base = t * p.experts;
  bool bias = (p.flags & 1u) != 0u;
  for (uint e = 0; e < p.experts; e++) {
    float s = p.logits.v[base + e];
    if (bias) {
      s += p.bias.v[e];
    }
    if (cnt == p.k && !(s > ts[cnt - 1])) {
      continue;
    }
    // Insert after every entry of a larger or equal score.
    uint j = cnt;
    while (j > 0 && s > ts[j - 1]) {
      j--;
    }
    if (cnt < p.k) {
      cnt++;
    }
    for (uint i = cnt - 1; i > j; i--) {
      ts[i] = ts[i - 1];
      te[i] = te[i - 1];
    }
    ts[j] = s;
    te[j] = int(e);
  }
  float best = ts[0];
  float total = 0.0;
  if ((p.flags & 2u) != 0u) {
    for (uint i = 0; i < cnt; i++) {
      total += exp(ts[i] - best);
    }
  } else {
    for (uint e = 0; e < p.experts; e++) {
      float s = p.logits.v[base + e];
      if (bias) {
        s += p.bias.v[e];
      }
      total += exp(s - best);
    }
  }
  for (uint i = 0; i < cnt; i++) {
    p.ids.v[t * p.k + i] = te[i];
    p.wts.v[t * p.k + i] = exp(ts[i] - best) / total;
  }
}
