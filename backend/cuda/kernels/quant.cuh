// ================================================================ block formats (every ggml type but Q8_0's own path)
//
// Included at the end of kernels.cu. Weights of a block type other than
// Q8_0 are uploaded re-laid into planes (backend/cuda/quant_pack.go packs
// them; nothing is dequantized): a row of K values is K/32 units of 32
// consecutive values, and unit u of every plane is at a fixed offset:
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
// (q_deq_h), or never, in the decode dot product (q_dot: a*s*dot(Q, q) +
// (c - a*OFF)*sum(x) against int8 activations q with scale s, with dp4a).
//
// Kernels: mvq_<type>_r2 (decode matrix-vector, every epilogue),
// mmh_<type>_b128 / _b32 (matrix-matrix on f16 tensor cores, weight tiles
// dequantized to half in shared memory), qact_h (activations to f16 with a
// power-of-two scale per token), qembed* (embedding lookups of any type).

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

// qt: per type the bits of the lo and hi planes, values per block, values
// per scale, the integer offset OFF, whether a value has an additive term
// c (a min), whether Q is signed (Q8_0) or a table index (IQ4_*).
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
  } else {  // Q3_K: scales[12], d, 0; Q4_K, Q5_K: d, dmin, scales[12]
    const int4 a = ldg_nc16(m0 + blk * 16);
    q.m[0] = a.x, q.m[1] = a.y, q.m[2] = a.z, q.m[3] = a.w;
  }
}

__device__ __forceinline__ float qh2f(int bits) { return __half2float(__ushort_as_half((unsigned short)(bits & 0xffff))); }

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
  }
}

// iq4_map maps four 4-bit indices (one a byte) through ggml's kvalues_iq4nl.
__device__ __forceinline__ int iq4_map(int w) {
  // kvalues_iq4nl = -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113
  const unsigned t0 = 0xBFAD9881u, t1 = 0xF6EADDCFu, t2 = 0x26190D01u, t3 = 0x71594535u;
  const unsigned s = (w & 0x07) | ((w >> 4) & 0x70) | ((w >> 8) & 0x700) | ((w >> 12) & 0x7000);
  const unsigned lo = __byte_perm(t0, t1, s), hi = __byte_perm(t2, t3, s);
  const unsigned m = (((unsigned)w & 0x08080808u) >> 3) * 0xFFu;
  return (int)((lo & ~m) | (hi & m));
}

// q_word returns Q of values 4g..4g+3 of the unit, one a byte (signed for
// Q8_0 and the IQ4 tables, else 0..63).
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
  if constexpr (qt<T>::TAB) w = iq4_map(w);
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

// q_embed_row writes row row (K values) of a weight of type type to x,
// dequantized (every thread of the block; units round-robin).
__device__ __forceinline__ void q_embed_row(int type, const uint8_t* lo, const uint8_t* hi, const uint8_t* m0,
                                            const uint8_t* m1, size_t row, int K, float* __restrict__ x) {
  for (int u = threadIdx.x; u < (K >> 5); u += blockDim.x) {
    float v[32];
    switch (type) {
#define QE_CASE(TT) \
  case TT: q_deq_f32<TT>(lo, hi, m0, m1, row, K, u, v); break;
      QE_CASE(QT_Q4_0)
      QE_CASE(QT_Q4_1)
      QE_CASE(QT_Q5_0)
      QE_CASE(QT_Q5_1)
      QE_CASE(QT_Q8_0)
      QE_CASE(QT_Q2_K)
      QE_CASE(QT_Q3_K)
      QE_CASE(QT_Q4_K)
      QE_CASE(QT_Q5_K)
      QE_CASE(QT_Q6_K)
      QE_CASE(QT_IQ4_NL)
      QE_CASE(QT_IQ4_XS)
#undef QE_CASE
      default:
#pragma unroll
        for (int i = 0; i < 32; i++) v[i] = __int_as_float(0x7fc00000);
    }
    float4* dst = (float4*)(x + (size_t)u * 32);
#pragma unroll
    for (int i = 0; i < 8; i++) dst[i] = make_float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
  }
}

