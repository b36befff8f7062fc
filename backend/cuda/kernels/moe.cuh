// moe.cuh: the mixture-of-experts layer (arch.OpMoE; included last by
// kernels.cu: it uses the block formats' and float products' pieces). A
// step of n tokens runs:
//   moe_gate_<f32|f16|bf16>  the router's logits (n x E), the tokens' normed
//               inputs as int8 activations (qact8's), and, in the block that
//               finishes last, the routing: each token's top-k experts and
//               gating weights, then the (token, slot) pairs grouped by
//               expert: the list of the experts chosen at all (grp) and
//               each one's pairs (order). (A router in a block format: its
//               product, moe_route and qact8 instead.)
//   moe_mvn_<type> (SwiGLU)  each chosen expert's gate and up rows (stacked:
//               expert e's rows e*R..) against its tokens' activations, a
//               few blocks an expert looping over its tiles of rows (the
//               next tile's weights in flight), the expert's tokens in
//               chunks of 8 (moe_mvn2: of 2, for few tokens; moe_mvn3: of
//               4, three units a row and lane, for rows of 2049 to 3072
//               values; a tile's weights loaded once when a row fits in
//               one round): act[pair] = silu(gate h) * (up h)
//   moe_mvnq_<type> (store)  each pair's expert's down rows against the
//               pair's activations, quantized once a block: y[pair]
//   moe_combine x[t] += the sum of its pairs' y weighted by the gating
//               weights, in slot order
// From moe.go's moeH tokens on, the products run on f16 tensor cores
// instead: qact_h of the tokens, mmhe_<type> (mmh.cuh's mmh grouped:
// a block a tile of 32 pairs of one expert) for gate/up, qact_h of the
// pairs, mmhe_<type> for down, moe_combine.
// Only the chosen experts' rows are read; an expert's rows once per tile
// and chunk of its tokens (once per tile when a row fits in one round). A pair's values depend only on its token and
// expert, not on the other tokens of the step (the grouping's order within
// an expert does not matter).

// MOE_MAXE is the most experts a layer may have (moe_route keeps a token's
// router logits in registers, MOE_MAXE/32 a lane); MOE_MAXK the most a
// token may choose.
#define MOE_MAXE 256
#define MOE_MAXK 32
// MOE_TILE: the pairs of a tile of the grouped tensor-core products (mmhe:
// mmh's BN of its b32 shape).
#define MOE_TILE 32
// MOE_GPF: the 16-byte chunks of its expert's router row a lane of
// moe_gate loads before waiting for the previous kernel (all of them for
// gpt-oss's F32 router of 2880 at four warps an expert).
#define MOE_GPF 6

// moe_topk: one warp: a token's top k experts from its router logits
// (row: E values, written by other blocks of the launch: read through L2,
// not the read-only path) and their gating weights: wts[j] and pick[j]
// for j < k. With norm the weights are the softmax over the chosen k,
// else over all E. The top k as torch.topk and the CPU's route pick them:
// larger first, the lower index among equals (NaN as -inf).
__device__ void moe_topk(const float* row, int E, int k, int norm, float* wts, int* pick) {
  const int lane = threadIdx.x & 31;
  constexpr int PER = MOE_MAXE / 32;
  float s[PER];
#pragma unroll
  for (int i = 0; i < PER; i++) {
    const int e = lane + 32 * i;
    float v = -INFINITY;
    if (e < E) {
      v = __ldcg(row + e);
      if (v != v) v = -INFINITY;
    }
    s[i] = v;
  }
  unsigned taken = 0;  // bit i: s[i] chosen
  float best = 0.f, mine = 0.f;
  int mye = 0;  // lane j < k: the j-th choice
  for (int j = 0; j < k; j++) {
    float bv = -INFINITY;
    int bi = 0x7fffffff;
#pragma unroll
    for (int i = 0; i < PER; i++) {
      const int e = lane + 32 * i;
      if (e < E && !(taken >> i & 1)) argmax_take(bv, bi, s[i], e);
    }
    warp_argmax(bv, bi);
    if ((bi & 31) == lane) taken |= 1u << (bi >> 5);
    if (j == 0) best = bv;
    if (lane == j) mine = bv, mye = bi;
  }
  float total = 0.f;
  if (norm) {
    total = lane < k ? expf(mine - best) : 0.f;
  } else {
#pragma unroll
    for (int i = 0; i < PER; i++)
      if (lane + 32 * i < E) total += expf(s[i] - best);
  }
  total = warp_sum(total);
  if (lane < k) {
    wts[lane] = expf(mine - best) / total;
    pick[lane] = mye;
  }
}

