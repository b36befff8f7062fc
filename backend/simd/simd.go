// Package simd is the single-threaded SIMD backend: every operation of the
// forward pass with AVX2, FMA and F16C kernels written in Go assembly, and a
// pure-Go fallback used on other CPUs and architectures (or with the purego
// build tag). Where the CPU also has AVX-512 VNNI, prompt (matrix-matrix)
// products of the block formats use VPDPBUSD kernels instead of the AVX2
// ones, and single-token K-quant products VPDPWSSD (Q4_K and Q6_K on
// 512-bit vectors, two sub-blocks of a row per vector).
//
// Weights of every block format (types.go: the one table of the types and
// their kernels) stay in their file encoding. Activations are quantized to
// 8 bits per block, as llama.cpp's dot formats: Q8_0 (blocks of 32, a
// float32 scale max|x|/127) for Q8_0, Q4_0, Q5_0, IQ4_NL and MXFP4; the
// same with the block sums (Q8_1) for Q4_1 and Q5_1; Q8_K (blocks of 256,
// with the sums of every 16 and 32 values) for Q2_K..Q6_K and IQ4_XS. Each
// block's product is an exact integer dot product, combined with the scales in
// float32 in the order the type's Go reference defines (q8.go, legacy.go,
// kquant.go), which every kernel reproduces bit for bit: the matrix-vector
// kernels (decode), the packed multi-token tiles (prompts, batches) and
// the pure-Go fallback. So the results do not depend on the number of
// tokens in a call nor on how rows are split among threads; the SwiGLU and
// RoPE kernels and the float32 to half-precision conversion even give the
// same bits as the pure-Go fallback.
//
// Attention reads float32 keys and values; AttentionF16 reads half-precision
// ones (an F16 KV cache), widening them in its kernels with F16C, and gives
// the bits Attention gives on the widened values. Both compute a batch of
// sequences over a paged cache, and give each token the bits it would get
// alone, its sequence's keys and values in one contiguous block.
//
// Besides the backend.Ops methods, the package exports the pieces a
// multi-threaded backend splits among its workers, each worker with its own
// Ops: Acts with Ops.MatMulRows for products, and Ops.AttentionUnits and
// Ops.AttentionUnitsF16 for attention.
package simd

import (
	"fmt"
	"math"

	"inferno/backend"
)

// Ops is the SIMD backend on one thread. It keeps its scratch buffers
// between calls, so an Ops must not be used by two goroutines at once.
type Ops struct {
	acts   Acts
	attn   attnScratch
	rope   ropeTables
	pack   []byte // a tile of repacked weight rows (VNNI kernels)
	pack16 []byte // two K tiles interleaved (the 512-bit K tile)
}

var _ backend.Ops = (*Ops)(nil)

// New returns a single-threaded SIMD backend.
func New() *Ops { return &Ops{} }

// Accelerated reports whether the assembly kernels are in use; when false,
// every operation runs the pure-Go fallback.
func Accelerated() bool { return accel }

// Name returns "simd".
func (o *Ops) Name() string { return "simd" }

// MatMul computes y = W x for n tokens. For block-format weights the
// activations are first quantized to the type's 8-bit dot format.
func (o *Ops) MatMul(y []float32, w *backend.Weight, x []float32, n int) {
	if n <= 0 {
		return
	}
	o.acts.Prepare(w, x, n)
	o.acts.Quantize(0, n)
	o.MatMulRows(y, w, &o.acts, 0, w.Rows)
}

// RMSNorm normalizes each row of x, rows being len(gain) values, and
// multiplies it by gain. y may alias x.
func (o *Ops) RMSNorm(y, x, gain []float32, eps float32) {
	d := len(gain)
	if d == 0 {
		return
	}
	if len(y) < len(x)/d*d {
		panic(fmt.Sprintf("simd: RMSNorm of %d values into %d", len(x), len(y)))
	}
	for off := 0; off+d <= len(x); off += d {
		xr, yr := x[off:off+d], y[off:off+d]
		ss := sumSquares(xr)
		scale := float32(1 / math.Sqrt(ss/float64(d)+float64(eps)))
		scaleMul(yr, xr, gain, scale)
	}
}

// ToF16 converts src to half precision into dst[:len(src)], rounding to
// nearest even (VCVTPS2PH), with the bits of quant.F32ToF16.
func (o *Ops) ToF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("simd: ToF16 of %d values into %d", len(src), len(dst)))
	}
	toF16(dst[:len(src)], src)
}

// SwiGLU computes out = silu(gate) * up element-wise; out may alias gate.
func (o *Ops) SwiGLU(out, gate, up []float32) {
	if len(up) < len(gate) || len(out) < len(gate) {
		panic(fmt.Sprintf("simd: SwiGLU of %d values with up %d into %d", len(gate), len(up), len(out)))
	}
	swiglu(out[:len(gate)], gate, up[:len(gate)])
}

// GeGLU computes out = gelu(gate) * up element-wise, gelu's tanh
// approximation (geluMul); out may alias gate.
func (o *Ops) GeGLU(out, gate, up []float32) {
	if len(up) < len(gate) || len(out) < len(gate) {
		panic(fmt.Sprintf("simd: GeGLU of %d values with up %d into %d", len(gate), len(up), len(out)))
	}
	geglu(out[:len(gate)], gate, up[:len(gate)])
}

// SwiGLUOAI computes OpenAI's clamped SwiGLU element-wise
// (swigluOAIMul); out may alias gate.
func (o *Ops) SwiGLUOAI(out, gate, up []float32) {
	if len(up) < len(gate) || len(out) < len(gate) {
		panic(fmt.Sprintf("simd: SwiGLUOAI of %d values with up %d into %d", len(gate), len(up), len(out)))
	}
	swigluOAI(out[:len(gate)], gate, up[:len(gate)])
}

// Add computes x += y element-wise.
func (o *Ops) Add(x, y []float32) {
	if len(y) < len(x) {
		panic(fmt.Sprintf("simd: Add of %d values to %d", len(y), len(x)))
	}
	add(x, y[:len(x)])
}
