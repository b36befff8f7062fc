// Included by kernels.cu (its section: the batched forward over a paged KV cache).

// ================================================================ batched forward over a paged KV cache
//
// The kernels of BatchRunner (batch*.go): one forward pass over the tokens
// of many sequences. The KV cache is a pool of blocks shared by all
// sequences: per layer, K and V are each [block][kv head][bs][head dim]
// f16 (bs positions a block); position p of a sequence lives in row p % bs
// of block tab[p / bs], tab being the sequence's block table. Per-token
// inputs come from one int32 array uploaded before the pass (the "meta"):
// tokens, positions, each token's table offset into the flattened tables,
// the decode-token list, the prefill tiles and the output rows.

// kv_row returns the offset (in halves) of position p's row of KV head kvh
// in one layer's pool; sh = log2(bs) when bs is a power of two (shifts
// instead of divisions), else -1.
__device__ __forceinline__ size_t kv_row(const int* __restrict__ tab, int p, int bs, int sh, int KVH, int kvh, int HD) {
  const int b = sh >= 0 ? p >> sh : p / bs;
  const int r = p - b * bs;
  return (((size_t)tab[b] * KVH + kvh) * bs + r) * HD;
}

// mma_s8n and mma_f16 are register-only (not volatile: the compiler may
// schedule loads around them).
__device__ __forceinline__ void mma_s8n(int (&d)[4], const int (&a)[4], int b0, int b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0), "r"(0));
}

// bstep_token copies a decode step's inputs, written by the host to
// page-locked host memory hmeta (mapped into the GPU's address space), to
// the device copy dmeta: hmeta[0] ints (a multiple of 4; 0 when the host
// copied them itself, at most zc4 int4s), split between the blocks; and
// returns block b's
// token: hmeta[tokoff + b], or for b < hmeta[3] (a lookahead step's
// tokens) devtok[b], the previous step's argmax or sampled id. The loads
// of the header, the token and the first int4 a thread copies are issued
// together, so that the host memory's latency (~1 us) is paid once.
__device__ __forceinline__ int bstep_token(const int* hmeta, int* __restrict__ dmeta, int tokoff,
                                           const int* __restrict__ devtok, int zc4) {
  __shared__ int tok;
  const int4* src = (const int4*)hmeta;
  int4* dst = (int4*)dmeta;
  const int i0 = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  int4 v = make_int4(0, 0, 0, 0);
  if (i0 < zc4) v = __ldcv(src + i0);
  int th = 0, td = 0;
  if (threadIdx.x == 0) {
    th = __ldcv(hmeta + tokoff + blockIdx.x);
    td = devtok[blockIdx.x];
  }
  const int4 h = __ldcv(src);
  const int n4 = h.x >> 2;
  for (int i = i0; i < n4; i += stride) dst[i] = i == i0 ? v : __ldcv(src + i);  // n4 <= zc4
  if (threadIdx.x == 0) tok = (int)blockIdx.x < h.w ? td : th;
  __syncthreads();
  return tok;
}

// bembed_step starts a batched decode step (replayed from a graph) when
// the inputs are read zero-copy (INFERNO_CUDA_BATCH zc > 0; by default the
// host copies them and the graph starts with bembed_dec): bstep_token,
// then block b embeds its token into x[b].
extern "C" __global__ void __launch_bounds__(256) bembed_step(const i8* __restrict__ wq, const __half* __restrict__ wd,
                                                              int K, const int* hmeta, int* __restrict__ dmeta,
                                                              int tokoff, float* __restrict__ x,
                                                              const int* __restrict__ devtok, int zc4) {
  const int tok = bstep_token(hmeta, dmeta, tokoff, devtok, zc4);
  const int nb = K >> 5;
  float* xt = x + (size_t)blockIdx.x * K;
  for (int i = threadIdx.x; i < K; i += blockDim.x)
    xt[i] = __half2float(wd[(size_t)tok * nb + (i >> 5)]) * (float)wq[(size_t)tok * K + i];
}

// bembed_dec starts a batch decode step whose inputs the host copied to
// meta (one block a token): token b is meta[4 + b], or, for b < meta[3],
// devtok[b], the previous step's argmax: a lookahead step, queued before
// the host has read that argmax.
extern "C" __global__ void __launch_bounds__(256) bembed_dec(const i8* __restrict__ wq, const __half* __restrict__ wd,
                                                             int K, const int* __restrict__ meta,
                                                             const int* __restrict__ devtok, float* __restrict__ x) {
  __shared__ int tok;
  PDL_LAUNCH();  // a one-token graph's QKV product may load its weights meanwhile
  if (threadIdx.x == 0) tok = (int)blockIdx.x < meta[3] ? devtok[blockIdx.x] : meta[4 + blockIdx.x];
  __syncthreads();
  const int nb = K >> 5;
  float* xt = x + (size_t)blockIdx.x * K;
  for (int i = threadIdx.x; i < K; i += blockDim.x)
    xt[i] = __half2float(wd[(size_t)tok * nb + (i >> 5)]) * (float)wq[(size_t)tok * K + i];
}

