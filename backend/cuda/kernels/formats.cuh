// formats.cuh: the number formats of the weights (included by kernels.cu
// after common.cuh): the block formats' planes and how a unit of 32
// values is loaded, decoded and dequantized, and the float formats (F32,
// F16, BF16).
//
// Weights of a block type other than Q8_0's own path are uploaded re-laid
// into planes (backend/cuda/quant_pack.go packs them; nothing is
// dequantized): a row of K values is K/32 units of 32 consecutive values,
// and unit u of every plane is at a fixed offset:
//   lo  the low LO bits of each value's quant Q (LO = 2, 4 or 8), LO*4 bytes
//       a unit: LO = 4: byte j holds value j (low nibble) and j + 16 (high);
//       LO = 2: byte 4c+i holds value 16c + 4s + i at bits 2s; LO = 8: byte j
//       is value j (Q8_0: the int8 values as uploaded for mvf_q8)
//   hi  the next HI bits (HI = 1: byte i bit t is value 4t + i, 4 bytes a
//       unit; HI = 2: as LO = 2, 8 bytes a unit)
//   m0, m1  the blocks' scales, bytes as in the file (per type: q_load)
// so that values 4g..4g+3 of a unit come out as the four bytes of one
// 32-bit word with two or three logical operations (q_word), ready for
// dp4a or a conversion to half2. A value is a*(Q - OFF) + c with a and c per
// sub-block of SUB values (q_ac): dequantized in float exactly as ggml does
// it (q_deq_f32, the embedding), in half2 for the f16 tensor-core tiles
// (q_deq_h), or never, in the decode dot product (q_dot, mmvq.cuh: a*s*dot(Q,
// q) + (c - a*OFF)*sum(x) against int8 activations q with scale s, with dp4a).
//
// The kernels over them: mvq_<type>_r2 (decode matrix-vector) and
// mvqn_<type>_t4 / _t8 (one weight pass for up to 4 or 8 tokens) in
// mmvq.cuh; mmq_ / mmq2_<type>_m<rows>_n<tokens> (int8 tensor cores,
// batches of up to 128 tokens) in mmq.cuh; mmh_<type>_b128 / _b32 (f16
// tensor cores, weight tiles dequantized to half in shared memory) in
// mmh.cuh; the embedding lookups qembed* in getrows.cuh; the experts'
// products in moe.cuh. Their activations: quantize.cuh.

#define QT_Q4_0 2
#define QT_Q4_1 3
#define QT_Q5_0 6
#define QT_Q5_1 7
#define QT_Q8_0 8
#define QT_Q2_K 10
#define QT_Q3_K 11
#define QT_Q4_K 12
#define QT_Q5_K 13
#define QT_Q6_K 14
#define QT_IQ4_NL 20
#define QT_IQ4_XS 23
#define QT_MXFP4 39

