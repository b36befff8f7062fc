// sample.cuh: sampling on the device (included by kernels.cu after
// topk.cuh, whose selections it uses).
//
// Sampling of a batch's output rows under each row's own parameters
// (sample.go), so that a step reads back one id a row (plus the requested
// log-probabilities) instead of the logits. The semantics are package
// sampling's (its documentation is the specification); the draw is a
// Gumbel-max: the token with the largest (x - m)/T + g, g = -log(E),
// E = -log(u) an Exp(1) variable from a Philox4x32-10 uniform keyed by the
// row's 64-bit seed and counted by (token id / 4, position, 0, 0), so that
// the draw depends on the seed, the position and the logits alone, never on
// the row's place in the batch or how the row is split. The noise of a
// 32-bit uniform lies in [-3.14, 22.9], so a token whose log-weight is
// below the most likely one's by more than 26 never wins: sampling's
// cutoff (30) holds by construction.
//
// Kernels, each launched only when some row needs it (grid y: the row):
//   samp_stats  per chunk the max and sum of exp(x - max): raw logits
//               (mode 0, rows with logprobs) or after bias, penalties and
//               mask (mode 1, the max for min_p);
//   samp_topkw  top_k up to 27 (k <= 32 and 4,096 partials a row): a
//               warp a chunk of 1,024, the chunk's k best;
//   samp_topk   per chunk of TOPK_SMEM the k best: raw (mode 0, top
//               logprobs) or after bias, penalties and mask (mode 1, a
//               larger top_k, or top_p alone);
//   samp_prep   the logit bias and the penalties, a sparse patch of the
//               tokens listed for the row (originals saved for logprobs);
//   samp_race   per chunk the Gumbel-max winner (rows without top_k; noise
//               off for greedy rows) and the plain argmax (a fallback);
//   samp_final  per row: merges the partials, draws among the top_k
//               candidates after top_p and min_p, writes the id (device
//               and page-locked host) and the log-probabilities; the last
//               block writes the step number where the host polls.
// A decode step's sampling is captured into its graph after the output
// head (sample.go): launched with programmatic dependent launch there when
// the graph's kernels are, each kernel waits (griddepcontrol.wait) before
// it reads anything.

#define SAMP_CHUNKS 64   // chunks a row is split into by samp_stats and samp_race
#define SAMP_TOPLP 20    // most top log-probabilities (sampling.MaxTopLogprobs)
#define SAMP_OUT 44      // ints of a row's host output: see samp_final
#define SAMP_CUTOFF -30.f

// Per-row parameters (sample.go's sampRow, 16 ints).
struct SampRow {
  unsigned seed_lo, seed_hi;
  int pos;      // the index of the token drawn (the Philox counter); + the launch's delta
  float invT;   // 1/temperature; 0: greedy (the largest logit after bias, penalties and mask)
  int topk;     // 0: off; else at most the launch's kmax
  float topp;   // 0: off
  float lnminp; // -inf: off
  int flags;    // SAMP_LOGPROBS, SAMP_SKIP
  int ntop;     // top log-probabilities
  int mask;     // offset (in words) of the row's allowed-token bitmask, -1: none
  int prep, nprep; // the row's entries of the patch list
  float rep, pres, freq;
  int pad;
};
#define SAMP_LOGPROBS 1
#define SAMP_SKIP 2  // a padding row of a decode graph's bucket: only counted by samp_final

// Patch list entry (sample.go's sampPatch).
struct SampPatch {
  int id;
  float bias;
  int count;   // times generated
  int prompt;  // 1: in the prompt
};

