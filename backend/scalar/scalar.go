// Package scalar is the scalar backend: every operation of the forward pass in
// plain Go with float32 activations and float64 where it guards accuracy.
// It is the readable reference the faster backends are tested against.
package scalar

import (
	"fmt"
	"math"

	"inferno/arch"
	"inferno/backend"
	"inferno/gguf"
	"inferno/numfmt"
)

// Scalar implements backend.Ops in plain Go on one thread.
type Scalar struct {
	row    []float32 // one dequantized weight row
	scores []float32 // attention scores of one query head
}

// NewScalar returns the scalar backend.
func NewScalar() *Scalar { return &Scalar{} }

// Name returns "scalar".
func (s *Scalar) Name() string { return "scalar" }

// Supports reports whether MatMul computes with weights of type t: every
// type package numfmt can dequantize.
func (s *Scalar) Supports(t gguf.TensorType) bool {
	_, ok := numfmt.FormatOf(t)
	return ok
}

// MatMul computes y = W x for n tokens: each row is dequantized to float32
// (numfmt's Dequantize, whatever the type) and multiplied by each token's
// activations with a float32 sum, columns in order.
func (s *Scalar) MatMul(y []float32, w *backend.Weight, x []float32, n int) {
	f, ok := numfmt.FormatOf(w.Type)
	if !ok {
		panic(fmt.Sprintf("cpu: weight %s has unsupported type %s", w.Name, w.Type))
	}
	rb := w.RowBytes()
	s.row = grow(s.row, w.Cols)
	row := s.row[:w.Cols]
	for r := 0; r < w.Rows; r++ {
		f.Dequantize(row, w.Data[r*rb:(r+1)*rb])
		for t := 0; t < n; t++ {
			xt := x[t*w.Cols : (t+1)*w.Cols]
			var sum float32
			for c, wc := range row {
				sum += wc * xt[c]
			}
			y[t*w.Rows+r] = sum
		}
	}
}

// RMSNorm normalizes each row of x and scales it by gain.
func (s *Scalar) RMSNorm(y, x, gain []float32, eps float32) {
	d := len(gain)
	for off := 0; off+d <= len(x); off += d {
		xr, yr := x[off:off+d], y[off:off+d]
		var ss float64
		for _, v := range xr {
			ss += float64(v) * float64(v)
		}
		scale := float32(1 / math.Sqrt(ss/float64(d)+float64(eps)))
		for i, v := range xr {
			yr[i] = v * scale * gain[i]
		}
	}
}

// RoPE rotates query or key heads in place as rope describes (NeoX or
// normal pairs within the first rotDims values of a head, rope.Freq, cos
// and sin times rope.Mscale), token t being at position pos[t].
func (s *Scalar) RoPE(x []float32, pos []int32, nHeads, headDim, rotDims int, rope *arch.Rope) {
	if rotDims < 2 || rotDims%2 != 0 || rotDims > headDim || len(x) < len(pos)*nHeads*headDim {
		panic(fmt.Sprintf("cpu: RoPE on %d of %d values of %d heads of %d tokens over %d values", rotDims, headDim, nHeads, len(pos), len(x)))
	}
	// Pair i of a head is (i*step, i*step+off).
	half, step, off := rotDims/2, 1, rotDims/2
	if rope.Style == arch.RopeNormal {
		step, off = 2, 1
	}
	m := rope.Mscale()
	for t, pt := range pos {
		p := float64(pt)
		for i := range half {
			sin, cos := math.Sincos(p * rope.Freq(i, rotDims))
			c, sn := float32(cos*m), float32(sin*m)
			for h := 0; h < nHeads; h++ {
				v := x[(t*nHeads+h)*headDim:]
				a, b := v[i*step], v[i*step+off]
				v[i*step] = a*c - b*sn
				v[i*step+off] = a*sn + b*c
			}
		}
	}
}

