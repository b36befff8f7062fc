// quantize.cuh: the activations of the matrix products (included by
// kernels.cu after formats.cuh), each row RMS-normalized and multiplied by
// the norm's gain when gain is not null:
//   quant_act, quant_actv  int16 values as two int8 planes (v = 256*hi +
//               lo) with a float scale per block of 32: the Q8_0 products'
//               (mm_q8, mmv_q8; the decode matvec mv_q8 quantizes its own
//               in its prologue the same way, q16)
//   qact8       int8 values per block of 32 as llama.cpp's q8_1, with the
//               sums of 16 that the mins and offsets of the block formats
//               need: mvqn's, mmq's and the experts' (mvq and moe_mvnq
//               quantize their own in shared memory the same way, qprologue)
//   qact_h      f16 values with a power-of-two scale per token: the f16
//               tensor-core products' (mmh, mmw, mm_q8h) and mvhn's

// ---------------------------------------------------------------- int16 as two int8 planes

#define QMAX 32512.0f  // 127*256: |v| <= QMAX keeps hi = round(v/256) in int8

// q16 quantizes a warp's 32 values (v: the lane's) to int16 q = round(v *
// QMAX/a), a the largest |v|, split into bytes hi = round(q/256) and lo = q -
// 256*hi (exact products in two int8 dp4a or mma passes; the rounding is
// 1/32512 of a, far below bf16's): the lane's to *hi and *lo. Returns a
// (the block's scale is a/QMAX).
__device__ __forceinline__ float q16(float v, i8* hi, i8* lo) {
  const float a = warp_max(fabsf(v));
  int q = 0;
  if (a > 0.f) q = __float2int_rn(v * (QMAX / a));
  q = max(-32512, min(32512, q));
  const int h = (q + 128) >> 8;
  *hi = (i8)h;
  *lo = (i8)(q - h * 256);
  return a;
}

// quant_vec quantizes x[0:K) (K a multiple of 32), normalized by scale and
// multiplied by gain when gain is not null, into the hi and lo planes and
// one scale per block of 32 (sx[b*sx_stride]). Each warp takes whole blocks.
__device__ __forceinline__ void quant_vec(const float* __restrict__ x, int K, const float* __restrict__ gain,
                                          float scale, i8* hi, i8* lo, float* sx, int sx_stride) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  for (int b = warp; b < (K >> 5); b += nw) {
    const int i = b * 32 + lane;
    float v = x[i];
    if (gain) v = v * scale * gain[i];
    const float a = q16(v, hi + i, lo + i);
    if (lane == 0) sx[b * sx_stride] = a / QMAX;
  }
}

// quant_act: per token (one block each), quantize x[t] (rmsnorm*gain when
// gain is not null) into planes hi[t*K..], lo[t*K..] and scales
// sx[b*npad + t] (block-major, as mm_q8 loads them).
extern "C" __global__ void __launch_bounds__(256) quant_act(const float* __restrict__ x, int K, int ldx,
                                                            const float* __restrict__ gain, float eps,
                                                            i8* __restrict__ hi, i8* __restrict__ lo,
                                                            float* __restrict__ sx, int npad) {
  __shared__ double red[32];
  const int t = blockIdx.x;
  const float* xt = x + (size_t)t * ldx;
  float scale = 1.f;
  if (gain) scale = rms_scale(xt, K, eps, red);
  quant_vec(xt, K, gain, scale, hi + (size_t)t * K, lo + (size_t)t * K, sx + t, npad);
}

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
    i8* dst = xq + ((size_t)b * npad + t) * 64 + (lane >> 3) * 16 + (lane & 7);
    const float a = q16(v, dst, dst + 8);
    if (lane == 0) sx[(size_t)b * npad + t] = a / QMAX;
  }
}

// ---------------------------------------------------------------- int8 with sums (the block formats)