__device__ __forceinline__ uint4 philox4x32_10(uint4 c, unsigned k0, unsigned k1) {
#pragma unroll
  for (int r = 0; r < 10; r++) {
    const unsigned lo0 = 0xD2511F53u * c.x, hi0 = __umulhi(0xD2511F53u, c.x);
    const unsigned lo1 = 0xCD9E8D57u * c.z, hi1 = __umulhi(0xCD9E8D57u, c.z);
    c = make_uint4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// gumbel returns -log(E), E = -log(u), u = (r + 1/2) / 2^32, computed with
// full relative precision at both ends.
__device__ __forceinline__ float gumbel(unsigned r) {
  float e;
  if (r < 0x80000000u) {
    e = -logf(((float)r + 0.5f) * 2.3283064365386963e-10f);
  } else {
    e = -log1pf(-(((float)(0xFFFFFFFFu - r) + 0.5f) * 2.3283064365386963e-10f));
  }
  return -logf(e);
}

// samp_noise returns the noise of token id at row's position.
__device__ __forceinline__ float samp_noise(const SampRow& p, int pos, int id) {
  const uint4 r = philox4x32_10(make_uint4((unsigned)id >> 2, (unsigned)pos, 0u, 0u), p.seed_lo, p.seed_hi);
  const unsigned w = (id & 3) == 0 ? r.x : (id & 3) == 1 ? r.y : (id & 3) == 2 ? r.z : r.w;
  return gumbel(w);
}

__device__ __forceinline__ bool samp_allowed(const unsigned* __restrict__ masks, int off, int id) {
  return off < 0 || (masks[off + (id >> 5)] >> (id & 31)) & 1u;
}

// samp_chunk returns the [lo, hi) of chunk c of C over n elements, in
// whole groups of 4.
__device__ __forceinline__ void samp_chunk(int n, int c, int C, int& lo, int& hi) {
  const int g = (n + 3) >> 2;
  const int per = (g + C - 1) / C;
  lo = min(n, c * per * 4);
  hi = min(n, lo + per * 4);
}

// merge_ms merges the (max, sum of exp(x - max)) pair (m2, s2) into (m, s).
__device__ __forceinline__ void merge_ms(float& m, float& s, float m2, float s2) {
  if (!(m2 > -INFINITY)) return;
  if (!(m > -INFINITY)) {
    m = m2;
    s = s2;
    return;
  }
  if (m2 > m) {
    s = s * expf(m - m2) + s2;
    m = m2;
  } else {
    s += s2 * expf(m2 - m);
  }
}

// samp_stats: grid (SAMP_CHUNKS, rows), 256 threads. Mode 0: rows with
// logprobs, raw logits, out[row][chunk] = (max, sum exp(x - max)); mode
// 1: sampled rows without top_k with min_p or top_p, after the patches,
// masked, (max, sum exp((x - max)/T)). NaN and -Inf are left out.
extern "C" __global__ void __launch_bounds__(256) samp_stats(const float* __restrict__ logits, int V,
                                                             const SampRow* __restrict__ rows,
                                                             const unsigned* __restrict__ masks, int mode,
                                                             float2* __restrict__ out) {
  __shared__ float red[32];
  PDL_LAUNCH();
  PDL_WAIT();
  const SampRow p = rows[blockIdx.y];
  if (mode == 0 ? !(p.flags & SAMP_LOGPROBS)
                : (p.topk > 0 || p.invT == 0.f || !(p.lnminp > -INFINITY || p.topp > 0.f)))
    return;
  const float sc = mode == 1 ? p.invT : 1.f;
  const float* x = logits + (size_t)blockIdx.y * V;
  int lo, hi;
  samp_chunk(V, blockIdx.x, gridDim.x, lo, hi);
  const int mk = mode == 1 ? p.mask : -1;
  float m = -INFINITY;
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    const float v = x[i];
    if (v > m && samp_allowed(masks, mk, i)) m = v;
  }
  m = block_max(m, red);
  float s = 0.f;
  if (m > -INFINITY && m < INFINITY) {
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      const float v = x[i];
      if (v > -INFINITY && samp_allowed(masks, mk, i)) s += expf(__fmul_rn(v - m, sc));
    }
  } else if (m == INFINITY) {
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x)
      if (x[i] == INFINITY && samp_allowed(masks, mk, i)) s += 1.f;
  }
  s = block_sum(s, red);
  if (threadIdx.x == 0) out[(size_t)blockIdx.y * gridDim.x + blockIdx.x] = make_float2(m, s);
}

