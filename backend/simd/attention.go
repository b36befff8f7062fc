package simd

import (
	"fmt"
	"math"

	"inferno/quant"
)

// attnChunk is the number of keys scored at once: the online softmax
// rescales its running sums once per chunk, and a chunk of keys and values
// stays in cache while the query heads of the group, for up to attnTokens
// query tokens, read it.
const (
	attnChunk  = 64
	attnTokens = 16
)

// attnScratch is the per-Ops state of attention for a block of query
// tokens and the query heads of one KV group: a chunk of scores and
// probabilities for one token's heads, and the running outputs, maxima and
// sums of every (token, head), and one token's corrections.
type attnScratch struct {
	s, p       []float32 // group x attnChunk
	o          []float32 // group x headDim
	m, l, corr []float32 // group
}

// kvElem is the element type of cached keys and values: float32, or
// uint16 half-precision bits.
type kvElem interface{ float32 | uint16 }

// attnKernels are the score and accumulation kernels for one element type.
// The score kernel also gets the values of its keys (stored alike), which
// the F16 kernels prefetch for the accumulation that follows.
type attnKernels[E kvElem] struct {
	scores func(s []float32, sstride int, q []float32, hd, nh int, k, v []E, kstride, nk int, scale float32)
	accum  func(o []float32, hd, nh int, p []float32, pstride int, v []E, vstride, nk int, corr []float32)
}

var (
	kernelsF32 = attnKernels[float32]{scoresF32, attnAccum}
	kernelsF16 = attnKernels[uint16]{attnScoresF16, attnAccumF16}
)

// scoresF32 is attnScores, which does not read the values.
func scoresF32(s []float32, sstride int, q []float32, hd, nh int, k, _ []float32, kstride, nk int, scale float32) {
	attnScores(s, sstride, q, hd, nh, k, kstride, nk, scale)
}

// Attention computes causal grouped-query attention for n query tokens at
// positions pos..pos+n-1, in one pass over the cached keys and values with
// an online softmax.
func (o *Ops) Attention(out, q, k, v []float32, n, pos, nHeads, nKV, headDim int) {
	if n <= 0 {
		return
	}
	checkAttention(out, q, k, v, n, pos, nHeads, nKV, headDim)
	attentionUnits(o, kernelsF32, out, q, k, v, n, pos, nHeads, nKV, headDim, 0, n*nKV)
}

// AttentionF16 is Attention with half-precision keys and values. The
// kernels widen them as they load them (F16C) and then compute as
// Attention does, so the result has the bits of Attention on the keys and
// values widened to float32.
func (o *Ops) AttentionF16(out, q []float32, k, v []uint16, n, pos, nHeads, nKV, headDim int) {
	if n <= 0 {
		return
	}
	checkAttention(out, q, k, v, n, pos, nHeads, nKV, headDim)
	attentionUnits(o, kernelsF16, out, q, k, v, n, pos, nHeads, nKV, headDim, 0, n*nKV)
}

// AttentionUnits computes part of Attention: units u0..u1-1 of the n*nKV
// units, unit u being query token u%n with the nHeads/nKV query heads that
// read KV head u/n. Each unit is computed the same way whatever the range,
// so disjoint ranges may be computed concurrently, each on its own Ops. The
// arguments are checked even for an empty range.
func (o *Ops) AttentionUnits(out, q, k, v []float32, n, pos, nHeads, nKV, headDim, u0, u1 int) {
	checkAttention(out, q, k, v, n, pos, nHeads, nKV, headDim)
	checkUnits(n, nKV, u0, u1)
	attentionUnits(o, kernelsF32, out, q, k, v, n, pos, nHeads, nKV, headDim, u0, u1)
}

// AttentionUnitsF16 computes part of AttentionF16, as AttentionUnits does
// of Attention.
func (o *Ops) AttentionUnitsF16(out, q []float32, k, v []uint16, n, pos, nHeads, nKV, headDim, u0, u1 int) {
	checkAttention(out, q, k, v, n, pos, nHeads, nKV, headDim)
	checkUnits(n, nKV, u0, u1)
	attentionUnits(o, kernelsF16, out, q, k, v, n, pos, nHeads, nKV, headDim, u0, u1)
}

