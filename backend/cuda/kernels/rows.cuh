// rows.cuh: per-row operations of the options beyond Qwen3's (included by
// kernels.cu after getrows.cuh): the embedding's scale, a sub-layer's
// output joining the residual stream with its bias and post-norm, and the
// gated activations of gate/up products stored raw (a kernel whose
// epilogue has no such activation: Q8_0's own; experts with biases). A
// block a row, 256 threads, every one launched with programmatic dependent
// launch in a one-token graph (it waits before reading).

// scale_rows: x[t] *= s for the K values of row t = blockIdx.x (Gemma's
// embedding scale, after the embedding).
extern "C" __global__ void __launch_bounds__(256) scale_rows(float* __restrict__ x, int K, float s) {
  PDL_LAUNCH();
  PDL_WAIT();
  float* r = x + (size_t)blockIdx.x * K;
  for (int i = threadIdx.x; i < K; i += blockDim.x) r[i] *= s;
}

// resid_rows adds a sub-layer's output to the residual stream, row t =
// blockIdx.x: v = y[t] + bias (either may be null: y null adds the bias
// alone to a product's "add" epilogue), then with gain (the post-norm's
// gains) v = rmsnorm(v) * gain, the squares summed in float64 as the CPU
// does; x[t] += v.
extern "C" __global__ void __launch_bounds__(256) resid_rows(float* __restrict__ x, const float* __restrict__ y,
                                                              const float* __restrict__ bias,
                                                              const float* __restrict__ gain, float eps, int K) {
  __shared__ double red[32];
  PDL_LAUNCH();
  PDL_WAIT();
  const size_t t = blockIdx.x;
  float* xr = x + t * K;
  const float* yr = y ? y + t * K : nullptr;
  auto val = [&](int i) -> float {
    float v = yr ? yr[i] : 0.f;
    if (bias) v = yr ? v + bias[i] : bias[i];
    return v;
  };
  float scale = 1.f;
  if (gain) {
    double ss = 0.0;
    for (int i = threadIdx.x; i < K; i += blockDim.x) {
      const double v = val(i);
      ss += v * v;
    }
    ss = block_sum_d(ss, red);
    scale = (float)(1.0 / sqrt(ss / (double)K + (double)eps));
  }
  for (int i = threadIdx.x; i < K; i += blockDim.x) {
    float v = val(i);
    if (gain) v = v * scale * gain[i];
    xr[i] += v;
  }
}

// glu_rows computes the gated activation ep (common.cuh's glu) of row r =
// blockIdx.x of raw gate/up products stored in the interleaved order of
// the gate/up matrices (16-row groups: 8 gate rows, then their 8 up rows;
// ldr values a row): act[r*lda + o] = glu(ep, g + bg, u + bu) for output o
// = blockIdx.y*256 + threadIdx.x < F, g and u its gate and up values and
// bg, bu their biases when bias is not null (the same order, ldr values an
// expert: expert pick[r]'s, or the first when pick is null).
extern "C" __global__ void __launch_bounds__(256) glu_rows(const float* __restrict__ raw, int ldr,
                                                            float* __restrict__ act, int lda, int F, int ep,
                                                            const float* __restrict__ bias,
                                                            const int* __restrict__ pick) {
  PDL_LAUNCH();
  PDL_WAIT();
  const size_t r = blockIdx.x;
  const int o = blockIdx.y * blockDim.x + threadIdx.x;
  if (o >= F) return;
  const int gi = (o >> 3) * 16 + (o & 7);
  const float* rr = raw + r * ldr;
  float g = rr[gi], u = rr[gi + 8];
  if (bias) {
    const float* b = bias + (pick ? (size_t)pick[r] * ldr : 0);
    g += b[gi];
    u += b[gi + 8];
  }
  act[r * lda + o] = glu(ep, g, u);
}
