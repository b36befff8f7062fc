// Included by kernels.cu after quant_mm.cuh: the block formats' int8
// tensor-core products for batches (decode of 9..128 sequences).

// ---------------------------------------------------------------- matrix-matrix: int8 tensor cores

// The products start from MQ_BIAS: the int32 sum then reads, as a float,
// 12582912 + sum exactly (|sum| < 2^22: 32 products of two int8), so that
// a float subtraction converts it (the int-to-float conversion's
// throughput is a quarter of an add's).
#define MQ_BIAS 0x4B400000
#define MQ_BIASF 12582912.f
__device__ __forceinline__ float mq_f(int d) { return __int_as_float(d) - MQ_BIASF; }

__device__ __forceinline__ void qmma_k32(int (&d)[4], const int (&a)[4], int b0, int b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(MQ_BIAS));
}
__device__ __forceinline__ void qmma_k16(int (&d)[4], int a0, int a1, int b0) {
  asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a0), "r"(a1), "r"(b0), "r"(MQ_BIAS));
}

// qb: per type the bytes a block of the scale planes m0 and m1 holds.
template <int T>
struct qb;
template <>
struct qb<QT_Q4_0> { enum { M0 = 2, M1 = 0 }; };
template <>
struct qb<QT_Q4_1> { enum { M0 = 4, M1 = 0 }; };
template <>
struct qb<QT_Q5_0> { enum { M0 = 2, M1 = 0 }; };
template <>
struct qb<QT_Q5_1> { enum { M0 = 4, M1 = 0 }; };
template <>
struct qb<QT_Q8_0> { enum { M0 = 2, M1 = 0 }; };
template <>
struct qb<QT_Q2_K> { enum { M0 = 16, M1 = 4 }; };
template <>
struct qb<QT_Q3_K> { enum { M0 = 16, M1 = 0 }; };
template <>
struct qb<QT_Q4_K> { enum { M0 = 16, M1 = 0 }; };
template <>
struct qb<QT_Q5_K> { enum { M0 = 16, M1 = 0 }; };
template <>
struct qb<QT_Q6_K> { enum { M0 = 16, M1 = 2 }; };
template <>
struct qb<QT_IQ4_NL> { enum { M0 = 2, M1 = 0 }; };
template <>
struct qb<QT_IQ4_XS> { enum { M0 = 8, M1 = 0 }; };

// mqw: a weight row's bytes of one stage (8 units, 256 values) in shared
// memory, as in the planes: lo, hi, m0 (rounded up to 16 bytes) and m1 (4
// bytes in 16), rounded up to an odd multiple of 16 bytes (the 16-byte
// reads of 8 rows then hit distinct banks). quant.go's mmqRow is the same.
template <int T>
struct mqw {
  enum {
    LOB = qt<T>::LO * 32,
    HIB = qt<T>::HI * 32,
    M0S = qb<T>::M0 * (256 / qt<T>::QK),
    M0P = (M0S + 15) / 16 * 16,
    M1P = qb<T>::M1 ? 16 : 0,
    RAW = LOB + HIB + M0P + M1P,
    RS = (RAW / 16) % 2 ? RAW : RAW + 16
  };
};

// Activations of a stage: a token's 8 units of int8 quants (MQ_RS bytes a
// token), 8 scales and 16 sums of 16.
#define MQ_RS 272
#define MQ_XB (MQ_RS + 32 + 64)

