// attn_paged.cuh: the batch runner's attention over the paged KV cache
// (included by kernels.cu after rope.cuh, whose layout it reads): decode
// tokens by flash-decoding (pattn_dec, pattn_decf, pattn_decc), prompt
// chunks on f16 tensor cores (pattn_pre, pattn_comb).

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
template <int HD, int G, bool FUSED, int CS>
__device__ __forceinline__ void pattn_dec(const float* __restrict__ src, int H, int KVH,
                                          const float* __restrict__ qgain, const float* __restrict__ kgain,
                                          float eps, const float2* __restrict__ rope, const int* __restrict__ toks,
                                          const int* __restrict__ pos, const int* __restrict__ toff,
                                          const int* __restrict__ tabs, int bs, int sh, __half* Kc, __half* Vc,
                                          float scale, int nsplit, int minchunk, float* __restrict__ pm,
                                          float* __restrict__ pl, float* __restrict__ pacc, unsigned* counter,
                                          float* __restrict__ out, const float* __restrict__ bias, int cmax) {
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
      const int h = hg * G + g;
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
        out[((size_t)t * H + hg * G + g) * HD + d] = o / L;
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
#define PD_INST(HD, G)                                                                                        \
  extern "C" __global__ void __launch_bounds__(256) pattn_dec_h##HD##_g##G(PD_ARGS) {                         \
    pattn_dec<HD, G, false, 1>(src, H, KVH, qgain, kgain, eps, rope, toks, pos, toff, tabs, bs, sh, Kc, Vc,       \
                               scale, nsplit, minchunk, pm, pl, pacc, counter, out, bias, 0);                       \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(256) pattn_decf_h##HD##_g##G(PD_ARGS) {                        \
    pattn_dec<HD, G, true, 1>(src, H, KVH, qgain, kgain, eps, rope, toks, pos, toff, tabs, bs, sh, Kc, Vc,        \
                              scale, nsplit, minchunk, pm, pl, pacc, counter, out, bias, 0);                        \
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

// pattn_decc: the fused pattn_dec with the splits of a (token, KV head) in
// clusters of 8 blocks (grid y a multiple of 8), combined through
// distributed shared memory; one cluster up to 8*cmax positions. Only in
// the compute_90 PTX (kernels_sm90.ptx): elsewhere the Go side uses
// pattn_decf.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PDC_INST(HD, G)                                                                                             \
  extern "C" __global__ void __cluster_dims__(1, 8, 1) __launch_bounds__(256) pattn_decc_h##HD##_g##G(PD_ARGS, int cmax) { \
    pattn_dec<HD, G, true, 8>(src, H, KVH, qgain, kgain, eps, rope, toks, pos, toff, tabs, bs, sh, Kc, Vc,              \
                              scale, nsplit, minchunk, pm, pl, pacc, counter, out, bias, cmax);                           \
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
#endif


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
template <int HD>
struct pre_shape {
  static constexpr int KT = HD > 128 ? 32 : 64;
};

template <int HD, int G>
__device__ __forceinline__ void pattn_pre(const float* __restrict__ q, const int* __restrict__ tiles,
                                          const int* __restrict__ pos, const int* __restrict__ toff,
                                          const int* __restrict__ tabs, int bs, int sh, int H, int KVH,
                                          const __half* __restrict__ Kc, const __half* __restrict__ Vc, float scale,
                                          int nsplit, float* __restrict__ pm, float* __restrict__ pl,
                                          float* __restrict__ pacc, float* __restrict__ out) {
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
  const int nkt = pmax / KT + 1;
  const int chunk = (nkt + nsplit - 1) / nsplit;
  const int kt0 = split * chunk, kt1 = min(nkt, kt0 + chunk);
  if (kt0 >= kt1) return;  // pattn_comb reads only the splits with keys
  const int r0 = warp * 16 + gid, r1 = r0 + 8;
  const int g = r0 / QT;  // rows r0 and r1 share the head (QT >= 16)
  const int tq0 = r0 % QT, tq1 = r1 % QT;
  const int qp0 = p0 + min(tq0, qn - 1), qp1 = p0 + min(tq1, qn - 1);
  const int wmax = p0 + min((warp * 16) % QT + 15, qn - 1);  // the warp's last query position

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
    if (kt * KT <= wmax) {
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
      const bool diag = kt * KT + KT - 1 > p0;  // keys past some row's position: the mask
#pragma unroll
      for (int nt = 0; nt < NNT; nt++) {
        if (diag) {
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const int key = kt * KT + nt * 8 + tig * 2 + e;
            if (key > qp0) s[nt][e] = -INFINITY;
            if (key > qp1) s[nt][2 + e] = -INFINITY;
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
  const float i0 = 1.f / l0, i1 = 1.f / l1;
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
// (as pattn_pre cuts them).
template <int HD>
__device__ __forceinline__ void pattn_comb(const int* __restrict__ tiles, const int* __restrict__ pos, int H,
                                           int nsplit, const float* __restrict__ pm, const float* __restrict__ pl,
                                           const float* __restrict__ pacc, float* __restrict__ out) {
  constexpr int KT = pre_shape<HD>::KT;
  const int t0 = tiles[2 * blockIdx.x], qn = tiles[2 * blockIdx.x + 1], h = blockIdx.y;
  const int nkt = (pos[t0] + qn - 1) / KT + 1;
  const int chunk = (nkt + nsplit - 1) / nsplit;
  const int nact = (nkt + chunk - 1) / chunk;
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
    out[((size_t)(t0 + tq) * H + h) * HD + d] = acc / L;
  }
}

#define PP_ARGS                                                                                                  \
  const float *__restrict__ q, const int *__restrict__ tiles, const int *__restrict__ pos,                       \
      const int *__restrict__ toff, const int *__restrict__ tabs, int bs, int sh, int H, int KVH,                \
      const __half *__restrict__ Kc, const __half *__restrict__ Vc, float scale, int nsplit,                     \
      float *__restrict__ pm, float *__restrict__ pl, float *__restrict__ pacc, float *__restrict__ out
// Up to head dimension 128: at most 168 registers, three blocks an SM (as
// their shared memory allows).
#define PP_INST(HD, G)                                                                                           \
  extern "C" __global__ void __launch_bounds__(128, (HD) > 128 ? 1 : 3) pattn_pre_h##HD##_g##G(PP_ARGS) {       \
    pattn_pre<HD, G>(q, tiles, pos, toff, tabs, bs, sh, H, KVH, Kc, Vc, scale, nsplit, pm, pl, pacc, out);       \
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

#define PC_INST(HD)                                                                                             \
  extern "C" __global__ void __launch_bounds__(256) pattn_comb_h##HD(                                           \
      const int* __restrict__ tiles, const int* __restrict__ pos, int H, int nsplit, const float* __restrict__ pm, \
      const float* __restrict__ pl, const float* __restrict__ pacc, float* __restrict__ out) {                  \
    pattn_comb<HD>(tiles, pos, H, nsplit, pm, pl, pacc, out);                                                   \
  }
PC_INST(32)
PC_INST(64)
PC_INST(128)
PC_INST(256)
