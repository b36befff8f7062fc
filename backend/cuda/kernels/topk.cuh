// topk.cuh: the k best of candidates in shared memory in the argmax order
// (included by kernels.cu before sample.cuh, whose samp_topk, samp_topkw
// and samp_final select with it): topk_block (k rounds of block argmax)
// and topk_fast (one pass, a bound and a count).

// tk_before is `better` with entries of id < 0 (none) last.
__device__ __forceinline__ bool tk_before(float a, int ia, float b, int ib) {
  return ia >= 0 && (ib < 0 || better(a, ia, b, ib));
}

// by_valid is tk_before as the order argument of argmax_take and warp_argmax.
struct by_valid {
  __device__ __forceinline__ bool operator()(float a, int ia, float b, int ib) const { return tk_before(a, ia, b, ib); }
};

// warp_sort_best sorts the warp's (v, i), one a lane, best first in
// tk_before's order: lane L ends with the L-th best (a bitonic network in
// registers).
__device__ __forceinline__ void warp_sort_best(float& bv, int& bi) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int size = 2; size <= 32; size <<= 1)
#pragma unroll
    for (int st = size >> 1; st > 0; st >>= 1) {
      const float v2 = __shfl_xor_sync(FULL, bv, st);
      const int i2 = __shfl_xor_sync(FULL, bi, st);
      // The lane that keeps the better of the pair: the lower one in a
      // segment sorted best first, the upper one in the others.
      const bool keepBetter = ((lane & st) == 0) == ((lane & size) == 0);
      if (keepBetter ? tk_before(v2, i2, bv, bi) : tk_before(bv, bi, v2, i2)) {
        bv = v2;
        bi = i2;
      }
    }
}

// TOPK_MAX bounds k; TOPK_THREADS is the block of the kernels that select;
// TOPK_SMEM the candidates one block holds in shared memory.
#define TOPK_MAX 128
#define TOPK_THREADS 256
#define TOPK_SMEM 4096

// topk_block selects the k best of sv/si[0:n) (in shared memory) into
// ov/oi[0:k) (global) by k rounds of a block-wide argmax in the argmax
// order (`better`: larger first, lower id among ties, NaN last); a thread
// caches the best of its own elements and rescans only when its candidate
// was taken. Entries past n are never chosen; entries taken are marked
// with id -1. Every thread of the block calls it.
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

#define TOPK_CAND 512  // most candidates topk_fast ranks (more: topk_block)

// topk_fast selects the k best of sv/si[0:n) (in shared memory; id -1:
// not a candidate) into ov/oi[0:k) in the order of `better`, entries past
// what there is as (-Inf, -1): topk_block's result, in one pass instead
// of k rounds of block argmax. Each thread takes the best of its strided
// entries; the k-th best of those maxima, T, bounds the answer (k entries,
// the maxima up to it, are at least as good, so nothing worse than T is
// among the k best), and the entries at least as good as T (from at most
// k threads, usually little more than k) are ranked by counting, exactly
// (ids differ: `better` is a total order). More than TOPK_CAND of them
// (or fewer than k maxima: every valid entry is a candidate) go to
// topk_block. Every thread of the block calls it; sv and si are only read
// unless topk_block runs (it marks the entries it takes). With fast, the
// bound is found with fewer comparisons (the same bound): each warp sorts
// its 32 maxima (bitonic, in registers), and a maximum among its warp's k
// best counts the better ones of each other warp by binary search (7 x 6
// comparisons instead of 256).
__device__ void topk_fast(float* sv, int* si, int n, int k, float* ov, int* oi, bool fast) {
  __shared__ float mv[TOPK_THREADS], cv[TOPK_CAND];
  __shared__ int mi[TOPK_THREADS], ci[TOPK_CAND];
  __shared__ int ncand, ti;
  __shared__ float tv;
  const int tid = threadIdx.x;
  float bv = NAN;
  int bi = -1;
  for (int q = tid; q < n; q += TOPK_THREADS) {
    const int id = si[q];
    if (id >= 0 && (bi < 0 || better(sv[q], id, bv, bi))) {
      bv = sv[q];
      bi = id;
    }
  }
  if (fast) warp_sort_best(bv, bi);
  mv[tid] = bv;
  mi[tid] = bi;
  if (tid == 0) {
    ncand = 0;
    ti = -1;
  }
  __syncthreads();
  if (fast) {
    // Lane L holds its warp's L-th best maximum: its rank among all is L
    // plus the better ones of the other warps.
    const int lane = tid & 31, w = tid >> 5;
    if (bi >= 0 && lane < k) {
      int r = lane;
      for (int o = 0; o < TOPK_THREADS / 32; o++) {
        if (o == w) continue;
        const float* lv = mv + 32 * o;
        const int* li = mi + 32 * o;
        int q = 0;
#pragma unroll
        for (int h = 16; h > 0; h >>= 1)
          if (tk_before(lv[q + h - 1], li[q + h - 1], bv, bi)) q += h;
        if (tk_before(lv[q], li[q], bv, bi)) q++;
        r += q;
      }
      if (r == k - 1) {
        tv = bv;
        ti = bi;
      }
    }
  } else if (bi >= 0) {
    int r = 0;
    for (int j = 0; j < TOPK_THREADS; j++) r += mi[j] >= 0 && better(mv[j], mi[j], bv, bi);
    if (r == k - 1) {
      tv = bv;
      ti = bi;
    }
  }
  __syncthreads();
  const float t = tv;
  const int tI = ti;
  for (int q = tid; q < n; q += TOPK_THREADS) {
    const int id = si[q];
    if (id >= 0 && (tI < 0 || !better(t, tI, sv[q], id))) {
      const int s = atomicAdd(&ncand, 1);
      if (s < TOPK_CAND) {
        cv[s] = sv[q];
        ci[s] = id;
      }
    }
  }
  __syncthreads();
  const int c = ncand;
  if (c > TOPK_CAND) {
    topk_block(sv, si, n, k, ov, oi);
    return;
  }
  for (int i = c + tid; i < k; i += TOPK_THREADS) {
    ov[i] = -INFINITY;
    oi[i] = -1;
  }
  for (int i = tid; i < c; i += TOPK_THREADS) {
    const float v = cv[i];
    const int id = ci[i];
    int r = 0;
    for (int j = 0; j < c; j++) r += better(cv[j], ci[j], v, id);
    if (r < k) {
      ov[r] = v;
      oi[r] = id;
    }
  }
  __syncthreads();
}
