// Included by kernels.cu after quant_mm.cuh: Q8_0's own weights against f16 activations.

// ---------------------------------------------------------------- matrix-matrix: Q8_0 on f16 tensor cores

// mm_q8h: Y = W X^T for n tokens on f16 tensor cores (mma m16n8k16, f32
// accumulators) over Q8_0's own layout (mm_q8's: W int8 rows x K, rows
// padded to a multiple of 64; wdc its f16 scales block-major [K/32][mpad])
// and qact_h's activations (X f16 [n][K], sx the per-token power of two).
// The tiles and pipeline are mm_q8's (64 x NTL per block of 4 warps, each
// warp 32 x NTL/2, or with WMW = 4 (_w4) 16 x NTL: each weight turned f16
// by one warp, not two; one Q8_0 block a cp.async stage, 4 stages); where mm_q8
// multiplies int16 activations as two int8 planes and rescales every
// (row, token, block) sum, here each warp turns its weights into f16 once
// (q exactly, then times the block's scale: one rounding, as mmh's) and the
// sums run in f32 across all of K, scaled by the token's power of two at
// the end. Per output and block that is no conversion and no multiply, per
// weight a few half2 operations shared by the tile's tokens.
//
// A thread's 8 consecutive k of a block (k = 8*tig..8*tig+7) stand in for
// the mma fragments' k slots {2tig, 2tig+1, 2tig+8, 2tig+9} of the block's
// first k16 half and the same of its second; weights and activations are
// read with the same map, so each product sums every k once.
template <int EP, int NTL, int WMW>
__device__ __forceinline__ void mm_q8h(const i8* __restrict__ W, const __half* __restrict__ wdc, int M, int mpad,
                                       int K, const __half* __restrict__ X, const float* __restrict__ sx, int N,
                                       float* __restrict__ Y, int ldy, int nout) {
  constexpr int ST = 4;                    // stages
  constexpr int WNW = 4 / WMW;             // warps along the tokens
  constexpr int MT = 64 / WMW / 16;        // 16-row tiles a warp
  constexpr int WN = NTL / WNW / 8;        // 8-token n-tiles a warp
  static_assert(NTL == 64 || NTL == 32 || NTL == 16, "token tile");
  static_assert(WMW == 2 || WMW == 4, "warps along the rows");
  __shared__ __align__(16) i8 Ws[ST][64 * 32];
  __shared__ __align__(16) __half Xs[ST][NTL * 32];
  __shared__ __align__(16) __half Wd[ST][64];

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int gid = lane >> 2, tig = lane & 3;
  const int wm = warp % WMW, wn = warp / WMW;
  const int m0 = blockIdx.x * 64, n0 = blockIdx.y * NTL;
  const int nkb = K >> 5;

  PDL_LAUNCH();
  auto loadW = [&](int st, int kb) {
    const int row = tid >> 1, hf = (tid & 1) * 16;
    cp_async16(&Ws[st][row * 32 + hf], W + (size_t)(m0 + row) * K + kb * 32 + hf);
    if (tid < 8) cp_async16(&Wd[st][tid * 8], wdc + (size_t)kb * mpad + m0 + tid * 8);
  };
  auto loadX = [&](int st, int kb) {
    // NTL rows of 64 bytes: 4 chunks of 16 a row.
    constexpr int CH = NTL * 4;
#pragma unroll
    for (int i = 0; i < (CH + 127) / 128; i++) {
      const int c = tid + i * 128, r = c >> 2, t = n0 + r;
      const bool ok = t < N;
      if (CH % 128 == 0 || c < CH)
        cp_async16z(&Xs[st][r * 32 + (c & 3) * 8], X + (ok ? (size_t)t * K + kb * 32 + (c & 3) * 8 : 0), ok);
    }
  };

  float acc[MT][WN][4];
#pragma unroll
  for (int a = 0; a < MT; a++)
#pragma unroll
    for (int b = 0; b < WN; b++)
#pragma unroll
      for (int c = 0; c < 4; c++) acc[a][b][c] = 0.f;

  // The weights are no kernel's output: their first stages load before
  // the wait for the previous kernel (the activations' producer).
#pragma unroll
  for (int s = 0; s < ST - 1; s++)
    if (s < nkb) loadW(s, s);
  PDL_WAIT();
#pragma unroll
  for (int s = 0; s < ST - 1; s++) {
    if (s < nkb) loadX(s, s);
    cp_async_commit();
  }
  const __half2 off = __float2half2_rn(1152.f);  // 1024 + 128
  for (int kb = 0; kb < nkb; kb++) {
    cp_async_wait<ST - 2>();
    __syncthreads();
    if (kb + ST - 1 < nkb) {
      loadW((kb + ST - 1) % ST, kb + ST - 1);
      loadX((kb + ST - 1) % ST, kb + ST - 1);
    }
    cp_async_commit();
    const int st = kb % ST;
    // a[mt][j]: the A fragment of row tile mt and k16 half j.
    unsigned a[MT][2][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const int r = wm * (64 / WMW) + mt * 16 + gid;
#pragma unroll
      for (int h = 0; h < 2; h++) {  // rows r and r+8
        const uint2 w = *(const uint2*)&Ws[st][(r + 8 * h) * 32 + tig * 8];
        const __half2 d = __half2half2(Wd[st][r + 8 * h]);
        const unsigned wv[2] = {w.x ^ 0x80808080u, w.y ^ 0x80808080u};
#pragma unroll
        for (int j = 0; j < 2; j++) {
          const unsigned p0 = __byte_perm(wv[j], 0x64646464u, 0x4140), p1 = __byte_perm(wv[j], 0x64646464u, 0x4342);
          const __half2 v0 = __hmul2(__hsub2(*(const __half2*)&p0, off), d);
          const __half2 v1 = __hmul2(__hsub2(*(const __half2*)&p1, off), d);
          a[mt][j][h] = *(const unsigned*)&v0;      // slots 2tig, 2tig+1
          a[mt][j][h + 2] = *(const unsigned*)&v1;  // slots 2tig+8, 2tig+9
        }
      }
    }
#pragma unroll
    for (int nt = 0; nt < WN; nt++) {
      const int c = wn * (NTL / WNW) + nt * 8 + gid;
      const uint4 b = *(const uint4*)&Xs[st][c * 32 + tig * 8];
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        qmma16816(acc[mt][nt], a[mt][0], b.x, b.y);
        qmma16816(acc[mt][nt], a[mt][1], b.z, b.w);
      }
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int nt = 0; nt < WN; nt++) {
    const int col = n0 + wn * (NTL / WNW) + nt * 8 + tig * 2;
    const float s0 = col < N ? sx[col] : 0.f, s1 = col + 1 < N ? sx[col + 1] : 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const int rbase = m0 + wm * (64 / WMW) + mt * 16;
      const float* c = acc[mt][nt];
      if (EP == EP_SWIGLU) {
        const int o = (rbase >> 1) + gid;
#pragma unroll
        for (int i = 0; i < 2; i++) {
          const float s = i ? s1 : s0, g = c[i] * s, u = c[i + 2] * s;
          if (o < nout && col + i < N) Y[(size_t)(col + i) * ldy + o] = g / (1.f + expf(-g)) * u;
        }
      } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
          const int row = rbase + gid + (i >> 1) * 8;
          const int t = col + (i & 1);
          if (row < M && t < N) {
            const float v = c[i] * ((i & 1) ? s1 : s0);
            if (EP == EP_ADD)
              Y[(size_t)t * ldy + row] += v;
            else
              Y[(size_t)t * ldy + row] = v;
          }
        }
      }
    }
  }
}