// gather_rows: y[i] = x[idx[i]] for rows of K floats (the output rows,
// gathered before the final norm and the output head). One block a row.
extern "C" __global__ void __launch_bounds__(256) gather_rows(const float* __restrict__ x, int K,
                                                              const int* __restrict__ idx, float* __restrict__ y) {
  const float* src = x + (size_t)idx[blockIdx.x] * K;
  float* dst = y + (size_t)blockIdx.x * K;
  for (int i = threadIdx.x; i < K; i += blockDim.x) dst[i] = src[i];
}

// ---------------------------------------------------------------- skinny matmul (batched decode)

// mmv_q8: Y = W X^T for a few tokens with integer tensor cores, the weights
// streamed from global memory straight into registers (no shared memory
// tiles): a warp takes 16 rows (an m16n8k32 A operand) and the k-blocks
// ks, ks+KS, ... of them; the KS warps of a row tile split K and add their
// sums through shared memory. Each mma step is one Q8_0 block (k = 32):
// lane (gid, tig) loads the 8 bytes tig*8.. of the block of rows gid and
// gid+8, and of the activation planes of token gid of each 8-token n-tile;
// the k order inside the block is permuted the same way for A and B (a dot
// product does not care), which makes every load a contiguous 32-byte
// sector per row. Activations as for mm_q8 (hi/lo int8 planes [npad][K],
// scales block-major [K/32][npad], from quant_act); NT n-tiles (8*NT
// tokens) per pass, more tokens in further passes (the weights then come
// from L2). Epilogues as mm_q8's (SWIGLU: rows gid and gid+8 of a 16-row
// group are a gate row and its up row, in the same thread). 256 threads;
// grid (16-row tiles / (8/KS), Y): block y takes the passes y, y+Y, ...,
// so that a matrix of few row tiles (a small model's O and down) can
// spread its tokens over more SMs, each pass's weights read by Y blocks
// at about the same time (the later ones from L2).
template <int EP, int NT, int KS, bool XL>
__device__ __forceinline__ void mmv_q8(const i8* __restrict__ W, const __half* __restrict__ wdc, int M, int mpad,
                                       int K, const i8* __restrict__ Xh, const i8* __restrict__ Xl,
                                       const float* __restrict__ Xs, int N, int npad, float* __restrict__ Y,
                                       int ldy, int nout) {
  constexpr int TPB = 8 / KS;  // row tiles per block
  constexpr int U = 4;         // k-blocks per load group
  __shared__ float red[KS > 1 ? 8 : 1][NT * 4][32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int gid = lane >> 2, tig = lane & 3;
  const int ks = warp % KS;
  const int m0 = (blockIdx.x * TPB + warp / KS) * 16;
  const bool live = m0 < mpad;
  const int nkb = K >> 5;
  const i8* w0 = W + (size_t)(live ? m0 + gid : 0) * K + tig * 8;
  const i8* w1 = w0 + (size_t)8 * K;
  const __half* wd = wdc + (live ? m0 : 0) + gid;

  for (int n0 = blockIdx.y * NT * 8; n0 < N; n0 += gridDim.y * NT * 8) {
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int i = 0; i < 4; i++) acc[j][i] = 0.f;
    int2 wa[2][U], wb[2][U];
    float da[2][U], db[2][U];
    auto load = [&](int b, int kb0) {
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int kb = kb0 + u * KS;
        if (live && kb < nkb) {
          wa[b][u] = __ldg((const int2*)(w0 + kb * 32));
          wb[b][u] = __ldg((const int2*)(w1 + kb * 32));
          da[b][u] = __half2float(wd[(size_t)kb * mpad]);
          db[b][u] = __half2float(wd[(size_t)kb * mpad + 8]);
        } else {
          wa[b][u] = wb[b][u] = make_int2(0, 0);
          da[b][u] = db[b][u] = 0.f;
        }
      }
    };
    auto compute = [&](int b, int kb0) {
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int kb = kb0 + u * KS;
        if (kb < nkb) {
          // Every n-tile's activations first (NT loads in flight), then the products.
          int2 xh[NT], xl[NT];
          float2 xs[NT];
#pragma unroll
          for (int j = 0; j < NT; j++) {
            if (XL) {  // quant_actv's layout: the lane's hi and lo bytes in one 16-byte load
              const int4 v = *(const int4*)(Xh + ((size_t)kb * npad + n0 + j * 8 + gid) * 64 + tig * 16);
              xh[j] = make_int2(v.x, v.y);
              xl[j] = make_int2(v.z, v.w);
            } else {
              const size_t xo = (size_t)(n0 + j * 8 + gid) * K + kb * 32 + tig * 8;
              xh[j] = *(const int2*)(Xh + xo);
              xl[j] = *(const int2*)(Xl + xo);
            }
            xs[j] = *(const float2*)(Xs + (size_t)kb * npad + n0 + j * 8 + tig * 2);
          }
          const int a[4] = {wa[b][u].x, wb[b][u].x, wa[b][u].y, wb[b][u].y};
          const float s0 = da[b][u], s1 = db[b][u];
#pragma unroll
          for (int j = 0; j < NT; j++) {
            int ch[4], cl[4];
            mma_s8n(ch, a, xh[j].x, xh[j].y);
            mma_s8n(cl, a, xl[j].x, xl[j].y);
            acc[j][0] += s0 * xs[j].x * (float)(ch[0] * 256 + cl[0]);
            acc[j][1] += s0 * xs[j].y * (float)(ch[1] * 256 + cl[1]);
            acc[j][2] += s1 * xs[j].x * (float)(ch[2] * 256 + cl[2]);
            acc[j][3] += s1 * xs[j].y * (float)(ch[3] * 256 + cl[3]);
          }
        }
      }
    };
    load(0, ks);
    for (int kb0 = ks; kb0 < nkb; kb0 += 2 * KS * U) {
      load(1, kb0 + KS * U);
      compute(0, kb0);
      load(0, kb0 + 2 * KS * U);
      compute(1, kb0 + KS * U);
    }
    if (KS > 1) {
#pragma unroll
      for (int j = 0; j < NT; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) red[warp][j * 4 + i][lane] = acc[j][i];
      __syncthreads();
      if (ks == 0) {
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
          for (int i = 0; i < 4; i++)
#pragma unroll
            for (int s = 1; s < KS; s++) acc[j][i] += red[warp + s][j * 4 + i][lane];
      }
      __syncthreads();
    }
    if (ks == 0 && live) {
#pragma unroll
      for (int j = 0; j < NT; j++) {
        const int c = n0 + j * 8 + tig * 2;
        if (EP == EP_SWIGLU) {
          const int o = (m0 >> 1) + gid;
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const float g = acc[j][e], u = acc[j][e + 2];
            if (o < nout && c + e < N) Y[(size_t)(c + e) * ldy + o] = g / (1.f + expf(-g)) * u;
          }
        } else {
#pragma unroll
          for (int i = 0; i < 4; i++) {
            const int row = m0 + gid + (i >> 1) * 8;
            const int cc = c + (i & 1);
            if (row < M && cc < N) {
              if (EP == EP_ADD)
                Y[(size_t)cc * ldy + row] += acc[j][i];
              else
                Y[(size_t)cc * ldy + row] = acc[j][i];
            }
          }
        }
      }
    }
  }
}

