package qwen3

import (
	"fmt"

	"inferno/backend"
	"inferno/kvcache"
	"inferno/quant"
	"inferno/sampling"
)

// maxBatch is the most prompt tokens one forward pass processes at once;
// longer prompts run in chunks of this size with identical results.
const maxBatch = 512

// Runner runs a Model on a CPU backend for one sequence: it owns the KV
// cache and the scratch activations, allocated once and reused, so a decode
// step allocates nothing.
type Runner struct {
	m     *Model
	ops   backend.Ops
	cache *kvcache.Basic

	batch  int       // tokens the scratch buffers hold
	x      []float32 // residual stream, batch x Hidden
	h      []float32 // normalized input of a sub-layer, batch x Hidden
	q      []float32 // queries, batch x QDim
	k, v   []float32 // keys and values before an F16 cache stores them, batch x KVDim
	att    []float32 // attention output, batch x QDim
	gate   []float32 // batch x FFN
	up     []float32 // batch x FFN
	out    []float32 // sub-layer output, batch x Hidden
	logits []float32 // Vocab
}

// NewRunner returns a runner of m on ops whose sequences may grow to maxLen
// positions (at most the model's context length; 0 means that length). Its
// KV cache stores float32 keys and values.
func NewRunner(m *Model, ops backend.Ops, maxLen int) *Runner {
	return NewRunnerKV(m, ops, maxLen, kvcache.F32)
}

// NewRunnerKV is NewRunner with a KV cache of element type kv. With
// kvcache.F16 the keys (after K-norm and RoPE) and values are rounded to
// half precision as they are stored, and attention reads them back widened,
// every position alike, so a prompt run at once or token by token gives
// the same bits.
func NewRunnerKV(m *Model, ops backend.Ops, maxLen int, kv kvcache.Type) *Runner {
	c := &m.Config
	if maxLen <= 0 || maxLen > c.ContextLength {
		maxLen = c.ContextLength
	}
	return &Runner{
		m:      m,
		ops:    ops,
		cache:  kvcache.NewBasic(c.Layers, c.KVDim(), maxLen, kv),
		logits: make([]float32, c.Vocab),
	}
}

// Backend returns the name of the backend the runner computes with.
func (r *Runner) Backend() string { return r.ops.Name() }

// KVType returns the element type of the KV cache.
func (r *Runner) KVType() kvcache.Type { return r.cache.Type() }

// SplitInvariant reports true: the logits of a position do not depend on
// how the sequence's positions were split into forward passes (the
// batched kernels give the bits of token-by-token ones), so a cached
// prefix may be kept. It implements engine.SplitInvariant.
func (r *Runner) SplitInvariant() bool { return true }

// Vocab returns the number of logits a position has.
func (r *Runner) Vocab() int { return r.m.Config.Vocab }

// Len returns the number of positions in the sequence so far.
func (r *Runner) Len() int { return r.cache.Len() }

// MaxLen returns the most positions the sequence may hold.
func (r *Runner) MaxLen() int { return r.cache.MaxLen() }

// Reset starts a new, empty sequence.
func (r *Runner) Reset() { r.cache.Reset() }

// Truncate keeps the first n positions of the sequence and drops the rest.
func (r *Runner) Truncate(n int) error {
	if n < 0 || n > r.cache.Len() {
		return fmt.Errorf("qwen3: cannot truncate a sequence of %d positions to %d", r.cache.Len(), n)
	}
	r.cache.SetLen(n)
	return nil
}

// Close stops the backend's workers, if it has any. The runner must not be
// used afterwards.
func (r *Runner) Close() error {
	if c, ok := r.ops.(interface{ Close() }); ok {
		c.Close()
	}
	return nil
}

// Logits returns the logits of the last position run. The slice is reused
// by the next Forward.
func (r *Runner) Logits() ([]float32, error) { return r.logits, nil }

// Greedy returns the id with the largest logit of the last position, the
// lowest id among ties.
func (r *Runner) Greedy() (int32, error) { return sampling.Argmax(r.logits), nil }

// Forward appends tokens to the sequence, runs them through the model and
// leaves the logits of the last one ready for Logits and Greedy.
func (r *Runner) Forward(tokens []int32) error {
	if len(tokens) == 0 {
		return fmt.Errorf("qwen3: forward of no tokens")
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= r.m.Config.Vocab {
			return fmt.Errorf("qwen3: token id %d is outside the vocabulary [0, %d)", t, r.m.Config.Vocab)
		}
	}
	pos := r.cache.Len()
	if err := r.cache.Reserve(pos + len(tokens)); err != nil {
		return fmt.Errorf("qwen3: %w", err)
	}
	for len(tokens) > 0 {
		n := min(len(tokens), maxBatch)
		r.m.Forward(r, tokens[:n], pos)
		tokens, pos = tokens[n:], pos+n
		r.cache.SetLen(pos)
	}
	return nil
}

