// Included by kernels.cu after quant_mv.cuh: the block formats' f16 tensor-core products.

// ---------------------------------------------------------------- matrix-matrix: f16 tensor cores

// qact_h: per token (one block of 256 threads each), x[t] (rmsnorm*gain
// when gain is not null) to f16 xh[t*K..], divided by a power of two sx[t]
// that keeps the largest value near 2^12 (far from f16's overflow whatever
// the input). Rows of up to QH_J*256 values are read once, into registers
// (thread i holds values i, i+256, ...: rms_scale's order, so the same
// sums); longer ones are read three times.
#define QH_J 16
extern "C" __global__ void __launch_bounds__(256) qact_h(const float* __restrict__ x, int K, int ldx,
                                                         const float* __restrict__ gain, float eps,
                                                         __half* __restrict__ xh, float* __restrict__ sx) {
  __shared__ double red[32];
  __shared__ float redf[32];
  PDL_LAUNCH();
  PDL_WAIT();
  const int t = blockIdx.x;
  const float* xt = x + (size_t)t * ldx;
  __half* dst = xh + (size_t)t * K;
  if (K <= QH_J * 256) {
    float v[QH_J];
    double ss = 0.0;
#pragma unroll
    for (int j = 0; j < QH_J; j++) {
      const int i = threadIdx.x + j * 256;
      v[j] = i < K ? xt[i] : 0.f;
      ss += (double)v[j] * (double)v[j];
    }
    float scale = 1.f;
    if (gain) {
      ss = block_sum_d(ss, red);
      scale = (float)(1.0 / sqrt(ss / (double)K + (double)eps));
    }
    float amax = 0.f;
#pragma unroll
    for (int j = 0; j < QH_J; j++) {
      const int i = threadIdx.x + j * 256;
      if (gain && i < K) v[j] = v[j] * scale * gain[i];
      amax = fmaxf(amax, fabsf(v[j]));
    }
    amax = block_max(amax, redf);
    int e = 0;
    if (amax > 0.f && amax < INFINITY) frexpf(amax, &e);  // amax < 2^e
    const float inv = ldexpf(1.f, 12 - e);
    if (threadIdx.x == 0) sx[t] = ldexpf(1.f, e - 12);
#pragma unroll
    for (int j = 0; j < QH_J; j++) {
      const int i = threadIdx.x + j * 256;
      if (i < K) dst[i] = __float2half_rn(v[j] * inv);
    }
    return;
  }
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
  __half2* dst2 = (__half2*)dst;
  for (int i = threadIdx.x; i < (K >> 1); i += blockDim.x) {
    float v0 = xt[2 * i], v1 = xt[2 * i + 1];
    if (gain) {
      v0 = v0 * scale * gain[2 * i];
      v1 = v1 * scale * gain[2 * i + 1];
    }
    dst2[i] = __floats2half2_rn(v0 * inv, v1 * inv);
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

// mmh_groups: a grouped mmh's (GR: the experts of a mixture, moe.go) view
// of moe_route's outputs: grp (the chosen experts: e, start, count), tiles
// (their tiles of BN pairs: a | y << 16, tiles[0] of them) and order (the
// pairs, expert by expert); a pair's activations are X's row pair/xdiv.
struct mmh_groups {
  const int* grp;
  const int* tiles;
  const int* order;
  int xdiv;
};

// mmh: Y = W X^T for n tokens on f16 tensor cores (mma m16n8k16, f32
// accumulators). A block of 8 warps (WM x 8/WM) takes BM rows x BN tokens;
// per stage of BK = 8192/BM values of k every thread loads one unit of W
// (its row arow, unit auc) into registers, and after the stage's products
// dequantizes it to half into the other shared-memory buffer (so the
// global loads of stage s+1 are in flight during stage s's mma); X
// (f16 [n][K] from qact_h, sx its per-token scale) comes by cp.async into
// a double buffer. Rows past mpad read as zeros. Epilogues as mm_q8's:
// store, add, or SwiGLU (rows i and i+8 of each 16-row group, the same
// thread's accumulators). Y is token-major: Y[t*ldy + r]. Grouped (GR,
// the experts: mmhe_<type>), block (x, y) takes tile y of gr.tiles (blocks
// past them exit): its expert's M rows (from row e*M of the stacked
// planes) against up to BN of its pairs, X's and sx's rows pair/xdiv,
// written to Y's rows pair.
template <int T, int BM, int BN, int WM, bool GR = false>
__device__ __forceinline__ void mmh(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                    const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int M, int mpad,
                                    int K, const __half* __restrict__ X, const float* __restrict__ sx, int n,
                                    float* __restrict__ Y, int ldy, int nout, int ep, mmh_groups gr = {}) {
  constexpr int WN = 8 / WM, BK = 8192 / BM, UPR = BK / 32, LDA = BK + 8;
  constexpr int TM = BM / WM, TN = BN / WN, MT = TM / 16, NT = TN / 8;
  static_assert(NT % 2 == 0 && MT >= 1, "tile shape");
  extern __shared__ __align__(16) unsigned char smem[];
  __half* As = (__half*)smem;       // [2][BM][LDA]
  __half* Xs = As + 2 * BM * LDA;  // [2][BN][LDA]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wm = warp % WM, wn = warp / WM;
  const int r0 = blockIdx.x * BM;
  int n0 = blockIdx.y * BN;
  const int arow = tid / UPR, auc = tid % UPR;
  const int grow = r0 + arow;
  const int NU = K >> 5;
  const int nk = (K + BK - 1) / BK;

  PDL_LAUNCH();
  size_t wrow0 = 0;  // GR: the expert's first row
  int start = 0;     // GR: its first pair in gr.order
  if constexpr (GR) {
    PDL_WAIT();
    if ((int)blockIdx.y >= gr.tiles[0]) return;
    const int tl = gr.tiles[1 + blockIdx.y], a = tl & 0xffff;
    n0 = (tl >> 16) * BN;
    wrow0 = (size_t)gr.grp[1 + 3 * a] * M;
    start = gr.grp[2 + 3 * a];
    n = gr.grp[3 + 3 * a];
    mpad = M;  // the next rows are the next expert's
  }
  auto xrow = [&](int t) -> size_t {
    if constexpr (GR) return (size_t)(gr.order[start + t] / gr.xdiv);
    return (size_t)t;
  };
  auto yrow = [&](int t) -> size_t {
    if constexpr (GR) return (size_t)gr.order[start + t];
    return (size_t)t;
  };
  qunit q;
  auto loadA = [&](int ks) {
    const int u = ks * UPR + auc;
    q_zero(q);
    if (grow < mpad && u < NU) q_load<T>(q, lo, hi, m0, m1, wrow0 + grow, K, u);
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
      qcp16z(Xs + (buf * BN + r) * LDA + col, X + (ok ? xrow(t) * K + k : 0), ok);
    }
    qcp_commit();
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  loadA(0);
  if constexpr (!GR) PDL_WAIT();
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
    const float s0 = t < n ? sx[xrow(t)] : 0.f, s1 = t + 1 < n ? sx[xrow(t + 1)] : 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const int rb = r0 + wm * TM + mt * 16;
      const float* c = acc[mt][nt];
      if (ep == EP_SWIGLU) {
        const int p = (rb >> 4) * 8 + gid;
        if (p < nout) {
          const float g0 = c[0] * s0, u0 = c[2] * s0, g1 = c[1] * s1, u1 = c[3] * s1;
          if (t < n) Y[yrow(t) * ldy + p] = g0 / (1.f + expf(-g0)) * u0;
          if (t + 1 < n) Y[yrow(t + 1) * ldy + p] = g1 / (1.f + expf(-g1)) * u1;
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
            float* dst = Y + yrow(tt) * ldy + r;
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
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(256)                                                     \
      mmhe_##NAME(MMH_ARGS, const int* __restrict__ grp, const int* __restrict__ tiles,                 \
                  const int* __restrict__ order, int xdiv) {                                            \
    mmh<T, 64, 32, 4, true>(lo, hi, m0, m1, M, mpad, K, X, sx, n, Y, ldy, nout, ep,                     \
                            mmh_groups{grp, tiles, order, xdiv});                                       \
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
