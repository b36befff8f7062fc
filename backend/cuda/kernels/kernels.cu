// Kernels of inferno's CUDA backend: a Qwen3 forward pass over Q8_0 weights.
//
// Compiled to PTX by ../build_ptx.sh (compute capability 8.0 and up) and
// embedded in the Go package; the driver JIT-compiles it for the GPU at load.
//
// Number formats
//   Weights: Q8_0 split into two arrays at upload: the int8 values, row-major
//   (rows x K), and the f16 block scales, twice: row-major (rows x K/32) for
//   the decode matvec and block-major (K/32 x Mpad) for the prefill matmul.
//   Activations entering a matrix product are quantized per block of 32 to
//   16-bit integers split in two int8 planes, v = 256*hi + lo, with a float
//   scale per block: products are exact integer dp4a / IMMA sums of both
//   planes, and the activation rounding is 1/32512 of the block's largest
//   value (far below bf16), so results track the float32 CPU reference.
//   KV cache: f16, per layer [kv head][capacity][head dim].
//
// Kernel names are extern "C"; the Go side looks them up by name.

#include <cuda_fp16.h>
#include <stdint.h>

typedef int8_t i8;

#define FULL 0xffffffffu

// Programmatic dependent launch (Hopper, compute capability 9.0): a kernel
// lets the next one in the stream start early (PDL_LAUNCH, at its top), and
// waits for the previous one to finish and its writes to be visible
// (PDL_WAIT) before touching anything that kernel wrote. What comes before
// PDL_WAIT reads only data no kernel of the step writes (weights, the
// step's parameters). Compiled for older GPUs, both are no-ops; without the
// launch attribute, the wait returns at once.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PDL_WAIT() asm volatile("griddepcontrol.wait;" ::: "memory")
#define PDL_LAUNCH() asm volatile("griddepcontrol.launch_dependents;" :::)
#else
#define PDL_WAIT()
#define PDL_LAUNCH()
#endif
#define QMAX 32512.0f  // 127*256: |v| <= QMAX keeps hi = round(v/256) in int8

// ---------------------------------------------------------------- helpers

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
  return v;
}

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
  return v;
}

// block_sum_d returns the sum of v over the block to every thread. red
// holds 32 doubles; the block's size is a multiple of 32.
__device__ __forceinline__ double block_sum_d(double v, double* red) {
  v = warp_sum_d(v);
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) red[w] = v;
  __syncthreads();
  v = l < nw ? red[l] : 0.0;
  return warp_sum_d(v);
}

__device__ __forceinline__ float block_max(float v, float* red) {
  v = warp_max(v);
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) red[w] = v;
  __syncthreads();
  v = l < nw ? red[l] : -INFINITY;
  return warp_max(v);
}

__device__ __forceinline__ float block_sum(float v, float* red) {
  v = warp_sum(v);
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) red[w] = v;
  __syncthreads();
  v = l < nw ? red[l] : 0.f;
  return warp_sum(v);
}

// better reports whether (a, ia) comes before (b, ib) in argmax order: a
// number before NaN, a larger value first, and the lower index among equal
// values (and among NaNs), as sampling.Argmax chooses on the CPU.
__device__ __forceinline__ bool better(float a, int ia, float b, int ib) {
  const bool an = a != a, bn = b != b;
  if (an != bn) return bn;
  if (!an && a != b) return a > b;
  return ia < ib;
}

__device__ __forceinline__ int4 ldg_nc16(const void* p) {
  int4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// rms_scale returns 1/sqrt(mean(x^2)+eps) of x[0:K) to every thread of the
// block, summing squares in float64 as the CPU reference does.
__device__ __forceinline__ float rms_scale(const float* __restrict__ x, int K, float eps, double* red) {
  double ss = 0.0;
  for (int i = threadIdx.x; i < K; i += blockDim.x) {
    const double v = x[i];
    ss += v * v;
  }
  ss = block_sum_d(ss, red);
  return (float)(1.0 / sqrt(ss / (double)K + (double)eps));
}

// quant_vec quantizes x[0:K) (K a multiple of 32), normalized by scale and
// multiplied by gain when gain is not null, into the hi and lo planes and
// one scale per block of 32 (sx[b*sx_stride]). Each warp takes whole blocks.
__device__ __forceinline__ void quant_vec(const float* __restrict__ x, int K, const float* __restrict__ gain,
                                          float scale, i8* hi, i8* lo, float* sx, int sx_stride) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  for (int b = warp; b < (K >> 5); b += nw) {
    const int i = b * 32 + lane;
    float v = x[i];
    if (gain) v = v * scale * gain[i];
    const float a = warp_max(fabsf(v));
    int q = 0;
    if (a > 0.f) q = __float2int_rn(v * (QMAX / a));
    q = max(-32512, min(32512, q));
    const int h = (q + 128) >> 8;
    hi[i] = (i8)h;
    lo[i] = (i8)(q - h * 256);
    if (lane == 0) sx[b * sx_stride] = a / QMAX;
  }
}

// ---------------------------------------------------------------- embed

// embed_q8: x[t] = dequantized row tokens[t] of the embedding (one block per token).
extern "C" __global__ void embed_q8(const i8* __restrict__ wq, const __half* __restrict__ wd, int K,
                                    const int* __restrict__ tokens, float* __restrict__ x) {
  PDL_LAUNCH();
  const int t = blockIdx.x;
  const size_t tok = (size_t)tokens[t];
  const int nb = K >> 5;
  PDL_WAIT();
  for (int i = threadIdx.x; i < K; i += blockDim.x)
    x[(size_t)t * K + i] = __half2float(wd[tok * nb + (i >> 5)]) * (float)wq[tok * K + i];
}

// embed_step starts a decode step: it reads the token, position and step
// number the host wrote to page-locked host memory (mapped into the GPU's
// address space: no copy node in the graph), publishes them to params for
// the step's other kernels, and embeds the token into x. One block.
//
// With host[3] set the token is instead the previous step's argmax
// (devtok): the host queues a step before it knows the token (lookahead).
extern "C" __global__ void embed_step(const i8* __restrict__ wq, const __half* __restrict__ wd, int K,
                                      const volatile int* host, int* __restrict__ params, float* __restrict__ x,
                                      const int* __restrict__ devtok) {
  __shared__ int tok;
  if (threadIdx.x == 0) {
    tok = host[3] ? devtok[0] : host[0];
    params[0] = tok;
    params[1] = host[1];
    params[2] = host[2];
  }
  __syncthreads();
  const int nb = K >> 5;
  for (int i = threadIdx.x; i < K; i += blockDim.x)
    x[i] = __half2float(wd[(size_t)tok * nb + (i >> 5)]) * (float)wq[(size_t)tok * K + i];
}

// ---------------------------------------------------------------- decode matvec

enum { EP_STORE = 0, EP_ADD = 1, EP_SWIGLU = 2, EP_ARGMAX = 3 };