// mmv_q8_* read quant_act's planes; mmv_q8x_* quant_actv's interleaved
// layout (Xh: the planes, Xl unused), which makes a warp's activation
// loads contiguous (512 bytes an n-tile instead of eight 32-byte pieces).
#define MMV_INST(PRE, EPN, EP, NT, KS, XL)                                                             \
  extern "C" __global__ void __launch_bounds__(256) PRE##_##EPN##_n##NT##_k##KS(MM_ARGS) {             \
    mmv_q8<EP, NT, KS, XL>(W, wdc, M, mpad, K, Xh, Xl, Xs, N, npad, Y, ldy, nout);                     \
  }
#define MMV_INST3(NT)                                 \
  MMV_INST(mmv_q8, store, EP_STORE, NT, 8, false)     \
  MMV_INST(mmv_q8, add, EP_ADD, NT, 8, false)         \
  MMV_INST(mmv_q8, swiglu, EP_SWIGLU, NT, 8, false)   \
  MMV_INST(mmv_q8x, store, EP_STORE, NT, 8, true)     \
  MMV_INST(mmv_q8x, add, EP_ADD, NT, 8, true)         \
  MMV_INST(mmv_q8x, swiglu, EP_SWIGLU, NT, 8, true)
MMV_INST3(1)
MMV_INST3(2)
MMV_INST3(4)
MMV_INST3(8)

