// mmq.cuh: matrix products on int8 tensor cores (mma.sync m16n8k32 s8;
// included by kernels.cu after quantize.cuh, whose activations they take):
//   mm_q8_*        Q8_0's own layout against int16 activations as two int8
//                  planes (quant_act), 64-row tiles through shared memory
//                  (prompts)
//   mmv_q8*_*      the same for a few tokens (batched decode), the weights
//                  streamed into registers (quant_act, quant_actv)
//   mmq_ / mmq2_<type>_m<rows>_n<tokens>  the block formats against qact8's
//                  int8 activations with their sums (decode of 9..128
//                  sequences); one template, mmq, in two forms (mqv)

// ---------------------------------------------------------------- Q8_0's own layout

// mm_q8: Y = W X^T for n tokens with integer tensor cores (mma.sync
// m16n8k32 s8): a 64xNTL tile of (rows, tokens) per block of 4 warps, each
// warp 32x(NTL/2) (NTL 64, or 32 and 16 for matrices of few row tiles: more
// blocks, each row tile's weights read by more of them); one Q8_0 block
// (k = 32) per pipeline stage, 4 stages of
// cp.async. W is int8 rows x K (rows padded to a multiple of 64), wdc its
// scales block-major [K/32][mpad]; X is the hi/lo planes [npad][K] and
// scales [K/32][npad]. Y is token-major: Y[t*ldy + r]. Epilogues as mv_q8's
// (EP_SWIGLU pairs rows i and i+8 of each 16-row group, which sit in the
// same thread's accumulators).
template <int EP, int NTL>
__device__ __forceinline__ void mm_q8(const i8* __restrict__ W, const __half* __restrict__ wdc, int M, int mpad,
                                      int K, const i8* __restrict__ Xh, const i8* __restrict__ Xl,
                                      const float* __restrict__ Xs, int N, int npad, float* __restrict__ Y,
                                      int ldy, int nout) {
  constexpr int ST = 4, RS = 48;  // stages; smem row stride in bytes (32 + 16 padding)
  constexpr int WN = NTL / 16;    // 8-token n-tiles a warp
  static_assert(NTL == 64 || NTL == 32 || NTL == 16, "token tile");
  __shared__ __align__(16) i8 Ws[ST][64 * RS];
  __shared__ __align__(16) i8 Hs[ST][NTL * RS];
  __shared__ __align__(16) i8 Ls[ST][NTL * RS];
  __shared__ __align__(16) __half Wd[ST][64];
  __shared__ __align__(16) float Xd[ST][NTL];

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int gid = lane >> 2, tig = lane & 3;
  const int wm = warp & 1, wn = warp >> 1;
  const int m0 = blockIdx.x * 64, n0 = blockIdx.y * NTL;
  const int nkb = K >> 5;

  auto load = [&](int st, int kb) {
    const int row = tid >> 1, hf = (tid & 1) * 16;
    cp_async16(&Ws[st][row * RS + hf], W + (size_t)(m0 + row) * K + kb * 32 + hf);
    if (row < NTL) {
      cp_async16(&Hs[st][row * RS + hf], Xh + (size_t)(n0 + row) * K + kb * 32 + hf);
      cp_async16(&Ls[st][row * RS + hf], Xl + (size_t)(n0 + row) * K + kb * 32 + hf);
    }
    if (tid < 8)
      cp_async16(&Wd[st][tid * 8], wdc + (size_t)kb * mpad + m0 + tid * 8);
    else if (tid < 8 + NTL / 4)
      cp_async16(&Xd[st][(tid - 8) * 4], Xs + (size_t)kb * npad + n0 + (tid - 8) * 4);
  };

  float acc[2][WN][4];
#pragma unroll
  for (int a = 0; a < 2; a++)
#pragma unroll
    for (int b = 0; b < WN; b++)
#pragma unroll
      for (int c = 0; c < 4; c++) acc[a][b][c] = 0.f;

#pragma unroll
  for (int s = 0; s < ST - 1; s++) {
    if (s < nkb) load(s, s);
    cp_async_commit();
  }
  for (int kb = 0; kb < nkb; kb++) {
    cp_async_wait<ST - 2>();
    __syncthreads();
    if (kb + ST - 1 < nkb) load((kb + ST - 1) % ST, kb + ST - 1);
    cp_async_commit();
    const int st = kb % ST;
    const i8* ws = Ws[st];
    const i8* hs = Hs[st];
    const i8* ls = Ls[st];
    int a[2][4];
#pragma unroll
    for (int mt = 0; mt < 2; mt++) {
      const int r = wm * 32 + mt * 16 + gid;
      a[mt][0] = *(const int*)(ws + r * RS + tig * 4);
      a[mt][1] = *(const int*)(ws + (r + 8) * RS + tig * 4);
      a[mt][2] = *(const int*)(ws + r * RS + 16 + tig * 4);
      a[mt][3] = *(const int*)(ws + (r + 8) * RS + 16 + tig * 4);
    }
    float wdv[2][2], xdv[WN][2];
#pragma unroll
    for (int mt = 0; mt < 2; mt++) {
      wdv[mt][0] = __half2float(Wd[st][wm * 32 + mt * 16 + gid]);
      wdv[mt][1] = __half2float(Wd[st][wm * 32 + mt * 16 + gid + 8]);
    }
#pragma unroll
    for (int nt = 0; nt < WN; nt++) {
      const int c = wn * (NTL / 2) + nt * 8;
      const int bh0 = *(const int*)(hs + (c + gid) * RS + tig * 4);
      const int bh1 = *(const int*)(hs + (c + gid) * RS + 16 + tig * 4);
      const int bl0 = *(const int*)(ls + (c + gid) * RS + tig * 4);
      const int bl1 = *(const int*)(ls + (c + gid) * RS + 16 + tig * 4);
      xdv[nt][0] = Xd[st][c + tig * 2];
      xdv[nt][1] = Xd[st][c + tig * 2 + 1];
#pragma unroll
      for (int mt = 0; mt < 2; mt++) {
        int ch[4], cl[4];
        mma_s8(ch, a[mt], bh0, bh1);
        mma_s8(cl, a[mt], bl0, bl1);
#pragma unroll
        for (int i = 0; i < 4; i++)
          acc[mt][nt][i] += wdv[mt][i >> 1] * xdv[nt][i & 1] * (float)(ch[i] * 256 + cl[i]);
      }
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int mt = 0; mt < 2; mt++)
#pragma unroll
    for (int nt = 0; nt < WN; nt++)
      mma_store<true>(acc[mt][nt], EP, m0 + wm * 32 + mt * 16, gid, n0 + wn * (NTL / 2) + nt * 8 + tig * 2, 1.f, 1.f,
                      M, N, nout, Y, ldy, tok_row());
}

#define MM_ARGS                                                                                             \
  const i8 *__restrict__ W, const __half *__restrict__ wdc, int M, int mpad, int K, const i8 *__restrict__ Xh, \
      const i8 *__restrict__ Xl, const float *__restrict__ Xs, int N, int npad, float *__restrict__ Y, int ldy, \
      int nout
#define MM_INST(NAME, EP, NTL)                                                              \
  extern "C" __global__ void __launch_bounds__(128) NAME(MM_ARGS) {                         \
    mm_q8<EP, NTL>(W, wdc, M, mpad, K, Xh, Xl, Xs, N, npad, Y, ldy, nout);                 \
  }
MM_INST(mm_q8_store, EP_STORE, 64)
MM_INST(mm_q8_add, EP_ADD, 64)
MM_INST(mm_q8_swiglu, EP_SWIGLU, 64)
MM_INST(mm_q8_store_n32, EP_STORE, 32)
MM_INST(mm_q8_add_n32, EP_ADD, 32)
MM_INST(mm_q8_swiglu_n32, EP_SWIGLU, 32)
MM_INST(mm_q8_store_n16, EP_STORE, 16)
MM_INST(mm_q8_add_n16, EP_ADD, 16)
MM_INST(mm_q8_swiglu_n16, EP_SWIGLU, 16)

// mmv_q8: Y = W X^T for a few tokens with integer tensor cores, the weights
// streamed from global memory straight into registers (no shared memory
// tiles): a warp takes 16 rows (an m16n8k32 A operand) and the k-blocks
// ks, ks+KS, ... of them; the KS warps of a row tile split K and add their
// sums through shared memory. Each mma step is one Q8_0 block (k = 32):
// lane (gid, tig) loads the 8 bytes tig*8.. of the block of rows gid and
// gid+8, and of the activation planes of token gid of each 8-token n-tile;
// the k order inside the block is permuted the same way for A and B (a dot
// product does not care), which makes every load a contiguous 32-byte
// sector per row. Activations as for mm_q8 (hi/lo int8 planes [npad][K],
// scales block-major [K/32][npad], from quant_act); NT n-tiles (8*NT
// tokens) per pass, more tokens in further passes (the weights then come
// from L2). Epilogues as mm_q8's (SWIGLU: rows gid and gid+8 of a 16-row
// group are a gate row and its up row, in the same thread). 256 threads;
// grid (16-row tiles / (8/KS), Y): block y takes the passes y, y+Y, ...,
// so that a matrix of few row tiles (a small model's O and down) can
// spread its tokens over more SMs, each pass's weights read by Y blocks
// at about the same time (the later ones from L2).
template <int EP, int NT, int KS, bool XL>
__device__ __forceinline__ void mmv_q8(const i8* __restrict__ W, const __half* __restrict__ wdc, int M, int mpad,
                                       int K, const i8* __restrict__ Xh, const i8* __restrict__ Xl,
                                       const float* __restrict__ Xs, int N, int npad, float* __restrict__ Y,
                                       int ldy, int nout) {
  constexpr int TPB = 8 / KS;  // row tiles per block
  constexpr int U = 4;         // k-blocks per load group
  __shared__ float red[KS > 1 ? 8 : 1][NT * 4][32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int gid = lane >> 2, tig = lane & 3;
  const int ks = warp % KS;
  const int m0 = (blockIdx.x * TPB + warp / KS) * 16;
  const bool live = m0 < mpad;
  const int nkb = K >> 5;
  const i8* w0 = W + (size_t)(live ? m0 + gid : 0) * K + tig * 8;
  const i8* w1 = w0 + (size_t)8 * K;
  const __half* wd = wdc + (live ? m0 : 0) + gid;

  for (int n0 = blockIdx.y * NT * 8; n0 < N; n0 += gridDim.y * NT * 8) {
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int i = 0; i < 4; i++) acc[j][i] = 0.f;
    int2 wa[2][U], wb[2][U];
    float da[2][U], db[2][U];
    auto load = [&](int b, int kb0) {
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int kb = kb0 + u * KS;
        if (live && kb < nkb) {
          wa[b][u] = __ldg((const int2*)(w0 + kb * 32));
          wb[b][u] = __ldg((const int2*)(w1 + kb * 32));
          da[b][u] = __half2float(wd[(size_t)kb * mpad]);
          db[b][u] = __half2float(wd[(size_t)kb * mpad + 8]);
        } else {
          wa[b][u] = wb[b][u] = make_int2(0, 0);
          da[b][u] = db[b][u] = 0.f;
        }
      }
    };
    auto compute = [&](int b, int kb0) {
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int kb = kb0 + u * KS;
        if (kb < nkb) {
          // Every n-tile's activations first (NT loads in flight), then the products.
          int2 xh[NT], xl[NT];
          float2 xs[NT];
#pragma unroll
          for (int j = 0; j < NT; j++) {
            if (XL) {  // quant_actv's layout: the lane's hi and lo bytes in one 16-byte load
              const int4 v = *(const int4*)(Xh + ((size_t)kb * npad + n0 + j * 8 + gid) * 64 + tig * 16);
              xh[j] = make_int2(v.x, v.y);
              xl[j] = make_int2(v.z, v.w);
            } else {
              const size_t xo = (size_t)(n0 + j * 8 + gid) * K + kb * 32 + tig * 8;
              xh[j] = *(const int2*)(Xh + xo);
              xl[j] = *(const int2*)(Xl + xo);
            }
            xs[j] = *(const float2*)(Xs + (size_t)kb * npad + n0 + j * 8 + tig * 2);
          }
          const int a[4] = {wa[b][u].x, wb[b][u].x, wa[b][u].y, wb[b][u].y};
          const float s0 = da[b][u], s1 = db[b][u];
#pragma unroll
          for (int j = 0; j < NT; j++) {
            int ch[4], cl[4];
            mma_s8n(ch, a, xh[j].x, xh[j].y);
            mma_s8n(cl, a, xl[j].x, xl[j].y);
            acc[j][0] += s0 * xs[j].x * (float)(ch[0] * 256 + cl[0]);
            acc[j][1] += s0 * xs[j].y * (float)(ch[1] * 256 + cl[1]);
            acc[j][2] += s1 * xs[j].x * (float)(ch[2] * 256 + cl[2]);
            acc[j][3] += s1 * xs[j].y * (float)(ch[3] * 256 + cl[3]);
          }
        }
      }
    };
    load(0, ks);
    for (int kb0 = ks; kb0 < nkb; kb0 += 2 * KS * U) {
      load(1, kb0 + KS * U);
      compute(0, kb0);
      load(0, kb0 + 2 * KS * U);
      compute(1, kb0 + KS * U);
    }
    if (KS > 1) {
#pragma unroll
      for (int j = 0; j < NT; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) red[warp][j * 4 + i][lane] = acc[j][i];
      __syncthreads();
      if (ks == 0) {
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
          for (int i = 0; i < 4; i++)
#pragma unroll
            for (int s = 1; s < KS; s++) acc[j][i] += red[warp + s][j * 4 + i][lane];
      }
      __syncthreads();
    }
    if (ks == 0 && live) {
#pragma unroll
      for (int j = 0; j < NT; j++)
        mma_store<true>(acc[j], EP, m0, gid, n0 + j * 8 + tig * 2, 1.f, 1.f, M, N, nout, Y, ldy, tok_row());
    }
  }
}

