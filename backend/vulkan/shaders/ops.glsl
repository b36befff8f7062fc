// ops.glsl: what the operation shaders (rms_norm, rope_store, attn,
// the activations, add, add_bias, argmax) share, included after
// common.glsl.
//
// Workgroup shape: specialization constant 0 is local_size_x (WG); the
// grid is two-dimensional where a dimension could pass the 65535 groups
// every device allows: group gl_WorkGroupID.y * gl_NumWorkGroups.x +
// gl_WorkGroupID.x (groups2D in ops.go picks the grid).

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

// group_index returns the index of this workgroup in a 2D grid read as
// one dimension.
uint group_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// global_index returns the index of this invocation in a 2D grid of
// workgroups of WG invocations read as one dimension.
uint global_index() { return group_index() * WG + gl_LocalInvocationID.x; }

// f32_to_f16 returns the IEEE half-precision bits of f rounded to nearest
// even, NaN and infinities included: numfmt.F32ToF16's bits, whatever the
// device's conversion rounding.
uint f32_to_f16(float f) {
  uint b = floatBitsToUint(f);
  uint sgn = (b >> 16) & 0x8000u;
  int e = int((b >> 23) & 0xffu);
  uint mant = b & 0x7fffffu;
  if (e == 0xff) {
    return mant != 0u ? (sgn | 0x7e00u | (mant >> 13)) : (sgn | 0x7c00u);
  }
  e = e - 127 + 15;
  if (e >= 0x1f) {
    return sgn | 0x7c00u;
  }
  if (e <= 0) {
    if (e < -10) {
      return sgn;
    }
    uint m = mant | 0x800000u;
    uint shift = uint(14 - e);
    uint halfway = 1u << (shift - 1u);
    uint r = m >> shift;
    uint rem = m & ((1u << shift) - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u) == 1u)) {
      r++;
    }
    return sgn | r;
  }
  uint r = (uint(e) << 10) | (mant >> 13);
  uint rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u) == 1u)) {
    r++;
  }
  return sgn | r;
}

// red holds one partial a subgroup in the workgroup reductions.
shared float red[WG];

// wg_sum returns the sum of v over the workgroup, the same value in every
// invocation; call it in uniform control flow. Each subgroup adds its
// values, then every invocation adds the subgroups' sums in order, so the
// result does not depend on the invocation that reads it.
float wg_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) {
    red[gl_SubgroupID] = v;
  }
  barrier();
  float s = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; i++) {
    s += red[i];
  }
  barrier();
  return s;
}

// wg_max returns the largest v over the workgroup (v >= 0; NaNs ignored),
// the same value in every invocation; call it in uniform control flow.
float wg_max(float v) {
  v = subgroupMax(v);
  if (subgroupElect()) {
    red[gl_SubgroupID] = v;
  }
  barrier();
  float m = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; i++) {
    m = max(m, red[i]);
  }
  barrier();
  return m;
}

// glu_src returns where value i of a gated activation's output reads its
// gate and up values: rows of width values every stride values (the
// halves of a fused gate-and-up product), or i with width 0.
uint glu_src(uint i, uint width, uint stride) {
  return width == 0u ? i : (i / width) * stride + i % width;
}

// The QK-norm's sum of squares of a head of D values (rope_store and
// attn, the same bits in both): partial i (i < D/2) is sq_pair of values
// 2i and 2i+1, and the D/2 partials are added by ss_step in a tree, step
// h adding partial i+h to partial i for i < h (h from the largest power
// of two below D/2 down to 1); partial 0 is the sum.

// sq_pair returns a*a + b*b, rounded after each operation.
float sq_pair(float a, float b) {
  precise float s = a * a + b * b;
  return s;
}

// ss_first returns the first step of the tree over n partials.
uint ss_first(uint n) {
  uint h = 1u;
  while (2u * h < n) {
    h *= 2u;
  }
  return h;
}

// norm_pair returns the values a, b of a head whose sum of squares is ss
// (n values) normalized and times their gains ga, gb (scalar.RMSNorm).
vec2 norm_pair(float va, float vb, float ss, uint n, float eps, float ga, float gb) {
  precise float scale = 1.0 / sqrt(ss / float(n) + eps);
  precise float na = va * scale;
  precise float nb = vb * scale;
  return vec2(na * ga, nb * gb);
}

// rope_pair returns the pair (va, vb) turned by the angle of cos c and
// sin s (scalar.RoPE: no fused multiply-adds).
vec2 rope_pair(float va, float vb, float c, float s) {
  precise float ac = va * c;
  precise float bs = vb * s;
  precise float as_ = va * s;
  precise float bc = vb * c;
  precise float ra = ac - bs;
  precise float rb = as_ + bc;
  return vec2(ra, rb);
}

// rope_index returns the offsets in a head of the two values pair i
// (of headDim/2) of a rotation of rotDims values turns: (i, i +
// rotDims/2) in the NeoX style 0, (2i, 2i+1) in style 1, and past rotDims
// two adjacent values turned by nothing.
uvec2 rope_index(uint i, uint rotDims, uint style) {
  uint rpairs = rotDims / 2u;
  uint a = i < rpairs && style == 0u ? i : 2u * i;
  uint b = i < rpairs && style == 0u ? i + rpairs : a + 1u;
  return uvec2(a, b);
}
