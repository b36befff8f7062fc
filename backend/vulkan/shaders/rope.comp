#version 450
// rope: rotates, in place, tokens tokens of heads heads of headDim values
// (scalar.RoPE), token t's heads from value t*stride of x (stride =
// heads*headDim when the tokens are packed; a fused QKV product's width to
// turn its query and key heads, which follow each other, in one dispatch);
// token t is at position pos[t]; only the first rotDims values of a head
// turn. Pair i (i < rotDims/2) is (i, i + rotDims/2)
// with NeoX style (style 0), (2i, 2i + 1) with the normal style (style 1).
//
// The angles are not computed here: tab holds, for every position p <
// maxPos and pair i, cos and sin of p * f_i times the RoPE's mscale, as
// the CPU computes them (float64, rounded to float32), at tab[(p *
// rotDims/2 + i) * 2] and the next value (vulkan.RopeTable). A float32
// angle p * f_i is off by up to half an ulp of the angle (2e-3 radians at
// p = 32768) and GLSL's sin and cos are only accurate near 0, so the
// table is what gives the CPU's rotation; with it and no contraction into
// fused multiply-adds (precise) the result has the bits of scalar.RoPE
// on amd64. A token whose position is negative or not below maxPos is
// left as it is (the runner checks positions against the table).
//
// Push block (Go: pushRoPE):
//   x        address of the tokens' heads (float32)
//   pos      address of tokens int32 positions
//   tab      address of maxPos*rotDims float32 values (cos, sin pairs)
//   tokens, heads, headDim, rotDims, style, maxPos, stride  uint
// Grid: one invocation a pair, groups2D(tokens*heads*rotDims/2, WG).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s x;
  I32s pos;
  F32s tab;
  uint tokens;
  uint heads;
  uint headDim;
  uint rotDims;
  uint style;
  uint maxPos;
  uint stride;
} p;

void main() {
  uint pairs = p.rotDims / 2u;
  uint idx = global_index();
  if (idx >= p.tokens * p.heads * pairs) {
    return;
  }
  uint i = idx % pairs;
  uint th = idx / pairs; // token * heads + head
  uint t = th / p.heads;
  int ps = p.pos.v[t];
  if (ps < 0 || uint(ps) >= p.maxPos) {
    return;
  }
  uint ti = (uint(ps) * pairs + i) * 2u;
  float c = p.tab.v[ti];
  float s = p.tab.v[ti + 1u];
  uint a = t * p.stride + (th % p.heads) * p.headDim + (p.style == 0u ? i : 2u * i);
  uint b = a + (p.style == 0u ? pairs : 1u);
  float va = p.x.v[a];
  float vb = p.x.v[b];
  precise float ac = va * c;
  precise float bs = vb * s;
  precise float as_ = va * s;
  precise float bc = vb * c;
  precise float ra = ac - bs;
  precise float rb = as_ + bc;
  p.x.v[a] = ra;
  p.x.v[b] = rb;
}
