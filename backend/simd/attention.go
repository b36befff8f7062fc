package simd

import (
	"fmt"
	"math"

	"inferno/backend"
	"inferno/numfmt"
)

// attnChunk is the number of keys scored together: the online softmax
// rescales its running sums once per chunk of positions 0..63, 64..127, ...
// of a sequence, whatever blocks of the cache hold them, and a chunk of
// keys and values stays in cache while the query heads of the group, for
// up to attnTokens query tokens, read it.
const (
	attnChunk  = 64
	attnTokens = 16
	// attnPrefetchRows is how many keys and values of a pass over the
	// cache attentionBlock prefetches before the pass: as many as the
	// kernels prefetch ahead.
	attnPrefetchRows = 8
)

// attnScratch is the per-Ops state of attention for a block of query
// tokens and the query heads of one KV group: a chunk of scores and
// probabilities for one token's heads, the running outputs, maxima and
// sums of every (token, head), one token's corrections, and where the
// chunk's keys and values lie in the cache when they are not in one run
// of consecutive rows.
type attnScratch struct {
	s, p []float32         // group x attnChunk
	o    []float32         // (token, head) pairs x headDim
	m, l []float32         // (token, head) pairs
	corr []float32         // group
	ones []float32         // group ones: the correction of a chunk's later runs
	runs [attnChunk]kvSpan // a chunk's runs after its first
}

// kvSpan is a run of a chunk's positions in consecutive rows of a block:
// n positions from the chunk's j-th, a head's values stored from value at
// on.
type kvSpan struct{ j, at, n int }

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

// Attention computes causal grouped-query attention for the query tokens
// of seqs over a paged cache, in one pass over each sequence's keys and
// values with an online softmax. Keys are scored in chunks of attnChunk
// positions counted from the sequence's start, whatever blocks hold them
// (with a window, from the chunk of the window's first position, the
// positions before it left out), so a token's output has the same bits
// for every block size and block table, and whatever the other sequences
// of the call. A head's sink (opt.Sinks) starts its running maximum and
// sum, as a key scored before the first.
func (o *Ops) Attention(out, q, k, v []float32, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt backend.AttnOpts) {
	units := checkAttention(out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, &opt)
	attentionUnits(o, kernelsF32, out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, &opt, 0, units)
}

// AttentionF16 is Attention with half-precision keys and values. The
// kernels widen them as they load them (F16C) and then compute as
// Attention does, so the result has the bits of Attention on the keys and
// values widened to float32.
func (o *Ops) AttentionF16(out, q []float32, k, v []uint16, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt backend.AttnOpts) {
	units := checkAttention(out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, &opt)
	attentionUnits(o, kernelsF16, out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, &opt, 0, units)
}

// AttentionUnits computes part of Attention: units u0..u1-1 of the
// batch's units. Sequence i has seqs[i].N*nKV units, numbered after those
// of sequences 0..i-1; its unit u is the sequence's query token u%N with
// the nHeads/nKV query heads that read KV head u/N. Each unit is computed
// the same way whatever the range, so disjoint ranges may be computed
// concurrently, each on its own Ops. The arguments are checked, all
// sequences included, even for an empty range.
func (o *Ops) AttentionUnits(out, q, k, v []float32, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt *backend.AttnOpts, u0, u1 int) {
	units := checkAttention(out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, opt)
	checkUnits(units, u0, u1)
	attentionUnits(o, kernelsF32, out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, opt, u0, u1)
}

// AttentionUnitsF16 computes part of AttentionF16, as AttentionUnits does
// of Attention.
func (o *Ops) AttentionUnitsF16(out, q []float32, k, v []uint16, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt *backend.AttnOpts, u0, u1 int) {
	units := checkAttention(out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, opt)
	checkUnits(units, u0, u1)
	attentionUnits(o, kernelsF16, out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, opt, u0, u1)
}

func checkUnits(units, u0, u1 int) {
	if u0 < 0 || u1 > units || u0 > u1 {
		panic(fmt.Sprintf("simd: attention units %d..%d of %d", u0, u1, units))
	}
}

