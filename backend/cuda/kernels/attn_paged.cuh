// attn_paged.cuh: the batch runner's attention over the paged KV cache
// (included by kernels.cu after rope.cuh, whose layout it reads): decode
// tokens by flash-decoding (pattn_dec, pattn_decf, pattn_decc); prompt
// chunks in attn_prefill.cuh.

// The options of the extended variants (EXT, kernels named ..._ws): a
// sliding window (window > 0: the query at position p attends to the
// positions p-window+1..p only; the blocks before the window are neither
// read nor looked up in the table, so a local layer costs what its window
// needs) and attention sinks (sinks, when not null: a logit per query
// head that joins the denominator of its softmax). Without EXT the code
// is that of the kernels before the options.

// attn_fin returns an output value o/L of a softmax whose values are
// relative to the maximum M (log2 units), with head h's sink logit (natural
// units) in the denominator when sinks is not null.
__device__ __forceinline__ float attn_fin(float o, float L, float M, const float* __restrict__ sinks, int h) {
  if (sinks) {
    const float s = sinks[h] * 1.4426950408889634f, mf = fmaxf(M, s), a = exp2f(M - mf);
    return o * a / (L * a + exp2f(s - mf));
  }
  return o / L;
}

// ---------------------------------------------------------------- paged decode attention (flash-decoding)