// mmv_q8_* read quant_act's planes; mmv_q8x_* quant_actv's interleaved
// layout (Xh: the planes, Xl unused), which makes a warp's activation
// loads contiguous (512 bytes an n-tile instead of eight 32-byte pieces).
#define MMV_INST(PRE, EPN, EP, NT, KS, XL)                                                             \
  extern "C" __global__ void __launch_bounds__(256) PRE##_##EPN##_n##NT##_k##KS(MM_ARGS) {             \
    mmv_q8<EP, NT, KS, XL>(W, wdc, M, mpad, K, Xh, Xl, Xs, N, npad, Y, ldy, nout);                     \
  }
#define MMV_INST3(NT)                                 \
  MMV_INST(mmv_q8, store, EP_STORE, NT, 8, false)     \
  MMV_INST(mmv_q8, add, EP_ADD, NT, 8, false)         \
  MMV_INST(mmv_q8, swiglu, EP_SWIGLU, NT, 8, false)   \
  MMV_INST(mmv_q8x, store, EP_STORE, NT, 8, true)     \
  MMV_INST(mmv_q8x, add, EP_ADD, NT, 8, true)         \
  MMV_INST(mmv_q8x, swiglu, EP_SWIGLU, NT, 8, true)
MMV_INST3(1)
MMV_INST3(2)
MMV_INST3(4)
MMV_INST3(8)

