// attn_prefill.cuh: the batch runner's attention of prompt chunks over the
// paged KV cache on f16 tensor cores (pattn_pre, pattn_comb; included by
// kernels.cu after attn_paged.cuh, whose attn_fin it uses).

// pattn_pre: causal attention of runs of query tokens (prompt chunks) over
// the paged cache, flash-attention style on f16 tensor cores (mma.sync
// m16n8k16, f32 accumulators). Grid (tiles, H/G head groups, nsplit), 4
// warps. A tile is QT = 64/G consecutive tokens of one run (tiles[2i] =
// first token, tiles[2i+1] = count), at positions pos[first].., table tabs
// + toff[first]; its 64 query rows are the G query heads hg*G.. (all of a
// KV head's, or an equal share: G is 1, 2 or 4) times the QT tokens (row
// r: head r / QT, token r % QT), 16 rows a warp. Keys 0..last query
// position in tiles of KT (64; 32 for head dimension 256) through shared
// memory (K and V, rows padded to HD+8 halves: conflict-free fragment
// loads and ldmatrix), double-buffered with cp.async. S = Q K^T per warp (q
// in f16, scaled by scale*log2 e; K's fragments through 32-bit shared
// loads: ldmatrix.x4 measured 5% slower), the causal mask, an online
// softmax in registers (log2 units), P (f16) times V with V's fragments
// through ldmatrix.trans; the S accumulators of two 8-key n-tiles are P's
// A fragment for 16 keys.
//
// Splits (nsplit > 1, split = blockIdx.z): a tile's key tiles are cut into
// nsplit equal ranges of chunk = ceil(nkt/nsplit) tiles, so that a deep
// context fills the GPU with blocks even when the query tiles are few; a
// split writes its rows' unnormalized partials (max and sum in log2 units,
// output) at ((token*H + head)*nsplit + split), which pattn_comb combines.
// A row may see no key of its split (keys past its position): its max stays
// -inf and its sum 0, and the softmax takes 0 as the base meanwhile.
// Dynamic shared memory: 2 stages x (K, V) x KT x (HD+8) halves.
//
// EXT: the window and the sinks. With a window the key tiles are those
// from the one holding the first query's first key (pos[first]-window+1)
// on, split as all of them are without it; a warp skips a key tile
// outside its rows' windows, and the mask hides the keys past a row's
// position and before its window.
template <int HD>
struct pre_shape {
  static constexpr int KT = HD > 128 ? 32 : 64;
};