#define QW_ARGS                                                                                       \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0, \
      const uint8_t *__restrict__ m1, int type

// qembed: x[t] = row tokens[t] of the embedding (embed_q8 for any type).
extern "C" __global__ void __launch_bounds__(256) qembed(QW_ARGS, int K, const int* __restrict__ tokens,
                                                         float* __restrict__ x) {
  PDL_LAUNCH();
  const int t = blockIdx.x;
  const size_t tok = (size_t)tokens[t];
  PDL_WAIT();
  q_embed_row(type, lo, hi, m0, m1, tok, K, x + (size_t)t * K);
}

// qembed_step: embed_step for any type.
extern "C" __global__ void __launch_bounds__(256) qembed_step(QW_ARGS, int K, const volatile int* host,
                                                              int* __restrict__ params, float* __restrict__ x,
                                                              const int* __restrict__ devtok) {
  __shared__ int tok;
  if (threadIdx.x == 0) {
    tok = host[3] ? devtok[0] : host[0];
    params[0] = tok;
    params[1] = host[1];
    params[2] = host[2];
  }
  __syncthreads();
  q_embed_row(type, lo, hi, m0, m1, (size_t)tok, K, x);
}

// qbembed_step: bembed_step for any type.
extern "C" __global__ void __launch_bounds__(256) qbembed_step(QW_ARGS, int K, const int* hmeta,
                                                               int* __restrict__ dmeta, int tokoff,
                                                               float* __restrict__ x) {
  __shared__ int tok;
  if (threadIdx.x == 0) tok = __ldcv(hmeta + tokoff + blockIdx.x);
  const int n4 = __ldcv(hmeta) >> 2;
  const int4* src = (const int4*)hmeta;
  int4* dst = (int4*)dmeta;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) dst[i] = __ldcv(src + i);
  __syncthreads();
  q_embed_row(type, lo, hi, m0, m1, (size_t)tok, K, x + (size_t)blockIdx.x * K);
}

// qbembed_dec: bembed_dec for any type.
extern "C" __global__ void __launch_bounds__(256) qbembed_dec(QW_ARGS, int K, const int* __restrict__ meta,
                                                              const int* __restrict__ devtok, float* __restrict__ x) {
  __shared__ int tok;
  PDL_LAUNCH();
  if (threadIdx.x == 0) tok = (int)blockIdx.x < meta[3] ? devtok[blockIdx.x] : meta[4 + blockIdx.x];
  __syncthreads();
  q_embed_row(type, lo, hi, m0, m1, (size_t)tok, K, x + (size_t)blockIdx.x * K);
}

// ---------------------------------------------------------------- decode matvec (one token), dp4a

// qsw maps 16-byte chunk c of the activation planes to its place in shared
// memory: lanes reading units 32 bytes apart then hit distinct banks.
__device__ __forceinline__ int qsw(int c) { return c ^ ((c >> 3) & 1); }