// pattn_dec: flash-decoding (3 cp.async stages, 256 threads) for the
// decode tokens of a batch, each its own sequence at its own length,
// through the block tables. Grid (H/G head groups, nsplit, tokens): block (hg, s, z) takes
// token t = z (FUSED) or toks[z], at position pos[t], and the G query heads
// hg*G.. (of KV head hg*G/(H/KVH); G is all of its query heads or an equal
// share) over the positions [s*chunk, min((s+1)*chunk, pos+1)), chunk =
// max(minchunk, ceil((pos+1)/nsplit)): lengths come from device memory, so
// a captured graph serves every length. FUSED (pure decode batches): src
// is the QKV projection (H+2*KVH heads a token); the kernel normalizes and
// rotates the queries, and the block holding the new position also the
// key, appending key and value to the cache, each head with its bias
// first when bias is not null (as qk_rope_paged). Otherwise
// src holds the rotated queries (H heads a token) and the cache already
// holds every key and value (qk_rope_paged ran first). Partials per
// (z, head, split); counters per (z, head group).
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
//
// EXT: the window and the sinks (above). With a window the positions a
// token attends to are [lo, pos] (lo = max(0, pos+1-window)), split as the
// positions [0, pos] are without it.
template <int HD, int G, bool FUSED, int CS, bool EXT>
__device__ __forceinline__ void pattn_dec(const float* __restrict__ src, int H, int KVH,
                                          const float* __restrict__ qgain, const float* __restrict__ kgain,
                                          float eps, const float2* __restrict__ rope, const int* __restrict__ toks,
                                          const int* __restrict__ pos, const int* __restrict__ toff,
                                          const int* __restrict__ tabs, int bs, int sh, __half* Kc, __half* Vc,
                                          float scale, int nsplit, int minchunk, float* __restrict__ pm,
                                          float* __restrict__ pl, float* __restrict__ pacc, unsigned* counter,
                                          float* __restrict__ out, const float* __restrict__ bias, int cmax,
                                          int window, const float* __restrict__ sinks) {
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

  const int hg = blockIdx.x, split = blockIdx.y, z = blockIdx.z;
  const int kvh = hg * G / (H / KVH);            // the KV head of query heads hg*G..
  const bool writer = hg * G % (H / KVH) == 0;  // its first group appends the new key and value
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int t = FUSED ? z : toks[z];
  const int p = pos[t], seq = p + 1;
  const int* tab = tabs + toff[t];
  const int lo = EXT && window > 0 ? max(0, seq - window) : 0;  // the first position attended to
  const int len = seq - lo;
  const float* sk = EXT ? sinks : nullptr;
  int chunk = max(minchunk, (len + nsplit - 1) / nsplit);
  if (CS > 1 && (len + CS - 1) / CS <= cmax) chunk = max(minchunk, (len + CS - 1) / CS);
  const int start = lo + split * chunk, end = min(seq, start + chunk);
  const int nact = (len + chunk - 1) / chunk;  // splits with positions
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
      norm_rope_warp<HD>(qkv + (size_t)(hg * G + g) * HD, qgain, eps, p, rope, &qs[g][0],
                         bias ? bias + (size_t)(hg * G + g) * HD : nullptr);
    if (owner && warp == NW - 1)
      norm_rope_warp<HD>(qkv + (size_t)(H + kvh) * HD, kgain, eps, p, rope, kt, bias ? bias + (size_t)(H + kvh) * HD : nullptr);
    __syncthreads();
    if (owner) {
      const size_t row = kv_row(tab, p, bs, sh, KVH, kvh, HD);
      for (int d = tid; d < HD; d += NT) {
        const __half kh = __float2half(kt[d]);
        const float vf = qkv[(size_t)(H + KVH + kvh) * HD + d];
        const __half vh = __float2half(bias ? vf + bias[(size_t)(H + KVH + kvh) * HD + d] : vf);
        if (writer) {
          Kc[row + d] = kh;
          Vc[row + d] = vh;
        }
        knew[d] = kh;
        vnew[d] = vh;
      }
      __syncthreads();
    }
  } else {
    const float* qt = src + (size_t)t * H * HD + (size_t)hg * G * HD;
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
    const int h = hg * G + g;
    if (nact == 1) {
      out[((size_t)t * H + h) * HD + d] = attn_fin(o, L, M, sk, h);
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
      const int h = hg * G + g;
      if (ncl == 1) {
        out[((size_t)t * H + h) * HD + d] = attn_fin(o, L, M, sk, h);
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
    // The last block of this head group to finish (of the nact that write
    // partials: a split each, or a slice of a cluster's each) combines the
    // ncl partials, a thread per output value, 16 loaded at once.
    __threadfence();
    __syncthreads();
    unsigned* cnt = counter + (size_t)z * gridDim.x + hg;
    if (tid == 0) last = atomicAdd(cnt, 1u) == (unsigned)(nact - 1);
    __syncthreads();
    if (last) {
      __threadfence();
      if (tid == 0) *cnt = 0;
      constexpr int SB = 16;
      for (int it = tid; it < G * HD; it += NT) {
        const int g = it / HD, d = it % HD;
        const size_t h = zb + hg * G + g;
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
        out[((size_t)t * H + hg * G + g) * HD + d] = attn_fin(o, L, M, sk, hg * G + g);
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
      float *__restrict__ out, const float *__restrict__ bias
#define PD_CALL(FUSED, CS, EXT, CMAX, WIN, SINKS)                                                              \
  pattn_dec<HD, G, FUSED, CS, EXT>(src, H, KVH, qgain, kgain, eps, rope, toks, pos, toff, tabs, bs, sh, Kc, Vc,   \
                                   scale, nsplit, minchunk, pm, pl, pacc, counter, out, bias, CMAX, WIN, SINKS)
#define PD_INST(HD_, G_)                                                                                      \
  extern "C" __global__ void __launch_bounds__(256) pattn_dec_h##HD_##_g##G_(PD_ARGS) {                      \
    constexpr int HD = HD_, G = G_;                                                                           \
    PD_CALL(false, 1, false, 0, 0, nullptr);                                                                  \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(256) pattn_decf_h##HD_##_g##G_(PD_ARGS) {                     \
    constexpr int HD = HD_, G = G_;                                                                           \
    PD_CALL(true, 1, false, 0, 0, nullptr);                                                                   \
  }
// The extended variants (window and sinks: their last two arguments).
#define PD_INST_WS(HD_, G_)                                                                                   \
  extern "C" __global__ void __launch_bounds__(256) pattn_dec_h##HD_##_g##G_##_ws(PD_ARGS, int window,        \
                                                                                const float* __restrict__ sinks) { \
    constexpr int HD = HD_, G = G_;                                                                           \
    PD_CALL(false, 1, true, 0, window, sinks);                                                                \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(256) pattn_decf_h##HD_##_g##G_##_ws(PD_ARGS, int window,       \
                                                                                 const float* __restrict__ sinks) { \
    constexpr int HD = HD_, G = G_;                                                                           \
    PD_CALL(true, 1, true, 0, window, sinks);                                                                 \
  }
PD_INST(32, 1)
PD_INST(32, 2)
PD_INST(32, 4)
PD_INST(64, 1)
PD_INST(64, 2)
PD_INST(64, 3)
PD_INST(64, 4)
PD_INST(64, 5)
PD_INST(64, 6)
PD_INST(64, 7)
PD_INST(64, 8)
PD_INST(128, 1)
PD_INST(128, 2)
PD_INST(128, 3)
PD_INST(128, 4)
PD_INST(128, 5)
PD_INST(128, 6)
PD_INST(128, 7)
PD_INST(128, 8)
PD_INST(256, 1)
PD_INST(256, 2)
PD_INST(256, 3)
PD_INST(256, 4)
// The extended variants' groups (shapes.go's decodeGroupsWS): powers of two.
PD_INST_WS(32, 1)
PD_INST_WS(32, 2)
PD_INST_WS(32, 4)
PD_INST_WS(64, 1)
PD_INST_WS(64, 2)
PD_INST_WS(64, 4)
PD_INST_WS(64, 8)
PD_INST_WS(128, 1)
PD_INST_WS(128, 2)
PD_INST_WS(128, 4)
PD_INST_WS(128, 8)
PD_INST_WS(256, 1)
PD_INST_WS(256, 2)
PD_INST_WS(256, 4)

// pattn_decc: the fused pattn_dec with the splits of a (token, KV head) in
// clusters of 8 blocks (grid y a multiple of 8), combined through
// distributed shared memory; one cluster up to 8*cmax positions. Only in
// the compute_90 PTX (kernels_sm90.ptx): elsewhere the Go side uses
// pattn_decf.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PDC_INST(HD_, G_)                                                                                           \
  extern "C" __global__ void __cluster_dims__(1, 8, 1) __launch_bounds__(256) pattn_decc_h##HD_##_g##G_(PD_ARGS, int cmax) { \
    constexpr int HD = HD_, G = G_;                                                                                 \
    PD_CALL(true, 8, false, cmax, 0, nullptr);                                                                      \
  }
#define PDC_INST_WS(HD_, G_)                                                                                        \
  extern "C" __global__ void __cluster_dims__(1, 8, 1) __launch_bounds__(256)                                      \
      pattn_decc_h##HD_##_g##G_##_ws(PD_ARGS, int cmax, int window, const float* __restrict__ sinks) {             \
    constexpr int HD = HD_, G = G_;                                                                                 \
    PD_CALL(true, 8, true, cmax, window, sinks);                                                                    \
  }
PDC_INST(32, 1)
PDC_INST(32, 2)
PDC_INST(32, 4)
PDC_INST(64, 1)
PDC_INST(64, 2)
PDC_INST(64, 3)
PDC_INST(64, 4)
PDC_INST(64, 5)
PDC_INST(64, 6)
PDC_INST(64, 7)
PDC_INST(64, 8)
PDC_INST(128, 1)
PDC_INST(128, 2)
PDC_INST(128, 3)
PDC_INST(128, 4)
PDC_INST(128, 5)
PDC_INST(128, 6)
PDC_INST(128, 7)
PDC_INST(128, 8)
PDC_INST(256, 1)
PDC_INST(256, 2)
PDC_INST(256, 3)
PDC_INST(256, 4)
PDC_INST_WS(32, 1)
PDC_INST_WS(32, 2)
PDC_INST_WS(32, 4)
PDC_INST_WS(64, 1)
PDC_INST_WS(64, 2)
PDC_INST_WS(64, 4)
PDC_INST_WS(64, 8)
PDC_INST_WS(128, 1)
PDC_INST_WS(128, 2)
PDC_INST_WS(128, 4)
PDC_INST_WS(128, 8)
PDC_INST_WS(256, 1)
PDC_INST_WS(256, 2)
PDC_INST_WS(256, 4)
#endif