// samp_topk: grid (chunks of TOPK_SMEM, rows), TOPK_THREADS threads. Mode
// (bit 0) 0: rows with top log-probabilities (k = ntop), raw logits; 1:
// sampled rows with top_k (k = topk) or with top_p alone (k = kmax: the
// nucleus when it is that small), after the patches, masked. Writes the chunk's k
// best (NaN and -Inf left out; ids -1 past what it has) to
// pval/pidx[(row*gridDim.x + chunk)*kmax ..]. Mode bit 1 (fast): chunks
// of whole groups of 4 (samp_chunk), read as float4 when V allows, and
// topk_fast's fast bound.
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) samp_topk(const float* __restrict__ logits, int V,
                                                                     const SampRow* __restrict__ rows,
                                                                     const unsigned* __restrict__ masks, int mode,
                                                                     int kmax, float* __restrict__ pval,
                                                                     int* __restrict__ pidx) {
  __shared__ __align__(16) float sv[TOPK_SMEM];
  __shared__ __align__(16) int si[TOPK_SMEM];
  PDL_LAUNCH();
  PDL_WAIT();
  const SampRow p = rows[blockIdx.y];
  const bool post = mode & 1, fast = mode & 2;
  const int k = !post ? ((p.flags & SAMP_LOGPROBS) ? p.ntop : 0)
                      : (p.invT == 0.f ? 0 : p.topk > 0 ? p.topk : p.topp > 0.f ? kmax : 0);
  if (k <= 0) return;
  const float* x = logits + (size_t)blockIdx.y * V;
  int lo, hi;
  if (fast) {
    samp_chunk(V, blockIdx.x, gridDim.x, lo, hi);
  } else {
    const int chunk = (V + gridDim.x - 1) / gridDim.x;
    lo = blockIdx.x * chunk;
    hi = min(V, lo + chunk);
  }
  const int m = max(0, hi - lo);
  const int mk = post ? p.mask : -1;
  if (fast && (V & 3) == 0) {  // lo and m are multiples of 4
#pragma unroll 4
    for (int q = 4 * threadIdx.x; q < m; q += 4 * TOPK_THREADS) {
      const float4 v = *reinterpret_cast<const float4*>(x + lo + q);
      const int b = lo + q;
      *reinterpret_cast<float4*>(sv + q) = v;
      *reinterpret_cast<int4*>(si + q) =
          make_int4(v.x > -INFINITY && samp_allowed(masks, mk, b) ? b : -1,
                    v.y > -INFINITY && samp_allowed(masks, mk, b + 1) ? b + 1 : -1,
                    v.z > -INFINITY && samp_allowed(masks, mk, b + 2) ? b + 2 : -1,
                    v.w > -INFINITY && samp_allowed(masks, mk, b + 3) ? b + 3 : -1);
    }
  } else {
    for (int q = threadIdx.x; q < m; q += TOPK_THREADS) {
      const float v = x[lo + q];
      sv[q] = v;
      si[q] = v > -INFINITY && samp_allowed(masks, mk, lo + q) ? lo + q : -1;
    }
  }
  __syncthreads();
  const size_t o = ((size_t)blockIdx.y * gridDim.x + blockIdx.x) * kmax;
  topk_fast(sv, si, m, k, pval + o, pidx + o, fast);
}

#define TOPKW_CAP 96  // candidates a warp of samp_topkw ranks (more: k rounds of warp argmax)