// qprologue loads x[0:K) into shared memory: RMS-normalized and multiplied
// by gain when gain is not null, quantized to int8 per block of 32 values
// (q = round(v*127/max|v|), as llama.cpp's q8_1: the products take 8-bit
// activations), the 16-byte chunks swizzled by qsw; the block's scale xs[b]
// = max|v|/127, and the sum of each 16 quantized values times it (xsum:
// the products are then exactly those with the quantized activations,
// the mins' and offsets' terms included). Thread t takes
// the chunks of 16 values t, t+256, ...: a pair of threads holds a block.
// 256 threads.
__device__ __forceinline__ void qprologue(const float* __restrict__ x, int K, const float* __restrict__ gain,
                                          float eps, i8* xq, float* xs, float* xsum, float* red) {
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int nc = K >> 4;
  float scale = 1.f;
  if (gain) {
    float ss = 0.f;
    for (int c = tid; c < nc; c += 256) {
      const float4* p = (const float4*)(x + 16 * c);
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const float4 v = p[j];
        ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
      }
    }
    ss = warp_sum(ss);
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    ss = 0.f;
#pragma unroll
    for (int w = 0; w < 8; w++) ss += red[w];
    scale = 1.f / sqrtf(ss / (float)K + eps);
  }
  for (int c0 = 0; c0 < nc; c0 += 256) {  // uniform: the pair's shuffle
    const int c = c0 + tid;
    const bool ok = c < nc;
    float v[16];
#pragma unroll
    for (int j = 0; j < 4; j++) {
      float4 a = make_float4(0.f, 0.f, 0.f, 0.f), g = make_float4(1.f, 1.f, 1.f, 1.f);
      if (ok) {
        a = ((const float4*)(x + 16 * c))[j];
        if (gain) g = ((const float4*)(gain + 16 * c))[j];
      }
      v[4 * j] = a.x, v[4 * j + 1] = a.y, v[4 * j + 2] = a.z, v[4 * j + 3] = a.w;
      if (gain) {
        v[4 * j] = v[4 * j] * scale * g.x, v[4 * j + 1] = v[4 * j + 1] * scale * g.y;
        v[4 * j + 2] = v[4 * j + 2] * scale * g.z, v[4 * j + 3] = v[4 * j + 3] * scale * g.w;
      }
    }
    float a = 0.f;
#pragma unroll
    for (int j = 0; j < 16; j++) a = fmaxf(a, fabsf(v[j]));
    a = fmaxf(a, __shfl_xor_sync(FULL, a, 1));
    if (ok) {
      const float inv = a > 0.f ? 127.f / a : 0.f;
      int w[4], qs = 0;
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const int q0 = __float2int_rn(v[4 * j] * inv), q1 = __float2int_rn(v[4 * j + 1] * inv);
        const int q2 = __float2int_rn(v[4 * j + 2] * inv), q3 = __float2int_rn(v[4 * j + 3] * inv);
        w[j] = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | (q3 << 24);
        qs += q0 + q1 + q2 + q3;
      }
      *(int4*)(xq + qsw(c) * 16) = make_int4(w[0], w[1], w[2], w[3]);
      const float d = a / 127.f;
      if ((c & 1) == 0) xs[c >> 1] = d;
      xsum[c] = (float)qs * d;
    }
  }
}

// One unit's activations: the 32 int8 values, the block's scale and the
// sums of its two halves.
struct qact {
  int q[8];
  float s, s0, s1;
};

__device__ __forceinline__ void q_act(qact& a, int u, const i8* xq, const float* xs, const float* xsum) {
  const int4 h0 = *(const int4*)(xq + qsw(2 * u) * 16), h1 = *(const int4*)(xq + qsw(2 * u + 1) * 16);
  a.q[0] = h0.x, a.q[1] = h0.y, a.q[2] = h0.z, a.q[3] = h0.w, a.q[4] = h1.x, a.q[5] = h1.y, a.q[6] = h1.z,
  a.q[7] = h1.w;
  a.s = xs[u];
  const float2 ss = *(const float2*)(xsum + 2 * u);
  a.s0 = ss.x;
  a.s1 = ss.y;
}

// q_dot returns the unit's dot product with the activations x = s*q:
// a*s*dot(Q, q) + (c - a*OFF)*sum(x) per sub-block, Q.q exact in integers.
template <int T>
__device__ __forceinline__ float q_dot(const qunit& q, int u, const qact& x) {
  int d0 = 0, d1 = 0;
#pragma unroll
  for (int g = 0; g < 8; g++) {
    const int w = q_word<T>(q, g);
    if (g < 4)
      d0 = __dp4a(w, x.q[g], d0);
    else
      d1 = __dp4a(w, x.q[g], d1);
  }
  float a[2], c[2];
  q_ac<T>(q, u, a, c);
  constexpr bool SUMS = qt<T>::HASC || qt<T>::OFF != 0;
  if constexpr (qt<T>::SUB == 32) {
    float r = a[0] * x.s * (float)(d0 + d1);
    if constexpr (SUMS) r += (c[0] - a[0] * (float)qt<T>::OFF) * (x.s0 + x.s1);
    return r;
  } else {
    float r = x.s * (a[0] * (float)d0 + a[1] * (float)d1);
    if constexpr (SUMS)
      r += (c[0] - a[0] * (float)qt<T>::OFF) * x.s0 + (c[1] - a[1] * (float)qt<T>::OFF) * x.s1;
    return r;
  }
}

