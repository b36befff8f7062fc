// mmh.cuh: matrix products on f16 tensor cores (mma m16n8k16, f32
// accumulators) against qact_h's f16 activations (included by kernels.cu
// after mmq.cuh):
//   mm_q8h_*       Q8_0's own layout, the weights turned f16 in registers
//   mmh_<type>_b128 / _b32, mmhe_<type>[_n64|_n96]  the block formats,
//                  b128 with K split over grid z where its grid is small
//                  (mmh_split),
//                  weight tiles dequantized to half in shared memory
//                  (mmhe: grouped by expert, for moe.cuh: 64 rows by 32
//                  pairs, or 128 rows by 64 or 96, quant.go's
//                  mmheFor choosing by the pairs an expert; MXFP4 by its
//                  bits, mmh_deq_h)
//   mmw_<type>_b128 / _b32  F32, F16 and BF16: BF16 and F32 tiles are
//                  converted to f16 in shared memory after a power-of-two
//                  scale 2^-s that keeps the matrix in f16's range (wsc =
//                  2^s restores it in the epilogue); BF16 values from 2^-17
//                  up are exact in f16.

// ---------------------------------------------------------------- Q8_0's own layout

// mm_q8h: Y = W X^T for n tokens on f16 tensor cores (mma m16n8k16, f32
// accumulators) over Q8_0's own layout (mm_q8's: W int8 rows x K, rows
// padded to a multiple of 64; wdc its f16 scales block-major [K/32][mpad])
// and qact_h's activations (X f16 [n][K], sx the per-token power of two).
// The tiles and pipeline are mm_q8's (64 x NTL per block of 4 warps, each
// warp 32 x NTL/2, or with WMW = 4 (_w4) 16 x NTL: each weight turned f16
// by one warp, not two; one Q8_0 block a cp.async stage, 4 stages); where mm_q8
// multiplies int16 activations as two int8 planes and rescales every
// (row, token, block) sum, here each warp turns its weights into f16 once
// (q exactly, then times the block's scale: one rounding, as mmh's) and the
// sums run in f32 across all of K, scaled by the token's power of two at
// the end. Per output and block that is no conversion and no multiply, per
// weight a few half2 operations shared by the tile's tokens.
//
// A thread's 8 consecutive k of a block (k = 8*tig..8*tig+7) stand in for
// the mma fragments' k slots {2tig, 2tig+1, 2tig+8, 2tig+9} of the block's
// first k16 half and the same of its second; weights and activations are
// read with the same map, so each product sums every k once.
template <int EP, int NTL, int WMW>
__device__ __forceinline__ void mm_q8h(const i8* __restrict__ W, const __half* __restrict__ wdc, int M, int mpad,
                                       int K, const __half* __restrict__ X, const float* __restrict__ sx, int N,
                                       float* __restrict__ Y, int ldy, int nout) {
  constexpr int ST = 4;                    // stages
  constexpr int WNW = 4 / WMW;             // warps along the tokens
  constexpr int MT = 64 / WMW / 16;        // 16-row tiles a warp
  constexpr int WN = NTL / WNW / 8;        // 8-token n-tiles a warp
  static_assert(NTL == 64 || NTL == 32 || NTL == 16, "token tile");
  static_assert(WMW == 2 || WMW == 4, "warps along the rows");
  __shared__ __align__(16) i8 Ws[ST][64 * 32];
  __shared__ __align__(16) __half Xs[ST][NTL * 32];
  __shared__ __align__(16) __half Wd[ST][64];

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int gid = lane >> 2, tig = lane & 3;
  const int wm = warp % WMW, wn = warp / WMW;
  const int m0 = blockIdx.x * 64, n0 = blockIdx.y * NTL;
  const int nkb = K >> 5;

  PDL_LAUNCH();
  auto loadW = [&](int st, int kb) {
    const int row = tid >> 1, hf = (tid & 1) * 16;
    cp_async16(&Ws[st][row * 32 + hf], W + (size_t)(m0 + row) * K + kb * 32 + hf);
    if (tid < 8) cp_async16(&Wd[st][tid * 8], wdc + (size_t)kb * mpad + m0 + tid * 8);
  };
  auto loadX = [&](int st, int kb) {
    // NTL rows of 64 bytes: 4 chunks of 16 a row.
    constexpr int CH = NTL * 4;
#pragma unroll
    for (int i = 0; i < (CH + 127) / 128; i++) {
      const int c = tid + i * 128, r = c >> 2, t = n0 + r;
      const bool ok = t < N;
      if (CH % 128 == 0 || c < CH)
        cp_async16z(&Xs[st][r * 32 + (c & 3) * 8], X + (ok ? (size_t)t * K + kb * 32 + (c & 3) * 8 : 0), ok);
    }
  };

  float acc[MT][WN][4];
#pragma unroll
  for (int a = 0; a < MT; a++)
#pragma unroll
    for (int b = 0; b < WN; b++)
#pragma unroll
      for (int c = 0; c < 4; c++) acc[a][b][c] = 0.f;

  // The weights are no kernel's output: their first stages load before
  // the wait for the previous kernel (the activations' producer).
#pragma unroll
  for (int s = 0; s < ST - 1; s++)
    if (s < nkb) loadW(s, s);
  PDL_WAIT();
#pragma unroll
  for (int s = 0; s < ST - 1; s++) {
    if (s < nkb) loadX(s, s);
    cp_async_commit();
  }
  const __half2 off = __float2half2_rn(1152.f);  // 1024 + 128
  for (int kb = 0; kb < nkb; kb++) {
    cp_async_wait<ST - 2>();
    __syncthreads();
    if (kb + ST - 1 < nkb) {
      loadW((kb + ST - 1) % ST, kb + ST - 1);
      loadX((kb + ST - 1) % ST, kb + ST - 1);
    }
    cp_async_commit();
    const int st = kb % ST;
    // a[mt][j]: the A fragment of row tile mt and k16 half j.
    unsigned a[MT][2][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const int r = wm * (64 / WMW) + mt * 16 + gid;
#pragma unroll
      for (int h = 0; h < 2; h++) {  // rows r and r+8
        const uint2 w = *(const uint2*)&Ws[st][(r + 8 * h) * 32 + tig * 8];
        const __half2 d = __half2half2(Wd[st][r + 8 * h]);
        const unsigned wv[2] = {w.x ^ 0x80808080u, w.y ^ 0x80808080u};
#pragma unroll
        for (int j = 0; j < 2; j++) {
          const unsigned p0 = __byte_perm(wv[j], 0x64646464u, 0x4140), p1 = __byte_perm(wv[j], 0x64646464u, 0x4342);
          const __half2 v0 = __hmul2(__hsub2(*(const __half2*)&p0, off), d);
          const __half2 v1 = __hmul2(__hsub2(*(const __half2*)&p1, off), d);
          a[mt][j][h] = *(const unsigned*)&v0;      // slots 2tig, 2tig+1
          a[mt][j][h + 2] = *(const unsigned*)&v1;  // slots 2tig+8, 2tig+9
        }
      }
    }
#pragma unroll
    for (int nt = 0; nt < WN; nt++) {
      const int c = wn * (NTL / WNW) + nt * 8 + gid;
      const uint4 b = *(const uint4*)&Xs[st][c * 32 + tig * 8];
#pragma unroll
      for (int mt = 0; mt < MT; mt++) {
        mma_f16(acc[mt][nt], a[mt][0], b.x, b.y);
        mma_f16(acc[mt][nt], a[mt][1], b.z, b.w);
      }
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int nt = 0; nt < WN; nt++) {
    const int col = n0 + wn * (NTL / WNW) + nt * 8 + tig * 2;
    const float s0 = col < N ? sx[col] : 0.f, s1 = col + 1 < N ? sx[col + 1] : 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
      mma_store<true>(acc[mt][nt], EP, m0 + wm * (64 / WMW) + mt * 16, gid, col, s0, s1, M, N, nout, Y, ldy, tok_row());
  }
}

#define MMQ8H_ARGS                                                                                     \
  const i8 *__restrict__ W, const __half *__restrict__ wdc, int M, int mpad, int K,                  \
      const __half *__restrict__ X, const float *__restrict__ sx, int N, float *__restrict__ Y, int ldy, \
      int nout
#define MMQ8H_INST(NAME, EP, NTL, WMW)                                     \
  extern "C" __global__ void __launch_bounds__(128) NAME(MMQ8H_ARGS) {     \
    mm_q8h<EP, NTL, WMW>(W, wdc, M, mpad, K, X, sx, N, Y, ldy, nout);     \
  }
#define MMQ8H_TILE(SUF, NTL)                                    \
  MMQ8H_INST(mm_q8h_store##SUF, EP_STORE, NTL, 2)               \
  MMQ8H_INST(mm_q8h_add##SUF, EP_ADD, NTL, 2)                   \
  MMQ8H_INST(mm_q8h_swiglu##SUF, EP_SWIGLU, NTL, 2)             \
  MMQ8H_INST(mm_q8h_store##SUF##_w4, EP_STORE, NTL, 4)          \
  MMQ8H_INST(mm_q8h_add##SUF##_w4, EP_ADD, NTL, 4)              \
  MMQ8H_INST(mm_q8h_swiglu##SUF##_w4, EP_SWIGLU, NTL, 4)
MMQ8H_TILE(, 64)
MMQ8H_TILE(_n32, 32)
MMQ8H_TILE(_n16, 16)

// ---------------------------------------------------------------- the block formats and float weights

// mmh_deq_h dequantizes a unit to 32 halves at dst (16-byte aligned), as
// q_deq_h; MXFP4 by its bits instead of its table: a nibble s|e1 e0|m
// placed as f16 bits s at 15 and e1 e0 m at 11..9 is its E2M1 value x
// times 2^-14 exactly (e = 0: the subnormals 0 and m/2), so x*2^(E-127)
// is that times 2^(E-113), one product rounded once: the same half as
// q_deq_h's where that is nonzero (exponents E from 104), and the value
// rounded to half, subnormals too, for E 89..103, which q_deq_h flushes
// (its scale 2^(E-128) below half's range); only blocks of E < 89
// (values below 2^-36) flush. Exponents past 128 take 2^15 (2x, exact)
// then 2^(E-128), q_deq_h's own product. Four shifts and masks a value
// pair instead of the table's byte permutes. The grouped products (GR)
// only: the dense mmh keeps q_deq_h (its b128 tile's registers).
template <int T>
__device__ __forceinline__ void mmh_deq_h(const qunit& q, int u, __half* dst) {
  if constexpr (T == QT_MXFP4) {
    const int e = q.m[0] & 0xff;
    const bool big = e > 128;
    const __half2 s = __float2half2_rn(big ? 32768.f : __int_as_float((e + 14) << 23));
    unsigned out[16];
#pragma unroll
    for (int g = 0; g < 4; g++) {
      const unsigned w = (unsigned)q.lo[g];
#pragma unroll
      for (int h = 0; h < 2; h++) {  // values 4g+2h, +1 (low nibbles) and 4g+16+2h, +1 (high)
        const unsigned x = __byte_perm(w, 0u, h ? 0x4342 : 0x4140);
        const unsigned lo = ((x << 9) & 0x0E000E00u) | ((x << 12) & 0x80008000u);
        const unsigned hi = ((x << 5) & 0x0E000E00u) | ((x << 8) & 0x80008000u);
        const __half2 vl = __hmul2(*(const __half2*)&lo, s), vh = __hmul2(*(const __half2*)&hi, s);
        out[2 * g + h] = *(const unsigned*)&vl;
        out[8 + 2 * g + h] = *(const unsigned*)&vh;
      }
    }
    if (big) {
      const __half2 s2 = __float2half2_rn(__int_as_float((e - 1) << 23));
#pragma unroll
      for (int i = 0; i < 16; i++) {
        const __half2 v = __hmul2(*(const __half2*)&out[i], s2);
        out[i] = *(const unsigned*)&v;
      }
    }
    uint4* d4 = (uint4*)dst;
#pragma unroll
    for (int i = 0; i < 4; i++) d4[i] = make_uint4(out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
  } else {
    q_deq_h<T>(q, u, dst);
  }
}

// mmh_groups: a grouped mmh's (GR: the experts of a mixture, moe.go) view
// of moe_route's outputs: grp (the chosen experts: e, start, count), tiles
// (their tiles of 32 pairs, MOE_TILE: a | y << 16, tiles[0] of them) and
// order (the pairs, expert by expert); a pair's activations are X's row
// pair/xdiv.
struct mmh_groups {
  const int* grp;
  const int* tiles;
  const int* order;
  int xdiv;
};

// mmh_ncol returns the first column (token) within a block's tile of BN
// of a warp's 8-token tile j (warp column wn of 8/WM): interleaved among
// the warps (IL: j*(8/WM) + wn, 8 columns each) or the warp's own BN/WN
// columns.
template <int BN, int WM, bool IL>
__device__ __forceinline__ int mmh_ncol(int wn, int j) {
  constexpr int WN = 8 / WM, TN = BN / WN;
  return IL ? (j * WN + wn) * 8 : wn * TN + j * 8;
}

// mmh_tiles runs the k loop of mmh and mmw over a block's BM x BN tile,
// into acc (a warp's MT x NT m16n8 tiles): per stage of BK = 8192/BM values
// of k, loadA(ks) loads the thread's share of the stage's weights into
// registers, storeA(ks, buf) stores it as f16 into buffer buf of As (after
// the stage's products: the global loads of stage s+1 are in flight during
// stage s's mma), and X's token rows (row xrow(t) of X for tokens t < n
// from n0; zeros past them) come by cp.async into the double buffer Xs.
// WAIT: the wait for the previous kernel (PDL) after the first stage's
// weight loads (the grouped mmh waits before, for the routing). Only the
// stages ks0 to ks1-1 of k run (a split of K, mmh_split; all by default).
template <int BM, int BN, int WM, bool WAIT, int MT, int NT, class LoadA, class StoreA, class XRow>
__device__ __forceinline__ void mmh_tiles(float (&acc)[MT][NT][4], __half* As, __half* Xs, const __half* X, int n0,
                                          int n, int K, LoadA loadA, StoreA storeA, XRow xrow, int ks0 = 0,
                                          int ks1 = 1 << 30) {
  constexpr int WN = 8 / WM, BK = 8192 / BM, LDA = BK + 8, TM = BM / WM, TN = BN / WN;
  static_assert(MT == TM / 16 && NT == TN / 8 && NT % 2 == 0 && MT >= 1, "tile shape");
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wm = warp % WM, wn = warp / WM;
  const int nk = min((K + BK - 1) / BK, ks1);
  auto loadX = [&](int ks, int buf) {
    constexpr int CPR = BK / 8;  // 16-byte chunks a token row
#pragma unroll
    for (int c = tid; c < BN * CPR; c += 256) {
      const int r = c / CPR, col = (c % CPR) * 8;
      const int t = n0 + r, k = ks * BK + col;
      const bool ok = t < n && k < K;
      cp_async16z(Xs + (buf * BN + r) * LDA + col, X + (ok ? xrow(t) * K + k : 0), ok);
    }
    cp_async_commit();
  };

#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  loadA(ks0);
  if constexpr (WAIT) PDL_WAIT();
  loadX(ks0, 0);
  storeA(ks0, 0);
  cp_async_wait_m<0>();
  __syncthreads();
  for (int ks = ks0; ks < nk; ks++) {
    const int cur = (ks - ks0) & 1;
    if (ks + 1 < nk) {
      loadA(ks + 1);
      loadX(ks + 1, cur ^ 1);
    }
    const __half* Ab = As + (cur * BM + wm * TM) * LDA;
    const __half* Xb = Xs + (cur * BN + wn * TN) * LDA;
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) {
      unsigned af[MT][4], bf[NT][2];
#pragma unroll
      for (int mt = 0; mt < MT; mt++) ldsm_x4(af[mt], Ab + (mt * 16 + (lane & 15)) * LDA + kk * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int np = 0; np < NT / 2; np++) {
        unsigned r[4];
        ldsm_x4(r, Xb + (np * 16 + (lane & 7) + ((lane >> 4) << 3)) * LDA + kk * 16 + ((lane >> 3) & 1) * 8);
        bf[2 * np][0] = r[0];
        bf[2 * np][1] = r[1];
        bf[2 * np + 1][0] = r[2];
        bf[2 * np + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++) mma_f16(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1]);
    }
    if (ks + 1 < nk) storeA(ks + 1, cur ^ 1);
    cp_async_wait_m<0>();
    __syncthreads();
  }
}

// mmh_tiles2 is mmh_tiles for the grouped tiles of more than 32 pairs
// (mmhe_<type>_n64, _n96), whose experts' weights stream from
// memory once a tile: each thread's weights two stages ahead (two
// register sets q0 and q1, loadA(q, ks) and storeA(q, ks, buf); the k
// loop taken two stages at a time), so twice the loads are in flight;
// the warps' 8-token tiles interleaved (mmh_ncol), and those wholly past
// n take no ldmatrix or mma (their accumulators stay zero: no output of
// theirs is stored), so a tile's pairs, its first columns, share every
// warp's mma. The wait for the previous kernel is the caller's.
template <int BM, int BN, int WM, int MT, int NT, class LoadA, class StoreA, class XRow>
__device__ __forceinline__ void mmh_tiles2(float (&acc)[MT][NT][4], __half* As, __half* Xs, const __half* X, int n0,
                                           int n, int K, LoadA loadA, StoreA storeA, XRow xrow) {
  constexpr int WN = 8 / WM, BK = 8192 / BM, LDA = BK + 8, TM = BM / WM, TN = BN / WN;
  static_assert(MT == TM / 16 && NT == TN / 8 && NT % 2 == 0 && MT >= 1, "tile shape");
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wm = warp % WM, wn = warp / WM;
  const int nk = (K + BK - 1) / BK;
  const int nv = n - n0;  // the tile's columns holding tokens (or more)
  auto loadX = [&](int ks, int buf) {
    constexpr int CPR = BK / 8;  // 16-byte chunks a token row
#pragma unroll
    for (int c = tid; c < BN * CPR; c += 256) {
      const int r = c / CPR, col = (c % CPR) * 8;
      const int t = n0 + r, k = ks * BK + col;
      const bool ok = t < n && k < K;
      cp_async16z(Xs + (buf * BN + r) * LDA + col, X + (ok ? xrow(t) * K + k : 0), ok);
    }
    cp_async_commit();
  };
  auto mma = [&](int cur) {
    const __half* Ab = As + (cur * BM + wm * TM) * LDA;
    const __half* Xb = Xs + cur * BN * LDA;
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) {
      unsigned af[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; mt++) ldsm_x4(af[mt], Ab + (mt * 16 + (lane & 15)) * LDA + kk * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int np = 0; np < NT / 2; np++) {  // n-tiles 2np and 2np+1, each fragment used as it comes
        const int c0 = mmh_ncol<BN, WM, true>(wn, 2 * np), c1 = mmh_ncol<BN, WM, true>(wn, 2 * np + 1);
        if (c0 >= nv) break;
        unsigned r[4];  // lanes 0-15 address n-tile 2np's rows, 16-31 2np+1's
        ldsm_x4(r, Xb + (((lane >> 4) ? c1 : c0) + (lane & 7)) * LDA + kk * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
        for (int mt = 0; mt < MT; mt++) mma_f16(acc[mt][2 * np], af[mt], r[0], r[1]);
        if (c1 < nv) {
#pragma unroll
          for (int mt = 0; mt < MT; mt++) mma_f16(acc[mt][2 * np + 1], af[mt], r[2], r[3]);
        }
      }
    }
  };

#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  qunit q0, q1;
  loadA(q0, 0);
  loadX(0, 0);
  if (nk > 1) loadA(q1, 1);
  storeA(q0, 0, 0);
  cp_async_wait_m<0>();
  __syncthreads();
  // step ks: qn is free (stage ks stored), qs holds stage ks+1.
  auto step = [&](int ks, qunit& qn, qunit& qs) {
    const int cur = ks & 1;
    if (ks + 2 < nk) loadA(qn, ks + 2);
    if (ks + 1 < nk) loadX(ks + 1, cur ^ 1);
    mma(cur);
    if (ks + 1 < nk) storeA(qs, ks + 1, cur ^ 1);
    cp_async_wait_m<0>();
    __syncthreads();
  };
  for (int ks = 0; ks < nk; ks += 2) {
    step(ks, q0, q1);
    if (ks + 1 < nk) step(ks + 1, q1, q0);
  }
}

// mmh_split: a product's K cut into splits runs of whole stages (grid z:
// split blockIdx.z), for grids too small to fill the GPU (quant.go's
// mmhSplits). Each block of a tile stores its accumulators to ws (a
// BM x BN tile of floats a block, thread-interleaved) and counts itself in
// cnt[tile]; the last of the tile's blocks to arrive sums the splits' in
// split order (so the sums do not depend on which block is last), resets
// the count for the next product, and alone runs the epilogue. b128's
// launch bounds keep it at two blocks an SM (128 registers; the exchange
// took it to 150 otherwise, one block an SM).
struct mmh_split {
  float* ws;
  int* cnt;
  int splits;
};

// mmh_split_sum is mmh_split's exchange for a block's accumulators acc
// (split z of tile tile of ntiles): it returns false for every block but
// the tile's last, which gets the sum of the splits in acc.
template <int MT, int NT>
__device__ __forceinline__ bool mmh_split_sum(float (&acc)[MT][NT][4], const mmh_split& sp, int tile, int ntiles,
                                              int z) {
  constexpr int NA = MT * NT * 4;  // accumulators a thread
  __shared__ int last;
  const int tid = threadIdx.x;
  float* mine = sp.ws + ((size_t)z * ntiles + tile) * NA * blockDim.x;
#pragma unroll
  for (int i = 0; i < NA; i++) mine[i * blockDim.x + tid] = acc[i / (NT * 4)][(i / 4) % NT][i % 4];
  __threadfence();
  __syncthreads();
  if (tid == 0) last = atomicAdd(sp.cnt + tile, 1) == sp.splits - 1;
  __syncthreads();
  if (!last) return false;
  __threadfence();
  // Every split's from ws, this block's too (this thread's own stores):
  // acc is dead once stored, so the sums need no second set of registers.
  const float* p = sp.ws + (size_t)tile * NA * blockDim.x + tid;
  const size_t zs = (size_t)ntiles * NA * blockDim.x;
#pragma unroll
  for (int i = 0; i < NA; i++) {
    float v = 0.f;
    for (int s = 0; s < sp.splits; s++) v += __ldcg(p + s * zs + i * blockDim.x);
    acc[i / (NT * 4)][(i / 4) % NT][i % 4] = v;
  }
  if (tid == 0) sp.cnt[tile] = 0;
  return true;
}

// mmh: Y = W X^T for n tokens on f16 tensor cores (mma m16n8k16, f32
// accumulators). A block of 8 warps (WM x 8/WM) takes BM rows x BN tokens;
// per stage of BK = 8192/BM values of k every thread loads one unit of W
// (its row arow, unit auc) into registers, and after the stage's products
// dequantizes it to half into the other shared-memory buffer (so the
// global loads of stage s+1 are in flight during stage s's mma); X
// (f16 [n][K] from qact_h, sx its per-token scale) comes by cp.async into
// a double buffer. Rows past mpad read as zeros. Epilogues as mm_q8's:
// store, add, or SwiGLU (rows i and i+8 of each 16-row group, the same
// thread's accumulators). Y is token-major: Y[t*ldy + r]. Grouped (GR,
// the experts: mmhe_<type>, _n64, _n96), block (x, y) takes tile y of
// gr.tiles (blocks past them exit): its expert's M rows (from row e*M of
// the stacked planes) against up to BN of its pairs from the tile's
// first, X's and sx's rows pair/xdiv, written to Y's rows pair. The tiles
// are moe_group's of 32 pairs: with BN = 32G a block takes the tiles
// whose index within their expert is a multiple of G and its G-1
// successors; the others' blocks exit. The grouped tiles of more than 32
// pairs run mmh_tiles2 (weights two stages ahead, empty columns
// skipped); all grouped tiles dequantize by mmh_deq_h. Ungrouped, with
// sp.splits > 1 block (x, y, z) takes split z of K's stages and the
// tile's last block sums the splits and stores (mmh_split).
template <int T, int BM, int BN, int WM, bool GR = false>
__device__ __forceinline__ void mmh(const uint8_t* __restrict__ lo, const uint8_t* __restrict__ hi,
                                    const uint8_t* __restrict__ m0, const uint8_t* __restrict__ m1, int M, int mpad,
                                    int K, const __half* __restrict__ X, const float* __restrict__ sx, int n,
                                    float* __restrict__ Y, int ldy, int nout, int ep, mmh_groups gr = {},
                                    mmh_split sp = {nullptr, nullptr, 1}) {
  constexpr int WN = 8 / WM, BK = 8192 / BM, UPR = BK / 32, LDA = BK + 8;
  constexpr int TM = BM / WM, TN = BN / WN, MT = TM / 16, NT = TN / 8;
  extern __shared__ __align__(16) unsigned char smem[];
  __half* As = (__half*)smem;       // [2][BM][LDA]
  __half* Xs = As + 2 * BM * LDA;  // [2][BN][LDA]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wm = warp % WM, wn = warp / WM;
  const int r0 = blockIdx.x * BM;
  int n0 = blockIdx.y * BN;
  const int arow = tid / UPR, auc = tid % UPR;
  const int grow = r0 + arow;
  const int NU = K >> 5;

  PDL_LAUNCH();
  size_t wrow0 = 0;  // GR: the expert's first row
  int start = 0;     // GR: its first pair in gr.order
  if constexpr (GR) {
    PDL_WAIT();
    if ((int)blockIdx.y >= gr.tiles[0]) return;
    static_assert(BN % 32 == 0, "grouped tiles of 32 pairs");
    const int tl = gr.tiles[1 + blockIdx.y], a = tl & 0xffff;
    if ((tl >> 16) % (BN / 32) != 0) return;
    n0 = (tl >> 16) * 32;
    wrow0 = (size_t)gr.grp[1 + 3 * a] * M;
    start = gr.grp[2 + 3 * a];
    n = gr.grp[3 + 3 * a];
    mpad = M;  // the next rows are the next expert's
  }
  auto xrow = [&](int t) -> size_t {
    if constexpr (GR) return (size_t)(gr.order[start + t] / gr.xdiv);
    return (size_t)t;
  };
  auto yrow = [&](int t) -> size_t {
    if constexpr (GR) return (size_t)gr.order[start + t];
    return (size_t)t;
  };
  qunit q;
  auto loadA = [&](int ks) {
    const int u = ks * UPR + auc;
    q_zero(q);
    if (grow < mpad && u < NU) q_load<T>(q, lo, hi, m0, m1, wrow0 + grow, K, u);
  };
  auto storeA = [&](int ks, int buf) {
    __half* dst = As + (buf * BM + arow) * LDA + auc * 32;
    if constexpr (GR)
      mmh_deq_h<T>(q, ks * UPR + auc, dst);
    else
      q_deq_h<T>(q, ks * UPR + auc, dst);
  };
  float acc[MT][NT][4];
  constexpr bool IL = GR && BN > 32;  // mmh_tiles2: interleaved columns, empty ones skipped
  if constexpr (IL) {
    auto loadA2 = [&](qunit& qq, int ks) {
      const int u = ks * UPR + auc;
      q_zero(qq);
      if (grow < mpad && u < NU) q_load<T>(qq, lo, hi, m0, m1, wrow0 + grow, K, u);
    };
    auto storeA2 = [&](const qunit& qq, int ks, int buf) {
      mmh_deq_h<T>(qq, ks * UPR + auc, As + (buf * BM + arow) * LDA + auc * 32);
    };
    mmh_tiles2<BM, BN, WM>(acc, As, Xs, X, n0, n, K, loadA2, storeA2, xrow);
  } else {
    const int nk = (K + BK - 1) / BK, z = blockIdx.z;  // z: the split (mmh_split)
    mmh_tiles<BM, BN, WM, !GR>(acc, As, Xs, X, n0, n, K, loadA, storeA, xrow, z * nk / sp.splits,
                               (z + 1) * nk / sp.splits);
    if constexpr (!GR) {
      if (sp.splits > 1 && !mmh_split_sum(acc, sp, blockIdx.y * gridDim.x + blockIdx.x, gridDim.x * gridDim.y, z))
        return;
    }
  }

  const int gid = lane >> 2, tig = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; nt++) {
    const int t = n0 + mmh_ncol<BN, WM, IL>(wn, nt) + 2 * tig;
    const float s0 = t < n ? sx[xrow(t)] : 0.f, s1 = t + 1 < n ? sx[xrow(t + 1)] : 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
      mma_store<false>(acc[mt][nt], ep, r0 + wm * TM + mt * 16, gid, t, s0, s1, M, n, nout, Y, ldy, yrow);
  }
}

#define MMH_ARGS                                                                                          \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0,     \
      const uint8_t *__restrict__ m1, int M, int mpad, int K, const __half *__restrict__ X,             \
      const float *__restrict__ sx, int n, float *__restrict__ Y, int ldy, int nout, int ep
#define MMH_INST(NAME, T)                                                                               \
  extern "C" __global__ void __launch_bounds__(256, 2)                                                  \
      mmh_##NAME##_b128(MMH_ARGS, float* __restrict__ ws, int* __restrict__ cnt, int splits) {          \
    mmh<T, 128, 128, 2>(lo, hi, m0, m1, M, mpad, K, X, sx, n, Y, ldy, nout, ep, {}, {ws, cnt, splits}); \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(256) mmh_##NAME##_b32(MMH_ARGS) {                        \
    mmh<T, 64, 32, 4>(lo, hi, m0, m1, M, mpad, K, X, sx, n, Y, ldy, nout, ep);                          \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(256)                                                     \
      mmhe_##NAME(MMH_ARGS, const int* __restrict__ grp, const int* __restrict__ tiles,                 \
                  const int* __restrict__ order, int xdiv) {                                            \
    mmh<T, 64, 32, 4, true>(lo, hi, m0, m1, M, mpad, K, X, sx, n, Y, ldy, nout, ep,                     \
                            mmh_groups{grp, tiles, order, xdiv});                                       \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(256, 2)                                                  \
      mmhe_##NAME##_n64(MMH_ARGS, const int* __restrict__ grp, const int* __restrict__ tiles,           \
                        const int* __restrict__ order, int xdiv) {                                      \
    mmh<T, 128, 64, 4, true>(lo, hi, m0, m1, M, mpad, K, X, sx, n, Y, ldy, nout, ep,                    \
                             mmh_groups{grp, tiles, order, xdiv});                                      \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(256, 2)                                                  \
      mmhe_##NAME##_n96(MMH_ARGS, const int* __restrict__ grp, const int* __restrict__ tiles,           \
                        const int* __restrict__ order, int xdiv) {                                      \
    mmh<T, 128, 96, 4, true>(lo, hi, m0, m1, M, mpad, K, X, sx, n, Y, ldy, nout, ep,                    \
                             mmh_groups{grp, tiles, order, xdiv});                                      \
  }
MMH_INST(q4_0, QT_Q4_0)
MMH_INST(q4_1, QT_Q4_1)
MMH_INST(q5_0, QT_Q5_0)
MMH_INST(q5_1, QT_Q5_1)
MMH_INST(q8_0, QT_Q8_0)
MMH_INST(q2_k, QT_Q2_K)
MMH_INST(q3_k, QT_Q3_K)
MMH_INST(q4_k, QT_Q4_K)
MMH_INST(q5_k, QT_Q5_K)
MMH_INST(q6_k, QT_Q6_K)
MMH_INST(iq4_nl, QT_IQ4_NL)
MMH_INST(iq4_xs, QT_IQ4_XS)
MMH_INST(mxfp4, QT_MXFP4)

// mmw: Y = W X^T for n tokens, mmh with float weights: per
// stage of BK = 8192/BM values of k every thread loads 32 values of a row
// (arow, unit auc) into registers and, after the stage's products, stores
// them as f16 (times 2^-s: wsc = 2^s) into the other shared-memory buffer;
// X (f16 [n][K] from qact_h, sx its per-token scale) comes by cp.async.
// Rows past mpad read as zeros. Epilogues store, add and SwiGLU as mmh's.
template <int E, int BM, int BN, int WM>
__device__ __forceinline__ void mmw(const uint8_t* __restrict__ W, int M, int mpad, int K,
                                    const __half* __restrict__ X, const float* __restrict__ sx, int n,
                                    float* __restrict__ Y, int ldy, int nout, int ep, float wsc) {
  constexpr int WN = 8 / WM, BK = 8192 / BM, UPR = BK / 32, LDA = BK + 8;
  constexpr int TM = BM / WM, TN = BN / WN, MT = TM / 16, NT = TN / 8;
  constexpr int NL = 32 * ht<E>::BYTES / 16;  // 16-byte loads a unit
  extern __shared__ __align__(16) unsigned char smem[];
  __half* As = (__half*)smem;       // [2][BM][LDA]
  __half* Xs = As + 2 * BM * LDA;  // [2][BN][LDA]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wm = warp % WM, wn = warp / WM;
  const int r0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int arow = tid / UPR, auc = tid % UPR;
  const int grow = r0 + arow;
  const int NU = K >> 5;
  const float inv = 1.f / wsc;

  PDL_LAUNCH();
  int4 q[NL];
  auto loadA = [&](int ks) {
    const int u = ks * UPR + auc;
    const bool ok = grow < mpad && u < NU;
    const uint8_t* p = W + ((size_t)grow * K + (size_t)u * 32) * ht<E>::BYTES;
#pragma unroll
    for (int i = 0; i < NL; i++) q[i] = ok ? ldg_nc16(p + 16 * i) : make_int4(0, 0, 0, 0);
  };
  auto storeA = [&](int buf) {
    uint4* d4 = (uint4*)(As + (buf * BM + arow) * LDA + auc * 32);
    if constexpr (E == HT_F16) {
#pragma unroll
      for (int i = 0; i < 4; i++) d4[i] = make_uint4(q[i].x, q[i].y, q[i].z, q[i].w);
    } else {
      float v[32];
#pragma unroll
      for (int i = 0; i < NL; i++) h_cvt16<E>(q[i], v + i * ht<E>::V16);
      unsigned out[16];
#pragma unroll
      for (int i = 0; i < 16; i++) {
        const __half2 h = __floats2half2_rn(v[2 * i] * inv, v[2 * i + 1] * inv);
        out[i] = *(const unsigned*)&h;
      }
#pragma unroll
      for (int i = 0; i < 4; i++) d4[i] = make_uint4(out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
    }
  };
  float acc[MT][NT][4];
  mmh_tiles<BM, BN, WM, true>(acc, As, Xs, X, n0, n, K, loadA, [&](int, int buf) { storeA(buf); }, tok_row());

  const int gid = lane >> 2, tig = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; nt++) {
    const int t = n0 + wn * TN + nt * 8 + 2 * tig;
    const float s0 = t < n ? sx[t] * wsc : 0.f, s1 = t + 1 < n ? sx[t + 1] * wsc : 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
      mma_store<false>(acc[mt][nt], ep, r0 + wm * TM + mt * 16, gid, t, s0, s1, M, n, nout, Y, ldy, tok_row());
  }
}

#define MMW_ARGS                                                                                   \
  const uint8_t *__restrict__ W, int M, int mpad, int K, const __half *__restrict__ X,             \
      const float *__restrict__ sx, int n, float *__restrict__ Y, int ldy, int nout, int ep, float wsc
#define MMW_INST(NAME, E)                                                                            \
  extern "C" __global__ void __launch_bounds__(256) mmw_##NAME##_b128(MMW_ARGS) {                    \
    mmw<E, 128, 128, 2>(W, M, mpad, K, X, sx, n, Y, ldy, nout, ep, wsc);                             \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(256) mmw_##NAME##_b32(MMW_ARGS) {                     \
    mmw<E, 64, 32, 4>(W, M, mpad, K, X, sx, n, Y, ldy, nout, ep, wsc);                               \
  }
MMW_INST(f16, HT_F16)
MMW_INST(bf16, HT_BF16)
MMW_INST(f32, HT_F32)