// q_load_s loads unit j (0..7) of a stage's weight row rp in shared memory
// (mqw's layout), for lane tig of its quad: the words q_word reads as words
// 0 and 4 are the unit's words tig and 4+tig (the quad's lanes take the
// unit's four column groups, as mma's fragments want them); odd: the
// block's place in its 4-byte word of m1 (Q6_K's d).
template <int T>
__device__ __forceinline__ void q_load_s(qunit& q, const unsigned char* rp, int j, int tig, int odd) {
  constexpr int LO = qt<T>::LO, HI = qt<T>::HI, QK = qt<T>::QK;
  constexpr int LOB = mqw<T>::LOB, HIB = mqw<T>::HIB, M0P = mqw<T>::M0P;
  if constexpr (LO == 4) {
    q.lo[0] = *(const int*)(rp + j * 16 + tig * 4);
  } else if constexpr (LO == 2) {
    const int2 v = *(const int2*)(rp + j * 8);
    q.lo[0] = v.x >> (2 * tig);
    q.lo[1] = v.y >> (2 * tig);
  } else {
    q.lo[0] = *(const int*)(rp + j * 32 + tig * 4);
    q.lo[4] = *(const int*)(rp + j * 32 + 16 + tig * 4);
  }
  if constexpr (HI == 1) {
    q.hi[0] = *(const int*)(rp + LOB + j * 4) >> tig;
  } else if constexpr (HI == 2) {
    const int2 v = *(const int2*)(rp + LOB + j * 8);
    q.hi[0] = v.x >> (2 * tig);
    q.hi[1] = v.y >> (2 * tig);
  }
  const unsigned char* m = rp + LOB + HIB;
  if constexpr (T == QT_Q4_0 || T == QT_Q5_0 || T == QT_Q8_0 || T == QT_IQ4_NL) {
    q.m[0] = *(const unsigned short*)(m + j * 2);
  } else if constexpr (T == QT_Q4_1 || T == QT_Q5_1) {
    q.m[0] = *(const int*)(m + j * 4);
  } else if constexpr (T == QT_Q2_K || T == QT_Q6_K) {
    q.m[0] = *(const unsigned short*)(m + j * 2);
    const int w = *(const int*)(m + M0P);
    q.m1 = T == QT_Q6_K ? (w >> (16 * odd)) & 0xffff : w;
  } else if constexpr (T == QT_IQ4_XS) {
    const int2 v = *(const int2*)m;
    q.m[0] = v.x, q.m[1] = v.y;
  } else {
    const int4 v = *(const int4*)m;
    q.m[0] = v.x, q.m[1] = v.y, q.m[2] = v.z, q.m[3] = v.w;
  }
  static_assert(QK == 32 || QK == 256, "block size");
}

__device__ __forceinline__ void qcp4z(void* smem, const void* gmem, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(ok ? 4 : 0));
}
__device__ __forceinline__ void qcp8z(void* smem, const void* gmem, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(gmem), "r"(ok ? 8 : 0));
}
template <int N>
__device__ __forceinline__ void qcp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// mmq_ns is mmq's pipeline depth for BN tokens; mmq_smem its shared memory.
__host__ __device__ constexpr int mmq_ns(int BN) { return BN >= 128 ? 3 : 4; }