#define MMQ8H_ARGS                                                                                     \
  const i8 *__restrict__ W, const __half *__restrict__ wdc, int M, int mpad, int K,                  \
      const __half *__restrict__ X, const float *__restrict__ sx, int N, float *__restrict__ Y, int ldy, \
      int nout
#define MMQ8H_INST(NAME, EP, NTL, WMW)                                     \
  extern "C" __global__ void __launch_bounds__(128) NAME(MMQ8H_ARGS) {     \
    mm_q8h<EP, NTL, WMW>(W, wdc, M, mpad, K, X, sx, N, Y, ldy, nout);     \
  }
#define MMQ8H_TILE(SUF, NTL)                                    \
  MMQ8H_INST(mm_q8h_store##SUF, EP_STORE, NTL, 2)               \
  MMQ8H_INST(mm_q8h_add##SUF, EP_ADD, NTL, 2)                   \
  MMQ8H_INST(mm_q8h_swiglu##SUF, EP_SWIGLU, NTL, 2)             \
  MMQ8H_INST(mm_q8h_store##SUF##_w4, EP_STORE, NTL, 4)          \
  MMQ8H_INST(mm_q8h_add##SUF##_w4, EP_ADD, NTL, 4)              \
  MMQ8H_INST(mm_q8h_swiglu##SUF##_w4, EP_SWIGLU, NTL, 4)
MMQ8H_TILE(, 64)
MMQ8H_TILE(_n32, 32)
MMQ8H_TILE(_n16, 16)