// quant_actv: quant_act for mmv_q8x: token t (one block each) quantized as
// quant_act does, stored k-block-major and interleaved: k-block b of
// token t is 64 bytes at xq + (b*npad + t)*64, for each quarter q
// (elements 8q..8q+7 of the block) its 8 hi bytes then its 8 lo bytes;
// scales sx[b*npad + t].
extern "C" __global__ void __launch_bounds__(256) quant_actv(const float* __restrict__ x, int K, int ldx,
                                                             const float* __restrict__ gain, float eps,
                                                             i8* __restrict__ xq, float* __restrict__ sx, int npad) {
  __shared__ double red[32];
  const int t = blockIdx.x;
  const float* xt = x + (size_t)t * ldx;
  float scale = 1.f;
  if (gain) scale = rms_scale(xt, K, eps, red);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  for (int b = warp; b < (K >> 5); b += nw) {
    const int i = b * 32 + lane;
    float v = xt[i];
    if (gain) v = v * scale * gain[i];
    const float a = warp_max(fabsf(v));
    int q = 0;
    if (a > 0.f) q = __float2int_rn(v * (QMAX / a));
    q = max(-32512, min(32512, q));
    const int h = (q + 128) >> 8;
    i8* dst = xq + ((size_t)b * npad + t) * 64 + (lane >> 3) * 16 + (lane & 7);
    dst[0] = (i8)h;
    dst[8] = (i8)(q - h * 256);
    if (lane == 0) sx[(size_t)b * npad + t] = a / QMAX;
  }
}

// argmax_rows: the argmax of each of n rows of V logits (one block of 1024
// threads a row; the lowest id among ties, NaN last), to out[row] and to
// page-locked host memory host[row]; the last block to finish (counter,
// reset by it) then writes the step number head[2] (the inputs' header)
// to host[n], where the host polls for it. head[1] set (a step sampled on
// the GPU: samp_final writes the ids and the step number) skips it all.
extern "C" __global__ void __launch_bounds__(1024) argmax_rows(const float* __restrict__ logits, int V, int n,
                                                               int* __restrict__ out, volatile int* host,
                                                               const int* __restrict__ head, unsigned* counter) {
  __shared__ float sv[32];
  __shared__ int si[32];
  if (head[1]) return;
  const float* x = logits + (size_t)blockIdx.x * V;
  float bv = NAN;
  int bi = 0x7fffffff;
  for (int i = threadIdx.x; i < V; i += blockDim.x) {
    const float v = x[i];
    if (better(v, i, bv, bi)) {
      bv = v;
      bi = i;
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(FULL, bv, o);
    const int oi = __shfl_xor_sync(FULL, bi, o);
    if (better(ov, oi, bv, bi)) {
      bv = ov;
      bi = oi;
    }
  }
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
  if (l == 0) {
    sv[w] = bv;
    si[w] = bi;
  }
  __syncthreads();
  if (w == 0) {
    const int nw = blockDim.x >> 5;
    bv = l < nw ? sv[l] : NAN;
    bi = l < nw ? si[l] : 0x7fffffff;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(FULL, bv, o);
      const int oi = __shfl_xor_sync(FULL, bi, o);
      if (better(ov, oi, bv, bi)) {
        bv = ov;
        bi = oi;
      }
    }
    if (l == 0) {
      out[blockIdx.x] = bi;
      host[blockIdx.x] = bi;
      __threadfence_system();
      if (atomicAdd(counter, 1u) == (unsigned)(n - 1)) {
        *counter = 0;
        __threadfence_system();
        host[n] = head[2];
      }
    }
  }
}

// kv_block_copy copies block src to block dst in every buffer of the pool
// (bufs: 2*layers device pointers, keys and values of each layer; blk
// halves a block). Grid (chunks, buffers).
extern "C" __global__ void kv_block_copy(const unsigned long long* __restrict__ bufs, long long blk, int dst, int src) {
  int4* base = (int4*)bufs[blockIdx.y];
  const long long n = blk / 8;  // int4s a block
  const int4* s = base + (long long)src * n;
  int4* d = base + (long long)dst * n;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    d[i] = s[i];
}

// ---------------------------------------------------------------- paged prefill attention (tensor cores)

__device__ __forceinline__ void mma_f16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void ldsm_x4_t(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(s));
}

__device__ __forceinline__ unsigned pack_h2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *(const unsigned*)&h;
}
