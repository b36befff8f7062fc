// Package backend defines the operations a CPU forward pass is built from,
// and the weight matrices they read.
//
// A backend (scalar Go, SIMD assembly, SIMD on a pool of workers) implements
// Ops; the CPU forward pass (backend/forward) calls only these methods, so
// every backend runs the same forward pass. Implementations keep their own
// scratch space and must not allocate in steady state, and must give
// results that do not depend on the number of threads.
package backend

import (
	"fmt"

	"inferno/arch"
	"inferno/gguf"
)

// Weight is a weight matrix in its file encoding (arch.Weight: the type
// is the architecture description's, which sits below the backends).
type Weight = arch.Weight

// CheckSupport returns an error naming the first weight of ws whose type
// ops cannot compute with, in one line; nil if it supports them all.
func CheckSupport(ops Ops, ws ...*Weight) error {
	for _, w := range ws {
		if w != nil && !ops.Supports(w.Type) {
			return fmt.Errorf("tensor %q: type %s is not supported by the %s backend", w.Name, w.Type, ops.Name())
		}
	}
	return nil
}

// KVIndex returns where the values of KV head g at cache row row (row r of
// block b is row b*blockSize+r) start in a layer's storage of a CPU
// backend: head-major inside a block, block b holding nKV runs of
// blockSize*headDim values, one per KV head, a position's headDim values
// in each. A pass over one head's keys then reads consecutive memory, a
// block at a time: with the rows position-major (a position's heads
// together), each head's pass read headDim values out of every
// nKV*headDim, a pattern the hardware prefetchers follow at about half
// the bandwidth of consecutive reads (BenchmarkAttention in package pool).
func KVIndex(row, g, blockSize, nKV, headDim int) int {
	b, r := row/blockSize, row%blockSize
	return ((b*nKV+g)*blockSize + r) * headDim
}

// A SeqAttn is the query tokens of one sequence in an attention call:
// tokens Token..Token+N-1 of the batch (rows of q and out), at positions
// Pos..Pos+N-1 of the sequence. Each attends to positions 0 through its
// own (with a window, the last AttnOpts.Window of them), which the cache
// holds (those of the call already stored): position p in row
// p%blockSize of block Table[p/blockSize]. With a window the entries of
// Table for the blocks wholly before position Pos-Window+1 are not read.
type SeqAttn struct {
	Token, N, Pos int
	Table         []int32
}

// AttnOpts are the options of an attention call beyond causal attention
// over every position; the zero value has none.
type AttnOpts struct {
	// Scale multiplies the logits q.k; 0 means 1/sqrt(headDim)
	// (arch.DefaultAttnScale).
	Scale float32
	// Window, when positive, limits the query at position q to the keys
	// at positions p with q - p < Window (a sliding-window layer).
	Window int
	// Sinks, when not nil, holds a logit for each query head (nHeads
	// values) that joins the denominator of its softmax: the weights are
	// e^s_j / (e^sink + sum e^s_i), as if each head had a key of that
	// logit with a value of zeros (attention sinks).
	Sinks []float32
}

// Ops are the operations of a forward pass. Activations are float32, laid
// out token-major: n tokens of width d are n*d contiguous values.
type Ops interface {
	// Name is the backend's name as the CLI spells it ("scalar", "simd", "pool").
	Name() string

	// Supports reports whether MatMul computes with weights of type t.
	Supports(t gguf.TensorType) bool

	// MatMul computes y = W x for n tokens: for each token t and row r,
	// y[t*w.Rows+r] = sum over c of W[r][c] * x[t*w.Cols+c].
	MatMul(y []float32, w *Weight, x []float32, n int)

	// RMSNorm normalizes each row of x (rows of len(gain) values) and
	// multiplies by gain: y = x / sqrt(mean(x^2) + eps) * gain. y may alias x.
	RMSNorm(y, x, gain []float32, eps float32)

	// RoPE rotates, in place, len(pos) tokens of nHeads heads of headDim
	// values, token t being at position pos[t], as rope describes; only
	// the first rotDims values of a head turn (an even number, at most
	// headDim), the others are left as they are. Pair i turns by pos*f_i
	// radians, f = rope.Freqs(rotDims) (theta^(-2i/rotDims) with any
	// per-pair scaling), its cos and sin multiplied by rope.Mscale(); the
	// pairs are (i, i+rotDims/2) with NeoX style, (2i, 2i+1) with the
	// normal style. The angles are computed in float64 and rounded to
	// float32, so a token's bits depend only on its values and position.
	// rope must not change while the Ops uses it.
	RoPE(x []float32, pos []int32, nHeads, headDim, rotDims int, rope *arch.Rope)

	// Attention computes causal grouped-query attention for the query
	// tokens of one or more sequences (seqs), with the options opt (a
	// scale, a sliding window, sinks). q holds the batch's tokens,
	// nHeads*headDim values each; out receives the same shape. k and v
	// are one layer's cache storage: blocks of blockSize positions of
	// nKV*headDim values, head-major inside a block (see KVIndex). Query
	// head h reads KV head h/(nHeads/nKV).
	// A token's output depends only on its own query and position and
	// its sequence's keys and values, never on the other sequences of
	// the batch, the block size or which blocks hold them: the bits are
	// those of the sequence alone in one contiguous block.
	Attention(out, q, k, v []float32, seqs []SeqAttn, blockSize, nHeads, nKV, headDim int, opt AttnOpts)

	// ToF16 converts src to IEEE half precision into dst[:len(src)],
	// rounding to nearest even: the bits of quant.F32ToF16 for every value,
	// NaN and infinities included. It stores keys and values into an F16
	// KV cache.
	ToF16(dst []uint16, src []float32)

	// AttentionF16 is Attention with the cached keys and values k and v
	// stored in half precision (uint16 bits). The CPU backends give the
	// bits their Attention gives on the same values widened to float32.
	AttentionF16(out, q []float32, k, v []uint16, seqs []SeqAttn, blockSize, nHeads, nKV, headDim int, opt AttnOpts)

	// SwiGLU computes out = silu(gate) * up element-wise; out may alias gate.
	SwiGLU(out, gate, up []float32)

	// GeGLU computes out = gelu(gate) * up element-wise with gelu's tanh
	// approximation (arch.GeGLU); out may alias gate.
	GeGLU(out, gate, up []float32)

	// SwiGLUOAI computes OpenAI's clamped SwiGLU (arch.SwiGLUOAI)
	// element-wise; out may alias gate.
	SwiGLUOAI(out, gate, up []float32)

	// Add computes x += y element-wise.
	Add(x, y []float32)
}