// prologue_x loads x[0:K) (K <= 4096, a multiple of 32) into shared memory
// as the two int8 planes and per-32 scales, RMS-normalized and multiplied
// by gain when gain is not null. Thread t holds elements t, t+256, ...
// (block b of 32 is warp b%8's, pass b/8), so x is read once. 256 threads.
__device__ __forceinline__ void prologue_x(const float* __restrict__ x, int K, const float* __restrict__ gain,
                                           float eps, i8* shi, i8* slo, float* ssx, float* red) {
  constexpr int MAXI = 16;
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
template <int EP, int RPW>
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
  prologue_x(x, K, gain, eps, shi, slo, ssx, red);
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

// ---------------------------------------------------------------- decode matvec, float activations

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
// multiplied by gain when gain is not null. 256 threads.
__device__ __forceinline__ void prologue_f(const float* __restrict__ x, int K, const float* __restrict__ gain,
                                           float eps, float* xs, float* red) {
  constexpr int MAXI = 16;
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
// epilogues as mv_q8's.
template <int EP, int RPW, int KS>
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
  prologue_f(x, K, gain, eps, xs, red);
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

#define MV_ARGS                                                                                              \
  const i8 *__restrict__ wq, const __half *__restrict__ wd, int rows, int K, const float *__restrict__ x, \
      const float *__restrict__ gain, float eps, float *__restrict__ y, int nout, float *__restrict__ pval, \
      int *__restrict__ pidx
#define MV_INST(NAME, EP, RPW)                                           \
  extern "C" __global__ void __launch_bounds__(256) NAME(MV_ARGS) {      \
    mv_q8<EP, RPW>(wq, wd, rows, K, x, gain, eps, y, nout, pval, pidx); \
  }
MV_INST(mv_q8_argmax_r1, EP_ARGMAX, 1)
MV_INST(mv_q8_argmax_r2, EP_ARGMAX, 2)

#define MVF_INST(NAME, EP, RPW, KS)                                         \
  extern "C" __global__ void __launch_bounds__(256) NAME(MV_ARGS) {         \
    mvf_q8<EP, RPW, KS>(wq, wd, rows, K, x, gain, eps, y, nout, pval, pidx); \
  }
MVF_INST(mvf_q8_store_r1_k1, EP_STORE, 1, 1)
MVF_INST(mvf_q8_store_r1_k2, EP_STORE, 1, 2)
MVF_INST(mvf_q8_store_r2_k1, EP_STORE, 2, 1)
MVF_INST(mvf_q8_add_r1_k1, EP_ADD, 1, 1)
MVF_INST(mvf_q8_add_r1_k2, EP_ADD, 1, 2)
MVF_INST(mvf_q8_add_r1_k4, EP_ADD, 1, 4)
MVF_INST(mvf_q8_swiglu_r2_k1, EP_SWIGLU, 2, 1)
MVF_INST(mvf_q8_argmax_r1_k1, EP_ARGMAX, 1, 1)
MVF_INST(mvf_q8_argmax_r2_k1, EP_ARGMAX, 2, 1)

// argmax_final reduces the per-block candidates of mv_q8 EP_ARGMAX to the
// winning row id (one block of 1024 threads).
// With host not null it also writes the id and then the step number
// (params[2]) to page-locked host memory, where the host polls for it.
extern "C" __global__ void __launch_bounds__(1024) argmax_final(const float* __restrict__ pval,
                                                                const int* __restrict__ pidx, int n,
                                                                int* __restrict__ out, volatile int* host,
                                                                const int* __restrict__ params) {
  __shared__ float sv[32];
  __shared__ int si[32];
  PDL_LAUNCH();
  PDL_WAIT();
  float bv = NAN;
  int bi = 0x7fffffff;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = pval[i];
    const int id = pidx[i];
    if (better(v, id, bv, bi)) {
      bv = v;
      bi = id;
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(FULL, bv, o);
    const int oi = __shfl_xor_sync(FULL, bi, o);
    if (better(ov, oi, bv, bi)) {
      bv = ov;
      bi = oi;
    }
  }
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
  if (l == 0) {
    sv[w] = bv;
    si[w] = bi;
  }
  __syncthreads();
  if (w == 0) {
    const int nw = blockDim.x >> 5;
    bv = l < nw ? sv[l] : NAN;
    bi = l < nw ? si[l] : 0x7fffffff;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(FULL, bv, o);
      const int oi = __shfl_xor_sync(FULL, bi, o);
      if (better(ov, oi, bv, bi)) {
        bv = ov;
        bi = oi;
      }
    }
    if (l == 0) {
      out[0] = bi;
      if (host) {
        host[0] = bi;
        __threadfence_system();
        host[1] = params[2];
      }
    }
  }
}

// ---------------------------------------------------------------- cp.async

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// cp_async16z copies 16 bytes, or writes 16 zero bytes when !ok (src-size 0).
__device__ __forceinline__ void cp_async16z(void* smem, const void* gmem, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(ok ? 16 : 0));
}

// ---------------------------------------------------------------- QK norm + RoPE

// norm_rope_warp: one warp normalizes a head of HD values (RMSNorm with
// gain), rotates it NeoX style at position pos and writes it to dst. rope
// holds (cos, sin) of pos*theta^(-2i/HD) per position and pair, computed on
// the host exactly as the CPU reference computes them.
template <int HD>
__device__ __forceinline__ void norm_rope_warp(const float* __restrict__ src, const float* __restrict__ gain,
                                               float eps, int pos, const float2* __restrict__ rope, float* dst) {
  const int lane = threadIdx.x & 31;
  float ss = 0.f;
#pragma unroll
  for (int d = lane; d < HD; d += 32) {
    const float v = src[d];
    ss += v * v;
  }
  ss = warp_sum(ss);
  const float sc = 1.f / sqrtf(ss / (float)HD + eps);
  constexpr int H2 = HD / 2;
  const float2* cs = rope + (size_t)pos * H2;
#pragma unroll
  for (int i = lane; i < H2; i += 32) {
    const float a = src[i] * sc * gain[i];
    const float b = src[i + H2] * sc * gain[i + H2];
    const float2 r = cs[i];
    dst[i] = a * r.x - b * r.y;
    dst[i + H2] = a * r.y + b * r.x;
  }
}

// ---------------------------------------------------------------- decode attention

#define ATTN_THREADS 256

