// argmax.cuh: greedy decoding's argmax on the device (included by
// kernels.cu after common.cuh, whose `better` is the order). The output
// head's matvec (mmvq.cuh, mmv.cuh: EP_ARGMAX) leaves a partial per block;
// argmax_final reduces them to the token. argmax_rows takes the argmax of
// whole rows of logits (the batch runner's output rows).

// argmax_block reduces n candidates, candidate j being (val[j], idx[j]),
// or (val[j], j) without IDX, to the block's first in the argmax order;
// lane 0 of warp 0 calls done(id) with it. Blocks of up to 1024 threads, a
// multiple of 32.
template <bool IDX, class Done>
__device__ __forceinline__ void argmax_block(const float* val, const int* idx, int n, Done done) {
  __shared__ float sv[32];
  __shared__ int si[32];
  float bv = NAN;
  int bi = 0x7fffffff;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const float v = val[j];
    const int id = IDX ? idx[j] : j;
    argmax_take(bv, bi, v, id);
  }
  warp_argmax(bv, bi);
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
    warp_argmax(bv, bi);
    if (l == 0) done(bi);
  }
}

// argmax_final reduces the n per-block candidates (pval, pidx) of an
// EP_ARGMAX matvec to the winning row id (one block of 1024 threads), to
// out[0]. With host not null it also writes the id and then the step
// number (params[2]) to page-locked host memory, where the host polls for
// it. params[1] set (a step sampled on the GPU: samp_final writes the id
// and the step number) skips it all; params may be null when host is (a
// plain argmax, as the kernel tests launch it).
extern "C" __global__ void __launch_bounds__(1024) argmax_final(const float* __restrict__ pval,
                                                                const int* __restrict__ pidx, int n,
                                                                int* __restrict__ out, volatile int* host,
                                                                const int* __restrict__ params) {
  PDL_LAUNCH();
  PDL_WAIT();
  if (params && params[1]) return;
  argmax_block<true>(pval, pidx, n, [&](int id) {
    out[0] = id;
    if (host) {
      host[0] = id;
      __threadfence_system();
      host[1] = params[2];
    }
  });
}

// argmax_rows: the argmax of each of n rows of V logits (one block of 1024
// threads a row) to out[row] and to page-locked host memory host[row]; the
// last block to finish (counter, reset by it) then writes the step number
// head[2] (the inputs' header) to host[n], where the host polls for it.
// head[1] set (a step sampled on the GPU: samp_final writes the ids and
// the step number) skips it all.
extern "C" __global__ void __launch_bounds__(1024) argmax_rows(const float* __restrict__ logits, int V, int n,
                                                               int* __restrict__ out, volatile int* host,
                                                               const int* __restrict__ head, unsigned* counter) {
  if (head[1]) return;
  argmax_block<false>(logits + (size_t)blockIdx.x * V, nullptr, V, [&](int id) {
    out[blockIdx.x] = id;
    host[blockIdx.x] = id;
    __threadfence_system();
    if (atomicAdd(counter, 1u) == (unsigned)(n - 1)) {
      *counter = 0;
      __threadfence_system();
      host[n] = head[2];
    }
  });
}
