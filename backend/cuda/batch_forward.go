package cuda

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"inferno/batch"
)

// Inputs of a pass ("meta": one int32 array, page-locked on the host and
// copied to the device): a header of 4 ints (the ints the first kernel of
// a decode graph copies, 0, the step number, 0), then per token its id,
// position and table offset (an index into the same array, where the
// sequence's block table was copied), and for other passes the decode
// token list, the prefill tiles (first token, count) and the output rows.
// The tables follow, each cut to the blocks its run reaches.
const metaStep = 2 // the header's step number

// matmul enqueues Y = W * rmsnorm(x)*gain (or W * x when gain is 0) for n
// tokens (rows of x, K = w.cols apart): for fewer than mmMin tokens
// quant_actv and mmv_q8x (or quant_act and mmv_q8), else quant_act and
// mm_q8. Epilogues as the kernels' (kind).
func (br *BatchRunner) matmul(l *launcher, kind string, w *gpuWeight, x, gain, y uint64, ldy, nout, n int) {
	c := &br.cfg
	mmv := n < br.bt.mmMin
	xl := mmv && br.bt.xl
	if xl {
		l.launch("quant_actv", [3]uint32{uint32(n)}, 256, 0, x, i32(w.cols), i32(w.cols), gain, f32(c.Eps), br.pxq, br.psx, i32(br.npad))
	} else {
		l.launch("quant_act", [3]uint32{uint32(n)}, 256, 0, x, i32(w.cols), i32(w.cols), gain, f32(c.Eps), br.phi, br.plo, br.psx, i32(br.npad))
	}
	xh, xlo := br.phi, br.plo
	if xl {
		xh, xlo = br.pxq, br.pxq
	}
	args := []uint64{w.q, w.dcol, i32(w.rows), i32(w.mpad), i32(w.cols), xh, xlo, br.psx, i32(n), i32(br.npad), y, i32(ldy), i32(nout)}
	if !mmv {
		l.launch("mm_q8_"+kind, [3]uint32{uint32(w.mpad / 64), uint32((n + 63) / 64)}, 128, 0, args...)
		return
	}
	nt := 1
	for nt*8 < n && nt < br.bt.nt {
		nt *= 2
	}
	name := "mmv_q8"
	if xl {
		name = "mmv_q8x"
	}
	// 16-row tiles, one a block (8 warps splitting K).
	l.launch(fmt.Sprintf("%s_%s_n%d_k8", name, kind, nt), [3]uint32{uint32(w.mpad / 16)}, 256, 0, args...)
}

// attnDecode enqueues the paged decode attention of layer i for n decode
// tokens: fused (src: the QKV projection; queries and the new key are
// normalized and rotated and the key and value appended here) or not
// (src: rotated queries; toks lists the tokens).
func (br *BatchRunner) attnDecode(l *launcher, i int, fused bool, n int, src, toks, pos, toff uint64) {
	c := &br.cfg
	w := &br.base.layers[i]
	name := "pattn_dec"
	if fused {
		name = "pattn_decf"
	}
	ns := br.nsplit(n)
	scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
	l.launch(fmt.Sprintf("%s_h%d_g%d", name, c.HeadDim, c.Heads/c.KVHeads), [3]uint32{uint32(c.KVHeads), uint32(ns), uint32(n)}, 256, uint32(attnFDSmem(1, 3, 256)),
		src, i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, f32(c.Eps), br.base.rope, toks, pos, toff, br.dmeta, i32(br.bs), i32(br.bsh),
		br.kc[i], br.vc[i], f32(scale), i32(ns), i32(br.bt.minchunk), br.pm, br.pl, br.pacc, br.counter, br.patt)
}

