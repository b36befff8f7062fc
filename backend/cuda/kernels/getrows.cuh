// getrows.cuh: row lookups (included by kernels.cu after quantize.cuh):
// the embeddings of a step's tokens, of Q8_0's own layout (embed_q8 and
// the batch runner's bembed_*) or any weight type (qembed*), and the
// gather of a batch's output rows.

// q8_embed_row writes row tok of a Q8_0 matrix in its own layout (wq the
// int8 values, wd the f16 scales, row-major) to x[0:K), dequantized
// (every thread of the block).
__device__ __forceinline__ void q8_embed_row(const i8* wq, const __half* wd, size_t tok, int K, float* x) {
  const int nb = K >> 5;
  for (int i = threadIdx.x; i < K; i += blockDim.x)
    x[i] = __half2float(wd[tok * nb + (i >> 5)]) * (float)wq[tok * K + i];
}

// h_embed_unit writes values 32u..32u+31 of row row (K values a row) of an
// F32, F16 or BF16 matrix w to out, exactly (every value converts to f32).
__device__ void h_embed_unit(int type, const uint8_t* w, size_t row, int K, int u, float* out) {
  const size_t v0 = row * (size_t)K + (size_t)u * 32;
  switch (type) {
    case HT_F16:
#pragma unroll
      for (int i = 0; i < 4; i++) h_cvt16<HT_F16>(ldg_nc16(w + 2 * v0 + 16 * i), out + 8 * i);
      break;
    case HT_BF16:
#pragma unroll
      for (int i = 0; i < 4; i++) h_cvt16<HT_BF16>(ldg_nc16(w + 2 * v0 + 16 * i), out + 8 * i);
      break;
    default:
#pragma unroll
      for (int i = 0; i < 8; i++) h_cvt16<HT_F32>(ldg_nc16(w + 4 * v0 + 16 * i), out + 4 * i);
  }
}

// q_embed_row writes row row (K values) of a weight of type type to x,
// dequantized (every thread of the block; units round-robin).
__device__ __forceinline__ void q_embed_row(int type, const uint8_t* lo, const uint8_t* hi, const uint8_t* m0,
                                            const uint8_t* m1, size_t row, int K, float* __restrict__ x) {
  for (int u = threadIdx.x; u < (K >> 5); u += blockDim.x) {
    float v[32];
    switch (type) {
#define QE_CASE(TT) \
  case TT: q_deq_f32<TT>(lo, hi, m0, m1, row, K, u, v); break;
      QE_CASE(QT_Q4_0)
      QE_CASE(QT_Q4_1)
      QE_CASE(QT_Q5_0)
      QE_CASE(QT_Q5_1)
      QE_CASE(QT_Q8_0)
      QE_CASE(QT_Q2_K)
      QE_CASE(QT_Q3_K)
      QE_CASE(QT_Q4_K)
      QE_CASE(QT_Q5_K)
      QE_CASE(QT_Q6_K)
      QE_CASE(QT_IQ4_NL)
      QE_CASE(QT_IQ4_XS)
      QE_CASE(QT_MXFP4)
#undef QE_CASE
      case 0:
      case 1:
      case 30:
        h_embed_unit(type, lo, row, K, u, v);
        break;
      default:
#pragma unroll
        for (int i = 0; i < 32; i++) v[i] = __int_as_float(0x7fc00000);
    }
    float4* dst = (float4*)(x + (size_t)u * 32);
#pragma unroll
    for (int i = 0; i < 8; i++) dst[i] = make_float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
  }
}