// qsw maps 16-byte chunk c of the activation planes to its place in shared
// memory: lanes reading units 32 bytes apart then hit distinct banks.
__device__ __forceinline__ int qsw(int c) { return c ^ ((c >> 3) & 1); }

// qprologue loads x[0:K) into shared memory: RMS-normalized and multiplied
// by gain when gain is not null, quantized to int8 per block of 32 values
// (q = round(v*127/max|v|), as llama.cpp's q8_1: the products take 8-bit
// activations), the 16-byte chunks swizzled by qsw; the block's scale xs[b]
// = max|v|/127, and the sum of each 16 quantized values times it (xsum:
// the products are then exactly those with the quantized activations,
// the mins' and offsets' terms included). Thread t takes
// the chunks of 16 values t, t+256, ...: a pair of threads holds a block.
// 256 threads.
__device__ __forceinline__ void qprologue(const float* __restrict__ x, int K, const float* __restrict__ gain,
                                          float eps, i8* xq, float* xs, float* xsum, float* red) {
  const int tid = threadIdx.x;
  const int nc = K >> 4;
  float scale = 1.f;
  if (gain) {
    float ss = 0.f;
    for (int c = tid; c < nc; c += 256) {
      const float4* p = (const float4*)(x + 16 * c);
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const float4 v = p[j];
        ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
      }
    }
    scale = rms_scale8(ss, K, eps, red);
  }
  for (int c0 = 0; c0 < nc; c0 += 256) {  // uniform: the pair's shuffle
    const int c = c0 + tid;
    const bool ok = c < nc;
    float v[16];
#pragma unroll
    for (int j = 0; j < 4; j++) {
      float4 a = make_float4(0.f, 0.f, 0.f, 0.f), g = make_float4(1.f, 1.f, 1.f, 1.f);
      if (ok) {
        a = ((const float4*)(x + 16 * c))[j];
        if (gain) g = ((const float4*)(gain + 16 * c))[j];
      }
      v[4 * j] = a.x, v[4 * j + 1] = a.y, v[4 * j + 2] = a.z, v[4 * j + 3] = a.w;
      if (gain) {
        v[4 * j] = v[4 * j] * scale * g.x, v[4 * j + 1] = v[4 * j + 1] * scale * g.y;
        v[4 * j + 2] = v[4 * j + 2] * scale * g.z, v[4 * j + 3] = v[4 * j + 3] * scale * g.w;
      }
    }
    float a = 0.f;
#pragma unroll
    for (int j = 0; j < 16; j++) a = fmaxf(a, fabsf(v[j]));
    a = fmaxf(a, __shfl_xor_sync(FULL, a, 1));
    if (ok) {
      const float inv = a > 0.f ? 127.f / a : 0.f;
      int w[4], qs = 0;
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const int q0 = __float2int_rn(v[4 * j] * inv), q1 = __float2int_rn(v[4 * j + 1] * inv);
        const int q2 = __float2int_rn(v[4 * j + 2] * inv), q3 = __float2int_rn(v[4 * j + 3] * inv);
        w[j] = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | (q3 << 24);
        qs += q0 + q1 + q2 + q3;
      }
      *(int4*)(xq + qsw(c) * 16) = make_int4(w[0], w[1], w[2], w[3]);
      const float d = a / 127.f;
      if ((c & 1) == 0) xs[c >> 1] = d;
      xsum[c] = (float)qs * d;
    }
  }
}

// One unit's activations: the 32 int8 values, the block's scale and the
// sums of its two halves.
struct qact {
  int q[8];
  float s, s0, s1;
};

__device__ __forceinline__ void q_act(qact& a, int u, const i8* xq, const float* xs, const float* xsum) {
  const int4 h0 = *(const int4*)(xq + qsw(2 * u) * 16), h1 = *(const int4*)(xq + qsw(2 * u + 1) * 16);
  a.q[0] = h0.x, a.q[1] = h0.y, a.q[2] = h0.z, a.q[3] = h0.w, a.q[4] = h1.x, a.q[5] = h1.y, a.q[6] = h1.z,
  a.q[7] = h1.w;
  a.s = xs[u];
  const float2 ss = *(const float2*)(xsum + 2 * u);
  a.s0 = ss.x;
  a.s1 = ss.y;
}