// moe_group: every thread of the block (a multiple of 32 threads): the n*k
// pairs (pick: each pair's expert, written by other blocks of the launch:
// read through L2) grouped by expert: grp = {nact, then per chosen expert
// in increasing order: e, start, count}, order (the pairs of each chosen
// expert from its start) and tiles (the chosen experts' tiles of MOE_TILE
// pairs for mmhe: tiles[0] of them, then a | y << 16 for tile y of chosen
// expert a). cnt and cur: E ints of shared memory.
__device__ void moe_group(int n, int E, int k, const int* pick, int* __restrict__ grp, int* __restrict__ order,
                          int* __restrict__ tiles, int* cnt, int* cur) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int e = threadIdx.x; e < E; e += blockDim.x) cnt[e] = 0;
  __syncthreads();
  for (int p = threadIdx.x; p < n * k; p += blockDim.x) atomicAdd(&cnt[__ldcg(pick + p)], 1);
  __syncthreads();
  if (warp == 0) {  // starts and the chosen experts: a scan over lanes of E/32 experts each
    const int per = (E + 31) >> 5, e0 = lane * per;
    int sum = 0, nz = 0, nt = 0;
    for (int i = 0; i < per; i++)
      if (e0 + i < E) {
        const int c = cnt[e0 + i];
        sum += c, nz += c > 0, nt += (c + MOE_TILE - 1) / MOE_TILE;
      }
    int isum = sum, inz = nz, ntl = nt;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int a = __shfl_up_sync(FULL, isum, o), b = __shfl_up_sync(FULL, inz, o), c = __shfl_up_sync(FULL, ntl, o);
      if (lane >= o) isum += a, inz += b, ntl += c;
    }
    int start = isum - sum, a = inz - nz, tl = ntl - nt;
    for (int i = 0; i < per; i++) {
      const int e = e0 + i;
      if (e >= E) break;
      const int c = cnt[e];
      cur[e] = start;
      if (c > 0) {
        grp[1 + 3 * a] = e;
        grp[2 + 3 * a] = start;
        grp[3 + 3 * a] = c;
        for (int y = 0; y < (c + MOE_TILE - 1) / MOE_TILE; y++) tiles[1 + tl++] = a | y << 16;
        a++;
      }
      start += c;
    }
    if (lane == 31) grp[0] = inz, tiles[0] = ntl;
  }
  __syncthreads();
  for (int p = threadIdx.x; p < n * k; p += blockDim.x) order[atomicAdd(&cur[__ldcg(pick + p)], 1)] = p;
}

// moe_route_tokens: every thread of the block: each of the n tokens' top k
// (logits: n x E; a warp a token) to wts and pick (pair t*k + j), then the
// pairs grouped by expert (moe_group).
__device__ void moe_route_tokens(const float* logits, int n, int E, int k, int norm, float* wts, int* pick,
                                 int* __restrict__ grp, int* __restrict__ order, int* __restrict__ tiles, int* cnt,
                                 int* cur) {
  const int warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  for (int t = warp; t < n; t += nw) moe_topk(logits + (size_t)t * E, E, k, norm, wts + t * k, pick + t * k);
  __threadfence_block();
  __syncthreads();
  moe_group(n, E, k, pick, grp, order, tiles, cnt, cur);
}

// moe_route: moe_route_tokens in one block of 1024 threads, after the
// router's product (a router matrix in a block format). moe_route_b
// first adds the router's bias (E values) to every token's logits.
extern "C" __global__ void __launch_bounds__(1024) moe_route(const float* __restrict__ logits, int n, int E, int k,
                                                              int norm, float* __restrict__ wts, int* pick,
                                                              int* __restrict__ grp, int* __restrict__ order,
                                                              int* __restrict__ tiles) {
  __shared__ int cnt[MOE_MAXE];
  __shared__ int cur[MOE_MAXE];
  PDL_LAUNCH();
  PDL_WAIT();
  moe_route_tokens(logits, n, E, k, norm, wts, pick, grp, order, tiles, cnt, cur);
}