// decodeOps enqueues the decode step of a bucket of B tokens (its inputs
// copied to the device before the replay, or read from page-locked memory
// by the first kernel when zc allows): every layer with
// the fused paged attention, then the output head and the argmax of every
// token, the ids and then the step number written to page-locked memory.
func (br *BatchRunner) decodeOps(l *launcher, B int) {
	c := &br.cfg
	base := br.base
	t := base.tune
	mv := B == 1 && br.bt.mvf1
	if br.bt.zc > 0 {
		l.launch("bembed_step", [3]uint32{uint32(B)}, 256, 0, base.embed.q, base.embed.drow, i32(c.Hidden), br.hmetaD, br.dmeta, i32(4), br.px)
	} else { // the host copied the inputs
		l.launch("embed_q8", [3]uint32{uint32(B)}, 256, 0, base.embed.q, base.embed.drow, i32(c.Hidden), br.dmeta+4*4, br.px)
	}
	dpos := br.dmeta + uint64(4*(4+B))
	dtoff := br.dmeta + uint64(4*(4+2*B))
	for i := range base.layers {
		w := &base.layers[i]
		if mv {
			base.mv(l, "store", t.qkv, &w.qkv, br.px, w.attnNorm, br.pqkv, w.qkv.rows, 0, 0)
		} else {
			br.matmul(l, "store", &w.qkv, br.px, w.attnNorm, br.pqkv, base.qkvRows, 0, B)
		}
		br.attnDecode(l, i, true, B, br.pqkv, 0, dpos, dtoff)
		if mv {
			base.mv(l, "add", t.o, &w.o, br.patt, 0, br.px, c.Hidden, 0, 0)
			base.mv(l, "swiglu", t.gu, &w.gateUp, br.px, w.ffnNorm, br.pact, c.FFN, 0, 0)
			base.mv(l, "add", t.down, &w.down, br.pact, 0, br.px, c.Hidden, 0, 0)
		} else {
			br.matmul(l, "add", &w.o, br.patt, 0, br.px, c.Hidden, 0, B)
			br.matmul(l, "swiglu", &w.gateUp, br.px, w.ffnNorm, br.pact, c.FFN, c.FFN, B)
			br.matmul(l, "add", &w.down, br.pact, 0, br.px, c.Hidden, 0, B)
		}
	}
	if mv {
		base.mv(l, "argmax", t.head, &base.out, br.px, base.outNorm, br.logits, c.Vocab, br.pval, br.pidx)
		l.launch("argmax_final", [3]uint32{1}, 1024, 0, br.pval, br.pidx, i32(base.headBlocks), br.dres, br.hresD, br.dmeta)
	} else {
		br.matmul(l, "store", &base.out, br.px, base.outNorm, br.logits, c.Vocab, 0, B)
		l.launch("argmax_rows", [3]uint32{uint32(B)}, 1024, 0, br.logits, i32(c.Vocab), i32(B), br.dres, br.hresD, br.dmeta+4*metaStep, br.acnt)
	}
}

// capture records the decode step of bucket bi into a graph.
func (br *BatchRunner) capture(bi int) error {
	g := br.dev
	if err := g.beginCapture(); err != nil {
		return err
	}
	l := &launcher{g: g}
	br.decodeOps(l, batchBuckets[bi])
	graph, exec, err := g.endCapture()
	if l.err != nil {
		if err == nil {
			g.destroyGraph(graph, exec)
		}
		return fmt.Errorf("capturing the batch decode graph of %d: %w", batchBuckets[bi], l.err)
	}
	if err != nil {
		return fmt.Errorf("capturing the batch decode graph of %d: %w", batchBuckets[bi], err)
	}
	br.graphs[bi] = [2]uintptr{graph, exec}
	br.stats.GraphCaptures++
	return nil
}

// decodeStep runs a batch of decode tokens (one per sequence, every token
// an output) by replaying the graph of its bucket, padded with dummy
// tokens at position 0 of the scratch block.
func (br *BatchRunner) decodeStep(b *batch.Batch) error {
	g := br.dev
	n := b.Len()
	bi := 0
	for batchBuckets[bi] < n {
		bi++
	}
	B := batchBuckets[bi]
	m := hostInts(br.hmeta, br.metaCap)
	tab0 := 4 + 3*B
	k := tab0 + 1
	m[tab0] = br.scratch
	for t := range n {
		need := int(b.Pos[t])/br.bs + 1
		m[4+t], m[4+B+t], m[4+2*B+t] = b.Tokens[t], b.Pos[t], int32(k)
		copy(m[k:k+need], b.Tables[b.Seq[t]][:need])
		k += need
	}
	for t := n; t < B; t++ {
		m[4+t], m[4+B+t], m[4+2*B+t] = 0, 0, int32(tab0)
	}
	total := roundUp(k, 4)
	br.step++
	m[1], m[metaStep], m[3] = 0, br.step, 0
	if total <= br.bt.zc {
		m[0] = int32(total)
	} else {
		m[0] = 0
		if err := g.d.check("cuMemcpyHtoDAsync (batch inputs)", g.d.call(g.d.cuMemcpyHtoDAsync, uintptr(br.dmeta), br.hmeta, uintptr(4*total), g.stream)); err != nil {
			return err
		}
	}
	if br.graphs[bi][1] == 0 {
		if err := br.capture(bi); err != nil {
			return err
		}
	}
	if err := g.launchGraph(br.graphs[bi][1]); err != nil {
		return err
	}
	br.stats.GraphSteps++
	br.lastB = B
	return br.wait(B, br.step)
}

// wait polls the step number the last kernel writes to page-locked memory
// beside the ids (index idx); past 50 ms it synchronizes with the stream
// instead, which also reports a failed kernel.
func (br *BatchRunner) wait(idx int, step int32) error {
	flag := (*int32)(hostPtr(br.hres + uintptr(4*idx)))
	start := time.Now()
	br.pending = true
	for i := 1; ; i++ {
		if atomic.LoadInt32(flag) == step {
			return nil
		}
		if i%4096 == 0 && time.Since(start) > 50*time.Millisecond {
			if err := br.settle(); err != nil {
				return err
			}
			if atomic.LoadInt32(flag) == step {
				return nil
			}
			return fmt.Errorf("cuda: batch step %d finished without writing its result", step)
		}
	}
}

