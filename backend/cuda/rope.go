package cuda

// The attention options beyond Qwen3's that the kernels run: RoPE's
// per-pair frequencies (Llama 3's scaling), the normal (adjacent pairs)
// RoPE style, Q/K/V biases and attention without QK-norm.
//
// The frequencies live in the rope table (ropeTable). The style costs the
// kernels nothing: a model with normal RoPE has the rows of each Q and K
// head reordered at upload (ropeRows) so that its pairs (2i, 2i+1) become
// NeoX's (i, i+HeadDim/2), which the kernels rotate. Attention reads
// queries and keys only through their dot products, which a common
// reordering of their dimensions leaves unchanged, and values are not
// reordered; so the logits are those of the model as written. The biases
// are added where the kernels read the QKV product's heads (norm_rope_warp
// for queries and keys, the cache append for values), and the RMSNorm of
// QK-norm is skipped when a layer has no gains (a null pointer).

import (
	"fmt"
	"math"

	"inferno/arch"
	"inferno/backend"
)

// ropeTable returns (cos, sin) of p * freqs[i] for every position p <
// maxLen and pair i (freqs: arch.Rope.Freqs, one a pair), computed as the
// CPU reference computes them (float64, then rounded to float32).
func ropeTable(freqs []float64, maxLen int) []float32 {
	half := len(freqs)
	tab := make([]float32, 2*half*maxLen)
	for p := 0; p < maxLen; p++ {
		for i, f := range freqs {
			s, co := math.Sincos(float64(p) * f)
			tab[2*(p*half+i)] = float32(co)
			tab[2*(p*half+i)+1] = float32(s)
		}
	}
	return tab
}

// neoxIndex returns where row (or value) j of a head of hd with normal
// RoPE goes so that the kernels' NeoX rotation turns it as its own style
// does: pair i's two values 2i and 2i+1 go to i and i+hd/2.
func neoxIndex(j, hd int) int { return j%2*(hd/2) + j/2 }

// ropeRows returns w (the Q or K matrix of a layer, heads of hd rows) as
// the kernels want it for style: itself for NeoX RoPE, a copy with the
// rows of each head reordered (neoxIndex) for normal RoPE.
func ropeRows(w *backend.Weight, style arch.RopeStyle, hd int) (*backend.Weight, error) {
	if style == arch.RopeNeoX || w == nil {
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
		dst := h*hd + neoxIndex(j, hd)
		copy(out.Data[dst*rb:(dst+1)*rb], w.Row(r))
	}
	return &out, nil
}

// ropeVec returns v (a bias or QK-norm gain of heads of hd values) in the
// order ropeRows gives the rows of its matrix; nil stays nil.
func ropeVec(v []float32, style arch.RopeStyle, hd int) []float32 {
	if style == arch.RopeNeoX || v == nil {
		return v
	}
	out := make([]float32, len(v))
	for k, x := range v {
		out[k/hd*hd+neoxIndex(k%hd, hd)] = x
	}
	return out
}

// uploadAttnVectors uploads layer l's optional attention vectors (p names
// the layer): the QK-norm gains, or none (0: the kernels skip the norm);
// and the Q, K and V biases as one vector in the QKV product's row order,
// or none (0). Both in the row order of ropeRows.
func (r *Model) uploadAttnVectors(p string, l *arch.Layer, g *gpuLayer) error {
	c := &r.cfg
	st, hd := c.Rope.Style, c.HeadDim
	var err error
	if c.QKNorm {
		if g.qNorm, err = r.uploadF32(p+arch.RoleQNorm.String(), ropeVec(l.Vector(arch.RoleQNorm), st, hd)); err != nil {
			return err
		}
		if g.kNorm, err = r.uploadF32(p+arch.RoleKNorm.String(), ropeVec(l.Vector(arch.RoleKNorm), st, hd)); err != nil {
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
	bias = append(append(append(bias, ropeVec(qb, st, hd)...), ropeVec(kb, st, hd)...), vb...)
	g.bias, err = r.uploadF32(p+"attn_qkv.bias", bias)
	return err
}
