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
//   KV cache: f16, per layer [kv head][capacity][head dim] (Runner); the
//   BatchRunner's pool: per layer [block][kv head][block size][head dim],
//   found through per-sequence block tables.
//
// Sections: helpers; embedding; matvec (decode, one token); sampling:
// argmax; attention (decode): flash-decoding; matmul (prefill): int8
// tensor cores; attention (prefill); KV cache; sampling: top-k; batched
// forward over a paged KV cache (skinny matmul, paged decode attention,
// paged prefill attention on f16 tensor cores).
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

// ================================================================ helpers

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

// ================================================================ embedding

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

// ================================================================ matvec (decode): one token

// ---------------------------------------------------------------- int16 activation planes, dp4a

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

// ================================================================ sampling: argmax

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

// ================================================================ helpers: cp.async

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

// ================================================================ helpers: QK norm + RoPE

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


#include "attn_decode.cuh"


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

#include "attn_prefill.cuh"


// ================================================================ KV cache

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

// ================================================================ misc

// noop does nothing (graph overhead measurements).
extern "C" __global__ void noop(int* p) {
  if (p && threadIdx.x == 0 && blockIdx.x == 0) *p = 0;
}

// ================================================================ sampling: top-k

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

// ================================================================ batched forward over a paged KV cache
//
// The kernels of BatchRunner (batch*.go): one forward pass over the tokens
// of many sequences. The KV cache is a pool of blocks shared by all
// sequences: per layer, K and V are each [block][kv head][bs][head dim]
// f16 (bs positions a block); position p of a sequence lives in row p % bs
// of block tab[p / bs], tab being the sequence's block table. Per-token
// inputs come from one int32 array uploaded before the pass (the "meta"):
// tokens, positions, each token's table offset into the flattened tables,
// the decode-token list, the prefill tiles and the output rows.

// kv_row returns the offset (in halves) of position p's row of KV head kvh
// in one layer's pool; sh = log2(bs) when bs is a power of two (shifts
// instead of divisions), else -1.
__device__ __forceinline__ size_t kv_row(const int* __restrict__ tab, int p, int bs, int sh, int KVH, int kvh, int HD) {
  const int b = sh >= 0 ? p >> sh : p / bs;
  const int r = p - b * bs;
  return (((size_t)tab[b] * KVH + kvh) * bs + r) * HD;
}

// mma_s8n and mma_f16 are register-only (not volatile: the compiler may
// schedule loads around them).
__device__ __forceinline__ void mma_s8n(int (&d)[4], const int (&a)[4], int b0, int b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0), "r"(0));
}

// bembed_step starts a batched decode step (replayed from a graph) when
// the inputs are read zero-copy (INFERNO_CUDA_BATCH zc > 0; by default the
// host copies them and the graph starts with embed_q8: reads of mapped
// host memory cost ~1 us each, serialized): the host wrote the step's meta
// to page-locked host memory (hmeta, mapped into
// the GPU's address space); hmeta[0] is the number of ints to copy to the
// device copy dmeta (a multiple of 4; 0 when the host copied them itself).
// The blocks copy it between them, then block b embeds token
// hmeta[tokoff + b] into x[b].
extern "C" __global__ void __launch_bounds__(256) bembed_step(const i8* __restrict__ wq, const __half* __restrict__ wd,
                                                              int K, const int* hmeta, int* __restrict__ dmeta,
                                                              int tokoff, float* __restrict__ x) {
  __shared__ int tok;
  if (threadIdx.x == 0) tok = __ldcv(hmeta + tokoff + blockIdx.x);  // in flight with the header's read
  const int n4 = __ldcv(hmeta) >> 2;
  const int4* src = (const int4*)hmeta;
  int4* dst = (int4*)dmeta;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) dst[i] = __ldcv(src + i);
  __syncthreads();
  const int nb = K >> 5;
  float* xt = x + (size_t)blockIdx.x * K;
  for (int i = threadIdx.x; i < K; i += blockDim.x)
    xt[i] = __half2float(wd[(size_t)tok * nb + (i >> 5)]) * (float)wq[(size_t)tok * K + i];
}

// bembed_dec starts a batch decode step whose inputs the host copied to
// meta (one block a token): token b is meta[4 + b], or, for b < meta[3],
// devtok[b], the previous step's argmax: a lookahead step, queued before
// the host has read that argmax.
extern "C" __global__ void __launch_bounds__(256) bembed_dec(const i8* __restrict__ wq, const __half* __restrict__ wd,
                                                             int K, const int* __restrict__ meta,
                                                             const int* __restrict__ devtok, float* __restrict__ x) {
  __shared__ int tok;
  PDL_LAUNCH();  // a one-token graph's QKV product may load its weights meanwhile
  if (threadIdx.x == 0) tok = (int)blockIdx.x < meta[3] ? devtok[blockIdx.x] : meta[4 + blockIdx.x];
  __syncthreads();
  const int nb = K >> 5;
  float* xt = x + (size_t)blockIdx.x * K;
  for (int i = threadIdx.x; i < K; i += blockDim.x)
    xt[i] = __half2float(wd[(size_t)tok * nb + (i >> 5)]) * (float)wq[(size_t)tok * K + i];
}

