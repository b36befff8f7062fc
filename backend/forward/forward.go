// Package forward runs the forward pass that package arch describes on a
// CPU backend (backend.Ops), for any model that implements arch.Model: the
// plan's steps top to bottom over a batch.Batch, with the options of the
// model's arch.Config. Its runner is Batched (many sequences, a pool of KV
// blocks; one sequence is a batch of one). It imports no model package.
package forward

import (
	"fmt"

	"inferno/arch"
	"inferno/backend"
	"inferno/batch"
	"inferno/kvcache"
	"inferno/numfmt"
)

// Features are the options of package arch this package executes: those
// of arch.Dense, attention without QK-norm, Q/K/V biases, normal
// (adjacent pairs) RoPE, partial RoPE, linear, YaRN, Llama 3's and
// LongRoPE scaling, GeGLU and OpenAI's clamped SwiGLU, mixtures of experts with
// softmax gating (over all experts or the top k) and biases, a scaled
// embedding, an attention scale, sinks and sliding windows, an attention
// output bias and post-norms.
const Features = arch.Dense | arch.FeatPlainQK | arch.FeatBias | arch.FeatRopeNormal | arch.FeatRopeLinear |
	arch.FeatRopeYaRN | arch.FeatRopeLlama3 | arch.FeatGeGLU | arch.FeatSwiGLUOAI | arch.FeatMoESoftmax |
	arch.FeatMoESoftmaxTopK | arch.FeatMoEBias | arch.FeatAttnScale | arch.FeatEmbedScale | arch.FeatPostNorm |
	arch.FeatOutBias | arch.FeatSinks | arch.FeatSWA | arch.FeatPartialRope | arch.FeatRopeLongRoPE

// model is what a pass reads of an arch.Model, looked up once.
type model struct {
	c    *arch.Config
	plan []arch.Step
	w    *arch.Weights
	// moe views the expert stacks by expert, a layer each, with experts.
	moe []moeLayer
}

// newModel looks m's description up and checks that this package runs it:
// its configuration (valid, of Features), its weights (arch.Weights.Check)
// and its plan (the operations of a dense layer, on layers it has).
func newModel(m arch.Model) (*model, error) {
	md := &model{c: m.Hyper(), plan: m.Plan(), w: m.Tensors()}
	c := md.c
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := c.Check("CPU", Features); err != nil {
		return nil, err
	}
	if err := md.w.Check(c); err != nil {
		return nil, err
	}
	for _, st := range md.plan {
		switch st.Op {
		case arch.OpQKV, arch.OpAttention, arch.OpOut, arch.OpGateUp, arch.OpDown:
		case arch.OpMoE:
			if !c.MoE.Enabled() {
				return nil, fmt.Errorf("%s: the CPU backend does not run the operation %v in a dense model", c.Arch, st.Op)
			}
		default:
			return nil, fmt.Errorf("%s: the CPU backend does not run the operation %v", c.Arch, st.Op)
		}
		if st.Layer < 0 || st.Layer >= c.Layers {
			return nil, fmt.Errorf("%s: a step of the plan is on layer %d of %d", c.Arch, st.Layer, c.Layers)
		}
	}
	if c.MoE.Enabled() {
		md.moe = newMoELayers(c, md.w)
	}
	return md, nil
}

// Check returns an error, in one line, if this package cannot run m on
// ops: an option or operation it does not execute (Features), or a matrix
// of a type ops does not compute with (naming the tensor and its type).
// The embedding is only read row by row (dequantized with package numfmt),
// so any type quant knows will do for it, unless it is also the output
// head.
func Check(m arch.Model, ops backend.Ops) error {
	if _, err := newModel(m); err != nil {
		return err
	}
	if err := backend.CheckSupport(ops, m.Tensors().ComputeMatrices()...); err != nil {
		return fmt.Errorf("%s: %w", m.Hyper().Arch, err)
	}
	return nil
}

// kvStore is where a forward pass keeps keys and values: a pool of blocks
// shared by many sequences (kvcache.Pages).
type kvStore interface {
	Type() kvcache.Type
	LayerF32(l int) (k, v []float32)
	LayerF16(l int) (k, v []uint16)
}

