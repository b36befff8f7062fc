// mmvq.cuh: the decode matrix-vector products over quantized weights (one
// token; included by kernels.cu after quantize.cuh): Q8_0's own layout
// against int16 activation planes (mv_q8) or float activations (mvf_q8),
// and the other block formats (mvq), with the products of up to 8 tokens
// in one weight pass (mvqn). They share the row-tile scheme of common.cuh
// (mv_row, mv_tiles, mv_epilogue): persistent blocks of 8 warps loop over
// tiles of rows, a warp a unit of RPW rows (SwiGLU: a gate row and its up
// row), the next tile's weights loaded before the current one's sums are
// reduced.

// ---------------------------------------------------------------- Q8_0, int16 activation planes, dp4a

// prologue_x loads x[0:K) (K a multiple of 32) into shared memory as the
// two int8 planes and per-32 scales, RMS-normalized and multiplied by gain
// when gain is not null. Up to K = 256*MAXI thread t holds elements t,
// t+256, ... in registers (block b of 32 is warp b%8's, pass b/8), so x is
// read once; wider inputs take two passes over global memory. 256 threads.
template <int MAXI>
__device__ __forceinline__ void prologue_x(const float* __restrict__ x, int K, const float* __restrict__ gain,
                                           float eps, i8* shi, i8* slo, float* ssx, float* red) {
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  if (K > 256 * MAXI) {  // wide inputs: two passes over global memory
    float scale = 1.f;
    if (gain) {
      float ss = 0.f;
      for (int i = tid; i < K; i += 256) {
        const float v = x[i];
        ss += v * v;
      }
      scale = rms_scale8(ss, K, eps, red);
    }
    for (int b = warp; b < (K >> 5); b += 8) {
      const int i = b * 32 + lane;
      float val = x[i];
      if (gain) val = val * scale * gain[i];
      const float a = q16(val, shi + i, slo + i);
      if (lane == 0) ssx[b] = a / QMAX;
    }
    return;
  }
  float v[MAXI], gv[MAXI];
#pragma unroll
  for (int it = 0; it < MAXI; it++) {
    const int i = it * 256 + tid;
    v[it] = i < K ? x[i] : 0.f;
    gv[it] = (gain && i < K) ? gain[i] : 0.f;
  }
  float scale = 1.f;
  if (gain) {
    float ss = 0.f;
#pragma unroll
    for (int it = 0; it < MAXI; it++) ss += v[it] * v[it];
    scale = rms_scale8(ss, K, eps, red);
  }
#pragma unroll
  for (int it = 0; it < MAXI; it++) {
    const int b = it * 8 + warp;
    if (b < (K >> 5)) {
      const int i = it * 256 + tid;
      float val = v[it];
      if (gain) val = val * scale * gv[it];
      const float a = q16(val, shi + i, slo + i);
      if (lane == 0) ssx[b] = a / QMAX;
    }
  }
}