extern "C" __global__ void __launch_bounds__(1024) moe_route_b(float* __restrict__ logits, int n, int E, int k,
                                                                int norm, float* __restrict__ wts, int* pick,
                                                                int* __restrict__ grp, int* __restrict__ order,
                                                                int* __restrict__ tiles, const float* __restrict__ bias) {
  __shared__ int cnt[MOE_MAXE];
  __shared__ int cur[MOE_MAXE];
  PDL_LAUNCH();
  PDL_WAIT();
  for (int i = threadIdx.x; i < n * E; i += blockDim.x) logits[i] += bias[i % E];
  __threadfence();
  __syncthreads();
  moe_route_tokens(logits, n, E, k, norm, wts, pick, grp, order, tiles, cnt, cur);
}

// moe_gate: the router of a float type (F32, F16, BF16: the matrix as in
// the file, E rows of H) and the routing, in one launch; grid (n,
// E/(8/wpe)), 256 threads. Block (t, b) normalizes token t's row of x
// (RMSNorm times gain, in shared memory: 4*H bytes of dynamic shared
// memory) and computes the logits of experts b*8/wpe.. (b+1)*8/wpe - 1,
// wpe warps an expert (1, 2, 4 or 8; each lane 16-byte chunks of the
// warp's share of the row; the lanes', then the warps' partial sums added
// in a fixed order, so a token's logits do not depend on its batch, only
// on wpe: moe.go chooses it by the step's tokens, a few tokens spreading
// their router's rows over many blocks; a lane's first MOE_GPF chunks
// loaded before the wait for the previous kernel). Blocks (t, 0) also
// write the token's int8 activations as qact8 does (xq, xs, xsum) for the
// gate and up products, last, off the routing's path. Past 8 tokens the last of token t's blocks to finish
// (counter[1 + t]) picks its experts (moe_topk), so the tokens' top k run
// in parallel, and the last block of all (counter[0]) groups the pairs
// (moe_group); up to 8 the last block of all does both (moe_route_tokens,
// a warp a token). The counters are zero between launches (each reset by
// the block it elected). BIAS (moe_gate_b_<type>): the router's bias (E
// values, its last argument) is added to the logits.
template <int WT, bool BIAS>
__device__ __forceinline__ void moe_gate(const uint8_t* __restrict__ W, int E, int H, const float* __restrict__ x,
                                         const float* __restrict__ gain, float eps, float* __restrict__ logits,
                                         i8* xq, float* xs, float* xsum, int n, int k, int norm,
                                         float* __restrict__ wts, int* pick, int* __restrict__ grp,
                                         int* __restrict__ order, int* __restrict__ tiles, unsigned* counter,
                                         int wpe, const float* __restrict__ bias) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* h = (float*)smem;
  __shared__ float red[8];
  __shared__ float part[8];
  __shared__ int cnt[MOE_MAXE];
  __shared__ int cur[MOE_MAXE];
  __shared__ bool last;
  PDL_LAUNCH();
  const int t = blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int epb = 8 / wpe;
  const int e = blockIdx.y * epb + warp / wpe, q = warp % wpe;
  // The lane's first MOE_GPF chunks of its expert's row, loaded before the
  // wait (the router's weights: no kernel of the step writes them).
  constexpr int V = ht<WT>::V16;
  const int nc = H / V, c0 = q * 32 + lane, cstep = 32 * wpe;
  const uint8_t* wr = W + (size_t)min(e, E - 1) * H * ht<WT>::BYTES;
  int4 pre[MOE_GPF];