// checkAttention panics unless every value the call reads or writes is
// inside q, out, k and v and opt is valid, and returns the number of
// units. It takes time in the number of sequences and of blocks they read
// (with a window, from the block of the first query's window on), and
// never allocates unless it panics.
func checkAttention[E kvElem](out, q []float32, k, v []E, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt *backend.AttnOpts) (units int) {
	if nKV <= 0 || headDim <= 0 || nHeads%nKV != 0 || nHeads < nKV || blockSize <= 0 {
		panic(fmt.Sprintf("simd: attention with %d heads, %d KV heads, head size %d, blocks of %d positions", nHeads, nKV, headDim, blockSize))
	}
	if opt.Window < 0 || opt.Sinks != nil && len(opt.Sinks) < nHeads || !(opt.Scale >= 0) {
		panic(fmt.Sprintf("simd: attention with a window of %d, %d sinks for %d heads, scale %v", opt.Window, len(opt.Sinks), nHeads, opt.Scale))
	}
	qDim, kvDim := nHeads*headDim, nKV*headDim
	tokens := min(len(q), len(out)) / qDim
	kvLen := min(len(k), len(v))
	for i := range seqs {
		sq := &seqs[i]
		if sq.N == 0 {
			continue
		}
		if sq.N < 0 || sq.Token < 0 || sq.Pos < 0 || sq.Token > tokens-sq.N {
			panic(fmt.Sprintf("simd: attention sequence %d: %d tokens from %d at position %d; q holds %d tokens (%d values), out %d (%d values)",
				i, sq.N, sq.Token, sq.Pos, len(q)/qDim, len(q), len(out)/qDim, len(out)))
		}
		end := sq.Pos + sq.N // positions read
		nb := (end + blockSize - 1) / blockSize
		if len(sq.Table) < nb {
			panic(fmt.Sprintf("simd: attention sequence %d reads positions 0..%d: %d blocks of %d, its table has %d",
				i, end-1, nb, blockSize, len(sq.Table)))
		}
		for j := windowStart(sq.Pos, opt.Window) / blockSize; j < nb; j++ {
			b := sq.Table[j]
			rows := min(blockSize, end-j*blockSize) // positions read in the block
			// The block's last head ends its reads.
			if b < 0 || backend.KVIndex(int(b)*blockSize+rows-1, nKV-1, blockSize, nKV, headDim)+headDim > kvLen {
				panic(fmt.Sprintf("simd: attention sequence %d: block %d of its table is %d, reading its first %d positions; k holds %d values, v %d, %d a block",
					i, j, b, rows, len(k), len(v), blockSize*kvDim))
			}
		}
		units += sq.N * nKV
	}
	return units
}

// attentionUnits computes units u0..u1-1 of the batch; see AttentionUnits.
func attentionUnits[E kvElem](o *Ops, kern attnKernels[E], out, q []float32, k, v []E, seqs []backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt *backend.AttnOpts, u0, u1 int) {
	base := 0 // the first unit of sequence i
	for i := range seqs {
		if base >= u1 {
			return
		}
		sq := &seqs[i]
		n := sq.N
		if n <= 0 {
			continue
		}
		b0, b1 := max(u0-base, 0), min(u1-base, n*nKV)
		base += n * nKV
		if n == 1 {
			// A decode step's token: its KV heads b0..b1-1 one after
			// the other.
			for g := b0; g < b1; g++ {
				next := g + 1
				if next == b1 {
					next = -1
				}
				attentionBlock(o, kern, out, q, k, v, sq, blockSize, nHeads, nKV, headDim, opt, g, next, 0, 1)
			}
			continue
		}
		for u := b0; u < b1; {
			// A block of up to attnTokens consecutive tokens of one KV
			// head shares each chunk of keys and values while it is in
			// cache.
			g, t0 := u/n, u%n
			t1 := min(n, t0+attnTokens, t0+b1-u)
			attentionBlock(o, kern, out, q, k, v, sq, blockSize, nHeads, nKV, headDim, opt, g, -1, t0, t1)
			u += t1 - t0
		}
	}
}

