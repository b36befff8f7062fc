package pool

import (
	"fmt"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/simd"
	"inferno/gguf"
)

// jobKind names the operation a job runs.
type jobKind int

const (
	jobQuantize     jobKind = iota // tokens of p.acts
	jobMatMul                      // rows of y = W x
	jobAttention                   // (sequence, token, KV head) units
	jobAttentionF16                // (sequence, token, KV head) units, F16 keys and values
	jobToF16                       // elements
	jobRMSNorm                     // rows
	jobRoPE                        // tokens
	jobSwiGLU                      // elements
	jobGeGLU                       // elements
	jobSwiGLUOAI                   // elements
	jobAdd                         // elements
)

// job is the operation being run, split into chunks of size items. Its
// fields are plain values so that running one allocates nothing.
type job struct {
	kind         jobKind
	total, size  int // items, items per chunk
	chunks       int
	y, x, g      []float32
	k, v         []float32
	k16, v16     []uint16 // F16 keys and values
	h            []uint16 // ToF16's output
	w            *backend.Weight
	seqs         []backend.SeqAttn // attention's sequences
	blockSize    int               // positions per block of the KV cache
	pos          []int32           // RoPE's positions
	heads        int
	nKV, headDim int
	rotDims      int              // RoPE's rotated values a head
	opt          backend.AttnOpts // attention's options
	eps          float32
	rope         *arch.Rope
}

// Work below these sizes runs on the caller alone: waking workers costs
// microseconds.
const (
	minParallelElems  = 1 << 15 // element-wise operations, values
	minParallelTokens = 16      // activation quantization, tokens
)

// do runs chunk c of the current job on participant id.
func (p *pool) do(id, c int) {
	j := &p.job
	i0 := c * j.size
	i1 := min(i0+j.size, j.total)
	ops := p.ops[id]
	switch j.kind {
	case jobQuantize:
		p.acts.Quantize(i0, i1)
	case jobMatMul:
		ops.MatMulRows(j.y, j.w, &p.acts, i0, i1)
	case jobAttention:
		ops.AttentionUnits(j.y, j.x, j.k, j.v, j.seqs, j.blockSize, j.heads, j.nKV, j.headDim, &j.opt, i0, i1)
	case jobAttentionF16:
		ops.AttentionUnitsF16(j.y, j.x, j.k16, j.v16, j.seqs, j.blockSize, j.heads, j.nKV, j.headDim, &j.opt, i0, i1)
	case jobToF16:
		ops.ToF16(j.h[i0:i1], j.x[i0:i1])
	case jobRMSNorm:
		d := len(j.g)
		ops.RMSNorm(j.y[i0*d:i1*d], j.x[i0*d:i1*d], j.g, j.eps)
	case jobRoPE:
		d := j.heads * j.headDim
		ops.RoPE(j.x[i0*d:i1*d], j.pos[i0:i1], j.heads, j.headDim, j.rotDims, j.rope)
	case jobSwiGLU:
		ops.SwiGLU(j.y[i0:i1], j.x[i0:i1], j.g[i0:i1])
	case jobGeGLU:
		ops.GeGLU(j.y[i0:i1], j.x[i0:i1], j.g[i0:i1])
	case jobSwiGLUOAI:
		ops.SwiGLUOAI(j.y[i0:i1], j.x[i0:i1], j.g[i0:i1])
	case jobAdd:
		ops.Add(j.x[i0:i1], j.y[i0:i1])
	}
}

// start resets the job to kind over total items in chunks of size.
func (p *pool) start(kind jobKind, total, size int) *job {
	p.job = job{kind: kind, total: total, size: max(size, 1)}
	return &p.job
}

// chunkSize splits total items into about 4 chunks per thread, rounded up
// to a multiple of align.
func (p *pool) chunkSize(total, align int) int {
	per := (total + 4*(len(p.workers)+1) - 1) / (4 * (len(p.workers) + 1))
	return max(align, (per+align-1)/align*align)
}

// Supports reports whether MatMul computes with weights of type t: the
// types of the simd kernels.
func (o *Ops) Supports(t gguf.TensorType) bool { return simd.Supports(t) }