// attn_decode: attention of the one new token, split-K (flash-decoding).
// Grid (KV heads, nsplit), ATTN_THREADS threads. Block (g, s) takes the G query heads
// of KV head g and the positions [s*chunk, min((s+1)*chunk, seq)), chunk =
// ceil(seq/nsplit). It normalizes and rotates its query heads; the block
// whose range holds the new position also normalizes/rotates the new key
// and appends key and value to the cache first. Each block leaves its
// partial max, sum and unnormalized output; the last block of a KV head to
// finish (a counter per head, reset by that block) combines them into out.
// Scores of a block's range sit in dynamic shared memory: G*chcap floats.
template <int HD, int G>
__device__ __forceinline__ void attn_decode(const float* __restrict__ qkv, int H, int KVH,
                                            const float* __restrict__ qgain, const float* __restrict__ kgain,
                                            float eps, const float2* __restrict__ rope,
                                            const int* __restrict__ params, __half* Kc, __half* Vc, int cap,
                                            float scale, int nsplit, int chcap, int minchunk,
                                            float* __restrict__ pm, float* __restrict__ pl,
                                            float* __restrict__ pacc, unsigned* counter,
                                            float* __restrict__ out) {
  constexpr int NT = ATTN_THREADS, NW = NT / 32;
  constexpr int LP = HD / 16;   // lanes per position when scoring (16 dims each)
  constexpr int PW = 32 / LP;   // positions per warp per pass
  constexpr int TPR = HD / 8;   // threads per V row (8 halves, 16 bytes each)
  constexpr int RP = NT / TPR;  // V rows in flight per block
  extern __shared__ float S[];  // [G][chcap] scores, then probabilities
  __shared__ float qs[G][HD];
  __shared__ float kt[HD];
  __shared__ __align__(16) float red[RP][G][HD];
  __shared__ float redw[NW][G];
  __shared__ int last;

  PDL_LAUNCH();
  const int kvh = blockIdx.x, split = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  // The step's parameters come from a copy that precedes every kernel.
  const int pos = params[1], seq = pos + 1;
  const int chunk = min(chcap, max(minchunk, (seq + nsplit - 1) / nsplit));
  const int start = split * chunk, end = min(seq, start + chunk);
  const int nact = (seq + chunk - 1) / chunk;  // splits with positions
  const size_t hb = (size_t)kvh * cap * HD;
  if (start >= end) return;  // nothing here; the active splits count themselves
  PDL_WAIT();

  {
    const bool owner = pos >= start && pos < end;
    for (int g = warp; g < G; g += NW)
      norm_rope_warp<HD>(qkv + (size_t)(kvh * G + g) * HD, qgain, eps, pos, rope, &qs[g][0]);
    if (owner && warp == NW - 1) norm_rope_warp<HD>(qkv + (size_t)(H + kvh) * HD, kgain, eps, pos, rope, kt);
    __syncthreads();
    if (owner) {
      for (int d = tid; d < HD; d += NT) {
        Kc[hb + (size_t)pos * HD + d] = __float2half(kt[d]);
        Vc[hb + (size_t)pos * HD + d] = __float2half(qkv[(size_t)(H + KVH + kvh) * HD + d]);
      }
      __syncthreads();
    }

    // Scores: LP lanes per position, 16 dims each, two positions a lane
    // group in flight.
    const int sub = lane % LP, slot = lane / LP;
    float qr[G][16];
#pragma unroll
    for (int g = 0; g < G; g++)
#pragma unroll
      for (int i = 0; i < 16; i++) qr[g][i] = qs[g][sub * 16 + i];
    float mloc[G];
#pragma unroll
    for (int g = 0; g < G; g++) mloc[g] = -INFINITY;
    for (int j0 = start + warp * PW; j0 < end; j0 += 2 * NW * PW) {
      uint4 kk[2][2];
#pragma unroll
      for (int c = 0; c < 2; c++) {
        const int j = j0 + c * NW * PW + slot;
        if (j < end) {
          const uint4* kp = (const uint4*)(Kc + hb + (size_t)j * HD + sub * 16);
          kk[c][0] = kp[0];
          kk[c][1] = kp[1];
        } else {
          kk[c][0] = kk[c][1] = make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int c = 0; c < 2; c++) {
        const int j = j0 + c * NW * PW + slot;
        float d[G];
#pragma unroll
        for (int g = 0; g < G; g++) d[g] = 0.f;
        const __half2* h2 = (const __half2*)kk[c];
#pragma unroll
        for (int i = 0; i < 8; i++) {
          const float2 f = __half22float2(h2[i]);
#pragma unroll
          for (int g = 0; g < G; g++) d[g] += qr[g][2 * i] * f.x + qr[g][2 * i + 1] * f.y;
        }
#pragma unroll
        for (int g = 0; g < G; g++)
#pragma unroll
          for (int o = LP / 2; o > 0; o >>= 1) d[g] += __shfl_xor_sync(FULL, d[g], o);
        if (j < end && sub == 0) {
#pragma unroll
          for (int g = 0; g < G; g++) {
            const float sc = d[g] * scale;
            S[g * chcap + (j - start)] = sc;
            mloc[g] = fmaxf(mloc[g], sc);
          }
        }
      }
    }
    // Block max per head, then probabilities and their sums.
#pragma unroll
    for (int g = 0; g < G; g++) {
      const float m = warp_max(mloc[g]);
      if (lane == 0) redw[warp][g] = m;
    }
    __syncthreads();
    float M[G];
#pragma unroll
    for (int g = 0; g < G; g++) {
      M[g] = redw[0][g];
#pragma unroll
      for (int w = 1; w < NW; w++) M[g] = fmaxf(M[g], redw[w][g]);
    }
    const int len = end - start;
    float lsum[G];
#pragma unroll
    for (int g = 0; g < G; g++) lsum[g] = 0.f;
    for (int i = tid; i < len; i += NT) {
#pragma unroll
      for (int g = 0; g < G; g++) {
        const float p = expf(S[g * chcap + i] - M[g]);
        S[g * chcap + i] = p;
        lsum[g] += p;
      }
    }
    __syncthreads();  // probabilities written; redw reusable
#pragma unroll
    for (int g = 0; g < G; g++) {
      const float l = warp_sum(lsum[g]);
      if (lane == 0) redw[warp][g] = l;
    }

    // P*V: TPR threads per row, 8 dims (16 bytes) each; RP rows at a time,
    // four rows a thread in flight.
    const int dp = tid % TPR, rp = tid / TPR;
    float acc[G][8];
#pragma unroll
    for (int g = 0; g < G; g++)
#pragma unroll
      for (int i = 0; i < 8; i++) acc[g][i] = 0.f;
    for (int j0 = start + rp; j0 < end; j0 += 4 * RP) {
      uint4 vv[4];
#pragma unroll
      for (int c = 0; c < 4; c++) {
        const int j = j0 + c * RP;
        vv[c] = j < end ? *(const uint4*)(Vc + hb + (size_t)j * HD + 8 * dp) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int c = 0; c < 4; c++) {
        const int j = j0 + c * RP;
        if (j < end) {
          const __half2* h2 = (const __half2*)&vv[c];
#pragma unroll
          for (int g = 0; g < G; g++) {
            const float p = S[g * chcap + (j - start)];
#pragma unroll
            for (int i = 0; i < 4; i++) {
              const float2 f = __half22float2(h2[i]);
              acc[g][2 * i] += p * f.x;
              acc[g][2 * i + 1] += p * f.y;
            }
          }
        }
      }
    }
#pragma unroll
    for (int g = 0; g < G; g++) {
      float4* r4 = (float4*)&red[rp][g][8 * dp];
      r4[0] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
      r4[1] = make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7]);
    }
    __syncthreads();
    for (int i = tid; i < G * HD; i += NT) {
      const int g = i / HD, d = i % HD;
      float s = 0.f;
#pragma unroll
      for (int r = 0; r < RP; r++) s += red[r][g][d];
      const int h = kvh * G + g;
      pacc[((size_t)h * nsplit + split) * HD + d] = s;
    }
    if (nact == 1) {  // one split: normalize and write the output directly
      for (int i = tid; i < G * HD; i += NT) {
        const int g = i / HD;
        float L = 0.f;
#pragma unroll
        for (int w = 0; w < NW; w++) L += redw[w][g];
        out[(size_t)(kvh * G) * HD + i] = pacc[((size_t)(kvh * G + g) * nsplit + split) * HD + i % HD] / L;
      }
      return;
    }
    if (tid < G) {
      const int h = kvh * G + tid;
      float L = 0.f;
#pragma unroll
      for (int w = 0; w < NW; w++) L += redw[w][tid];
      pm[h * nsplit + split] = M[tid];
      pl[h * nsplit + split] = L;
    }
  }

  // The last block of this KV head combines the splits: weights per split
  // first (in parallel over splits), then the outputs, 4 dims a thread,
  // the splits shared among NT/(G*HD/4) threads, loads 4 deep.
  __threadfence();
  __syncthreads();
  if (tid == 0) last = atomicAdd(&counter[kvh], 1u) == (unsigned)(nact - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (tid == 0) counter[kvh] = 0;
  float* wgt = &red[0][0][0];  // [G][RP*HD >= 1024] split weights
  constexpr int WS = RP * HD;
#pragma unroll
  for (int g = 0; g < G; g++) {
    const int h = kvh * G + g;
    float m = -INFINITY;
    for (int s = tid; s < nact; s += NT) m = fmaxf(m, __ldcg(&pm[h * nsplit + s]));
    m = warp_max(m);
    if (lane == 0) redw[warp][g] = m;
  }
  __syncthreads();
  float Mg[G];
#pragma unroll
  for (int g = 0; g < G; g++) {
    Mg[g] = redw[0][g];
#pragma unroll
    for (int w = 1; w < NW; w++) Mg[g] = fmaxf(Mg[g], redw[w][g]);
  }
  __syncthreads();
#pragma unroll
  for (int g = 0; g < G; g++) {
    const int h = kvh * G + g;
    float l = 0.f;
    for (int s = tid; s < nact; s += NT) {
      const float e = expf(__ldcg(&pm[h * nsplit + s]) - Mg[g]);
      wgt[g * WS + s] = e;
      l += __ldcg(&pl[h * nsplit + s]) * e;
    }
    l = warp_sum(l);
    if (lane == 0) redw[warp][g] = l;
  }
  __syncthreads();
  constexpr int ITEMS = G * HD / 4, TPI = NT / ITEMS > 0 ? NT / ITEMS : 1;
  __shared__ float4 part[NT];
  for (int it = tid % ITEMS; it < ITEMS; it += NT) {
    const int g = it / (HD / 4), d4 = it % (HD / 4);
    const int h = kvh * G + g;
    float4 o = make_float4(0.f, 0.f, 0.f, 0.f);
    int s = tid / ITEMS;
    for (; s + 3 * TPI < nact; s += 4 * TPI) {
      float4 v[4];
#pragma unroll
      for (int c = 0; c < 4; c++) v[c] = __ldcg((const float4*)&pacc[((size_t)h * nsplit + s + c * TPI) * HD] + d4);
#pragma unroll
      for (int c = 0; c < 4; c++) {
        const float w = wgt[g * WS + s + c * TPI];
        o.x += w * v[c].x;
        o.y += w * v[c].y;
        o.z += w * v[c].z;
        o.w += w * v[c].w;
      }
    }
    for (; s < nact; s += TPI) {
      const float4 v = __ldcg((const float4*)&pacc[((size_t)h * nsplit + s) * HD] + d4);
      const float w = wgt[g * WS + s];
      o.x += w * v.x;
      o.y += w * v.y;
      o.z += w * v.z;
      o.w += w * v.w;
    }
    if (tid < ITEMS * TPI) part[tid] = o;
  }
  __syncthreads();
  for (int it = tid; it < ITEMS; it += NT) {
    const int g = it / (HD / 4), d4 = it % (HD / 4);
    const int h = kvh * G + g;
    float L = 0.f;
#pragma unroll
    for (int w = 0; w < NW; w++) L += redw[w][g];
    float4 o = part[it];
    for (int p = 1; p < TPI; p++) {
      const float4 q = part[it + p * ITEMS];
      o.x += q.x;
      o.y += q.y;
      o.z += q.z;
      o.w += q.w;
    }
    const float inv = 1.f / L;
    ((float4*)(out + (size_t)h * HD))[d4] = make_float4(o.x * inv, o.y * inv, o.z * inv, o.w * inv);
  }
}

