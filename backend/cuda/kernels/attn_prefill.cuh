// attn_prefill.cuh: prefill attention of the single-sequence Runner (qk_rope_n, attn_prefill) (included by kernels.cu; uses its helpers).

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
QR_INST(256)

// attn_prefill: causal attention of n query tokens at positions pos0..
// against the cache (keys 0..pos0+n-1, already appended). Grid (ceil(n/32),
// H), 8 warps of 4 queries each; keys in tiles of 32 through shared memory,
// one key a lane when scoring; online softmax per query. Its shared
// memory is static up to head dimension 128; for 256 (68 KB) dynamic
// (attnPrefillSmem in prefill.go).
template <int HD>
struct APSmem {
  float qs[32][HD];
  __half2 ks[32][HD / 2 + 1];
  __half2 vs[32][HD / 2];
  float ps[8][4][32];
};
template <int HD>
__device__ __forceinline__ APSmem<HD>& ap_smem() {
  if constexpr (HD <= 128) {
    __shared__ APSmem<HD> s;
    return s;
  } else {
    extern __shared__ __align__(16) unsigned char ap_dyn[];
    return *reinterpret_cast<APSmem<HD>*>(ap_dyn);
  }
}
template <int HD>
__device__ __forceinline__ void attn_prefill(const float* __restrict__ q, int n, int pos0, int H, int KVH,
                                             const __half* __restrict__ Kc, const __half* __restrict__ Vc,
                                             int cap, float scale, float* __restrict__ out) {
  constexpr int QT = 32, KT = 32, HW = HD / 2, CW = (HW + 31) / 32;
  APSmem<HD>& sm = ap_smem<HD>();
  float(&qs)[QT][HD] = sm.qs;
  __half2(&ks)[KT][HW + 1] = sm.ks;
  __half2(&vs)[KT][HW] = sm.vs;
  float(&ps)[8][4][KT] = sm.ps;

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
AP_INST(256)
