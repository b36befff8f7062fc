// Package gumbel is the reference of the GPU backends' sampling draw, in
// Go: the Gumbel-max over the tokens package sampling keeps, with noise
// that is a pure function of (seed, position, token id) through
// Philox4x32-10, as backend/cuda's kernels/sample.cuh and backend/vulkan's
// shaders/sample.glsl compute it. The backends' tests check their draws
// against Sample; a seed gives the same token on every backend given the
// same logits, up to float rounding of near ties.
package gumbel

import (
	"math"
	"math/bits"
	"slices"

	"inferno/sampling"
)

// Philox4x32 is Philox4x32-10 (Salmon et al., Random123) of counter c
// under the key (k0, k1).
func Philox4x32(c [4]uint32, k0, k1 uint32) [4]uint32 {
	for range 10 {
		hi0, lo0 := bits.Mul32(0xD2511F53, c[0])
		hi1, lo1 := bits.Mul32(0xCD9E8D57, c[2])
		c = [4]uint32{hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0}
		k0 += 0x9E3779B9
		k1 += 0xBB67AE85
	}
	return c
}

// Gumbel returns the noise of the 32-bit random word r in float64:
// -log(E), E = -log(u), u = (r + 1/2) / 2**32 (the kernels compute it in
// float32 with full relative precision at both ends of u).
func Gumbel(r uint32) float64 {
	var e float64
	if r < 0x80000000 {
		e = -math.Log((float64(r) + 0.5) * 0x1p-32)
	} else {
		e = -math.Log1p(-(float64(0xFFFFFFFF-r) + 0.5) * 0x1p-32)
	}
	return -math.Log(e)
}

// Noise is the noise of token id at position pos under seed: word id%4 of
// Philox4x32-10 of the counter (id/4, pos, 0, 0) keyed by the seed's low
// and high halves.
func Noise(seed uint64, pos int, id int) float64 {
	r := Philox4x32([4]uint32{uint32(id) >> 2, uint32(pos), 0, 0}, uint32(seed), uint32(seed>>32))
	return Gumbel(r[id&3])
}

// Sample draws as the GPU samplers do, in float64 for the noise: the
// Gumbel-max over the tokens kept (sampling.Distribution's support,
// weighted by exp((x - max)/T)); argmax parameters take the argmax. It
// returns -1 when nothing can be chosen.
func Sample(x []float32, p sampling.Params, patches []sampling.Patch, mask []uint64, seed uint64, pos int) int32 {
	d := sampling.Distribution(x, p, patches, mask)
	if p.Argmax() {
		for id, q := range d {
			if q == 1 {
				return int32(id)
			}
		}
	}
	y := slices.Clone(x)
	for _, pt := range patches {
		y[pt.ID] = pt.Apply(y[pt.ID], p)
	}
	invT := float64(float32(1 / float64(p.Temperature)))
	best, bs := int32(-1), math.Inf(-1)
	for id, q := range d {
		if q == 0 {
			continue
		}
		s := float64(y[id])*invT + Noise(seed, pos, id)
		if s > bs {
			best, bs = int32(id), s
		}
	}
	return best
}
