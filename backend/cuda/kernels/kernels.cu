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


// ================================================================ attention (decode): flash-decoding

// The decode attention kernel's arguments (attn_fd and its variants).
#define AD_ARGS                                                                                             \
  const float *__restrict__ qkv, int H, int KVH, const float *__restrict__ qgain,                          \
      const float *__restrict__ kgain, float eps, const float2 *__restrict__ rope,                         \
      const int *__restrict__ params, __half *Kc, __half *Vc, int cap, float scale, int nsplit, int chcap, \
      int minchunk, float *__restrict__ pm, float *__restrict__ pl, float *__restrict__ pacc,              \
      unsigned *counter, float *__restrict__ out

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

// ================================================================ attention (prefill)

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

// qk_rope_paged: qk_rope_n for the tokens of a batch, each at its own
// position pos[t] of its own sequence (table tabs + toff[t]): the query
// heads, normalized and rotated, to q (token-major), the key heads
// normalized and rotated and the value heads into the paged cache. One
// block (4 warps) per token.
template <int HD>
__device__ __forceinline__ void qk_rope_paged(const float* __restrict__ qkv, const int* __restrict__ pos,
                                              const int* __restrict__ toff, const int* __restrict__ tabs, int bs, int sh,
                                              int H, int KVH, const float* __restrict__ qgain,
                                              const float* __restrict__ kgain, float eps,
                                              const float2* __restrict__ rope, float* __restrict__ q, __half* Kc,
                                              __half* Vc) {
  __shared__ float tmp[4][HD];
  const int t = blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int p = pos[t];
  const int* tab = tabs + toff[t];
  const float* src = qkv + (size_t)t * (H + 2 * KVH) * HD;
  for (int hh = warp; hh < H + 2 * KVH; hh += 4) {
    if (hh < H) {
      norm_rope_warp<HD>(src + (size_t)hh * HD, qgain, eps, p, rope, q + ((size_t)t * H + hh) * HD);
    } else if (hh < H + KVH) {
      const int kh = hh - H;
      norm_rope_warp<HD>(src + (size_t)hh * HD, kgain, eps, p, rope, tmp[warp]);
      __syncwarp();
      const size_t row = kv_row(tab, p, bs, sh, KVH, kh, HD);
      for (int d = lane; d < HD; d += 32) Kc[row + d] = __float2half(tmp[warp][d]);
      __syncwarp();
    } else {
      const int vh = hh - H - KVH;
      const size_t row = kv_row(tab, p, bs, sh, KVH, vh, HD);
      for (int d = lane; d < HD; d += 32) Vc[row + d] = __float2half(src[(size_t)hh * HD + d]);
    }
  }
}

#define QRP_INST(HD)                                                                                               \
  extern "C" __global__ void __launch_bounds__(128) qk_rope_paged_h##HD(                                           \
      const float* __restrict__ qkv, const int* __restrict__ pos, const int* __restrict__ toff,                   \
      const int* __restrict__ tabs, int bs, int sh, int H, int KVH, const float* __restrict__ qgain,                      \
      const float* __restrict__ kgain, float eps, const float2* __restrict__ rope, float* __restrict__ q,         \
      __half* Kc, __half* Vc) {                                                                                   \
    qk_rope_paged<HD>(qkv, pos, toff, tabs, bs, sh, H, KVH, qgain, kgain, eps, rope, q, Kc, Vc);                      \
  }
QRP_INST(32)
QRP_INST(64)
QRP_INST(128)

// ---------------------------------------------------------------- paged decode attention (flash-decoding)