// kvRun returns where positions p.. of a sequence with block table table
// lie in the cache: the row of position p in the storage, and the number
// of positions from p on, at most limit, in its block, whose rows of a
// head follow each other (backend.KVIndex).
func kvRun(table []int32, blockSize, p, limit int) (row, n int) {
	if p+limit <= blockSize { // in the first block: no division
		return int(table[0])*blockSize + p, limit
	}
	b, r := p/blockSize, p%blockSize
	return int(table[b])*blockSize + r, min(blockSize-r, limit)
}

// windowStart returns the first position a query at position p attends
// to with a window of window positions (0: all).
func windowStart(p, window int) int {
	if window <= 0 {
		return 0
	}
	return max(0, p-window+1)
}

// attentionBlock computes query tokens t0..t1-1 of sequence sq with the
// query heads of KV head g, chunk by chunk of positions, each chunk for
// every token in turn; next is the KV head whose pass over the cache
// follows on this Ops (-1: none), whose first rows it prefetches. Each
// (token, head)'s values are computed as if it were alone, in one
// contiguous block, whatever the other tokens of the block: chunk by
// chunk of positions, each chunk's keys (those in the token's window)
// scored run by run of consecutive rows into the chunk's row of scores,
// then the chunk's softmax, then its values accumulated run by run, the
// first run rescaling the outputs by the chunk's correction and the
// others by 1, which leaves them unchanged (o*1 is o, in the assembly as
// in Go). The kernels give each score, and each output for keys in order,
// the same bits whether the keys come in one call or in several. A
// head's running maximum and sum start at its sink and 1 (e^(sink-sink))
// with sinks, at -inf and 0 without.
//
// A head's keys (and values) of a block are consecutive in the cache
// (backend.KVIndex), so the pass reads them as one stream per block,
// which the hardware prefetchers follow at the full bandwidth.
func attentionBlock[E kvElem](o *Ops, kern attnKernels[E], out, q []float32, k, v []E, sq *backend.SeqAttn, blockSize, nHeads, nKV, headDim int, opt *backend.AttnOpts, g, next, t0, t1 int) {
	group := nHeads / nKV
	scale := opt.Scale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(headDim)))
	}
	nt := t1 - t0
	heads := nt * group // (token, head) pairs of the block
	s := &o.attn
	s.s = grow(s.s, group*attnChunk)
	s.p = grow(s.p, group*attnChunk)
	s.o = grow(s.o, heads*headDim)
	s.m = grow(s.m, heads)
	s.l = grow(s.l, heads)
	s.corr = grow(s.corr, group)
	s.ones = grow(s.ones, group)
	negInf := float32(math.Inf(-1))
	for i := range heads {
		if opt.Sinks != nil {
			s.m[i], s.l[i] = opt.Sinks[g*group+i%group], 1
		} else {
			s.m[i], s.l[i] = negInf, 0
		}
	}
	for i := range s.ones {
		s.ones[i] = 1
	}
	clear(s.o)
	table := sq.Table
	// The first chunk any token of the block reads: t0's window starts
	// first.
	first := windowStart(sq.Pos+t0, opt.Window) / attnChunk * attnChunk
	for c0 := first; c0 < sq.Pos+t1; c0 += attnChunk {
		for t := t0; t < t1; t++ {
			seq := sq.Pos + t + 1
			lo := windowStart(seq-1, opt.Window)
			if c0 >= seq || c0+attnChunk <= lo {
				continue
			}
			nk := min(attnChunk, seq-c0)
			j0 := max(lo-c0, 0) // the chunk's first position in the window
			tok := sq.Token + t
			qg := q[(tok*nHeads+g*group)*headDim : (tok*nHeads+(g+1)*group)*headDim]
			h0 := (t - t0) * group
			// The chunk's first run, then any others.
			row0, n0 := kvRun(table, blockSize, c0+j0, nk-j0)
			at := backend.KVIndex(row0, g, blockSize, nKV, headDim)
			vc0 := v[at : at+n0*headDim]
			kern.scores(s.s[j0:], attnChunk, qg, headDim, group, k[at:at+n0*headDim], vc0, headDim, n0, scale)
			nr := 0
			for j := j0 + n0; j < nk; nr++ {
				row, n := kvRun(table, blockSize, c0+j, nk-j)
				at := backend.KVIndex(row, g, blockSize, nKV, headDim)
				s.runs[nr] = kvSpan{j, at, n}
				kern.scores(s.s[j:], attnChunk, qg, headDim, group, k[at:at+n*headDim], v[at:at+n*headDim], headDim, n, scale)
				j += n
			}
			if t == t1-1 {
				if c0+attnChunk < sq.Pos+t1 {
					prefetchPass(k, v, sq, blockSize, nKV, headDim, opt, g, t0, c0+attnChunk)
				} else if next >= 0 {
					prefetchPass(k, v, sq, blockSize, nKV, headDim, opt, next, t0, first)
				}
			}
			for i := range group {
				sc, p := s.s[i*attnChunk+j0:i*attnChunk+nk], s.p[i*attnChunk+j0:i*attnChunk+nk]
				mc := maxOf(sc)
				mOld := s.m[h0+i]
				mNew := max(mOld, mc)
				corr := expf(mOld - mNew) // 0 for the first chunk without a sink
				sum := expSub(p, sc, mNew)
				s.l[h0+i] = float32(s.l[h0+i]*corr) + sum
				s.m[h0+i], s.corr[i] = mNew, corr
			}
			og := s.o[h0*headDim : (h0+group)*headDim]
			kern.accum(og, headDim, group, s.p[j0:], attnChunk, vc0, headDim, n0, s.corr)
			for _, r := range s.runs[:nr] {
				kern.accum(og, headDim, group, s.p[r.j:], attnChunk, v[r.at:r.at+r.n*headDim], headDim, r.n, s.ones)
			}
		}
	}
	for t := t0; t < t1; t++ {
		tok := sq.Token + t
		for i := range group {
			h := (t-t0)*group + i
			oh := out[(tok*nHeads+g*group+i)*headDim:][:headDim]
			inv := 1 / s.l[h]
			for j, x := range s.o[h*headDim : (h+1)*headDim] {
				oh[j] = x * inv
			}
		}
	}
}

