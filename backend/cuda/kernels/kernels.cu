// Kernels of inferno's CUDA backend: a Qwen3 forward pass over Q8_0 weights.
//
// Compiled to PTX by ../build_ptx.sh (compute capability 8.0 and up) and
// embedded in the Go package; the driver JIT-compiles it for the GPU at load.
//
// Number formats
//   Weights: Q8_0 split into two arrays at upload: the int8 values, row-major
//   (rows x K), and the f16 block scales, twice: row-major (rows x K/32) for
//   the decode matvec and block-major (K/32 x Mpad) for the prefill matmul.
//   Activations entering a matrix product of fewer than 128 tokens (decode,
//   short prompts) are quantized per block of 32 to 16-bit integers split
//   in two int8 planes, v = 256*hi + lo, with a float scale per block:
//   products are exact integer dp4a / IMMA sums of both planes, and the
//   activation rounding is 1/32512 of the block's largest value (far below
//   bf16), so results track the float32 CPU reference. Products of more
//   tokens (mm_q8h.cuh) take f16 activations (a power of two per token)
//   against the weights turned f16 in the tile: f32 sums on f16 tensor
//   cores, 11-bit roundings, no per-block rescale.
//   KV cache: f16, per layer [kv head][capacity][head dim] (Runner); the
//   BatchRunner's pool: per layer [block][kv head][block size][head dim],
//   found through per-sequence block tables.
//
// Sections, in this file or the one it includes at their place: helpers;
// embedding; matvec (decode, one token: mv_q8.cuh); sampling: argmax;
// attention (decode): flash-decoding (attn_decode.cuh); matmul (prefill):
// int8 tensor cores (mm_q8.cuh), f16 tensor cores (mm_q8h.cuh); attention (prefill: attn_prefill.cuh); KV
// cache; sampling: top-k; batched forward over a paged KV cache (skinny
// matmul, paged prefill attention on f16 tensor cores: batch.cuh; paged
// decode attention: attn_paged.cuh); the other block formats (quant*.cuh).
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

#include "mv_q8.cuh"

// ================================================================ sampling: argmax

// argmax_final reduces the per-block candidates of mv_q8 EP_ARGMAX to the
// winning row id (one block of 1024 threads).
// With host not null it also writes the id and then the step number
// (params[2]) to page-locked host memory, where the host polls for it.
// params[1] set (a step sampled on the GPU: samp_final writes the id and
// the step number) skips it all; params may be null when host is (a
// plain argmax, as the kernel tests launch it).
extern "C" __global__ void __launch_bounds__(1024) argmax_final(const float* __restrict__ pval,
                                                                const int* __restrict__ pidx, int n,
                                                                int* __restrict__ out, volatile int* host,
                                                                const int* __restrict__ params) {
  __shared__ float sv[32];
  __shared__ int si[32];
  PDL_LAUNCH();
  PDL_WAIT();
  if (params && params[1]) return;
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

// norm_rope_warp: one warp adds bias to a head of HD values (when bias
// is not null: Qwen2's Q and K biases), normalizes it (RMSNorm with gain,
// when gain is not null: QK-norm), rotates it NeoX style at position pos
// and writes it to dst. rope holds (cos, sin) of pos*freq_i per position
// and pair, computed on the host exactly as the CPU reference computes
// them (the frequencies with any per-pair scaling applied; a model with
// normal-style RoPE has its Q and K rows reordered at upload so that its
// pairs are NeoX's: ropeRows in rope.go).
template <int HD>
__device__ __forceinline__ void norm_rope_warp(const float* __restrict__ src, const float* __restrict__ gain,
                                               float eps, int pos, const float2* __restrict__ rope, float* dst,
                                               const float* __restrict__ bias = nullptr) {
  const int lane = threadIdx.x & 31;
  constexpr int H2 = HD / 2;
  float sc = 1.f;
  if (gain) {
    float ss = 0.f;
#pragma unroll
    for (int d = lane; d < HD; d += 32) {
      const float v = bias ? src[d] + bias[d] : src[d];
      ss += v * v;
    }
    ss = warp_sum(ss);
    sc = 1.f / sqrtf(ss / (float)HD + eps);
  }
  const float2* cs = rope + (size_t)pos * H2;
#pragma unroll
  for (int i = lane; i < H2; i += 32) {
    float a = bias ? src[i] + bias[i] : src[i];
    float b = bias ? src[i + H2] + bias[i + H2] : src[i + H2];
    if (gain) {
      a = a * sc * gain[i];
      b = b * sc * gain[i + H2];
    }
    const float2 r = cs[i];
    dst[i] = a * r.x - b * r.y;
    dst[i + H2] = a * r.y + b * r.x;
  }
}



#include "mm_q8.cuh"



// ================================================================ misc

// noop does nothing (graph overhead measurements).
extern "C" __global__ void noop(int* p) {
  if (p && threadIdx.x == 0 && blockIdx.x == 0) *p = 0;
}

// ================================================================ sampling: top-k

// Top-k selection for sampling (samp_topk, sample.cuh): the k largest
// logits of a chunk of the vocabulary and their ids, by k rounds of a
// block-wide argmax in the argmax order (`better`: larger first, lower id
// among ties, NaN last); a thread caches the best of its own elements and
// rescans only when its candidate was taken. TOPK_MAX bounds k; TOPK_SMEM
// the elements one block holds in shared memory.
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

#include "sample.cuh"

#include "batch.cuh"

#include "attn_paged.cuh"

// Block formats other than Q8_0 (backend/cuda/quant*.go): the formats and
// embedding, the decode matvec, the f16 tensor-core products.
#include "quant.cuh"
#include "quant_mv.cuh"
#include "quant_mm.cuh"
#include "mm_q8h.cuh"
#include "quant_mmq.cuh"
#include "quant_mmq2.cuh"

// F16, BF16 and F32 matrices (backend/cuda/half.go).
#include "half.cuh"


// The mixture-of-experts layer: routing, the chosen experts' products in
// the block formats, the weighted sum (backend/cuda/moe.go).
#include "moe.cuh"
