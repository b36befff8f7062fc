// attn_decode.cuh: decode attention of the single-sequence Runner, attn_fd (included by kernels.cu; uses its helpers).

// ================================================================ attention (decode): flash-decoding

// The decode attention kernel's arguments (attn_fd and its variants).
#define AD_ARGS                                                                                             \
  const float *__restrict__ qkv, int H, int KVH, const float *__restrict__ qgain,                          \
      const float *__restrict__ kgain, float eps, const float2 *__restrict__ rope,                         \
      const int *__restrict__ params, __half *Kc, __half *Vc, int cap, float scale, int nsplit, int chcap, \
      int minchunk, float *__restrict__ pm, float *__restrict__ pl, float *__restrict__ pacc,              \
      unsigned *counter, float *__restrict__ out

// attn_fd: attention of the one new token, split-K with an online softmax
// (flash-decoding). Grid (H/G head groups, nsplit), NT threads (NW = NT/32
// warps). G is the number of query heads a block takes: all the H/KVH of a
// KV head, or (for ratios without a kernel of their own, or when G*HD would
// not fit in shared memory) an equal share of them, the KV head's first
// group then appending its key and value. Block (hg, s) takes the query
// heads hg*G.. of KV head hg*G/(H/KVH) over the positions
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
  const int hg = blockIdx.x, split = blockIdx.y;
  const int kvh = hg * G / (H / KVH);            // the KV head of query heads hg*G..
  const bool writer = hg * G % (H / KVH) == 0;  // its first group appends the new key and value
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
    norm_rope_warp<HD>(qkv + (size_t)(hg * G + g) * HD, qgain, eps, pos, rope, &qs[g][0]);
  if (owner && warp == NW - 1) norm_rope_warp<HD>(qkv + (size_t)(H + kvh) * HD, kgain, eps, pos, rope, kt);
  __syncthreads();
  if (owner) {
    for (int d = tid; d < HD; d += NT) {
      const __half kh = __float2half(kt[d]);
      const __half vh = __float2half(qkv[(size_t)(H + KVH + kvh) * HD + d]);
      if (writer) {
        Kc[hb + (size_t)pos * HD + d] = kh;
        Vc[hb + (size_t)pos * HD + d] = vh;
      }
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
    const int h = hg * G + g;
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

  // The last block of this head group combines the splits, a thread per
  // output value, 16 splits' partials loaded at once.
  __threadfence();
  __syncthreads();
  if (tid == 0) last = atomicAdd(&counter[hg], 1u) == (unsigned)(nact - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (tid == 0) counter[hg] = 0;
  constexpr int SB = 16;
  for (int it = tid; it < G * HD; it += NT) {
    const int g = it / HD, d = it % HD;
    const int h = hg * G + g;
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
// Query heads per block (decodeGroups in shapes.go): 1, 2, 3, 4, 5, 6, 8 for
// head dimensions 64 and 128; 1, 2, 4 for 32; 1..4 for 256 (G*HD floats
// per warp in shared memory).
AFD_INST(32, 1, 1, 3, 256)
AFD_INST(32, 2, 1, 3, 256)
AFD_INST(32, 4, 1, 3, 256)
AFD_INST(64, 1, 1, 3, 256)
AFD_INST(64, 2, 1, 3, 256)
AFD_INST(64, 3, 1, 3, 256)
AFD_INST(64, 4, 1, 3, 256)
AFD_INST(64, 5, 1, 3, 256)
AFD_INST(64, 6, 1, 3, 256)
AFD_INST(64, 8, 1, 3, 256)
AFD_INST(128, 1, 1, 3, 256)
AFD_INST(128, 2, 1, 3, 256)
AFD_INST(128, 3, 1, 3, 256)
AFD_INST(128, 4, 1, 3, 256)
AFD_INST(128, 5, 1, 3, 256)
AFD_INST(128, 6, 1, 3, 256)
AFD_INST(128, 8, 1, 3, 256)
AFD_INST(256, 1, 1, 3, 256)
AFD_INST(256, 2, 1, 3, 256)
AFD_INST(256, 3, 1, 3, 256)
AFD_INST(256, 4, 1, 3, 256)
// Variants for tuning sweeps (INFERNO_CUDA_TUNE ar=, ast=, at=).
AFD_INST(128, 2, 2, 3, 256)
AFD_INST(128, 2, 1, 4, 256)
AFD_INST(128, 2, 1, 3, 512)
AFD_INST(128, 2, 1, 4, 512)
AFD_INST(128, 2, 2, 3, 512)
