package sampling

import "slices"

// Distribution returns the probability with which a Sampler under p
// chooses each token from logits (one per vocabulary entry), the patches
// (Sampler.Patches; nil for none) and the allowed-token mask (bit id%64 of
// word id/64; nil allows every token): the exact categorical distribution,
// in float64, against which samplers that draw in other ways (a GPU's) are
// tested. It applies the definitions of the package documentation
// directly, with a full sort: the patches, the mask (disallowed tokens are
// never chosen), then the argmax for greedy parameters, else the
// temperature, top_k, the cutoff, top_p and min_p. It returns nil when
// nothing can be chosen (every allowed logit NaN or -Inf).
func Distribution(logits []float32, p Params, patches []Patch, mask []uint64) []float64 {
	x := slices.Clone(logits)
	for _, pt := range patches {
		x[pt.ID] = pt.Apply(x[pt.ID], p)
	}
	allowed := func(i int) bool { return mask == nil || mask[i>>6]>>(i&63)&1 != 0 }
	var l []cand
	for i, v := range x {
		if allowed(i) && v > negInf {
			l = append(l, cand{pos: int32(i), x: v})
		}
	}
	if len(l) == 0 {
		return nil
	}
	slices.SortFunc(l, byRank)
	out := make([]float64, len(logits))
	if p.Argmax() || l[0].x == posInf {
		out[l[0].pos] = 1
		return out
	}
	if p.TopK > 0 {
		l = l[:min(p.TopK, len(l))]
	}
	invT := float32(1 / float64(p.Temperature))
	m := l[0].x
	var z float64
	for i := range l {
		d := (l[i].x - m) * invT
		if !(d >= cutoff) {
			l = l[:i]
			break
		}
		l[i].w, _ = expNeg(d)
		z += float64(l[i].w)
	}
	n := len(l)
	if tp := p.topP(); tp > 0 {
		var cum float64
		for i := range l {
			if cum += float64(l[i].w); cum >= float64(tp)*z {
				n = i + 1
				break
			}
		}
	}
	lnMinP := p.lnMinP()
	for i := range n {
		if (l[i].x-m)*invT < lnMinP {
			n = i
			break
		}
	}
	l = l[:n]
	z = 0
	for _, c := range l {
		z += float64(c.w)
	}
	for _, c := range l {
		out[c.pos] = float64(c.w) / z
	}
	return out
}
