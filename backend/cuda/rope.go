package cuda

// The attention options beyond Qwen3's that the kernels run without
// kernels of their own: RoPE's per-pair frequencies (Llama 3's, linear
// and YaRN scaling) and YaRN's factor on cos and sin, the local layers'
// RoPE of their own, the normal (adjacent pairs) RoPE style, partial RoPE,
// Q/K/V biases and attention without QK-norm.
//
// The frequencies and the factor live in the rope tables (ropeTable: one
// for the global layers, one for the local layers with a RoPE of their
// own). The style and partial RoPE cost the kernels nothing: a model
// with normal RoPE, or RoPE on part of each head, has the rows of each Q
// and K head reordered at upload (ropeRows) so that its rotated pairs
// become NeoX's (i, i+HeadDim/2), which the kernels rotate, and its other
// values the other pairs, which the table turns by the identity.
// Attention reads queries and keys only through their dot products, which
// a common reordering of their dimensions leaves unchanged, and values
// are not reordered; so the logits are those of the model as written. The biases
// are added where the kernels read the QKV product's heads (norm_rope_warp
// for queries and keys, the cache append for values), and the RMSNorm of
// QK-norm is skipped when a layer has no gains (a null pointer).

import (
	"fmt"
	"math"

	"inferno/arch"
	"inferno/backend"
)

// ropeTable returns (cos, sin) of p * freqs[i], times mscale, for every
// position p < maxLen and pair i < half (HeadDim/2), computed as the CPU
// reference computes them (float64, then rounded to float32); the pairs
// past len(freqs), which partial RoPE leaves alone, get (1, 0): the
// kernels' rotation then keeps their values exactly.
func ropeTable(freqs []float64, mscale float64, half, maxLen int) []float32 {
	tab := make([]float32, 2*half*maxLen)
	for p := 0; p < maxLen; p++ {
		row := tab[2*p*half : 2*(p+1)*half]
		for i := range half {
			if i >= len(freqs) {
				row[2*i] = 1
				continue
			}
			s, co := math.Sincos(float64(p) * freqs[i])
			row[2*i], row[2*i+1] = float32(co*mscale), float32(s*mscale)
		}
	}
	return tab
}

// layerRopeTable returns the rope table of the layers rotated by rope (a
// Config's Rope or LocalRope): the frequencies of its scaling over
// c.RotaryDims values a head (arch.Rope.Freq), cos and sin times its
// Mscale (YaRN's attention factor).
func layerRopeTable(c *arch.Config, rope *arch.Rope, maxLen int) []float32 {
	return ropeTable(rope.Freqs(c.RotaryDims()), rope.Mscale(), c.HeadDim/2, maxLen)
}

// ropeIndex returns where value j of a head of hd values goes so that the
// kernels' rotation (NeoX's pairs (i, i+hd/2) over the whole head, the
// pairs from rot/2 on turned by the identity: ropeTable) turns it as RoPE
// of style over the first rot values does: the rotated pairs to the first
// rot/2 pairs' places (NeoX's (i, i+rot/2), normal's (2i, 2i+1) to (i,
// i+hd/2)), the values past rot, in order, to the other pairs' places.
func ropeIndex(j, hd, rot int, style arch.RopeStyle) int {
	h, r := hd/2, rot/2
	switch {
	case j >= h+r: // the unrotated values past the second half's rotated ones stay
		return j
	case j >= rot: // the others fill the first half's unrotated pairs
		return j - r
	case style == arch.RopeNormal:
		return j%2*h + j/2
	case j < r:
		return j
	}
	return h + j - r
}

// ropeIdentity reports whether ropeIndex moves nothing: NeoX RoPE over
// whole heads.
func ropeIdentity(style arch.RopeStyle, hd, rot int) bool { return style == arch.RopeNeoX && rot == hd }

// ropeRows returns w (the Q or K matrix of a layer, heads of hd rows) as
// the kernels want it for RoPE of style over the first rot values of a
// head: itself for NeoX RoPE over whole heads, else a copy with the rows
// of each head reordered (ropeIndex).
func ropeRows(w *backend.Weight, style arch.RopeStyle, hd, rot int) (*backend.Weight, error) {
	if ropeIdentity(style, hd, rot) || w == nil {
		return w, nil
	}
	if w.Rows%hd != 0 {
		return nil, fmt.Errorf("cuda: %s: %d rows are not whole heads of %d", w.Name, w.Rows, hd)
	}
	rb := w.RowBytes()
	if len(w.Data) < w.Rows*rb {
		return nil, fmt.Errorf("cuda: %s: %d bytes for %d rows of %d", w.Name, len(w.Data), w.Rows, rb)
	}
	out := *w
	out.Data = make([]byte, w.Rows*rb)
	for r := range w.Rows {
		h, j := r/hd, r%hd
		dst := h*hd + ropeIndex(j, hd, rot, style)
		copy(out.Data[dst*rb:(dst+1)*rb], w.Row(r))
	}
	return &out, nil
}

// ropeVec returns v (a bias or QK-norm gain of heads of hd values) in the
// order ropeRows gives the rows of its matrix; nil stays nil.
func ropeVec(v []float32, style arch.RopeStyle, hd, rot int) []float32 {
	if ropeIdentity(style, hd, rot) || v == nil {
		return v
	}
	out := make([]float32, len(v))
	for k, x := range v {
		out[k/hd*hd+ropeIndex(k%hd, hd, rot, style)] = x
	}
	return out
}

// uploadAttnVectors uploads layer l's optional attention vectors (p names
// the layer): the QK-norm gains, or none (0: the kernels skip the norm);
// and the Q, K and V biases as one vector in the QKV product's row order,
// or none (0). Both in the row order of ropeRows.
func (r *Model) uploadAttnVectors(p string, l *arch.Layer, g *gpuLayer) error {
	c := &r.cfg
	st, hd, rot := c.Rope.Style, c.HeadDim, c.RotaryDims()
	var err error
	if c.QKNorm {
		if g.qNorm, err = r.uploadF32(p+arch.RoleQNorm.String(), ropeVec(l.Vector(arch.RoleQNorm), st, hd, rot)); err != nil {
			return err
		}
		if g.kNorm, err = r.uploadF32(p+arch.RoleKNorm.String(), ropeVec(l.Vector(arch.RoleKNorm), st, hd, rot)); err != nil {
			return err
		}
	}
	if !c.Bias {
		return nil
	}
	qb, kb, vb := l.Vector(arch.RoleQBias), l.Vector(arch.RoleKBias), l.Vector(arch.RoleVBias)
	if len(qb) != c.QDim() || len(kb) != c.KVDim() || len(vb) != c.KVDim() {
		return fmt.Errorf("cuda: %sattn biases hold %d, %d and %d values, want %d, %d and %d", p, len(qb), len(kb), len(vb), c.QDim(), c.KVDim(), c.KVDim())
	}
	bias := make([]float32, 0, len(qb)+len(kb)+len(vb))
	bias = append(append(append(bias, ropeVec(qb, st, hd, rot)...), ropeVec(kb, st, hd, rot)...), vb...)
	g.bias, err = r.uploadF32(p+"attn_qkv.bias", bias)
	return err
}