// pattn_dec: attn_fd (R = 1, 3 stages, 256 threads) for the decode tokens
// of a batch, each its own sequence at its own length, through the block
// tables. Grid (KV heads, nsplit, tokens): block (g, s, z) takes token
// t = z (FUSED) or toks[z], at position pos[t], and the G query heads of KV
// head g over the positions [s*chunk, min((s+1)*chunk, pos+1)), chunk =
// max(minchunk, ceil((pos+1)/nsplit)): lengths come from device memory, so
// a captured graph serves every length. FUSED (pure decode batches): src
// is the QKV projection (H+2*KVH heads a token); the kernel normalizes and
// rotates the queries, and the block holding the new position also the
// key, appending key and value to the cache (as attn_fd does). Otherwise
// src holds the rotated queries (H heads a token) and the cache already
// holds every key and value (qk_rope_paged ran first). Partials per
// (z, head, split); counters per (z, KV head).
//
// The table lookups are pipelined: a lane's table entries for the rows of
// its first ST tiles are loaded together up front, and those of tile k+ST
// while tile k is scored, so no copy waits on a lookup after the first.
// Everything up to the first tiles' copies reads only the inputs and the
// pool (rows earlier steps wrote): launched with programmatic dependent
// launch (decode graphs on sm_90), the kernel does that while the QKV
// product runs and waits for it (PDL_WAIT) before reading src.
//
// CS > 1 (pattn_decc, sm_90): the splits of a (token, KV head) form thread
// block clusters of CS blocks (grid y = nsplit, a multiple of CS), and the
// splits of a cluster are combined through distributed shared memory: each
// block leaves its (max, sum, output) in its shared memory, a cluster
// barrier, then each of the cluster's active blocks combines a slice of the
// outputs from all of them; no global partials, fence or counter. Up to
// CS*cmax positions one cluster takes everything (chunk = max(minchunk,
// ceil(seq/CS))); beyond, chunk = max(minchunk, ceil(seq/nsplit)) and the
// clusters' partials are combined through global memory as the splits of
// CS = 1 are (the last block of the token's KV head to finish).
template <int HD, int G, bool FUSED, int CS>
__device__ __forceinline__ void pattn_dec(const float* __restrict__ src, int H, int KVH,
                                          const float* __restrict__ qgain, const float* __restrict__ kgain,
                                          float eps, const float2* __restrict__ rope, const int* __restrict__ toks,
                                          const int* __restrict__ pos, const int* __restrict__ toff,
                                          const int* __restrict__ tabs, int bs, int sh, __half* Kc, __half* Vc,
                                          float scale, int nsplit, int minchunk, float* __restrict__ pm,
                                          float* __restrict__ pl, float* __restrict__ pacc, unsigned* counter,
                                          float* __restrict__ out, int cmax) {
  constexpr int R = 1, ST = 3, NT = 256;
  constexpr int NW = NT / 32;
  constexpr int LP = HD / 16;        // lanes per position when scoring (16 dims each)
  constexpr int PP = 32 / LP;        // positions per scoring pass
  constexpr int TP = PP * R;         // positions per tile
  constexpr int TPR = HD / 8;        // lanes per V row (8 dims, 16 bytes)
  constexpr int VR = 32 / TPR;       // V rows per pass (PP = 2*VR)
  constexpr int VK = TP / VR;        // V passes per tile
  constexpr int PART = TP * HD / 8;  // 16-byte pieces of the tile's K (and of its V)
  constexpr int CPL = 2 * PART / 32; // 16-byte copies per lane per tile
  constexpr int RPL = PART / 32;     // rows per lane per tile (its V copies take the same rows)
  constexpr int TILE = 2 * TP * HD;  // halves per tile
  static_assert(PART % 32 == 0 && PP == 2 * VR && CPL == 2 * RPL, "tile shape");
  extern __shared__ __align__(16) __half pd_ring[];  // [NW][ST][TILE]
  __shared__ float qs[G][HD];
  __shared__ float kt[HD];
  __shared__ __align__(16) __half knew[HD];
  __shared__ __align__(16) __half vnew[HD];
  __shared__ float wm[NW][G], wl[NW][G];
  __shared__ __align__(16) float wacc[NW][G][HD];
  __shared__ float bm[CS > 1 ? G : 1], bl[CS > 1 ? G : 1];  // the block's partial, read by the cluster
  __shared__ float bo[CS > 1 ? G * HD : 1];
  __shared__ int last;

  const int kvh = blockIdx.x, split = blockIdx.y, z = blockIdx.z;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int t = FUSED ? z : toks[z];
  const int p = pos[t], seq = p + 1;
  const int* tab = tabs + toff[t];
  int chunk = max(minchunk, (seq + nsplit - 1) / nsplit);
  if (CS > 1 && (seq + CS - 1) / CS <= cmax) chunk = max(minchunk, (seq + CS - 1) / CS);
  const int start = split * chunk, end = min(seq, start + chunk);
  const int nact = (seq + chunk - 1) / chunk;  // splits with positions
  if (start >= end) return;                     // nothing here; the active splits count themselves
  const int ntile = (end - start + TP - 1) / TP;
  const int nk = warp < ntile ? (ntile - warp + NW - 1) / NW : 0;  // this warp's tiles
  __half* ring = pd_ring + (size_t)warp * ST * TILE;

  // fetch(k, e): the table entries of this lane's rows of the warp's k-th
  // tile; issue(k, e): its copies into stage k % ST (the new position and
  // rows past the range zero-filled). issue always commits a group.
  auto fetch = [&](int k, int (&e)[RPL]) {
    const int p0 = start + (k * NW + warp) * TP;
#pragma unroll
    for (int c = 0; c < RPL; c++) {
      const int j = p0 + (c * 32 + lane) / (HD / 8);
      e[c] = k < nk && j < end ? tab[sh >= 0 ? j >> sh : j / bs] : 0;
    }
  };
  auto issue = [&](int k, const int (&e)[RPL]) {
    if (k < nk) {
      const int p0 = start + (k * NW + warp) * TP;
      __half* buf = ring + (k % ST) * TILE;
#pragma unroll
      for (int c = 0; c < CPL; c++) {
        const int idx = c * 32 + lane;
        const int part = c / RPL;  // 0: K, 1: V (compile time)
        const int row = (idx - part * PART) / (HD / 8), piece = idx % (HD / 8);
        const int j = p0 + row;
        const bool ok = j < end && (!FUSED || j != p);
        const int r = j - (sh >= 0 ? (j >> sh) << sh : (j / bs) * bs);
        const size_t off = ok ? (((size_t)e[c % RPL] * KVH + kvh) * bs + r) * HD : 0;
        cp_async16z(buf + idx * 8, (part ? Vc : Kc) + off + piece * 8, ok);
      }
    }
    cp_async_commit();
  };
  int en[RPL];  // entries of the next tile to issue
  {
    int e0[ST][RPL];
#pragma unroll
    for (int k = 0; k < ST; k++) fetch(k, e0[k]);
#pragma unroll
    for (int k = 0; k < ST - 1; k++) issue(k, e0[k]);
#pragma unroll
    for (int c = 0; c < RPL; c++) en[c] = e0[ST - 1][c];
  }

  const bool owner = FUSED && p >= start && p < end;
  PDL_WAIT();
  // The next kernel (a one-token graph's O product, launched with PDL) may
  // start loading its weights now; after the wait, not at the top, so that
  // the chain of early launches stops here.
  PDL_LAUNCH();
  if (FUSED) {
    const float* qkv = src + (size_t)t * (H + 2 * KVH) * HD;
    for (int g = warp; g < G; g += NW)
      norm_rope_warp<HD>(qkv + (size_t)(kvh * G + g) * HD, qgain, eps, p, rope, &qs[g][0]);
    if (owner && warp == NW - 1) norm_rope_warp<HD>(qkv + (size_t)(H + kvh) * HD, kgain, eps, p, rope, kt);
    __syncthreads();
    if (owner) {
      const size_t row = kv_row(tab, p, bs, sh, KVH, kvh, HD);
      for (int d = tid; d < HD; d += NT) {
        const __half kh = __float2half(kt[d]);
        const __half vh = __float2half(qkv[(size_t)(H + KVH + kvh) * HD + d]);
        Kc[row + d] = kh;
        Vc[row + d] = vh;
        knew[d] = kh;
        vnew[d] = vh;
      }
      __syncthreads();
    }
  } else {
    const float* qt = src + (size_t)t * H * HD + (size_t)kvh * G * HD;
    for (int i = tid; i < G * HD; i += NT) qs[i / HD][i % HD] = qt[i];
    __syncthreads();
  }

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
    cp_async_wait<ST - 2>();
    __syncwarp();
    issue(k + ST - 1, en);
    fetch(k + ST, en);  // used next iteration: the lookup overlaps this tile
    const int p0 = start + (k * NW + warp) * TP;
    __half* kb = ring + (k % ST) * TILE;
    __half* vb = kb + TP * HD;
    if (owner && p >= p0 && p < p0 + TP) {
      const int r = p - p0;
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
    float pr[R][G];
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
        pr[r][g] = exp2f(s[r][g] - mn);
        ps += pr[r][g];
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
      const int srcl = (i % PP) * LP;
#pragma unroll
      for (int g = 0; g < G; g++) {
        const float pg = __shfl_sync(FULL, pr[kv * VR / PP][g], srcl);
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
  const size_t zb = (size_t)z * H;  // this token's partials
  // The cluster (CS > 1) or the split (CS = 1) whose partial this block
  // writes, and how many there are.
  const int cl = CS > 1 ? split / CS : split;
  const int ncl = CS > 1 ? (nact + CS - 1) / CS : nact;
  for (int it = tid; it < G * HD; it += NT) {
    const int g = it / HD, d = it % HD;
    float M = wm[0][g];
#pragma unroll
    for (int w = 1; w < NW; w++) M = fmaxf(M, wm[w][g]);
    float L = 0.f, o = 0.f;
#pragma unroll
    for (int w = 0; w < NW; w++) {
      const float e = exp2f(wm[w][g] - M);
      L += wl[w][g] * e;
      o += wacc[w][g][d] * e;
    }
    const int h = kvh * G + g;
    if (nact == 1) {
      out[((size_t)t * H + h) * HD + d] = o / L;
    } else if (CS > 1) {
      bo[it] = o;
      if (d == 0) {
        bm[g] = M;
        bl[g] = L;
      }
    } else {
      pacc[((zb + h) * nsplit + cl) * HD + d] = o;
      if (d == 0) {
        pm[(zb + h) * nsplit + cl] = M;
        pl[(zb + h) * nsplit + cl] = L;
      }
    }
  }
  if (nact == 1) return;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (CS > 1) {
    // Every active block of the cluster has left its partial in its shared
    // memory (blocks without positions exited: they neither arrive nor are
    // read). Block `rank` combines a slice of the G*HD outputs over the
    // cluster's nb active blocks.
    asm volatile("barrier.cluster.arrive;\n" ::: "memory");
    asm volatile("barrier.cluster.wait;\n" ::: "memory");
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const int nb = min(CS, nact - cl * CS);
    const int per = (G * HD + nb - 1) / nb;
    const int i1 = min(G * HD, ((int)rank + 1) * per);
    for (int it = (int)rank * per + tid; it < i1; it += NT) {
      const int g = it / HD, d = it % HD;
      const unsigned am = (unsigned)__cvta_generic_to_shared(&bm[g]);
      const unsigned al = (unsigned)__cvta_generic_to_shared(&bl[g]);
      const unsigned ao = (unsigned)__cvta_generic_to_shared(&bo[it]);
      float ms[CS], ls[CS], os[CS];
#pragma unroll
      for (int r = 0; r < CS; r++) {
        ms[r] = -INFINITY;
        ls[r] = 0.f;
        os[r] = 0.f;
        if (r < nb) {
          unsigned a;
          asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(a) : "r"(am), "r"(r));
          asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(ms[r]) : "r"(a) : "memory");
          asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(a) : "r"(al), "r"(r));
          asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(ls[r]) : "r"(a) : "memory");
          asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(a) : "r"(ao), "r"(r));
          asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(os[r]) : "r"(a) : "memory");
        }
      }
      float M = ms[0];
