package cuda

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"inferno/arch"
	"inferno/batch"
)

// matmul enqueues Y = W * rmsnorm(x)*gain (or W * x when gain is 0) for n
// tokens (rows of x, K = w.cols apart): for fewer than mmMin tokens
// quant_actv and mmv_q8x (or quant_act and mmv_q8), else qact_h and
// mm_q8h (quant_act and mm_q8 below tune.mmh8 tokens). Epilogues as the
// kernels' (kind). Other block types, and Q8_0 in q8h models from mmMin
// tokens on or above mvnMax up to tune.mmq8 (mmq), take the Model's
// product.
func (br *BatchRunner) matmul(l *launcher, kind string, w *gpuWeight, x, gain, y uint64, ldy, nout, n int) {
	br.matmulFrom(l, kind, w, x, gain, y, ldy, nout, n, br.bt.mmMin)
}

// head enqueues the output head's product (the logits) for n tokens: as
// matmul, but Q8_0's own tiles (mm_q8) from bt.headMM tokens on (the
// head's rows fill the GPU with 64-token tiles at fewer tokens than the
// layers' matrices do).
func (br *BatchRunner) head(l *launcher, x, logits uint64, n int) {
	br.matmulFrom(l, "store", &br.base.out, x, br.base.outNorm, logits, br.cfg.Vocab, 0, n, br.bt.headMM)
}

// matmulFrom is matmul with mm_q8h or mm_q8 (or the Model's product, for
// q8h models) from mmFrom tokens on.
func (br *BatchRunner) matmulFrom(l *launcher, kind string, w *gpuWeight, x, gain, y uint64, ldy, nout, n, mmFrom int) {
	if !br.ownMM(w, n, mmFrom) {
		// Other block types (quant.go): qact_h into the interleaved
		// activations' buffer (2*npad*K bytes: the f16 activations fit) and
		// mmh; Q8_0 runs of a mixed matrix through qact_h and mm_q8h.
		br.base.product(l, kind, w, x, gain, y, ldy, nout, n, actBufs{hi: br.phi, lo: br.plo, sx: br.psx, xh: br.pxq, hs: br.psx, ws: br.mws, cnt: br.mcnt, npad: br.npad})
		return
	}
	c := &br.cfg
	mmv := n < mmFrom
	if !mmv && br.base.mmQ8f(n) {
		br.base.qactH(l, x, gain, w.cols, n, br.pxq, br.psx)
		br.base.mmQ8h(l, kind, w, br.pxq, br.psx, y, ldy, nout, n)
		return
	}
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
		br.base.mmQ8(l, kind, n, w.mpad, args...)
		return
	}
	nt, ny := br.skinnyPasses(n, w.mpad/16)
	name := "mmv_q8"
	if xl {
		name = "mmv_q8x"
	}
	// 16-row tiles, one a block (8 warps splitting K), times ny.
	l.launch(fmt.Sprintf("%s_%s_n%d_k8", name, kind, nt), [3]uint32{uint32(w.mpad / 16), uint32(ny)}, 256, 0, args...)
}

// ownMM reports whether matmulFrom multiplies w for n tokens (mm_q8h or
// mm_q8 from mmFrom tokens on) with Q8_0's own kernels.
func (br *BatchRunner) ownMM(w *gpuWeight, n, mmFrom int) bool {
	return w.allQ8() && !(br.base.tune.q8h && (n >= mmFrom || n > mvnMax && n <= br.base.tune.mmq8))
}

// skinnyPasses returns mmv_q8's 8-token n-tiles a pass (nt) and the blocks
// a row tile (ny, grid y) for n tokens over tiles row tiles: the fewest
// passes of at most bt.nt n-tiles; then, while the row tiles leave SMs
// idle (a small model's O and down: 64 tiles), passes of half as many
// n-tiles over twice the blocks, up to bt.ny blocks a row tile. Each block
// of a row tile reads its weights (the later ones from L2).
func (br *BatchRunner) skinnyPasses(n, tiles int) (nt, ny int) {
	nt = 1
	for nt*8 < n && nt < br.bt.nt {
		nt *= 2
	}
	ny = 1
	for nt > 1 && ny*2 <= br.bt.ny && tiles*ny < br.dev.SMs {
		nt /= 2
		ny *= 2
	}
	return nt, min(ny, (n+nt*8-1)/(nt*8))
}