#define AD_ARGS                                                                                             \
  const float *__restrict__ qkv, int H, int KVH, const float *__restrict__ qgain,                          \
      const float *__restrict__ kgain, float eps, const float2 *__restrict__ rope,                         \
      const int *__restrict__ params, __half *Kc, __half *Vc, int cap, float scale, int nsplit, int chcap, \
      int minchunk, float *__restrict__ pm, float *__restrict__ pl, float *__restrict__ pacc,              \
      unsigned *counter, float *__restrict__ out
#define AD_INST(HD, G)                                                                                      \
  extern "C" __global__ void __launch_bounds__(ATTN_THREADS) attn_decode_h##HD##_g##G(AD_ARGS) {                    \
    attn_decode<HD, G>(qkv, H, KVH, qgain, kgain, eps, rope, params, Kc, Vc, cap, scale, nsplit, chcap,      \
                       minchunk, pm, pl, pacc, counter, out);                                               \
  }
AD_INST(32, 1)
AD_INST(32, 2)
AD_INST(32, 4)
AD_INST(64, 1)
AD_INST(64, 2)
AD_INST(64, 4)
AD_INST(128, 1)
AD_INST(128, 2)
AD_INST(128, 4)

// ---------------------------------------------------------------- decode attention, flash-decoding


// attn_fd: attention of the one new token, split-K with an online softmax
// (flash-decoding). Grid (KV heads, nsplit), NT threads (NW = NT/32 warps).
// Block (g, s) takes the G query heads of KV head g over the positions
// [s*chunk, min((s+1)*chunk, seq)), chunk = max(minchunk, ceil(seq/nsplit))
// (so up to minchunk positions one block does everything and writes out).
// The range is cut in tiles of TP positions (K rows, then V rows: 4 KB for
// R = 2); tile t belongs to warp t % NW. Each warp streams its tiles through
// its own ring of ST shared-memory stages with cp.async (ST-1 tiles in
// flight, the first ones issued before anything else), and keeps a running
// max, sum and output in registers: no block barrier in the loop, one pass
// over K and V. The new position's row is not read from the cache: the
// block holding it normalizes/rotates/appends the key and value and patches
// them into its stage. The warps then combine through shared memory; the
// splits in the last block of the KV head to finish (a counter per head,
// reset by that block), all splits' partials loaded at once. Scores are in
// log2 units (q is scaled by scale*log2(e)); pm holds log2-domain maxima.
// Dynamic shared memory: NW * ST * R * 2 KB for every head dim.
template <int HD, int G, int R, int ST, int NT>
__device__ __forceinline__ void attn_fd(const float* __restrict__ qkv, int H, int KVH,
                                        const float* __restrict__ qgain, const float* __restrict__ kgain,
                                        float eps, const float2* __restrict__ rope,
                                        const int* __restrict__ params, __half* Kc, __half* Vc, int cap,
                                        float scale, int nsplit, int chcap, int minchunk,
                                        float* __restrict__ pm, float* __restrict__ pl,
                                        float* __restrict__ pacc, unsigned* counter,
                                        float* __restrict__ out) {
  constexpr int NW = NT / 32;
  constexpr int LP = HD / 16;             // lanes per position when scoring (16 dims each)
  constexpr int PP = 32 / LP;             // positions per scoring pass
  constexpr int TP = PP * R;              // positions per tile
  constexpr int TPR = HD / 8;             // lanes per V row (8 dims, 16 bytes)
  constexpr int VR = 32 / TPR;            // V rows per pass (PP = 2*VR)
  constexpr int VK = TP / VR;             // V passes per tile
  constexpr int PART = TP * HD / 8;       // 16-byte pieces of the tile's K (and of its V)
  constexpr int CPL = 2 * PART / 32;      // 16-byte copies per lane per tile
  constexpr int TILE = 2 * TP * HD;       // halves per tile
  static_assert(PART % 32 == 0 && PP == 2 * VR, "tile shape");
  extern __shared__ __align__(16) __half afd_ring[];  // [NW][ST][TILE]
  __shared__ float qs[G][HD];
  __shared__ float kt[HD];
  __shared__ __align__(16) __half knew[HD];
  __shared__ __align__(16) __half vnew[HD];
  __shared__ float wm[NW][G], wl[NW][G];
  __shared__ __align__(16) float wacc[NW][G][HD];
  __shared__ int last;

  PDL_LAUNCH();
  const int kvh = blockIdx.x, split = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int pos = params[1], seq = pos + 1;
  const int chunk = max(minchunk, (seq + nsplit - 1) / nsplit);
  const int start = split * chunk, end = min(seq, start + chunk);
  const int nact = (seq + chunk - 1) / chunk;  // splits with positions
  if (start >= end) return;                     // nothing here; the active splits count themselves
  const size_t hb = (size_t)kvh * cap * HD;
  const int ntile = (end - start + TP - 1) / TP;
  const int nk = warp < ntile ? (ntile - warp + NW - 1) / NW : 0;  // this warp's tiles
  __half* ring = afd_ring + (size_t)warp * ST * TILE;

  // load(k): the warp's k-th tile into stage k % ST; the new position and
  // positions past the range are zero-filled. Always commits a group.
  auto load = [&](int k) {
    if (k < nk) {
      const int p0 = start + (k * NW + warp) * TP;
      __half* buf = ring + (k % ST) * TILE;
#pragma unroll
      for (int c = 0; c < CPL; c++) {
        const int idx = c * 32 + lane;
        const int part = c * 32 / PART;  // 0: K, 1: V (compile time)
        const int row = (idx - part * PART) / (HD / 8), piece = idx % (HD / 8);
        const int j = p0 + row;
        const bool ok = j < end && j != pos;
        const __half* src = (part ? Vc : Kc) + hb + (size_t)(ok ? j : 0) * HD + piece * 8;
        cp_async16z(buf + idx * 8, src, ok);
      }
    }
    cp_async_commit();
  };
#pragma unroll
  for (int k = 0; k < ST - 1; k++) load(k);
  PDL_WAIT();

  const bool owner = pos >= start && pos < end;
  for (int g = warp; g < G; g += NW)
    norm_rope_warp<HD>(qkv + (size_t)(kvh * G + g) * HD, qgain, eps, pos, rope, &qs[g][0]);
  if (owner && warp == NW - 1) norm_rope_warp<HD>(qkv + (size_t)(H + kvh) * HD, kgain, eps, pos, rope, kt);
  __syncthreads();
  if (owner) {
    for (int d = tid; d < HD; d += NT) {
      const __half kh = __float2half(kt[d]);
      const __half vh = __float2half(qkv[(size_t)(H + KVH + kvh) * HD + d]);
      Kc[hb + (size_t)pos * HD + d] = kh;
      Vc[hb + (size_t)pos * HD + d] = vh;
      knew[d] = kh;
      vnew[d] = vh;
    }
    __syncthreads();
  }

  // Scoring: lane sub of position slot takes dims sub*8.. and HD/2+sub*8..
  // (two 16-byte reads, each a contiguous 128 bytes per 8 lanes: no bank
  // conflicts). P*V: lane dp of row vr takes dims 8*dp..
  const int sub = lane % LP, slot = lane / LP;
  const int dp = lane % TPR, vr = lane / TPR;
  const float qscale = scale * 1.4426950408889634f;
  float qr[G][16];
#pragma unroll
  for (int g = 0; g < G; g++)
#pragma unroll
    for (int i = 0; i < 8; i++) {
      qr[g][i] = qs[g][sub * 8 + i] * qscale;
      qr[g][8 + i] = qs[g][HD / 2 + sub * 8 + i] * qscale;
    }
  float m[G], l[G], acc[G][8];
#pragma unroll
  for (int g = 0; g < G; g++) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < 8; i++) acc[g][i] = 0.f;
  }

  for (int k = 0; k < nk; k++) {
    cp_async_wait<ST - 2>();  // this lane's copies of tile k are done
    __syncwarp();             // ... and every lane's; stage (k-1)%ST is free
    load(k + ST - 1);
    const int p0 = start + (k * NW + warp) * TP;
    __half* kb = ring + (k % ST) * TILE;
    __half* vb = kb + TP * HD;
    // The new row (zero-filled) is patched in. Only the owner's: another
    // block's last tile may reach past its range to pos (masked there).
    if (owner && pos >= p0 && pos < p0 + TP) {
      const int r = pos - p0;
      for (int d = lane; d < HD; d += 32) {
        kb[r * HD + d] = knew[d];
        vb[r * HD + d] = vnew[d];
      }
      __syncwarp();
    }
    float s[R][G];
#pragma unroll
    for (int r = 0; r < R; r++) {
      const int i = r * PP + slot;
      uint4 kk[2];
      kk[0] = *(const uint4*)(kb + i * HD + sub * 8);
      kk[1] = *(const uint4*)(kb + i * HD + HD / 2 + sub * 8);
      float d[G];
#pragma unroll
      for (int g = 0; g < G; g++) d[g] = 0.f;
      const __half2* h2 = (const __half2*)kk;
#pragma unroll
      for (int i2 = 0; i2 < 8; i2++) {
        const float2 f = __half22float2(h2[i2]);
#pragma unroll
        for (int g = 0; g < G; g++) d[g] += qr[g][2 * i2] * f.x + qr[g][2 * i2 + 1] * f.y;
      }
#pragma unroll
      for (int g = 0; g < G; g++) {
#pragma unroll
        for (int o = LP / 2; o > 0; o >>= 1) d[g] += __shfl_xor_sync(FULL, d[g], o);
        s[r][g] = p0 + i < end ? d[g] : -INFINITY;
      }
    }
    float p[R][G];
#pragma unroll
    for (int g = 0; g < G; g++) {
      float tm = s[0][g];
#pragma unroll
      for (int r = 1; r < R; r++) tm = fmaxf(tm, s[r][g]);
#pragma unroll
      for (int o = LP; o < 32; o <<= 1) tm = fmaxf(tm, __shfl_xor_sync(FULL, tm, o));
      const float mn = fmaxf(m[g], tm);
      const float alpha = exp2f(m[g] - mn);
      m[g] = mn;
      float ps = 0.f;
#pragma unroll
      for (int r = 0; r < R; r++) {
        p[r][g] = exp2f(s[r][g] - mn);
        ps += p[r][g];
      }
      l[g] = l[g] * alpha + ps;
#pragma unroll
      for (int i = 0; i < 8; i++) acc[g][i] *= alpha;
    }
#pragma unroll
    for (int kv = 0; kv < VK; kv++) {
      const int i = kv * VR + vr;
      const uint4 vv = *(const uint4*)(vb + i * HD + 8 * dp);
      const __half2* h2 = (const __half2*)&vv;
      const int src = (i % PP) * LP;
#pragma unroll
      for (int g = 0; g < G; g++) {
        const float pg = __shfl_sync(FULL, p[kv * VR / PP][g], src);
#pragma unroll
        for (int i2 = 0; i2 < 4; i2++) {
          const float2 f = __half22float2(h2[i2]);
          acc[g][2 * i2] += pg * f.x;
          acc[g][2 * i2 + 1] += pg * f.y;
        }
      }
    }
  }
  cp_async_wait<0>();

  // Warps -> block.
