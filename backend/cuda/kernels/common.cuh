// common.cuh: the device functions the kernel files share (included first
// by kernels.cu): types and launch macros, warp and block reductions, the
// argmax order and its reductions, the epilogues of the matrix products,
// loads, cp.async and tensor-core fragments, and the RMS norm's scale.

#include <cuda_fp16.h>
#include <stdint.h>

typedef int8_t i8;

#define FULL 0xffffffffu

// Programmatic dependent launch (Hopper, compute capability 9.0): a kernel
// lets the next one in the stream start early (PDL_LAUNCH, at its top), and
// waits for the previous one to finish and its writes to be visible
// (PDL_WAIT) before touching anything that kernel wrote. What comes before
// PDL_WAIT reads only data no kernel of the step writes (weights, the
// step's parameters). Compiled for older GPUs, both are no-ops; without the
// launch attribute, the wait returns at once.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PDL_WAIT() asm volatile("griddepcontrol.wait;" ::: "memory")
#define PDL_LAUNCH() asm volatile("griddepcontrol.launch_dependents;" :::)
#else
#define PDL_WAIT()
#define PDL_LAUNCH()
#endif

// ================================================================ reductions

struct op_sum {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct op_max {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// warp_reduce returns op over the warp's v to every lane (a butterfly).
template <typename T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(FULL, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) { return warp_reduce(v, op_sum()); }
__device__ __forceinline__ double warp_sum_d(double v) { return warp_reduce(v, op_sum()); }
__device__ __forceinline__ float warp_max(float v) { return warp_reduce(v, op_max()); }

// block_reduce returns op over the block's v to every thread: the warps'
// results in red (32 values), the lanes past the block's warps taking none.
// The block's size is a multiple of 32.
template <typename T, class Op>
__device__ __forceinline__ T block_reduce(T v, T* red, T none, Op op) {
  v = warp_reduce(v, op);
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) red[w] = v;
  __syncthreads();
  v = l < nw ? red[l] : none;
  return warp_reduce(v, op);
}

__device__ __forceinline__ double block_sum_d(double v, double* red) { return block_reduce(v, red, 0.0, op_sum()); }
__device__ __forceinline__ float block_sum(float v, float* red) { return block_reduce(v, red, 0.f, op_sum()); }
__device__ __forceinline__ float block_max(float v, float* red) { return block_reduce(v, red, -INFINITY, op_max()); }

// rms_scale returns 1/sqrt(mean(x^2)+eps) of x[0:K) to every thread of the
// block, summing squares in float64 as the CPU reference does.
__device__ __forceinline__ float rms_scale(const float* __restrict__ x, int K, float eps, double* red) {
  double ss = 0.0;
  for (int i = threadIdx.x; i < K; i += blockDim.x) {
    const double v = x[i];
    ss += v * v;
  }
  ss = block_sum_d(ss, red);
  return (float)(1.0 / sqrt(ss / (double)K + (double)eps));
}

// rms_scale8 returns 1/sqrt(mean(x^2)+eps) of the K values whose squares
// the threads of a block of 8 warps summed (ss, each thread's): the lanes'
// sums, then the warps' in warp order (red: 8 floats), in float32.
__device__ __forceinline__ float rms_scale8(float ss, int K, float eps, float* red) {
  const int tid = threadIdx.x;
  ss = warp_sum(ss);
  if ((tid & 31) == 0) red[tid >> 5] = ss;
  __syncthreads();
  ss = 0.f;
#pragma unroll
  for (int w = 0; w < 8; w++) ss += red[w];
  return 1.f / sqrtf(ss / (float)K + eps);
}

// ================================================================ the argmax order

// better reports whether (a, ia) comes before (b, ib) in argmax order: a
// number before NaN, a larger value first, and the lower index among equal
// values (-0 equals +0) and among NaNs: the choice of the CPU's
// sampling.Argmax (the lowest index of the largest value, NaN never chosen
// unless every value is NaN, then the first). Every argmax and top-k of
// the kernels ranks by it; an "empty" candidate is (NaN, 0x7fffffff), last
// of all.
__device__ __forceinline__ bool better(float a, int ia, float b, int ib) {
  const bool an = a != a, bn = b != b;
  if (an != bn) return bn;
  if (!an && a != b) return a > b;
  return ia < ib;
}

// by_argmax is better as the order argument of argmax_take and warp_argmax.
struct by_argmax {
  __device__ __forceinline__ bool operator()(float a, int ia, float b, int ib) const { return better(a, ia, b, ib); }
};

// argmax_take makes (v, i) the candidate (ov, oi) when it comes first in
// the order before.
template <class Before = by_argmax>
__device__ __forceinline__ void argmax_take(float& v, int& i, float ov, int oi, Before before = Before()) {
  if (before(ov, oi, v, i)) {
    v = ov;
    i = oi;
  }
}

// warp_argmax makes every lane's (v, i) the first of the warp's in the
// order before (a butterfly).
template <class Before = by_argmax>
__device__ __forceinline__ void warp_argmax(float& v, int& i, Before before = Before()) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(FULL, v, o);
    const int oi = __shfl_xor_sync(FULL, i, o);
    argmax_take(v, i, ov, oi, before);
  }
}