// attnDecode enqueues the paged decode attention of layer i for n decode
// tokens: fused (src: the QKV projection; queries and the new key are
// normalized and rotated and the key and value appended here) or not
// (src: rotated queries; toks lists the tokens). With cluster (fused, a
// decode graph of variant 1): the cluster kernel (pattn_decc; its extra
// argument: cmax), launched with programmatic dependent launch when pdl
// allows (not when profiling: events between kernels): its table lookups
// and first K/V copies overlap the QKV product (mvf_q8 lets dependents
// start at once).
//
// A model with sliding windows or sinks takes the extended kernels
// (options.go), the layer's window and sinks their last arguments.
func (br *BatchRunner) attnDecode(l *launcher, i int, fused, cluster bool, n int, src, toks, pos, toff uint64) {
	c := &br.cfg
	w := &br.base.layers[i]
	name := "pattn_dec"
	if fused {
		name = "pattn_decf"
	}
	ns, minchunk := br.nsplit(n), br.bt.minchunk
	var extra []uint64
	if cl, cns := br.clusterFor(n); fused && cluster && cl {
		if br.bt.c1 {
			// The variant runs only while every sequence holds at most
			// 8*cmax positions (variantFor): one cluster takes each, the
			// blocks of any further cluster would exit at once.
			cns = 8
		}
		name, ns, minchunk = "pattn_decc", cns, br.bt.cmin
		extra = []uint64{i32(br.bt.cmax)}
	}
	pdl := extra != nil && br.bt.pdl && l.events == nil && !l.sync
	args := append([]uint64{src, i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, f32(c.Eps), w.rope, toks, pos, toff, br.dmeta, i32(br.bs), i32(br.bsh),
		br.kc[i], br.vc[i], f32(c.AttentionScale()), i32(ns), i32(minchunk), br.pm, br.pl, br.pacc, br.counter, br.patt, w.bias}, extra...)
	args = append(args, br.attnExt(w)...)
	sh := br.base.shape
	l.launchEx(pdl, br.base.attnKernel(name), [3]uint32{uint32(sh.dblocks), uint32(ns), uint32(n)}, 256, uint32(attnFDSmem(1, 3, 256)), args...)
}

// decodeOps enqueues the decode step of a bucket of B tokens in slot
// slot, variant v (see variantFor; its inputs copied to the device before
// the replay, or read from the slot's page-locked inputs by the first
// kernel when zc allows; the tokens of a lookahead step taken from the
// previous step's argmax): every layer with the fused paged attention
// (pattn_decf, or pattn_decc for variant 1), then the output head (the
// slot's logits) and the argmax of every token, the ids and then the step
// number written to the slot's page-locked results.
func (br *BatchRunner) decodeOps(l *launcher, B, slot, v int) {
	c := &br.cfg
	base := br.base
	t := base.tune
	mv := B == 1 // one token: the matvecs (Model.mv), more: the products
	logits, hres := br.logitsSlot(slot), br.hresDSlot(slot)
	// One-token graphs (mvpdl): every kernel after the embedding is
	// launched with programmatic dependent launch (each waits for its
	// predecessor, griddepcontrol.wait, before reading what it wrote; only
	// weights, inputs and earlier steps' rows before that). The embedding,
	// the graph's first kernel, follows the previous step in full.
	l.pdl = mv && br.bt.pdl && br.bt.mvpdl && l.events == nil && !l.sync
	if br.bt.zc > 0 {
		name, args := base.embed.embedKernel("bembed_step")
		zc4 := min(br.bt.zc, br.metaCap) / 4 // the most int4s the host has bembed_step copy
		l.launchEx(false, name, [3]uint32{uint32(B)}, 256, 0, append(args, i32(c.Hidden), br.hmetaDSlot(slot), br.dmeta, i32(4), br.px, br.dres, i32(zc4))...)
	} else { // the host copied the inputs
		name, args := base.embed.embedKernel("bembed_dec")
		l.launchEx(false, name, [3]uint32{uint32(B)}, 256, 0, append(args, i32(c.Hidden), br.dmeta, br.dres, br.px)...)
	}
	br.embedScale(l, B)
	dpos := br.dmeta + uint64(4*(4+B))
	dtoff := br.dmeta + uint64(4*(4+2*B))
	dltoff := br.dmeta + uint64(4*(4+3*B)) // with a window pool
	// The model's plan, each operation as this step's kernels: matrix-vector
	// products for one token (mv), skinny or full tiles for more.
	for _, st := range base.m.Plan() {
		i := st.Layer
		w := &base.layers[i]
		switch st.Op {
		case arch.OpQKV:
			if mv {
				base.mv(l, "store", t.qkv, &w.qkv, br.px, w.attnNorm, br.pqkv, w.qkv.rows, 0, 0)
			} else {
				br.matmul(l, "store", &w.qkv, br.px, w.attnNorm, br.pqkv, base.qkvRows, 0, B)
			}
		case arch.OpAttention:
			toff := dtoff
			if br.local(i) {
				toff = dltoff
			}
			br.attnDecode(l, i, true, v == 1, B, br.pqkv, 0, dpos, toff)
		case arch.OpOut:
			br.outOp(l, i, B, mv)
		case arch.OpGateUp:
			br.gateUpOp(l, i, B, mv)
		case arch.OpDown:
			br.downOp(l, i, B, mv)
		case arch.OpMoE:
			br.moeOp(l, i, B, mv)
		default:
			l.then("plan", fmt.Errorf("cuda: unknown operation %v", st.Op))
		}
	}
	if mv {
		base.mv(l, "argmax", t.head, &base.out, br.px, base.outNorm, logits, c.Vocab, br.pval, br.pidx)
		l.launch("argmax_final", [3]uint32{1}, 1024, 0, br.pval, br.pidx, i32(base.headBlocks), br.dres, hres, br.dmeta)
	} else {
		br.head(l, br.px, logits, B)
		l.launch("argmax_rows", [3]uint32{uint32(B)}, 1024, 0, logits, i32(c.Vocab), i32(B), br.dres, hres, br.dmeta, br.acnt)
	}
}