// state is the scratch of forward passes over up to batch tokens,
// allocated once and reused, so that a step allocates nothing.
type state struct {
	batch  int       // tokens the buffers hold
	x      []float32 // residual stream, batch x Hidden
	h      []float32 // normalized input of a sub-layer, batch x Hidden
	q      []float32 // queries, batch x QDim
	k, v   []float32 // keys and values before they are stored, batch x KVDim
	kh, vh []uint16  // k and v in half precision, for an F16 cache
	att    []float32 // attention output, batch x QDim
	gate   []float32 // batch x FFN
	up     []float32 // batch x FFN
	out    []float32 // sub-layer output, batch x Hidden
	logits []float32 // outputs x Vocab
	hidden []float32 // hidden rows x Hidden: the final normed states of the batch's Hidden tokens
	runs   []batch.Run
	seqs   []backend.SeqAttn
	lseqs  []backend.SeqAttn // seqs with the window pool's tables
	spans  []span            // where the pass's keys and values go
	// spansDone: spans holds this pass's spans (lspans, with the window
	// pool's tables: lspansDone)
	spansDone, lspansDone bool
	lspans                []span
	moe                   moeScratch
}

// ensure sizes the buffers for n tokens and outs outputs.
func (s *state) ensure(c *arch.Config, n, outs int) {
	if n > s.batch {
		s.batch = n
		s.x = make([]float32, n*c.Hidden)
		s.h = make([]float32, n*c.Hidden)
		s.out = make([]float32, n*c.Hidden)
		s.q = make([]float32, n*c.QDim())
		s.att = make([]float32, n*c.QDim())
		s.k = make([]float32, n*c.KVDim())
		s.v = make([]float32, n*c.KVDim())
		s.kh = make([]uint16, n*c.KVDim())
		s.vh = make([]uint16, n*c.KVDim())
		s.gate = make([]float32, n*c.FFN)
		s.up = make([]float32, n*c.FFN)
	}
	if len(s.logits) < outs*c.Vocab {
		s.logits = make([]float32, outs*c.Vocab)
	}
}

// pass is one forward pass: the model (its configuration, plan and
// weights), the backend, where the keys and values go, and the batch.
type pass struct {
	m   *model
	ops backend.Ops
	kv  kvStore
	// win holds the sliding-window layers' keys and values when they
	// have a pool of their own (nil: kv holds every layer's); slot maps a
	// layer to its index in its pool.
	win  kvStore
	slot []int
	bs   int // positions per KV block
	b    *batch.Batch
	s    *state
}

// forward runs the tokens of b through every layer, storing their keys
// and values through b's block tables in kv (blocks of bs positions), and
// computes the logits of b's outputs into s.logits, output i at
// i*Vocab, and the final normed hidden state of b's Hidden tokens into
// s.hidden, row i at i*Hidden. The batch must be valid (b.Check).
func (p *pass) forward() {
	m, s, b := p.m, p.s, p.b
	c := m.c
	n := len(b.Tokens)
	s.ensure(c, n, len(b.Outputs))
	s.runs = b.Runs(s.runs)
	s.spansDone, s.lspansDone = false, false
	s.seqs, s.lseqs = s.seqs[:0], s.lseqs[:0]
	for _, r := range s.runs {
		s.seqs = append(s.seqs, backend.SeqAttn{Token: r.Start, N: r.N, Pos: r.Pos, Table: b.Tables[r.Seq]})
		if p.win != nil {
			lt := b.Tables[r.Seq]
			if b.LocalTables != nil {
				lt = b.LocalTables[r.Seq]
			}
			s.lseqs = append(s.lseqs, backend.SeqAttn{Token: r.Start, N: r.N, Pos: r.Pos, Table: lt})
		}
	}
	x := s.x[:n*c.Hidden]
	for t, id := range b.Tokens {
		// Validated by the caller, and the matrix type at load: no error here.
		_ = numfmt.DequantizeRow(x[t*c.Hidden:(t+1)*c.Hidden], m.w.Embed.Row(int(id)), m.w.Embed.Type, c.Hidden)
	}
	if c.EmbedScale != 0 {
		for i := range x {
			x[i] *= c.EmbedScale
		}
	}
	for _, st := range m.plan {
		p.step(st, x)
	}
	// The head runs on the output rows only, gathered after the final norm.
	h := s.h[:len(b.Outputs)*c.Hidden]
	for i, t := range b.Outputs {
		p.ops.RMSNorm(h[i*c.Hidden:(i+1)*c.Hidden], x[int(t)*c.Hidden:(int(t)+1)*c.Hidden], m.w.OutputNorm, c.Eps)
	}
	if len(b.Outputs) > 0 {
		p.ops.MatMul(s.logits[:len(b.Outputs)*c.Vocab], m.w.Output, h, len(b.Outputs))
	}
	// Embeddings: the final norm of the hidden rows, without the head.
	if len(s.hidden) < len(b.Hidden)*c.Hidden {
		s.hidden = make([]float32, len(b.Hidden)*c.Hidden)
	}
	for i, t := range b.Hidden {
		p.ops.RMSNorm(s.hidden[i*c.Hidden:(i+1)*c.Hidden], x[int(t)*c.Hidden:(int(t)+1)*c.Hidden], m.w.OutputNorm, c.Eps)
	}
}