// ensure sizes the scratch buffers for n tokens.
func (r *Runner) ensure(n int) {
	if n <= r.batch {
		return
	}
	c := &r.m.Config
	r.batch = n
	r.x = make([]float32, n*c.Hidden)
	r.h = make([]float32, n*c.Hidden)
	r.out = make([]float32, n*c.Hidden)
	r.q = make([]float32, n*c.QDim())
	r.att = make([]float32, n*c.QDim())
	if r.cache.Type() == kvcache.F16 {
		r.k = make([]float32, n*c.KVDim())
		r.v = make([]float32, n*c.KVDim())
	}
	r.gate = make([]float32, n*c.FFN)
	r.up = make([]float32, n*c.FFN)
}

// Forward runs tokens at positions pos.. through every layer and computes
// the logits of the last token into r.logits. The cache must have room.
func (m *Model) Forward(r *Runner, tokens []int32, pos int) {
	c := &m.Config
	n := len(tokens)
	r.ensure(n)
	x := r.x[:n*c.Hidden]
	for t, id := range tokens {
		// Validated by the caller, and the matrix type at load: no error here.
		_ = quant.DequantizeRow(x[t*c.Hidden:(t+1)*c.Hidden], m.Embed.Row(int(id)), m.Embed.Type, c.Hidden)
	}
	for i := range m.Layers {
		m.Layers[i].Forward(r, i, x, n, pos)
	}
	last := x[(n-1)*c.Hidden:]
	h := r.h[:c.Hidden]
	r.ops.RMSNorm(h, last, m.OutputNorm, c.Eps)
	r.ops.MatMul(r.logits, m.Output, h, 1)
}

// Forward runs layer i on the residual stream x of n tokens at positions pos...
func (l *Layer) Forward(r *Runner, i int, x []float32, n, pos int) {
	c := &r.m.Config
	h, out := r.h[:n*c.Hidden], r.out[:n*c.Hidden]
	r.ops.RMSNorm(h, x, l.AttnNorm, c.Eps)
	l.Attention.Forward(r, i, out, h, n, pos)
	r.ops.Add(x, out)
	r.ops.RMSNorm(h, x, l.FFNNorm, c.Eps)
	l.MLP.Forward(r, out, h, n)
	r.ops.Add(x, out)
}

// Forward computes self-attention of layer i for n tokens of h into out,
// appending their keys and values to the cache. A float32 cache receives
// them directly; for an F16 cache they are computed in scratch buffers and
// then converted into it.
func (a *Attention) Forward(r *Runner, i int, out, h []float32, n, pos int) {
	c := &r.m.Config
	kvDim := c.KVDim()
	f16 := r.cache.Type() == kvcache.F16
	q := r.q[:n*c.QDim()]
	var k, v, kc, vc []float32
	var kh, vh []uint16
	if f16 {
		k, v = r.k[:n*kvDim], r.v[:n*kvDim]
		kh, vh = r.cache.LayerF16(i)
	} else {
		kc, vc = r.cache.LayerF32(i)
		k, v = kc[pos*kvDim:(pos+n)*kvDim], vc[pos*kvDim:(pos+n)*kvDim]
	}
	r.ops.MatMul(q, a.Q, h, n)
	r.ops.MatMul(k, a.K, h, n)
	r.ops.MatMul(v, a.V, h, n)
	r.ops.RMSNorm(q, q, a.QNorm, c.Eps)
	r.ops.RMSNorm(k, k, a.KNorm, c.Eps)
	r.ops.RoPE(q, n, c.Heads, c.HeadDim, pos, c.RopeTheta)
	r.ops.RoPE(k, n, c.KVHeads, c.HeadDim, pos, c.RopeTheta)
	att := r.att[:n*c.QDim()]
	if f16 {
		r.ops.ToF16(kh[pos*kvDim:(pos+n)*kvDim], k)
		r.ops.ToF16(vh[pos*kvDim:(pos+n)*kvDim], v)
		r.ops.AttentionF16(att, q, kh[:(pos+n)*kvDim], vh[:(pos+n)*kvDim], n, pos, c.Heads, c.KVHeads, c.HeadDim)
	} else {
		r.ops.Attention(att, q, kc[:(pos+n)*kvDim], vc[:(pos+n)*kvDim], n, pos, c.Heads, c.KVHeads, c.HeadDim)
	}
	r.ops.MatMul(out, a.O, att, n)
}

// Forward computes the SwiGLU feed-forward of n tokens of h into out.
func (m *MLP) Forward(r *Runner, out, h []float32, n int) {
	c := &r.m.Config
	gate, up := r.gate[:n*c.FFN], r.up[:n*c.FFN]
	r.ops.MatMul(gate, m.Gate, h, n)
	r.ops.MatMul(up, m.Up, h, n)
	r.ops.SwiGLU(gate, gate, up)
	r.ops.MatMul(out, m.Down, gate, n)
}
