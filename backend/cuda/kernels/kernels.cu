// Kernels of inferno's CUDA backend: the forward pass of the supported
// architectures over GGUF weights, one translation unit.
//
// Compiled to PTX and cubins by ../build_ptx.sh and embedded in the Go
// package; kernel names are extern "C", the Go side looks them up by name.
//
// Number formats
//   Weights: Q8_0 split into two arrays at upload: the int8 values, row-major
//   (rows x K), and the f16 block scales, twice: row-major (rows x K/32) for
//   the decode matvec and block-major (K/32 x Mpad) for the prefill matmul.
//   The other block formats are re-laid into planes (formats.cuh), float
//   matrices kept as in the file.
//   Activations entering a Q8_0 product of fewer than 128 tokens (decode,
//   short prompts) are quantized per block of 32 to 16-bit integers split
//   in two int8 planes, v = 256*hi + lo, with a float scale per block:
//   products are exact integer dp4a / IMMA sums of both planes, and the
//   activation rounding is 1/32512 of the block's largest value (far below
//   bf16), so results track the float32 CPU reference. Products of more
//   tokens (mm_q8h) take f16 activations (a power of two per token)
//   against the weights turned f16 in the tile: f32 sums on f16 tensor
//   cores, 11-bit roundings, no per-block rescale. The block formats'
//   products take int8 activations with sums (qact8) or f16 (qact_h):
//   quantize.cuh.
//   KV cache: f16, a pool of blocks per layer [block][kv head][block
//   size][head dim], found through per-sequence block tables (rope.cuh).
//
// The files, by operation (each includes nothing; the order below is the
// order of their dependencies):
//   common.cuh      shared device functions: reductions, the argmax order,
//                   epilogues, loads, cp.async, tensor-core fragments
//   formats.cuh     the weights' number formats: load, decode, dequantize
//   quantize.cuh    the activations of the products (int16 planes, int8
//                   with sums, f16)
//   getrows.cuh     embeddings (row lookups) and the gather of output rows
//   rows.cuh        per-row operations of the options: the embedding scale,
//                   biases and post-norms joining the residual stream, gated
//                   activations of raw gate/up products
//   argmax.cuh      greedy decoding's argmax
//   mmvq.cuh        decode matrix-vector over quantized weights (one token;
//                   up to 8 tokens in one weight pass)
//   mmv.cuh         the same over float weights
//   mmq.cuh         matrix products on int8 tensor cores
//   mmh.cuh         matrix products on f16 tensor cores
//   rope.cuh        QK-norm, RoPE and the paged KV cache's writes
//   attn_paged.cuh  attention over the paged KV cache: decode tokens
//   attn_prefill.cuh  the same for prompt chunks (tensor cores)
//   topk.cuh        the k best of candidates in shared memory
//   sample.cuh      sampling on the device (penalties, top-k/p, min-p, draw)
//   moe.cuh         the mixture-of-experts layer (routing, experts, combine)

#include "common.cuh"
#include "formats.cuh"
#include "quantize.cuh"
#include "getrows.cuh"
#include "rows.cuh"
#include "argmax.cuh"
#include "mmvq.cuh"
#include "mmv.cuh"
#include "mmq.cuh"
#include "mmh.cuh"
#include "rope.cuh"
#include "attn_paged.cuh"
#include "attn_prefill.cuh"
#include "topk.cuh"
#include "sample.cuh"
#include "moe.cuh"

// noop does nothing (graph overhead measurements).
extern "C" __global__ void noop(int* p) {
  if (p && threadIdx.x == 0 && blockIdx.x == 0) *p = 0;
}