// step runs one operation of the plan on the residual stream x of the
// batch's tokens.
func (p *pass) step(st arch.Step, x []float32) {
	c := p.m.c
	l := &p.m.w.Layers[st.Layer]
	n := len(p.b.Tokens)
	h, out := p.s.h[:n*c.Hidden], p.s.out[:n*c.Hidden]
	switch st.Op {
	case arch.OpQKV:
		p.ops.RMSNorm(h, x, l.Vector(arch.RoleAttnNorm), c.Eps)
		p.ops.MatMul(p.s.q[:n*c.QDim()], l.Matrix(arch.RoleQ), h, n)
		p.ops.MatMul(p.s.k[:n*c.KVDim()], l.Matrix(arch.RoleK), h, n)
		p.ops.MatMul(p.s.v[:n*c.KVDim()], l.Matrix(arch.RoleV), h, n)
		if c.Bias {
			p.addBias(p.s.q[:n*c.QDim()], l.Vector(arch.RoleQBias))
			p.addBias(p.s.k[:n*c.KVDim()], l.Vector(arch.RoleKBias))
			p.addBias(p.s.v[:n*c.KVDim()], l.Vector(arch.RoleVBias))
		}
	case arch.OpAttention:
		p.attention(st.Layer, l)
	case arch.OpOut:
		p.ops.MatMul(out, l.Matrix(arch.RoleO), p.s.att[:n*c.QDim()], n)
		if c.OutBias {
			p.addBias(out, l.Vector(arch.RoleOBias))
		}
		p.residual(x, out, l.Vector(arch.RoleAttnPostNorm))
	case arch.OpGateUp:
		p.ops.RMSNorm(h, x, l.Vector(arch.RoleFFNNorm), c.Eps)
		gate, up := p.s.gate[:n*c.FFN], p.s.up[:n*c.FFN]
		p.ops.MatMul(gate, l.Matrix(arch.RoleGate), h, n)
		p.ops.MatMul(up, l.Matrix(arch.RoleUp), h, n)
		p.glu(gate, up)
	case arch.OpDown:
		p.ops.MatMul(out, l.Matrix(arch.RoleDown), p.s.gate[:n*c.FFN], n)
		p.residual(x, out, l.Vector(arch.RoleFFNPostNorm))
	case arch.OpMoE:
		p.moe(st.Layer, l, x)
	default:
		// check refuses a plan with other operations before a pass runs.
		panic(fmt.Sprintf("forward: unknown operation %v", st.Op))
	}
}

// residual adds a sub-layer's output out to the residual stream x: as it
// is, or with Config.PostNorm normalized and multiplied by postNorm (the
// sub-layer's post-norm gains), in place.
func (p *pass) residual(x, out, postNorm []float32) {
	if p.m.c.PostNorm {
		p.ops.RMSNorm(out, out, postNorm, p.m.c.Eps)
	}
	p.ops.Add(x, out)
}

// glu computes the gated activation of Config.Act into gate.
func (p *pass) glu(gate, up []float32) {
	switch p.m.c.Act {
	case arch.GeGLU:
		p.ops.GeGLU(gate, gate, up)
	case arch.SwiGLUOAI:
		p.ops.SwiGLUOAI(gate, gate, up)
	default:
		p.ops.SwiGLU(gate, gate, up)
	}
}

// addBias adds bias to each token's row of x (rows of len(bias) values).
func (p *pass) addBias(x, bias []float32) {
	for t := 0; t < len(x); t += len(bias) {
		p.ops.Add(x[t:t+len(bias)], bias)
	}
}