// ---------------------------------------------------------------- the block formats

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
template <>
struct qb<QT_MXFP4> { enum { M0 = 1, M1 = 0 }; };

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

// Activations of a stage: a token's 8 units of int8 quants (MQ_RS bytes),
// then its 8 scales and 16 sums of 16 at strides of mqv's SS and MS floats.
#define MQ_RS 272

// mqv: the two forms of mmq. V = 1 (mmq_<type>_*): warps of 16 rows (MT =
// 1 m-tile), every lane of a quad decoding its rows' scales from the unit
// it loaded; V = 2 (mmq2_<type>_*): warps of 32 rows (two m-tiles: each
// token fragment serves two mmas), each (row, unit)'s scales decoded once,
// by the row's lane, and passed to the quads' lanes by shuffles (SHUF),
// types whose values are a*(Q - OFF) adding a*(x*dot - OFF*sum) per
// sub-block, one product fewer (FOLD), the tokens' scales and sums at
// strides (SS, MS: 12 and 20 floats) that spread a quad's four tokens
// over distinct banks, one unit at a time (the registers of two units'
// fragments and scales never live at once). ns is the pipeline depth for
// BN tokens. quant.go's mmqKern.smem and red follow these.
template <int V>
struct mqv;
template <>
struct mqv<1> {
  static constexpr int MT = 1, SS = 8, MS = 16;
  static constexpr bool SHUF = false, FOLD = false;
  __host__ __device__ static constexpr int ns(int BN) { return BN >= 128 ? 3 : 4; }
};
template <>
struct mqv<2> {
  static constexpr int MT = 2, SS = 12, MS = 20;
  static constexpr bool SHUF = true, FOLD = true;
  __host__ __device__ static constexpr int ns(int BN) { return BN >= 64 ? 3 : 4; }
};

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
  } else if constexpr (T == QT_MXFP4) {
    q.m[0] = m[j];
  } else {
    const int4 v = *(const int4*)m;
    q.m[0] = v.x, q.m[1] = v.y, q.m[2] = v.z, q.m[3] = v.w;
  }
  static_assert(QK == 32 || QK == 256, "block size");
}