// MatMul computes y = W x for n tokens: the activations are quantized once
// (by token, in parallel for long prompts), then the rows are split among
// the threads, each computing its rows for all n tokens with the tiled
// kernels.
func (o *Ops) MatMul(y []float32, w *backend.Weight, x []float32, n int) {
	if n <= 0 {
		return
	}
	p := o.p
	p.acts.Prepare(w, x, n)
	if p.acts.Quantized() {
		if n >= minParallelTokens {
			p.start(jobQuantize, n, (n+2*len(p.ops)-1)/(2*len(p.ops)))
			p.run()
		} else {
			p.acts.Quantize(0, n)
		}
	}
	p.ops[0].MatMulRows(y, w, &p.acts, 0, 0) // checks y here, not on a worker
	j := p.start(jobMatMul, w.Rows, p.chunkSize(w.Rows, 16))
	j.y, j.w = y, w
	p.run()
}

// Attention computes causal grouped-query attention for the query tokens
// of seqs, with the options opt, split into the units of
// simd.Ops.AttentionUnits: (sequence, query token, KV head), all the
// batch's sequences together.
func (o *Ops) Attention(out, q, k, v []float32, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt backend.AttnOpts) {
	p := o.p
	p.ops[0].AttentionUnits(out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, &opt, 0, 0) // checks the arguments
	units := attentionUnits(seqs, nKV)
	if units == 0 {
		return
	}
	j := p.start(jobAttention, units, p.attnChunkSize(seqs, units, nKV))
	j.y, j.x, j.k, j.v = out, q, k, v
	j.seqs, j.blockSize, j.heads, j.nKV, j.headDim, j.opt = seqs, blockSize, nHeads, nKV, headDim, opt
	p.run()
}

// AttentionF16 is Attention with half-precision keys and values, split
// the same way.
func (o *Ops) AttentionF16(out, q []float32, k, v []uint16, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt backend.AttnOpts) {
	p := o.p
	p.ops[0].AttentionUnitsF16(out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, &opt, 0, 0) // checks the arguments
	units := attentionUnits(seqs, nKV)
	if units == 0 {
		return
	}
	j := p.start(jobAttentionF16, units, p.attnChunkSize(seqs, units, nKV))
	j.y, j.x, j.k16, j.v16 = out, q, k, v
	j.seqs, j.blockSize, j.heads, j.nKV, j.headDim, j.opt = seqs, blockSize, nHeads, nKV, headDim, opt
	p.run()
}

// attnChunkSize returns the units of an attention call's chunks. A call
// of decode steps only (one token a sequence) goes a KV head a chunk:
// each head's keys and values are a stream of their own through the
// cache (backend.KVIndex), so the threads take heads one at a time and a
// thread slowed by a neighbour leaves the rest to the others (at 4096
// positions, with Qwen3-0.6B's 8 KV heads on 2 threads, chunks of 1, 2
// and 4 heads read the cache at the same rate on a quiet machine:
// BenchmarkAttention; beside a busy loop on one of the 2 cores, tg32 at
// depth 4096 went from 10.95-11.09 tok/s with 4 heads a chunk to
// 11.10-11.41, the matrix products' even split bounding the rest).
// Otherwise about 16 chunks per thread when there are many units (a
// prompt's tokens, a large batch), else up to nKV units split evenly
// among the threads: a prompt's block of tokens of one KV head shares
// each chunk of the head's keys and values while it is in cache.
func (p *pool) attnChunkSize(seqs []backend.SeqAttn, units, nKV int) int {
	if units == decodeUnits(seqs, nKV) {
		return 1
	}
	threads := len(p.ops)
	if size := units / (16 * threads); size >= nKV {
		return size
	}
	return min(nKV, (units+threads-1)/threads)
}

// decodeUnits returns the units of seqs' calls of one token: nKV for each
// sequence with a query token.
func decodeUnits(seqs []backend.SeqAttn, nKV int) int {
	n := 0
	for _, sq := range seqs {
		if sq.N > 0 {
			n += nKV
		}
	}
	return n
}

// attentionUnits returns the number of units of an attention call whose
// arguments were checked.
func attentionUnits(seqs []backend.SeqAttn, nKV int) int {
	n := 0
	for _, sq := range seqs {
		n += sq.N
	}
	return n * nKV
}

