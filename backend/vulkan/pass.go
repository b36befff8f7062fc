package vulkan

import (
	"fmt"

	"inferno/arch"
)

// record records the command buffer of a pass of shape sh: the plan's
// steps over the inputs in the host buffer, as package forward runs them
// on the CPU (backend/forward's pass), then the output rows' final norm,
// the head and the argmax, and the hidden rows.
func (r *BatchRunner) record(sh shape) (*Recorder, error) {
	rec, err := r.d.Record()
	if err != nil {
		return nil, err
	}
	p := &pass{r: r, rec: rec, sh: sh, c: r.c}
	if err := p.record(); err != nil {
		rec.Release()
		return nil, err
	}
	if err := rec.End(); err != nil {
		rec.Release()
		return nil, err
	}
	return rec, nil
}

// A pass records one pass's dispatches.
type pass struct {
	r   *BatchRunner
	rec *Recorder
	sh  shape
	c   *arch.Config
	err error
	// What the runner's quantized activations hold (mulMVQ), valid
	// within one step: the products of a step share their input.
	qin    quantized
	qvalid bool
}

// in returns the address of an input region.
func (p *pass) in(off int64) uint64 { return p.r.in.Addr() + uint64(off) }

func (p *pass) record() error {
	r, c, n := p.r, p.c, p.sh.tokens
	md := r.md
	p.getRows(md.embed, p.in(r.lay.ids), r.x.Addr(), n)
	p.rec.Barrier()
	for _, st := range md.m.Plan() {
		p.step(st)
		if p.err != nil {
			return p.err
		}
	}
	// The head on the output rows, gathered, normalized; their argmax.
	// The hidden rows the same way, without the head. In a pass on mul_mv
	// whose outputs are all its tokens in order (decode), the head
	// normalizes the residual stream's rows itself.
	headSelf := p.sh.allOut && p.fuseNorm()
	if rows := p.sh.outs + p.sh.hidden; rows > 0 && !headSelf {
		p.gather(r.x.Addr(), p.in(r.lay.outIdx), r.h.Addr(), rows, c.Hidden)
		p.rec.Barrier()
		p.rmsNorm(r.h.Addr(), r.h.Addr(), md.outNorm, rows, c.Hidden, 0, 0)
		p.rec.Barrier()
	}
	if p.sh.outs > 0 {
		p.qvalid = false
		logits := r.logits.Addr()
		if headSelf {
			p.mulMVIn(md.output, xNorm, r.x.Addr(), md.outNorm, logits, p.sh.outs, false, 0)
		} else {
			p.mulMV(md.output, r.h.Addr(), logits, p.sh.outs, false, 0)
		}
		p.rec.Barrier()
		p.argmax(logits, r.res.Addr()+uint64(r.greedyOff()), p.sh.outs, c.Vocab)
		if p.sh.sample {
			p.rec.Barrier()
			r.samp.record(p.rec, logits, p.sh.outs)
		}
	}
	if p.sh.hidden > 0 {
		p.rec.CopyBarrier()
		off := uint64(4 * p.sh.outs * c.Hidden)
		p.rec.Copy(r.h, r.res, int64(off), r.hiddenOff(), int64(4*p.sh.hidden*c.Hidden))
	}
	return p.err
}

