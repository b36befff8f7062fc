package vulkan

import (
	"inferno/arch"
	"inferno/gguf"
)

// The pass's operations as dispatches: each picks its pipeline and grid
// (the shapes in ops.go and weights.go) and records it. An error (a
// pipeline that cannot be made) is kept in p.err; the pass stops at it.

// pipeline returns the pipeline of shader name with spec, or records the
// error.
func (p *pass) pipeline(name string, spec ...uint32) *Pipeline {
	if p.err != nil {
		return nil
	}
	pl, err := p.r.d.Pipeline(name, spec...)
	if err != nil {
		p.err = err
	}
	return pl
}

// getRows records out[i] = row ids[i] of the matrix m, dequantized.
func (p *pass) getRows(m *matrix, ids, out uint64, n int) {
	name, _ := getRowsShader(m.typ)
	local := getRowsSpec(p.r.d.SubgroupSize)
	pl := p.pipeline(name, local)
	if pl == nil {
		return
	}
	push := pushGetRows{W: m.buf.Addr(), IDs: ids, Out: out, Cols: uint32(m.cols), RowBytes: uint32(m.rb), N: uint32(n)}
	gx, gy := getRowsGroups(m.cols, n, local)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// gather records out[i] = row idx[i] of the float32 rows at src (rows of
// width values): get_rows over an f32 matrix.
func (p *pass) gather(src, idx, out uint64, rows, width int) {
	name, _ := getRowsShader(gguf.TensorF32)
	local := getRowsSpec(p.r.d.SubgroupSize)
	pl := p.pipeline(name, local)
	if pl == nil {
		return
	}
	push := pushGetRows{W: src, IDs: idx, Out: out, Cols: uint32(width), RowBytes: uint32(4 * width), N: uint32(rows)}
	gx, gy := getRowsGroups(width, rows, local)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// mulMV records y = W x (add: y += W x) for n tokens: mul_mv up to 8
// tokens, mul_mm (mulMM) from mulMMMinTokens on.
func (p *pass) mulMV(m *matrix, x, y uint64, n int, add bool) {
	if n >= mulMMMinTokens {
		p.mulMM(m, x, y, n, add, 0)
		return
	}
	name, _ := mulMVShader(m.typ)
	spec := mulMVSpec(p.r.d.SubgroupSize, n)
	gx, gy := mulMVGroups(m.rows, n, spec)
	pl := p.pipeline(name, spec[:]...)
	if pl == nil {
		return
	}
	push := pushMulMV{W: m.buf.Addr(), X: x, Y: y, Rows: uint32(m.rows), Cols: uint32(m.cols), N: uint32(n), RowBytes: uint32(m.rb), LDY: uint32(m.rows)}
	if add {
		push.Add = 1
	}
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// rmsNorm records y = RMSNorm(x) * gain over rows of width values.
func (p *pass) rmsNorm(x, y uint64, gain *vector, rows, width int) {
	pl := p.pipeline("rms_norm", rowWG(width, p.r.d.SubgroupSize))
	if pl == nil {
		return
	}
	push := pushRMSNorm{X: x, Y: y, Gain: gain.buf.Addr(), Rows: uint32(rows), D: uint32(width), Eps: p.c.Eps, Group: 1, Stride: uint32(width)}
	gx, gy := groups2D(rows, 1)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// addBias records x[t] += bias for each of n rows.
func (p *pass) addBias(x uint64, bias *vector, n int) {
	pl := p.pipeline("add_bias", elementWG)
	if pl == nil {
		return
	}
	push := pushAddBias{X: x, Bias: bias.buf.Addr(), Rows: uint32(n), D: uint32(bias.n)}
	gx, gy := groups2D(n*bias.n, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// add records x += y over n values.
func (p *pass) add(x, y uint64, n int) {
	pl := p.pipeline("add", elementWG)
	if pl == nil {
		return
	}
	push := pushAdd{X: x, Y: y, N: uint32(n)}
	gx, gy := groups2D(n, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// glu records gate = Act(gate) * up over n values.
func (p *pass) glu(gate, up uint64, n int) {
	name := "swiglu"
	switch p.c.Act {
	case arch.GeGLU:
		name = "geglu"
	case arch.SwiGLUOAI:
		name = "swiglu_oai"
	}
	pl := p.pipeline(name, elementWG)
	if pl == nil {
		return
	}
	push := pushGLU{Out: gate, Gate: gate, Up: up, N: uint32(n)}
	gx, gy := groups2D(n, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// rope records the rotation of n tokens' heads at x with the table tab.
func (p *pass) rope(x uint64, tab *Buffer, n, heads int, rope *arch.Rope) {
	pl := p.pipeline("rope", elementWG)
	if pl == nil {
		return
	}
	c := p.c
	rot := c.RotaryDims()
	push := pushRoPE{X: x, Pos: p.in(p.r.lay.pos), Tab: tab.Addr(), Tokens: uint32(n), Heads: uint32(heads), HeadDim: uint32(c.HeadDim),
		RotDims: uint32(rot), Style: ropeStyle(rope.Style), MaxPos: uint32(p.r.md.maxLen), Stride: uint32(heads * c.HeadDim)}
	gx, gy := groups2D(n*heads*rot/2, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// kvStore records the store of the n tokens' keys and values in layer
// i's blocks.
func (p *pass) kvStore(i, n int) {
	pl := p.pipeline("kv_store", elementWG)
	if pl == nil {
		return
	}
	r := p.r
	push := pushKVStore{K: r.k.Addr(), V: r.v.Addr(), KC: r.kc[i].Addr(), VC: r.vc[i].Addr(), Pos: p.in(r.lay.pos), Seq: p.in(r.lay.seq),
		Tables: p.in(r.lay.tables), TabOff: p.in(r.lay.tabOff), Tokens: uint32(n), KVDim: uint32(p.c.KVDim()), BlockSize: uint32(r.bs), Stride: uint32(p.c.KVDim())}
	gx, gy := groups2D(n*p.c.KVDim()/2, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// attn records layer i's attention of the pass's tiles of query tokens.
func (p *pass) attn(i int, sinks *vector) {
	r, c := p.r, p.c
	s := r.md.attnShape(p.sh.prompt)
	pl := p.pipeline("attn", s.spec()...)
	if pl == nil {
		return
	}
	splits := p.sh.splits
	push := pushAttn{Q: r.q.Addr(), Out: r.att.Addr(), KC: r.kc[i].Addr(), VC: r.vc[i].Addr(), Pos: p.in(r.lay.pos), Seq: p.in(r.lay.seq),
		Tables: p.in(r.lay.tables), TabOff: p.in(r.lay.tabOff), Tiles: p.in(r.lay.tiles), Part: r.part.Addr(),
		NTiles: uint32(p.sh.tiles), NHeads: uint32(c.Heads), NKV: uint32(c.KVHeads), BlockSize: uint32(r.bs),
		Window: int32(c.LayerWindow(i)), Scale: c.AttentionScale(), Splits: uint32(splits), QStride: uint32(c.QDim())}
	push.Sinks = r.q.Addr() // read only with HasSinks
	if sinks != nil {
		push.Sinks, push.HasSinks = sinks.buf.Addr(), 1
	}
	gx, gy, gz := attnGroups(p.sh.tiles, c.Heads, s, splits)
	p.rec.Dispatch(pl, gx, gy, gz, PushBytes(&push))
	if splits <= 1 {
		return
	}
	p.rec.Barrier()
	pc := p.pipeline("attn_combine", rowWG(c.HeadDim, r.d.SubgroupSize))
	if pc == nil {
		return
	}
	rows := p.sh.tokens * c.Heads
	comb := pushAttnCombine{Part: r.part.Addr(), Out: r.att.Addr(), Sinks: push.Sinks, Rows: uint32(rows), NHeads: uint32(c.Heads),
		HeadDim: uint32(c.HeadDim), Splits: uint32(splits), HasSinks: push.HasSinks}
	cx, cy := groups2D(rows, 1)
	p.rec.Dispatch(pc, cx, cy, 1, PushBytes(&comb))
}

// argmax records the argmax of rows rows of logits into out (int32s).
func (p *pass) argmax(logits, out uint64, rows, vocab int) {
	pl := p.pipeline("argmax", rowWG(vocab, p.r.d.SubgroupSize))
	if pl == nil {
		return
	}
	push := pushArgmax{Logits: logits, Out: out, Rows: uint32(rows), Vocab: uint32(vocab)}
	gx, gy := groups2D(rows, 1)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// attnShape returns the attention's specialization for decode passes or
// passes with prompts, chosen once per model for the device.
func (md *Model) attnShape(prompt bool) attnShape {
	i := 0
	if prompt {
		i = 1
	}
	return md.attn[i]
}