// mvq: y = W * rmsnorm(x)*gain (or W * x when gain is null) for one token,
// W of block type T in planes. Blocks of 8 warps loop over tiles of 8 row
// groups (a persistent grid; the activation prologue once per block); a
// warp takes RPW rows of a tile (SwiGLU: a gate row and its up row) and
// its lanes the rows' units, U units a row and lane per round (unit
// 32*(U*round + i) + lane): it loads a round's units, computes them, and
// loads the next tile's first round once a tile is done (the first tile's
// before the prologue waits for the previous kernel). Epilogues (ep) as
// mv_q8's. Dynamic shared memory: K + 4*roundup(K/32, 2) + K/4 bytes
// (mvqSmem in quant.go). Measured on the H200 (8B Q4_K_M, tg128): U = 4
// 457 tok/s; U = 2 with three blocks an SM 447; a software pipeline over
// two register buffers of U = 2 (the loads of step s+1 issued before step
// s is computed) 423.
template <int T, int RPW, int U>
__device__ __forceinline__ void mvq(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                     const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int rows, int K,
                                     const float* __restrict__ x, const float* __restrict__ gain, float eps,
                                     float* __restrict__ y, int nout, float* __restrict__ pval, int* __restrict__ pidx,
                                     int ep) {
  extern __shared__ __align__(16) unsigned char smem[];
  i8* xq = (i8*)smem;
  float* xs = (float*)(xq + K);
  float* xsum = xs + (((K >> 5) + 1) & ~1);
  __shared__ float red[8];
  __shared__ float bval[8];
  __shared__ int bidx[8];

  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int NU = K >> 5;
  const bool sw = ep == EP_SWIGLU;
  const int units = sw ? rows / 2 : (rows + RPW - 1) / RPW;
  const int ntiles = (units + 7) / 8;
  auto rowOf = [&](int tile, int r) -> int {
    const int u = tile * 8 + warp;
    if (sw) return (u >> 3) * 16 + (u & 7) + r * 8;
    return u * RPW + r;
  };
  qunit q[U][RPW];
  auto load = [&](int tile, int round) {
#pragma unroll
    for (int r = 0; r < RPW; r++) {
      const int row = rowOf(tile, r);
#pragma unroll
      for (int i = 0; i < U; i++) {
        const int u = (round * U + i) * 32 + lane;
        q_zero(q[i][r]);
        if (u < NU && row < rows && tile < ntiles) q_load<T>(q[i][r], lo, hi, m0, m1, (size_t)row, K, u);
      }
    }
  };
  const int rounds = (NU + 32 * U - 1) / (32 * U);
  int tile = blockIdx.x;
  load(tile, 0);
  PDL_WAIT();
  qprologue(x, K, gain, eps, xq, xs, xsum, red);
  __syncthreads();

  float best = NAN;
  int besti = 0x7fffffff;
  for (; tile < ntiles; tile += gridDim.x) {
    float acc[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = 0.f;
    for (int round = 0; round < rounds; round++) {
      if (round > 0) load(tile, round);
#pragma unroll
      for (int i = 0; i < U; i++) {
        const int u = (round * U + i) * 32 + lane;
        if (u < NU) {
          qact a;
          q_act(a, u, xq, xs, xsum);
#pragma unroll
          for (int r = 0; r < RPW; r++) acc[r] += q_dot<T>(q[i][r], u, a);
        }
      }
    }
    const int cur = tile;
    if (tile + (int)gridDim.x < ntiles) load(tile + gridDim.x, 0);
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = warp_sum(acc[r]);
    if (sw) {
      const int p = cur * 8 + warp;
      if (lane == 0 && p < nout) y[p] = acc[0] / (1.f + expf(-acc[0])) * acc[1];
    } else {
#pragma unroll
      for (int r = 0; r < RPW; r++) {
        const int row = rowOf(cur, r);
        if (lane == r && row < rows) {
          if (ep == EP_ADD)
            y[row] += acc[r];
          else
            y[row] = acc[r];
        }
        if (ep == EP_ARGMAX && row < rows && better(acc[r], row, best, besti)) {
          best = acc[r];
          besti = row;
        }
      }
    }
  }
  if (ep == EP_ARGMAX) {
    if (lane == 0) {
      bval[warp] = best;
      bidx[warp] = besti;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      float bv = bval[0];
      int bi = bidx[0];
      for (int w = 1; w < 8; w++)
        if (better(bval[w], bidx[w], bv, bi)) {
          bv = bval[w];
          bi = bidx[w];
        }
      pval[blockIdx.x] = bv;
      pidx[blockIdx.x] = bi;
    }
  }
}

#define MVQ_ARGS                                                                                          \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0,     \
      const uint8_t *__restrict__ m1, int rows, int K, const float *__restrict__ x,                     \
      const float *__restrict__ gain, float eps, float *__restrict__ y, int nout, float *__restrict__ pval, \
      int *__restrict__ pidx, int ep
#define MVQ_INST(NAME, T)                                                                  \
  extern "C" __global__ void __launch_bounds__(256) mvq_##NAME##_r2(MVQ_ARGS) {            \
    mvq<T, 2, 4>(lo, hi, m0, m1, rows, K, x, gain, eps, y, nout, pval, pidx, ep);          \
  }
