package cuda

import (
	"fmt"
	"math"

	"inferno/arch"
)

// prefill runs tokens (two or more) at positions r.len.. in chunks.
func (r *Runner) prefill(tokens []int32) error {
	if err := r.settle(); err != nil {
		return err
	}
	pos := r.len
	for len(tokens) > 0 {
		n := min(len(tokens), r.chunk)
		if err := r.prefillChunk(tokens[:n], pos, n == len(tokens)); err != nil {
			return err
		}
		tokens, pos = tokens[n:], pos+n
	}
	return r.launchAhead(pos)
}

func (r *Runner) prefillChunk(tokens []int32, pos0 int, last bool) error {
	c := &r.cfg
	g := r.dev
	n := len(tokens)
	if err := g.upload(r.ptok, i32Bytes(tokens)); err != nil {
		return err
	}
	r.stats.PrefillTokens += int64(n)
	l := &launcher{g: g}
	np := r.npad
	eps := f32(c.Eps)
	scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
	// Products: quant_act and mm_q8 for Q8_0, qact_h and mmh for the other
	// types (quant.go; r.phi holds their f16 activations).
	bufs := actBufs{hi: r.phi, lo: r.plo, sx: r.psx, xh: r.phi, hs: r.psx, npad: np}
	mm := func(kind string, w *gpuWeight, x, gain, y uint64, ldy, nout int) {
		r.product(l, kind, w, x, gain, y, ldy, nout, n, bufs)
	}
	ename, eargs := r.embed.embedKernel("embed_q8")
	l.launch(ename, [3]uint32{uint32(n)}, 256, 0, append(eargs, i32(c.Hidden), r.ptok, r.px)...)
	// The model's plan: each product quantizes its input (normalizing it
	// first where the operation starts with a norm), then multiplies.
	for _, st := range r.m.Plan() {
		i := st.Layer
		w := &r.layers[i]
		switch st.Op {
		case arch.OpQKV:
			mm("store", &w.qkv, r.px, w.attnNorm, r.pqkv, r.qkvRows, 0)
		case arch.OpAttention:
			l.launch(fmt.Sprintf("qk_rope_n_h%d", c.HeadDim), [3]uint32{uint32(n)}, 128, 0,
				r.pqkv, i32(pos0), i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, eps, r.rope, r.pq, r.kc[i], r.vc[i], i32(r.kvCap))
			l.launch(fmt.Sprintf("attn_prefill_h%d", c.HeadDim), [3]uint32{uint32((n + 31) / 32), uint32(c.Heads)}, 256, uint32(attnPrefillSmem(c.HeadDim)),
				r.pq, i32(n), i32(pos0), i32(c.Heads), i32(c.KVHeads), r.kc[i], r.vc[i], i32(r.kvCap), f32(scale), r.patt)
		case arch.OpOut:
			mm("add", &w.o, r.patt, 0, r.px, c.Hidden, 0)
		case arch.OpGateUp:
			mm("swiglu", &w.gateUp, r.px, w.ffnNorm, r.pact, c.FFN, c.FFN)
		case arch.OpDown:
			mm("add", &w.down, r.pact, 0, r.px, c.Hidden, 0)
		default:
			l.then("plan", fmt.Errorf("cuda: unknown operation %v", st.Op))
		}
	}
	slot := 1 - r.slot
	if last {
		r.head(l, r.px+uint64(4*(n-1)*c.Hidden), slot)
	}
	if l.err != nil {
		return l.err
	}
	if err := g.sync("prefill"); err != nil {
		return err
	}
	if last {
		r.slot = slot
	}
	return nil
}
