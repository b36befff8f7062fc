// Included by kernels.cu after quant.cuh: the block formats' decode matvec.

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

// ---------------------------------------------------------------- small batches: one weight pass for up to NT tokens

// qact8: token t (one block each) quantized as mvq's prologue quantizes its
// activations (rmsnorm*gain when gain is not null), into global memory: the
// int8 values xq[t*K..] (16-byte chunks swizzled by qsw), the scales
// xs[t*K/32..] and the sums of 16 xsum[t*K/16..]. mvqn reads them.
extern "C" __global__ void __launch_bounds__(256) qact8(const float* __restrict__ x, int K, int ldx,
                                                        const float* __restrict__ gain, float eps, i8* xq,
                                                        float* xs, float* xsum) {
  __shared__ float red[8];
  PDL_LAUNCH();
  PDL_WAIT();
  const size_t t = blockIdx.x;
  qprologue(x + t * ldx, K, gain, eps, xq + t * K, xs + t * (K >> 5), xsum + t * (K >> 4), red);
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
        int w[RPW][8];
        float a[RPW][2], c[RPW][2];
#pragma unroll
        for (int r = 0; r < RPW; r++) {
#pragma unroll
          for (int g = 0; g < 8; g++) w[r][g] = q_word<T>(q[i][r], g);
          q_ac<T>(q[i][r], u, a[r], c[r]);
        }
#pragma unroll
        for (int j = 0; j < NT; j++) {
          if (j < n) {
            qact x;
            q_act(x, u, xq + (size_t)j * K, xs + (size_t)j * NU, xsum + (size_t)j * 2 * NU);
#pragma unroll
            for (int r = 0; r < RPW; r++) acc[r][j] += q_dot_w<T>(w[r], a[r], c[r], x);
          }
        }
      }
    }
    const int cur = tile;
    if (tile + (int)gridDim.x < ntiles) load(tile + gridDim.x, 0);
#pragma unroll
    for (int j = 0; j < NT; j++) {
      if (j >= n) break;
#pragma unroll
      for (int r = 0; r < RPW; r++) acc[r][j] = warp_sum(acc[r][j]);
      float* y = Y + (size_t)j * ldy;
      if (sw) {
        const int p = cur * 8 + warp;
        if (lane == 0 && p < nout) y[p] = acc[0][j] / (1.f + expf(-acc[0][j])) * acc[1][j];
      } else {
#pragma unroll
        for (int r = 0; r < RPW; r++) {
          const int row = rowOf(cur, r);
          if (lane == r && row < rows) {
            if (ep == EP_ADD)
              y[row] += acc[r][j];
            else
              y[row] = acc[r][j];
          }
        }
      }
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