// samp_topkw: grid (ceil(gw/8), rows), 256 threads: top_k for rows with
// 0 < k <= kw (<= 32; the host launches it when every top_k row has
// one, and no row takes top_p alone), a warp a chunk of at most 1,024
// logits (samp_chunk over gw chunks), held in registers (8 float4s a
// lane), after the patches, masked: the chunk's k best (any order; NaN,
// -Inf and masked tokens left out; (-Inf, -1) past what it has) to
// pval/pidx[(row*gw + chunk)*kw ..], samp_topk's partials with gw chunks
// and stride kw. The bound: the warp's 32 lane maxima sorted (bitonic),
// the k-th best T; the entries at least as good as T (k or more, ~1.5k
// for iid values) compacted by ballot and ranked by counting; past
// TOPKW_CAP of them (ties), k rounds of warp argmax, each after the last
// one taken in `better`'s order. The same k entries as samp_topk's.
extern "C" __global__ void __launch_bounds__(256) samp_topkw(const float* __restrict__ logits, int V,
                                                             const SampRow* __restrict__ rows,
                                                             const unsigned* __restrict__ masks, int gw, int kw,
                                                             float* __restrict__ pval, int* __restrict__ pidx) {
  __shared__ float cvs[8][TOPKW_CAP];
  __shared__ int cis[8][TOPKW_CAP];
  PDL_LAUNCH();
  PDL_WAIT();
  const SampRow p = rows[blockIdx.y];
  const int k = p.invT == 0.f ? 0 : p.topk;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int c = blockIdx.x * 8 + warp;
  if (k <= 0 || c >= gw) return;  // no block-wide synchronization below
  const float* x = logits + (size_t)blockIdx.y * V;
  int lo, hi;
  samp_chunk(V, c, gw, lo, hi);
  // Lane l's entries: groups of 4 from lo + 4*(l + 32*j), j < 8; -Inf
  // stands for an entry left out.
  float v[32];
  const bool vec = (V & 3) == 0;
#pragma unroll
  for (int j = 0; j < 8; j++) {
    const int q = lo + 4 * (lane + 32 * j);
    if (vec && q < hi) {
      const float4 t = *reinterpret_cast<const float4*>(x + q);
      v[4 * j] = t.x, v[4 * j + 1] = t.y, v[4 * j + 2] = t.z, v[4 * j + 3] = t.w;
    } else {
#pragma unroll
      for (int e = 0; e < 4; e++) v[4 * j + e] = q + e < hi ? x[q + e] : -INFINITY;
    }
  }
  float bv = NAN;
  int bi = -1;
#pragma unroll
  for (int j = 0; j < 32; j++) {
    const int id = lo + 4 * (lane + 32 * (j >> 2)) + (j & 3);
    if (!(v[j] > -INFINITY) || !samp_allowed(masks, p.mask, id)) v[j] = -INFINITY;  // NaN, -Inf, masked
    if (v[j] > -INFINITY && (bi < 0 || better(v[j], id, bv, bi))) {
      bv = v[j];
      bi = id;
    }
  }
  // The lane maxima sorted, best first (none last): lane L holds the
  // L-th best; the k-th best bounds the chunk's k best.
  warp_sort_best(bv, bi);
  const float tv = __shfl_sync(FULL, bv, k - 1);
  const int ti = __shfl_sync(FULL, bi, k - 1);  // -1: fewer than k lanes hold entries: every entry passes
  int nc = 0;
#pragma unroll
  for (int j = 0; j < 32; j++) {
    const int id = lo + 4 * (lane + 32 * (j >> 2)) + (j & 3);
    const bool in = v[j] > -INFINITY && (ti < 0 || !better(tv, ti, v[j], id));
    const unsigned b = __ballot_sync(FULL, in);
    const int at = nc + __popc(b & ((1u << lane) - 1));
    if (in && at < TOPKW_CAP) {
      cvs[warp][at] = v[j];
      cis[warp][at] = id;
    }
    nc += __popc(b);
  }
  __syncwarp();
  float* ov = pval + ((size_t)blockIdx.y * gw + c) * kw;
  int* oi = pidx + ((size_t)blockIdx.y * gw + c) * kw;
  if (nc <= TOPKW_CAP) {
    for (int i = lane; i < nc; i += 32) {
      const float cv = cvs[warp][i];
      const int ci = cis[warp][i];
      int r = 0;
      for (int j = 0; j < nc; j++) r += better(cvs[warp][j], cis[warp][j], cv, ci);
      if (r < k) {
        ov[r] = cv;
        oi[r] = ci;
      }
    }
    for (int r = nc + lane; r < k; r += 32) {
      ov[r] = -INFINITY;
      oi[r] = -1;
    }
    return;
  }
  // Many ties at the bound: k rounds, each the best entry after the last.
  float pv = NAN;
  int pi = -1;
  for (int r = 0; r < k; r++) {
    float rv = NAN;
    int ri = -1;
#pragma unroll
    for (int j = 0; j < 32; j++) {
      const int id = lo + 4 * (lane + 32 * (j >> 2)) + (j & 3);
      if (v[j] > -INFINITY && (pi < 0 || better(pv, pi, v[j], id)) && (ri < 0 || better(v[j], id, rv, ri))) {
        rv = v[j];
        ri = id;
      }
    }
    warp_argmax(rv, ri, by_valid());
    if (lane == 0) {
      ov[r] = ri >= 0 ? rv : -INFINITY;
      oi[r] = ri;
    }
    if (ri < 0) {  // nothing left: the rest stays empty
      for (int q = r + 1 + lane; q < k; q += 32) {
        ov[q] = -INFINITY;
        oi[q] = -1;
      }
      return;
    }
    pv = rv;
    pi = ri;
  }
}