func checkUnits(n, nKV, u0, u1 int) {
	if u0 < 0 || u1 > n*nKV || u0 > u1 {
		panic(fmt.Sprintf("simd: attention units %d..%d of %d", u0, u1, n*nKV))
	}
}

func checkAttention[E kvElem](out, q []float32, k, v []E, n, pos, nHeads, nKV, headDim int) {
	if nKV <= 0 || headDim <= 0 || pos < 0 || nHeads%nKV != 0 || nHeads < nKV {
		panic(fmt.Sprintf("simd: attention with %d heads, %d KV heads, head size %d at position %d", nHeads, nKV, headDim, pos))
	}
	qn, kvn := n*nHeads*headDim, (pos+n)*nKV*headDim
	if len(q) < qn || len(out) < qn || len(k) < kvn || len(v) < kvn {
		panic(fmt.Sprintf("simd: attention of %d tokens at %d: q %d, out %d, k %d, v %d values; want %d, %d, %d, %d",
			n, pos, len(q), len(out), len(k), len(v), qn, qn, kvn, kvn))
	}
}

func attentionUnits[E kvElem](o *Ops, kern attnKernels[E], out, q []float32, k, v []E, n, pos, nHeads, nKV, headDim, u0, u1 int) {
	for u := u0; u < u1; {
		// A block of up to attnTokens consecutive tokens of one KV head
		// shares each chunk of keys and values while it is in cache.
		g, t0 := u/n, u%n
		t1 := min(n, t0+attnTokens, t0+u1-u)
		attentionBlock(o, kern, out, q, k, v, pos, nHeads, nKV, headDim, g, t0, t1)
		u += t1 - t0
	}
}

// attentionBlock computes query tokens t0..t1-1 with the query heads of KV
// head g. Each token's values are computed as if it were alone.
func attentionBlock[E kvElem](o *Ops, kern attnKernels[E], out, q []float32, k, v []E, pos, nHeads, nKV, headDim, g, t0, t1 int) {
	group := nHeads / nKV
	kvDim := nKV * headDim
	scale := float32(1 / math.Sqrt(float64(headDim)))
	heads := (t1 - t0) * group // (token, head) pairs of the block
	s := &o.attn
	s.s = grow(s.s, group*attnChunk)
	s.p = grow(s.p, group*attnChunk)
	s.o = grow(s.o, heads*headDim)
	s.m = grow(s.m, heads)
	s.l = grow(s.l, heads)
	s.corr = grow(s.corr, group)
	negInf := float32(math.Inf(-1))
	for i := range heads {
		s.m[i], s.l[i] = negInf, 0
	}
	clear(s.o)
	kg, vg := k[g*headDim:], v[g*headDim:]
	for c0 := 0; c0 < pos+t1; c0 += attnChunk {
		for t := t0; t < t1; t++ {
			seq := pos + t + 1
			if c0 >= seq {
				continue
			}
			nk := min(attnChunk, seq-c0)
			kc := kg[c0*kvDim : (c0+nk-1)*kvDim+headDim]
			vc := vg[c0*kvDim : (c0+nk-1)*kvDim+headDim]
			qg := q[(t*nHeads+g*group)*headDim : (t*nHeads+(g+1)*group)*headDim]
			h0 := (t - t0) * group
			kern.scores(s.s, attnChunk, qg, headDim, group, kc, vc, kvDim, nk, scale)
			for i := range group {
				sc, p := s.s[i*attnChunk:i*attnChunk+nk], s.p[i*attnChunk:i*attnChunk+nk]
				mc := maxOf(sc)
				mOld := s.m[h0+i]
				mNew := max(mOld, mc)
				corr := expf(mOld - mNew) // 0 for the first chunk
				sum := expSub(p, sc, mNew)
				s.l[h0+i] = float32(s.l[h0+i]*corr) + sum
				s.m[h0+i], s.corr[i] = mNew, corr
			}
			kern.accum(s.o[h0*headDim:(h0+group)*headDim], headDim, group, s.p, attnChunk, vc, kvDim, nk, s.corr)
		}
	}
	for t := t0; t < t1; t++ {
		for i := range group {
			h := (t-t0)*group + i
			oh := out[(t*nHeads+g*group+i)*headDim:][:headDim]
			inv := 1 / s.l[h]
			for j, x := range s.o[h*headDim : (h+1)*headDim] {
				oh[j] = x * inv
			}
		}
	}
}

