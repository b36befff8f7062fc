// rope.cuh: the paged KV cache's layout and writes (included by kernels.cu
// before attn_paged.cuh): QK-norm and RoPE of a head (norm_rope_warp),
// qk_rope_paged (a batch's queries rotated, keys rotated into the cache,
// values appended) and kv_block_copy (a cache block copied, for a
// sequence's copy-on-write).
//
// The KV cache is a pool of blocks shared by all sequences: per layer, K
// and V are each [block][kv head][bs][head dim] f16 (bs positions a
// block); position p of a sequence lives in row p % bs of block tab[p /
// bs], tab being the sequence's block table.

// kv_row returns the offset (in halves) of position p's row of KV head kvh
// in one layer's pool; sh = log2(bs) when bs is a power of two (shifts
// instead of divisions), else -1.
__device__ __forceinline__ size_t kv_row(const int* __restrict__ tab, int p, int bs, int sh, int KVH, int kvh, int HD) {
  const int b = sh >= 0 ? p >> sh : p / bs;
  const int r = p - b * bs;
  return (((size_t)tab[b] * KVH + kvh) * bs + r) * HD;
}

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

// qk_rope_paged: for the tokens of a batch, each at its own position
// pos[t] of its own sequence (table tabs + toff[t]): the query heads, with
// their bias, normalized (QK-norm, when qgain is not null) and rotated, to
// q (token-major), the key heads likewise into the paged cache, and the
// value heads with their bias. bias, when not null, holds the Q, K and V
// biases of the layer (H + 2*KVH heads, the QKV product's row order). One
// block (4 warps) per token.
template <int HD>
__device__ __forceinline__ void qk_rope_paged(const float* __restrict__ qkv, const int* __restrict__ pos,
                                              const int* __restrict__ toff, const int* __restrict__ tabs, int bs, int sh,
                                              int H, int KVH, const float* __restrict__ qgain,
                                              const float* __restrict__ kgain, float eps,
                                              const float2* __restrict__ rope, float* __restrict__ q, __half* Kc,
                                              __half* Vc, const float* __restrict__ bias) {
  __shared__ float tmp[4][HD];
  const int t = blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int p = pos[t];
  const int* tab = tabs + toff[t];
  const float* src = qkv + (size_t)t * (H + 2 * KVH) * HD;
  for (int hh = warp; hh < H + 2 * KVH; hh += 4) {
    const float* hb = bias ? bias + (size_t)hh * HD : nullptr;
    if (hh < H) {
      norm_rope_warp<HD>(src + (size_t)hh * HD, qgain, eps, p, rope, q + ((size_t)t * H + hh) * HD, hb);
    } else if (hh < H + KVH) {
      const int kh = hh - H;
      norm_rope_warp<HD>(src + (size_t)hh * HD, kgain, eps, p, rope, tmp[warp], hb);
      __syncwarp();
      const size_t row = kv_row(tab, p, bs, sh, KVH, kh, HD);
      for (int d = lane; d < HD; d += 32) Kc[row + d] = __float2half(tmp[warp][d]);
      __syncwarp();
    } else {
      const int vh = hh - H - KVH;
      const size_t row = kv_row(tab, p, bs, sh, KVH, vh, HD);
      for (int d = lane; d < HD; d += 32) Vc[row + d] = __float2half(hb ? src[(size_t)hh * HD + d] + hb[d] : src[(size_t)hh * HD + d]);
    }
  }
}

#define QRP_INST(HD)                                                                                               \
  extern "C" __global__ void __launch_bounds__(128) qk_rope_paged_h##HD(                                           \
      const float* __restrict__ qkv, const int* __restrict__ pos, const int* __restrict__ toff,                   \
      const int* __restrict__ tabs, int bs, int sh, int H, int KVH, const float* __restrict__ qgain,                      \
      const float* __restrict__ kgain, float eps, const float2* __restrict__ rope, float* __restrict__ q,         \
      __half* Kc, __half* Vc, const float* __restrict__ bias) {                                                   \
    qk_rope_paged<HD>(qkv, pos, toff, tabs, bs, sh, H, KVH, qgain, kgain, eps, rope, q, Kc, Vc, bias);                \
  }
QRP_INST(32)
QRP_INST(64)
QRP_INST(128)
QRP_INST(256)

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
