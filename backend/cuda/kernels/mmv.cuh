// mmv.cuh: the matrix-vector products over float weights (F16, BF16, F32;
// backend/cuda/half.go; included by kernels.cu after mmvq.cuh), in the
// row-tile scheme of the quantized ones (common.cuh's mv_tiles):
//   mvh_<type>     decode matrix-vector (one token): f32 activations
//                  (rmsnorm*gain in shared memory), every epilogue
//   mvhn_<type>    up to 8 tokens a block (blockIdx.y: the group of 8),
//   mvhn4_<type>   one weight pass for them, f16 activations from qact_h
//                  (mvhn4: 4 warps a row pair, for matrices of few rows)
// Their products of more tokens, mmw_<type>_*, are in mmh.cuh.

// mvh_load loads round `round` of a warp's RPW rows of float type E (16
// bytes, ht<E>::V16 values, a chunk): of row rowOf(r), chunks c0 + (round*U
// + i)*32 + lane, i < U (U a lane), zero from chunk c1 on, past rows, or
// unless tile < ntiles.
template <int E, int RPW, int U, class RowOf>
__device__ __forceinline__ void mvh_load(int4 (&w)[U][RPW], const uint8_t* W, RowOf rowOf, int rows, int K, int c0,
                                         int c1, int round, int tile, int ntiles) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int r = 0; r < RPW; r++) {
    const int row = rowOf(r);
#pragma unroll
    for (int i = 0; i < U; i++) {
      const int c = c0 + (round * U + i) * 32 + lane;
      w[i][r] = make_int4(0, 0, 0, 0);
      if (c < c1 && row < rows && tile < ntiles)
        w[i][r] = ldg_nc16(W + ((size_t)row * K + (size_t)c * ht<E>::V16) * ht<E>::BYTES);
    }
  }
}

// ---------------------------------------------------------------- decode matvec (one token)

// mvh: y = W * rmsnorm(x)*gain (or W * x when gain is null) for one token,
// W of float type E. Blocks of 8 warps loop over tiles of 8 row groups (a
// persistent grid, as mvq); a warp takes RPW = 2 rows of a tile (SwiGLU: a
// gate row and its up row, 8 apart in the interleaved matrix), its lanes
// 16-byte chunks of the rows, U chunks a row and lane in flight. x comes
// to shared memory in f32 once a block (dynamic shared memory: 4K bytes).
// Epilogues (ep) as mvq's: store, add, SwiGLU, argmax (per-block partials).
template <int E, int U>
__device__ __forceinline__ void mvh(const uint8_t* __restrict__ W, int rows, int K, const float* __restrict__ x,
                                    const float* __restrict__ gain, float eps, float* __restrict__ y, int nout,
                                    float* __restrict__ pval, int* __restrict__ pidx, int ep) {
  constexpr int RPW = 2, V = ht<E>::V16;
  extern __shared__ __align__(16) unsigned char smem[];
  float* xs = (float*)smem;
  __shared__ double red[32];

  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int NC = K / V;  // chunks a row
  const bool sw = ep_glu(ep);
  const int ntiles = (mv_units(rows, RPW, sw) + 7) / 8;
  auto rowOf = [&](int tile, int r) -> int { return mv_row(tile * 8 + warp, r, RPW, sw); };
  int4 w[U][RPW];
  auto load = [&](int tile, int round) {
    mvh_load<E>(w, W, [&](int r) { return rowOf(tile, r); }, rows, K, 0, NC, round, tile, ntiles);
  };
  const int rounds = (NC + 32 * U - 1) / (32 * U);
  int tile = blockIdx.x;
  load(tile, 0);
  PDL_WAIT();
  const float scale = gain ? rms_scale(x, K, eps, red) : 1.f;
  for (int i = threadIdx.x; i < (K >> 2); i += blockDim.x) {
    float4 v = ((const float4*)x)[i];
    if (gain) {
      const float4 g = ((const float4*)gain)[i];
      v = make_float4(v.x * scale * g.x, v.y * scale * g.y, v.z * scale * g.z, v.w * scale * g.w);
    }
    ((float4*)xs)[i] = v;
  }
  __syncthreads();

  float best = NAN;
  int besti = 0x7fffffff;
  mv_tiles<RPW>(
      tile, ntiles, rounds, load,
      [&](int round, float (&acc)[RPW]) {
#pragma unroll
        for (int i = 0; i < U; i++) {
          const int c = (round * U + i) * 32 + lane;
          if (c < NC) {
            float xv[V];
#pragma unroll
            for (int j = 0; j < V; j += 4) {
              const float4 a = *(const float4*)(xs + c * V + j);
              xv[j] = a.x, xv[j + 1] = a.y, xv[j + 2] = a.z, xv[j + 3] = a.w;
            }
#pragma unroll
            for (int r = 0; r < RPW; r++) {
              float wv[V];
              h_cvt16<E>(w[i][r], wv);
#pragma unroll
              for (int j = 0; j < V; j++) acc[r] = fmaf(wv[j], xv[j], acc[r]);
            }
          }
        }
      },
      [&](int cur, const float (&acc)[RPW]) {
        mv_epilogue<RPW, true>(acc, ep, cur * 8 + warp, rows, nout, y, 1.f, &best, &besti);
      });
  if (ep == EP_ARGMAX) argmax_partial<8>(best, besti, pval, pidx);
}