// capture records the decode step of bucket bi, variant v into a graph
// per slot, with the sampling of kernel set set (devSampler.kernelSet)
// after it unless set < 0; should that fail with the attention launched
// with programmatic dependent launch, it tries again without.
func (br *BatchRunner) capture(bi, v, set int) error {
	err := br.capture1(bi, v, set)
	if err != nil && (v == 1 || batchBuckets[bi] == 1) && br.bt.pdl && br.dev.pdl {
		br.bt.pdl = false
		err = br.capture1(bi, v, set)
	}
	return err
}

func (br *BatchRunner) capture1(bi, v, set int) error {
	g := br.dev
	gs := &br.graphs[bi][v]
	if set >= 0 {
		gs = br.sgraph(bi, v, set, true)
	}
	B := batchBuckets[bi]
	for s := range gs {
		if err := g.beginCapture(); err != nil {
			return err
		}
		l := &launcher{g: g}
		br.decodeOps(l, B, s, v)
		if set >= 0 {
			br.samp.launch(l, s, br.rowsDev(B), br.logitsSlot(s), B, br.dres, br.hresDSlot(s), 0, br.dmeta)
		}
		graph, exec, err := g.endCapture()
		if l.err != nil {
			if err == nil {
				g.destroyGraph(graph, exec)
			}
			err = l.err
		}
		if err != nil {
			for s := range gs {
				g.destroyGraph(gs[s][0], gs[s][1])
				gs[s] = [2]uintptr{}
			}
			return fmt.Errorf("capturing the batch decode graph of %d: %w", batchBuckets[bi], err)
		}
		gs[s] = [2]uintptr{graph, exec}
	}
	br.stats.GraphCaptures++
	return nil
}