// mmq: Y = W X^T for n tokens against qact8's int8 activations (xq, per-32
// scales xs and sums of 16 xsum: the terms mvq and mvqn compute, so the
// same products whatever the batch), with integer tensor cores (mma.sync
// m16n8k32 s8, or two m16n8k16 for types with scales per 16 values). A
// block of 8 warps takes BM rows x BN tokens: warp w takes rows 16*(w%WM)
// and, of each stage of 8 units (256 values of k), the units of k-group
// w/WM (WK = 8/WM groups, summed in shared memory at the end in a fixed
// order). Per unit and (row, token): acc += a*s*dot(Q, q) + c'*sum(x) per
// sub-block (c' = c - a*OFF), dot exact in integers. Stages come by
// cp.async, NS of them in flight: the weight planes' bytes as they are
// (mqw's layout; the lanes decode their fragments and scales from there:
// q_load_s, q_word, q_ac) and the activations (their 16-byte chunks
// unswizzled, qsw). K is a multiple of 256; rows past mpad read as zeros.
// Epilogues as mmh's; Y is token-major.
template <int T, int BM, int BN>
__device__ __forceinline__ void mmq(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                    const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int M, int mpad,
                                    int K, const i8* __restrict__ xq, const float* __restrict__ xs,
                                    const float* __restrict__ xsum, int n, float* __restrict__ Y, int ldy, int nout,
                                    int ep) {
  constexpr int WM = BM / 16, WK = 8 / WM, UPW = 8 / WK, NT = BN / 8, NS = mmq_ns(BN);
  constexpr int QK = qt<T>::QK, LOB = mqw<T>::LOB, HIB = mqw<T>::HIB, M0S = mqw<T>::M0S, M0P = mqw<T>::M0P;
  constexpr int RS = mqw<T>::RS, STAGE = BM * RS + BN * MQ_XB;
  constexpr bool SUMS = qt<T>::HASC || qt<T>::OFF != 0;
  // 16-byte chunks of a row's stage: lo, hi, then m0 when it fills them.
  constexpr int C16 = (LOB + HIB + (M0S >= 16 ? M0S : 0)) / 16;
  static_assert(WM * WK == 8 && NT >= 1 && (LOB + HIB) % 16 == 0, "tile shape");
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int gid = lane >> 2, tig = lane & 3;
  const int wm = warp % WM, wk = warp / WM;
  const int r0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int NU = K >> 5;
  const int ns = K >> 8;
  const int bpr = K / QK;  // blocks a row

  auto W = [&](int slot) { return smem + slot * STAGE; };
  auto Xq = [&](int slot) { return smem + slot * STAGE + BM * RS; };
  auto Xs = [&](int slot) { return (float*)(smem + slot * STAGE + BM * RS + BN * MQ_RS); };
  auto Xm = [&](int slot) { return (float*)(smem + slot * STAGE + BM * RS + BN * (MQ_RS + 32)); };

  auto issueW = [&](int s, int slot) {
    unsigned char* w = W(slot);
    for (int c = tid; c < BM * C16; c += 256) {
      const int r = c / C16, k = c % C16, row = r0 + r;
      const bool ok = row < mpad;
      const size_t rr = ok ? (size_t)row : 0;
      const void* src;
      if (k < LOB / 16)
        src = lo + (rr * K + (size_t)s * 256) * qt<T>::LO / 8 + k * 16;
      else if (k < (LOB + HIB) / 16)
        src = hi + (rr * K + (size_t)s * 256) * qt<T>::HI / 8 + (k - LOB / 16) * 16;
      else
        src = m0 + (rr * bpr + (size_t)s * (256 / QK)) * qb<T>::M0 + (k - (LOB + HIB) / 16) * 16;
      qcp16z(w + r * RS + k * 16, src, ok);
    }
    if constexpr (M0S < 16 || qb<T>::M1 != 0) {
      for (int r = tid; r < BM; r += 256) {
        const int row = r0 + r;
        const bool ok = row < mpad;
        const size_t blk = (ok ? (size_t)row : 0) * bpr + s;  // QK = 256 here
        if constexpr (M0S < 16) qcp8z(w + r * RS + LOB + HIB, m0 + blk * qb<T>::M0, ok);
        if constexpr (qb<T>::M1 == 4) qcp4z(w + r * RS + LOB + HIB + M0P, m1 + blk * 4, ok);
        if constexpr (qb<T>::M1 == 2) qcp4z(w + r * RS + LOB + HIB + M0P, m1 + (blk * 2 & ~(size_t)3), ok);
      }
    }
  };
  auto issueX = [&](int s, int slot) {
    // 16 chunks of quants, 2 of scales and 4 of sums a token.
    for (int c = tid; c < BN * 22; c += 256) {
      const int r = c / 22, k = c % 22, t = n0 + r;
      const bool ok = t < n;
      const size_t tt = ok ? (size_t)t : 0;
      if (k < 16) {
        const int gc = s * 16 + k;  // the global chunk; qsw is its own inverse
        qcp16z(Xq(slot) + r * MQ_RS + (qsw(gc) - s * 16) * 16, xq + tt * K + gc * 16, ok);
      } else if (k < 18) {
        qcp16z(Xs(slot) + r * 8 + (k - 16) * 4, xs + tt * NU + s * 8 + (k - 16) * 4, ok);
      } else {
        qcp16z(Xm(slot) + r * 16 + (k - 18) * 4, xsum + tt * 2 * NU + s * 16 + (k - 18) * 4, ok);
      }
    }
  };

  float acc[NT][4];
#pragma unroll
  for (int j = 0; j < NT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;

  PDL_LAUNCH();
#pragma unroll
  for (int st = 0; st < NS - 1; st++)
    if (st < ns) issueW(st, st);
  PDL_WAIT();
#pragma unroll
  for (int st = 0; st < NS - 1; st++) {
    if (st < ns) issueX(st, st);
    qcp_commit();
  }
  // Q6_K: the parity of the rows' blocks (their d in the low or high half
  // of m1's 4-byte word).
  const int rowa = r0 + wm * 16 + gid;
  for (int s = 0; s < ns; s++) {
    qcp_wait<NS - 2>();
    __syncthreads();
    if (s + NS - 1 < ns) {
      issueW(s + NS - 1, (s + NS - 1) % NS);
      issueX(s + NS - 1, (s + NS - 1) % NS);
    }
    qcp_commit();
    const int slot = s % NS;
    const unsigned char* wa = W(slot) + (wm * 16 + gid) * RS;
    const unsigned char* xqb = Xq(slot) + gid * MQ_RS;
    const float* xsb = Xs(slot);
    const float* xmb = Xm(slot);
    const int odda = (int)(((size_t)rowa * bpr + s) & 1), oddb = (int)(((size_t)(rowa + 8) * bpr + s) & 1);
#pragma unroll
    for (int ui = 0; ui < UPW; ui++) {
      const int u = wk * UPW + ui;
      qunit qa, qb2;
      q_zero(qa);
      q_zero(qb2);
      q_load_s<T>(qa, wa, u, tig, odda);
      q_load_s<T>(qb2, wa + 8 * RS, u, tig, oddb);
      int a[4];
      a[0] = q_word<T>(qa, 0);
      a[1] = q_word<T>(qb2, 0);
      a[2] = q_word<T>(qa, 4);
      a[3] = q_word<T>(qb2, 4);
      float aa[2], ca[2], ab[2], cb[2];
      q_ac<T>(qa, u, aa, ca);
      q_ac<T>(qb2, u, ab, cb);
#pragma unroll
      for (int h = 0; h < 2; h++) {
        ca[h] -= aa[h] * (float)qt<T>::OFF;
        cb[h] -= ab[h] * (float)qt<T>::OFF;
      }
#pragma unroll
      for (int nt = 0; nt < NT; nt++) {
        const unsigned char* xb = xqb + nt * 8 * MQ_RS + u * 32;
        const int b0 = *(const int*)(xb + tig * 4), b1 = *(const int*)(xb + 16 + tig * 4);
        const int t0 = nt * 8 + 2 * tig;
        const float x0 = xsb[t0 * 8 + u], x1 = xsb[(t0 + 1) * 8 + u];
        if constexpr (qt<T>::SUB == 32) {
          int d[4];
          qmma_k32(d, a, b0, b1);
          acc[nt][0] += aa[0] * x0 * mq_f(d[0]);
          acc[nt][1] += aa[0] * x1 * mq_f(d[1]);
          acc[nt][2] += ab[0] * x0 * mq_f(d[2]);
          acc[nt][3] += ab[0] * x1 * mq_f(d[3]);
          if constexpr (SUMS) {
            const float2 m0v = *(const float2*)(xmb + t0 * 16 + 2 * u), m1v = *(const float2*)(xmb + (t0 + 1) * 16 + 2 * u);
            const float s0 = m0v.x + m0v.y, s1 = m1v.x + m1v.y;
            acc[nt][0] += ca[0] * s0;
            acc[nt][1] += ca[0] * s1;
            acc[nt][2] += cb[0] * s0;
            acc[nt][3] += cb[0] * s1;
          }
        } else {
          int d0[4], d1[4];
          qmma_k16(d0, a[0], a[1], b0);
          qmma_k16(d1, a[2], a[3], b1);
          acc[nt][0] += x0 * (aa[0] * mq_f(d0[0]) + aa[1] * mq_f(d1[0]));
          acc[nt][1] += x1 * (aa[0] * mq_f(d0[1]) + aa[1] * mq_f(d1[1]));
          acc[nt][2] += x0 * (ab[0] * mq_f(d0[2]) + ab[1] * mq_f(d1[2]));
          acc[nt][3] += x1 * (ab[0] * mq_f(d0[3]) + ab[1] * mq_f(d1[3]));
          if constexpr (SUMS) {
            const float2 m0v = *(const float2*)(xmb + t0 * 16 + 2 * u), m1v = *(const float2*)(xmb + (t0 + 1) * 16 + 2 * u);
            acc[nt][0] += ca[0] * m0v.x + ca[1] * m0v.y;
            acc[nt][1] += ca[0] * m1v.x + ca[1] * m1v.y;
            acc[nt][2] += cb[0] * m0v.x + cb[1] * m0v.y;
            acc[nt][3] += cb[0] * m1v.x + cb[1] * m1v.y;
          }
        }
      }
    }
  }
  qcp_wait<0>();
  __syncthreads();

  // The k-groups' partial sums, added in group order by group 0.
  if constexpr (WK > 1) {
    float* red = (float*)smem;
    if (wk > 0) {
#pragma unroll
      for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++) red[((((wk - 1) * WM + wm) * NT + nt) * 4 + i) * 32 + lane] = acc[nt][i];
    }
    __syncthreads();
    if (wk > 0) return;
#pragma unroll
    for (int g = 1; g < WK; g++)
#pragma unroll
      for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++) acc[nt][i] += red[((((g - 1) * WM + wm) * NT + nt) * 4 + i) * 32 + lane];
  }