// argmax_partial writes a block's argmax partial for argmax_final: lane 0
// of each of the NW warps brings its warp's best (v, i), and thread 0
// writes the first of them in warp order to pval/pidx[blockIdx.x].
template <int NW>
__device__ __forceinline__ void argmax_partial(float v, int i, float* pval, int* pidx) {
  __shared__ float bval[NW];
  __shared__ int bidx[NW];
  const int warp = threadIdx.x >> 5;
  if ((threadIdx.x & 31) == 0) {
    bval[warp] = v;
    bidx[warp] = i;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float bv = bval[0];
    int bi = bidx[0];
    for (int w = 1; w < NW; w++) argmax_take(bv, bi, bval[w], bidx[w]);
    pval[blockIdx.x] = bv;
    pidx[blockIdx.x] = bi;
  }
}

// ================================================================ epilogues

// The epilogues of the matrix products (Go's epOf): y = v, y += v (the
// residual), the gated activations of a gate row and its up row (SwiGLU:
// silu(gate)*up; GeGLU; OpenAI's clamped SwiGLU), and for the decode
// matvecs also argmax (y = v, and the block's best row to the argmax
// partials). Q8_0's own kernels are instantiated per epilogue (EP a
// template parameter: SwiGLU's only of the gated ones); the others take
// ep at run time, where a gated epilogue is ep_glu(ep) and glu(ep, ...)
// its activation.
enum { EP_STORE = 0, EP_ADD = 1, EP_SWIGLU = 2, EP_ARGMAX = 3, EP_GEGLU = 4, EP_SWIGLU_OAI = 5 };

// swiglu returns silu(g)*u in the CPU's order: g/(1 + e^-g), times u.
__device__ __forceinline__ float swiglu(float g, float u) { return g / (1.f + expf(-g)) * u; }

// geglu returns gelu(g)*u with gelu's tanh approximation, in the CPU's
// form: g / (1 + e^(-2 sqrt(2/pi) (g + 0.044715 g^3))), times u.
__device__ __forceinline__ float geglu(float g, float u) {
  return g / (1.f + expf(-1.5957691216057308f * (g + 0.044715f * g * g * g))) * u;
}

// swiglu_oai returns OpenAI's clamped SwiGLU (arch.SwiGLUOAI): g =
// min(g, 7), u = clamp(u, -7, 7), g * sigmoid(1.702 g) * (u + 1).
__device__ __forceinline__ float swiglu_oai(float g, float u) {
  g = fminf(g, 7.f);
  u = fminf(fmaxf(u, -7.f), 7.f);
  return g / (1.f + expf(-1.702f * g)) * (u + 1.f);
}

// ep_glu reports whether epilogue ep is a gated activation.
__device__ __forceinline__ bool ep_glu(int ep) { return ep == EP_SWIGLU || ep >= EP_GEGLU; }

// glu returns the gated activation of epilogue ep (ep_glu) of g and u.
__device__ __forceinline__ float glu(int ep, float g, float u) {
  if (ep == EP_GEGLU) return geglu(g, u);
  if (ep == EP_SWIGLU_OAI) return swiglu_oai(g, u);
  return swiglu(g, u);
}

