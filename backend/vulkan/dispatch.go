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
	push := pushGetRows{W: m.buf.Addr(), IDs: ids, Out: out, Cols: uint32(m.cols), RowBytes: uint32(m.rb), N: uint32(n), Scale: p.c.EmbedScale}
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

// mulMV records y = W x (add: y += W x) for n tokens, token t's outputs
// from y + 4*t*ldy (ldy 0: m.rows, packed): mul_mv up to 8 tokens,
// mul_mm (mulMM) from mulMMMinTokens on.
func (p *pass) mulMV(m *matrix, x, y uint64, n int, add bool, ldy int) {
	p.mulMVIn(m, xPlain, x, nil, y, n, add, ldy)
}

// fuseInputs reports whether the pass's products compute their inputs
// themselves (mulMVIn's modes): in passes of a few tokens, which
// mul_mv's tiles take whole (each workgroup reads every token's row).
func (p *pass) fuseInputs() bool { return p.sh.tokens <= 8 }

// fuseNorm reports whether the pass's products normalize their input rows
// themselves (mulMVIn's xNorm): in passes of a few tokens (fuseInputs),
// and in decode batches of any size on the integer products, whose
// quantizing dispatch computes the norm as it goes (one dispatch instead
// of two). Float decode batches past 8 tokens keep the RMSNorm's own
// dispatch: their mul_mv tiles are bound by arithmetic (docs/PERF.md,
// call E), which the norm's would add to in every tile of rows.
func (p *pass) fuseNorm() bool { return p.fuseInputs() || (!p.sh.prompt && p.r.md.intDot) }