// prefetchPass prefetches the first keys and values of KV head g's pass
// over chunk c0 for token t0, the pass that follows the one in progress.
// The kernels prefetch a pass's keys and values a few rows ahead of those
// they compute with, so without this the first rows of each pass would
// wait on memory.
func prefetchPass[E kvElem](k, v []E, sq *backend.SeqAttn, blockSize, nKV, headDim int, opt *backend.AttnOpts, g, t0, c0 int) {
	seq := sq.Pos + t0 + 1 // positions token t0 reads
	p := max(c0, windowStart(seq-1, opt.Window))
	if p >= min(seq, c0+attnChunk) {
		return
	}
	row, n := kvRun(sq.Table, blockSize, p, min(attnPrefetchRows, seq-p))
	at := backend.KVIndex(row, g, blockSize, nKV, headDim)
	prefetchRows(k[at:], v[at:], headDim, headDim, n)
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
	attnScoresWiden(s, sstride, q, hd, nh, k, kstride, nk, scale, numfmt.F16ToF32)
}

// attnAccumF16Go is attnAccumGo with half-precision values, widened as
// they are read.
func attnAccumF16Go(o []float32, hd, nh int, p []float32, pstride int, v []uint16, vstride, nk int, corr []float32) {
	attnAccumWiden(o, hd, nh, p, pstride, v, vstride, nk, corr, numfmt.F16ToF32)
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
		dst[i] = numfmt.F32ToF16(x)
	}
}