// bdec_token returns block b's token of a batched decode step whose
// inputs the host copied to meta (one block a token): meta[4 + b], or, for
// b < meta[3], devtok[b], the previous step's argmax or sampled id: a
// lookahead step, queued before the host has read it.
__device__ __forceinline__ int bdec_token(const int* meta, const int* devtok) {
  __shared__ int tok;
  if (threadIdx.x == 0) tok = (int)blockIdx.x < meta[3] ? devtok[blockIdx.x] : meta[4 + blockIdx.x];
  __syncthreads();
  return tok;
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

// embed_q8: x[t] = dequantized row tokens[t] of the embedding (one block per token).
extern "C" __global__ void embed_q8(const i8* __restrict__ wq, const __half* __restrict__ wd, int K,
                                    const int* __restrict__ tokens, float* __restrict__ x) {
  PDL_LAUNCH();
  const int t = blockIdx.x;
  const size_t tok = (size_t)tokens[t];
  PDL_WAIT();
  q8_embed_row(wq, wd, tok, K, x + (size_t)t * K);
}

// bembed_step starts a batched decode step (replayed from a graph) when
// the batch runner reads the step's inputs zero-copy (by default the host
// copies them and the graph starts with bembed_dec): bstep_token, then
// block b embeds its token into x[b].
extern "C" __global__ void __launch_bounds__(256) bembed_step(const i8* __restrict__ wq, const __half* __restrict__ wd,
                                                              int K, const int* hmeta, int* __restrict__ dmeta,
                                                              int tokoff, float* __restrict__ x,
                                                              const int* __restrict__ devtok, int zc4) {
  const int tok = bstep_token(hmeta, dmeta, tokoff, devtok, zc4);
  q8_embed_row(wq, wd, (size_t)tok, K, x + (size_t)blockIdx.x * K);
}

// bembed_dec starts a batch decode step whose inputs the host copied to
// meta: block b embeds its token (bdec_token) into x[b].
extern "C" __global__ void __launch_bounds__(256) bembed_dec(const i8* __restrict__ wq, const __half* __restrict__ wd,
                                                             int K, const int* __restrict__ meta,
                                                             const int* __restrict__ devtok, float* __restrict__ x) {
  PDL_LAUNCH();  // a one-token graph's QKV product may load its weights meanwhile
  const int tok = bdec_token(meta, devtok);
  q8_embed_row(wq, wd, (size_t)tok, K, x + (size_t)blockIdx.x * K);
}

#define QW_ARGS                                                                                       \
  const uint8_t *__restrict__ lo, const uint8_t *__restrict__ hi, const uint8_t *__restrict__ m0, \
      const uint8_t *__restrict__ m1, int type

// qembed: x[t] = row tokens[t] of the embedding (embed_q8 for any type).
extern "C" __global__ void __launch_bounds__(256) qembed(QW_ARGS, int K, const int* __restrict__ tokens,
                                                         float* __restrict__ x) {
  PDL_LAUNCH();
  const int t = blockIdx.x;
  const size_t tok = (size_t)tokens[t];
  PDL_WAIT();
  q_embed_row(type, lo, hi, m0, m1, tok, K, x + (size_t)t * K);
}

// qbembed_step: bembed_step for any type.
extern "C" __global__ void __launch_bounds__(256) qbembed_step(QW_ARGS, int K, const int* hmeta,
                                                               int* __restrict__ dmeta, int tokoff,
                                                               float* __restrict__ x, const int* __restrict__ devtok, int zc4) {
  const int tok = bstep_token(hmeta, dmeta, tokoff, devtok, zc4);
  q_embed_row(type, lo, hi, m0, m1, (size_t)tok, K, x + (size_t)blockIdx.x * K);
}

// qbembed_dec: bembed_dec for any type.
extern "C" __global__ void __launch_bounds__(256) qbembed_dec(QW_ARGS, int K, const int* __restrict__ meta,
                                                              const int* __restrict__ devtok, float* __restrict__ x) {
  PDL_LAUNCH();
  const int tok = bdec_token(meta, devtok);
  q_embed_row(type, lo, hi, m0, m1, (size_t)tok, K, x + (size_t)blockIdx.x * K);
}

// gather_rows: y[i] = x[idx[i]] for rows of K floats (the output rows,
// gathered before the final norm and the output head). One block a row.
extern "C" __global__ void __launch_bounds__(256) gather_rows(const float* __restrict__ x, int K,
                                                              const int* __restrict__ idx, float* __restrict__ y) {
  const float* src = x + (size_t)idx[blockIdx.x] * K;
  float* dst = y + (size_t)blockIdx.x * K;
  for (int i = threadIdx.x; i < K; i += blockDim.x) dst[i] = src[i];
}