// qact8: token t (one block each) quantized as mvq's prologue quantizes its
// activations (rmsnorm*gain when gain is not null), into global memory: the
// int8 values xq[t*K..] (16-byte chunks swizzled by qsw), the scales
// xs[t*K/32..] and the sums of 16 xsum[t*K/16..]. mvqn reads them.
extern "C" __global__ void __launch_bounds__(256) qact8(const float* __restrict__ x, int K, int ldx,
                                                        const float* __restrict__ gain, float eps, i8* xq,
                                                        float* xs, float* xsum) {
  __shared__ float red[8];
  PDL_LAUNCH();
  PDL_WAIT();
  const size_t t = blockIdx.x;
  qprologue(x + t * ldx, K, gain, eps, xq + t * K, xs + t * (K >> 5), xsum + t * (K >> 4), red);
}


// ---------------------------------------------------------------- f16 with a power-of-two scale

// qact_h_scale writes token t's power of two sx[t] for the largest |value|
// amax (of the whole block) and returns its inverse: the largest value
// scaled near 2^12, far from f16's overflow whatever the input.
__device__ __forceinline__ float qact_h_scale(float amax, float* __restrict__ sx, int t) {
  int e = 0;
  if (amax > 0.f && amax < INFINITY) frexpf(amax, &e);  // amax < 2^e
  if (threadIdx.x == 0) sx[t] = ldexpf(1.f, e - 12);
  return ldexpf(1.f, 12 - e);
}

// qact_h_regs is qact_h for rows of up to J*256 values, read once into
// registers (thread i holds values i, i+256, ...: rms_scale's order, so the
// same sums and the same halves as the rows read three times).
template <int J>
__device__ __forceinline__ void qact_h_regs(const float* __restrict__ xt, int K, const float* __restrict__ gain,
                                            float eps, __half* __restrict__ dst, float* __restrict__ sx, int t,
                                            double* red, float* redf) {
  float v[J];
  double ss = 0.0;
#pragma unroll
  for (int j = 0; j < J; j++) {
    const int i = threadIdx.x + j * 256;
    v[j] = i < K ? xt[i] : 0.f;
    ss += (double)v[j] * (double)v[j];
  }
  float scale = 1.f;
  if (gain) {
    ss = block_sum_d(ss, red);
    scale = (float)(1.0 / sqrt(ss / (double)K + (double)eps));
  }
  float amax = 0.f;
#pragma unroll
  for (int j = 0; j < J; j++) {
    const int i = threadIdx.x + j * 256;
    if (gain && i < K) v[j] = v[j] * scale * gain[i];
    amax = fmaxf(amax, fabsf(v[j]));
  }
  const float inv = qact_h_scale(block_max(amax, redf), sx, t);
#pragma unroll
  for (int j = 0; j < J; j++) {
    const int i = threadIdx.x + j * 256;
    if (i < K) dst[i] = __float2half_rn(v[j] * inv);
  }
}

