#version 450
// rope_store: the attention's inputs of a layer from the packed QKV rows
// of tokens tokens (token t's from value t*stride of x: nq query heads,
// nkv key heads, nkv value heads of headDim values): each query and key
// head normalized with its gains (flags & 1: QK-norm, scalar.RMSNorm per
// head) and rotated (scalar.RoPE: the first rotDims values of a head,
// NeoX pairs (i, i + rotDims/2) with style 0, adjacent pairs (2i, 2i+1)
// with style 1); the query heads written back in place, the keys and
// values stored as half precision (numfmt.F32ToF16's bits, rounded to
// nearest even) into the layer's paged cache (flags & 2; without it the
// key heads are written back in place too and the value heads left as
// they are): token t at position pos[t] of sequence seq[t] goes to row
// pos % blockSize of block tables[tabOff[seq[t]] + pos / blockSize],
// block b's row r starting at value (b*blockSize + r) * nkv*headDim of kc
// and vc (one int32 array holds every sequence's table, sequence s's from
// tabOff[s]). A token whose position is negative is skipped (a padding
// row); one at maxPos or past it is not rotated (the runner checks
// positions against the table).
//
// The angles are not computed here: tab holds, for every position p <
// maxPos and pair i, cos and sin of p * f_i times the RoPE's mscale, as
// the CPU computes them (float64, rounded to float32), at tab[(p *
// rotDims/2 + i) * 2] and the next value (vulkan.RopeTable). A float32
// angle p * f_i is off by up to half an ulp of the angle (2e-3 radians at
// p = 32768) and GLSL's sin and cos are only accurate near 0, so the
// table is what gives the CPU's rotation; with it and no contraction into
// fused multiply-adds (precise) a rotation without QK-norm has the bits
// of scalar.RoPE on amd64.
//
// Push block (Go: pushRopeStore):
//   x              address of the packed rows (float32)
//   pos, seq       addresses of tokens int32 values
//   tab            address of maxPos*rotDims float32 values (cos, sin pairs)
//   qgain, kgain   addresses of headDim float32 gains (flags & 1)
//   kc, vc         addresses of the layer's key and value caches (f16)
//   tables, tabOff addresses of the block tables and each sequence's offset
//   tokens, nq, nkv, headDim, rotDims, style, maxPos, stride, blockSize, flags  uint
//   eps            float
// Grid: one invocation two values of a head, groups2D(tokens*(nq+2nkv)*headDim/2, WG),
// WG a multiple of headDim/2.
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s x;
  I32s pos;
  I32s seq;
  F32s tab;
  F32s qgain;
  F32s kgain;
  U16s kc;
  U16s vc;
  I32s tables;
  I32s tabOff;
  uint tokens;
  uint nq;
  uint nkv;
  uint headDim;
  uint rotDims;
  uint style;
  uint maxPos;
  uint stride;
  uint blockSize;
  uint flags;
  float eps;
} p;

void main() {
  // A head's invocations are in one workgroup (WG is a multiple of
  // headDim/2): they all read the head, for its norm, before any writes
  // it back (the barrier), so no early return before it.
  uint half_ = p.headDim / 2u;
  uint heads = p.nq + 2u * p.nkv;
  uint idx = global_index();
  uint i = idx % half_;
  uint th = idx / half_;
  uint t = th / heads, h = th % heads;
  bool live = idx < p.tokens * heads * half_;
  int ps = live ? p.pos.v[t] : -1;
  live = live && ps >= 0;
  uint base = t * p.stride + h * p.headDim;
  // The two values this invocation takes: a rotated pair, or two of the
  // values past rotDims (adjacent, turned by nothing).
  uint rpairs = p.rotDims / 2u;
  uvec2 ab = rope_index(i, p.rotDims, p.style);
  uint a = ab.x, b = ab.y;
  bool value = h >= p.nq + p.nkv;
  float va = 0.0, vb = 0.0, ss = 0.0;
  if (live) {
    va = p.x.v[base + a];
    vb = p.x.v[base + b];
  }
  if ((p.flags & 1u) != 0u) {
    // The head's sum of squares (ops.glsl's tree) in red, the head's
    // partials at red[l - i ..].
    uint l = gl_LocalInvocationID.x;
    red[l] = live && !value ? sq_pair(p.x.v[base + 2u * i], p.x.v[base + 2u * i + 1u]) : 0.0;
    for (uint h = ss_first(half_); h > 0u; h /= 2u) {
      barrier();
      if (i < h && i + h < half_) {
        red[l] += red[l + h];
      }
    }
    barrier();
    ss = red[l - i];
  }
  barrier();
  if (!live) {
    return;
  }
  if (!value) {
    if ((p.flags & 1u) != 0u) {
      F32s g = h < p.nq ? p.qgain : p.kgain;
      vec2 n = norm_pair(va, vb, ss, p.headDim, p.eps, g.v[a], g.v[b]);
      va = n.x;
      vb = n.y;
    }
    if (i < rpairs && uint(ps) < p.maxPos) {
      uint ti = (uint(ps) * rpairs + i) * 2u;
      vec2 r = rope_pair(va, vb, p.tab.v[ti], p.tab.v[ti + 1u]);
      va = r.x;
      vb = r.y;
    }
    if (h < p.nq || (p.flags & 2u) == 0u) {
      p.x.v[base + a] = va;
      p.x.v[base + b] = vb;
    }
  }
  if ((p.flags & 2u) == 0u || h < p.nq) {
    return;
  }
  uint s = uint(p.seq.v[t]);
  uint pos = uint(ps);
  uint blk = uint(p.tables.v[p.tabOff.v[s] + int(pos / p.blockSize)]);
  uint kvDim = p.nkv * p.headDim;
  uint kh = value ? h - p.nq - p.nkv : h - p.nq;
  uint dst = (blk * p.blockSize + pos % p.blockSize) * kvDim + kh * p.headDim;
  U16s c = value ? p.vc : p.kc;
  c.v[dst + a] = uint16_t(f32_to_f16(va));
  c.v[dst + b] = uint16_t(f32_to_f16(vb));
}
