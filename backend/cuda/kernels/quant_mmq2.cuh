// Included by kernels.cu after quant_mmq.cuh: the block formats' int8
// tensor-core products for batches, with warps of 32 rows.

// ---------------------------------------------------------------- matrix-matrix: int8 tensor cores, 32-row warps

// Activations of a stage in mmq2: a token's 8 units of int8 quants (MQ_RS
// bytes), its 8 scales in 48 bytes and its 16 sums of 16 in 80 (strides of
// 12 and 20 words: the four tokens a quad's lanes read, 2*tig, hit four
// distinct banks).
#define MQ2_SS 12
#define MQ2_MS 20
#define MQ2_XB (MQ_RS + 4 * MQ2_SS + 4 * MQ2_MS)

// mmq2_ns is mmq2's pipeline depth for BN tokens.
__host__ __device__ constexpr int mmq2_ns(int BN) { return BN >= 64 ? 3 : 4; }

// mq2_plane issues a weight plane's 16-byte chunks of a stage, CPR a row
// (a power of two), into rows RS bytes apart from dst0: thread tid takes
// chunks tid + 256*j (row c/CPR, chunk c%CPR). rowb: the plane's bytes a
// row; stageb: the stage's offset in a row.
template <int BM, int RS, int CPR>
__device__ __forceinline__ void mq2_plane(unsigned char* w, int dst0, const uint8_t* __restrict__ plane, size_t rowb,
                                          int stageb, int r0, int mpad, int tid) {
  constexpr int N = BM * CPR;
#pragma unroll
  for (int j = 0; j < (N + 255) / 256; j++) {
    const int c = tid + 256 * j;
    if (N % 256 != 0 && c >= N) break;
    const int r = c / CPR, k = c % CPR, row = r0 + r;
    const bool ok = row < mpad;
    qcp16z(w + r * RS + dst0 + k * 16, plane + (size_t)(ok ? row : 0) * rowb + stageb + k * 16, ok);
  }
}

