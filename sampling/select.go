package sampling

import (
	"math"
	"slices"
)

var (
	posInf = float32(math.Inf(1))
	negInf = float32(math.Inf(-1))
)

// cutoff is the log-weight, relative to the most likely token, below which
// a token is treated as impossible: e**-30 is about 9.4e-14, and the
// 151,936 tokens of Qwen3's vocabulary below it weigh less than 1.5e-8
// together, under float32's rounding of the total.
const cutoff = -30

// expSteps is the number of entries of expTab per unit of log-weight.
const expSteps = 256

// expTab holds e**(-k/expSteps) for the log-weights in [cutoff, 0], and
// zeros up to a power of two, so that indexing it needs no bounds check.
// It is computed by repeated multiplication in float64 rather than with
// math.Exp, whose last bit may differ between platforms.
var expTab = func() (t [expTabLen]float32) {
	const step = 0.9961013694701174900628646619451690442864 // e**(-1/256)
	v := 1.0
	for k := range -cutoff*expSteps + 1 {
		t[k] = float32(v)
		v *= step
	}
	return t
}()

const expTabLen = 8192 // > -cutoff*expSteps

// expNeg returns e**d for d in [cutoff, 0], within 2e-7 relative to the
// true value, and k = floor(-d*expSteps), which does not increase as d
// grows.
func expNeg(d float32) (e float32, k int32) { return expScaled(d * -expSteps) }

// expScaled returns expNeg(-y/expSteps) for y in [0, -cutoff*expSteps],
// the log-weight scaled. Every step is exact or rounded explicitly, so no
// platform fuses it into multiply-adds and the result is the same
// everywhere.
func expScaled(y float32) (e float32, k int32) {
	k = int32(y)
	f := y - float32(k) // exact, in [0, 1)
	// e**(-f/expSteps), to within 1e-8: 1 - f/256 + f*f/131072.
	p := float32(float32(float32(f*(1.0/(2*expSteps*expSteps)))-1.0/expSteps)*f) + 1
	return expTab[k&(expTabLen-1)] * p, k
}

// The buckets top_p sorts tokens into by log-weight, most likely first:
// expNeg's k >> bucketShift, each 1/32 wide. Their arrays are bucketsLen
// long, a power of two, so that indexing them needs no bounds check.
const (
	bucketShift = 3
	nBuckets    = -cutoff*expSteps>>bucketShift + 1
	bucketsLen  = 1024 // >= nBuckets
)

// heapMaxK is the largest top_k selected with a heap; larger ones sort the
// tokens that are not negligible.
const heapMaxK = 1024

// maxOf returns the largest value of x that is not NaN, -Inf if none.
func maxOf(x []float32) float32 {
	m0, m1, m2, m3 := negInf, negInf, negInf, negInf
	for len(x) >= 4 {
		if x[0] > m0 {
			m0 = x[0]
		}
		if x[1] > m1 {
			m1 = x[1]
		}
		if x[2] > m2 {
			m2 = x[2]
		}
		if x[3] > m3 {
			m3 = x[3]
		}
		x = x[4:]
	}
	for _, v := range x {
		if v > m0 {
			m0 = v
		}
	}
	return max(m0, m1, m2, m3)
}

// weights sets w[i] to the weight of x[i], exp((x[i] - m) * invT), where
// the log-weight is at least cut (>= cutoff), and to 0 elsewhere, and
// returns the sum of the weights. The sum runs in four lanes, in a fixed
// order.
func weights(x, w []float32, m, invT, cut float32) float64 {
	// The scaled log-weight y = (x - m) * -expSteps * invT equals
	// -expSteps times (x - m) * invT exactly.
	c := invT * -expSteps
	yCut := cut * -expSteps
	w = w[:len(x)]
	var z0, z1, z2, z3 float64
	for len(x) >= 4 && len(w) >= 4 {
		var e0, e1, e2, e3 float32
		if y := (x[0] - m) * c; y <= yCut {
			e0, _ = expScaled(y)
		}
		if y := (x[1] - m) * c; y <= yCut {
			e1, _ = expScaled(y)
		}
		if y := (x[2] - m) * c; y <= yCut {
			e2, _ = expScaled(y)
		}
		if y := (x[3] - m) * c; y <= yCut {
			e3, _ = expScaled(y)
		}
		w[0], w[1], w[2], w[3] = e0, e1, e2, e3
		z0 += float64(e0)
		z1 += float64(e1)
		z2 += float64(e2)
		z3 += float64(e3)
		x, w = x[4:], w[4:]
	}
	for i, v := range x {
		var e float32
		if y := (v - m) * c; y <= yCut {
			e, _ = expScaled(y)
		}
		w[i] = e
		z0 += float64(e)
	}
	return (z0 + z1) + (z2 + z3)
}

// sum returns the sum of w, in four lanes.
func sum(w []float32) float64 {
	var z0, z1, z2, z3 float64
	i := 0
	for ; i+4 <= len(w); i += 4 {
		z0 += float64(w[i])
		z1 += float64(w[i+1])
		z2 += float64(w[i+2])
		z3 += float64(w[i+3])
	}
	for ; i < len(w); i++ {
		z0 += float64(w[i])
	}
	return (z0 + z1) + (z2 + z3)
}

