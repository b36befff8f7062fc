package simd

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"inferno/arch"
)

// ropeTables keeps the tables of the last two RoPEs used, so that a model
// whose layers alternate two RoPEs (Gemma 3's local and global layers)
// computes each table once a pass.
type ropeTables struct {
	t    [2]ropeTable
	last int // the table used last
}

// angles returns cos and sin for the positions pos, rotDims/2 values
// each, times r.Mscale(), from the table of r's parameters, replacing the
// one used less recently if neither has them.
func (rts *ropeTables) angles(pos []int32, rotDims int, r *arch.Rope) (cos, sin []float32) {
	factors := r.PairFactors()
	key := ropeKey{rotDims, r.Theta, r.Factor, r.LowFreqFactor, r.HighFreqFactor, r.BetaFast, r.BetaSlow, r.AttnFactor, r.NoTruncate,
		r.Scaling, r.OrigContext, unsafe.SliceData(factors), len(factors)}
	i := rts.last
	if rts.t[i].key != key {
		i = 1 - i
	}
	rts.last = i
	return rts.t[i].angles(pos, key, r)
}

// ropeTable holds cos and sin of the rotation angles for a list of
// positions, computed in float64 as the scalar backend does. The last list
// is kept, so that rotating queries and then keys of the same tokens
// computes it once.
type ropeTable struct {
	key      ropeKey
	freq     []float64 // arch.Rope.Freqs, rotDims/2 values
	mscale   float64   // arch.Rope.Mscale
	pos      []int32   // the positions cos and sin hold
	cos, sin []float32 // len(pos) * rotDims/2 values
}

// ropeKey is what the frequencies depend on: the rotated values of a head
// and the parameters of arch.Rope.Freqs and Mscale (the per-pair factors
// in use, arch.Rope.PairFactors, by their storage).
type ropeKey struct {
	rotDims                  int
	theta, factor, low, high float64
	betaFast, betaSlow       float64
	attnFactor               float64
	noTruncate               bool
	scaling                  arch.Scaling
	orig                     int
	factors                  *float32
	nfactors                 int
}

// angles returns cos and sin for the positions pos, key.rotDims/2 values
// each, times r.Mscale(), for r of parameters key.
func (rt *ropeTable) angles(pos []int32, key ropeKey, r *arch.Rope) (cos, sin []float32) {
	half := key.rotDims / 2
	if key != rt.key || len(rt.freq) != half {
		rt.key = key
		if cap(rt.freq) < half {
			rt.freq = make([]float64, half)
		}
		rt.freq = rt.freq[:half]
		for i := range rt.freq {
			rt.freq[i] = r.Freq(i, key.rotDims)
		}
		rt.mscale = r.Mscale()
		rt.pos = rt.pos[:0]
	}
	n := len(pos)
	if !slices.Equal(rt.pos, pos) {
		rt.cos = grow(rt.cos, n*half)
		rt.sin = grow(rt.sin, n*half)
		m := rt.mscale
		for t, pt := range pos {
			p := float64(pt)
			for i, f := range rt.freq {
				s, c := math.Sincos(p * f)
				rt.cos[t*half+i], rt.sin[t*half+i] = float32(c*m), float32(s*m)
			}
		}
		rt.pos = append(rt.pos[:0], pos...)
	}
	return rt.cos[:n*half], rt.sin[:n*half]
}

// RoPE rotates, in place, len(pos) tokens of nHeads heads of headDim
// values, token t being at position pos[t], as r describes: the first
// rotDims values of each head, in pairs (i, i+rotDims/2) with NeoX style
// (vectorized), (2i, 2i+1) with the normal style, pair i turning by
// pos*r.Freqs(rotDims)[i], cos and sin times r.Mscale(). A token's bits
// depend only on its values and position.
func (o *Ops) RoPE(x []float32, pos []int32, nHeads, headDim, rotDims int, r *arch.Rope) {
	n := len(pos)
	if n == 0 || nHeads <= 0 {
		return
	}
	if rotDims < 2 || rotDims%2 != 0 || rotDims > headDim || len(x) < n*nHeads*headDim {
		panic(fmt.Sprintf("simd: RoPE on %d of %d values of %d heads of %d tokens over %d values", rotDims, headDim, nHeads, n, len(x)))
	}
	half := rotDims / 2
	cos, sin := o.rope.angles(pos, rotDims, r)
	for t := range n {
		xt, ct, st := x[t*nHeads*headDim:(t+1)*nHeads*headDim], cos[t*half:(t+1)*half], sin[t*half:(t+1)*half]
		switch {
		case r.Style == arch.RopeNormal:
			ropeAdjacent(xt, ct, st, nHeads, headDim)
		case rotDims == headDim:
			rope(xt, ct, st, nHeads)
		default:
			for h := range nHeads {
				rope(xt[h*headDim:h*headDim+rotDims], ct, st, 1)
			}
		}
	}
}

// ropeAdjacent rotates the first 2*len(cos) values of each of the nHeads
// heads of headDim values of one token by the angles of cos, sin, pairs
// (2i, 2i+1) (normal RoPE): (a, b) becomes (a*c - b*s, a*s + b*c), each
// product rounded.
func ropeAdjacent(x, cos, sin []float32, nHeads, headDim int) {
	half := len(cos)
	for h := range nHeads {
		v := x[h*headDim : h*headDim+2*half]
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