// ToF16 converts src to half precision into dst[:len(src)], split by
// ranges of elements when long.
func (o *Ops) ToF16(dst []uint16, src []float32) {
	p := o.p
	if len(src) < minParallelElems {
		p.ops[0].ToF16(dst, src)
		return
	}
	if len(dst) < len(src) {
		panic(fmt.Sprintf("pool: ToF16 of %d values into %d", len(src), len(dst)))
	}
	j := p.start(jobToF16, len(src), p.chunkSize(len(src), 64))
	j.h, j.x = dst, src
	p.run()
}

// RMSNorm normalizes each row of x and multiplies it by gain; y may alias x.
func (o *Ops) RMSNorm(y, x, gain []float32, eps float32) {
	p := o.p
	d := len(gain)
	if d == 0 || len(x) < minParallelElems {
		p.ops[0].RMSNorm(y, x, gain, eps)
		return
	}
	rows := len(x) / d
	if len(y) < rows*d {
		panic(fmt.Sprintf("pool: RMSNorm of %d values into %d", len(x), len(y)))
	}
	j := p.start(jobRMSNorm, rows, p.chunkSize(rows, 1))
	j.y, j.x, j.g, j.eps = y, x, gain, eps
	p.run()
}

// RoPE rotates the first rotDims values of len(pos) tokens of nHeads
// heads in place, token t at position pos[t], split by token.
func (o *Ops) RoPE(x []float32, pos []int32, nHeads, headDim, rotDims int, rope *arch.Rope) {
	p := o.p
	n := len(pos)
	if n*nHeads*headDim < minParallelElems || n < 2 {
		p.ops[0].RoPE(x, pos, nHeads, headDim, rotDims, rope)
		return
	}
	if rotDims < 2 || rotDims%2 != 0 || rotDims > headDim || len(x) < n*nHeads*headDim {
		panic(fmt.Sprintf("pool: RoPE on %d of %d values of %d heads of %d tokens over %d values", rotDims, headDim, nHeads, n, len(x)))
	}
	j := p.start(jobRoPE, n, p.chunkSize(n, 1))
	j.x, j.pos, j.heads, j.headDim, j.rotDims, j.rope = x, pos, nHeads, headDim, rotDims, rope
	p.run()
}

// SwiGLU computes out = silu(gate) * up element-wise; out may alias gate.
func (o *Ops) SwiGLU(out, gate, up []float32) {
	p := o.p
	if len(gate) < minParallelElems {
		p.ops[0].SwiGLU(out, gate, up)
		return
	}
	if len(up) < len(gate) || len(out) < len(gate) {
		panic(fmt.Sprintf("pool: SwiGLU of %d values with up %d into %d", len(gate), len(up), len(out)))
	}
	j := p.start(jobSwiGLU, len(gate), p.chunkSize(len(gate), 64))
	j.y, j.x, j.g = out, gate, up
	p.run()
}

// GeGLU computes out = gelu(gate) * up element-wise; out may alias gate.
func (o *Ops) GeGLU(out, gate, up []float32) { o.glu(jobGeGLU, out, gate, up) }

// SwiGLUOAI computes OpenAI's clamped SwiGLU element-wise; out may alias
// gate.
func (o *Ops) SwiGLUOAI(out, gate, up []float32) { o.glu(jobSwiGLUOAI, out, gate, up) }

// glu runs a gated activation job, kind jobGeGLU or jobSwiGLUOAI, split
// by ranges of elements when long.
func (o *Ops) glu(kind jobKind, out, gate, up []float32) {
	p := o.p
	if len(gate) < minParallelElems {
		if kind == jobGeGLU {
			p.ops[0].GeGLU(out, gate, up)
		} else {
			p.ops[0].SwiGLUOAI(out, gate, up)
		}
		return
	}
	if len(up) < len(gate) || len(out) < len(gate) {
		panic(fmt.Sprintf("pool: gated activation of %d values with up %d into %d", len(gate), len(up), len(out)))
	}
	j := p.start(kind, len(gate), p.chunkSize(len(gate), 64))
	j.y, j.x, j.g = out, gate, up
	p.run()
}

// Add computes x += y element-wise.
func (o *Ops) Add(x, y []float32) {
	p := o.p
	if len(x) < minParallelElems {
		p.ops[0].Add(x, y)
		return
	}
	if len(y) < len(x) {
		panic(fmt.Sprintf("pool: Add of %d values to %d", len(y), len(x)))
	}
	j := p.start(jobAdd, len(x), p.chunkSize(len(x), 64))
	j.x, j.y = x, y
	p.run()
}