// qact_h: per token (one block of 256 threads each), x[t] (rmsnorm*gain
// when gain is not null) to f16 xh[t*K..], divided by a power of two sx[t]
// that keeps the largest value near 2^12 (qact_h_scale). Rows of up to
// 4,096 values are read once, into registers (qact_h_regs); longer ones
// three times (qact_h32 and qact_hw below read them once).
extern "C" __global__ void __launch_bounds__(256) qact_h(const float* __restrict__ x, int K, int ldx,
                                                         const float* __restrict__ gain, float eps,
                                                         __half* __restrict__ xh, float* __restrict__ sx) {
  __shared__ double red[32];
  __shared__ float redf[32];
  PDL_LAUNCH();
  PDL_WAIT();
  const int t = blockIdx.x;
  const float* xt = x + (size_t)t * ldx;
  __half* dst = xh + (size_t)t * K;
  if (K <= 16 * 256) {
    qact_h_regs<16>(xt, K, gain, eps, dst, sx, t, red, redf);
    return;
  }
  float scale = 1.f;
  if (gain) scale = rms_scale(xt, K, eps, red);
  float amax = 0.f;
  for (int i = threadIdx.x; i < K; i += blockDim.x) {
    const float v = gain ? xt[i] * scale * gain[i] : xt[i];
    amax = fmaxf(amax, fabsf(v));
  }
  const float inv = qact_h_scale(block_max(amax, redf), sx, t);
  __half2* dst2 = (__half2*)dst;
  for (int i = threadIdx.x; i < (K >> 1); i += blockDim.x) {
    float v0 = xt[2 * i], v1 = xt[2 * i + 1];
    if (gain) {
      v0 = v0 * scale * gain[2 * i];
      v1 = v1 * scale * gain[2 * i + 1];
    }
    dst2[i] = __floats2half2_rn(v0 * inv, v1 * inv);
  }
}

// qact_h32 is qact_h for rows of 4,097 to 8,192 values (the hidden size of
// the larger models, normalized here), read once into registers.
extern "C" __global__ void __launch_bounds__(256) qact_h32(const float* __restrict__ x, int K, int ldx,
                                                           const float* __restrict__ gain, float eps,
                                                           __half* __restrict__ xh, float* __restrict__ sx) {
  __shared__ double red[32];
  __shared__ float redf[32];
  PDL_LAUNCH();
  PDL_WAIT();
  const int t = blockIdx.x;
  qact_h_regs<32>(x + (size_t)t * ldx, K, gain, eps, xh + (size_t)t * K, sx, t, red, redf);
}

// qact_hw is qact_h without a norm (gain null) for rows of up to
// QHW_J*4*1024 values, K and ldx multiples of 4 (the SwiGLU outputs that
// the down products take: 32,768 values a token for Mistral Small):
// blocks of 1024 threads, each thread QHW_J float4s read once into
// registers, half2 pairs written. Without a norm there is no sum, and the
// largest value is the same in any order: the halves and scales are
// qact_h's.
#define QHW_J 8
extern "C" __global__ void __launch_bounds__(1024) qact_hw(const float* __restrict__ x, int K, int ldx,
                                                           const float* __restrict__ gain, float eps,
                                                           __half* __restrict__ xh, float* __restrict__ sx) {
  __shared__ float redf[32];
  PDL_LAUNCH();
  PDL_WAIT();
  const int t = blockIdx.x;
  const float4* xt = (const float4*)(x + (size_t)t * ldx);
  const int K4 = K >> 2;
  float4 v[QHW_J];
  float amax = 0.f;
#pragma unroll
  for (int j = 0; j < QHW_J; j++) {
    const int i = threadIdx.x + j * 1024;
    v[j] = i < K4 ? xt[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    amax = fmaxf(amax, fmaxf(fmaxf(fabsf(v[j].x), fabsf(v[j].y)), fmaxf(fabsf(v[j].z), fabsf(v[j].w))));
  }
  const float inv = qact_h_scale(block_max(amax, redf), sx, t);
  uint2* dst = (uint2*)(xh + (size_t)t * K);
#pragma unroll
  for (int j = 0; j < QHW_J; j++) {
    const int i = threadIdx.x + j * 1024;
    if (i < K4) {
      const __half2 a = __floats2half2_rn(v[j].x * inv, v[j].y * inv), b = __floats2half2_rn(v[j].z * inv, v[j].w * inv);
      dst[i] = make_uint2(*(const unsigned*)&a, *(const unsigned*)&b);
    }
  }
}
