// ================================================================ F16, BF16 and F32 matrices
//
// Included at the end of kernels.cu, after quant_mm.cuh. Float matrices are
// uploaded as in the file, row-major, rows padded with zeros to a multiple
// of 64 (backend/cuda/half.go); the kernels read them with 16-byte loads
// (8 values of F16 or BF16, 4 of F32) and accumulate in f32:
//   mvh_<type>     decode matrix-vector (one token): f32 activations
//                  (rmsnorm*gain in shared memory), every epilogue
//   mvhn_<type>    up to 8 tokens a block (blockIdx.y: the group of 8),
//   mvhn4_<type>   one weight pass for them, f16 activations from qact_h
//                  (mvhn4: 4 warps a row pair, for matrices of few rows)
//   mmw_<type>_b128 / _b32  f16 tensor cores (mma m16n8k16, f32 accumulators)
//                  as quant_mm.cuh's mmh: BF16 and F32 tiles are converted to
//                  f16 in shared memory after a power-of-two scale 2^-s that
//                  keeps the matrix in f16's range (wsc = 2^s restores it in
//                  the epilogue); BF16 values from 2^-17 up are exact in f16.
//   h_embed_unit   the embedding lookup's rows (quant.cuh's q_embed_row).

#define HT_F32 0
#define HT_F16 1
#define HT_BF16 30

template <int E>
struct ht {
  enum { BYTES = E == HT_F32 ? 4 : 2, V16 = 16 / BYTES };
};

// h_cvt4 converts the 16 bytes a (V16 values of E) to floats v[0:V16).
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