// mq_plane issues a weight plane's 16-byte chunks of a stage, CPR a row
// (a power of two), into rows RS bytes apart from dst0: thread tid takes
// chunks tid + 256*j (row c/CPR, chunk c%CPR). rowb: the plane's bytes a
// row; stageb: the stage's offset in a row.
template <int BM, int RS, int CPR>
__device__ __forceinline__ void mq_plane(unsigned char* w, int dst0, const uint8_t* __restrict__ plane, size_t rowb,
                                         int stageb, int r0, int mpad, int tid) {
  constexpr int N = BM * CPR;
#pragma unroll
  for (int j = 0; j < (N + 255) / 256; j++) {
    const int c = tid + 256 * j;
    if (N % 256 != 0 && c >= N) break;
    const int r = c / CPR, k = c % CPR, row = r0 + r;
    const bool ok = row < mpad;
    cp_async16z(w + r * RS + dst0 + k * 16, plane + (size_t)(ok ? row : 0) * rowb + stageb + k * 16, ok);
  }
}

// mmq: Y = W X^T for n tokens against qact8's int8 activations (xq, per-32
// scales xs and sums of 16 xsum: the terms mvq and mvqn compute, so the
// same products whatever the batch), with integer tensor cores (mma.sync
// m16n8k32 s8, or two m16n8k16 for types with scales per 16 values), in
// mqv<V>'s form. Per unit and (row, token): acc += a*s*dot(Q, q) + c'*sum(x)
// per sub-block (c' = c - a*OFF; FOLD: a*(s*dot(Q, q) - OFF*sum(x))), dot
// exact in integers. A block of 8 warps (TM teams of them) takes BM rows x
// BN tokens: warp w takes rows 16*MT*(w%WM).. (MT m-tiles) and, of each
// stage of 8 units (256 values of k), the units of k-group w/WM (WK =
// 8/WM groups); a team takes every TM-th stage, each its own NS slots.
// Stages come by cp.async, NS of them in flight: the weight planes' bytes
// as they are (mqw's layout; the lanes decode their fragments and scales
// from there: q_load_s, q_word, q_ac) and the activations (their 16-byte
// chunks unswizzled, qsw), each thread's copies at addresses fixed but for
// the stage's offset. The k-groups' partial sums (TM*WK of them) meet in
// shared memory, and every warp adds a share of the tile's outputs over
// the groups in group order. K is a multiple of 256; rows past mpad read
// as zeros. Epilogues as mmh's; Y is token-major.
template <int T, int V, int BM, int BN, int TM>
__device__ __forceinline__ void mmq(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                    const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int M, int mpad,
                                    int K, const i8* __restrict__ xq, const float* __restrict__ xs,
                                    const float* __restrict__ xsum, int n, float* __restrict__ Y, int ldy, int nout,
                                    int ep) {
  using C = mqv<V>;
  constexpr int MT = C::MT, SS = C::SS, MS = C::MS, XB = MQ_RS + 4 * SS + 4 * MS;
  constexpr int WM = BM / (16 * MT), WK = 8 / WM, UPW = 8 / WK, NT = BN / 8, NS = C::ns(BN);
  constexpr int QK = qt<T>::QK, LOB = mqw<T>::LOB, HIB = mqw<T>::HIB, M0S = mqw<T>::M0S, M0P = mqw<T>::M0P;
  constexpr int RS = mqw<T>::RS, STAGE = BM * RS + BN * XB;
  constexpr bool SUMS = qt<T>::HASC || qt<T>::OFF != 0;
  constexpr bool FOLD = C::FOLD && !qt<T>::HASC && qt<T>::OFF != 0;
  constexpr int NH = qt<T>::SUB == 16 ? 2 : 1;  // scales a unit
  static_assert(WM * WK == 8 && NT >= 1 && (LOB + HIB) % 16 == 0 && (!C::SHUF || MT == 2), "tile shape");
  extern __shared__ __align__(16) unsigned char smem[];
  // tid and warp are the thread's and warp's within its team.
  const int team = TM > 1 ? (int)(threadIdx.x >> 8) : 0;
  const int tid = threadIdx.x & 255, warp = tid >> 5, lane = tid & 31;
  unsigned char* sb = smem + team * NS * STAGE;
  const int gid = lane >> 2, tig = lane & 3;
  const int wm = warp % WM, wk = warp / WM;
  const int r0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int NU = K >> 5;
  const int ns = K >> 8;
  const int bpr = K / QK;  // blocks a row

  auto W = [&](int slot) { return sb + slot * STAGE; };
  auto Xq = [&](int slot) { return sb + slot * STAGE + BM * RS; };
  auto Xs = [&](int slot) { return (float*)(sb + slot * STAGE + BM * RS + BN * MQ_RS); };
  auto Xm = [&](int slot) { return (float*)(sb + slot * STAGE + BM * RS + BN * (MQ_RS + 4 * SS)); };

  auto issueW = [&](int s, int slot) {
    unsigned char* w = W(slot);
    mq_plane<BM, RS, LOB / 16>(w, 0, lo, (size_t)K * qt<T>::LO / 8, s * 32 * qt<T>::LO, r0, mpad, tid);
    if constexpr (HIB > 0)
      mq_plane<BM, RS, HIB / 16>(w, LOB, hi, (size_t)K * qt<T>::HI / 8, s * 32 * qt<T>::HI, r0, mpad, tid);
    if constexpr (M0S >= 16)
      mq_plane<BM, RS, M0S / 16>(w, LOB + HIB, m0, (size_t)bpr * qb<T>::M0, s * (256 / QK) * qb<T>::M0, r0, mpad,
                                 tid);
    if constexpr (M0S < 16 || qb<T>::M1 != 0) {
      // The stage's first block (M0S = 8: IQ4_XS's one block, MXFP4's 8
      // exponents, 8-byte aligned as K is a multiple of 256).
      for (int r = tid; r < BM; r += 256) {
        const int row = r0 + r;
        const bool ok = row < mpad;
        const size_t blk = (ok ? (size_t)row : 0) * bpr + s * (256 / QK);
        if constexpr (M0S < 16) cp_async8z(w + r * RS + LOB + HIB, m0 + blk * qb<T>::M0, ok);
        if constexpr (qb<T>::M1 == 4) cp_async4z(w + r * RS + LOB + HIB + M0P, m1 + blk * 4, ok);
        if constexpr (qb<T>::M1 == 2) cp_async4z(w + r * RS + LOB + HIB + M0P, m1 + (blk * 2 & ~(size_t)3), ok);
      }
    }
  };
  // The activations: 16 chunks of quants a token (thread tid: chunk
  // tid%16 of every 16th token from tid/16; qsw of the global chunk 16s + k
  // is 16s + qsw(k)), 2 of scales and 4 of sums.
  const int xk = tid & 15, xr = tid >> 4;
  const i8* xqp = xq + (size_t)(n0 + xr) * K + xk * 16;
  const int xdq = xr * MQ_RS + qsw(xk) * 16;
  auto issueX = [&](int s, int slot) {
    unsigned char* xb = Xq(slot) + xdq;
#pragma unroll
    for (int j = 0; j < BN / 16; j++) {
      const bool ok = n0 + xr + 16 * j < n;
      cp_async16z(xb + j * 16 * MQ_RS, ok ? xqp + (size_t)j * 16 * K + s * 256 : xq, ok);
    }
#pragma unroll
    for (int j = 0; j < (BN * 2 + 255) / 256; j++) {
      const int c = tid + 256 * j;
      if (BN * 2 % 256 != 0 && c >= BN * 2) break;
      const int r = c >> 1, k = c & 1, t = n0 + r;
      const bool ok = t < n;
      cp_async16z(Xs(slot) + r * SS + k * 4, xs + (ok ? (size_t)t * NU + s * 8 + k * 4 : 0), ok);
    }
#pragma unroll
    for (int j = 0; j < (BN * 4 + 255) / 256; j++) {
      const int c = tid + 256 * j;
      if (BN * 4 % 256 != 0 && c >= BN * 4) break;
      const int r = c >> 2, k = c & 3, t = n0 + r;
      const bool ok = t < n;
      cp_async16z(Xm(slot) + r * MS + k * 4, xsum + (ok ? (size_t)t * 2 * NU + s * 16 + k * 4 : 0), ok);
    }
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int mt = 0; mt < MT; mt++)
#pragma unroll
    for (int j = 0; j < NT; j++) acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = 0.f;

  PDL_LAUNCH();
#pragma unroll
  for (int st = 0; st < NS - 1; st++)
    if (st * TM + team < ns) issueW(st * TM + team, st);
  PDL_WAIT();
#pragma unroll
  for (int st = 0; st < NS - 1; st++) {
    if (st * TM + team < ns) issueX(st * TM + team, st);
    cp_async_commit();
  }
  // The first row of the warp's and, with SHUF, the row this lane decodes
  // the scales of (Q6_K: the parity of a row's blocks, its d in the low or
  // high half of m1's 4-byte word).
  const int rw = r0 + wm * 16 * MT;
  const int rowl = rw + lane;
  const int ni = (ns + TM - 1) / TM;
  for (int i = 0; i < ni; i++) {
    cp_async_wait_m<NS - 2>();
    __syncthreads();
    if ((i + NS - 1) * TM + team < ns) {
      issueW((i + NS - 1) * TM + team, (i + NS - 1) % NS);
      issueX((i + NS - 1) * TM + team, (i + NS - 1) % NS);
    }
    cp_async_commit();
    const int s = i * TM + team;
    if (TM > 1 && s >= ns) continue;  // the last stage's other team
    const int slot = i % NS;
    const unsigned char* wa = W(slot) + (wm * 16 * MT + gid) * RS;
    const unsigned char* xqb = Xq(slot) + gid * MQ_RS;
    const float* xsb = Xs(slot);
    const float* xmb = Xm(slot);
    auto odd = [&](int row) { return (int)(((size_t)row * bpr + s) & 1); };
    const int oddl = C::SHUF ? odd(rowl) : 0;
#pragma unroll (C::SHUF ? 1 : UPW)
    for (int ui = 0; ui < UPW; ui++) {
      const int u = wk * UPW + ui;
      // Rows gid + 8*i of the warp's 16*MT: a[i][h] and c'[i][h] (c - a*OFF)
      // of sub-block h, and the mma fragments of its m-tiles.
      float ar[2 * MT][2], cr[2 * MT][2];
      if constexpr (C::SHUF) {
        // This lane's row's scales.
        float al[2], cl[2];
        {
          qunit q;
          q_zero(q);
          q_load_s<T>(q, W(slot) + (wm * 16 * MT + lane) * RS, u, 0, oddl);
          q_ac<T>(q, u, al, cl);
#pragma unroll
          for (int h = 0; h < 2; h++) cl[h] -= al[h] * (float)qt<T>::OFF;
        }
#pragma unroll
        for (int i = 0; i < 2 * MT; i++)
#pragma unroll
          for (int h = 0; h < NH; h++) {
            ar[i][h] = __shfl_sync(0xffffffffu, al[h], gid + 8 * i);
            if constexpr (qt<T>::HASC)
              cr[i][h] = __shfl_sync(0xffffffffu, cl[h], gid + 8 * i);
            else
              cr[i][h] = 0.f - ar[i][h] * (float)qt<T>::OFF;
          }
      }
      int a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        qunit qa, qb2;
        q_zero(qa);
        q_zero(qb2);
        const int ra = rw + 16 * mt + gid;
        q_load_s<T>(qa, wa + 16 * mt * RS, u, tig, C::SHUF ? 0 : odd(ra));
        q_load_s<T>(qb2, wa + (16 * mt + 8) * RS, u, tig, C::SHUF ? 0 : odd(ra + 8));
        a[mt][0] = q_word<T>(qa, 0);
        a[mt][1] = q_word<T>(qb2, 0);
        a[mt][2] = q_word<T>(qa, 4);
        a[mt][3] = q_word<T>(qb2, 4);
        if constexpr (!C::SHUF) {
          q_ac<T>(qa, u, ar[2 * mt], cr[2 * mt]);
          q_ac<T>(qb2, u, ar[2 * mt + 1], cr[2 * mt + 1]);
#pragma unroll
          for (int h = 0; h < 2; h++) {
            cr[2 * mt][h] -= ar[2 * mt][h] * (float)qt<T>::OFF;
            cr[2 * mt + 1][h] -= ar[2 * mt + 1][h] * (float)qt<T>::OFF;
          }
        }
      }
#pragma unroll
      for (int nt = 0; nt < NT; nt++) {
        const unsigned char* xb = xqb + nt * 8 * MQ_RS + u * 32;
        const int b0 = *(const int*)(xb + tig * 4), b1 = *(const int*)(xb + 16 + tig * 4);
        const int t0 = nt * 8 + 2 * tig;
        const float x0 = xsb[t0 * SS + u], x1 = xsb[(t0 + 1) * SS + u];
        float2 m0v = make_float2(0.f, 0.f), m1v = make_float2(0.f, 0.f);
        if constexpr (SUMS) {
          m0v = *(const float2*)(xmb + t0 * MS + 2 * u);
          m1v = *(const float2*)(xmb + (t0 + 1) * MS + 2 * u);
        }
        // FOLD: OFF*sum per sub-block (exact, a token's).
        float o0[2], o1[2];
        if constexpr (FOLD && qt<T>::SUB == 32) {
          o0[0] = (float)qt<T>::OFF * (m0v.x + m0v.y);
          o1[0] = (float)qt<T>::OFF * (m1v.x + m1v.y);
        } else if constexpr (FOLD) {
          o0[0] = (float)qt<T>::OFF * m0v.x, o0[1] = (float)qt<T>::OFF * m0v.y;
          o1[0] = (float)qt<T>::OFF * m1v.x, o1[1] = (float)qt<T>::OFF * m1v.y;
        }
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
          const float* aa = ar[2 * mt];
          const float* ab = ar[2 * mt + 1];
          const float* ca = cr[2 * mt];
          const float* cb = cr[2 * mt + 1];
          float* c = acc[mt][nt];
          if constexpr (qt<T>::SUB == 32) {
            int d[4];
            qmma_k32(d, a[mt], b0, b1);
            if constexpr (FOLD) {
              c[0] += aa[0] * (x0 * mq_f(d[0]) - o0[0]);
              c[1] += aa[0] * (x1 * mq_f(d[1]) - o1[0]);
              c[2] += ab[0] * (x0 * mq_f(d[2]) - o0[0]);
              c[3] += ab[0] * (x1 * mq_f(d[3]) - o1[0]);
            } else {
              c[0] += aa[0] * x0 * mq_f(d[0]);
              c[1] += aa[0] * x1 * mq_f(d[1]);
              c[2] += ab[0] * x0 * mq_f(d[2]);
              c[3] += ab[0] * x1 * mq_f(d[3]);
            }
            if constexpr (SUMS && !FOLD) {
              const float s0 = m0v.x + m0v.y, s1 = m1v.x + m1v.y;
              c[0] += ca[0] * s0;
              c[1] += ca[0] * s1;
              c[2] += cb[0] * s0;
              c[3] += cb[0] * s1;
            }
          } else {
            int d0[4], d1[4];
            qmma_k16(d0, a[mt][0], a[mt][1], b0);
            qmma_k16(d1, a[mt][2], a[mt][3], b1);
            if constexpr (FOLD) {
#pragma unroll
              for (int h = 0; h < 2; h++) {
                const int* dh = h ? d1 : d0;
                c[0] += aa[h] * (x0 * mq_f(dh[0]) - o0[h]);
                c[1] += aa[h] * (x1 * mq_f(dh[1]) - o1[h]);
                c[2] += ab[h] * (x0 * mq_f(dh[2]) - o0[h]);
                c[3] += ab[h] * (x1 * mq_f(dh[3]) - o1[h]);
              }
            } else {
              c[0] += x0 * (aa[0] * mq_f(d0[0]) + aa[1] * mq_f(d1[0]));
              c[1] += x1 * (aa[0] * mq_f(d0[1]) + aa[1] * mq_f(d1[1]));
              c[2] += x0 * (ab[0] * mq_f(d0[2]) + ab[1] * mq_f(d1[2]));
              c[3] += x1 * (ab[0] * mq_f(d0[3]) + ab[1] * mq_f(d1[3]));
            }
            if constexpr (SUMS && !FOLD) {
              c[0] += ca[0] * m0v.x + ca[1] * m0v.y;
              c[1] += ca[0] * m1v.x + ca[1] * m1v.y;
              c[2] += cb[0] * m0v.x + cb[1] * m0v.y;
              c[3] += cb[0] * m1v.x + cb[1] * m1v.y;
            }
          }
        }
      }
    }
  }
  cp_async_wait_m<0>();
  __syncthreads();

  // The k-groups' partial sums (G = TM*WK groups, team-major): every warp
  // stores its own; warp (wm, group g) then adds, in group order, the
  // outputs e (m-tile e/NT, token tile e%NT) with e % G == g and writes them.
  constexpr int E = MT * NT, G = TM * WK;
  const int gk = team * WK + wk;
  float* red = (float*)smem;
  auto ri = [&](int g, int e, int i) { return (((g * WM + wm) * E + e) * 4 + i) * 32 + lane; };
  if constexpr (G > 1) {
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
      for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++) red[ri(gk, mt * NT + nt, i)] = acc[mt][nt][i];
    __syncthreads();
  }