// decodeStep runs a batch of decode tokens (one per sequence, every token
// an output) by replaying the graph of its bucket, padded with dummy
// tokens at position 0 of the scratch block; or takes the lookahead step
// queued by the last one when the batch is exactly that step's. Unless
// the last step's logits were read (sampled), it then queues a lookahead
// step of its own before it waits.
//
// Slots: the step whose results the caller reads is in br.slot; a queued
// lookahead step in the other one. A slot's host inputs are rewritten only
// once the copy that read them last is done: the copy precedes its graph,
// which precedes (or is) a step whose completion the host has seen.
func (br *BatchRunner) decodeStep(b *batch.Batch, sampled bool) error {
	g := br.dev
	n := b.Len()
	bi := 0
	for batchBuckets[bi] < n {
		bi++
	}
	B := batchBuckets[bi]
	inflight := false // a discarded lookahead step is queued (in slot 1 - br.slot)
	if a := br.ahead; a.on {
		br.ahead.on = false
		if a.n == n && br.aheadMatches(b, a) && (a.deferred || a.sampled == br.sampNow && (!br.sampNow || br.samp.matches(a.slot))) {
			br.slot = a.slot
			br.stats.LookaheadHits++
			br.stats.GraphSteps++
			br.lastB, br.lastV = B, a.v
			br.lastTok = append(br.lastTok[:0], b.Tokens...)
			br.sampIn = a.inGraph
			if a.deferred && br.sampNow {
				// The step's forward pass was queued without its sampling
				// (rows with masks or patches, set only now): sample its
				// logits with the rows set for this Forward, before the
				// next lookahead step, which reads the sampled tokens.
				br.samp.fill(a.slot, 0)
				l := &launcher{g: g}
				br.samp.launch(l, a.slot, 0, br.logitsSlot(a.slot), n, br.dres, br.hresDSlot(a.slot), a.step, 0)
				if l.err != nil {
					return l.err
				}
			}
			if !sampled {
				// 1 - a.slot: the slot of the step whose results the host
				// has read; its inputs were copied before it ran.
				if err := br.queueAhead(b, bi, 1-a.slot); err != nil {
					return err
				}
			}
			return br.wait(a.slot, br.flagIndex(B), a.step)
		}
		br.stats.LookaheadMisses++
		inflight = true
	}
	v := br.variantFor(b, B, 0)
	set := -1 // the sampling's kernels, captured into the graph
	if br.sampNow && br.samp.inGraph() && !br.noGraph {
		set = br.samp.kernelSet()
	}
	if !br.noGraph && br.graph(bi, v, 0, set) == 0 {
		if err := br.settle(); err != nil {
			return err
		}
		inflight = false
		if err := br.capture(bi, v, set); err != nil {
			return err
		}
	}
	// Behind a discarded lookahead step (whose inputs' copy may not have
	// run yet) the step takes the slot of the last one; else the other.
	s := 1 - br.slot
	if inflight {
		s = br.slot
	}
	total, step := br.fillDecode(s, b, B, 0, set >= 0)
	if total == 0 {
		return fmt.Errorf("cuda: the inputs of a batch of %d do not fit in %d ints", n, br.metaCap)
	}
	if br.sampNow {
		// The rows set for this Forward, to slot s's copies: putRows and
		// the launch below read the slot's, which hold another step's
		// rows (or none) until filled.
		br.samp.fill(s, 0)
		total = br.sampleInputs(s, total, B, set >= 0)
	}
	br.sampIn = set >= 0
	if total <= br.bt.zc {
		hostInts(br.hmetaSlot(s), 1)[0] = int32(total)
	} else if err := br.copyMeta(s, total); err != nil {
		return err
	}
	if br.noGraph {
		// Options.NoGraph: the step's kernels one by one, a
		// synchronization after each.
		l := &launcher{g: g, sync: true}
		br.decodeOps(l, B, s, v)
		if l.err != nil {
			return l.err
		}
	} else if err := g.launchGraph(br.graph(bi, v, s, set)); err != nil {
		return err
	}
	if br.sampNow && set < 0 {
		l := &launcher{g: g}
		br.samp.launch(l, s, br.samp.rowsAt[s], br.logitsSlot(s), n, br.dres, br.hresDSlot(s), step, 0)
		if l.err != nil {
			return l.err
		}
	}
	br.slot = s
	br.stats.GraphSteps++
	br.lastB, br.lastV = B, v
	br.lastTok = append(br.lastTok[:0], b.Tokens...)
	if !inflight && !sampled {
		if err := br.queueAhead(b, bi, 1-s); err != nil {
			return err
		}
	}
	return br.wait(s, br.flagIndex(B), step)
}

// flagIndex returns where in a slot's results the host polls for the step
// number of a decode step of bucket B: after the argmax, or after the
// sampling when the step samples on the GPU.
func (br *BatchRunner) flagIndex(B int) int {
	if br.sampNow {
		return sampFlag
	}
	return B
}

// copyMeta enqueues the copy of slot s's first total ints of inputs to the
// device.
func (br *BatchRunner) copyMeta(s, total int) error {
	g := br.dev
	return g.d.check("cuMemcpyHtoDAsync (batch inputs)", g.callq(g.d.cuMemcpyHtoDAsync, uintptr(br.dmeta), br.hmetaSlot(s), uintptr(4*total), g.stream))
}