// ep_write writes v to y, or adds it with add.
__device__ __forceinline__ void ep_write(float& y, float v, bool add) {
  if (add)
    y += v;
  else
    y = v;
}

// The row-tile matvecs (a warp's work unit u is RPW rows; with SwiGLU two,
// gate row i and up row i+8 of the 16-row group u/8 of the interleaved
// gate/up matrix, i = u%8, its output u): mv_units is the units of rows
// rows, mv_row row r of unit u.
__device__ __forceinline__ int mv_units(int rows, int RPW, bool sw) { return sw ? rows / 2 : (rows + RPW - 1) / RPW; }
__device__ __forceinline__ int mv_row(int u, int r, int RPW, bool sw) {
  if (sw) return (u >> 3) * 16 + (u & 7) + r * 8;
  return u * RPW + r;
}

// mv_tiles runs a row-tile matvec's persistent loop over the tiles tile,
// tile + gridDim.x, ... below ntiles: per tile, its rounds of weights
// (load(tile, round), the first loaded before), each added into the
// warp's sums acc by dot(round, acc); the next tile's first round loaded;
// acc summed over the warp and handed to done(tile, acc).
template <int RPW, class Load, class Dot, class Done>
__device__ __forceinline__ void mv_tiles(int tile, int ntiles, int rounds, Load load, Dot dot, Done done) {
  for (; tile < ntiles; tile += gridDim.x) {
    float acc[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = 0.f;
    for (int round = 0; round < rounds; round++) {
      if (round > 0) load(tile, round);
      dot(round, acc);
    }
    const int cur = tile;
    if (tile + (int)gridDim.x < ntiles) load(tile + gridDim.x, 0);
#pragma unroll
    for (int r = 0; r < RPW; r++) acc[r] = warp_sum(acc[r]);
    done(cur, acc);
  }
}

// mv_epilogue writes a warp's sums acc (every lane's, after warp_sum) of
// unit u, times s, to y by ep (SwiGLU, or with GLUX any gated epilogue:
// lane 0 its output u < nout; else lane r row r < rows); with best not
// null and EP_ARGMAX, every lane also takes the rows into its (best,
// besti). GLUX is the kernels' whose registers the other activations do
// not change (mvq, mvh); mvqn's and the experts' take SwiGLU only (the
// others run as glu_rows after a "store" product: options.go).
template <int RPW, bool GLUX = false>
__device__ __forceinline__ void mv_epilogue(const float (&acc)[RPW], int ep, int u, int rows, int nout, float* y,
                                            float s = 1.f, float* best = nullptr, int* besti = nullptr) {
  const int lane = threadIdx.x & 31;
  if (GLUX ? ep_glu(ep) : ep == EP_SWIGLU) {
    if (lane == 0 && u < nout) {
      const float g = acc[0] * s, v = acc[1] * s;
      y[u] = GLUX ? glu(ep, g, v) : swiglu(g, v);
    }
  } else {
#pragma unroll
    for (int r = 0; r < RPW; r++) {
      const int row = mv_row(u, r, RPW, false);
      if (lane == r && row < rows) ep_write(y[row], acc[r] * s, ep == EP_ADD);
      if (best && ep == EP_ARGMAX && row < rows) argmax_take(*best, *besti, acc[r], row);
    }
  }
}

// mma_store writes the accumulators c of an m16n8 tile (rows rb+gid and
// rb+gid+8, tokens t and t+1, gid = lane/4: the mma's C fragment; rb a
// multiple of 16) times the tokens' scales s0 and s1 to the token-major Y
// (token t's row at yrow(t)*ldy) by ep: rows below M and tokens below n,
// or a gated activation (ep_glu: c[0..1] a gate row's, c[2..3] its up
// row's: output rb/2 + gid < nout). FLAT chooses the code's shape, not what it stores: each
// value's two bounds tested together (Q8_0's products: fewer registers;
// nested tests spill in mmv_q8_add_n2_k8) or the row tested once for both
// tokens (the block formats': the compiler then shares one copy of the
// stores among a tile's outputs; flat tests grow mmq2's epilogue by a
// copy an output).
template <bool FLAT, class YRow>
__device__ __forceinline__ void mma_store(const float* c, int ep, int rb, int gid, int t, float s0, float s1, int M,
                                          int n, int nout, float* Y, int ldy, YRow yrow) {
  if constexpr (FLAT) {
    if (ep_glu(ep)) {
      const int o = (rb >> 1) + gid;
#pragma unroll
      for (int i = 0; i < 2; i++) {
        const float s = i ? s1 : s0, g = c[i] * s, u = c[i + 2] * s;
        if (o < nout && t + i < n) Y[yrow(t + i) * ldy + o] = glu(ep, g, u);
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const int r = rb + gid + (i >> 1) * 8, tt = t + (i & 1);
        if (r < M && tt < n) ep_write(Y[yrow(tt) * ldy + r], c[i] * ((i & 1) ? s1 : s0), ep == EP_ADD);
      }
    }
  } else if (ep_glu(ep)) {
    const int o = (rb >> 4) * 8 + gid;  // the same output: rb is a multiple of 16
    if (o < nout) {
      const float g0 = c[0] * s0, u0 = c[2] * s0, g1 = c[1] * s1, u1 = c[3] * s1;
      if (t < n) Y[yrow(t) * ldy + o] = glu(ep, g0, u0);
      if (t + 1 < n) Y[yrow(t + 1) * ldy + o] = glu(ep, g1, u1);
    }
  } else {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int r = rb + gid + 8 * h;
      if (r >= M) continue;
#pragma unroll
      for (int e = 0; e < 2; e++) {
        const int tt = t + e;
        if (tt >= n) continue;
        ep_write(Y[yrow(tt) * ldy + r], c[2 * h + e] * (e ? s1 : s0), ep == EP_ADD);
      }
    }
  }
}