// maxOf returns the largest value of s, which is not empty. Unlike the
// builtin max it ignores NaNs after the first value and keeps the first of
// equal values (+0 or -0); a NaN score makes the outputs NaN regardless.
// A loop of max, with its NaN and signed-zero checks, took a fifth of the
// time of a decode step's attention.
func maxOf(s []float32) float32 {
	m := s[0]
	for _, x := range s[1:] {
		if x > m {
			m = x
		}
	}
	return m
}

// attnScoresGo computes s[i*sstride+j] = (q_i . k_j) * scale for the nh
// heads i, q_i = q[i*hd:][:hd], and the nk keys k_j = k[j*kstride:][:hd].
func attnScoresGo(s []float32, sstride int, q []float32, hd, nh int, k []float32, kstride, nk int, scale float32) {
	attnScoresWiden(s, sstride, q, hd, nh, k, kstride, nk, scale, identity)
}

// attnAccumGo computes o_i = o_i*corr[i] + sum over j of p[i*pstride+j] *
// v_j for the nh heads i, o_i = o[i*hd:][:hd], v_j = v[j*vstride:][:hd].
func attnAccumGo(o []float32, hd, nh int, p []float32, pstride int, v []float32, vstride, nk int, corr []float32) {
	attnAccumWiden(o, hd, nh, p, pstride, v, vstride, nk, corr, identity)
}

// attnScoresF16Go is attnScoresGo with half-precision keys, widened as
// they are read.
func attnScoresF16Go(s []float32, sstride int, q []float32, hd, nh int, k []uint16, kstride, nk int, scale float32) {
	attnScoresWiden(s, sstride, q, hd, nh, k, kstride, nk, scale, quant.F16ToF32)
}

// attnAccumF16Go is attnAccumGo with half-precision values, widened as
// they are read.
func attnAccumF16Go(o []float32, hd, nh int, p []float32, pstride int, v []uint16, vstride, nk int, corr []float32) {
	attnAccumWiden(o, hd, nh, p, pstride, v, vstride, nk, corr, quant.F16ToF32)
}

func identity(x float32) float32 { return x }

// attnScoresWiden is attnScoresGo over keys of element type E, which widen
// turns into float32. Each product is rounded to float32 before it is
// added (no fused multiply-add), as the assembly computes it.
func attnScoresWiden[E float32 | uint16](s []float32, sstride int, q []float32, hd, nh int, k []E, kstride, nk int, scale float32, widen func(E) float32) {
	for i := range nh {
		qi := q[i*hd : (i+1)*hd]
		for j := range nk {
			kj := k[j*kstride : j*kstride+hd]
			var dot float32
			for c, x := range qi {
				dot += float32(x * widen(kj[c]))
			}
			s[i*sstride+j] = dot * scale
		}
	}
}

// attnAccumWiden is attnAccumGo over values of element type E, which
// widen turns into float32.
func attnAccumWiden[E float32 | uint16](o []float32, hd, nh int, p []float32, pstride int, v []E, vstride, nk int, corr []float32, widen func(E) float32) {
	for i := range nh {
		oi := o[i*hd : (i+1)*hd]
		for c := range oi {
			oi[c] *= corr[i]
		}
		for j, pj := range p[i*pstride : i*pstride+nk] {
			vj := v[j*vstride : j*vstride+hd]
			for c, x := range vj {
				oi[c] += float32(pj * widen(x))
			}
		}
	}
}

// toF16Go converts src to half precision into dst[:len(src)].
func toF16Go(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = quant.F32ToF16(x)
	}
}
