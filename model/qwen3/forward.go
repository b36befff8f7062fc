package qwen3

import (
	"fmt"

	"inferno/backend"
	"inferno/batch"
	"inferno/kvcache"
	"inferno/quant"
)

// kvStore is where a forward pass keeps keys and values: one sequence's
// growing contiguous cache (kvcache.Basic, one block) or a pool of blocks
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
	att    []float32 // attention output, batch x QDim
	gate   []float32 // batch x FFN
	up     []float32 // batch x FFN
	out    []float32 // sub-layer output, batch x Hidden
	logits []float32 // outputs x Vocab
	runs   []batch.Run
	seqs   []backend.SeqAttn
	spans  []span // where the pass's keys and values go
	// spansDone: spans holds this pass's spans
	spansDone bool
}

// ensure sizes the buffers for n tokens and outs outputs.
func (s *state) ensure(c *Config, n, outs int) {
	if n > s.batch {
		s.batch = n
		s.x = make([]float32, n*c.Hidden)
		s.h = make([]float32, n*c.Hidden)
		s.out = make([]float32, n*c.Hidden)
		s.q = make([]float32, n*c.QDim())
		s.att = make([]float32, n*c.QDim())
		s.k = make([]float32, n*c.KVDim())
		s.v = make([]float32, n*c.KVDim())
		s.gate = make([]float32, n*c.FFN)
		s.up = make([]float32, n*c.FFN)
	}
	if len(s.logits) < outs*c.Vocab {
		s.logits = make([]float32, outs*c.Vocab)
	}
}

// pass is one forward pass: the model, the backend, where the keys and
// values go, and the batch.
type pass struct {
	m   *Model
	ops backend.Ops
	kv  kvStore
	bs  int // positions per KV block
	b   *batch.Batch
	s   *state
}

// forward runs the tokens of b through every layer, storing their keys
// and values through b's block tables in kv (blocks of bs positions), and
// computes the logits of b's outputs into s.logits, output i at
// i*Vocab. The batch must be valid (b.Check).
func (p *pass) forward() {
	m, s, b := p.m, p.s, p.b
	c := &m.Config
	n := len(b.Tokens)
	s.ensure(c, n, len(b.Outputs))
	s.runs = b.Runs(s.runs)
	s.spansDone = false
	s.seqs = s.seqs[:0]
	for _, r := range s.runs {
		s.seqs = append(s.seqs, backend.SeqAttn{Token: r.Start, N: r.N, Pos: r.Pos, Table: b.Tables[r.Seq]})
	}
	x := s.x[:n*c.Hidden]
	for t, id := range b.Tokens {
		// Validated by the caller, and the matrix type at load: no error here.
		_ = quant.DequantizeRow(x[t*c.Hidden:(t+1)*c.Hidden], m.Embed.Row(int(id)), m.Embed.Type, c.Hidden)
	}
	for _, st := range m.Plan() {
		p.step(st, x)
	}
	// The head runs on the output rows only, gathered after the final norm.
	h := s.h[:len(b.Outputs)*c.Hidden]
	for i, t := range b.Outputs {
		p.ops.RMSNorm(h[i*c.Hidden:(i+1)*c.Hidden], x[int(t)*c.Hidden:(int(t)+1)*c.Hidden], m.OutputNorm, c.Eps)
	}
	p.ops.MatMul(s.logits[:len(b.Outputs)*c.Vocab], m.Output, h, len(b.Outputs))
}