// tok_row is mma_store's yrow of an unpermuted Y.
struct tok_row {
  __device__ __forceinline__ size_t operator()(int t) const { return (size_t)t; }
};

// ================================================================ loads and cp.async

// ldg_nc16 loads 16 bytes through the read-only path, not kept in L1
// (weights streamed once).
__device__ __forceinline__ int4 ldg_nc16(const void* p) {
  int4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// cp_async16 copies 16 bytes to shared memory (through L2 only);
// cp_async16z copies them, or writes 16 zero bytes when !ok (src-size 0);
// cp_async8z and cp_async4z 8 and 4 bytes through L1.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async16z(void* smem, const void* gmem, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(ok ? 16 : 0));
}
__device__ __forceinline__ void cp_async8z(void* smem, const void* gmem, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(gmem), "r"(ok ? 8 : 0));
}
__device__ __forceinline__ void cp_async4z(void* smem, const void* gmem, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(ok ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// cp_async_wait waits until at most N of the thread's copy groups are in
// flight. cp_async_wait_m is the same wait as a compiler memory barrier:
// no shared-memory access moves across it (the block-format products
// rely on it, the other kernels on the __syncthreads or __syncwarp after
// the wait).
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void cp_async_wait_m() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ================================================================ tensor-core fragments

// mma_s8: D = A B (m16n8k32, int8, int32 sums), volatile: kept in program
// order (mm_q8's pipeline); mma_s8n the same, free to move (register-only).
__device__ __forceinline__ void mma_s8(int (&d)[4], const int (&a)[4], int b0, int b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0), "r"(0));
}
__device__ __forceinline__ void mma_s8n(int (&d)[4], const int (&a)[4], int b0, int b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0), "r"(0));
}

// mma_f16: D += A B (m16n8k16, f16, f32 accumulators), register-only.
__device__ __forceinline__ void mma_f16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ldsm_x4 loads four 8x8 f16 matrices from shared memory (ldmatrix),
// ldsm_x4_t transposed.
__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ __forceinline__ void ldsm_x4_t(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(s));
}

// pack_h2 returns (a, b) as a half2's bits, each rounded to nearest.
__device__ __forceinline__ unsigned pack_h2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *(const unsigned*)&h;
}