// Attention computes causal grouped-query attention with a plain softmax
// over each token's positions in order (the window's, with opt.Window),
// its maximum and denominator including the head's sink (opt.Sinks),
// reading each position's key and value where its sequence's block table
// puts it; the arithmetic does not depend on the block layout.
func (s *Scalar) Attention(out, q, k, v []float32, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt backend.AttnOpts) {
	checkAttention(len(out), len(q), len(k), len(v), seqs, blockSize, nHeads, nKV, headDim, &opt)
	for i := range seqs {
		attention(s, out, q, k, v, &seqs[i], blockSize, nHeads, nKV, headDim, &opt, func(x float32) float32 { return x })
	}
}

// ToF16 converts src to half precision into dst with numfmt.F32ToF16.
func (s *Scalar) ToF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = numfmt.F32ToF16(x)
	}
}

// AttentionF16 is Attention reading half-precision keys and values: each
// is widened to float32 as it is read, and the arithmetic is Attention's,
// so the result has the bits of Attention on the widened cache.
func (s *Scalar) AttentionF16(out, q []float32, k, v []uint16, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt backend.AttnOpts) {
	checkAttention(len(out), len(q), len(k), len(v), seqs, blockSize, nHeads, nKV, headDim, &opt)
	for i := range seqs {
		attention(s, out, q, k, v, &seqs[i], blockSize, nHeads, nKV, headDim, &opt, numfmt.F16ToF32)
	}
}

// checkAttention panics unless every value an attention call reads or
// writes is inside out, q, k and v, of the lengths given, and opt is
// valid. With a window, the blocks before a sequence's first query's
// window are neither read nor checked.
func checkAttention(outLen, qLen, kLen, vLen int, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt *backend.AttnOpts) {
	if nKV <= 0 || headDim <= 0 || nHeads%nKV != 0 || nHeads < nKV || blockSize <= 0 {
		panic(fmt.Sprintf("cpu: attention with %d heads, %d KV heads, head size %d, blocks of %d positions", nHeads, nKV, headDim, blockSize))
	}
	if opt.Window < 0 || opt.Sinks != nil && len(opt.Sinks) < nHeads || !(opt.Scale >= 0) {
		panic(fmt.Sprintf("cpu: attention with a window of %d, %d sinks for %d heads, scale %v", opt.Window, len(opt.Sinks), nHeads, opt.Scale))
	}
	qDim, kvDim := nHeads*headDim, nKV*headDim
	tokens := min(qLen, outLen) / qDim
	for i, sq := range seqs {
		if sq.N == 0 {
			continue
		}
		if sq.N < 0 || sq.Token < 0 || sq.Pos < 0 || sq.Token > tokens-sq.N {
			panic(fmt.Sprintf("cpu: attention sequence %d: %d tokens from %d at position %d; q holds %d tokens, out %d",
				i, sq.N, sq.Token, sq.Pos, qLen/qDim, outLen/qDim))
		}
		end := sq.Pos + sq.N
		nb := (end + blockSize - 1) / blockSize
		if len(sq.Table) < nb {
			panic(fmt.Sprintf("cpu: attention sequence %d reads positions 0..%d: %d blocks of %d, its table has %d",
				i, end-1, nb, blockSize, len(sq.Table)))
		}
		for j := windowStart(sq.Pos, opt.Window) / blockSize; j < nb; j++ {
			b := sq.Table[j]
			rows := min(blockSize, end-j*blockSize) // positions read in the block
			// The block's last head ends its reads.
			if b < 0 || backend.KVIndex(int(b)*blockSize+rows-1, nKV-1, blockSize, nKV, headDim)+headDim > min(kLen, vLen) {
				panic(fmt.Sprintf("cpu: attention sequence %d: block %d of its table is %d, reading its first %d positions; k holds %d values, v %d, %d a block",
					i, j, b, rows, kLen, vLen, blockSize*kvDim))
			}
		}
	}
}