// step runs one operation of the plan on the residual stream x of the
// batch's tokens.
func (p *pass) step(st Step, x []float32) {
	c := &p.m.Config
	l := &p.m.Layers[st.Layer]
	n := len(p.b.Tokens)
	h, out := p.s.h[:n*c.Hidden], p.s.out[:n*c.Hidden]
	switch st.Op {
	case OpQKV:
		p.ops.RMSNorm(h, x, l.AttnNorm, c.Eps)
		a := &l.Attention
		p.ops.MatMul(p.s.q[:n*c.QDim()], a.Q, h, n)
		p.ops.MatMul(p.s.k[:n*c.KVDim()], a.K, h, n)
		p.ops.MatMul(p.s.v[:n*c.KVDim()], a.V, h, n)
	case OpAttention:
		p.attention(st.Layer, &l.Attention)
	case OpOut:
		p.ops.MatMul(out, l.Attention.O, p.s.att[:n*c.QDim()], n)
		p.ops.Add(x, out)
	case OpGateUp:
		p.ops.RMSNorm(h, x, l.FFNNorm, c.Eps)
		gate, up := p.s.gate[:n*c.FFN], p.s.up[:n*c.FFN]
		p.ops.MatMul(gate, l.MLP.Gate, h, n)
		p.ops.MatMul(up, l.MLP.Up, h, n)
		p.ops.SwiGLU(gate, gate, up)
	case OpDown:
		p.ops.MatMul(out, l.MLP.Down, p.s.gate[:n*c.FFN], n)
		p.ops.Add(x, out)
	default:
		panic(fmt.Sprintf("qwen3: unknown operation %v", st.Op))
	}
}

// attention normalizes and rotates the batch's queries and keys (in the
// scratch buffers q and k), stores the keys and values of layer i in
// their sequences' blocks (an F16 cache rounds them as it stores them),
// and computes each token's attention over its sequence into att.
func (p *pass) attention(i int, a *Attention) {
	c := &p.m.Config
	s, b := p.s, p.b
	n, kvDim := len(b.Tokens), c.KVDim()
	q, k, v := s.q[:n*c.QDim()], s.k[:n*kvDim], s.v[:n*kvDim]
	p.ops.RMSNorm(q, q, a.QNorm, c.Eps)
	p.ops.RMSNorm(k, k, a.KNorm, c.Eps)
	p.ops.RoPE(q, b.Pos, c.Heads, c.HeadDim, c.RopeTheta)
	p.ops.RoPE(k, b.Pos, c.KVHeads, c.HeadDim, c.RopeTheta)
	att := s.att[:n*c.QDim()]
	if p.kv.Type() == kvcache.F16 {
		kc, vc := p.kv.LayerF16(i)
		for _, sp := range p.spans() {
			p.ops.ToF16(kc[sp.dst:sp.dst+sp.n], k[sp.src:sp.src+sp.n])
			p.ops.ToF16(vc[sp.dst:sp.dst+sp.n], v[sp.src:sp.src+sp.n])
		}
		p.ops.AttentionF16(att, q, kc, vc, s.seqs, p.bs, c.Heads, c.KVHeads, c.HeadDim)
	} else {
		kc, vc := p.kv.LayerF32(i)
		for _, sp := range p.spans() {
			copy(kc[sp.dst:sp.dst+sp.n], k[sp.src:sp.src+sp.n])
			copy(vc[sp.dst:sp.dst+sp.n], v[sp.src:sp.src+sp.n])
		}
		p.ops.Attention(att, q, kc, vc, s.seqs, p.bs, c.Heads, c.KVHeads, c.HeadDim)
	}
}

// A span is a piece of the batch's new keys (or values) that lands in one
// block: n values from src in the batch's scratch to dst in a layer's
// storage.
type span struct{ src, dst, n int }

// spans returns where the batch's keys and values go, one span per run
// and block it touches; the same for every layer, computed once a pass.
func (p *pass) spans() []span {
	s := p.s
	if s.spansDone {
		return s.spans
	}
	dim := p.m.Config.KVDim()
	s.spans = s.spans[:0]
	for _, r := range s.seqs {
		for pos, end := r.Pos, r.Pos+r.N; pos < end; {
			row := pos % p.bs
			n := min(p.bs-row, end-pos)
			blk := int(r.Table[pos/p.bs])
			s.spans = append(s.spans, span{
				src: (r.Token + pos - r.Pos) * dim,
				dst: (blk*p.bs + row) * dim,
				n:   n * dim,
			})
			pos += n
		}
	}
	s.spansDone = true
	return s.spans
}