// gather_rows: y[i] = x[idx[i]] for rows of K floats (the output rows,
// gathered before the final norm and the output head). One block a row.
extern "C" __global__ void __launch_bounds__(256) gather_rows(const float* __restrict__ x, int K,
                                                              const int* __restrict__ idx, float* __restrict__ y) {
  const float* src = x + (size_t)idx[blockIdx.x] * K;
  float* dst = y + (size_t)blockIdx.x * K;
  for (int i = threadIdx.x; i < K; i += blockDim.x) dst[i] = src[i];
}

// ---------------------------------------------------------------- skinny matmul (batched decode)

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
// grid = 16-row tiles / (8/KS).
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

  for (int n0 = 0; n0 < N; n0 += NT * 8) {
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
      for (int j = 0; j < NT; j++) {
        const int c = n0 + j * 8 + tig * 2;
        if (EP == EP_SWIGLU) {
          const int o = (m0 >> 1) + gid;
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const float g = acc[j][e], u = acc[j][e + 2];
            if (o < nout && c + e < N) Y[(size_t)(c + e) * ldy + o] = g / (1.f + expf(-g)) * u;
          }
        } else {
#pragma unroll
          for (int i = 0; i < 4; i++) {
            const int row = m0 + gid + (i >> 1) * 8;
            const int cc = c + (i & 1);
            if (row < M && cc < N) {
              if (EP == EP_ADD)
                Y[(size_t)cc * ldy + row] += acc[j][i];
              else
                Y[(size_t)cc * ldy + row] = acc[j][i];
            }
          }
        }
      }
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

// quant_actv: quant_act for mmv_q8x: token t (one block each) quantized as
// quant_act does, stored k-block-major and interleaved: k-block b of
// token t is 64 bytes at xq + (b*npad + t)*64, for each quarter q
// (elements 8q..8q+7 of the block) its 8 hi bytes then its 8 lo bytes;
// scales sx[b*npad + t].
extern "C" __global__ void __launch_bounds__(256) quant_actv(const float* __restrict__ x, int K, int ldx,
                                                             const float* __restrict__ gain, float eps,
                                                             i8* __restrict__ xq, float* __restrict__ sx, int npad) {
  __shared__ double red[32];
  const int t = blockIdx.x;
  const float* xt = x + (size_t)t * ldx;
  float scale = 1.f;
  if (gain) scale = rms_scale(xt, K, eps, red);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  for (int b = warp; b < (K >> 5); b += nw) {
    const int i = b * 32 + lane;
    float v = xt[i];
    if (gain) v = v * scale * gain[i];
    const float a = warp_max(fabsf(v));
    int q = 0;
    if (a > 0.f) q = __float2int_rn(v * (QMAX / a));
    q = max(-32512, min(32512, q));
    const int h = (q + 128) >> 8;
    i8* dst = xq + ((size_t)b * npad + t) * 64 + (lane >> 3) * 16 + (lane & 7);
    dst[0] = (i8)h;
    dst[8] = (i8)(q - h * 256);
    if (lane == 0) sx[(size_t)b * npad + t] = a / QMAX;
  }
}

// argmax_rows: the argmax of each of n rows of V logits (one block of 1024
// threads a row; the lowest id among ties, NaN last), to out[row] and to
// page-locked host memory host[row]; the last block to finish (counter,
// reset by it) then writes the step number *step to host[n], where the
// host polls for it.
extern "C" __global__ void __launch_bounds__(1024) argmax_rows(const float* __restrict__ logits, int V, int n,
                                                               int* __restrict__ out, volatile int* host,
                                                               const int* __restrict__ step, unsigned* counter) {
  __shared__ float sv[32];
  __shared__ int si[32];
  const float* x = logits + (size_t)blockIdx.x * V;
  float bv = NAN;
  int bi = 0x7fffffff;
  for (int i = threadIdx.x; i < V; i += blockDim.x) {
    const float v = x[i];
    if (better(v, i, bv, bi)) {
      bv = v;
      bi = i;
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
      out[blockIdx.x] = bi;
      host[blockIdx.x] = bi;
      __threadfence_system();
      if (atomicAdd(counter, 1u) == (unsigned)(n - 1)) {
        *counter = 0;
        __threadfence_system();
        host[n] = *step;
      }
    }
  }
}

// kv_block_copy copies block src to block dst in every buffer of the pool
// (bufs: 2*layers device pointers, keys and values of each layer; blk
// halves a block). Grid (chunks, buffers).
extern "C" __global__ void kv_block_copy(const unsigned long long* __restrict__ bufs, long long blk, int dst, int src) {
  int4* base = (int4*)bufs[blockIdx.y];
  const long long n = blk / 8;  // int4s a block
  const int4* s = base + (long long)src * n;
  int4* d = base + (long long)dst * n;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    d[i] = s[i];
}

// ---------------------------------------------------------------- paged prefill attention (tensor cores)

__device__ __forceinline__ void mma_f16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void ldsm_x4_t(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(s));
}

__device__ __forceinline__ unsigned pack_h2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *(const unsigned*)&h;
}

#include "attn_paged.cuh"

// Block formats other than Q8_0 (backend/cuda/quant*.go): matvec, f16 tensor-core matmul, embedding.
#include "quant.cuh"