#pragma unroll
  for (int nt = 0; nt < NT; nt++) {
    const int t = n0 + nt * 8 + 2 * tig;
    const int rb = r0 + wm * 16;
    const float* c = acc[nt];
    if (ep == EP_SWIGLU) {
      const int p = (rb >> 4) * 8 + gid;
      if (p < nout) {
        if (t < n) Y[(size_t)t * ldy + p] = c[0] / (1.f + expf(-c[0])) * c[2];
        if (t + 1 < n) Y[(size_t)(t + 1) * ldy + p] = c[1] / (1.f + expf(-c[1])) * c[3];
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
          float* dst = Y + (size_t)tt * ldy + r;
          if (ep == EP_ADD)
            *dst += c[2 * h + e];
          else
            *dst = c[2 * h + e];
        }
      }
    }
  }
}

#define MMQ_ARGS                                                                                          \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0,     \
      const uint8_t *__restrict__ m1, int M, int mpad, int K, const i8 *__restrict__ xq,                \
      const float *__restrict__ xs, const float *__restrict__ xsum, int n, float *__restrict__ Y, int ldy, \
      int nout, int ep
#define MMQ_ONE(NAME, T, BM, BN)                                                                   \
  extern "C" __global__ void __launch_bounds__(256) mmq_##NAME##_m##BM##_n##BN(MMQ_ARGS) {         \
    mmq<T, BM, BN>(lo, hi, m0, m1, M, mpad, K, xq, xs, xsum, n, Y, ldy, nout, ep);                  \
  }