// byRank orders candidates by logit, largest first, ties by position (the
// lower id first).
func byRank(a, b cand) int {
	switch {
	case a.x > b.x:
		return -1
	case a.x < b.x:
		return 1
	}
	return int(a.pos - b.pos)
}

// worse reports whether a ranks after b.
func worse(a, b cand) bool { return a.x < b.x || a.x == b.x && a.pos > b.pos }

// selectTop returns the k best-ranked positions of x in h's memory, sorted
// by rank. NaN and -Inf are left out, so it may return fewer.
func selectTop(x []float32, k int, h []cand) []cand {
	h = h[:0]
	i := 0
	for ; i < len(x) && len(h) < k; i++ {
		if v := x[i]; v > negInf {
			h = append(h, cand{pos: int32(i), x: v})
		}
	}
	if i < len(x) {
		// A min-heap by rank: h[0] ranks last. Positions grow, so a later
		// value ranks before h[0] only if it is larger.
		for j := len(h)/2 - 1; j >= 0; j-- {
			siftDown(h, j)
		}
		for ; i+4 <= len(x); i += 4 {
			if t := h[0].x; x[i] > t || x[i+1] > t || x[i+2] > t || x[i+3] > t {
				for j := i; j < i+4; j++ {
					if v := x[j]; v > h[0].x {
						h[0] = cand{pos: int32(j), x: v}
						siftDown(h, 0)
					}
				}
			}
		}
		for ; i < len(x); i++ {
			if v := x[i]; v > h[0].x {
				h[0] = cand{pos: int32(i), x: v}
				siftDown(h, 0)
			}
		}
	}
	slices.SortFunc(h, byRank)
	return h
}