// general runs any batch with kernels launched one by one: QKV for every
// token, queries rotated and keys and values stored into the pool for
// every token first, then the decode tokens' attention (split-K) and the
// prompt runs' (tiled, tensor cores), and the output head for the output
// rows only.
func (br *BatchRunner) general(b *batch.Batch) error {
	c := &br.cfg
	g := br.dev
	base := br.base
	n := b.Len()
	group := c.Heads / c.KVHeads
	qt := 64 / group // tokens per prefill tile
	ndec, ntiles := 0, 0
	for _, r := range br.runs {
		if r.N == 1 {
			ndec++
		} else {
			ntiles += (r.N + qt - 1) / qt
		}
	}
	nout := len(b.Outputs)
	m := hostInts(br.hmeta, br.metaCap)
	tokOff, posOff, toffOff, decOff := 4, 4+n, 4+2*n, 4+3*n
	tileOff := decOff + ndec
	outOff := tileOff + 2*ntiles
	k := outOff + nout
	copy(m[tokOff:], b.Tokens)
	copy(m[posOff:], b.Pos)
	copy(m[outOff:], b.Outputs)
	nd, nt := 0, 0
	for _, r := range br.runs {
		need := (r.Pos+r.N-1)/br.bs + 1
		copy(m[k:k+need], b.Tables[r.Seq][:need])
		for t := r.Start; t < r.Start+r.N; t++ {
			m[toffOff+t] = int32(k)
		}
		k += need
		if r.N == 1 {
			m[decOff+nd] = int32(r.Start)
			nd++
			continue
		}
		for s := 0; s < r.N; s += qt {
			m[tileOff+2*nt], m[tileOff+2*nt+1] = int32(r.Start+s), int32(min(qt, r.N-s))
			nt++
		}
	}
	total := roundUp(k, 4)
	br.step++
	m[0], m[1], m[metaStep], m[3] = 0, 0, br.step, 0
	if err := br.settle(); err != nil {
		return err
	}
	if err := g.d.check("cuMemcpyHtoDAsync (batch inputs)", g.d.call(g.d.cuMemcpyHtoDAsync, uintptr(br.dmeta), br.hmeta, uintptr(4*total), g.stream)); err != nil {
		return err
	}
	at := func(off int) uint64 { return br.dmeta + uint64(4*off) }
	l := &launcher{g: g}
	scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
	l.launch("embed_q8", [3]uint32{uint32(n)}, 256, 0, base.embed.q, base.embed.drow, i32(c.Hidden), at(tokOff), br.px)
	for i := range base.layers {
		w := &base.layers[i]
		br.matmul(l, "store", &w.qkv, br.px, w.attnNorm, br.pqkv, base.qkvRows, 0, n)
		l.launch(fmt.Sprintf("qk_rope_paged_h%d", c.HeadDim), [3]uint32{uint32(n)}, 128, 0,
			br.pqkv, at(posOff), at(toffOff), br.dmeta, i32(br.bs), i32(br.bsh), i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, f32(c.Eps),
			base.rope, br.pq, br.kc[i], br.vc[i])
		if ndec > 0 {
			br.attnDecode(l, i, false, ndec, br.pq, at(decOff), at(posOff), at(toffOff))
		}
		if ntiles > 0 {
			l.launch(fmt.Sprintf("pattn_pre_h%d_g%d", c.HeadDim, group), [3]uint32{uint32(ntiles), uint32(c.KVHeads)}, 128, uint32(pattnPreSmem(c.HeadDim)),
				br.pq, at(tileOff), at(posOff), at(toffOff), br.dmeta, i32(br.bs), i32(br.bsh), i32(c.Heads), i32(c.KVHeads), br.kc[i], br.vc[i], f32(scale), br.patt)
		}
		br.matmul(l, "add", &w.o, br.patt, 0, br.px, c.Hidden, 0, n)
		br.matmul(l, "swiglu", &w.gateUp, br.px, w.ffnNorm, br.pact, c.FFN, c.FFN, n)
		br.matmul(l, "add", &w.down, br.pact, 0, br.px, c.Hidden, 0, n)
	}
	if nout > 0 {
		l.launch("gather_rows", [3]uint32{uint32(nout)}, 256, 0, br.px, i32(c.Hidden), at(outOff), br.pxo)
		br.matmul(l, "store", &base.out, br.pxo, base.outNorm, br.logits, c.Vocab, 0, nout)
		l.launch("argmax_rows", [3]uint32{uint32(nout)}, 1024, 0, br.logits, i32(c.Vocab), i32(nout), br.dres, br.hresD, br.dmeta+4*metaStep, br.acnt)
	}
	if l.err != nil {
		return l.err
	}
	br.stats.Steps++
	return g.sync("batch forward")
}