#pragma unroll
  for (int g = 0; g < G; g++) {
#pragma unroll
    for (int o = LP; o < 32; o <<= 1) l[g] += __shfl_xor_sync(FULL, l[g], o);
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
      for (int o = TPR; o < 32; o <<= 1) acc[g][i] += __shfl_xor_sync(FULL, acc[g][i], o);
    if (lane < TPR) {
      float4* w4 = (float4*)&wacc[warp][g][8 * dp];
      w4[0] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
      w4[1] = make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7]);
    }
    if (lane == 0) {
      wm[warp][g] = m[g];
      wl[warp][g] = l[g];
    }
  }
  __syncthreads();
  for (int it = tid; it < G * HD; it += NT) {
    const int g = it / HD, d = it % HD;
    float M = wm[0][g];
#pragma unroll
    for (int w = 1; w < NW; w++) M = fmaxf(M, wm[w][g]);
    float L = 0.f, o = 0.f;
#pragma unroll
    for (int w = 0; w < NW; w++) {
      const float e = exp2f(wm[w][g] - M);  // 0 for a warp without positions
      L += wl[w][g] * e;
      o += wacc[w][g][d] * e;
    }
    const int h = kvh * G + g;
    if (nact == 1) {
      out[(size_t)h * HD + d] = o / L;
    } else {
      pacc[((size_t)h * nsplit + split) * HD + d] = o;
      if (d == 0) {
        pm[h * nsplit + split] = M;
        pl[h * nsplit + split] = L;
      }
    }
  }
  if (nact == 1) return;

  // The last block of this KV head combines the splits, a thread per
  // output value, 16 splits' partials loaded at once.
  __threadfence();
  __syncthreads();
  if (tid == 0) last = atomicAdd(&counter[kvh], 1u) == (unsigned)(nact - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (tid == 0) counter[kvh] = 0;
  constexpr int SB = 16;
  for (int it = tid; it < G * HD; it += NT) {
    const int g = it / HD, d = it % HD;
    const int h = kvh * G + g;
    float M = -INFINITY, L = 0.f, o = 0.f;
    for (int s0 = 0; s0 < nact; s0 += SB) {
      float ms[SB], ls[SB], as[SB];
#pragma unroll
      for (int c = 0; c < SB; c++) {
        const int s = s0 + c;
        const bool ok = s < nact;
        ms[c] = ok ? __ldcg(&pm[h * nsplit + s]) : -INFINITY;
        ls[c] = ok ? __ldcg(&pl[h * nsplit + s]) : 0.f;
        as[c] = ok ? __ldcg(&pacc[((size_t)h * nsplit + s) * HD + d]) : 0.f;
      }
      float mn = M;
#pragma unroll
      for (int c = 0; c < SB; c++) mn = fmaxf(mn, ms[c]);
      const float alpha = exp2f(M - mn);
      L *= alpha;
      o *= alpha;
#pragma unroll
      for (int c = 0; c < SB; c++) {
        const float e = exp2f(ms[c] - mn);
        L += ls[c] * e;
        o += as[c] * e;
      }
      M = mn;
    }
    out[(size_t)h * HD + d] = o / L;
  }
}