#pragma unroll
  for (int i = 0; i < MOE_GPF; i++) {
    const int c = c0 + i * cstep;
    pre[i] = e < E && c < nc ? ldg_nc16(wr + 16 * (size_t)c) : make_int4(0, 0, 0, 0);
  }
  PDL_WAIT();
  const float* xr = x + (size_t)t * H;
  float ss = 0.f;
  for (int c = threadIdx.x; c < H; c += 256) ss += xr[c] * xr[c];
  ss = block_sum(ss, red);
  const float scale = 1.f / sqrtf(ss / (float)H + eps);
  for (int c = threadIdx.x; c < H; c += 256) h[c] = xr[c] * scale * gain[c];
  __syncthreads();
  float acc = 0.f;
  if (e < E) {  // the chunks in the lane's order: the prefetched ones, then the rest
#pragma unroll
    for (int i = 0; i < MOE_GPF; i++) {
      const int c = c0 + i * cstep;
      if (c < nc) {
        float v[V];
        h_cvt16<WT>(pre[i], v);
#pragma unroll
        for (int j = 0; j < V; j++) acc += v[j] * h[c * V + j];
      }
    }
#pragma unroll 4
    for (int c = c0 + MOE_GPF * cstep; c < nc; c += cstep) {
      float v[V];
      h_cvt16<WT>(ldg_nc16(wr + 16 * (size_t)c), v);
#pragma unroll
      for (int j = 0; j < V; j++) acc += v[j] * h[c * V + j];
    }
  }
  acc = warp_sum(acc);
  if (lane == 0) part[warp] = acc;
  __syncthreads();
  if (threadIdx.x < epb) {
    const int ex = blockIdx.y * epb + threadIdx.x;
    const float* p = part + wpe * threadIdx.x;
    float sum = p[0];
    for (int j = 1; j < wpe; j++) sum += p[j];
    if (ex < E) logits[(size_t)t * E + ex] = BIAS ? sum + bias[ex] : sum;
  }
  // Past a block's 8 warps of tokens, the last of token t's blocks picks
  // its experts (counter[1 + t]) and the last block of all groups the
  // pairs (counter[0]); up to 8 tokens the last block of all does both (a
  // warp a token: one election fewer). Each counter is zero between
  // launches.
  const bool perToken = n > 8;
  __threadfence();
  __syncthreads();
  if (perToken) {
    if (threadIdx.x == 0) last = atomicAdd(counter + 1 + t, 1) == gridDim.y - 1;
    __syncthreads();
    if (last) {
      __threadfence();
      if (warp == 0) moe_topk(logits + (size_t)t * E, E, k, norm, wts + t * k, pick + t * k);
      if (threadIdx.x == 0) counter[1 + t] = 0;
      __threadfence();
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) last = atomicAdd(counter, 1) == gridDim.x * gridDim.y - 1;
  __syncthreads();
  if (last) {
    __threadfence();
    if (perToken) {
      moe_group(n, E, k, pick, grp, order, tiles, cnt, cur);
    } else {
      moe_route_tokens(logits, n, E, k, norm, wts, pick, grp, order, tiles, cnt, cur);
    }
    if (threadIdx.x == 0) *counter = 0;
  }
  // Block (t, 0) quantizes token t's row for the expert products once it
  // has voted, off the path to the routing (the last block's).
  if (blockIdx.y == 0) {
    __syncthreads();
    qprologue(xr, H, gain, eps, xq + (size_t)t * H, xs + (size_t)t * (H >> 5), xsum + (size_t)t * (H >> 4), red);
  }
}

#define MOE_GATE_ARGS                                                                                     \
  const uint8_t *__restrict__ W, int E, int H, const float *__restrict__ x, const float *__restrict__ gain, \
      float eps, float *__restrict__ logits, i8 *xq, float *xs, float *xsum, int n, int k, int norm,          \
      float *__restrict__ wts, int *pick, int *__restrict__ grp, int *__restrict__ order,                    \
      int *__restrict__ tiles, unsigned *counter, int wpe
#define MOE_GATE_INST(NAME, WT)                                                                                   \
  extern "C" __global__ void __launch_bounds__(256) moe_gate_##NAME(MOE_GATE_ARGS) {                             \
    moe_gate<WT, false>(W, E, H, x, gain, eps, logits, xq, xs, xsum, n, k, norm, wts, pick, grp, order, tiles,    \
                        counter, wpe, nullptr);                                                                  \
  }                                                                                                              \
  extern "C" __global__ void __launch_bounds__(256) moe_gate_b_##NAME(MOE_GATE_ARGS, const float* __restrict__ bias) { \
    moe_gate<WT, true>(W, E, H, x, gain, eps, logits, xq, xs, xsum, n, k, norm, wts, pick, grp, order, tiles,     \
                       counter, wpe, bias);                                                                      \
  }
MOE_GATE_INST(f32, HT_F32)
MOE_GATE_INST(f16, HT_F16)
MOE_GATE_INST(bf16, HT_BF16)

