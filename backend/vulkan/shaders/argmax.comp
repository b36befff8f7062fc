#version 450
// argmax: for each of rows rows of vocab float32 logits, the index of the
// largest value, the lowest index among ties; NaN is never chosen unless
// the whole row is NaN, which gives 0 (sampling.Argmax).
//
// A long row is cut into chunks, each a workgroup's (phase 1: the chunk's
// best value and index to part), then merged by a workgroup a row (phase
// 2); phase 0 does a whole row in one workgroup.
//
// Push block (Go: pushArgmax):
//   logits  address of rows*vocab float32 values
//   out     address of rows int32 indices
//   part    address of rows*chunks (value bits, index) pairs (phases 1, 2)
//   rows, vocab, chunks, phase  uint
// Grid: groups2D(rows*chunks, 1) in phase 1, groups2D(rows, 1) otherwise.
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s logits;
  I32s dst;
  U32s part;
  uint rows;
  uint vocab;
  uint chunks;
  uint phase;
} p;

shared float sv[WG];
shared uint si[WG];

const uint none = 0xffffffffu;

// better reports whether (v, i) comes before (bv, bi) in the argmax order.
bool better(float v, uint i, float bv, uint bi) {
  return !isnan(v) && (isnan(bv) || v > bv || (v == bv && i < bi));
}

// reduce leaves the workgroup's best (sv[0], si[0]) from each
// invocation's (bv, bi).
void reduce(uint tid, float bv, uint bi) {
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
}

void main() {
  uint g = group_index();
  uint tid = gl_LocalInvocationID.x;
  float bv = uintBitsToFloat(0x7fc00000u); // NaN: no candidate yet
  uint bi = none;
  if (p.phase == 1u) {
    if (g >= p.rows * p.chunks) {
      return; // the whole workgroup
    }
    uint row = g / p.chunks, c = g % p.chunks;
    uint len = (p.vocab + p.chunks - 1u) / p.chunks;
    uint lo = c * len, hi = min(lo + len, p.vocab);
    for (uint i = lo + tid; i < hi; i += WG) {
      float v = p.logits.v[row * p.vocab + i];
      if (better(v, i, bv, bi)) {
        bv = v;
        bi = i;
      }
    }
    reduce(tid, bv, bi);
    if (tid == 0u) {
      p.part.v[2u * g] = floatBitsToUint(sv[0]);
      p.part.v[2u * g + 1u] = si[0];
    }
    return;
  }
  if (g >= p.rows) {
    return; // the whole workgroup
  }
  if (p.phase == 2u) {
    for (uint c = tid; c < p.chunks; c += WG) {
      uint k = 2u * (g * p.chunks + c);
      float v = uintBitsToFloat(p.part.v[k]);
      uint i = p.part.v[k + 1u];
      if (i != none && better(v, i, bv, bi)) {
        bv = v;
        bi = i;
      }
    }
  } else {
    for (uint i = tid; i < p.vocab; i += WG) {
      float v = p.logits.v[g * p.vocab + i];
      if (better(v, i, bv, bi)) {
        bv = v;
        bi = i;
      }
    }
  }
  reduce(tid, bv, bi);
  if (tid == 0u) {
    p.dst.v[g] = si[0] == none ? 0 : int(si[0]);
  }
}
