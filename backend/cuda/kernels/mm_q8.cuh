// Included by kernels.cu (its section: matmul, prefill).

// ================================================================ matmul (prefill): int8 tensor cores

// quant_act: per token (one block each), quantize x[t] (rmsnorm*gain when
// gain is not null) into planes hi[t*K..], lo[t*K..] and scales
// sx[b*npad + t] (block-major, as mm_q8 loads them).
extern "C" __global__ void __launch_bounds__(256) quant_act(const float* __restrict__ x, int K, int ldx,
                                                            const float* __restrict__ gain, float eps,
                                                            i8* __restrict__ hi, i8* __restrict__ lo,
                                                            float* __restrict__ sx, int npad) {
  __shared__ double red[32];
  const int t = blockIdx.x;
  const float* xt = x + (size_t)t * ldx;
  float scale = 1.f;
  if (gain) scale = rms_scale(xt, K, eps, red);
  quant_vec(xt, K, gain, scale, hi + (size_t)t * K, lo + (size_t)t * K, sx + t, npad);
}

__device__ __forceinline__ void mma_s8(int (&d)[4], const int (&a)[4], int b0, int b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0), "r"(0));
}

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
    for (int nt = 0; nt < WN; nt++) {
      const int rbase = m0 + wm * 32 + mt * 16;
      const int col = n0 + wn * (NTL / 2) + nt * 8 + tig * 2;
      if (EP == EP_SWIGLU) {
        const int o = (rbase >> 1) + gid;
#pragma unroll
        for (int i = 0; i < 2; i++) {
          const float g = acc[mt][nt][i], u = acc[mt][nt][i + 2];
          if (o < nout && col + i < N) Y[(size_t)(col + i) * ldy + o] = g / (1.f + expf(-g)) * u;
        }
      } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
          const int row = rbase + gid + (i >> 1) * 8;
          const int c = col + (i & 1);
          if (row < M && c < N) {
            if (EP == EP_ADD)
              Y[(size_t)c * ldy + row] += acc[mt][nt][i];
            else
              Y[(size_t)c * ldy + row] = acc[mt][nt][i];
          }
        }
      }
    }
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