template <int HD, int G, bool EXT>
__device__ __forceinline__ void pattn_pre(const float* __restrict__ q, const int* __restrict__ tiles,
                                          const int* __restrict__ pos, const int* __restrict__ toff,
                                          const int* __restrict__ tabs, int bs, int sh, int H, int KVH,
                                          const __half* __restrict__ Kc, const __half* __restrict__ Vc, float scale,
                                          int nsplit, float* __restrict__ pm, float* __restrict__ pl,
                                          float* __restrict__ pacc, float* __restrict__ out, int window,
                                          const float* __restrict__ sinks) {
  constexpr int QT = 64 / G, KT = pre_shape<HD>::KT, RS = HD + 8, NKS = HD / 16, NDT = HD / 8, CH = HD / 8;
  constexpr int NNT = KT / 8;  // 8-key n-tiles of S per key tile
  extern __shared__ __align__(16) __half pp_smem[];  // [2][2][KT][RS]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
  const int hg = blockIdx.y, split = blockIdx.z;
  const int kvh = hg * G / (H / KVH);  // the KV head of query heads hg*G..
  const int t0 = tiles[2 * blockIdx.x], qn = tiles[2 * blockIdx.x + 1];
  const int p0 = pos[t0];
  const int* tab = tabs + toff[t0];
  const int pmax = p0 + qn - 1;  // the last query position, the last key
  const bool win = EXT && window > 0;
  const int klo = win ? max(0, p0 - window + 1) : 0;  // the first key of any row's window
  const int ktl = klo / KT;
  const int nkt = pmax / KT + 1;
  const int chunk = (nkt - ktl + nsplit - 1) / nsplit;
  const int kt0 = ktl + split * chunk, kt1 = min(nkt, kt0 + chunk);
  if (kt0 >= kt1) return;  // pattn_comb reads only the splits with keys
  const int r0 = warp * 16 + gid, r1 = r0 + 8;
  const int g = r0 / QT;  // rows r0 and r1 share the head (QT >= 16)
  const int tq0 = r0 % QT, tq1 = r1 % QT;
  const int qp0 = p0 + min(tq0, qn - 1), qp1 = p0 + min(tq1, qn - 1);
  const int wmax = p0 + min((warp * 16) % QT + 15, qn - 1);  // the warp's last query position
  const int wmin = p0 + min((warp * 16) % QT, qn - 1);       // and its first

  const float qsc = scale * 1.4426950408889634f;
  unsigned qa[NKS][4];
  {
    const float* q0 = q + ((size_t)(t0 + min(tq0, qn - 1)) * H + hg * G + g) * HD;
    const float* q1 = q + ((size_t)(t0 + min(tq1, qn - 1)) * H + hg * G + g) * HD;
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
      const bool ok = j <= pmax && (!win || j >= klo);
      const size_t off = (ok ? kv_row(tab, j, bs, sh, KVH, kvh, HD) : 0) + c * 8;
      cp_async16z(ks_ + row * RS + c * 8, Kc + off, ok);
      cp_async16z(vs_ + row * RS + c * 8, Vc + off, ok);
    }
  };

  float mr0 = -INFINITY, mr1 = -INFINITY, l0 = 0.f, l1 = 0.f;
  float o[NDT][4];
