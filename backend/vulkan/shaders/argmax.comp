#version 450
// argmax: for each of rows rows of vocab float32 logits, the index of the
// largest value, the lowest index among ties; NaN is never chosen unless
// the whole row is NaN, which gives 0 (sampling.Argmax).
//
// Push block (Go: pushArgmax):
//   logits  address of rows*vocab float32 values
//   out     address of rows int32 indices
//   rows    uint
//   vocab   uint
// Grid: one workgroup a row, groups2D(rows, 1).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s logits;
  I32s dst;
  uint rows;
  uint vocab;
} p;

shared float sv[WG];
shared uint si[WG];

const uint none = 0xffffffffu;

// better reports whether (v, i) comes before (bv, bi) in the argmax order.
bool better(float v, uint i, float bv, uint bi) {
  return !isnan(v) && (isnan(bv) || v > bv || (v == bv && i < bi));
}

void main() {
  uint row = group_index();
  if (row >= p.rows) {
    return; // the whole workgroup
  }
  uint tid = gl_LocalInvocationID.x;
  uint base = row * p.vocab;
  float bv = uintBitsToFloat(0x7fc00000u); // NaN: no candidate yet
  uint bi = none;
  for (uint i = tid; i < p.vocab; i += WG) {
    float v = p.logits.v[base + i];
    if (better(v, i, bv, bi)) {
      bv = v;
      bi = i;
    }
  }
  sv[tid] = bv;
  si[tid] = bi;
  barrier();
  uint s = 1u;
  while (s < WG) {
    s <<= 1;
  }
  for (s >>= 1; s > 0u; s >>= 1) {
    if (tid < s && tid + s < WG) {
      float v = sv[tid + s];
      uint i = si[tid + s];
      if (better(v, i, sv[tid], si[tid])) {
        sv[tid] = v;
        si[tid] = i;
      }
    }
    barrier();
  }
  if (tid == 0u) {
    p.dst.v[row] = si[0] == none ? 0 : int(si[0]);
  }
}