// queueAhead queues, in slot s, the decode step after b's (just queued or
// taken): the same sequences in the same order with the same tables,
// positions + 1, the tokens of b's argmax (or sampled ids) as the device
// computed them (bembed_dec or, reading the inputs zero-copy, bembed_step
// takes them from dres). It is queued when the lookahead is on and every
// sequence's table already holds its next position (a caller that reserves
// blocks a step at a time gets none at a block boundary). A zero-copy step reads
// its slot's page-locked inputs when it runs: the host rewrites them only
// after a step queued behind it has completed.
//
// The next Forward takes it only if its batch is exactly that (aheadMatches);
// otherwise it is discarded, and what it wrote is harmless:
//   - its logits and results went to slot s, which the discarding step
//     does not use (it takes the other slot; see decodeStep);
//   - its keys and values went to row p+1 of each sequence's block for
//     p+1, a position past what the sequence holds (p+1 is not committed
//     until a Forward runs it). Every later step is ordered after it on the
//     stream, so a later write wins: if the sequence goes on, its next step
//     rewrites that row (the attention reads a sequence's new row from the
//     step itself, earlier rows from the pool). If the sequence ends and
//     its blocks are freed, whoever gets the block next writes a row before
//     any step reads it (attention reads only positions below a sequence's
//     length, each written by that sequence's own steps, after this one);
//     a block kept in a prefix cache is reused only for rows below the
//     finished sequence's length, and p+1 is not one of them (a sharer that
//     copies the block, CopyBlock, copies the stray row too, at a position
//     past its own length, which it writes before reading). The block of
//     p+1 is the sequence's own: it wrote p into it (or it is a block
//     reserved for its next positions), which a copy-on-write manager
//     allows only for an unshared block;
//   - the padding tokens write into the scratch block, as always.
//
// A CopyBlock, a general batch, a graph capture or growing the inputs
// first waits for the queued step and discards it (settle).
func (br *BatchRunner) queueAhead(b *batch.Batch, bi, s int) error {
	if br.noAhead || br.noGraph {
		return nil
	}
	// Rows with a mask or patches (which depend on the tokens b's step
	// samples) defer the lookahead's sampling to the Forward that takes
	// it: the forward pass runs while the host computes them.
	deferred := br.sampNow && !br.samp.aheadOK
	B := batchBuckets[bi]
	v := br.variantFor(b, B, 1)
	sample := br.sampNow && !deferred
	set := -1
	if sample && br.samp.inGraph() {
		set = br.samp.kernelSet()
	}
	if br.graph(bi, v, s, set) == 0 {
		return nil // the next step captures that variant first
	}
	total, step := br.fillDecode(s, b, B, 1, set >= 0)
	if total == 0 {
		return nil
	}
	if sample {
		// The rows' next tokens: the same parameters, the next indexes.
		// (A deferred step keeps its argmax: the Forward that takes it may
		// not sample.)
		br.samp.fill(s, 1)
		total = br.sampleInputs(s, total, B, set >= 0)
	}
	if total <= br.bt.zc {
		hostInts(br.hmetaSlot(s), 1)[0] = int32(total) // bembed_step reads them
	} else if err := br.copyMeta(s, total); err != nil {
		return err
	}
	if err := br.dev.launchGraph(br.graph(bi, v, s, set)); err != nil {
		return err
	}
	if sample && set < 0 {
		l := &launcher{g: br.dev}
		br.samp.launch(l, s, br.samp.rowsAt[s], br.logitsSlot(s), b.Len(), br.dres, br.hresDSlot(s), step, 0)
		if l.err != nil {
			return l.err
		}
	}
	br.ahead = lookahead{on: true, slot: s, step: step, n: b.Len(), B: B, v: v, sampled: sample, deferred: deferred, inGraph: set >= 0}
	br.pending = true
	return nil
}

// wait polls the step number the last kernel of slot s's graph writes to
// page-locked memory beside the ids (index idx); past 50 ms it
// synchronizes with the stream instead, which also reports a failed
// kernel.
func (br *BatchRunner) wait(s, idx int, step int32) error {
	flag := (*int32)(hostPtr(br.hresSlot(s) + uintptr(4*idx)))
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
			return fmt.Errorf("cuda: batch step %d finished without writing its result (the polled flag holds %d; %s)", step, atomic.LoadInt32(flag), br.countersState())
		}
	}
}