#pragma unroll
      for (int r = 1; r < CS; r++) M = fmaxf(M, ms[r]);
      float L = 0.f, o = 0.f;
#pragma unroll
      for (int r = 0; r < CS; r++) {
        const float e = exp2f(ms[r] - M);  // 0 past nb
        L += ls[r] * e;
        o += os[r] * e;
      }
      const int h = kvh * G + g;
      if (ncl == 1) {
        out[((size_t)t * H + h) * HD + d] = o / L;
      } else {
        pacc[((zb + h) * nsplit + cl) * HD + d] = o;
        if (d == 0) {
          pm[(zb + h) * nsplit + cl] = M;
          pl[(zb + h) * nsplit + cl] = L;
        }
      }
    }
    // This block's reads of the others' shared memory are done; it waits
    // for theirs of its own before it exits (at the end).
    asm volatile("barrier.cluster.arrive;\n" ::: "memory");
  }
#endif

  if (ncl > 1) {
    // The last block of this KV head to finish (of the nact that write
    // partials: a split each, or a slice of a cluster's each) combines the
    // ncl partials, a thread per output value, 16 loaded at once.
    __threadfence();
    __syncthreads();
    unsigned* cnt = counter + (size_t)z * KVH + kvh;
    if (tid == 0) last = atomicAdd(cnt, 1u) == (unsigned)(nact - 1);
    __syncthreads();
    if (last) {
      __threadfence();
      if (tid == 0) *cnt = 0;
      constexpr int SB = 16;
      for (int it = tid; it < G * HD; it += NT) {
        const int g = it / HD, d = it % HD;
        const size_t h = zb + kvh * G + g;
        float M = -INFINITY, L = 0.f, o = 0.f;
        for (int s0 = 0; s0 < ncl; s0 += SB) {
          float ms[SB], ls[SB], as[SB];
#pragma unroll
          for (int c = 0; c < SB; c++) {
            const int s = s0 + c;
            const bool ok = s < ncl;
            ms[c] = ok ? __ldcg(&pm[h * nsplit + s]) : -INFINITY;
            ls[c] = ok ? __ldcg(&pl[h * nsplit + s]) : 0.f;
            as[c] = ok ? __ldcg(&pacc[(h * nsplit + s) * HD + d]) : 0.f;
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
        out[((size_t)t * H + kvh * G + g) * HD + d] = o / L;
      }
    }
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (CS > 1) asm volatile("barrier.cluster.wait;\n" ::: "memory");
#endif
}

#define PD_ARGS                                                                                               \
  const float *__restrict__ src, int H, int KVH, const float *__restrict__ qgain,                            \
      const float *__restrict__ kgain, float eps, const float2 *__restrict__ rope,                           \
      const int *__restrict__ toks, const int *__restrict__ pos, const int *__restrict__ toff,                \
      const int *__restrict__ tabs, int bs, int sh, __half *Kc, __half *Vc, float scale, int nsplit, int minchunk,   \
      float *__restrict__ pm, float *__restrict__ pl, float *__restrict__ pacc, unsigned *counter,           \
      float *__restrict__ out
#define PD_INST(HD, G)                                                                                        \
  extern "C" __global__ void __launch_bounds__(256) pattn_dec_h##HD##_g##G(PD_ARGS) {                         \
    pattn_dec<HD, G, false, 1>(src, H, KVH, qgain, kgain, eps, rope, toks, pos, toff, tabs, bs, sh, Kc, Vc,       \
                               scale, nsplit, minchunk, pm, pl, pacc, counter, out, 0);                       \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(256) pattn_decf_h##HD##_g##G(PD_ARGS) {                        \
    pattn_dec<HD, G, true, 1>(src, H, KVH, qgain, kgain, eps, rope, toks, pos, toff, tabs, bs, sh, Kc, Vc,        \
                              scale, nsplit, minchunk, pm, pl, pacc, counter, out, 0);                        \
  }
PD_INST(32, 1)
PD_INST(32, 2)
PD_INST(32, 4)
PD_INST(64, 1)
PD_INST(64, 2)
PD_INST(64, 4)
PD_INST(128, 1)
PD_INST(128, 2)
PD_INST(128, 4)

// pattn_decc: the fused pattn_dec with the splits of a (token, KV head) in
// clusters of 8 blocks (grid y a multiple of 8), combined through
// distributed shared memory; one cluster up to 8*cmax positions. Only in
// the compute_90 PTX (kernels_sm90.ptx): elsewhere the Go side uses
// pattn_decf.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PDC_INST(HD, G)                                                                                             \
  extern "C" __global__ void __cluster_dims__(1, 8, 1) __launch_bounds__(256) pattn_decc_h##HD##_g##G(PD_ARGS, int cmax) { \
    pattn_dec<HD, G, true, 8>(src, H, KVH, qgain, kgain, eps, rope, toks, pos, toff, tabs, bs, sh, Kc, Vc,              \
                              scale, nsplit, minchunk, pm, pl, pacc, counter, out, cmax);                           \
  }