// attention normalizes (with QK-norm) and rotates the batch's queries and
// keys (in the scratch buffers q and k) with layer i's RoPE, stores the
// keys and values of layer i in their sequences' blocks (an F16 cache
// rounds them as it stores them), and computes each token's attention
// over its sequence (its window on a local layer, with the layer's sinks)
// into att.
func (p *pass) attention(i int, l *arch.Layer) {
	c := p.m.c
	s, b := p.s, p.b
	n, kvDim := len(b.Tokens), c.KVDim()
	q, k, v := s.q[:n*c.QDim()], s.k[:n*kvDim], s.v[:n*kvDim]
	if c.QKNorm {
		p.ops.RMSNorm(q, q, l.Vector(arch.RoleQNorm), c.Eps)
		p.ops.RMSNorm(k, k, l.Vector(arch.RoleKNorm), c.Eps)
	}
	rope, rot := c.LayerRope(i), c.RotaryDims()
	p.ops.RoPE(q, b.Pos, c.Heads, c.HeadDim, rot, rope)
	p.ops.RoPE(k, b.Pos, c.KVHeads, c.HeadDim, rot, rope)
	opt := backend.AttnOpts{Scale: c.AttnScale, Window: c.LayerWindow(i)}
	if c.Sinks {
		opt.Sinks = l.Vector(arch.RoleSinks)
	}
	att := s.att[:n*c.QDim()]
	kv, li, seqs, local := p.kv, i, s.seqs, false
	if p.win != nil {
		li, local = p.slot[i], c.LayerWindow(i) > 0
		if local {
			kv, seqs = p.win, s.lseqs
		}
	}
	if kv.Type() == kvcache.F16 {
		// Rounded in one call each (split among the threads of a long
		// prompt), then placed head by head.
		kh, vh := s.kh[:len(k)], s.vh[:len(v)]
		p.ops.ToF16(kh, k)
		p.ops.ToF16(vh, v)
		kc, vc := kv.LayerF16(li)
		for _, sp := range p.spans(local) {
			copy(kc[sp.dst:sp.dst+sp.n], kh[sp.src:sp.src+sp.n])
			copy(vc[sp.dst:sp.dst+sp.n], vh[sp.src:sp.src+sp.n])
		}
		p.ops.AttentionF16(att, q, kc, vc, seqs, p.bs, c.Heads, c.KVHeads, c.HeadDim, opt)
	} else {
		kc, vc := kv.LayerF32(li)
		for _, sp := range p.spans(local) {
			copy(kc[sp.dst:sp.dst+sp.n], k[sp.src:sp.src+sp.n])
			copy(vc[sp.dst:sp.dst+sp.n], v[sp.src:sp.src+sp.n])
		}
		p.ops.Attention(att, q, kc, vc, seqs, p.bs, c.Heads, c.KVHeads, c.HeadDim, opt)
	}
}

// A span is a piece of the batch's new keys (or values) that lands in one
// place: n values from src in the batch's scratch to dst in a layer's
// storage, one token's values of one KV head (backend.KVIndex).
type span struct{ src, dst, n int }

// spans returns where the batch's keys and values go, one span per token
// and KV head, in the main pool or (local) the window pool; the
// same for every layer of the pool, computed once a pass.
func (p *pass) spans(local bool) []span {
	s := p.s
	if local {
		if !s.lspansDone {
			s.lspans = p.spansOf(s.lspans[:0], s.lseqs)
			s.lspansDone = true
		}
		return s.lspans
	}
	if !s.spansDone {
		s.spans = p.spansOf(s.spans[:0], s.seqs)
		s.spansDone = true
	}
	return s.spans
}

// spansOf appends the spans of the runs seqs to dst.
func (p *pass) spansOf(dst []span, seqs []backend.SeqAttn) []span {
	c := p.m.c
	hd, dim := c.HeadDim, c.KVDim()
	for _, r := range seqs {
		for t := range r.N {
			pos := r.Pos + t
			row := int(r.Table[pos/p.bs])*p.bs + pos%p.bs
			for g := range c.KVHeads {
				dst = append(dst, span{
					src: (r.Token+t)*dim + g*hd,
					dst: backend.KVIndex(row, g, p.bs, c.KVHeads, hd),
					n:   hd,
				})
			}
		}
	}
	return dst
}