#pragma unroll
  for (int dt = 0; dt < NDT; dt++) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.f;

  load(0, kt0);
  cp_async_commit();
  for (int kt = kt0; kt < kt1; kt++) {
    const int st = (kt - kt0) & 1;
    if (kt + 1 < kt1) load(st ^ 1, kt + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const __half* ks_ = pp_smem + (size_t)st * 2 * KT * RS;
    const __half* vs_ = ks_ + KT * RS;
    if (kt * KT <= wmax && (!win || kt * KT + KT > wmin - window + 1)) {
      float s[NNT][4];
#pragma unroll
      for (int nt = 0; nt < NNT; nt++) {
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
      // Keys past some row's position, or before its window: the mask.
      const bool diag = kt * KT + KT - 1 > p0 || (win && kt * KT <= wmax - window);
#pragma unroll
      for (int nt = 0; nt < NNT; nt++) {
        if (diag) {
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const int key = kt * KT + nt * 8 + tig * 2 + e;
            if (key > qp0 || (win && key <= qp0 - window)) s[nt][e] = -INFINITY;
            if (key > qp1 || (win && key <= qp1 - window)) s[nt][2 + e] = -INFINITY;
          }
        }
        mx0 = fmaxf(mx0, fmaxf(s[nt][0], s[nt][1]));
        mx1 = fmaxf(mx1, fmaxf(s[nt][2], s[nt][3]));
      }
      mx0 = fmaxf(mx0, __shfl_xor_sync(FULL, mx0, 1));
      mx0 = fmaxf(mx0, __shfl_xor_sync(FULL, mx0, 2));
      mx1 = fmaxf(mx1, __shfl_xor_sync(FULL, mx1, 1));
      mx1 = fmaxf(mx1, __shfl_xor_sync(FULL, mx1, 2));
      // Without splits key 0 is in every row's range, so the maxima are
      // finite from the first tile on; a split's rows may have seen no key
      // yet (base 0: their scores and sums stay 0).
      const float b0 = mx0 == -INFINITY ? 0.f : mx0, b1 = mx1 == -INFINITY ? 0.f : mx1;
      const float a0 = exp2f(mr0 - b0), a1 = exp2f(mr1 - b1);
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
      unsigned pa[NNT / 2][4];
#pragma unroll
      for (int nt = 0; nt < NNT; nt++) {
        const float e0 = exp2f(s[nt][0] - b0), e1 = exp2f(s[nt][1] - b0);
        const float e2 = exp2f(s[nt][2] - b1), e3 = exp2f(s[nt][3] - b1);
        l0 += e0 + e1;
        l1 += e2 + e3;
        pa[nt >> 1][(nt & 1) * 2] = pack_h2(e0, e1);
        pa[nt >> 1][(nt & 1) * 2 + 1] = pack_h2(e2, e3);
      }
#pragma unroll
      for (int kk = 0; kk < NNT / 2; kk++) {
        const __half* vr = vs_ + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * RS + (lane >> 4) * 8;
#pragma unroll
        for (int dp = 0; dp < NDT / 2; dp++) {
          unsigned v0, v1, v2, v3;
          ldsm_x4_t(v0, v1, v2, v3, vr + dp * 16);
          mma_f16(o[2 * dp], pa[kk], v0, v1);
          mma_f16(o[2 * dp + 1], pa[kk], v2, v3);
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
  const int h = hg * G + g;
  if (nsplit > 1) {
    if (tq0 < qn) {
      const size_t pi = ((size_t)(t0 + tq0) * H + h) * nsplit + split;
      float* d0 = pacc + pi * HD + tig * 2;
#pragma unroll
      for (int dt = 0; dt < NDT; dt++) *(float2*)(d0 + dt * 8) = make_float2(o[dt][0], o[dt][1]);
      if (tig == 0) {
        pm[pi] = mr0;
        pl[pi] = l0;
      }
    }
    if (tq1 < qn) {
      const size_t pi = ((size_t)(t0 + tq1) * H + h) * nsplit + split;
      float* d1 = pacc + pi * HD + tig * 2;
#pragma unroll
      for (int dt = 0; dt < NDT; dt++) *(float2*)(d1 + dt * 8) = make_float2(o[dt][2], o[dt][3]);
      if (tig == 0) {
        pm[pi] = mr1;
        pl[pi] = l1;
      }
    }
    return;
  }
  float i0 = 1.f / l0, i1 = 1.f / l1;
  if (EXT && sinks) {
    const float sk = sinks[h] * 1.4426950408889634f, f0 = fmaxf(mr0, sk), f1 = fmaxf(mr1, sk);
    const float a0 = exp2f(mr0 - f0), a1 = exp2f(mr1 - f1);
    i0 = a0 / (l0 * a0 + exp2f(sk - f0));
    i1 = a1 / (l1 * a1 + exp2f(sk - f1));
  }
  if (tq0 < qn) {
    float* d0 = out + ((size_t)(t0 + tq0) * H + h) * HD + tig * 2;
#pragma unroll
    for (int dt = 0; dt < NDT; dt++) *(float2*)(d0 + dt * 8) = make_float2(o[dt][0] * i0, o[dt][1] * i0);
  }
  if (tq1 < qn) {
    float* d1 = out + ((size_t)(t0 + tq1) * H + h) * HD + tig * 2;
#pragma unroll
    for (int dt = 0; dt < NDT; dt++) *(float2*)(d1 + dt * 8) = make_float2(o[dt][2] * i1, o[dt][3] * i1);
  }
}

// pattn_comb combines the nsplit partials of pattn_pre's split blocks:
// grid (tiles, H), a thread per (token, dimension) of the tile's tokens
// and head blockIdx.y; the splits with keys are the first ceil(nkt/chunk)
// (as pattn_pre cuts them; EXT: its window and sinks).
template <int HD, bool EXT>
__device__ __forceinline__ void pattn_comb(const int* __restrict__ tiles, const int* __restrict__ pos, int H,
                                           int nsplit, const float* __restrict__ pm, const float* __restrict__ pl,
                                           const float* __restrict__ pacc, float* __restrict__ out, int window,
                                           const float* __restrict__ sinks) {
  constexpr int KT = pre_shape<HD>::KT;
  const int t0 = tiles[2 * blockIdx.x], qn = tiles[2 * blockIdx.x + 1], h = blockIdx.y;
  const int ktl = EXT && window > 0 ? max(0, pos[t0] - window + 1) / KT : 0;
  const int nkt = (pos[t0] + qn - 1) / KT + 1 - ktl;
  const int chunk = (nkt + nsplit - 1) / nsplit;
  const int nact = (nkt + chunk - 1) / chunk;
  const float* sk = EXT ? sinks : nullptr;
  for (int i = threadIdx.x; i < qn * HD; i += blockDim.x) {
    const int tq = i / HD, d = i % HD;
    const size_t pi = ((size_t)(t0 + tq) * H + h) * nsplit;
    float M = -INFINITY;
    for (int s = 0; s < nact; s++) M = fmaxf(M, pm[pi + s]);
    float L = 0.f, acc = 0.f;
    for (int s = 0; s < nact; s++) {
      const float e = exp2f(pm[pi + s] - M);  // 0 for a split that saw no key of the row
      L += pl[pi + s] * e;
      acc += pacc[(pi + s) * HD + d] * e;
    }
    out[((size_t)(t0 + tq) * H + h) * HD + d] = attn_fin(acc, L, M, sk, h);
  }
}

#define PP_ARGS                                                                                                  \
  const float *__restrict__ q, const int *__restrict__ tiles, const int *__restrict__ pos,                       \
      const int *__restrict__ toff, const int *__restrict__ tabs, int bs, int sh, int H, int KVH,                \
      const __half *__restrict__ Kc, const __half *__restrict__ Vc, float scale, int nsplit,                     \
      float *__restrict__ pm, float *__restrict__ pl, float *__restrict__ pacc, float *__restrict__ out
// Up to head dimension 128: at most 168 registers, three blocks an SM (as
// their shared memory allows). The extended variants (_ws) take the window
// and the sinks last.
#define PP_INST(HD, G)                                                                                           \
  extern "C" __global__ void __launch_bounds__(128, (HD) > 128 ? 1 : 3) pattn_pre_h##HD##_g##G(PP_ARGS) {       \
    pattn_pre<HD, G, false>(q, tiles, pos, toff, tabs, bs, sh, H, KVH, Kc, Vc, scale, nsplit, pm, pl, pacc, out, \
                            0, nullptr);                                                                         \
  }                                                                                                              \
  extern "C" __global__ void __launch_bounds__(128, (HD) > 128 ? 1 : 3)                                          \
      pattn_pre_h##HD##_g##G##_ws(PP_ARGS, int window, const float* __restrict__ sinks) {                        \
    pattn_pre<HD, G, true>(q, tiles, pos, toff, tabs, bs, sh, H, KVH, Kc, Vc, scale, nsplit, pm, pl, pacc, out,  \
                           window, sinks);                                                                       \
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
PP_INST(256, 1)
PP_INST(256, 2)
PP_INST(256, 4)

#define PC_ARGS                                                                                                  \
  const int *__restrict__ tiles, const int *__restrict__ pos, int H, int nsplit, const float *__restrict__ pm,   \
      const float *__restrict__ pl, const float *__restrict__ pacc, float *__restrict__ out
#define PC_INST(HD)                                                                                             \
  extern "C" __global__ void __launch_bounds__(256) pattn_comb_h##HD(PC_ARGS) {                                 \
    pattn_comb<HD, false>(tiles, pos, H, nsplit, pm, pl, pacc, out, 0, nullptr);                                \
  }                                                                                                             \
  extern "C" __global__ void __launch_bounds__(256) pattn_comb_h##HD##_ws(PC_ARGS, int window,                  \
                                                                          const float* __restrict__ sinks) {    \
    pattn_comb<HD, true>(tiles, pos, H, nsplit, pm, pl, pacc, out, window, sinks);                              \
  }
PC_INST(32)
PC_INST(64)
PC_INST(128)
PC_INST(256)
