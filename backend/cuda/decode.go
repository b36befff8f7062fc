package cuda

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"inferno/arch"
)

// attn enqueues the decode attention of layer i.
func (r *Runner) attn(l *launcher, i int) {
	c := &r.cfg
	w := &r.layers[i]
	ad, smem := r.attnKernel(r.kvCap)
	nsplit, chcap := r.attnSplits()
	scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
	l.launch(ad, [3]uint32{uint32(r.shape.dblocks), uint32(nsplit)}, uint32(r.tune.at), uint32(smem),
		r.qkv, i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, f32(c.Eps), r.rope, r.params,
		r.kc[i], r.vc[i], i32(r.kvCap), f32(scale), i32(nsplit), i32(chcap), i32(r.tune.minchunk), r.pm, r.pl, r.pacc, r.counter, r.att)
}

// decodeLaunches enqueues one decode step: the token and position come
// from the staging area (copied to the GPU first), the argmax goes back to it.
func (r *Runner) decodeLaunches(sync bool, slot int) error {
	return r.decodeOps(&launcher{g: r.dev, sync: sync, pdl: r.tune.pdl}, slot)
}

func (r *Runner) decodeOps(l *launcher, slot int) error {
	c := &r.cfg
	g := r.dev
	t := r.tune
	// The first kernel reads the step's token and position from host
	// memory; an ordinary launch (it follows the previous step, not a kernel).
	ename, eargs := r.embed.embedKernel("embed_step") // Q8_0's own kernel, or any type's (quant.go)
	l.launchEx(false, ename, [3]uint32{1}, 256, 0, append(eargs, i32(c.Hidden), g.hostD+uint64(r.paramsOff(slot)), r.params, r.x, r.result)...)
	// The model's plan, each operation as one kernel.
	for _, st := range r.m.Plan() {
		w := &r.layers[st.Layer]
		switch st.Op {
		case arch.OpQKV:
			r.mv(l, "store", t.qkv, &w.qkv, r.x, w.attnNorm, r.qkv, w.qkv.rows, 0, 0)
		case arch.OpAttention:
			r.attn(l, st.Layer)
		case arch.OpOut:
			r.mv(l, "add", t.o, &w.o, r.att, 0, r.x, c.Hidden, 0, 0)
		case arch.OpGateUp:
			r.mv(l, "swiglu", t.gu, &w.gateUp, r.x, w.ffnNorm, r.act, c.FFN, 0, 0)
		case arch.OpDown:
			r.mv(l, "add", t.down, &w.down, r.act, 0, r.x, c.Hidden, 0, 0)
		default:
			l.then("plan", fmt.Errorf("cuda: unknown operation %v", st.Op))
		}
	}
	r.head(l, r.x, slot)
	r.stats.KernelsPerStep = l.count
	return l.err
}

// head enqueues the final norm, the output head over the token whose
// residual is at x, and the argmax.
func (r *Runner) head(l *launcher, x uint64, slot int) {
	r.mv(l, "argmax", r.tune.head, &r.out, x, r.outNorm, r.logits[slot], r.cfg.Vocab, r.pval, r.pidx)
	l.launch("argmax_final", [3]uint32{1}, 1024, 0, r.pval, r.pidx, i32(r.headBlocks), r.result, r.dev.hostD+uint64(r.resultOff(slot)), r.params)
	// head is also the end of a prefill, launched without PDL: harmless.
}

func (r *Runner) decode(tok int32) error {
	g := r.dev
	r.stats.DecodeSteps++
	if r.ahead.on {
		a := r.ahead
		r.ahead.on = false
		if a.pos == r.len && tok == *g.hostI32(r.resultOff(r.slot)) {
			// The queued step guessed the token: queue the one after it
			// (on its argmax, in the other slot), then wait for it.
			r.slot = a.slot
			r.stats.LookaheadHits++
			if err := r.launchAhead(r.len + 1); err != nil {
				return err
			}
			return r.waitStep(a.slot, a.seq)
		}
		r.stats.LookaheadMisses++
	}
	if err := r.settle(); err != nil {
		return err
	}
	slot := 1 - r.slot
	r.step++
	*g.hostI32(r.paramsOff(slot)) = tok
	*g.hostI32(r.paramsOff(slot) + 4) = int32(r.len)
	*g.hostI32(r.paramsOff(slot) + 8) = r.step
	*g.hostI32(r.paramsOff(slot) + 12) = 0
	if r.opts.NoGraph {
		if err := r.decodeLaunches(true, slot); err != nil {
			return err
		}
		r.slot = slot
		return nil
	}
	if r.exec[0] == 0 {
		if err := r.capture(); err != nil {
			return err
		}
	}
	if err := g.launchGraph(r.exec[slot]); err != nil {
		return err
	}
	seq := r.step
	r.slot = slot
	if err := r.launchAhead(r.len + 1); err != nil {
		return err
	}
	return r.waitStep(slot, seq)
}

// launchAhead queues a decode step at position pos (the one after the
// step or prompt just run) on the device's argmax, when the graph is in
// use and the cache has room: if the next Forward brings that token, as
// greedy decoding does, its results are ready or on their way; otherwise
// it is discarded (it wrote only the slot's logits and a cache position
// that the real step rewrites).
func (r *Runner) launchAhead(pos int) error {
	if r.opts.NoGraph || !r.tune.ahead || r.noAhead || r.exec[0] == 0 || pos+1 > r.kvCap {
		return nil
	}
	g := r.dev
	slot := 1 - r.slot
	r.step++
	*g.hostI32(r.paramsOff(slot)) = -1
	*g.hostI32(r.paramsOff(slot) + 4) = int32(pos)
	*g.hostI32(r.paramsOff(slot) + 8) = r.step
	*g.hostI32(r.paramsOff(slot) + 12) = 1
	if err := g.launchGraph(r.exec[slot]); err != nil {
		return err
	}
	r.ahead.on, r.ahead.slot, r.ahead.pos, r.ahead.seq = true, slot, pos, r.step
	r.pending = true
	return nil
}

// waitStep waits for the step of the given slot and number to write its
// number beside its argmax in host memory, polling it (lower latency than
// a stream synchronization); if that takes long, it synchronizes with the
// stream instead, which also reports a failed kernel. The step's tail may
// still be running on return: what must see it finished calls settle.
func (r *Runner) waitStep(slot int, seq int32) error {
	g := r.dev
	flag := g.hostI32(r.resultOff(slot) + 4)
	start := time.Now()
	r.pending = true
	for i := 1; ; i++ {
		if atomic.LoadInt32(flag) == seq {
			return nil
		}
		if i%4096 == 0 && time.Since(start) > 50*time.Millisecond {
			if err := r.settle(); err != nil {
				return err
			}
			if atomic.LoadInt32(flag) == seq {
				return nil
			}
			return fmt.Errorf("cuda: decode step %d finished without writing its result", seq)
		}
	}
}

// settle waits until nothing runs on the GPU: the last step's tail, or a
// queued lookahead step (then discarded).
func (r *Runner) settle() error {
	r.ahead.on = false
	if !r.pending {
		return nil
	}
	r.pending = false
	return r.dev.sync("decode step")
}