#pragma unroll
  for (int e = 0; e < E; e++) {
    if (e % G != gk) continue;
    const int mt = e / NT, nt = e % NT;
    float c[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
      if constexpr (G > 1) {
        float v = red[ri(0, e, i)];
#pragma unroll
        for (int g = 1; g < G; g++) v += red[ri(g, e, i)];
        c[i] = v;
      } else {
        c[i] = acc[mt][nt][i];
      }
    }
    mma_store<false>(c, ep, rw + mt * 16, gid, n0 + nt * 8 + 2 * tig, 1.f, 1.f, M, n, nout, Y, ldy, tok_row());
  }
}

#define MMQ_ARGS                                                                                          \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0,     \
      const uint8_t *__restrict__ m1, int M, int mpad, int K, const i8 *__restrict__ xq,                \
      const float *__restrict__ xs, const float *__restrict__ xsum, int n, float *__restrict__ Y, int ldy, \
      int nout, int ep
// mmq_: 256 threads. mmq2_: two blocks an SM where the registers allow
// (up to 64 tokens); _w16: two teams of 8 warps (512 threads, one block an
// SM), for grids of at most a block an SM.
#define MMQ_ONE(NAME, T, BM, BN)                                                                          \
  extern "C" __global__ void __launch_bounds__(256) mmq_##NAME##_m##BM##_n##BN(MMQ_ARGS) {                \
    mmq<T, 1, BM, BN, 1>(lo, hi, m0, m1, M, mpad, K, xq, xs, xsum, n, Y, ldy, nout, ep);                    \
  }                                                                                                       \
  extern "C" __global__ void __launch_bounds__(256, (BN) <= 64 ? 2 : 1) mmq2_##NAME##_m##BM##_n##BN(MMQ_ARGS) { \
    mmq<T, 2, BM, BN, 1>(lo, hi, m0, m1, M, mpad, K, xq, xs, xsum, n, Y, ldy, nout, ep);                    \
  }
#define MMQ2_W16(NAME, T, BN)                                                                       \
  extern "C" __global__ void __launch_bounds__(512, 1) mmq2_##NAME##_m32_n##BN##_w16(MMQ_ARGS) {  \
    mmq<T, 2, 32, BN, 2>(lo, hi, m0, m1, M, mpad, K, xq, xs, xsum, n, Y, ldy, nout, ep);           \
  }
// Tiles: 32 rows by 16, 32, 64 or 128 tokens, and 64 rows by 64 or 128
// (fewer blocks, the activations read fewer times); quant.go's mmqTiles.
#define MMQ_INST(NAME, T)   \
  MMQ_ONE(NAME, T, 32, 16)  \
  MMQ_ONE(NAME, T, 32, 32)  \
  MMQ_ONE(NAME, T, 32, 64)  \
  MMQ_ONE(NAME, T, 32, 128) \
  MMQ_ONE(NAME, T, 64, 64)  \
  MMQ_ONE(NAME, T, 64, 128) \
  MMQ2_W16(NAME, T, 16)     \
  MMQ2_W16(NAME, T, 32)     \
  MMQ2_W16(NAME, T, 64)
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
MMQ_INST(mxfp4, QT_MXFP4)