// mv_q8: y = W * rmsnorm(x)*gain (or W * x when gain is null) for one token.
// Blocks of 8 warps loop over tiles of 8*RPW rows (a persistent grid: the
// activation prologue runs once per block); each warp takes RPW rows and
// keeps U = 8/RPW 16-byte loads per row and lane in flight, issuing the
// first tile's before waiting for the previous kernel and the next tile's
// before finishing the current one. Products are dp4a against the int8
// activation planes in shared memory. Epilogues, done by each warp:
//   EP_STORE  y[r] = v
//   EP_ADD    y[r] += v (residual)
//   EP_SWIGLU (RPW 2) the warp's rows are gate row i and up row i of a
//             16-row group (8 gate rows, then their 8 up rows); y[p] =
//             silu(gate)*up for pair p = 8*group+i < nout
//   EP_ARGMAX y[r] = v, and the block's best (value, row) to pval/pidx
// MAXI: prologue_x's registers (see there).
template <int EP, int RPW, int MAXI>
__device__ __forceinline__ void mv_q8(const i8* __restrict__ wq, const __half* __restrict__ wd, int rows, int K,
                                      const float* __restrict__ x, const float* __restrict__ gain, float eps,
                                      float* __restrict__ y, int nout, float* __restrict__ pval,
                                      int* __restrict__ pidx) {
  constexpr int U = 8 / RPW;
  constexpr int SPAN = 512 * U;  // bytes of a row per load round
  extern __shared__ __align__(16) unsigned char smem[];
  i8* shi = (i8*)smem;
  i8* slo = shi + K;
  float* ssx = (float*)(slo + K);
  __shared__ float red[8];

  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int nb = K >> 5;
  const int ntiles = (mv_units(rows, RPW, EP == EP_SWIGLU) + 7) / 8;

  auto rowOf = [&](int tile, int r) -> int { return mv_row(tile * 8 + warp, r, RPW, EP == EP_SWIGLU); };
  int4 wv[U][RPW];
  float dv[U][RPW];
  auto load = [&](int tile, int kb) {
#pragma unroll
    for (int r = 0; r < RPW; r++) {
      const int row = rowOf(tile, r);
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int k = kb + u * 512 + lane * 16;
        if (k < K && row < rows && tile < ntiles) {
          wv[u][r] = ldg_nc16(wq + (size_t)row * K + k);
          dv[u][r] = __half2float(wd[(size_t)row * nb + (k >> 5)]);
        } else {
          wv[u][r] = make_int4(0, 0, 0, 0);
          dv[u][r] = 0.f;
        }
      }
    }
  };
  int tile = blockIdx.x;
  load(tile, 0);
  PDL_WAIT();
  prologue_x<MAXI>(x, K, gain, eps, shi, slo, ssx, red);
  __syncthreads();

  float best = NAN;
  int besti = 0x7fffffff;
  for (; tile < ntiles; tile += gridDim.x) {
    float acc[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = 0.f;
    for (int kb = 0; kb < K; kb += SPAN) {
      if (kb > 0) load(tile, kb);
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int k = kb + u * 512 + lane * 16;
        if (k < K) {
          const int4 xh = *(const int4*)(shi + k);
          const int4 xl = *(const int4*)(slo + k);
          const float s = ssx[k >> 5];
#pragma unroll
          for (int r = 0; r < RPW; r++) {
            const int4 w = wv[u][r];
            int a = __dp4a(w.x, xh.x, 0);
            a = __dp4a(w.y, xh.y, a);
            a = __dp4a(w.z, xh.z, a);
            a = __dp4a(w.w, xh.w, a);
            int b = __dp4a(w.x, xl.x, 0);
            b = __dp4a(w.y, xl.y, b);
            b = __dp4a(w.z, xl.z, b);
            b = __dp4a(w.w, xl.w, b);
            acc[r] += dv[u][r] * s * (float)(a * 256 + b);
          }
        }
      }
    }
    const int cur = tile;
    if (tile + (int)gridDim.x < ntiles) load(tile + gridDim.x, 0);
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = warp_sum(acc[r]);
    mv_epilogue<RPW>(acc, EP, cur * 8 + warp, rows, nout, y, 1.f, &best, &besti);
  }
  if (EP == EP_ARGMAX) argmax_partial<8>(best, besti, pval, pidx);
}

// ---------------------------------------------------------------- float activations

// xsw maps element i of a float activation vector to its place in shared
// memory: within each 512-element span, lane L's four float4s (elements
// 16L..16L+15, matching its 16 weight bytes) are stored rotated by (L/2)%4,
// so the warp's 128-bit loads hit distinct banks.
__device__ __forceinline__ int xsw(int i) {
  const int L = (i & 511) >> 4, c = (i & 15) >> 2;
  return (i & ~511) | (L << 4) | ((c ^ ((L >> 1) & 3)) << 2) | (i & 3);
}

// dot16 returns sum_j q_j * x_j over the 16 int8 weights in w and the
// lane's 16 activations at xs (swizzled), converting bytes to floats
// exactly with a byte permute and one add (no int-to-float unit).
__device__ __forceinline__ float dot16(int4 w, const float* xs, int lane) {
  const int rot = (lane >> 1) & 3;
  const int ws[4] = {w.x, w.y, w.z, w.w};
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
#pragma unroll
  for (int c = 0; c < 4; c++) {
    const float4 xv = *(const float4*)(xs + ((c ^ rot) << 2));
    const unsigned u = (unsigned)ws[c] ^ 0x80808080u;
    a0 += (__int_as_float(__byte_perm(u, 0x4B000000u, 0x7540)) - 8388736.f) * xv.x;
    a1 += (__int_as_float(__byte_perm(u, 0x4B000000u, 0x7541)) - 8388736.f) * xv.y;
    a2 += (__int_as_float(__byte_perm(u, 0x4B000000u, 0x7542)) - 8388736.f) * xv.z;
    a3 += (__int_as_float(__byte_perm(u, 0x4B000000u, 0x7543)) - 8388736.f) * xv.w;
  }
  return (a0 + a1) + (a2 + a3);
}