// ---------------------------------------------------------------- small batches: one weight pass for up to 8 tokens

// mvhn: Y[t*ldy + r] = W x_t for the tokens 8*blockIdx.y.. (at most 8 of
// n) of qact_h's f16 activations X (token t scaled by 1/sx[t]), mvh's
// scheme otherwise (persistent grid over the row tiles, 2 rows a warp, U
// chunks in flight), but KS warps share a row pair, each taking a
// contiguous KS-th of its chunks (partial sums added in shared memory):
// a tile is 8/KS row pairs, so that matrices of few rows still fill the
// GPU. The activations are read through the L1 cache, the same for every
// warp, and the groups of 8 tokens of one tile share its weights through
// the L2 cache. Epilogues store, add and SwiGLU as mmh's.
template <int E, int U, int KS>
__device__ __forceinline__ void mvhn(const uint8_t* __restrict__ W, int rows, int K, const __half* __restrict__ X,
                                     const float* __restrict__ sx, int n, float* __restrict__ Y, int ldy, int nout,
                                     int ep) {
  constexpr int RPW = 2, NT = 8, V = ht<E>::V16, G = 8 / KS;
  __shared__ float part[KS > 1 ? 8 : 1][RPW][NT];
  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int grp = warp / KS, sl = warp % KS;
  const int t0 = blockIdx.y * NT, nt = min(NT, n - t0);
  const int NC = K / V, CS = (NC + KS - 1) / KS;  // chunks a row, a slice
  const int c0 = sl * CS, c1 = min(NC, c0 + CS);
  const bool sw = ep_glu(ep);
  const int ntiles = (mv_units(rows, RPW, sw) + G - 1) / G;
  auto rowOf = [&](int tile, int r) -> int { return mv_row(tile * G + grp, r, RPW, sw); };
  int4 w[U][RPW];
  auto load = [&](int tile, int round) {
    mvh_load<E>(w, W, [&](int r) { return rowOf(tile, r); }, rows, K, c0, c1, round, tile, ntiles);
  };
  const int rounds = (CS + 32 * U - 1) / (32 * U);
  int tile = blockIdx.x;
  load(tile, 0);
  PDL_WAIT();
  for (; tile < ntiles; tile += gridDim.x) {
    float acc[RPW][NT];
#pragma unroll
    for (int r = 0; r < RPW; r++)
#pragma unroll
      for (int t = 0; t < NT; t++) acc[r][t] = 0.f;
    for (int round = 0; round < rounds; round++) {
      if (round > 0) load(tile, round);
#pragma unroll
      for (int i = 0; i < U; i++) {
        const int c = c0 + (round * U + i) * 32 + lane;
        if (c < c1) {
          float wv[RPW][V];
#pragma unroll
          for (int r = 0; r < RPW; r++) h_cvt16<E>(w[i][r], wv[r]);
#pragma unroll
          for (int t = 0; t < NT; t++) {
            if (t < nt) {
              const __half* xp = X + (size_t)(t0 + t) * K + (size_t)c * V;
              float xv[V];
              if constexpr (V == 8) {
                const int4 a = __ldg((const int4*)xp);
                h_cvt16<HT_F16>(a, xv);
              } else {
                const int2 a = __ldg((const int2*)xp);
                const float2 f0 = __half22float2(*(const __half2*)&a.x), f1 = __half22float2(*(const __half2*)&a.y);
                xv[0] = f0.x, xv[1] = f0.y, xv[2] = f1.x, xv[3] = f1.y;
              }
#pragma unroll
              for (int r = 0; r < RPW; r++)
#pragma unroll
                for (int j = 0; j < V; j++) acc[r][t] = fmaf(wv[r][j], xv[j], acc[r][t]);
            }
          }
        }
      }
    }
    const int cur = tile;
    if (tile + (int)gridDim.x < ntiles) load(tile + gridDim.x, 0);
#pragma unroll
    for (int r = 0; r < RPW; r++)
#pragma unroll
      for (int t = 0; t < NT; t++) acc[r][t] = warp_sum(acc[r][t]);
    if constexpr (KS > 1) {
      if (lane == 0)
#pragma unroll
        for (int r = 0; r < RPW; r++)
#pragma unroll
          for (int t = 0; t < NT; t++) part[warp][r][t] = acc[r][t];
      __syncthreads();
      if (sl == 0)
#pragma unroll
        for (int r = 0; r < RPW; r++)
#pragma unroll
          for (int t = 0; t < NT; t++) {
            float v = 0.f;
#pragma unroll
            for (int q = 0; q < KS; q++) v += part[warp + q][r][t];  // slices in order
            acc[r][t] = v;
          }
      __syncthreads();
    }
    if (sl == 0) {
#pragma unroll
      for (int t = 0; t < NT; t++) {
        if (t >= nt) break;
        const float a[RPW] = {acc[0][t], acc[1][t]};
        mv_epilogue<RPW, true>(a, ep, cur * G + grp, rows, nout, Y + (size_t)(t0 + t) * ldy, sx[t0 + t]);
      }
    }
  }
}

