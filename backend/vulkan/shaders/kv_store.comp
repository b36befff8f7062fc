#version 450
// kv_store: stores tokens tokens' keys and values (float32, kvDim = nKV *
// headDim values each, token t's from value t*stride of k and of v:
// stride = kvDim when packed, a fused QKV product's width) as half
// precision (numfmt.F32ToF16's
// bits, rounded to nearest even) into one layer's paged cache: token t at
// position pos[t] of sequence seq[t] goes to row pos % blockSize of block
// tables[tabOff[seq[t]] + pos / blockSize], block b's row r starting at
// value (b * blockSize + r) * kvDim of kc and vc. A token whose position is
// negative is skipped (a padding row).
//
// Block tables: one int32 array holding every sequence's table; sequence
// s's starts at tabOff[s] (a fixed stride is tabOff[s] = s * stride).
//
// Push block (Go: pushKVStore):
//   k, v          addresses of the tokens' keys and values (float32)
//   kc, vc        addresses of the layer's key and value caches (f16)
//   pos, seq      addresses of tokens int32 values
//   tables        address of the int32 block tables
//   tabOff        address of an int32 offset into tables a sequence
//   tokens, kvDim, blockSize, stride  uint (kvDim and stride even)
// Grid: one invocation two values of k and of v, groups2D(tokens*kvDim/2, WG).
#include "common.glsl"
#include "ops.glsl"

layout(push_constant, std430) uniform Push {
  F32s k;
  F32s v;
  U32s kc;
  U32s vc;
  I32s pos;
  I32s seq;
  I32s tables;
  I32s tabOff;
  uint tokens;
  uint kvDim;
  uint blockSize;
  uint stride;
} p;

void main() {
  uint pairs = p.kvDim / 2u;
  uint idx = global_index();
  if (idx >= p.tokens * pairs) {
    return;
  }
  uint t = idx / pairs;
  uint j = idx % pairs;
  int ps = p.pos.v[t];
  if (ps < 0) {
    return;
  }
  uint pos = uint(ps);
  int s = p.seq.v[t];
  uint blk = uint(p.tables.v[p.tabOff.v[s] + int(pos / p.blockSize)]);
  uint row = blk * p.blockSize + pos % p.blockSize;
  uint src = t * p.stride + 2u * j;
  uint dst = row * pairs + j;
  p.kc.v[dst] = f32_to_f16(p.k.v[src]) | (f32_to_f16(p.k.v[src + 1u]) << 16);
  p.vc.v[dst] = f32_to_f16(p.v.v[src]) | (f32_to_f16(p.v.v[src + 1u]) << 16);
}