// mmq2: mmq's product (the same terms; types whose c' is -OFF*a add
// a*(x*dot - OFF*sum) per sub-block, one product fewer) with a warp taking
// 32 rows (two m-tiles: each token fragment serves two mmas) and, of each
// stage of 8 units, the units of k-group w/WM (WM = BM/32 warps across the
// rows, WK = 8/WM k-groups). Each (row, unit)'s scales a and c' are
// decoded once, by the lane of the row (lane l: row 32*wm + l), and passed
// to the quads' lanes by shuffles; the tokens' scales and sums sit at
// strides that spread a quad's reads over distinct banks (MQ2_SS, MQ2_MS).
// The k-groups' partial sums meet in shared memory and every warp adds a
// share of the tile's outputs over the groups in group order. Stages come
// by cp.async as in mmq (NS in flight), each thread's copies at addresses
// fixed but for the stage's offset.
template <int T, int BM, int BN, int TM>
__device__ __forceinline__ void mmq2(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                     const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int M, int mpad,
                                     int K, const i8* __restrict__ xq, const float* __restrict__ xs,
                                     const float* __restrict__ xsum, int n, float* __restrict__ Y, int ldy, int nout,
                                     int ep) {
  constexpr int WM = BM / 32, WK = 8 / WM, UPW = 8 / WK, NT = BN / 8, NS = mmq2_ns(BN);
  constexpr int QK = qt<T>::QK, LOB = mqw<T>::LOB, HIB = mqw<T>::HIB, M0S = mqw<T>::M0S, M0P = mqw<T>::M0P;
  constexpr int RS = mqw<T>::RS, STAGE = BM * RS + BN * MQ2_XB;
  constexpr bool SUMS = qt<T>::HASC || qt<T>::OFF != 0;
  constexpr bool FOLD = !qt<T>::HASC && qt<T>::OFF != 0;
  constexpr int NH = qt<T>::SUB == 16 ? 2 : 1;  // scales a unit
  static_assert(WM * WK == 8 && NT >= 1 && (LOB + HIB) % 16 == 0, "tile shape");
  extern __shared__ __align__(16) unsigned char smem[];
  // Teams of 8 warps (TM of them) take every TM-th stage, each its own NS
  // slots; tid and warp are the thread's and warp's within its team.
  const int team = TM > 1 ? (int)(threadIdx.x >> 8) : 0;
  const int tid = threadIdx.x & 255, warp = tid >> 5, lane = tid & 31;
  unsigned char* sb = smem + team * NS * STAGE;
  const int gid = lane >> 2, tig = lane & 3;
  const int wm = warp % WM, wk = warp / WM;
  const int r0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int NU = K >> 5;
  const int ns = K >> 8;
  const int bpr = K / QK;  // blocks a row

  auto W = [&](int slot) { return sb + slot * STAGE; };
  auto Xq = [&](int slot) { return sb + slot * STAGE + BM * RS; };
  auto Xs = [&](int slot) { return (float*)(sb + slot * STAGE + BM * RS + BN * MQ_RS); };
  auto Xm = [&](int slot) { return (float*)(sb + slot * STAGE + BM * RS + BN * (MQ_RS + 4 * MQ2_SS)); };

  auto issueW = [&](int s, int slot) {
    unsigned char* w = W(slot);
    mq2_plane<BM, RS, LOB / 16>(w, 0, lo, (size_t)K * qt<T>::LO / 8, s * 32 * qt<T>::LO, r0, mpad, tid);
    if constexpr (HIB > 0)
      mq2_plane<BM, RS, HIB / 16>(w, LOB, hi, (size_t)K * qt<T>::HI / 8, s * 32 * qt<T>::HI, r0, mpad, tid);
    if constexpr (M0S >= 16)
      mq2_plane<BM, RS, M0S / 16>(w, LOB + HIB, m0, (size_t)bpr * qb<T>::M0, s * (256 / QK) * qb<T>::M0, r0, mpad,
                                  tid);
    if constexpr (M0S < 16 || qb<T>::M1 != 0) {
      for (int r = tid; r < BM; r += 256) {
        const int row = r0 + r;
        const bool ok = row < mpad;
        const size_t blk = (ok ? (size_t)row : 0) * bpr + s;  // QK = 256 here
        if constexpr (M0S < 16) qcp8z(w + r * RS + LOB + HIB, m0 + blk * qb<T>::M0, ok);
        if constexpr (qb<T>::M1 == 4) qcp4z(w + r * RS + LOB + HIB + M0P, m1 + blk * 4, ok);
        if constexpr (qb<T>::M1 == 2) qcp4z(w + r * RS + LOB + HIB + M0P, m1 + (blk * 2 & ~(size_t)3), ok);
      }
    }
  };
  // The activations: 16 chunks of quants a token (thread tid: chunk
  // tid%16 of every 16th token from tid/16; qsw of the global chunk 16s + k
  // is 16s + qsw(k)), 2 of scales and 4 of sums.
  const int xk = tid & 15, xr = tid >> 4;
  const i8* xqp = xq + (size_t)(n0 + xr) * K + xk * 16;
  const int xdq = xr * MQ_RS + qsw(xk) * 16;
  auto issueX = [&](int s, int slot) {
    unsigned char* xb = Xq(slot) + xdq;
#pragma unroll
    for (int j = 0; j < BN / 16; j++) {
      const bool ok = n0 + xr + 16 * j < n;
      qcp16z(xb + j * 16 * MQ_RS, ok ? xqp + (size_t)j * 16 * K + s * 256 : xq, ok);
    }
#pragma unroll
    for (int j = 0; j < (BN * 2 + 255) / 256; j++) {
      const int c = tid + 256 * j;
      if (BN * 2 % 256 != 0 && c >= BN * 2) break;
      const int r = c >> 1, k = c & 1, t = n0 + r;
      const bool ok = t < n;
      qcp16z(Xs(slot) + r * MQ2_SS + k * 4, xs + (ok ? (size_t)t * NU + s * 8 + k * 4 : 0), ok);
    }
#pragma unroll
    for (int j = 0; j < (BN * 4 + 255) / 256; j++) {
      const int c = tid + 256 * j;
      if (BN * 4 % 256 != 0 && c >= BN * 4) break;
      const int r = c >> 2, k = c & 3, t = n0 + r;
      const bool ok = t < n;
      qcp16z(Xm(slot) + r * MQ2_MS + k * 4, xsum + (ok ? (size_t)t * 2 * NU + s * 16 + k * 4 : 0), ok);
    }
  };

  float acc[2][NT][4];
#pragma unroll
  for (int mt = 0; mt < 2; mt++)
#pragma unroll
    for (int j = 0; j < NT; j++) acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = 0.f;

  PDL_LAUNCH();
#pragma unroll
  for (int st = 0; st < NS - 1; st++)
    if (st * TM + team < ns) issueW(st * TM + team, st);
  PDL_WAIT();
#pragma unroll
  for (int st = 0; st < NS - 1; st++) {
    if (st * TM + team < ns) issueX(st * TM + team, st);
    qcp_commit();
  }
  // The row this lane decodes the scales of (Q6_K: the parity of its
  // blocks, its d in the low or high half of m1's 4-byte word).
  const int rowl = r0 + wm * 32 + lane;
  const int ni = (ns + TM - 1) / TM;
  for (int i = 0; i < ni; i++) {
    qcp_wait<NS - 2>();
    __syncthreads();
    if ((i + NS - 1) * TM + team < ns) {
      issueW((i + NS - 1) * TM + team, (i + NS - 1) % NS);
      issueX((i + NS - 1) * TM + team, (i + NS - 1) % NS);
    }
    qcp_commit();
    const int s = i * TM + team;
    if (TM > 1 && s >= ns) continue;  // the last stage's other team
    const int slot = i % NS;
    const unsigned char* wa = W(slot) + (wm * 32 + gid) * RS;
    const unsigned char* xqb = Xq(slot) + gid * MQ_RS;
    const float* xsb = Xs(slot);
    const float* xmb = Xm(slot);
    const int oddl = (int)(((size_t)rowl * bpr + s) & 1);
    // One unit at a time (64-row tiles: two a stage), so that the
    // registers of two units' fragments and scales are never live at once.
#pragma unroll 1
    for (int ui = 0; ui < UPW; ui++) {
      const int u = wk * UPW + ui;
      // This lane's row's scales: a and c' (c - a*OFF) of each sub-block.
      float al[2], cl[2];
      {
        qunit q;
        q_zero(q);
        q_load_s<T>(q, W(slot) + (wm * 32 + lane) * RS, u, 0, oddl);
        q_ac<T>(q, u, al, cl);
#pragma unroll
        for (int h = 0; h < 2; h++) cl[h] -= al[h] * (float)qt<T>::OFF;
      }
      // Rows gid + 8*i (i = 0..3) of the warp's 32: a[i][h], c'[i][h].
      float ar[4][2], cr[4][2];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int h = 0; h < NH; h++) {
          ar[i][h] = __shfl_sync(0xffffffffu, al[h], gid + 8 * i);
          if constexpr (qt<T>::HASC)
            cr[i][h] = __shfl_sync(0xffffffffu, cl[h], gid + 8 * i);
          else
            cr[i][h] = 0.f - ar[i][h] * (float)qt<T>::OFF;
        }
      int a[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; mt++) {
        qunit qa, qb2;
        q_zero(qa);
        q_zero(qb2);
        q_load_s<T>(qa, wa + 16 * mt * RS, u, tig, 0);
        q_load_s<T>(qb2, wa + (16 * mt + 8) * RS, u, tig, 0);
        a[mt][0] = q_word<T>(qa, 0);
        a[mt][1] = q_word<T>(qb2, 0);
        a[mt][2] = q_word<T>(qa, 4);
        a[mt][3] = q_word<T>(qb2, 4);
      }
#pragma unroll
      for (int nt = 0; nt < NT; nt++) {
        const unsigned char* xb = xqb + nt * 8 * MQ_RS + u * 32;
        const int b0 = *(const int*)(xb + tig * 4), b1 = *(const int*)(xb + 16 + tig * 4);
        const int t0 = nt * 8 + 2 * tig;
        const float x0 = xsb[t0 * MQ2_SS + u], x1 = xsb[(t0 + 1) * MQ2_SS + u];
        float2 m0v = make_float2(0.f, 0.f), m1v = make_float2(0.f, 0.f);
        if constexpr (SUMS) {
          m0v = *(const float2*)(xmb + t0 * MQ2_MS + 2 * u);
          m1v = *(const float2*)(xmb + (t0 + 1) * MQ2_MS + 2 * u);
        }
        // Types without a min whose values are a*(Q - OFF): c' = -OFF*a,
        // so a*(x*dot - OFF*sum) per sub-block (OFF*sum exact, a token's).
        float o0[2], o1[2];
        if constexpr (FOLD && qt<T>::SUB == 32) {
          o0[0] = (float)qt<T>::OFF * (m0v.x + m0v.y);
          o1[0] = (float)qt<T>::OFF * (m1v.x + m1v.y);
        } else if constexpr (FOLD) {
          o0[0] = (float)qt<T>::OFF * m0v.x, o0[1] = (float)qt<T>::OFF * m0v.y;
          o1[0] = (float)qt<T>::OFF * m1v.x, o1[1] = (float)qt<T>::OFF * m1v.y;
        }
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
          const float* aa = ar[2 * mt];
          const float* ab = ar[2 * mt + 1];
          const float* ca = cr[2 * mt];
          const float* cb = cr[2 * mt + 1];
          float* c = acc[mt][nt];
          if constexpr (qt<T>::SUB == 32) {
            int d[4];
            qmma_k32(d, a[mt], b0, b1);
            if constexpr (FOLD) {
              c[0] += aa[0] * (x0 * mq_f(d[0]) - o0[0]);
              c[1] += aa[0] * (x1 * mq_f(d[1]) - o1[0]);
              c[2] += ab[0] * (x0 * mq_f(d[2]) - o0[0]);
              c[3] += ab[0] * (x1 * mq_f(d[3]) - o1[0]);
            } else {
              c[0] += aa[0] * x0 * mq_f(d[0]);
              c[1] += aa[0] * x1 * mq_f(d[1]);
              c[2] += ab[0] * x0 * mq_f(d[2]);
              c[3] += ab[0] * x1 * mq_f(d[3]);
            }
            if constexpr (SUMS && !FOLD) {
              const float s0 = m0v.x + m0v.y, s1 = m1v.x + m1v.y;
              c[0] += ca[0] * s0;
              c[1] += ca[0] * s1;
              c[2] += cb[0] * s0;
              c[3] += cb[0] * s1;
            }
          } else {
            int d0[4], d1[4];
            qmma_k16(d0, a[mt][0], a[mt][1], b0);
            qmma_k16(d1, a[mt][2], a[mt][3], b1);
            if constexpr (FOLD) {
#pragma unroll
              for (int h = 0; h < 2; h++) {
                const int* dh = h ? d1 : d0;
                c[0] += aa[h] * (x0 * mq_f(dh[0]) - o0[h]);
                c[1] += aa[h] * (x1 * mq_f(dh[1]) - o1[h]);
                c[2] += ab[h] * (x0 * mq_f(dh[2]) - o0[h]);
                c[3] += ab[h] * (x1 * mq_f(dh[3]) - o1[h]);
              }
            } else {
              c[0] += x0 * (aa[0] * mq_f(d0[0]) + aa[1] * mq_f(d1[0]));
              c[1] += x1 * (aa[0] * mq_f(d0[1]) + aa[1] * mq_f(d1[1]));
              c[2] += x0 * (ab[0] * mq_f(d0[2]) + ab[1] * mq_f(d1[2]));
              c[3] += x1 * (ab[0] * mq_f(d0[3]) + ab[1] * mq_f(d1[3]));
            }
            if constexpr (SUMS && !FOLD) {
              c[0] += ca[0] * m0v.x + ca[1] * m0v.y;
              c[1] += ca[0] * m1v.x + ca[1] * m1v.y;
              c[2] += cb[0] * m0v.x + cb[1] * m0v.y;
              c[3] += cb[0] * m1v.x + cb[1] * m1v.y;
            }
          }
        }
      }
    }
  }
  qcp_wait<0>();
  __syncthreads();

  // The k-groups' partial sums (G = TM*WK groups, team-major): every warp
  // stores its own; warp (wm, group g) then adds, in group order, the
  // outputs e (m-tile e/NT, token tile e%NT) with e % G == g and writes them.
  constexpr int E = 2 * NT, G = TM * WK;
  const int gk = team * WK + wk;
  float* red = (float*)smem;
  auto ri = [&](int g, int e, int i) { return (((g * WM + wm) * E + e) * 4 + i) * 32 + lane; };
  if constexpr (G > 1) {
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
      for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++) red[ri(gk, mt * NT + nt, i)] = acc[mt][nt][i];
    __syncthreads();
  }