// countersState describes the counters the step's last-block kernels
// keep (each zero between launches), for an error that says which one
// did not come back to zero.
func (br *BatchRunner) countersState() string {
	var b [4]byte
	read := func(p uint64) string {
		if p == 0 {
			return "-"
		}
		if err := br.dev.download(b[:], p); err != nil {
			return err.Error()
		}
		return fmt.Sprint(*(*uint32)(unsafe.Pointer(&b[0])))
	}
	return fmt.Sprintf("argmax counter %s, router counter %s", read(br.acnt), read(br.moe.counter))
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
	sh := base.shape
	qt := 64 / sh.pg // tokens per prefill tile
	ndec, ntiles := 0, 0
	for _, r := range br.runs {
		if r.N == 1 {
			ndec++
		} else {
			ntiles += (r.N + qt - 1) / qt
		}
	}
	nout := len(b.Outputs)
	// Wait for (and discard) a lookahead step first: its inputs' copy may
	// not have run.
	if err := br.settle(); err != nil {
		return err
	}
	br.slot = 0
	in := br.fillGeneral(b, qt, ndec, ntiles)
	total := in.total
	sample := br.sampNow && nout > 0
	if sample {
		br.samp.fill(0, 0)
		total = br.sampleInputs(0, total, 0, false)
	}
	if err := br.copyMeta(0, total); err != nil {
		return err
	}
	at := func(off int) uint64 { return br.dmeta + uint64(4*off) }
	l := &launcher{g: g}
	if err := br.prompts.start(g, l, len(base.layers)); err != nil {
		return err
	}
	ename, eargs := base.embed.embedKernel("embed_q8")
	l.launch(ename, [3]uint32{uint32(n)}, 256, 0, append(eargs, i32(c.Hidden), at(in.tok), br.px)...)
	br.embedScale(l, n)
	for _, st := range base.m.Plan() {
		i := st.Layer
		w := &base.layers[i]
		switch st.Op {
		case arch.OpQKV:
			br.matmul(l, "store", &w.qkv, br.px, w.attnNorm, br.pqkv, base.qkvRows, 0, n)
		case arch.OpAttention:
			toff := at(in.toff)
			if br.local(i) {
				toff = at(in.ltoff)
			}
			l.launch(fmt.Sprintf("qk_rope_paged_h%d", c.HeadDim), [3]uint32{uint32(n)}, 128, 0,
				br.pqkv, at(in.pos), toff, br.dmeta, i32(br.bs), i32(br.bsh), i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, f32(c.Eps),
				w.rope, br.pq, br.kc[i], br.vc[i], w.bias)
			if ndec > 0 {
				br.attnDecode(l, i, false, false, ndec, br.pq, at(in.dec), at(in.pos), toff)
			}
			if ntiles > 0 {
				br.attnPrefill(l, i, ntiles, n, at(in.tile), at(in.pos), toff)
			}
		case arch.OpOut:
			br.outOp(l, i, n, false)
		case arch.OpGateUp:
			br.gateUpOp(l, i, n, false)
		case arch.OpDown:
			br.downOp(l, i, n, false)
		case arch.OpMoE:
			br.moeOp(l, i, n, false)
		default:
			l.then("plan", fmt.Errorf("cuda: unknown operation %v", st.Op))
		}
	}
	if nout > 0 {
		l.launch("gather_rows", [3]uint32{uint32(nout)}, 256, 0, br.px, i32(c.Hidden), at(in.out), br.pxo)
		br.head(l, br.pxo, br.logits, nout)
		l.launch("argmax_rows", [3]uint32{uint32(nout)}, 1024, 0, br.logits, i32(c.Vocab), i32(nout), br.dres, br.hresD, br.dmeta, br.acnt)
		if sample {
			br.samp.launch(l, 0, br.samp.rowsAt[0], br.logits, nout, br.dres, br.hresD, br.step, 0)
		}
	}
	if len(b.Hidden) > 0 {
		// Embeddings: the hidden rows' residual, gathered after the head
		// has read pxo; the host applies the final norm (readHidden).
		l.launch("gather_rows", [3]uint32{uint32(len(b.Hidden))}, 256, 0, br.px, i32(c.Hidden), at(in.hid), br.pxo)
	}
	if l.err != nil {
		return l.err
	}
	br.stats.Steps++
	if err := g.sync("batch forward"); err != nil {
		return err
	}
	if err := br.prompts.add(g, l, n); err != nil {
		// The pass ran; only its timing failed: tracing stops.
		br.prompts.close(g)
		br.prompts = nil
	}
	return br.readHidden(len(b.Hidden))
}
