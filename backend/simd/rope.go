package simd

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"inferno/arch"
)

// ropeTable holds cos and sin of the rotation angles for a list of
// positions, computed in float64 as the scalar backend does. The last list
// is kept, so that rotating queries and then keys of the same tokens
// computes it once.
type ropeTable struct {
	key      ropeKey
	freq     []float64 // arch.Rope.Freqs, headDim/2 values
	pos      []int32   // the positions cos and sin hold
	cos, sin []float32 // len(pos) * headDim/2 values
}

// ropeKey is what the frequencies depend on: the head size and the
// parameters of arch.Rope.Freqs (the per-pair factors by their storage).
type ropeKey struct {
	headDim                  int
	theta, factor, low, high float64
	scaling                  arch.Scaling
	orig                     int
	factors                  *float32
	nfactors                 int
}

// angles returns cos and sin for the positions pos, headDim/2 values each.
func (rt *ropeTable) angles(pos []int32, headDim int, r *arch.Rope) (cos, sin []float32) {
	half := headDim / 2
	key := ropeKey{headDim, r.Theta, r.Factor, r.LowFreqFactor, r.HighFreqFactor, r.Scaling, r.OrigContext,
		unsafe.SliceData(r.FreqFactors), len(r.FreqFactors)}
	if key != rt.key || len(rt.freq) != half {
		rt.key = key
		rt.freq = r.Freqs(headDim)
		rt.pos = rt.pos[:0]
	}
	n := len(pos)
	if !slices.Equal(rt.pos, pos) {
		rt.cos = grow(rt.cos, n*half)
		rt.sin = grow(rt.sin, n*half)
		for t, pt := range pos {
			p := float64(pt)
			for i, f := range rt.freq {
				s, c := math.Sincos(p * f)
				rt.cos[t*half+i], rt.sin[t*half+i] = float32(c), float32(s)
			}
		}
		rt.pos = append(rt.pos[:0], pos...)
	}
	return rt.cos[:n*half], rt.sin[:n*half]
}

// RoPE rotates, in place, len(pos) tokens of nHeads heads of headDim
// values, token t being at position pos[t], as r describes: pairs (i,
// i+headDim/2) with NeoX style (vectorized), (2i, 2i+1) with the normal
// style, pair i turning by pos*r.Freqs(headDim)[i]. A token's bits
// depend only on its values and position.
func (o *Ops) RoPE(x []float32, pos []int32, nHeads, headDim int, r *arch.Rope) {
	n := len(pos)
	if n == 0 || nHeads <= 0 || headDim < 2 {
		return
	}
	if headDim%2 != 0 || len(x) < n*nHeads*headDim {
		panic(fmt.Sprintf("simd: RoPE of %d tokens of %d heads of %d values over %d values", n, nHeads, headDim, len(x)))
	}
	half := headDim / 2
	cos, sin := o.rope.angles(pos, headDim, r)
	for t := range n {
		xt, ct, st := x[t*nHeads*headDim:(t+1)*nHeads*headDim], cos[t*half:(t+1)*half], sin[t*half:(t+1)*half]
		if r.Style == arch.RopeNormal {
			ropeAdjacent(xt, ct, st, nHeads)
		} else {
			rope(xt, ct, st, nHeads)
		}
	}
}

// ropeAdjacent rotates the nHeads heads of one token by the angles of cos,
// sin, pairs (2i, 2i+1) (normal RoPE): (a, b) becomes (a*c - b*s,
// a*s + b*c), each product rounded.
func ropeAdjacent(x, cos, sin []float32, nHeads int) {
	half := len(cos)
	for h := range nHeads {
		v := x[h*2*half : (h+1)*2*half]
		for i, c := range cos {
			s := sin[i]
			a, b := v[2*i], v[2*i+1]
			v[2*i] = float32(a*c) - float32(b*s)
			v[2*i+1] = float32(a*s) + float32(b*c)
		}
	}
}

// ropeGo rotates the nHeads heads of one token by the angles of cos, sin:
// (a, b) becomes (a*c - b*s, a*s + b*c), each product rounded.
func ropeGo(x, cos, sin []float32, nHeads int) {
	half := len(cos)
	for h := range nHeads {
		v := x[h*2*half : (h+1)*2*half]
		for i, c := range cos {
			s := sin[i]
			a, b := v[i], v[i+half]
			v[i] = float32(a*c) - float32(b*s)
			v[i+half] = float32(a*s) + float32(b*c)
		}
	}
}