// Tiles: 32 rows by 16, 32, 64 or 128 tokens, and 64 rows by 64 or 128
// (fewer blocks, the activations read fewer times; quant.go's mmqTile).
#define MMQ_INST(NAME, T)  \
  MMQ_ONE(NAME, T, 32, 16) \
  MMQ_ONE(NAME, T, 32, 32) \
  MMQ_ONE(NAME, T, 32, 64) \
  MMQ_ONE(NAME, T, 32, 128) \
  MMQ_ONE(NAME, T, 64, 64) \
  MMQ_ONE(NAME, T, 64, 128)
MMQ_INST(q4_0, QT_Q4_0)
MMQ_INST(q4_1, QT_Q4_1)
MMQ_INST(q5_0, QT_Q5_0)
MMQ_INST(q5_1, QT_Q5_1)
MMQ_INST(q8_0, QT_Q8_0)
MMQ_INST(q2_k, QT_Q2_K)
MMQ_INST(q3_k, QT_Q3_K)
MMQ_INST(q4_k, QT_Q4_K)
MMQ_INST(q5_k, QT_Q5_K)
MMQ_INST(q6_k, QT_Q6_K)
MMQ_INST(iq4_nl, QT_IQ4_NL)
MMQ_INST(iq4_xs, QT_IQ4_XS)