// moe_tab8 maps the eight 4-bit indices of a lo word w of a table type
// (byte j: index j in its low nibble, index j + 16 in its high one)
// through qtab<T>'s levels at once: lw gets the low nibbles' levels (as
// q_word's word g), hw the high nibbles' (word g + 4). Byte permutes look
// up each nibble's low three bits in the table's halves, a third picks the
// half by its fourth bit, two more sort the bytes: 11 operations for
// eight values, tab_map's words bit for bit.
template <int T>
__device__ __forceinline__ void moe_tab8(int w, int& lw, int& hw) {
  constexpr unsigned t0 = qtab<T>::W0, t1 = qtab<T>::W1, t2 = qtab<T>::W2, t3 = qtab<T>::W3;
  const unsigned s0 = (unsigned)w & 0x77777777u, s1 = s0 >> 16;  // nibbles lo0 hi0 lo1 hi1 | lo2 hi2 lo3 hi3
  const unsigned h = ((unsigned)w & 0x88888888u) >> 1;            // the fourth bit: byte n or n + 4
  const unsigned a = __byte_perm(__byte_perm(t0, t1, s0), __byte_perm(t2, t3, s0), 0x3210u | (h & 0xffffu));
  const unsigned b = __byte_perm(__byte_perm(t0, t1, s1), __byte_perm(t2, t3, s1), 0x3210u | (h >> 16));
  lw = (int)__byte_perm(a, b, 0x6420u);
  hw = (int)__byte_perm(a, b, 0x7531u);
}

// moe_words returns the unit's eight quant words, q_word<T>(q, g) for g <
// 8: the table types of one 4-bit plane by moe_tab8, a lo word at a time.
template <int T>
__device__ __forceinline__ void moe_words(const qunit& q, int (&w)[8]) {
  if constexpr (qt<T>::TAB && qt<T>::LO == 4 && qt<T>::HI == 0) {
#pragma unroll
    for (int g = 0; g < 4; g++) moe_tab8<T>(q.lo[g], w[g], w[g + 4]);
  } else {
#pragma unroll
    for (int g = 0; g < 8; g++) w[g] = q_word<T>(q, g);
  }
}

// moe_unit is mvqn_unit with moe_words' decode: unit u of a warp's RPW
// rows q against each of nt <= NT pairs' activations (act(j, x) loads pair
// j's), added to acc[r][j]; the same sums, bit for bit.
template <int T, int RPW, int NT, class Act>
__device__ __forceinline__ void moe_unit(float (&acc)[RPW][NT], const qunit (&q)[RPW], int u, int nt, Act act) {
  int w[RPW][8];
  float a[RPW][2], c[RPW][2];
#pragma unroll
  for (int r = 0; r < RPW; r++) {
    moe_words<T>(q[r], w[r]);
    q_ac<T>(q[r], u, a[r], c[r]);
  }
#pragma unroll
  for (int j = 0; j < NT; j++) {
    if (j < nt) {
      qact x;
      act(j, x);
#pragma unroll
      for (int r = 0; r < RPW; r++) acc[r][j] += q_dot_w<T>(w[r], a[r], c[r], x);
    }
  }
}

// moe_mvn: Y[pair*ldy + r] = W_e x_pair for every pair routed to the block's
// expert (blockIdx.y indexes grp's chosen experts; blocks past nact exit),
// W_e = rows e*R..e*R+R-1 of the stacked planes. The activations of a pair
// are row pair/xdiv (the token for the gate and up products, xdiv = k; the
// pair for the down product, xdiv = 1): without QIN qact8's int8 rows (xq,
// xs, xsum; K values a row), with QIN float rows (xf) that the block
// quantizes as qact8 does, every pair of its expert once, into dynamic
// shared memory (a row of moe_qin_stride(K) bytes a pair: moeQinSmem in
// moe.go). mvq's scheme over an expert's tiles: the blocks of an expert
// (gridDim.x, moe.go's moeBlocks) loop over its tiles of 8 warps' rows, a
// warp RPW rows of a tile (SwiGLU: a gate row and its up row, nout outputs
// a pair), U units a row and lane in flight, NT pairs at a time (a tile's
// weights loaded once when a row fits in one round), and the next tile's
// first round loaded before the last chunk's sums are reduced and written.
__device__ __forceinline__ int moe_qin_stride(int K) {
  const int NU = K >> 5;
  return (K + 4 * ((NU + 1) & ~1) + 8 * NU + 15) & ~15;
}