#pragma unroll
  for (int e = 0; e < E; e++) {
    if (e % G != gk) continue;
    const int mt = e / NT, nt = e % NT;
    float c[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
      if constexpr (G > 1) {
        float v = red[ri(0, e, i)];
#pragma unroll
        for (int g = 1; g < G; g++) v += red[ri(g, e, i)];
        c[i] = v;
      } else {
        c[i] = acc[mt][nt][i];
      }
    }
    const int t = n0 + nt * 8 + 2 * tig;
    const int rb = r0 + wm * 32 + mt * 16;
    if (ep == EP_SWIGLU) {
      const int p = (rb >> 4) * 8 + gid;
      if (p < nout) {
        if (t < n) Y[(size_t)t * ldy + p] = c[0] / (1.f + expf(-c[0])) * c[2];
        if (t + 1 < n) Y[(size_t)(t + 1) * ldy + p] = c[1] / (1.f + expf(-c[1])) * c[3];
      }
    } else {
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int r = rb + gid + 8 * h;
        if (r >= M) continue;
#pragma unroll
        for (int x = 0; x < 2; x++) {
          const int tt = t + x;
          if (tt >= n) continue;
          float* dst = Y + (size_t)tt * ldy + r;
          if (ep == EP_ADD)
            *dst += c[2 * h + x];
          else
            *dst = c[2 * h + x];
        }
      }
    }
  }
}