#define AFD_INST(HD, G, R, ST, NT)                                                                               \
  extern "C" __global__ void __launch_bounds__(NT) attn_fd_h##HD##_g##G##_r##R##_s##ST##_t##NT(AD_ARGS) {      \
    attn_fd<HD, G, R, ST, NT>(qkv, H, KVH, qgain, kgain, eps, rope, params, Kc, Vc, cap, scale, nsplit, chcap,     \
                              minchunk, pm, pl, pacc, counter, out);                                            \
  }
AFD_INST(32, 1, 1, 3, 256)
AFD_INST(32, 2, 1, 3, 256)
AFD_INST(32, 4, 1, 3, 256)
AFD_INST(64, 1, 1, 3, 256)
AFD_INST(64, 2, 1, 3, 256)
AFD_INST(64, 4, 1, 3, 256)
AFD_INST(128, 1, 1, 3, 256)
AFD_INST(128, 2, 1, 3, 256)
AFD_INST(128, 4, 1, 3, 256)
// Variants for tuning sweeps (INFERNO_CUDA_TUNE ar=, ast=, at=).
AFD_INST(128, 2, 2, 3, 256)
AFD_INST(128, 2, 1, 4, 256)
AFD_INST(128, 2, 1, 3, 512)
AFD_INST(128, 2, 1, 4, 512)
AFD_INST(128, 2, 2, 3, 512)