template <int T, int RPW, int U, int NT, bool QIN>
__device__ __forceinline__ void moe_mvn(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                        const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int R, int K,
                                        const i8* __restrict__ xq, const float* __restrict__ xs,
                                        const float* __restrict__ xsum, const float* __restrict__ xf, int xdiv,
                                        const int* __restrict__ grp, const int* __restrict__ order,
                                        float* __restrict__ Y, int ldy, int nout, int ep) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float red[8];
  PDL_LAUNCH();
  PDL_WAIT();
  const int a = blockIdx.y;
  if (a >= grp[0]) return;
  const int e = grp[1 + 3 * a], start = grp[2 + 3 * a], count = grp[3 + 3 * a];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int NU = K >> 5;
  const bool sw = ep == EP_SWIGLU;
  const int ntiles = (mv_units(R, RPW, sw) + 7) / 8;
  int tile = blockIdx.x;
  if (tile >= ntiles) return;
  const size_t row0 = (size_t)e * R;
  qunit q[U][RPW];
  auto load = [&](int tl, int round) {
    mvq_load<T>(q, lo, hi, m0, m1, row0, [&](int r) { return mv_row(tl * 8 + warp, r, RPW, sw); }, R, K, round, 0, 1);
  };
  const int stride = moe_qin_stride(K);
  auto qrow = [&](int j) -> unsigned char* { return smem + (size_t)j * stride; };
  load(tile, 0);
  if constexpr (QIN) {
    for (int j = 0; j < count; j++) {
      unsigned char* s = qrow(j);
      qprologue(xf + (size_t)(order[start + j] / xdiv) * K, K, nullptr, 0.f, (i8*)s, (float*)(s + K),
                (float*)(s + K + 4 * ((NU + 1) & ~1)), red);
    }
    __syncthreads();
  }
  const int rounds = (NU + 32 * U - 1) / (32 * U);
  for (; tile < ntiles; tile += gridDim.x) {
    for (int c0 = 0; c0 < count; c0 += NT) {
      const int nt = min(NT, count - c0);
      int xr[NT];
#pragma unroll
      for (int j = 0; j < NT; j++) xr[j] = j < nt ? order[start + c0 + j] : 0;
      float acc[RPW][NT];
#pragma unroll
      for (int r = 0; r < RPW; r++)
#pragma unroll
        for (int j = 0; j < NT; j++) acc[r][j] = 0.f;
      for (int round = 0; round < rounds; round++) {
        if (round > 0 || (c0 > 0 && rounds > 1)) load(tile, round);
#pragma unroll
        for (int i = 0; i < U; i++) {
          const int u = (round * U + i) * 32 + lane;
          if (u >= NU) continue;
          moe_unit<T>(acc, q[i], u, nt, [&](int j, qact& x) {
            if constexpr (QIN) {
              const unsigned char* s = qrow(c0 + j);
              q_act(x, u, (const i8*)s, (const float*)(s + K), (const float*)(s + K + 4 * ((NU + 1) & ~1)));
            } else {
              const size_t xrow = (size_t)(xr[j] / xdiv);
              q_act(x, u, xq + xrow * K, xs + xrow * NU, xsum + xrow * 2 * NU);
            }
          });
        }
      }
      const int cur = tile;
      if (c0 + NT >= count && tile + (int)gridDim.x < ntiles) load(tile + gridDim.x, 0);
#pragma unroll
      for (int j = 0; j < NT; j++) {
        if (j >= nt) break;
        float a[RPW];
#pragma unroll
        for (int r = 0; r < RPW; r++) a[r] = warp_sum(acc[r][j]);
        mv_epilogue<RPW>(a, sw ? EP_SWIGLU : EP_STORE, cur * 8 + warp, R, nout, Y + (size_t)xr[j] * ldy);
      }
    }
  }
}

#define MOE_MVN_ARGS                                                                                          \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0,         \
      const uint8_t *__restrict__ m1, int R, int K, const i8 *__restrict__ xq, const float *__restrict__ xs,  \
      const float *__restrict__ xsum, const float *__restrict__ xf, int xdiv, const int *__restrict__ grp,    \
      const int *__restrict__ order, float *__restrict__ Y, int ldy, int nout, int ep