// step records one operation of the plan.
func (p *pass) step(st arch.Step) {
	p.qvalid = false
	r, c, n := p.r, p.c, p.sh.tokens
	l := &r.md.layers[st.Layer]
	x, h := r.x.Addr(), r.h.Addr()
	switch st.Op {
	case arch.OpQKV:
		// One packed row a token: its queries, keys and values, of the
		// normalized x (normalized by the products themselves in fuseNorm
		// passes).
		in, mode, gain := h, uint32(xPlain), l.vecs[arch.RoleAttnNorm]
		if p.fuseNorm() {
			in, mode = x, xNorm
		} else {
			p.rmsNorm(x, h, gain, n, c.Hidden, 0, 0)
			p.rec.Barrier()
		}
		qkv, w := r.qkv.Addr(), qkvDim(c)
		if l.qkv != nil {
			p.mulMVIn(l.qkv, mode, in, gain, qkv, n, false, w)
		} else {
			p.mulMVIn(l.mats[arch.RoleQ], mode, in, gain, qkv, n, false, w)
			p.mulMVIn(l.mats[arch.RoleK], mode, in, gain, qkv+4*uint64(c.QDim()), n, false, w)
			p.mulMVIn(l.mats[arch.RoleV], mode, in, gain, qkv+4*uint64(c.QDim()+c.KVDim()), n, false, w)
		}
		if c.Bias {
			p.rec.Barrier()
			p.addBias(qkv, l.qkvBias, n)
		}
		p.rec.Barrier()
	case arch.OpAttention:
		p.attention(st.Layer, l)
	case arch.OpOut:
		p.project(l.mats[arch.RoleO], r.att.Addr(), l.vecs[arch.RoleOBias], l.vecs[arch.RoleAttnPostNorm])
	case arch.OpGateUp:
		// One packed row a token, gate's then up's; their activation
		// into act, or computed by the down product as it reads them.
		in, mode, gain := h, uint32(xPlain), l.vecs[arch.RoleFFNNorm]
		if p.fuseNorm() {
			in, mode = x, xNorm
		} else {
			p.rmsNorm(x, h, gain, n, c.Hidden, 0, 0)
			p.rec.Barrier()
		}
		gu, ffn := r.gateUp.Addr(), c.FFN
		if l.gateUp != nil {
			p.mulMVIn(l.gateUp, mode, in, gain, gu, n, false, 2*ffn)
		} else {
			p.mulMVIn(l.mats[arch.RoleGate], mode, in, gain, gu, n, false, 2*ffn)
			p.mulMVIn(l.mats[arch.RoleUp], mode, in, gain, gu+4*uint64(ffn), n, false, 2*ffn)
		}
		p.rec.Barrier()
		if !p.gluInDown() {
			p.glu(r.act.Addr(), gu, gu+4*uint64(ffn), n*ffn, ffn, 2*ffn)
			p.rec.Barrier()
		}
	case arch.OpDown:
		if p.gluInDown() {
			p.projectIn(l.mats[arch.RoleDown], xSwiGLU, r.gateUp.Addr(), nil, l.vecs[arch.RoleFFNPostNorm])
		} else {
			p.project(l.mats[arch.RoleDown], r.act.Addr(), nil, l.vecs[arch.RoleFFNPostNorm])
		}
	case arch.OpMoE:
		p.moe(l)
	default:
		p.err = fmt.Errorf("vulkan: the operation %v is not supported", st.Op)
	}
}

// gluInDown reports whether the down product computes the activation
// from the gate-and-up rows itself (SwiGLU in a short pass).
func (p *pass) gluInDown() bool { return p.fuseInputs() && p.c.Act == arch.SwiGLU }

// project adds a sub-layer's output W a (+ bias) to the residual stream:
// straight into it (the product's add), or with Config.PostNorm through
// out, normalized with postNorm first.
func (p *pass) project(w *matrix, a uint64, bias, postNorm *vector) {
	p.projectIn(w, xPlain, a, bias, postNorm)
}

// projectIn is project of the input mode computes from a (mulMVIn).
func (p *pass) projectIn(w *matrix, mode uint32, a uint64, bias, postNorm *vector) {
	r, c, n := p.r, p.c, p.sh.tokens
	if !c.PostNorm {
		p.mulMVIn(w, mode, a, nil, r.x.Addr(), n, true, 0)
		if bias != nil {
			p.rec.Barrier()
			p.addBias(r.x.Addr(), bias, n)
		}
		p.rec.Barrier()
		return
	}
	out := r.out.Addr()
	p.mulMVIn(w, mode, a, nil, out, n, false, 0)
	p.rec.Barrier()
	if bias != nil {
		p.addBias(out, bias, n)
		p.rec.Barrier()
	}
	p.rmsNorm(out, out, postNorm, n, c.Hidden, 0, 0)
	p.rec.Barrier()
	p.add(r.x.Addr(), out, n*c.Hidden)
	p.rec.Barrier()
}

// attention records layer i's QK-norm, RoPE, the store of its keys and
// values in the pool and the attention of every query token: in one
// dispatch in decode passes (attn's FUSE), rope_store then attn in passes
// with prompts.
func (p *pass) attention(i int, l *layer) {
	r, c := p.r, p.c
	var sinks *vector
	if c.Sinks {
		sinks = l.vecs[arch.RoleSinks]
	}
	if s := r.md.attnShape(p.sh.prompt); s.Fuse != 0 && !p.sh.prompt {
		p.attn(i, sinks, s, r.md.ropeArgs.Addr()+uint64(i*ropeArgsBytes))
		p.rec.Barrier()
		return
	}
	tab := r.md.rope
	if c.LayerWindow(i) > 0 && c.LocalRope.Theta != 0 {
		tab = r.md.ropeLoc
	}
	var qn, kn *vector
	if c.QKNorm {
		qn, kn = l.vecs[arch.RoleQNorm], l.vecs[arch.RoleKNorm]
	}
	p.ropeStore(i, tab, c.LayerRope(i), qn, kn)
	p.rec.Barrier()
	s := r.md.attnShape(p.sh.prompt)
	s.Fuse = 0
	p.attn(i, sinks, s, 0)
	p.rec.Barrier()
}