// samp_penalize returns the logit v of a patched token: the bias, then
// the repetition penalty (prompt or generated tokens), then the frequency
// and presence penalties (generated tokens), as sampling.Patch.Apply.
__device__ __forceinline__ float samp_penalize(float v, const SampRow& p, const SampPatch& e) {
  v = __fadd_rn(v, e.bias);
  if (e.count > 0 || e.prompt) {
    v = v > 0.f ? __fdiv_rn(v, p.rep) : __fmul_rn(v, p.rep);
    if (e.count > 0) {
      v = __fsub_rn(v, __fmul_rn(p.freq, (float)e.count));
      v = __fsub_rn(v, p.pres);
    }
  }
  return v;
}

// samp_prep: grid rows, 256 threads: patches the listed tokens' logits in
// place, saving the raw values in orig (by entry).
extern "C" __global__ void __launch_bounds__(256) samp_prep(float* __restrict__ logits, int V,
                                                            const SampRow* __restrict__ rows,
                                                            const SampPatch* __restrict__ patches,
                                                            float* __restrict__ orig) {
  PDL_LAUNCH();
  PDL_WAIT();
  const SampRow p = rows[blockIdx.x];
  float* x = logits + (size_t)blockIdx.x * V;
  for (int j = threadIdx.x; j < p.nprep; j += blockDim.x) {
    const SampPatch e = patches[p.prep + j];
    const float v = x[e.id];
    orig[p.prep + j] = v;
    x[e.id] = samp_penalize(v, p, e);
  }
}

// samp_better orders race candidates: a larger score first, the lower id
// among ties; never-chosen entries have id 0x7fffffff and score -inf.
// by_race is it as the order argument of argmax_take and warp_argmax.
__device__ __forceinline__ bool samp_better(float a, int ia, float b, int ib) {
  if (a != b) return a > b;
  return ia < ib;
}
struct by_race {
  __device__ __forceinline__ bool operator()(float a, int ia, float b, int ib) const {
    return samp_better(a, ia, b, ib);
  }
};