// prologue_f loads x[0:K) into shared memory (swizzled), RMS-normalized and
// multiplied by gain when gain is not null; in registers up to K =
// 256*MAXI, else in two passes over global memory. 256 threads.
template <int MAXI>
__device__ __forceinline__ void prologue_f(const float* __restrict__ x, int K, const float* __restrict__ gain,
                                           float eps, float* xs, float* red) {
  const int tid = threadIdx.x;
  float scale = 1.f;
  if (K > 256 * MAXI) {
    if (gain) {
      float ss = 0.f;
      for (int i = tid; i < K; i += 256) {
        const float v = x[i];
        ss += v * v;
      }
      scale = rms_scale8(ss, K, eps, red);
    }
    for (int i = tid; i < K; i += 256) xs[xsw(i)] = gain ? x[i] * scale * gain[i] : x[i];
    return;
  }
  float v[MAXI], gv[MAXI];
#pragma unroll
  for (int it = 0; it < MAXI; it++) {
    const int i = it * 256 + tid;
    v[it] = i < K ? x[i] : 0.f;
    gv[it] = (gain && i < K) ? gain[i] : 0.f;
  }
  if (gain) {
    float ss = 0.f;
#pragma unroll
    for (int it = 0; it < MAXI; it++) ss += v[it] * v[it];
    scale = rms_scale8(ss, K, eps, red);
  }
#pragma unroll
  for (int it = 0; it < MAXI; it++) {
    const int i = it * 256 + tid;
    if (i < K) xs[xsw(i)] = gain ? v[it] * scale * gv[it] : v[it];
  }
}

// mvf_q8: the decode matvec with float activations (exactly the CPU's
// inputs) in shared memory. A tile is 8/KS row groups of RPW rows (SwiGLU:
// pairs); the KS warps of a group split the row's 512-byte chunks between
// them (chunk c to warp c % KS) and add their sums through shared memory.
// U = 8/RPW chunks of a row are loaded at once per warp. Persistent grid,
// epilogues and MAXI as mv_q8's.
template <int EP, int RPW, int KS, int MAXI>
__device__ __forceinline__ void mvf_q8(const i8* __restrict__ wq, const __half* __restrict__ wd, int rows, int K,
                                       const float* __restrict__ x, const float* __restrict__ gain, float eps,
                                       float* __restrict__ y, int nout, float* __restrict__ pval,
                                       int* __restrict__ pidx) {
  constexpr int U = 8 / RPW;
  constexpr int GR = 8 / KS;  // row groups per tile
  extern __shared__ __align__(16) float xs[];
  __shared__ float red[8];
  __shared__ float part[8][RPW];

  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int grp = warp / KS, ks = warp % KS;
  const int nb = K >> 5;
  const int nch = (K + 511) >> 9;  // 512-byte chunks of a row
  const int ntiles = (mv_units(rows, RPW, EP == EP_SWIGLU) + GR - 1) / GR;

  auto rowOf = [&](int tile, int r) -> int { return mv_row(tile * GR + grp, r, RPW, EP == EP_SWIGLU); };
  int4 wv[U][RPW];
  float dv[U][RPW];
  // load: the warp's chunks ks, ks+KS, ... from the (round)th group of U.
  auto load = [&](int tile, int round) {
#pragma unroll
    for (int r = 0; r < RPW; r++) {
      const int row = rowOf(tile, r);
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int ch = ks + (round * U + u) * KS;
        const int k = ch * 512 + lane * 16;
        if (ch < nch && k < K && row < rows && tile < ntiles) {
          wv[u][r] = ldg_nc16(wq + (size_t)row * K + k);
          dv[u][r] = __half2float(wd[(size_t)row * nb + (k >> 5)]);
        } else {
          wv[u][r] = make_int4(0, 0, 0, 0);
          dv[u][r] = 0.f;
        }
      }
    }
  };
  const int rounds = (nch + KS * U - 1) / (KS * U);
  int tile = blockIdx.x;
  load(tile, 0);
  PDL_WAIT();
  prologue_f<MAXI>(x, K, gain, eps, xs, red);
  __syncthreads();

  float best = NAN;
  int besti = 0x7fffffff;
  mv_tiles<RPW>(
      tile, ntiles, rounds, load,
      [&](int round, float (&acc)[RPW]) {
#pragma unroll
        for (int u = 0; u < U; u++) {
          const int ch = ks + (round * U + u) * KS;
          const int k = ch * 512 + lane * 16;
          if (ch < nch && k < K) {
#pragma unroll
            for (int r = 0; r < RPW; r++) acc[r] += dv[u][r] * dot16(wv[u][r], xs + k, lane);
          }
        }
      },
      [&](int cur, float (&acc)[RPW]) {
        if (KS > 1) {  // the group's KS warps' sums, in warp order
          if (lane == 0)
#pragma unroll
            for (int r = 0; r < RPW; r++) part[warp][r] = acc[r];
          __syncthreads();
          if (ks == 0) {
#pragma unroll
            for (int r = 0; r < RPW; r++)
#pragma unroll
              for (int j = 1; j < KS; j++) acc[r] += part[warp + j][r];
          }
          __syncthreads();
        }
        if (ks == 0) mv_epilogue<RPW>(acc, EP, cur * GR + grp, rows, nout, y, 1.f, &best, &besti);
      });
  if (EP == EP_ARGMAX) argmax_partial<8>(best, besti, pval, pidx);
}