MVQ_INST(q4_0, QT_Q4_0)
MVQ_INST(q4_1, QT_Q4_1)
MVQ_INST(q5_0, QT_Q5_0)
MVQ_INST(q5_1, QT_Q5_1)
MVQ_INST(q8_0, QT_Q8_0)
MVQ_INST(q2_k, QT_Q2_K)
MVQ_INST(q3_k, QT_Q3_K)
MVQ_INST(q4_k, QT_Q4_K)
MVQ_INST(q5_k, QT_Q5_K)
MVQ_INST(q6_k, QT_Q6_K)
MVQ_INST(iq4_nl, QT_IQ4_NL)
MVQ_INST(iq4_xs, QT_IQ4_XS)

// ---------------------------------------------------------------- matrix-matrix: f16 tensor cores

// qact_h: per token (one block each), x[t] (rmsnorm*gain when gain is not
// null) to f16 xh[t*K..], divided by a power of two sx[t] that keeps the
// largest value near 2^12 (far from f16's overflow whatever the input).
extern "C" __global__ void __launch_bounds__(256) qact_h(const float* __restrict__ x, int K, int ldx,
                                                         const float* __restrict__ gain, float eps,
                                                         __half* __restrict__ xh, float* __restrict__ sx) {
  __shared__ double red[32];
  __shared__ float redf[32];
  PDL_LAUNCH();
  PDL_WAIT();
  const int t = blockIdx.x;
  const float* xt = x + (size_t)t * ldx;
  float scale = 1.f;
  if (gain) scale = rms_scale(xt, K, eps, red);
  float amax = 0.f;
  for (int i = threadIdx.x; i < K; i += blockDim.x) {
    const float v = gain ? xt[i] * scale * gain[i] : xt[i];
    amax = fmaxf(amax, fabsf(v));
  }
  amax = block_max(amax, redf);
  int e = 0;
  if (amax > 0.f && amax < INFINITY) frexpf(amax, &e);  // amax < 2^e
  const float inv = ldexpf(1.f, 12 - e);
  if (threadIdx.x == 0) sx[t] = ldexpf(1.f, e - 12);
  __half2* dst = (__half2*)(xh + (size_t)t * K);
  for (int i = threadIdx.x; i < (K >> 1); i += blockDim.x) {
    float v0 = xt[2 * i], v1 = xt[2 * i + 1];
    if (gain) {
      v0 = v0 * scale * gain[2 * i];
      v1 = v1 * scale * gain[2 * i + 1];
    }
    dst[i] = __floats2half2_rn(v0 * inv, v1 * inv);
  }
}