#define MVH_ARGS                                                                                      \
  const uint8_t *__restrict__ W, int rows, int K, const float *__restrict__ x,                        \
      const float *__restrict__ gain, float eps, float *__restrict__ y, int nout, float *__restrict__ pval, \
      int *__restrict__ pidx, int ep
#define MVHN_ARGS                                                                                  \
  const uint8_t *__restrict__ W, int rows, int K, const __half *__restrict__ X,                    \
      const float *__restrict__ sx, int n, float *__restrict__ Y, int ldy, int nout, int ep
#define MVH_INST(NAME, E, U)                                                                         \
  extern "C" __global__ void __launch_bounds__(256) mvh_##NAME(MVH_ARGS) {                           \
    mvh<E, U>(W, rows, K, x, gain, eps, y, nout, pval, pidx, ep);                                    \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) mvhn_##NAME(MVHN_ARGS) {                         \
    mvhn<E, U / 2, 1>(W, rows, K, X, sx, n, Y, ldy, nout, ep);                                       \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) mvhn4_##NAME(MVHN_ARGS) {                        \
    mvhn<E, U / 2, 4>(W, rows, K, X, sx, n, Y, ldy, nout, ep);                                       \
  }
MVH_INST(f16, HT_F16, 4)
MVH_INST(bf16, HT_BF16, 4)
MVH_INST(f32, HT_F32, 4)