// The instantiations: NAME(EP, RPW[, KS]) with prologue registers for K up
// to 4096 and the compiler's register choice (2 blocks an SM at 8 warps),
// and the _b3 variants bounded to 3 blocks an SM (prologue registers up to
// K = 2048, 75-80 registers without spills): 50% more warps, so 50% more
// rows' loads in flight, and grids of up to 3 blocks an SM in one wave
// (tuning.go's mvCfg.b3).
#define MV_ARGS                                                                                              \
  const i8 *__restrict__ wq, const __half *__restrict__ wd, int rows, int K, const float *__restrict__ x, \
      const float *__restrict__ gain, float eps, float *__restrict__ y, int nout, float *__restrict__ pval, \
      int *__restrict__ pidx
#define MV_INST(NAME, EP, RPW, MAXI, ...)                                             \
  extern "C" __global__ void __launch_bounds__(__VA_ARGS__) NAME(MV_ARGS) {          \
    mv_q8<EP, RPW, MAXI>(wq, wd, rows, K, x, gain, eps, y, nout, pval, pidx);        \
  }
MV_INST(mv_q8_argmax_r1, EP_ARGMAX, 1, 16, 256)
MV_INST(mv_q8_argmax_r2, EP_ARGMAX, 2, 16, 256)
MV_INST(mv_q8_argmax_r2_b3, EP_ARGMAX, 2, 8, 256, 3)
MV_INST(mv_q8_argmax_r4_b3, EP_ARGMAX, 4, 8, 256, 3)

#define MVF_INST(NAME, EP, RPW, KS, MAXI, ...)                                        \
  extern "C" __global__ void __launch_bounds__(__VA_ARGS__) NAME(MV_ARGS) {          \
    mvf_q8<EP, RPW, KS, MAXI>(wq, wd, rows, K, x, gain, eps, y, nout, pval, pidx);   \
  }
MVF_INST(mvf_q8_store_r1_k1, EP_STORE, 1, 1, 16, 256)
MVF_INST(mvf_q8_store_r1_k2, EP_STORE, 1, 2, 16, 256)
MVF_INST(mvf_q8_store_r2_k1, EP_STORE, 2, 1, 16, 256)
MVF_INST(mvf_q8_store_r2_k1_b3, EP_STORE, 2, 1, 8, 256, 3)
MVF_INST(mvf_q8_add_r1_k1, EP_ADD, 1, 1, 16, 256)
MVF_INST(mvf_q8_add_r1_k1_b3, EP_ADD, 1, 1, 8, 256, 3)
MVF_INST(mvf_q8_add_r1_k2, EP_ADD, 1, 2, 16, 256)
MVF_INST(mvf_q8_add_r1_k4, EP_ADD, 1, 4, 16, 256)
MVF_INST(mvf_q8_swiglu_r2_k1, EP_SWIGLU, 2, 1, 16, 256)
MVF_INST(mvf_q8_swiglu_r2_k1_b3, EP_SWIGLU, 2, 1, 8, 256, 3)
MVF_INST(mvf_q8_argmax_r1_k1, EP_ARGMAX, 1, 1, 16, 256)
MVF_INST(mvf_q8_argmax_r2_k1, EP_ARGMAX, 2, 1, 16, 256)

// ---------------------------------------------------------------- the block formats, dp4a