__device__ __forceinline__ void qcp16z(void* smem, const void* gmem, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(ok ? 16 : 0));
}
__device__ __forceinline__ void qcp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void qcp_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ void qldsm4(unsigned (&r)[4], const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

__device__ __forceinline__ void qmma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// q_deq_h dequantizes a unit to 32 halves at dst (16-byte aligned): bytes
// become half2 exactly (1024 + byte, minus 1024 + OFF), then one product
// (or fma with c) in half2.
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

// mmh: Y = W X^T for n tokens on f16 tensor cores (mma m16n8k16, f32
// accumulators). A block of 8 warps (WM x 8/WM) takes BM rows x BN tokens;
// per stage of BK = 8192/BM values of k every thread loads one unit of W
// (its row arow, unit auc) into registers, and after the stage's products
// dequantizes it to half into the other shared-memory buffer (so the
// global loads of stage s+1 are in flight during stage s's mma); X
// (f16 [n][K] from qact_h, sx its per-token scale) comes by cp.async into
// a double buffer. Rows past mpad read as zeros. Epilogues as mm_q8's:
// store, add, or SwiGLU (rows i and i+8 of each 16-row group, the same
// thread's accumulators). Y is token-major: Y[t*ldy + r].
template <int T, int BM, int BN, int WM>
__device__ __forceinline__ void mmh(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                    const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int M, int mpad,
                                    int K, const __half* __restrict__ X, const float* __restrict__ sx, int n,
                                    float* __restrict__ Y, int ldy, int nout, int ep) {
  constexpr int WN = 8 / WM, BK = 8192 / BM, UPR = BK / 32, LDA = BK + 8;
  constexpr int TM = BM / WM, TN = BN / WN, MT = TM / 16, NT = TN / 8;
  static_assert(NT % 2 == 0 && MT >= 1, "tile shape");
  extern __shared__ __align__(16) unsigned char smem[];
  __half* As = (__half*)smem;       // [2][BM][LDA]
  __half* Xs = As + 2 * BM * LDA;  // [2][BN][LDA]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wm = warp % WM, wn = warp / WM;
  const int r0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int arow = tid / UPR, auc = tid % UPR;
  const int grow = r0 + arow;
  const int NU = K >> 5;
  const int nk = (K + BK - 1) / BK;

  PDL_LAUNCH();
  qunit q;
  auto loadA = [&](int ks) {
    const int u = ks * UPR + auc;
    q_zero(q);
    if (grow < mpad && u < NU) q_load<T>(q, lo, hi, m0, m1, (size_t)grow, K, u);
  };
  auto storeA = [&](int ks, int buf) {
    q_deq_h<T>(q, ks * UPR + auc, As + (buf * BM + arow) * LDA + auc * 32);
  };
  auto loadX = [&](int ks, int buf) {
    constexpr int CPR = BK / 8;  // 16-byte chunks a token row
#pragma unroll
    for (int c = tid; c < BN * CPR; c += 256) {
      const int r = c / CPR, col = (c % CPR) * 8;
      const int t = n0 + r, k = ks * BK + col;
      const bool ok = t < n && k < K;
      qcp16z(Xs + (buf * BN + r) * LDA + col, X + (ok ? (size_t)t * K + k : 0), ok);
    }
    qcp_commit();
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  loadA(0);
  PDL_WAIT();
  loadX(0, 0);
  storeA(0, 0);
  qcp_wait_all();
  __syncthreads();
  for (int ks = 0; ks < nk; ks++) {
    const int cur = ks & 1;
    if (ks + 1 < nk) {
      loadA(ks + 1);
      loadX(ks + 1, cur ^ 1);
    }
    const __half* Ab = As + (cur * BM + wm * TM) * LDA;
    const __half* Xb = Xs + (cur * BN + wn * TN) * LDA;
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) {
      unsigned af[MT][4], bf[NT][2];
#pragma unroll
      for (int mt = 0; mt < MT; mt++) qldsm4(af[mt], Ab + (mt * 16 + (lane & 15)) * LDA + kk * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int np = 0; np < NT / 2; np++) {
        unsigned r[4];
        qldsm4(r, Xb + (np * 16 + (lane & 7) + ((lane >> 4) << 3)) * LDA + kk * 16 + ((lane >> 3) & 1) * 8);
        bf[2 * np][0] = r[0];
        bf[2 * np][1] = r[1];
        bf[2 * np + 1][0] = r[2];
        bf[2 * np + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++) qmma16816(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1]);
    }
    if (ks + 1 < nk) storeA(ks + 1, cur ^ 1);
    qcp_wait_all();
    __syncthreads();
  }

  const int gid = lane >> 2, tig = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; nt++) {
    const int t = n0 + wn * TN + nt * 8 + 2 * tig;
    const float s0 = t < n ? sx[t] : 0.f, s1 = t + 1 < n ? sx[t + 1] : 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const int rb = r0 + wm * TM + mt * 16;
      const float* c = acc[mt][nt];
      if (ep == EP_SWIGLU) {
        const int p = (rb >> 4) * 8 + gid;
        if (p < nout) {
          const float g0 = c[0] * s0, u0 = c[2] * s0, g1 = c[1] * s1, u1 = c[3] * s1;
          if (t < n) Y[(size_t)t * ldy + p] = g0 / (1.f + expf(-g0)) * u0;
          if (t + 1 < n) Y[(size_t)(t + 1) * ldy + p] = g1 / (1.f + expf(-g1)) * u1;
        }
      } else {
#pragma unroll
        for (int h = 0; h < 2; h++) {
          const int r = rb + gid + 8 * h;
          if (r >= M) continue;
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const int tt = t + e;
            if (tt >= n) continue;
            const float v = c[2 * h + e] * (e ? s1 : s0);
            float* dst = Y + (size_t)tt * ldy + r;
            if (ep == EP_ADD)
              *dst += v;
            else
              *dst = v;
          }
        }
      }
    }
  }
}

