// Included by kernels.cu (its section: matvec, decode).

// ================================================================ matvec (decode): one token

// ---------------------------------------------------------------- int16 activation planes, dp4a

enum { EP_STORE = 0, EP_ADD = 1, EP_SWIGLU = 2, EP_ARGMAX = 3 };

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
      ss = warp_sum(ss);
      if (lane == 0) red[warp] = ss;
      __syncthreads();
      ss = 0.f;
#pragma unroll
      for (int w = 0; w < 8; w++) ss += red[w];
      scale = 1.f / sqrtf(ss / (float)K + eps);
    }
    for (int b = warp; b < (K >> 5); b += 8) {
      const int i = b * 32 + lane;
      float val = x[i];
      if (gain) val = val * scale * gain[i];
      const float a = warp_max(fabsf(val));
      int q = 0;
      if (a > 0.f) q = __float2int_rn(val * (QMAX / a));
      q = max(-32512, min(32512, q));
      const int h = (q + 128) >> 8;
      shi[i] = (i8)h;
      slo[i] = (i8)(q - h * 256);
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
    ss = warp_sum(ss);
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    ss = 0.f;
#pragma unroll
    for (int w = 0; w < 8; w++) ss += red[w];
    scale = 1.f / sqrtf(ss / (float)K + eps);
  }
#pragma unroll
  for (int it = 0; it < MAXI; it++) {
    const int b = it * 8 + warp;
    if (b < (K >> 5)) {
      const int i = it * 256 + tid;
      float val = v[it];
      if (gain) val = val * scale * gv[it];
      const float a = warp_max(fabsf(val));
      int q = 0;
      if (a > 0.f) q = __float2int_rn(val * (QMAX / a));
      q = max(-32512, min(32512, q));
      const int h = (q + 128) >> 8;
      shi[i] = (i8)h;
      slo[i] = (i8)(q - h * 256);
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
  __shared__ float bval[8];
  __shared__ int bidx[8];

  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int nb = K >> 5;
  const int units = EP == EP_SWIGLU ? rows / 2 : (rows + RPW - 1) / RPW;  // warp work items
  const int ntiles = (units + 7) / 8;

  auto rowOf = [&](int tile, int r) -> int {
    const int u = tile * 8 + warp;
    if (EP == EP_SWIGLU) return (u >> 3) * 16 + (u & 7) + r * 8;
    return u * RPW + r;
  };
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
    if (EP == EP_SWIGLU) {
      const int p = cur * 8 + warp;
      if (lane == 0 && p < nout) y[p] = acc[0] / (1.f + expf(-acc[0])) * acc[1];
    } else {
#pragma unroll
      for (int r = 0; r < RPW; r++) {
        const int row = rowOf(cur, r);
        if (lane == r && row < rows) {
          if (EP == EP_ADD)
            y[row] += acc[r];
          else
            y[row] = acc[r];
        }
        if (EP == EP_ARGMAX && row < rows && better(acc[r], row, best, besti)) {
          best = acc[r];
          besti = row;
        }
      }
    }
  }
  if (EP == EP_ARGMAX) {
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
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  float scale = 1.f;
  if (K > 256 * MAXI) {
    if (gain) {
      float ss = 0.f;
      for (int i = tid; i < K; i += 256) {
        const float v = x[i];
        ss += v * v;
      }
      ss = warp_sum(ss);
      if (lane == 0) red[warp] = ss;
      __syncthreads();
      ss = 0.f;
#pragma unroll
      for (int w = 0; w < 8; w++) ss += red[w];
      scale = 1.f / sqrtf(ss / (float)K + eps);
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
    ss = warp_sum(ss);
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    ss = 0.f;
#pragma unroll
    for (int w = 0; w < 8; w++) ss += red[w];
    scale = 1.f / sqrtf(ss / (float)K + eps);
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
  __shared__ float bval[8];
  __shared__ int bidx[8];

  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int grp = warp / KS, ks = warp % KS;
  const int nb = K >> 5;
  const int nch = (K + 511) >> 9;  // 512-byte chunks of a row
  const int units = EP == EP_SWIGLU ? rows / 2 : (rows + RPW - 1) / RPW;
  const int ntiles = (units + GR - 1) / GR;

  auto rowOf = [&](int tile, int r) -> int {
    const int u = tile * GR + grp;
    if (EP == EP_SWIGLU) return (u >> 3) * 16 + (u & 7) + r * 8;
    return u * RPW + r;
  };
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
  for (; tile < ntiles; tile += gridDim.x) {
    float acc[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = 0.f;
    for (int round = 0; round < rounds; round++) {
      if (round > 0) load(tile, round);
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int ch = ks + (round * U + u) * KS;
        const int k = ch * 512 + lane * 16;
        if (ch < nch && k < K) {
#pragma unroll
          for (int r = 0; r < RPW; r++) acc[r] += dv[u][r] * dot16(wv[u][r], xs + k, lane);
        }
      }
    }
    const int cur = tile;
    if (tile + (int)gridDim.x < ntiles) load(tile + gridDim.x, 0);
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = warp_sum(acc[r]);
    if (KS > 1) {
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
    if (ks == 0) {
      if (EP == EP_SWIGLU) {
        const int p = cur * GR + grp;
        if (lane == 0 && p < nout) y[p] = acc[0] / (1.f + expf(-acc[0])) * acc[1];
      } else {
#pragma unroll
        for (int r = 0; r < RPW; r++) {
          const int row = rowOf(cur, r);
          if (lane == r && row < rows) {
            if (EP == EP_ADD)
              y[row] += acc[r];
            else
              y[row] = acc[r];
          }
          if (EP == EP_ARGMAX && row < rows && better(acc[r], row, best, besti)) {
            best = acc[r];
            besti = row;
          }
        }
      }
    }
  }
  if (EP == EP_ARGMAX) {
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