// mulMVIn is mulMV of the input mode computes from x: xNorm,
// RMSNorm(x) * gain (gain the norm's vector); xSwiGLU, the SwiGLU of the
// packed gate-and-up rows at x (2 m.cols values a token).
func (p *pass) mulMVIn(m *matrix, mode uint32, x uint64, gain *vector, y uint64, n int, add bool, ldy int) {
	if ldy == 0 {
		ldy = m.rows
	}
	if mode == xPlain && n >= mulMMMinTokens && p.sh.prompt { // prompts: mul_mm
		p.mulMM(m, x, y, n, add, ldy)
		return
	}
	if p.mulMVQ(m, mode, x, gain, y, n, add, ldy) { // 8-bit activations, integer dot products
		return
	}
	name, _ := mulMVShader(m.typ)
	spec := mulMVSpecRows(p.r.d.SubgroupSize, m.rows, n)
	gx, gy := mulMVGroups(m.rows, n, spec)
	pl := p.pipeline(name, spec[0], spec[1], spec[2], mode)
	if pl == nil {
		return
	}
	push := pushMulMV{W: m.buf.Addr(), X: x, Y: y, Rows: uint32(m.rows), Cols: uint32(m.cols), N: uint32(n), RowBytes: uint32(m.rb), LDY: uint32(ldy)}
	if add {
		push.Add = 1
	}
	switch mode {
	case xNorm:
		push.Gain, push.Eps = gain.buf.Addr(), p.c.Eps
	case xSwiGLU:
		push.XStride = uint32(2 * m.cols)
	}
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// rmsNorm records y = RMSNorm(x) * gain over rows of width values: packed
// (stride 0), or in groups of group rows every stride values (heads of
// packed QKV rows).
func (p *pass) rmsNorm(x, y uint64, gain *vector, rows, width, group, stride int) {
	if stride == 0 {
		group, stride = 1, width
	}
	pl := p.pipeline("rms_norm", rowWG(width, p.r.d.SubgroupSize))
	if pl == nil {
		return
	}
	push := pushRMSNorm{X: x, Y: y, Gain: gain.buf.Addr(), Rows: uint32(rows), D: uint32(width), Eps: p.c.Eps, Group: uint32(group), Stride: uint32(stride)}
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

// glu records out = Act(gate) * up over n values, gate and up read in
// rows of width values every stride (the halves of the gate-and-up
// product).
func (p *pass) glu(out, gate, up uint64, n, width, stride int) {
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
	push := pushGLU{Out: out, Gate: gate, Up: up, N: uint32(n), Width: uint32(width), Stride: uint32(stride)}
	gx, gy := groups2D(n, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// ropeStore records layer i's QK-norm (with the gains, when not nil),
// RoPE with the table tab, and the store of the keys and values in its
// blocks, of the pass's packed QKV rows.
func (p *pass) ropeStore(i int, tab *Buffer, rope *arch.Rope, qgain, kgain *vector) {
	pl := p.pipeline("rope_store", elementWG)
	if pl == nil {
		return
	}
	r, c, n := p.r, p.c, p.sh.tokens
	push := pushRopeStore{X: r.qkv.Addr(), Pos: p.in(r.lay.pos), Seq: p.in(r.lay.seq), Tab: tab.Addr(), KC: r.kc[i].Addr(), VC: r.vc[i].Addr(),
		Tables: p.in(r.lay.tables), TabOff: p.tabOff(i), Tokens: uint32(n), NQ: uint32(c.Heads), NKV: uint32(c.KVHeads),
		HeadDim: uint32(c.HeadDim), RotDims: uint32(c.RotaryDims()), Style: ropeStyle(rope.Style), MaxPos: uint32(r.md.maxLen),
		Stride: uint32(qkvDim(c)), BlockSize: uint32(r.bs), Flags: ropeStore, Eps: c.Eps}
	push.QGain, push.KGain = push.X, push.X // read only with ropeNorm
	if qgain != nil {
		push.QGain, push.KGain, push.Flags = qgain.buf.Addr(), kgain.buf.Addr(), push.Flags|ropeNorm
	}
	gx, gy := groups2D(n*(c.Heads+2*c.KVHeads)*c.HeadDim/2, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// attn records layer i's attention of the pass's tiles of query tokens;
// with fuse (a decode pass, on the decode shape) also the QK-norm, RoPE
// and store rope_store would have done, the layer's rope block at rope.
func (p *pass) attn(i int, sinks *vector, s attnShape, rope uint64) {
	r, c := p.r, p.c
	pl := p.pipeline("attn", s.spec()...)
	if pl == nil {
		return
	}
	splits := p.sh.splits
	push := pushAttn{Q: r.qkv.Addr(), Out: r.att.Addr(), KC: r.kc[i].Addr(), VC: r.vc[i].Addr(), Pos: p.in(r.lay.pos), Seq: p.in(r.lay.seq),
		Tables: p.in(r.lay.tables), TabOff: p.tabOff(i), Tiles: p.in(r.lay.tiles), Part: r.part.Addr(),
		NTiles: uint32(p.sh.tiles), NHeads: uint32(c.Heads), NKV: uint32(c.KVHeads), BlockSize: uint32(r.bs),
		Window: int32(c.LayerWindow(i)), Scale: c.AttentionScale(), Splits: uint32(splits), QStride: uint32(qkvDim(c)), Rope: rope}
	if sinks != nil {
		push.Sinks = sinks.buf.Addr()
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
		HeadDim: uint32(c.HeadDim), Splits: uint32(splits), HasSinks: hasSinks(push.Sinks)}
	cx, cy := groups2D(rows, 1)
	p.rec.Dispatch(pc, cx, cy, 1, PushBytes(&comb))
}

// argmax records the argmax of rows rows of logits into out (int32s):
// long rows cut into chunks (argmaxChunks) and merged.
func (p *pass) argmax(logits, out uint64, rows, vocab int) {
	wg := rowWG(vocab, p.r.d.SubgroupSize)
	pl := p.pipeline("argmax", wg)
	if pl == nil {
		return
	}
	push := pushArgmax{Logits: logits, Out: out, Rows: uint32(rows), Vocab: uint32(vocab)}
	if chunks := argmaxChunks(rows, vocab, wg); chunks > 1 && int64(8*rows*chunks) <= p.r.amax.Size() {
		push.Part, push.Chunks, push.Phase = p.r.amax.Addr(), uint32(chunks), 1
		gx, gy := groups2D(rows*chunks, 1)
		p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
		p.rec.Barrier()
		push.Phase = 2
	}
	gx, gy := groups2D(rows, 1)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// qkvDim is the width of a token's packed QKV row: its queries, keys and
// values.
func qkvDim(c *arch.Config) int { return c.QDim() + 2*c.KVDim() }

// attnShape returns the attention's specialization for decode passes or
// passes with prompts, chosen once per model for the device.
func (md *Model) attnShape(prompt bool) attnShape {
	i := 0
	if prompt {
		i = 1
	}
	return md.attn[i]
}