#define MMH_ARGS                                                                                          \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0,     \
      const uint8_t *__restrict__ m1, int M, int mpad, int K, const __half *__restrict__ X,             \
      const float *__restrict__ sx, int n, float *__restrict__ Y, int ldy, int nout, int ep
#define MMH_INST(NAME, T)                                                                               \
  extern "C" __global__ void __launch_bounds__(256) mmh_##NAME##_b128(MMH_ARGS) {                       \
    mmh<T, 128, 128, 2>(lo, hi, m0, m1, M, mpad, K, X, sx, n, Y, ldy, nout, ep);                        \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(256) mmh_##NAME##_b32(MMH_ARGS) {                        \
    mmh<T, 64, 32, 4>(lo, hi, m0, m1, M, mpad, K, X, sx, n, Y, ldy, nout, ep);                          \
  }
MMH_INST(q4_0, QT_Q4_0)
MMH_INST(q4_1, QT_Q4_1)
MMH_INST(q5_0, QT_Q5_0)
MMH_INST(q5_1, QT_Q5_1)
MMH_INST(q8_0, QT_Q8_0)
MMH_INST(q2_k, QT_Q2_K)
MMH_INST(q3_k, QT_Q3_K)
MMH_INST(q4_k, QT_Q4_K)
MMH_INST(q5_k, QT_Q5_K)
MMH_INST(q6_k, QT_Q6_K)
MMH_INST(iq4_nl, QT_IQ4_NL)
MMH_INST(iq4_xs, QT_IQ4_XS)