#define MOE_MVN_INST(NAME, T)                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) moe_mvn_##NAME(MOE_MVN_ARGS) {                             \
    moe_mvn<T, 2, 2, 8, false>(lo, hi, m0, m1, R, K, xq, xs, xsum, xf, xdiv, grp, order, Y, ldy, nout, ep);     \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256) moe_mvnq_##NAME(MOE_MVN_ARGS) {                            \
    moe_mvn<T, 2, 2, 8, true>(lo, hi, m0, m1, R, K, xq, xs, xsum, xf, xdiv, grp, order, Y, ldy, nout, ep);      \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, 3) moe_mvn2_##NAME(MOE_MVN_ARGS) {                            \
    moe_mvn<T, 2, 2, 2, false>(lo, hi, m0, m1, R, K, xq, xs, xsum, xf, xdiv, grp, order, Y, ldy, nout, ep);     \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, 3) moe_mvnq2_##NAME(MOE_MVN_ARGS) {                           \
    moe_mvn<T, 2, 2, 2, true>(lo, hi, m0, m1, R, K, xq, xs, xsum, xf, xdiv, grp, order, Y, ldy, nout, ep);      \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, 2) moe_mvn3_##NAME(MOE_MVN_ARGS) {                            \
    moe_mvn<T, 2, 3, 4, false>(lo, hi, m0, m1, R, K, xq, xs, xsum, xf, xdiv, grp, order, Y, ldy, nout, ep);     \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, 2) moe_mvnq3_##NAME(MOE_MVN_ARGS) {                           \
    moe_mvn<T, 2, 3, 4, true>(lo, hi, m0, m1, R, K, xq, xs, xsum, xf, xdiv, grp, order, Y, ldy, nout, ep);      \
  }
MOE_MVN_INST(q4_0, QT_Q4_0)
MOE_MVN_INST(q4_1, QT_Q4_1)
MOE_MVN_INST(q5_0, QT_Q5_0)
MOE_MVN_INST(q5_1, QT_Q5_1)
MOE_MVN_INST(q8_0, QT_Q8_0)
MOE_MVN_INST(q2_k, QT_Q2_K)
MOE_MVN_INST(q3_k, QT_Q3_K)
MOE_MVN_INST(q4_k, QT_Q4_K)
MOE_MVN_INST(q5_k, QT_Q5_K)
MOE_MVN_INST(q6_k, QT_Q6_K)
MOE_MVN_INST(iq4_nl, QT_IQ4_NL)
MOE_MVN_INST(iq4_xs, QT_IQ4_XS)
MOE_MVN_INST(mxfp4, QT_MXFP4)

// moe_combine: grid (n, H/256 rounded up): x[t] += sum over j < k of
// wts[t*k+j] * y[(t*k+j)*H ..] (H values), j in order. moe_combine_x: the
// same with each pair's expert's down bias (bias, when not null: H values
// an expert, expert pick[t*k+j]'s) added to its y, and x[t] = the sum
// rather than += with store (a post-norm follows: resid_rows).
extern "C" __global__ void __launch_bounds__(256) moe_combine(float* __restrict__ x, int H, int k,
                                                               const float* __restrict__ wts,
                                                               const float* __restrict__ y) {
  PDL_LAUNCH();
  PDL_WAIT();
  const size_t t = blockIdx.x;
  const int c = blockIdx.y * blockDim.x + threadIdx.x;
  if (c >= H) return;
  float s = 0.f;
  for (int j = 0; j < k; j++) s += wts[t * k + j] * y[(t * k + j) * (size_t)H + c];
  x[t * H + c] += s;
}

extern "C" __global__ void __launch_bounds__(256) moe_combine_x(float* __restrict__ x, int H, int k,
                                                                 const float* __restrict__ wts,
                                                                 const float* __restrict__ y,
                                                                 const int* __restrict__ pick,
                                                                 const float* __restrict__ bias, int store) {
  PDL_LAUNCH();
  PDL_WAIT();
  const size_t t = blockIdx.x;
  const int c = blockIdx.y * blockDim.x + threadIdx.x;
  if (c >= H) return;
  float s = 0.f;
  for (int j = 0; j < k; j++) {
    float v = y[(t * k + j) * (size_t)H + c];
    if (bias) v += bias[(size_t)pick[t * k + j] * H + c];
    s += wts[t * k + j] * v;
  }
  if (store)
    x[t * H + c] = s;
  else
    x[t * H + c] += s;
}