// ---------------------------------------------------------------- prefill

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
// m16n8k32 s8): a 64x64 tile of (rows, tokens) per block of 4 warps, each
// warp 32x32; one Q8_0 block (k = 32) per pipeline stage, 4 stages of
// cp.async. W is int8 rows x K (rows padded to a multiple of 64), wdc its
// scales block-major [K/32][mpad]; X is the hi/lo planes [npad][K] and
// scales [K/32][npad]. Y is token-major: Y[t*ldy + r]. Epilogues as mv_q8's
// (EP_SWIGLU pairs rows i and i+8 of each 16-row group, which sit in the
// same thread's accumulators).
template <int EP>
__device__ __forceinline__ void mm_q8(const i8* __restrict__ W, const __half* __restrict__ wdc, int M, int mpad,
                                      int K, const i8* __restrict__ Xh, const i8* __restrict__ Xl,
                                      const float* __restrict__ Xs, int N, int npad, float* __restrict__ Y,
                                      int ldy, int nout) {
  constexpr int ST = 4, RS = 48;  // stages; smem row stride in bytes (32 + 16 padding)
  __shared__ __align__(16) i8 Ws[ST][64 * RS];
  __shared__ __align__(16) i8 Hs[ST][64 * RS];
  __shared__ __align__(16) i8 Ls[ST][64 * RS];
  __shared__ __align__(16) __half Wd[ST][64];
  __shared__ __align__(16) float Xd[ST][64];

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int gid = lane >> 2, tig = lane & 3;
  const int wm = warp & 1, wn = warp >> 1;
  const int m0 = blockIdx.x * 64, n0 = blockIdx.y * 64;
  const int nkb = K >> 5;

  auto load = [&](int st, int kb) {
    const int row = tid >> 1, hf = (tid & 1) * 16;
    cp_async16(&Ws[st][row * RS + hf], W + (size_t)(m0 + row) * K + kb * 32 + hf);
    cp_async16(&Hs[st][row * RS + hf], Xh + (size_t)(n0 + row) * K + kb * 32 + hf);
    cp_async16(&Ls[st][row * RS + hf], Xl + (size_t)(n0 + row) * K + kb * 32 + hf);
    if (tid < 8)
      cp_async16(&Wd[st][tid * 8], wdc + (size_t)kb * mpad + m0 + tid * 8);
    else if (tid < 24)
      cp_async16(&Xd[st][(tid - 8) * 4], Xs + (size_t)kb * npad + n0 + (tid - 8) * 4);
  };

  float acc[2][4][4];
#pragma unroll
  for (int a = 0; a < 2; a++)
#pragma unroll
    for (int b = 0; b < 4; b++)
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
    float wdv[2][2], xdv[4][2];
#pragma unroll
    for (int mt = 0; mt < 2; mt++) {
      wdv[mt][0] = __half2float(Wd[st][wm * 32 + mt * 16 + gid]);
      wdv[mt][1] = __half2float(Wd[st][wm * 32 + mt * 16 + gid + 8]);
    }
#pragma unroll
    for (int nt = 0; nt < 4; nt++) {
      const int c = wn * 32 + nt * 8;
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
    for (int nt = 0; nt < 4; nt++) {
      const int rbase = m0 + wm * 32 + mt * 16;
      const int col = n0 + wn * 32 + nt * 8 + tig * 2;
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
#define MM_INST(NAME, EP)                                                                   \
  extern "C" __global__ void __launch_bounds__(128) NAME(MM_ARGS) {                         \
    mm_q8<EP>(W, wdc, M, mpad, K, Xh, Xl, Xs, N, npad, Y, ldy, nout);                      \
  }
MM_INST(mm_q8_store, EP_STORE)
MM_INST(mm_q8_add, EP_ADD)
MM_INST(mm_q8_swiglu, EP_SWIGLU)

// qk_rope_n: for n tokens at positions pos0.., normalize and rotate the
// query heads into q (token-major, H*HD a token) and the key heads into the
// cache, and copy the value heads into the cache. One block (4 warps) per
// token, a warp per head.
template <int HD>
__device__ __forceinline__ void qk_rope_n(const float* __restrict__ qkv, int pos0, int H, int KVH,
                                          const float* __restrict__ qgain, const float* __restrict__ kgain,
                                          float eps, const float2* __restrict__ rope, float* __restrict__ q,
                                          __half* Kc, __half* Vc, int cap) {
  __shared__ float tmp[4][HD];
  const int t = blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int pos = pos0 + t;
  const float* src = qkv + (size_t)t * (H + 2 * KVH) * HD;
  for (int hh = warp; hh < H + 2 * KVH; hh += 4) {
    if (hh < H) {
      norm_rope_warp<HD>(src + (size_t)hh * HD, qgain, eps, pos, rope, q + ((size_t)t * H + hh) * HD);
    } else if (hh < H + KVH) {
      const int kh = hh - H;
      norm_rope_warp<HD>(src + (size_t)hh * HD, kgain, eps, pos, rope, tmp[warp]);
      __syncwarp();
      for (int d = lane; d < HD; d += 32) Kc[((size_t)kh * cap + pos) * HD + d] = __float2half(tmp[warp][d]);
      __syncwarp();
    } else {
      const int vh = hh - H - KVH;
      for (int d = lane; d < HD; d += 32)
        Vc[((size_t)vh * cap + pos) * HD + d] = __float2half(src[(size_t)hh * HD + d]);
    }
  }
}

#define QR_INST(HD)                                                                                              \
  extern "C" __global__ void __launch_bounds__(128)                                                              \
      qk_rope_n_h##HD(const float* __restrict__ qkv, int pos0, int H, int KVH, const float* __restrict__ qgain, \
                      const float* __restrict__ kgain, float eps, const float2* __restrict__ rope,             \
                      float* __restrict__ q, __half* Kc, __half* Vc, int cap) {                                 \
    qk_rope_n<HD>(qkv, pos0, H, KVH, qgain, kgain, eps, rope, q, Kc, Vc, cap);                                  \
  }
QR_INST(32)
QR_INST(64)
QR_INST(128)

// attn_prefill: causal attention of n query tokens at positions pos0..
// against the cache (keys 0..pos0+n-1, already appended). Grid (ceil(n/32),
// H), 8 warps of 4 queries each; keys in tiles of 32 through shared memory,
// one key a lane when scoring; online softmax per query.
template <int HD>
__device__ __forceinline__ void attn_prefill(const float* __restrict__ q, int n, int pos0, int H, int KVH,
                                             const __half* __restrict__ Kc, const __half* __restrict__ Vc,
                                             int cap, float scale, float* __restrict__ out) {
  constexpr int QT = 32, KT = 32, HW = HD / 2, CW = (HW + 31) / 32;
  __shared__ float qs[QT][HD];
  __shared__ __half2 ks[KT][HW + 1];
  __shared__ __half2 vs[KT][HW];
  __shared__ float ps[8][4][KT];

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int h = blockIdx.y, kvh = h / (H / KVH);
  const int q0 = blockIdx.x * QT;
  const int qn = min(QT, n - q0);
  const size_t hb = (size_t)kvh * cap * HD;
  for (int i = tid; i < QT * HD; i += blockDim.x) {
    const int r = i / HD, d = i % HD;
    qs[r][d] = r < qn ? q[((size_t)(q0 + r) * H + h) * HD + d] : 0.f;
  }
  const int kend = pos0 + q0 + qn;  // keys this block needs

  float m[4], l[4], acc[4][CW][2];
#pragma unroll
  for (int i = 0; i < 4; i++) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int c = 0; c < CW; c++) acc[i][c][0] = acc[i][c][1] = 0.f;
  }
  for (int k0 = 0; k0 < kend; k0 += KT) {
    __syncthreads();
    for (int i = tid; i < KT * HW; i += blockDim.x) {
      const int kk = i / HW, w = i % HW;
      const int key = k0 + kk;
      __half2 kv = __floats2half2_rn(0.f, 0.f), vv = kv;
      if (key < kend) {
        kv = ((const __half2*)(Kc + hb + (size_t)key * HD))[w];
        vv = ((const __half2*)(Vc + hb + (size_t)key * HD))[w];
      }
      ks[kk][w] = kv;
      vs[kk][w] = vv;
    }
    __syncthreads();
    float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 8
    for (int w = 0; w < HW; w++) {
      const float2 kf = __half22float2(ks[lane][w]);
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const float2 qf = *(const float2*)&qs[warp * 4 + i][2 * w];
        s[i] += qf.x * kf.x + qf.y * kf.y;
      }
    }
    const int key = k0 + lane;
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int qi = warp * 4 + i;
      const bool ok = qi < qn && key < kend && key <= pos0 + q0 + qi;
      const float sc = ok ? s[i] * scale : -INFINITY;
      const float mx = warp_max(sc);
      const float mn = fmaxf(m[i], mx);
      float p = 0.f, corr = 1.f;
      if (mn != -INFINITY) {
        p = ok ? expf(sc - mn) : 0.f;
        corr = m[i] == -INFINITY ? 0.f : expf(m[i] - mn);
      }
      l[i] = l[i] * corr + warp_sum(p);
      m[i] = mn;
#pragma unroll
      for (int c = 0; c < CW; c++) {
        acc[i][c][0] *= corr;
        acc[i][c][1] *= corr;
      }
      ps[warp][i][lane] = p;
    }
    __syncwarp();