// windowStart returns the first position a query at position p attends
// to with a window of window positions (0: all).
func windowStart(p, window int) int {
	if window <= 0 {
		return 0
	}
	return max(0, p-window+1)
}

// attention is Attention for one sequence over a cache of element type E,
// which widen turns into float32.
func attention[E float32 | uint16](s *Scalar, out, q []float32, k, v []E, sq *backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt *backend.AttnOpts, widen func(E) float32) {
	group := nHeads / nKV
	scale := opt.Scale
	if scale == 0 {
		scale = arch.DefaultAttnScale(headDim)
	}
	s.scores = grow(s.scores, sq.Pos+sq.N)
	for t := 0; t < sq.N; t++ {
		seq := sq.Pos + t + 1
		lo := windowStart(seq-1, opt.Window)
		tok := sq.Token + t
		for h := 0; h < nHeads; h++ {
			qh := q[(tok*nHeads+h)*headDim:][:headDim]
			scores := s.scores[:seq-lo]
			maxScore := float32(math.Inf(-1))
			for j := range scores {
				p := lo + j
				row := int(sq.Table[p/blockSize])*blockSize + p%blockSize
				kj := k[backend.KVIndex(row, h/group, blockSize, nKV, headDim):][:headDim]
				var dot float32
				for i, qi := range qh {
					dot += qi * widen(kj[i])
				}
				scores[j] = dot * scale
				maxScore = max(maxScore, scores[j])
			}
			if opt.Sinks != nil {
				maxScore = max(maxScore, opt.Sinks[h])
			}
			var sum float32
			for j := range scores {
				scores[j] = float32(math.Exp(float64(scores[j] - maxScore)))
				sum += scores[j]
			}
			if opt.Sinks != nil {
				sum += float32(math.Exp(float64(opt.Sinks[h] - maxScore)))
			}
			oh := out[(tok*nHeads+h)*headDim:][:headDim]
			clear(oh)
			for j, w := range scores {
				p := lo + j
				row := int(sq.Table[p/blockSize])*blockSize + p%blockSize
				vj := v[backend.KVIndex(row, h/group, blockSize, nKV, headDim):][:headDim]
				w /= sum
				for i := range oh {
					oh[i] += w * widen(vj[i])
				}
			}
		}
	}
}

// SwiGLU computes out = silu(gate) * up.
func (s *Scalar) SwiGLU(out, gate, up []float32) {
	for i, g := range gate {
		out[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}

// GeGLU computes out = gelu(gate) * up, gelu's tanh approximation
// x/2 * (1 + tanh(z)), z = sqrt(2/pi) * (x + 0.044715 x^3), evaluated in
// float64 as x / (1 + e^(-2z)): the same number, without the cancellation
// of 1 + tanh(z) for z far below 0.
func (s *Scalar) GeGLU(out, gate, up []float32) {
	const c = 0.7978845608028654 // sqrt(2/pi)
	for i, g := range gate {
		x := float64(g)
		out[i] = float32(x/(1+math.Exp(-2*c*(x+0.044715*x*x*x)))) * up[i]
	}
}

// SwiGLUOAI computes OpenAI's clamped SwiGLU: g = min(gate, 7), u =
// clamp(up, -7, 7), out = g * sigmoid(1.702 g) * (u + 1).
func (s *Scalar) SwiGLUOAI(out, gate, up []float32) {
	for i, g := range gate {
		g = min(g, arch.SwiGLUOAILimit)
		u := min(max(up[i], -arch.SwiGLUOAILimit), arch.SwiGLUOAILimit)
		out[i] = g / (1 + float32(math.Exp(float64(-arch.SwiGLUOAIAlpha*g)))) * (u + 1)
	}
}

// Add computes x += y.
func (s *Scalar) Add(x, y []float32) {
	for i := range x {
		x[i] += y[i]
	}
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n, max(n, 2*cap(b)))
	}
	return b[:n]
}