// q_dot_w returns the unit's dot product with the activations x = s*q,
// from its quant words w (q_word) and its sub-blocks' a and c (q_ac):
// a*s*dot(Q, q) + (c - a*OFF)*sum(x) per sub-block, Q.q exact in integers.
// mvqn decodes w, a and c once for all its tokens.
template <int T>
__device__ __forceinline__ float q_dot_w(const int (&w)[8], const float (&a)[2], const float (&c)[2],
                                         const qact& x) {
  int d0 = 0, d1 = 0;
#pragma unroll
  for (int g = 0; g < 8; g++) {
    if (g < 4)
      d0 = __dp4a(w[g], x.q[g], d0);
    else
      d1 = __dp4a(w[g], x.q[g], d1);
  }
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

// q_dot is q_dot_w of unit u as loaded.
template <int T>
__device__ __forceinline__ float q_dot(const qunit& q, int u, const qact& x) {
  int w[8];
#pragma unroll
  for (int g = 0; g < 8; g++) w[g] = q_word<T>(q, g);
  float a[2], c[2];
  q_ac<T>(q, u, a, c);
  return q_dot_w<T>(w, a, c, x);
}

// mvq_load loads round `round` of the units of a warp's RPW rows of block
// type T (each row's units (round*U + i)*32 + lane, i < U: U a lane) into
// q: row row0 + rowOf(r) for r < RPW, zero past the K/32 units of a row,
// past rows, or unless tile < ntiles.
template <int T, int RPW, int U, class RowOf>
__device__ __forceinline__ void mvq_load(qunit (&q)[U][RPW], const uint8_t* lo, const uint8_t* hi, const uint8_t* m0,
                                         const uint8_t* m1, size_t row0, RowOf rowOf, int rows, int K, int round,
                                         int tile, int ntiles) {
  const int lane = threadIdx.x & 31, NU = K >> 5;
#pragma unroll
  for (int r = 0; r < RPW; r++) {
    const int row = rowOf(r);
#pragma unroll
    for (int i = 0; i < U; i++) {
      const int u = (round * U + i) * 32 + lane;
      q_zero(q[i][r]);
      if (u < NU && row < rows && tile < ntiles) q_load<T>(q[i][r], lo, hi, m0, m1, row0 + row, K, u);
    }
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

  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int NU = K >> 5;
  const bool sw = ep_glu(ep);
  const int ntiles = (mv_units(rows, RPW, sw) + 7) / 8;
  qunit q[U][RPW];
  auto load = [&](int tile, int round) {
    mvq_load<T>(q, lo, hi, m0, m1, 0, [&](int r) { return mv_row(tile * 8 + warp, r, RPW, sw); }, rows, K, round,
                tile, ntiles);
  };
  const int rounds = (NU + 32 * U - 1) / (32 * U);
  int tile = blockIdx.x;
  load(tile, 0);
  PDL_WAIT();
  qprologue(x, K, gain, eps, xq, xs, xsum, red);
  __syncthreads();

  float best = NAN;
  int besti = 0x7fffffff;
  mv_tiles<RPW>(
      tile, ntiles, rounds, load,
      [&](int round, float (&acc)[RPW]) {
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
      },
      [&](int cur, const float (&acc)[RPW]) {
        mv_epilogue<RPW, true>(acc, ep, cur * 8 + warp, rows, nout, y, 1.f, &best, &besti);
      });
  if (ep == EP_ARGMAX) argmax_partial<8>(best, besti, pval, pidx);
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
MVQ_INST(mxfp4, QT_MXFP4)

// ---------------------------------------------------------------- the block formats, up to 8 tokens

// mvqn_unit adds unit u of a warp's RPW rows q, decoded once (q_word,
// q_ac), against each of nt <= NT tokens' activations (act(j, x) loads
// token j's) to acc[r][j].
template <int T, int RPW, int NT, class Act>
__device__ __forceinline__ void mvqn_unit(float (&acc)[RPW][NT], const qunit (&q)[RPW], int u, int nt, Act act) {
  int w[RPW][8];
  float a[RPW][2], c[RPW][2];
#pragma unroll
  for (int r = 0; r < RPW; r++) {
#pragma unroll
    for (int g = 0; g < 8; g++) w[r][g] = q_word<T>(q[r], g);
    q_ac<T>(q[r], u, a[r], c[r]);
  }
#pragma unroll
  for (int j = 0; j < NT; j++) {
    if (j < nt) {
      qact x;
      act(j, x);
#pragma unroll
      for (int r = 0; r < RPW; r++) acc[r][j] += q_dot_w<T>(w[r], a[r], c[r], x);
    }
  }
}

// mvqn: Y[t*ldy + r] = W x_t for the n <= NT tokens of qact8's activations,
// each weight unit loaded and decoded once for all of them (mvq's scheme:
// persistent grid, 8 warps, a warp RPW rows of a tile, U units a row and
// lane in flight); the activations are read through the L1 cache, the same
// for every warp. Epilogues store, add and SwiGLU as mmh's (ep), token-major
// with row stride ldy (SwiGLU: nout outputs a token).
template <int T, int RPW, int U, int NT>
__device__ __forceinline__ void mvqn(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                     const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int rows,
                                     int K, const i8* __restrict__ xq, const float* __restrict__ xs,
                                     const float* __restrict__ xsum, int n, float* __restrict__ Y, int ldy,
                                     int nout, int ep) {
  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int NU = K >> 5;
  const bool sw = ep == EP_SWIGLU;
  const int ntiles = (mv_units(rows, RPW, sw) + 7) / 8;
  qunit q[U][RPW];
  auto load = [&](int tile, int round) {
    mvq_load<T>(q, lo, hi, m0, m1, 0, [&](int r) { return mv_row(tile * 8 + warp, r, RPW, sw); }, rows, K, round,
                tile, ntiles);
  };
  const int rounds = (NU + 32 * U - 1) / (32 * U);
  int tile = blockIdx.x;
  load(tile, 0);
  PDL_WAIT();
  for (; tile < ntiles; tile += gridDim.x) {
    float acc[RPW][NT];
#pragma unroll
    for (int r = 0; r < RPW; r++)
#pragma unroll
      for (int j = 0; j < NT; j++) acc[r][j] = 0.f;
    for (int round = 0; round < rounds; round++) {
      if (round > 0) load(tile, round);
#pragma unroll
      for (int i = 0; i < U; i++) {
        const int u = (round * U + i) * 32 + lane;
        if (u >= NU) continue;
        mvqn_unit<T>(acc, q[i], u, n, [&](int j, qact& x) {
          q_act(x, u, xq + (size_t)j * K, xs + (size_t)j * NU, xsum + (size_t)j * 2 * NU);
        });
      }
    }
    const int cur = tile;
    if (tile + (int)gridDim.x < ntiles) load(tile + gridDim.x, 0);
#pragma unroll
    for (int j = 0; j < NT; j++) {
      if (j >= n) break;
      float a[RPW];
#pragma unroll
      for (int r = 0; r < RPW; r++) a[r] = warp_sum(acc[r][j]);
      mv_epilogue<RPW>(a, ep, cur * 8 + warp, rows, nout, Y + (size_t)j * ldy);
    }
  }
}

#define MVQN_ARGS                                                                                         \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0,     \
      const uint8_t *__restrict__ m1, int rows, int K, const i8 *__restrict__ xq,                       \
      const float *__restrict__ xs, const float *__restrict__ xsum, int n, float *__restrict__ Y, int ldy, \
      int nout, int ep
#define MVQN_INST(NAME, T)                                                                          \
  extern "C" __global__ void __launch_bounds__(256) mvqn_##NAME##_t4(MVQN_ARGS) {                   \
    mvqn<T, 2, 2, 4>(lo, hi, m0, m1, rows, K, xq, xs, xsum, n, Y, ldy, nout, ep);                   \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(256) mvqn_##NAME##_t8(MVQN_ARGS) {                   \
    mvqn<T, 2, 2, 8>(lo, hi, m0, m1, rows, K, xq, xs, xsum, n, Y, ldy, nout, ep);                   \
  }
MVQN_INST(q4_0, QT_Q4_0)
MVQN_INST(q4_1, QT_Q4_1)
MVQN_INST(q5_0, QT_Q5_0)
MVQN_INST(q5_1, QT_Q5_1)
MVQN_INST(q8_0, QT_Q8_0)
MVQN_INST(q2_k, QT_Q2_K)
MVQN_INST(q3_k, QT_Q3_K)
MVQN_INST(q4_k, QT_Q4_K)
MVQN_INST(q5_k, QT_Q5_K)
MVQN_INST(q6_k, QT_Q6_K)
MVQN_INST(iq4_nl, QT_IQ4_NL)
MVQN_INST(iq4_xs, QT_IQ4_XS)
MVQN_INST(mxfp4, QT_MXFP4)