func siftDown(h []cand, i int) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && worse(h[c+1], h[c]) {
			c++
		}
		if !worse(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// keepTopK returns the candidates kept from the top k of x, with their
// weights, sorted by rank; nil when the choice falls back to Argmax. The
// result depends only on the top k's logits and ids, so that Sample and
// SampleCandidates given just those agree.
func (s *Sampler) keepTopK(x []float32, k int) []cand {
	var l []cand
	if k <= heapMaxK {
		l = selectTop(x, k, s.list)
	} else {
		m := s.max(x)
		if !(m > negInf && m < posInf) {
			return nil
		}
		l = s.list[:0]
		for i, v := range x {
			if (v-m)*s.invT >= cutoff {
				l = append(l, cand{pos: int32(i), x: v})
			}
		}
		slices.SortFunc(l, byRank)
		l = l[:min(k, len(l))]
	}
	if len(l) == 0 || l[0].x == posInf {
		return nil
	}
	m := l[0].x
	var z float64
	nMin := -1
	for i := range l {
		d := (l[i].x - m) * s.invT
		if !(d >= cutoff) {
			l = l[:i]
			break
		}
		if nMin < 0 && d < s.lnMinP {
			nMin = i
		}
		l[i].w, _ = expNeg(d)
		z += float64(l[i].w)
	}
	n := len(l)
	if s.topP > 0 {
		target := float64(s.topP) * z
		var cum float64
		for i := range l {
			if cum += float64(l[i].w); cum >= target {
				n = i + 1
				break
			}
		}
	}
	if nMin >= 0 && nMin < n {
		n = nMin
	}
	return l[:n]
}

// drawList draws from the candidates l, in their order, with the random
// number u in [0, 1).
func drawList(l []cand, u float64) int {
	var z float64
	for i := range l {
		z += float64(l[i].w)
	}
	u *= z
	var acc float64
	for i := range l {
		if acc += float64(l[i].w); acc > u {
			return int(l[i].pos)
		}
	}
	return int(l[len(l)-1].pos) // u rounded up to z
}

// keepAll returns the candidates kept from all of x, without top_k, with
// their weights; nil when the choice falls back to Argmax. With dense set,
// the weights are in s.w by position instead, 0 for the tokens dropped, and
// their sum in s.wsum.
func (s *Sampler) keepAll(x []float32) (l []cand, dense bool) {
	m := s.max(x)
	if !(m > negInf && m < posInf) {
		return nil, false
	}
	invT := s.invT
	if s.topP == 0 {
		// Only min_p, if anything, cuts: a threshold.
		s.wsum = weights(x, s.w, m, invT, max(cutoff, s.lnMinP))
		if s.lnMinP <= cutoff {
			s.zAll = s.wsum
		}
		return nil, true
	}

	// top_p: the weights, with their buckets of log-weight and the sums
	// by bucket. Only the bucket where the running sum crosses top_p needs
	// sorting.
	w, kb := s.w[:len(x)], s.kb[:len(x)]
	z := s.bucketWeights(x, w, kb, m, invT)
	s.zAll = z
	target := float64(s.topP) * z
	var above float64 // the weight of the buckets before bt
	bt := -1
	for b, sum := range s.bsum {
		if sum == 0 {
			continue // empty: a token's weight is at least e**cutoff
		}
		if above+sum >= target {
			bt = b
			break
		}
		above += sum
	}
	lnMinP := s.lnMinP
	if bt < 0 || lnMinP >= cutoff && bucketOf(lnMinP) < bt {
		// Rounding kept the sum below top_p, or min_p cuts before the
		// bucket where top_p does: only min_p cuts.
		l = s.list[:0]
		cut := max(cutoff, lnMinP)
		bm := uint16(bucketOf(cut))
		for i, b := range kb {
			if b <= bm && (x[i]-m)*invT >= cut {
				l = append(l, cand{pos: int32(i), x: x[i], w: w[i]})
			}
		}
		return l, false
	}
	// The buckets before bt are kept whole, in position order; the tokens
	// of bucket bt that min_p keeps follow them, by rank, as far as top_p
	// reaches. They are gathered from the far end of the buffer.
	buf := s.list[:cap(s.list)]
	ia, ib := 0, len(buf)
	for i, b := range kb {
		switch {
		case int(b) > bt:
		case int(b) < bt:
			buf[ia] = cand{pos: int32(i), x: x[i], w: w[i]}
			ia++
		case (x[i]-m)*invT >= lnMinP:
			ib--
			buf[ib] = cand{pos: int32(i), x: x[i], w: w[i]}
		}
	}
	nAbove := ia
	l = buf[:nAbove+copy(buf[nAbove:], buf[ib:])]
	edge := l[nAbove:]
	slices.SortFunc(edge, byRank)
	cum := above
	n := nAbove
	for i := range edge {
		n++
		if cum += float64(edge[i].w); cum >= target {
			break
		}
	}
	return l[:n], false
}

// bucketWeights sets w[i] to the weight of x[i] and kb[i] to its bucket
// (nBuckets for a negligible token, whose weight is 0), sums the weights
// by bucket into s.bsum, and returns the sum of the weights.
func (s *Sampler) bucketWeights(x, w []float32, kb []uint16, m, invT float32) float64 {
	clear(s.bsum[:])
	c := invT * -expSteps
	const yCut = cutoff * -expSteps
	w, kb = w[:len(x)], kb[:len(x)]
	var z0, z1, z2, z3 float64
	for len(x) >= 4 && len(w) >= 4 && len(kb) >= 4 {
		var e0, e1, e2, e3 float32
		b0, b1, b2, b3 := uint16(nBuckets), uint16(nBuckets), uint16(nBuckets), uint16(nBuckets)
		if y := (x[0] - m) * c; y <= yCut {
			var k int32
			e0, k = expScaled(y)
			b0 = uint16(k >> bucketShift)
			s.bsum[b0&(bucketsLen-1)] += float64(e0)
		}
		if y := (x[1] - m) * c; y <= yCut {
			var k int32
			e1, k = expScaled(y)
			b1 = uint16(k >> bucketShift)
			s.bsum[b1&(bucketsLen-1)] += float64(e1)
		}
		if y := (x[2] - m) * c; y <= yCut {
			var k int32
			e2, k = expScaled(y)
			b2 = uint16(k >> bucketShift)
			s.bsum[b2&(bucketsLen-1)] += float64(e2)
		}
		if y := (x[3] - m) * c; y <= yCut {
			var k int32
			e3, k = expScaled(y)
			b3 = uint16(k >> bucketShift)
			s.bsum[b3&(bucketsLen-1)] += float64(e3)
		}
		w[0], w[1], w[2], w[3] = e0, e1, e2, e3
		kb[0], kb[1], kb[2], kb[3] = b0, b1, b2, b3
		z0 += float64(e0)
		z1 += float64(e1)
		z2 += float64(e2)
		z3 += float64(e3)
		x, w, kb = x[4:], w[4:], kb[4:]
	}
	for i, v := range x {
		var e float32
		b := uint16(nBuckets)
		if y := (v - m) * c; y <= yCut {
			var k int32
			e, k = expScaled(y)
			b = uint16(k >> bucketShift)
			s.bsum[b&(bucketsLen-1)] += float64(e)
		}
		w[i], kb[i] = e, b
		z0 += float64(e)
	}
	return (z0 + z1) + (z2 + z3)
}

// bucketOf returns the bucket of the log-weight d in [cutoff, 0].
func bucketOf(d float32) int {
	_, k := expNeg(d)
	return int(k >> bucketShift)
}

// drawDense draws a position from the weights w, which sum to z, with the
// random number u in [0, 1); -1 if no weight is positive.
func drawDense(w []float32, z, u float64) int {
	u *= z
	var acc float64
	i := 0
	// Skip whole blocks while their sum keeps below u.
	const block = 64
	for ; i+block <= len(w); i += block {
		b := sum(w[i : i+block])
		if acc+b > u {
			break
		}
		acc += b
	}
	for ; i < len(w); i++ {
		if acc += float64(w[i]); acc > u {
			return i
		}
	}
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] > 0 {
			return i // u rounded up to z
		}
	}
	return -1
}
