#version 450
// moe_group: the pairs of a mixture of experts' step grouped by expert,
// for the prompts' expert products (mul_mm_id.comp): order lists the
// pairs (a token's slot, t*k + j) expert by expert, and tiles cuts each
// expert's run into tiles of at most tile pairs, each three int32s
// (expert, first index into order, pairs), experts in increasing order;
// the tiles past the last up to ntiles (the grid's bound,
// moeTileBound in moe.go) have no pairs. Within an expert's run the pairs
// come in any order: each pair's products are the same wherever its tile
// puts it.
//
// Push block (Go: pushMoEGroup in moe.go):
//   ids     address of pairs int32 expert ids (moe_route's), clamped
//           below experts
//   order   address of pairs int32
//   tiles   address of ntiles*3 int32
//   pairs, experts (at most MAXE), tile, ntiles  uint
// Grid: one workgroup of WG invocations.
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  I32s ids;
  I32s order;
  I32s tiles;
  uint pairs;
  uint experts;
  uint tile;
  uint ntiles;
} p;

const uint MAXE = 1024; // moeMaxExperts in moe.go

shared uint cnt[MAXE];   // pairs an expert, then the next free place in its run
shared uint start[MAXE]; // where its run begins in order
shared uint tile0[MAXE]; // its first tile
shared uint total;       // tiles

uint expert(uint q) { return uint(clamp(p.ids.v[q], 0, int(p.experts) - 1)); }

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint e = tid; e < p.experts; e += WG) {
    cnt[e] = 0;
  }
  barrier();
  for (uint q = tid; q < p.pairs; q += WG) {
    atomicAdd(cnt[expert(q)], 1u);
  }
  barrier();
  if (tid == 0) {
    uint s = 0, ts = 0;
    for (uint e = 0; e < p.experts; e++) {
      start[e] = s;
      tile0[e] = ts;
      s += cnt[e];
      ts += (cnt[e] + p.tile - 1) / p.tile;
    }
    total = ts;
  }
  barrier();
  for (uint e = tid; e < p.experts; e += WG) {
    const uint c = cnt[e];
    for (uint i = 0; i * p.tile < c; i++) {
      const uint k = 3 * (tile0[e] + i);
      p.tiles.v[k] = int(e);
      p.tiles.v[k + 1] = int(start[e] + i * p.tile);
      p.tiles.v[k + 2] = int(min(p.tile, c - i * p.tile));
    }
    cnt[e] = 0;
  }
  for (uint i = total + tid; i < p.ntiles; i += WG) {
    p.tiles.v[3 * i] = 0;
    p.tiles.v[3 * i + 1] = 0;
    p.tiles.v[3 * i + 2] = 0;
  }
  barrier();
  for (uint q = tid; q < p.pairs; q += WG) {
    const uint e = expert(q);
    p.order.v[start[e] + atomicAdd(cnt[e], 1u)] = int(q);
  }
}