// h_embed_unit writes values 32u..32u+31 of row row (K values a row) of an
// F32, F16 or BF16 matrix w to out, exactly (every value converts to f32).
__device__ void h_embed_unit(int type, const uint8_t* w, size_t row, int K, int u, float* out) {
  const size_t v0 = row * (size_t)K + (size_t)u * 32;
  switch (type) {
    case HT_F16:
#pragma unroll
      for (int i = 0; i < 4; i++) h_cvt16<HT_F16>(ldg_nc16(w + 2 * v0 + 16 * i), out + 8 * i);
      break;
    case HT_BF16:
#pragma unroll
      for (int i = 0; i < 4; i++) h_cvt16<HT_BF16>(ldg_nc16(w + 2 * v0 + 16 * i), out + 8 * i);
      break;
    default:
#pragma unroll
      for (int i = 0; i < 8; i++) h_cvt16<HT_F32>(ldg_nc16(w + 4 * v0 + 16 * i), out + 4 * i);
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
  __shared__ float bval[8];
  __shared__ int bidx[8];

  PDL_LAUNCH();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int NC = K / V;  // chunks a row
  const bool sw = ep == EP_SWIGLU;
  const int units = sw ? rows / 2 : (rows + RPW - 1) / RPW;
  const int ntiles = (units + 7) / 8;
  auto rowOf = [&](int tile, int r) -> int {
    const int u = tile * 8 + warp;
    if (sw) return (u >> 3) * 16 + (u & 7) + r * 8;
    return u * RPW + r;
  };
  int4 w[U][RPW];
  auto load = [&](int tile, int round) {
#pragma unroll
    for (int r = 0; r < RPW; r++) {
      const int row = rowOf(tile, r);
#pragma unroll
      for (int i = 0; i < U; i++) {
        const int c = (round * U + i) * 32 + lane;
        w[i][r] = make_int4(0, 0, 0, 0);
        if (c < NC && row < rows && tile < ntiles) w[i][r] = ldg_nc16(W + ((size_t)row * K + (size_t)c * V) * ht<E>::BYTES);
      }
    }
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
  for (; tile < ntiles; tile += gridDim.x) {
    float acc[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = 0.f;
    for (int round = 0; round < rounds; round++) {
      if (round > 0) load(tile, round);
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
      for (int i = 1; i < 8; i++)
        if (better(bval[i], bidx[i], bv, bi)) {
          bv = bval[i];
          bi = bidx[i];
        }
      pval[blockIdx.x] = bv;
      pidx[blockIdx.x] = bi;
    }
  }
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
  const bool sw = ep == EP_SWIGLU;
  const int units = sw ? rows / 2 : (rows + RPW - 1) / RPW;
  const int ntiles = (units + G - 1) / G;
  auto rowOf = [&](int tile, int r) -> int {
    const int u = tile * G + grp;
    if (sw) return (u >> 3) * 16 + (u & 7) + r * 8;
    return u * RPW + r;
  };
  int4 w[U][RPW];
  auto load = [&](int tile, int round) {
#pragma unroll
    for (int r = 0; r < RPW; r++) {
      const int row = rowOf(tile, r);
#pragma unroll
      for (int i = 0; i < U; i++) {
        const int c = c0 + (round * U + i) * 32 + lane;
        w[i][r] = make_int4(0, 0, 0, 0);
        if (c < c1 && row < rows && tile < ntiles) w[i][r] = ldg_nc16(W + ((size_t)row * K + (size_t)c * V) * ht<E>::BYTES);
      }
    }
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
        const float s = sx[t0 + t];
        float* yt = Y + (size_t)(t0 + t) * ldy;
        if (sw) {
          const int p = cur * G + grp;
          if (lane == 0 && p < nout) {
            const float g = acc[0][t] * s, u = acc[1][t] * s;
            yt[p] = g / (1.f + expf(-g)) * u;
          }
        } else {
#pragma unroll
          for (int r = 0; r < RPW; r++) {
            const int row = rowOf(cur, r);
            if (lane == r && row < rows) {
              if (ep == EP_ADD)
                yt[row] += acc[r][t] * s;
              else
                yt[row] = acc[r][t] * s;
            }
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- matrix-matrix: f16 tensor cores

// mmw: Y = W X^T for n tokens, quant_mm.cuh's mmh with float weights: per
// stage of BK = 8192/BM values of k every thread loads 32 values of a row
// (arow, unit auc) into registers and, after the stage's products, stores
// them as f16 (times 2^-s: wsc = 2^s) into the other shared-memory buffer;
// X (f16 [n][K] from qact_h, sx its per-token scale) comes by cp.async.
// Rows past mpad read as zeros. Epilogues store, add and SwiGLU as mmh's.
template <int E, int BM, int BN, int WM>
__device__ __forceinline__ void mmw(const uint8_t* __restrict__ W, int M, int mpad, int K,
                                    const __half* __restrict__ X, const float* __restrict__ sx, int n,
                                    float* __restrict__ Y, int ldy, int nout, int ep, float wsc) {
  constexpr int WN = 8 / WM, BK = 8192 / BM, UPR = BK / 32, LDA = BK + 8;
  constexpr int TM = BM / WM, TN = BN / WN, MT = TM / 16, NT = TN / 8;
  constexpr int NL = 32 * ht<E>::BYTES / 16;  // 16-byte loads a unit
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
  const float inv = 1.f / wsc;

  PDL_LAUNCH();
  int4 q[NL];
  auto loadA = [&](int ks) {
    const int u = ks * UPR + auc;
    const bool ok = grow < mpad && u < NU;
    const uint8_t* p = W + ((size_t)grow * K + (size_t)u * 32) * ht<E>::BYTES;
#pragma unroll
    for (int i = 0; i < NL; i++) q[i] = ok ? ldg_nc16(p + 16 * i) : make_int4(0, 0, 0, 0);
  };
  auto storeA = [&](int buf) {
    uint4* d4 = (uint4*)(As + (buf * BM + arow) * LDA + auc * 32);
    if constexpr (E == HT_F16) {
#pragma unroll
      for (int i = 0; i < 4; i++) d4[i] = make_uint4(q[i].x, q[i].y, q[i].z, q[i].w);
    } else {
      float v[32];
#pragma unroll
      for (int i = 0; i < NL; i++) h_cvt16<E>(q[i], v + i * ht<E>::V16);
      unsigned out[16];
#pragma unroll
      for (int i = 0; i < 16; i++) {
        const __half2 h = __floats2half2_rn(v[2 * i] * inv, v[2 * i + 1] * inv);
        out[i] = *(const unsigned*)&h;
      }
#pragma unroll
      for (int i = 0; i < 4; i++) d4[i] = make_uint4(out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
    }
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
  storeA(0);
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
    if (ks + 1 < nk) storeA(cur ^ 1);
    qcp_wait_all();
    __syncthreads();
  }

  const int gid = lane >> 2, tig = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; nt++) {
    const int t = n0 + wn * TN + nt * 8 + 2 * tig;
    const float s0 = t < n ? sx[t] * wsc : 0.f, s1 = t + 1 < n ? sx[t + 1] * wsc : 0.f;
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

#define MVH_ARGS                                                                                      \
  const uint8_t *__restrict__ W, int rows, int K, const float *__restrict__ x,                        \
      const float *__restrict__ gain, float eps, float *__restrict__ y, int nout, float *__restrict__ pval, \
      int *__restrict__ pidx, int ep
#define MVHN_ARGS                                                                                  \
  const uint8_t *__restrict__ W, int rows, int K, const __half *__restrict__ X,                    \
      const float *__restrict__ sx, int n, float *__restrict__ Y, int ldy, int nout, int ep
#define MMW_ARGS                                                                                   \
  const uint8_t *__restrict__ W, int M, int mpad, int K, const __half *__restrict__ X,             \
      const float *__restrict__ sx, int n, float *__restrict__ Y, int ldy, int nout, int ep, float wsc
#define MVH_INST(NAME, E, U)                                                                         \
  extern "C" __global__ void __launch_bounds__(256) mvh_##NAME(MVH_ARGS) {                           \
    mvh<E, U>(W, rows, K, x, gain, eps, y, nout, pval, pidx, ep);                                    \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) mvhn_##NAME(MVHN_ARGS) {                         \
    mvhn<E, U / 2, 1>(W, rows, K, X, sx, n, Y, ldy, nout, ep);                                       \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) mvhn4_##NAME(MVHN_ARGS) {                        \
    mvhn<E, U / 2, 4>(W, rows, K, X, sx, n, Y, ldy, nout, ep);                                       \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) mmw_##NAME##_b128(MMW_ARGS) {                    \
    mmw<E, 128, 128, 2>(W, M, mpad, K, X, sx, n, Y, ldy, nout, ep, wsc);                             \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) mmw_##NAME##_b32(MMW_ARGS) {                     \
    mmw<E, 64, 32, 4>(W, M, mpad, K, X, sx, n, Y, ldy, nout, ep, wsc);                               \
  }
MVH_INST(f16, HT_F16, 4)
MVH_INST(bf16, HT_BF16, 4)
MVH_INST(f32, HT_F32, 4)