#pragma unroll 4
    for (int kk = 0; kk < KT; kk++) {
#pragma unroll
      for (int c = 0; c < CW; c++) {
        const int w = lane + 32 * c;
        if (w < HW) {
          const float2 vf = __half22float2(vs[kk][w]);
#pragma unroll
          for (int i = 0; i < 4; i++) {
            const float p = ps[warp][i][kk];
            acc[i][c][0] += p * vf.x;
            acc[i][c][1] += p * vf.y;
          }
        }
      }
    }
    __syncwarp();
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int qi = warp * 4 + i;
    if (qi >= qn) continue;
    float* o = out + ((size_t)(q0 + qi) * H + h) * HD;
    const float inv = 1.f / l[i];
#pragma unroll
    for (int c = 0; c < CW; c++) {
      const int w = lane + 32 * c;
      if (w < HW) {
        o[2 * w] = acc[i][c][0] * inv;
        o[2 * w + 1] = acc[i][c][1] * inv;
      }
    }
  }
}

#define AP_INST(HD)                                                                                       \
  extern "C" __global__ void __launch_bounds__(256)                                                       \
      attn_prefill_h##HD(const float* __restrict__ q, int n, int pos0, int H, int KVH,                   \
                         const __half* __restrict__ Kc, const __half* __restrict__ Vc, int cap, float scale, \
                         float* __restrict__ out) {                                                       \
    attn_prefill<HD>(q, n, pos0, H, KVH, Kc, Vc, cap, scale, out);                                        \
  }
AP_INST(32)
AP_INST(64)
AP_INST(128)

// kv_copy moves the first len positions of each of heads KV heads from a
// cache of capacity ocap to one of capacity ncap (growing the cache).
extern "C" __global__ void kv_copy(const __half* __restrict__ src, __half* __restrict__ dst, int heads, int len,
                                   int ocap, int ncap, int hd) {
  const size_t per = (size_t)len * hd;
  const size_t total = per * heads;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
    const size_t h = i / per, r = i % per;
    dst[h * ncap * hd + r] = src[h * ocap * hd + r];
  }
}

// noop does nothing (graph overhead measurements).
extern "C" __global__ void noop(int* p) {
  if (p && threadIdx.x == 0 && blockIdx.x == 0) *p = 0;
}

// ---------------------------------------------------------------------------
// Top-k selection for sampling: the k largest logits of a position and their
// ids, so that a sampler with top_k set reads back k pairs instead of the
// whole vocabulary. Two stages: topk_partial (one block per chunk of the
// vocabulary, each keeping its chunk's k best) and topk_final (one block
// merging the partial lists). Both select by k rounds of a block-wide
// argmax in the argmax order (`better`: larger first, lower id among ties,
// NaN last); a thread caches the best of its own elements and rescans only
// when its candidate was taken. TOPK_MAX bounds k; TOPK_SMEM the elements
// one block holds in shared memory.
#define TOPK_MAX 128
#define TOPK_THREADS 256
#define TOPK_SMEM 4096

// topk_block selects the k best of sv/si[0:n) (in shared memory) into
// ov/oi[0:k) (global); entries past n are never chosen. Entries taken are
// marked with id -1. Every thread of the block calls it.
__device__ void topk_block(float* sv, int* si, int n, int k, float* __restrict__ ov, int* __restrict__ oi) {
  __shared__ float wv[TOPK_THREADS / 32];
  __shared__ int wi[TOPK_THREADS / 32], wp[TOPK_THREADS / 32];
  __shared__ int takenPos;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // Each thread's best own element: value, id and position in shared memory.
  float bv = NAN;
  int bi = 0x7fffffff, bp = -1;
  auto rescan = [&]() {
    bv = NAN;
    bi = 0x7fffffff;
    bp = -1;
    for (int p = threadIdx.x; p < n; p += TOPK_THREADS) {
      const int id = si[p];
      if (id >= 0 && (bp < 0 || better(sv[p], id, bv, bi))) {
        bv = sv[p];
        bi = id;
        bp = p;
      }
    }
  };
  rescan();
  for (int r = 0; r < k; r++) {
    float v = bv;
    int id = bi, p = bp;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ov2 = __shfl_xor_sync(FULL, v, o);
      const int oi2 = __shfl_xor_sync(FULL, id, o);
      const int op2 = __shfl_xor_sync(FULL, p, o);
      if (op2 >= 0 && (p < 0 || better(ov2, oi2, v, id))) {
        v = ov2;
        id = oi2;
        p = op2;
      }
    }
    if (lane == 0) {
      wv[warp] = v;
      wi[warp] = id;
      wp[warp] = p;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      float fv = wv[0];
      int fi = wi[0], fp = wp[0];
      for (int w = 1; w < TOPK_THREADS / 32; w++)
        if (wp[w] >= 0 && (fp < 0 || better(wv[w], wi[w], fv, fi))) {
          fv = wv[w];
          fi = wi[w];
          fp = wp[w];
        }
      ov[r] = fp >= 0 ? fv : -INFINITY;
      oi[r] = fp >= 0 ? fi : -1;
      takenPos = fp;
      if (fp >= 0) si[fp] = -1;
    }
    __syncthreads();
    if (takenPos >= 0 && takenPos == bp) rescan();
    __syncthreads();
  }
}

// topk_partial: block b takes the b-th chunk of n logits (chunks of
// ceil(n / gridDim.x), at most TOPK_SMEM) and writes its k best to
// pval/pidx[b*k ..]: ids -1 where the chunk has fewer than k.
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) topk_partial(const float* __restrict__ logits, int n, int k,
                                                                        float* __restrict__ pval, int* __restrict__ pidx) {
  __shared__ float sv[TOPK_SMEM];
  __shared__ int si[TOPK_SMEM];
  const int chunk = (n + gridDim.x - 1) / gridDim.x;
  const int lo = blockIdx.x * chunk, hi = min(n, lo + chunk);
  const int m = max(0, hi - lo);
  for (int p = threadIdx.x; p < m; p += TOPK_THREADS) {
    sv[p] = logits[lo + p];
    si[p] = lo + p;
  }
  __syncthreads();
  topk_block(sv, si, m, k, pval + blockIdx.x * k, pidx + blockIdx.x * k);
}

// topk_final merges the n partial candidates (ids -1 are empty) into the k
// best, written to out as k floats then k ints.
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) topk_final(const float* __restrict__ pval,
                                                                      const int* __restrict__ pidx, int n, int k,
                                                                      float* __restrict__ out) {
  __shared__ float sv[TOPK_SMEM];
  __shared__ int si[TOPK_SMEM];
  for (int p = threadIdx.x; p < n; p += TOPK_THREADS) {
    sv[p] = pval[p];
    si[p] = pidx[p];
  }
  __syncthreads();
  topk_block(sv, si, n, k, out, reinterpret_cast<int*>(out + k));
}
