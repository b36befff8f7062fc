#version 450
// attn_combine: merges attn.comp's runs of keys (splits > 1) into the
// attention output: for query row i (token t = i / nHeads, head h = i %
// nHeads) and its splits partial results (m_s, l_s, o_s) at
// part[(i*splits + s)*(headDim+2)] (m, l, then headDim values), out[i*headDim
// + d] = sum_s e^(m_s - M) o_s[d] / (sum_s e^(m_s - M) l_s + e^(sink - M))
// with M the maximum of the m_s and of the sink (hasSinks: sinks[h]; else
// no sink term). Runs with m = -inf (no key) add nothing.
//
// Push block (Go: pushAttnCombine):
//   part      address of rows*splits*(headDim+2) float32 values
//   out       address of rows*headDim float32 values
//   sinks     address of nHeads float32 logits (read with hasSinks)
//   rows      uint (tokens*nHeads)
//   nHeads, headDim, splits, hasSinks  uint
// Grid: one workgroup a row, groups2D(rows, 1).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s part;
  F32s dst;
  F32s sinks;
  uint rows;
  uint nHeads;
  uint headDim;
  uint splits;
  uint hasSinks;
} p;

#define NEG_INF uintBitsToFloat(0xff800000u)

void main() {
  uint row = group_index();
  if (row >= p.rows) {
    return;
  }
  uint stride = p.headDim + 2u;
  uint base = row * p.splits * stride;
  float mx = NEG_INF;
  for (uint s = 0; s < p.splits; s++) {
    mx = max(mx, p.part.v[base + s * stride]);
  }
  float sink = p.hasSinks != 0u ? p.sinks.v[row % p.nHeads] : NEG_INF;
  mx = max(mx, sink);
  if (mx == NEG_INF) {
    mx = 0.0; // no key and no sink: every weight below is 0
  }
  float l = sink == NEG_INF ? 0.0 : exp(sink - mx);
  for (uint s = 0; s < p.splits; s++) {
    float ms = p.part.v[base + s * stride];
    if (ms != NEG_INF) {
      l += exp(ms - mx) * p.part.v[base + s * stride + 1u];
    }
  }
  float inv = l > 0.0 ? 1.0 / l : 0.0;
  for (uint d = gl_LocalInvocationID.x; d < p.headDim; d += WG) {
    float o = 0.0;
    for (uint s = 0; s < p.splits; s++) {
      float ms = p.part.v[base + s * stride];
      if (ms != NEG_INF) {
        o += exp(ms - mx) * p.part.v[base + s * stride + 2u + d];
      }
    }
    p.dst.v[row * p.headDim + d] = o * inv;
  }
}
