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
// normal pairs, rope.Freq), token t being at position pos[t].
func (s *Scalar) RoPE(x []float32, pos []int32, nHeads, headDim int, rope *arch.Rope) {
	// Pair i of a head is (i*step, i*step+off).
	half, step, off := headDim/2, 1, headDim/2
	if rope.Style == arch.RopeNormal {
		step, off = 2, 1
	}
	for t, pt := range pos {
		p := float64(pt)
		for i := range half {
			sin, cos := math.Sincos(p * rope.Freq(i, headDim))
			c, sn := float32(cos), float32(sin)
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
// over each token's positions in order, reading each position's key and
// value where its sequence's block table puts it; the arithmetic does not
// depend on the block layout.
func (s *Scalar) Attention(out, q, k, v []float32, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int) {
	checkAttention(len(out), len(q), len(k), len(v), seqs, blockSize, nHeads, nKV, headDim)
	for i := range seqs {
		attention(s, out, q, k, v, &seqs[i], blockSize, nHeads, nKV, headDim, func(x float32) float32 { return x })
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
func (s *Scalar) AttentionF16(out, q []float32, k, v []uint16, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int) {
	checkAttention(len(out), len(q), len(k), len(v), seqs, blockSize, nHeads, nKV, headDim)
	for i := range seqs {
		attention(s, out, q, k, v, &seqs[i], blockSize, nHeads, nKV, headDim, numfmt.F16ToF32)
	}
}

// checkAttention panics unless every value an attention call reads or
// writes is inside out, q, k and v, of the lengths given.
func checkAttention(outLen, qLen, kLen, vLen int, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int) {
	if nKV <= 0 || headDim <= 0 || nHeads%nKV != 0 || nHeads < nKV || blockSize <= 0 {
		panic(fmt.Sprintf("cpu: attention with %d heads, %d KV heads, head size %d, blocks of %d positions", nHeads, nKV, headDim, blockSize))
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
		for j, b := range sq.Table[:nb] {
			rows := min(blockSize, end-j*blockSize) // positions read in the block
			if b < 0 || (int(b)*blockSize+rows)*kvDim > min(kLen, vLen) {
				panic(fmt.Sprintf("cpu: attention sequence %d: block %d of its table is %d, reading its first %d positions; k holds %d values, v %d, %d a block",
					i, j, b, rows, kLen, vLen, blockSize*kvDim))
			}
		}
	}
}

// attention is Attention for one sequence over a cache of element type E,
// which widen turns into float32.
func attention[E float32 | uint16](s *Scalar, out, q []float32, k, v []E, sq *backend.SeqAttn, blockSize, nHeads, nKV, headDim int, widen func(E) float32) {
	group := nHeads / nKV
	kvDim := nKV * headDim
	scale := float32(1 / math.Sqrt(float64(headDim)))
	s.scores = grow(s.scores, sq.Pos+sq.N)
	for t := 0; t < sq.N; t++ {
		seq := sq.Pos + t + 1
		tok := sq.Token + t
		for h := 0; h < nHeads; h++ {
			qh := q[(tok*nHeads+h)*headDim:][:headDim]
			kvOff := (h / group) * headDim
			scores := s.scores[:seq]
			maxScore := float32(math.Inf(-1))
			for j := range seq {
				row := int(sq.Table[j/blockSize])*blockSize + j%blockSize
				kj := k[row*kvDim+kvOff:][:headDim]
				var dot float32
				for i, qi := range qh {
					dot += qi * widen(kj[i])
				}
				scores[j] = dot * scale
				maxScore = max(maxScore, scores[j])
			}
			var sum float32
			for j := range scores {
				scores[j] = float32(math.Exp(float64(scores[j] - maxScore)))
				sum += scores[j]
			}
			oh := out[(tok*nHeads+h)*headDim:][:headDim]
			clear(oh)
			for j, p := range scores {
				row := int(sq.Table[j/blockSize])*blockSize + j%blockSize
				vj := v[row*kvDim+kvOff:][:headDim]
				w := p / sum
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