// Two blocks an SM where the registers allow (up to 64 tokens); _w16: two
// teams of 8 warps (512 threads, one block an SM), for grids of at most a
// block an SM.
#define MMQ2_ONE(NAME, T, BM, BN)                                                                         \
  extern "C" __global__ void __launch_bounds__(256, (BN) <= 64 ? 2 : 1) mmq2_##NAME##_m##BM##_n##BN(MMQ_ARGS) { \
    mmq2<T, BM, BN, 1>(lo, hi, m0, m1, M, mpad, K, xq, xs, xsum, n, Y, ldy, nout, ep);                     \
  }
#define MMQ2_W16(NAME, T, BN)                                                                       \
  extern "C" __global__ void __launch_bounds__(512, 1) mmq2_##NAME##_m32_n##BN##_w16(MMQ_ARGS) {  \
    mmq2<T, 32, BN, 2>(lo, hi, m0, m1, M, mpad, K, xq, xs, xsum, n, Y, ldy, nout, ep);              \
  }
// Tiles as mmq's (quant.go's mmqTiles).
#define MMQ2_INST(NAME, T)  \
  MMQ2_ONE(NAME, T, 32, 16) \
  MMQ2_ONE(NAME, T, 32, 32) \
  MMQ2_ONE(NAME, T, 32, 64) \
  MMQ2_ONE(NAME, T, 32, 128) \
  MMQ2_ONE(NAME, T, 64, 64) \
  MMQ2_ONE(NAME, T, 64, 128) \
  MMQ2_W16(NAME, T, 16)     \
  MMQ2_W16(NAME, T, 32)     \
  MMQ2_W16(NAME, T, 64)
MMQ2_INST(q4_0, QT_Q4_0)
MMQ2_INST(q4_1, QT_Q4_1)
MMQ2_INST(q5_0, QT_Q5_0)
MMQ2_INST(q5_1, QT_Q5_1)
MMQ2_INST(q8_0, QT_Q8_0)
MMQ2_INST(q2_k, QT_Q2_K)
MMQ2_INST(q3_k, QT_Q3_K)
MMQ2_INST(q4_k, QT_Q4_K)
MMQ2_INST(q5_k, QT_Q5_K)
MMQ2_INST(q6_k, QT_Q6_K)
MMQ2_INST(iq4_nl, QT_IQ4_NL)
MMQ2_INST(iq4_xs, QT_IQ4_XS)