PDC_INST(32, 1)
PDC_INST(32, 2)
PDC_INST(32, 4)
PDC_INST(64, 1)
PDC_INST(64, 2)
PDC_INST(64, 4)
PDC_INST(128, 1)
PDC_INST(128, 2)
PDC_INST(128, 4)
#endif

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

// pattn_pre: causal attention of runs of query tokens (prompt chunks) over
// the paged cache, flash-attention style on f16 tensor cores (mma.sync
// m16n8k16, f32 accumulators). Grid (tiles, KV heads), 4 warps. A tile is
// QT = 64/G consecutive tokens of one run (tiles[2i] = first token,
// tiles[2i+1] = count), at positions pos[first].., table tabs +
// toff[first]; its 64 query rows are the G query heads of the KV head times
// the QT tokens (row r: head r / QT, token r % QT), 16 rows a warp. Keys
// 0..last query position in tiles of 64 through shared memory (K and V,
// rows padded to HD+8 halves: conflict-free fragment loads and ldmatrix),
// double-buffered with cp.async. S = Q K^T per warp (q in f16, scaled by
// scale*log2 e), the causal mask, an online softmax in registers (log2
// units), P (f16) times V with V's fragments through ldmatrix.trans; the
// S accumulators of two 8-key n-tiles are P's A fragment for 16 keys.
// Dynamic shared memory: 2 stages x (K, V) x 64 x (HD+8) halves.
template <int HD, int G>
__device__ __forceinline__ void pattn_pre(const float* __restrict__ q, const int* __restrict__ tiles,
                                          const int* __restrict__ pos, const int* __restrict__ toff,
                                          const int* __restrict__ tabs, int bs, int sh, int H, int KVH,
                                          const __half* __restrict__ Kc, const __half* __restrict__ Vc, float scale,
                                          float* __restrict__ out) {
  constexpr int QT = 64 / G, KT = 64, RS = HD + 8, NKS = HD / 16, NDT = HD / 8, CH = HD / 8;
  extern __shared__ __align__(16) __half pp_smem[];  // [2][2][KT][RS]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
  const int kvh = blockIdx.y;
  const int t0 = tiles[2 * blockIdx.x], qn = tiles[2 * blockIdx.x + 1];
  const int p0 = pos[t0];
  const int* tab = tabs + toff[t0];
  const int pmax = p0 + qn - 1;  // the last query position, the last key
  const int nkt = pmax / KT + 1;
  const int r0 = warp * 16 + gid, r1 = r0 + 8;
  const int g = r0 / QT;  // rows r0 and r1 share the head (QT >= 16)
  const int tq0 = r0 % QT, tq1 = r1 % QT;
  const int qp0 = p0 + min(tq0, qn - 1), qp1 = p0 + min(tq1, qn - 1);
  const int wmax = p0 + min((warp * 16) % QT + 15, qn - 1);  // the warp's last query position

  const float qsc = scale * 1.4426950408889634f;
  unsigned qa[NKS][4];
  {
    const float* q0 = q + ((size_t)(t0 + min(tq0, qn - 1)) * H + kvh * G + g) * HD;
    const float* q1 = q + ((size_t)(t0 + min(tq1, qn - 1)) * H + kvh * G + g) * HD;
#pragma unroll
    for (int kk = 0; kk < NKS; kk++) {
      const int d = kk * 16 + tig * 2;
      qa[kk][0] = pack_h2(q0[d] * qsc, q0[d + 1] * qsc);
      qa[kk][1] = pack_h2(q1[d] * qsc, q1[d + 1] * qsc);
      qa[kk][2] = pack_h2(q0[d + 8] * qsc, q0[d + 9] * qsc);
      qa[kk][3] = pack_h2(q1[d + 8] * qsc, q1[d + 9] * qsc);
    }
  }
  auto load = [&](int st, int kt) {
    __half* ks_ = pp_smem + (size_t)st * 2 * KT * RS;
    __half* vs_ = ks_ + KT * RS;
    for (int i = tid; i < KT * CH; i += 128) {
      const int row = i / CH, c = i % CH;
      const int j = kt * KT + row;
      const bool ok = j <= pmax;
      const size_t off = (ok ? kv_row(tab, j, bs, sh, KVH, kvh, HD) : 0) + c * 8;
      cp_async16z(ks_ + row * RS + c * 8, Kc + off, ok);
      cp_async16z(vs_ + row * RS + c * 8, Vc + off, ok);
    }
  };

  float mr0 = -INFINITY, mr1 = -INFINITY, l0 = 0.f, l1 = 0.f;
  float o[NDT][4];
#pragma unroll
  for (int dt = 0; dt < NDT; dt++) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.f;

  load(0, 0);
  cp_async_commit();
  for (int kt = 0; kt < nkt; kt++) {
    if (kt + 1 < nkt) load((kt + 1) & 1, kt + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const __half* ks_ = pp_smem + (size_t)(kt & 1) * 2 * KT * RS;
    const __half* vs_ = ks_ + KT * RS;
    if (kt * KT <= wmax) {
      float s[8][4];
#pragma unroll
      for (int nt = 0; nt < 8; nt++) {
        s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
        const __half* kr = ks_ + (nt * 8 + gid) * RS + tig * 2;
#pragma unroll
        for (int kk = 0; kk < NKS; kk++) {
          const unsigned b0 = *(const unsigned*)(kr + kk * 16);
          const unsigned b1 = *(const unsigned*)(kr + kk * 16 + 8);
          mma_f16(s[nt], qa[kk], b0, b1);
        }
      }
      float mx0 = mr0, mx1 = mr1;
#pragma unroll
      for (int nt = 0; nt < 8; nt++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
          const int key = kt * KT + nt * 8 + tig * 2 + e;
          if (key > qp0) s[nt][e] = -INFINITY;
          if (key > qp1) s[nt][2 + e] = -INFINITY;
        }
        mx0 = fmaxf(mx0, fmaxf(s[nt][0], s[nt][1]));
        mx1 = fmaxf(mx1, fmaxf(s[nt][2], s[nt][3]));
      }
      mx0 = fmaxf(mx0, __shfl_xor_sync(FULL, mx0, 1));
      mx0 = fmaxf(mx0, __shfl_xor_sync(FULL, mx0, 2));
      mx1 = fmaxf(mx1, __shfl_xor_sync(FULL, mx1, 1));
      mx1 = fmaxf(mx1, __shfl_xor_sync(FULL, mx1, 2));
      // Key 0 is in every row's range, so the maxima are finite from the
      // first tile on.
      const float a0 = exp2f(mr0 - mx0), a1 = exp2f(mr1 - mx1);
      mr0 = mx0;
      mr1 = mx1;
      l0 *= a0;
      l1 *= a1;
#pragma unroll
      for (int dt = 0; dt < NDT; dt++) {
        o[dt][0] *= a0;
        o[dt][1] *= a0;
        o[dt][2] *= a1;
        o[dt][3] *= a1;
      }
      unsigned pa[4][4];
#pragma unroll
      for (int nt = 0; nt < 8; nt++) {
        const float e0 = exp2f(s[nt][0] - mx0), e1 = exp2f(s[nt][1] - mx0);
        const float e2 = exp2f(s[nt][2] - mx1), e3 = exp2f(s[nt][3] - mx1);
        l0 += e0 + e1;
        l1 += e2 + e3;
        pa[nt >> 1][(nt & 1) * 2] = pack_h2(e0, e1);
        pa[nt >> 1][(nt & 1) * 2 + 1] = pack_h2(e2, e3);
      }
#pragma unroll
      for (int kk = 0; kk < 4; kk++) {
        const __half* vr = vs_ + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * RS + (lane >> 4) * 8;
#pragma unroll
        for (int dp = 0; dp < NDT / 2; dp++) {
          unsigned b0, b1, b2, b3;
          ldsm_x4_t(b0, b1, b2, b3, vr + dp * 16);
          mma_f16(o[2 * dp], pa[kk], b0, b1);
          mma_f16(o[2 * dp + 1], pa[kk], b2, b3);
        }
      }
    }
    __syncthreads();
  }
  cp_async_wait<0>();
  l0 += __shfl_xor_sync(FULL, l0, 1);
  l0 += __shfl_xor_sync(FULL, l0, 2);
  l1 += __shfl_xor_sync(FULL, l1, 1);
  l1 += __shfl_xor_sync(FULL, l1, 2);
  const float i0 = 1.f / l0, i1 = 1.f / l1;
  if (tq0 < qn) {
    float* d0 = out + ((size_t)(t0 + tq0) * H + kvh * G + g) * HD + tig * 2;
#pragma unroll
    for (int dt = 0; dt < NDT; dt++) *(float2*)(d0 + dt * 8) = make_float2(o[dt][0] * i0, o[dt][1] * i0);
  }
  if (tq1 < qn) {
    float* d1 = out + ((size_t)(t0 + tq1) * H + kvh * G + g) * HD + tig * 2;
#pragma unroll
    for (int dt = 0; dt < NDT; dt++) *(float2*)(d1 + dt * 8) = make_float2(o[dt][2] * i1, o[dt][3] * i1);
  }
}

#define PP_INST(HD, G)                                                                                        \
  extern "C" __global__ void __launch_bounds__(128) pattn_pre_h##HD##_g##G(                                   \
      const float* __restrict__ q, const int* __restrict__ tiles, const int* __restrict__ pos,                \
      const int* __restrict__ toff, const int* __restrict__ tabs, int bs, int sh, int H, int KVH,                     \
      const __half* __restrict__ Kc, const __half* __restrict__ Vc, float scale, float* __restrict__ out) {   \
    pattn_pre<HD, G>(q, tiles, pos, toff, tabs, bs, sh, H, KVH, Kc, Vc, scale, out);                              \
  }
PP_INST(32, 1)
PP_INST(32, 2)
PP_INST(32, 4)
PP_INST(64, 1)
PP_INST(64, 2)
PP_INST(64, 4)
PP_INST(128, 1)
PP_INST(128, 2)
PP_INST(128, 4)