// qt: per type the bits of the lo and hi planes, values per block, values
// per scale, the integer offset OFF, whether a value has an additive term
// c (a min), whether Q is signed (Q8_0) or a table index (IQ4_*, MXFP4:
// qtab's levels).
template <int T>
struct qt;
template <>
struct qt<QT_Q4_0> { enum { LO = 4, HI = 0, QK = 32, SUB = 32, OFF = 8, HASC = 0, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_Q4_1> { enum { LO = 4, HI = 0, QK = 32, SUB = 32, OFF = 0, HASC = 1, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_Q5_0> { enum { LO = 4, HI = 1, QK = 32, SUB = 32, OFF = 16, HASC = 0, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_Q5_1> { enum { LO = 4, HI = 1, QK = 32, SUB = 32, OFF = 0, HASC = 1, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_Q8_0> { enum { LO = 8, HI = 0, QK = 32, SUB = 32, OFF = 0, HASC = 0, SGN = 1, TAB = 0 }; };
template <>
struct qt<QT_Q2_K> { enum { LO = 2, HI = 0, QK = 256, SUB = 16, OFF = 0, HASC = 1, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_Q3_K> { enum { LO = 2, HI = 1, QK = 256, SUB = 16, OFF = 4, HASC = 0, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_Q4_K> { enum { LO = 4, HI = 0, QK = 256, SUB = 32, OFF = 0, HASC = 1, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_Q5_K> { enum { LO = 4, HI = 1, QK = 256, SUB = 32, OFF = 0, HASC = 1, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_Q6_K> { enum { LO = 4, HI = 2, QK = 256, SUB = 16, OFF = 32, HASC = 0, SGN = 0, TAB = 0 }; };
template <>
struct qt<QT_IQ4_NL> { enum { LO = 4, HI = 0, QK = 32, SUB = 32, OFF = 0, HASC = 0, SGN = 1, TAB = 1 }; };
template <>
struct qt<QT_IQ4_XS> { enum { LO = 4, HI = 0, QK = 256, SUB = 32, OFF = 0, HASC = 0, SGN = 1, TAB = 1 }; };
template <>
struct qt<QT_MXFP4> { enum { LO = 4, HI = 0, QK = 32, SUB = 32, OFF = 0, HASC = 0, SGN = 1, TAB = 1 }; };

// qtab: the 16 int8 levels of a table type, four to a word (levels 4i..4i+3
// in word i, little-endian): IQ4_NL's and IQ4_XS's kvalues_iq4nl (-127,
// -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113) and
// MXFP4's kvalues_mxfp4, the E2M1 values doubled (0, 1, 2, 3, 4, 6, 8, 12,
// then the same negated). The table types differ in these and in the
// scale (q_ac) only.
template <int T>
struct qtab {
  static constexpr unsigned W0 = 0xBFAD9881u, W1 = 0xF6EADDCFu, W2 = 0x26190D01u, W3 = 0x71594535u;
};
template <>
struct qtab<QT_MXFP4> {
  static constexpr unsigned W0 = 0x03020100u, W1 = 0x0C080604u, W2 = 0xFDFEFF00u, W3 = 0xF4F8FAFCu;
};

// One unit's raw bits (only the words its type uses are loaded).
struct qunit {
  int lo[8];
  int hi[2];
  int m[4];
  int m1;
};

__device__ __forceinline__ int2 qldg8(const void* p) {
  int2 v;
  asm volatile("ld.global.nc.L1::no_allocate.v2.s32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}
__device__ __forceinline__ int qldg4(const void* p) {
  int v;
  asm volatile("ld.global.nc.L1::no_allocate.s32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ int qldg1(const void* p) {
  unsigned short v;
  asm volatile("ld.global.nc.L1::no_allocate.u8 %0, [%1];" : "=h"(v) : "l"(p));
  return (int)(v & 0xff);
}
__device__ __forceinline__ int qldg2(const void* p) {
  unsigned short v;
  asm volatile("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return (int)v;
}

__device__ __forceinline__ void q_zero(qunit& q) {
#pragma unroll
  for (int i = 0; i < 8; i++) q.lo[i] = 0;
  q.hi[0] = q.hi[1] = 0;
  q.m[0] = q.m[1] = q.m[2] = q.m[3] = 0;
  q.m1 = 0;
}

// q_load loads unit u of row row (K values a row).
template <int T>
__device__ __forceinline__ void q_load(qunit& q, const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                       const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, size_t row,
                                       int K, int u) {
  constexpr int LO = qt<T>::LO, HI = qt<T>::HI, QK = qt<T>::QK;
  const size_t v0 = row * (size_t)K + (size_t)u * 32;
  if constexpr (LO == 4) {
    const int4 a = ldg_nc16(lo + v0 / 2);
    q.lo[0] = a.x, q.lo[1] = a.y, q.lo[2] = a.z, q.lo[3] = a.w;
  } else if constexpr (LO == 2) {
    const int2 a = qldg8(lo + v0 / 4);
    q.lo[0] = a.x, q.lo[1] = a.y;
  } else {
    const int4 a = ldg_nc16(lo + v0), b = ldg_nc16(lo + v0 + 16);
    q.lo[0] = a.x, q.lo[1] = a.y, q.lo[2] = a.z, q.lo[3] = a.w;
    q.lo[4] = b.x, q.lo[5] = b.y, q.lo[6] = b.z, q.lo[7] = b.w;
  }
  if constexpr (HI == 1) {
    q.hi[0] = qldg4(hi + v0 / 8);
  } else if constexpr (HI == 2) {
    const int2 a = qldg8(hi + v0 / 4);
    q.hi[0] = a.x, q.hi[1] = a.y;
  }
  const size_t blk = row * (size_t)(K / QK) + u / (QK / 32);
  const int j = u % (QK / 32);
  if constexpr (T == QT_Q4_0 || T == QT_Q5_0 || T == QT_Q8_0 || T == QT_IQ4_NL) {
    q.m[0] = qldg2(m0 + blk * 2);  // d
  } else if constexpr (T == QT_Q4_1 || T == QT_Q5_1) {
    q.m[0] = qldg4(m0 + blk * 4);  // d, m
  } else if constexpr (T == QT_Q2_K) {
    q.m[0] = qldg2(m0 + blk * 16 + 2 * j);  // the unit's two scale bytes
    q.m1 = qldg4(m1 + blk * 4);             // d, dmin
  } else if constexpr (T == QT_Q6_K) {
    q.m[0] = qldg2(m0 + blk * 16 + 2 * j);  // the unit's two int8 scales
    q.m1 = qldg2(m1 + blk * 2);             // d
  } else if constexpr (T == QT_IQ4_XS) {
    const int2 a = qldg8(m0 + blk * 8);  // d, scales_h, scales_l[4]
    q.m[0] = a.x, q.m[1] = a.y;
  } else if constexpr (T == QT_MXFP4) {
    q.m[0] = qldg1(m0 + blk);  // e
  } else {  // Q3_K: scales[12], d, 0; Q4_K, Q5_K: d, dmin, scales[12]
    const int4 a = ldg_nc16(m0 + blk * 16);
    q.m[0] = a.x, q.m[1] = a.y, q.m[2] = a.z, q.m[3] = a.w;
  }
}

__device__ __forceinline__ float qh2f(int bits) { return __half2float(__ushort_as_half((unsigned short)(bits & 0xffff))); }

// e8m0_half is MXFP4's scale from its E8M0 byte e (the low byte of bits):
// 2^(e-128), half of 2^(e-127) as the levels are doubled (ggml's
// GGML_E8M0_TO_FP32_HALF, numfmt.E8M0Half), subnormal for e = 0 and 1.
__device__ __forceinline__ float e8m0_half(int bits) {
  const int e = bits & 0xff;
  return __int_as_float(e < 2 ? 0x00200000 << e : (e - 1) << 23);
}

// qbyte returns byte i (0..11) of the words w0, w1, w2.
__device__ __forceinline__ int qbyte(int w0, int w1, int w2, int i) {
  const int w = (i >> 2) == 0 ? w0 : ((i >> 2) == 1 ? w1 : w2);
  return (w >> (8 * (i & 3))) & 0xff;
}

// q_ac returns a and c of the unit's sub-blocks (0: values 0..15, or all
// 32 when SUB is 32; 1: values 16..31), computed as ggml computes them.
template <int T>
__device__ __forceinline__ void q_ac(const qunit& q, int u, float (&a)[2], float (&c)[2]) {
  const int j = u % (qt<T>::QK / 32);
  c[0] = c[1] = 0.f;
  if constexpr (T == QT_Q4_0 || T == QT_Q5_0 || T == QT_Q8_0 || T == QT_IQ4_NL) {
    a[0] = a[1] = qh2f(q.m[0]);
  } else if constexpr (T == QT_Q4_1 || T == QT_Q5_1) {
    a[0] = a[1] = qh2f(q.m[0]);
    c[0] = c[1] = qh2f(q.m[0] >> 16);
  } else if constexpr (T == QT_Q2_K) {
    const float d = qh2f(q.m1), dm = qh2f(q.m1 >> 16);
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int s = (q.m[0] >> (8 * h)) & 0xff;
      a[h] = __fmul_rn(d, (float)(s & 15));
      c[h] = -__fmul_rn(dm, (float)(s >> 4));
    }
  } else if constexpr (T == QT_Q3_K) {
    const float d = qh2f(q.m[3]);
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int s = 2 * j + h;
      const int l4 = (qbyte(q.m[0], q.m[1], q.m[2], s & 7) >> (4 * (s >> 3))) & 15;
      const int h2 = (qbyte(q.m[0], q.m[1], q.m[2], 8 + (s & 3)) >> (2 * (s >> 2))) & 3;
      a[h] = __fmul_rn(d, (float)((l4 | (h2 << 4)) - 32));
    }
  } else if constexpr (T == QT_Q4_K || T == QT_Q5_K) {
    const float d = qh2f(q.m[0]), dm = qh2f(q.m[0] >> 16);
    // bytes j&3 of scales[0:4), [4:8) and [8:12): sub-blocks 0..3 take
    // their 6 bits from the first two, 4..7 four bits from the third and
    // the top two bits of the first two (ggml's get_scale_min_k4), chosen
    // without a branch (j is the lane's, so a branch would diverge).
    const int sh = 8 * (j & 3);
    const int A = (q.m[1] >> sh) & 0xff, B = (q.m[2] >> sh) & 0xff, C = (q.m[3] >> sh) & 0xff;
    const int sc = j < 4 ? A & 63 : (C & 15) | ((A >> 2) & 48);
    const int mn = j < 4 ? B & 63 : (C >> 4) | ((B >> 2) & 48);
    a[0] = a[1] = __fmul_rn(d, (float)sc);
    c[0] = c[1] = -__fmul_rn(dm, (float)mn);
  } else if constexpr (T == QT_Q6_K) {
    const float d = qh2f(q.m1);
    a[0] = __fmul_rn(d, (float)(signed char)(q.m[0] & 0xff));
    a[1] = __fmul_rn(d, (float)(signed char)((q.m[0] >> 8) & 0xff));
  } else if constexpr (T == QT_IQ4_XS) {
    const float d = qh2f(q.m[0]);
    const int sh = (q.m[0] >> 16) & 0xffff;
    const int sl = (q.m[1] >> (8 * (j >> 1))) & 0xff;
    const int ls = ((sl >> (4 * (j & 1))) & 15) | (((sh >> (2 * j)) & 3) << 4);
    a[0] = a[1] = __fmul_rn(d, (float)(ls - 32));
  } else if constexpr (T == QT_MXFP4) {
    a[0] = a[1] = e8m0_half(q.m[0]);
  }
}

// tab_map maps four 4-bit indices (one a byte) through the levels of the
// table type T (qtab): levels 0..7 and 8..15 by byte permutes of the
// index's low three bits, chosen between by its fourth.
template <int T>
__device__ __forceinline__ int tab_map(int w) {
  constexpr unsigned t0 = qtab<T>::W0, t1 = qtab<T>::W1, t2 = qtab<T>::W2, t3 = qtab<T>::W3;
  const unsigned s = (w & 0x07) | ((w >> 4) & 0x70) | ((w >> 8) & 0x700) | ((w >> 12) & 0x7000);
  const unsigned lo = __byte_perm(t0, t1, s), hi = __byte_perm(t2, t3, s);
  const unsigned m = (((unsigned)w & 0x08080808u) >> 3) * 0xFFu;
  return (int)((lo & ~m) | (hi & m));
}

// q_word returns Q of values 4g..4g+3 of the unit, one a byte (signed for
// Q8_0 and the tables, else 0..63).
template <int T>
__device__ __forceinline__ int q_word(const qunit& q, int g) {
  constexpr int LO = qt<T>::LO, HI = qt<T>::HI;
  int w;
  if constexpr (LO == 4) {
    w = (g < 4 ? q.lo[g] : (q.lo[g - 4] >> 4)) & 0x0F0F0F0F;
  } else if constexpr (LO == 2) {
    w = (q.lo[g >> 2] >> (2 * (g & 3))) & 0x03030303;
  } else {
    w = q.lo[g];
  }
  if constexpr (HI == 1) w |= ((q.hi[0] >> g) & 0x01010101) << LO;
  if constexpr (HI == 2) w |= ((q.hi[g >> 2] >> (2 * (g & 3))) & 0x03030303) << LO;
  if constexpr (qt<T>::TAB) w = tab_map<T>(w);
  return w;
}

// q_deq_f32 dequantizes unit u of a row into out[0:32), bit for bit as
// ggml's dequantize_row_* (products and sums rounded one at a time).
template <int T>
__device__ __forceinline__ void q_deq_f32(const uint8_t* lo, const uint8_t* hi, const uint8_t* m0, const uint8_t* m1,
                                          size_t row, int K, int u, float* out) {
  qunit q;
  q_zero(q);
  q_load<T>(q, lo, hi, m0, m1, row, K, u);
  float a[2], c[2];
  q_ac<T>(q, u, a, c);
#pragma unroll
  for (int g = 0; g < 8; g++) {
    const int w = q_word<T>(q, g);
    const int s = (qt<T>::SUB == 16 && g >= 4) ? 1 : 0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const float v = (float)((int)(signed char)((w >> (8 * i)) & 0xff) - qt<T>::OFF);
      out[4 * g + i] = qt<T>::HASC ? __fadd_rn(__fmul_rn(a[s], v), c[s]) : __fmul_rn(a[s], v);
    }
  }
}


// q_deq_h dequantizes a unit to 32 halves at dst (16-byte aligned): bytes
// become half2 exactly (1024 + byte, minus 1024 + OFF), then one product
// (or fma with c) in half2. (MXFP4's scale, a power of two, is exact in
// half from 2^-24 to 2^15: exponents 104 to 143; a block of smaller ones,
// values below 2^-21, flushes to zero, as such values would in an F16
// weight.)
template <int T>
__device__ __forceinline__ void q_deq_h(const qunit& q, int u, __half* dst) {
  float a[2], c[2];
  q_ac<T>(q, u, a, c);
  constexpr int SUBK = 1024 + qt<T>::OFF + (qt<T>::SGN ? 128 : 0);
  const __half2 off = __float2half2_rn((float)SUBK);
  const __half2 a0 = __float2half2_rn(a[0]), a1 = __float2half2_rn(a[1]);
  const __half2 c0 = __float2half2_rn(c[0]), c1 = __float2half2_rn(c[1]);
  unsigned out[16];
#pragma unroll
  for (int g = 0; g < 8; g++) {
    unsigned w = (unsigned)q_word<T>(q, g);
    if (qt<T>::SGN) w ^= 0x80808080u;
    const unsigned p0 = __byte_perm(w, 0x64646464u, 0x4140), p1 = __byte_perm(w, 0x64646464u, 0x4342);
    __half2 v0 = __hsub2(*(const __half2*)&p0, off), v1 = __hsub2(*(const __half2*)&p1, off);
    const bool s1 = qt<T>::SUB == 16 && g >= 4;
    const __half2 aa = s1 ? a1 : a0, cc = s1 ? c1 : c0;
    if (qt<T>::HASC) {
      v0 = __hfma2(aa, v0, cc);
      v1 = __hfma2(aa, v1, cc);
    } else {
      v0 = __hmul2(aa, v0);
      v1 = __hmul2(aa, v1);
    }
    out[2 * g] = *(const unsigned*)&v0;
    out[2 * g + 1] = *(const unsigned*)&v1;
  }
  uint4* d4 = (uint4*)dst;
#pragma unroll
  for (int i = 0; i < 4; i++) d4[i] = make_uint4(out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
}

// ---------------------------------------------------------------- float formats

// Float matrices (backend/cuda/half.go) are uploaded as in the file,
// row-major, rows padded with zeros to a multiple of 64; the kernels read
// them with 16-byte loads (8 values of F16 or BF16, 4 of F32) and
// accumulate in f32. HT_*: the GGUF type numbers.
#define HT_F32 0
#define HT_F16 1
#define HT_BF16 30

template <int E>
struct ht {
  enum { BYTES = E == HT_F32 ? 4 : 2, V16 = 16 / BYTES };
};

// h_cvt16 converts the 16 bytes a (V16 values of E) to floats v[0:V16).
template <int E>
__device__ __forceinline__ void h_cvt16(const int4 a, float* v) {
  const int w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
  for (int i = 0; i < 4; i++) {
    if constexpr (E == HT_F16) {
      const float2 f = __half22float2(*(const __half2*)&w[i]);
      v[2 * i] = f.x, v[2 * i + 1] = f.y;
    } else if constexpr (E == HT_BF16) {
      v[2 * i] = __int_as_float(w[i] << 16), v[2 * i + 1] = __int_as_float(w[i] & 0xffff0000);
    } else {
      v[i] = __int_as_float(w[i]);
    }
  }
}