// samp_race: grid (SAMP_CHUNKS, rows), 256 threads; sampled rows with
// top_k or top_p (the candidates' rows) exit. Per chunk the Gumbel-max winner over the allowed tokens
// (x >= -Inf excluded, NaN excluded; min_p's threshold from the mode-1
// stats) and the plain argmax of the allowed tokens (NaN last), to
// part[(row*C + chunk)*4 ..] as (score, id, argmax value, argmax id).
extern "C" __global__ void __launch_bounds__(256) samp_race(const float* __restrict__ logits, int V,
                                                            const SampRow* __restrict__ rows, int delta,
                                                            const unsigned* __restrict__ masks,
                                                            const float2* __restrict__ stats,
                                                            float4* __restrict__ part) {
  __shared__ float sv[8], sa[8];
  __shared__ int si[8], sai[8];
  PDL_LAUNCH();
  PDL_WAIT();
  const SampRow p = rows[blockIdx.y];
  if (p.flags & SAMP_SKIP) return;
  const bool greedy = p.invT == 0.f;
  if (!greedy && (p.topk > 0 || p.topp > 0.f)) return;
  const float* x = logits + (size_t)blockIdx.y * V;
  const int C = gridDim.x;
  int lo, hi;
  samp_chunk(V, blockIdx.x, C, lo, hi);
  float tau = -INFINITY, M = 0.f;  // scores are (x - M)*invT + noise
  if (!greedy && p.lnminp > -INFINITY) {
    float m = -INFINITY;
    for (int c = 0; c < C; c++) m = fmaxf(m, stats[(size_t)blockIdx.y * C + c].x);
    M = m;
    tau = p.lnminp;
  }
  const int pos = p.pos + delta;
  float bs = -INFINITY, av = NAN;
  int bi = 0x7fffffff, ai = 0x7fffffff;
  const bool vec = (V & 3) == 0;
  for (int b = lo + 4 * threadIdx.x; b < hi; b += 4 * blockDim.x) {
    float v[4];
    if (vec) {
      const float4 t = *reinterpret_cast<const float4*>(x + b);
      v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; j++) v[j] = b + j < hi ? x[b + j] : NAN;
    }
    bool any = false;
    bool ok[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
      ok[j] = b + j < hi && samp_allowed(masks, p.mask, b + j);
      if (ok[j]) argmax_take(av, ai, v[j], b + j);
      if (greedy) {
        ok[j] = false;
        continue;
      }
      ok[j] = ok[j] && v[j] > -INFINITY && __fmul_rn(v[j] - M, p.invT) >= tau;
      any |= ok[j];
    }
    if (!any) continue;
    const uint4 r = philox4x32_10(make_uint4((unsigned)b >> 2, (unsigned)pos, 0u, 0u), p.seed_lo, p.seed_hi);
    const unsigned rr[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
      if (!ok[j]) continue;
      const float s = v[j] == INFINITY ? INFINITY : __fmul_rn(v[j] - M, p.invT) + gumbel(rr[j]);
      argmax_take(bs, bi, s, b + j, by_race());
    }
  }
  if (greedy) {
    bs = av == av ? av : -INFINITY;
    bi = av == av ? ai : 0x7fffffff;
  }
  warp_argmax(bs, bi, by_race());
  warp_argmax(av, ai);
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
  if (l == 0) {
    sv[w] = bs;
    si[w] = bi;
    sa[w] = av;
    sai[w] = ai;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < (int)(blockDim.x >> 5); k++) {
      argmax_take(bs, bi, sv[k], si[k], by_race());
      argmax_take(av, ai, sa[k], sai[k]);
    }
    part[(size_t)blockIdx.y * C + blockIdx.x] = make_float4(bs, __int_as_float(bi), av, __int_as_float(ai));
  }
}

// samp_merge gathers the k-best partials of a row's g chunks (chunk c's
// at val/idx[(row*g + c)*stride ..]; the first per of each, k or all of
// them) into sv/si, entries past k as none, and selects their k best
// into cv/ci. Every thread of the block calls it.
__device__ __forceinline__ void samp_merge(float* sv, int* si, const float* val, const int* idx, int row, int g,
                                           int stride, int per, int k, float* cv, int* ci, bool fast) {
  const int nc = g * per;
  for (int q = threadIdx.x; q < nc; q += TOPK_THREADS) {
    const int c = q / per, j = q % per;
    const size_t o = ((size_t)row * g + c) * stride + j;
    sv[q] = j < k ? val[o] : -INFINITY;
    si[q] = j < k ? idx[o] : -1;
  }
  __syncthreads();
  topk_fast(sv, si, nc, k, cv, ci, fast);
  __syncthreads();
}

// samp_done counts a finished row of n; the last writes step to
// hids[flag] (after the rows' results, all fenced).
__device__ __forceinline__ void samp_done(volatile int* hids, int n, int flag, int step, unsigned* counter) {
  __threadfence_system();
  if (atomicAdd(counter, 1u) == (unsigned)(n - 1)) {
    *counter = 0;
    __threadfence_system();
    hids[flag] = step;
  }
}

