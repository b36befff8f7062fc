package cuda

import (
	"fmt"
	"math"

	"inferno/model/qwen3"
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
	nt := uint32((n + 63) / 64)
	quant := func(x uint64, K int, gain uint64) {
		l.launch("quant_act", [3]uint32{uint32(n)}, 256, 0, x, i32(K), i32(K), gain, eps, r.phi, r.plo, r.psx, i32(np))
	}
	mm := func(kind string, w *gpuWeight, y uint64, ldy, nout int) {
		l.launch("mm_q8_"+kind, [3]uint32{uint32(w.mpad / 64), nt}, 128, 0,
			w.q, w.dcol, i32(w.rows), i32(w.mpad), i32(w.cols), r.phi, r.plo, r.psx, i32(n), i32(np), y, i32(ldy), i32(nout))
	}
	l.launch("embed_q8", [3]uint32{uint32(n)}, 256, 0, r.embed.q, r.embed.drow, i32(c.Hidden), r.ptok, r.px)
	// The model's plan: each product quantizes its input (normalizing it
	// first where the operation starts with a norm), then multiplies.
	for _, st := range r.m.Plan() {
		i := st.Layer
		w := &r.layers[i]
		switch st.Op {
		case qwen3.OpQKV:
			quant(r.px, c.Hidden, w.attnNorm)
			mm("store", &w.qkv, r.pqkv, r.qkvRows, 0)
		case qwen3.OpAttention:
			l.launch(fmt.Sprintf("qk_rope_n_h%d", c.HeadDim), [3]uint32{uint32(n)}, 128, 0,
				r.pqkv, i32(pos0), i32(c.Heads), i32(c.KVHeads), w.qNorm, w.kNorm, eps, r.rope, r.pq, r.kc[i], r.vc[i], i32(r.kvCap))
			l.launch(fmt.Sprintf("attn_prefill_h%d", c.HeadDim), [3]uint32{uint32((n + 31) / 32), uint32(c.Heads)}, 256, 0,
				r.pq, i32(n), i32(pos0), i32(c.Heads), i32(c.KVHeads), r.kc[i], r.vc[i], i32(r.kvCap), f32(scale), r.patt)
		case qwen3.OpOut:
			quant(r.patt, c.QDim(), 0)
			mm("add", &w.o, r.px, c.Hidden, 0)
		case qwen3.OpGateUp:
			quant(r.px, c.Hidden, w.ffnNorm)
			mm("swiglu", &w.gateUp, r.pact, c.FFN, c.FFN)
		case qwen3.OpDown:
			quant(r.pact, c.FFN, 0)
			mm("add", &w.down, r.px, c.Hidden, 0)
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