// samp_final: grid rows, TOPK_THREADS threads. The row's token: the top_k
// candidates' draw (top_p over them, then min_p), or for top_p alone the
// kmax candidates' when the nucleus (over the whole row's mass, from the
// mode-1 stats) ends among them, or the race's winner, else the plain
// argmax of the allowed tokens, else 0. Writes the id to ids[row] (the
// next step's input) and hids[row] (page-locked), and hout[row*SAMP_OUT
// ..]: [3] 1 when a top_p nucleus is larger than the candidates (the
// row is left to the host; the id is the best candidate), and for rows
// with logprobs [1] the chosen token's raw log-probability, [2] the
// number n of top ones, then n (id, log-probability) pairs from [4]. The
// last block to finish writes step to hids[flag]. With fast, the merges
// read only the k entries of each chunk's partials that can hold any, and
// the candidates' noise is drawn by a thread each (the same draw). A
// decode graph's launch takes the step number from head[2] (the inputs'
// header; head null: step), and its padding rows (SAMP_SKIP) only count.
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) samp_final(
    const float* __restrict__ logits, int V, const SampRow* __restrict__ rows, int delta,
    const float4* __restrict__ race, int C, const float* __restrict__ kval, const int* __restrict__ kidx, int gk,
    int kmax, const float* __restrict__ lval, const int* __restrict__ lidx, int gl,
    const float2* __restrict__ rawstats, const float2* __restrict__ poststats, const SampPatch* __restrict__ patches,
    const float* __restrict__ orig,
    int* __restrict__ ids, volatile int* hids, volatile int* hout, int n, int flag, int step, unsigned* counter,
    int fast, const int* __restrict__ head) {
  __shared__ float sv[TOPK_SMEM];
  __shared__ int si[TOPK_SMEM];
  __shared__ float cv[TOPK_MAX];
  __shared__ int ci[TOPK_MAX];
  __shared__ int chosen, undrawn, nkeep;
  __shared__ float rawChosen, mtop;
  __shared__ float wsv[TOPK_THREADS / 32];
  __shared__ int wsi[TOPK_THREADS / 32];
  PDL_LAUNCH();
  PDL_WAIT();
  const int row = blockIdx.x;
  const SampRow p = rows[row];
  const float* x = logits + (size_t)row * V;
  if (p.flags & SAMP_SKIP) {
    if (threadIdx.x == 0) samp_done(hids, n, flag, head ? head[2] : step, counter);
    return;
  }
  if (threadIdx.x == 0) undrawn = 0;
  if (p.invT != 0.f && (p.topk > 0 || p.topp > 0.f)) {
    const bool nucleus = p.topk <= 0;  // top_p alone, over the kmax best
    const int k = nucleus ? kmax : p.topk;
    samp_merge(sv, si, kval, kidx, row, gk, kmax, fast ? k : kmax, k, cv, ci, fast);
    if (threadIdx.x == 0) {
      // sampling's keepTopK: the cutoff, top_p over what is left, then min_p.
      int keep = 0;
      const float m = cv[0];
      double z = 0;
      if (ci[0] >= 0 && m < INFINITY) {
        for (; keep < k && ci[keep] >= 0; keep++) {
          const float d = __fmul_rn(cv[keep] - m, p.invT);
          if (!(d >= SAMP_CUTOFF)) break;
          z += (double)expf(d);
        }
        int nk = keep;
        if (p.topp > 0.f) {
          double zt = z;  // top_p's mass: of the top_k candidates, or of the whole row
          if (nucleus) {
            zt = 0;
            for (int c = 0; c < SAMP_CHUNKS; c++) {
              const float2 t = poststats[(size_t)row * SAMP_CHUNKS + c];
              if (t.x > -INFINITY) zt += (double)t.y * (double)expf(__fmul_rn(t.x - m, p.invT));
            }
            zt = fmax(zt, z);
          }
          const double target = (double)p.topp * zt;
          double cum = 0;
          bool reached = false;
          for (int j = 0; j < keep; j++) {
            cum += (double)expf(__fmul_rn(cv[j] - m, p.invT));
            if (cum >= target) {
              nk = j + 1;
              reached = true;
              break;
            }
          }
          // The nucleus goes on past the kmax candidates (all valid and
          // above the cutoff): the host samples this row.
          if (nucleus && !reached && keep == k && ci[k - 1] >= 0) undrawn = 1;
        }
        for (int j = 0; j < nk; j++)
          if (__fmul_rn(cv[j] - m, p.invT) < p.lnminp) {
            nk = j;
            break;
          }
        keep = nk;
      }
      chosen = ci[0] >= 0 ? ci[0] : 0;  // +Inf first, or nothing kept: the best candidate
      nkeep = keep;
      mtop = m;
      if (!fast) {
        float bs = -INFINITY;
        int bi = 0x7fffffff;
        for (int j = 0; j < keep; j++) {
          const float s = __fmul_rn(cv[j] - m, p.invT) + samp_noise(p, p.pos + delta, ci[j]);
          argmax_take(bs, bi, s, ci[j], by_race());
        }
        if (keep > 0) chosen = bi;
      }
    }
    if (fast) {
      // The Gumbel-max among the kept candidates, one a thread.
      __syncthreads();
      const int keep = nkeep;
      float bs = -INFINITY;
      int bi = 0x7fffffff;
      if (threadIdx.x < keep) {
        bs = __fmul_rn(cv[threadIdx.x] - mtop, p.invT) + samp_noise(p, p.pos + delta, ci[threadIdx.x]);
        bi = ci[threadIdx.x];
      }
      warp_argmax(bs, bi, by_race());
      if ((threadIdx.x & 31) == 0) {
        wsv[threadIdx.x >> 5] = bs;
        wsi[threadIdx.x >> 5] = bi;
      }
      __syncthreads();
      if (threadIdx.x == 0 && keep > 0) {
        for (int w = 1; w < TOPK_THREADS / 32; w++) argmax_take(bs, bi, wsv[w], wsi[w], by_race());
        chosen = bi;
      }
    }
  } else if (threadIdx.x == 0) {
    float bs = -INFINITY, av = NAN;
    int bi = 0x7fffffff, ai = 0x7fffffff;
    for (int c = 0; c < C; c++) {
      const float4 t = race[(size_t)row * C + c];
      const int ti = __float_as_int(t.y), tai = __float_as_int(t.w);
      argmax_take(bs, bi, t.x, ti, by_race());
      argmax_take(av, ai, t.z, tai);
    }
    int id = bi;
    if (bi < 0 || bi >= V) id = ai;
    if (id < 0 || id >= V) id = 0;
    chosen = id;
  }
  __syncthreads();
  const int id = chosen;
  if (p.flags & SAMP_LOGPROBS) {
    // The raw logit of the chosen token: its saved original if patched.
    if (threadIdx.x == 0) rawChosen = x[id];
    __syncthreads();
    for (int j = threadIdx.x; j < p.nprep; j += TOPK_THREADS)
      if (patches[p.prep + j].id == id) rawChosen = orig[p.prep + j];
    __syncthreads();
    float m = -INFINITY, s = 0.f;
    for (int c = 0; c < SAMP_CHUNKS; c++) {
      const float2 t = rawstats[(size_t)row * SAMP_CHUNKS + c];
      merge_ms(m, s, t.x, t.y);
    }
    const bool inf = m == INFINITY;
    const float lse = inf ? 0.f : m + logf(s);
    auto lp = [&](float v) -> float {
      if (inf) return v == INFINITY ? -logf(s) : (v == v ? -INFINITY : NAN);
      return v - lse;
    };
    volatile int* o = hout + (size_t)row * SAMP_OUT;
    int nt = 0;
    if (p.ntop > 0) {
      const int k = p.ntop;
      samp_merge(sv, si, lval, lidx, row, gl, SAMP_TOPLP, fast ? k : SAMP_TOPLP, k, cv, ci, fast);
      if (threadIdx.x == 0)
        for (int j = 0; j < k && ci[j] >= 0; j++) {
          o[4 + 2 * nt] = ci[j];
          o[5 + 2 * nt] = __float_as_int(lp(cv[j]));
          nt++;
        }
    }
    if (threadIdx.x == 0) {
      o[1] = __float_as_int(lp(rawChosen));
      o[2] = nt;
    }
  }
  if (threadIdx.x == 0) {
    hout[(size_t)row * SAMP_OUT + 3] = undrawn;
    ids[row] = id;
    hids[row] = id;
    samp_done(hids, n, flag, head ? head[2] : step, counter);
  }
}
