package forward

import (
	"math"

	"inferno/arch"
)

// moeLayer is one mixture-of-experts layer's expert matrices, each
// expert's rows of the stacked tensors viewed as a matrix of its own.
type moeLayer struct {
	gate, up, down []arch.Weight // by expert
}

// newMoELayers views the expert stacks of every layer of w by expert:
// expert e of a stack of Experts matrices of r rows is rows e*r to
// (e+1)*r-1, contiguous in the file's encoding. A view keeps its stack's
// name, so that a trace counts a stack's products together.
func newMoELayers(c *arch.Config, w *arch.Weights) []moeLayer {
	views := func(s *arch.Weight, rows int) []arch.Weight {
		vs := make([]arch.Weight, c.MoE.Experts)
		rb := s.RowBytes()
		for e := range vs {
			vs[e] = arch.Weight{
				Name: s.Name,
				Type: s.Type, Rows: rows, Cols: s.Cols,
				Data: s.Data[e*rows*rb : (e+1)*rows*rb],
			}
		}
		return vs
	}
	ls := make([]moeLayer, c.Layers)
	for i := range ls {
		l := &w.Layers[i]
		ls[i] = moeLayer{
			gate: views(l.Matrix(arch.RoleExpertGate), c.MoE.ExpertFFN),
			up:   views(l.Matrix(arch.RoleExpertUp), c.MoE.ExpertFFN),
			down: views(l.Matrix(arch.RoleExpertDown), c.Hidden),
		}
	}
	return ls
}

// moeScratch is the scratch of a mixture-of-experts step over up to batch
// tokens, grown as needed and reused.
type moeScratch struct {
	batch  int
	scores []float32 // router logits, batch x Experts
	// picks are each token's experts, TopK a token, best first, and
	// weights their gating weights.
	picks   []int32
	weights []float32
	// count and start: tokens per expert and where each expert's run
	// begins in order; order lists, expert by expert, the (token, slot)
	// pairs routed to it, as token*TopK + slot, tokens in increasing order.
	count, start []int32
	order        []int32
	hg           []float32 // the routed tokens' normed inputs, batch x Hidden
	gate, up     []float32 // batch x ExpertFFN
	out          []float32 // an expert's outputs, batch x Hidden
	sum          []float32 // the weighted sum of each token's experts, batch x Hidden
	top          []topEntry
}

// topEntry is a candidate of a token's top-k experts.
type topEntry struct {
	score float32
	e     int32
}

func (s *moeScratch) ensure(c *arch.Config, n int) {
	if s.count == nil {
		s.count = make([]int32, c.MoE.Experts)
		s.start = make([]int32, c.MoE.Experts+1)
		s.top = make([]topEntry, 0, c.MoE.TopK+1)
	}
	if n <= s.batch {
		return
	}
	s.batch = n
	k := c.MoE.TopK
	s.scores = make([]float32, n*c.MoE.Experts)
	s.picks = make([]int32, n*k)
	s.weights = make([]float32, n*k)
	s.order = make([]int32, n*k)
	s.hg = make([]float32, n*c.Hidden)
	s.gate = make([]float32, n*c.MoE.ExpertFFN)
	s.up = make([]float32, n*c.MoE.ExpertFFN)
	s.out = make([]float32, n*c.Hidden)
	s.sum = make([]float32, n*c.Hidden)
}

// moe runs OpMoE of layer i on the residual stream x: h = RMSNorm(x) *
// FFNNorm; the router picks each token's TopK experts (route); the
// batch's tokens are grouped by expert, so that each chosen expert's
// matrices are read once for all its tokens, and an expert no token chose
// is not read at all; x += each token's sum of its experts' outputs
// weighted by their gating weights, added in increasing expert order. A
// token's bits depend only on its own values: products are per token on
// every backend, and the sum's order is the token's own.
func (p *pass) moe(i int, l *arch.Layer, x []float32) {
	c := p.m.c
	mc := &c.MoE
	n := len(p.b.Tokens)
	ms := &p.s.moe
	ms.ensure(c, n)
	h := p.s.h[:n*c.Hidden]
	p.ops.RMSNorm(h, x, l.Vector(arch.RoleFFNNorm), c.Eps)
	p.ops.MatMul(ms.scores[:n*mc.Experts], l.Matrix(arch.RoleRouter), h, n)
	var gateBias, upBias, downBias []float32
	if mc.Bias {
		p.addBias(ms.scores[:n*mc.Experts], l.Vector(arch.RoleRouterBias))
		gateBias, upBias, downBias = l.Vector(arch.RoleExpertGateBias), l.Vector(arch.RoleExpertUpBias), l.Vector(arch.RoleExpertDownBias)
	}
	for t := range n {
		ms.route(mc, t)
	}
	ms.group(mc, n)
	sum := ms.sum[:n*c.Hidden]
	clear(sum)
	el := &p.m.moe[i]
	for e := range mc.Experts {
		routed := ms.order[ms.start[e]:ms.start[e+1]]
		m := len(routed)
		if m == 0 {
			continue
		}
		hg := ms.hg[:m*c.Hidden]
		for j, ts := range routed {
			t := int(ts) / mc.TopK
			copy(hg[j*c.Hidden:(j+1)*c.Hidden], h[t*c.Hidden:(t+1)*c.Hidden])
		}
		gate, up := ms.gate[:m*mc.ExpertFFN], ms.up[:m*mc.ExpertFFN]
		p.ops.MatMul(gate, &el.gate[e], hg, m)
		p.ops.MatMul(up, &el.up[e], hg, m)
		if mc.Bias {
			p.addBias(gate, gateBias[e*mc.ExpertFFN:(e+1)*mc.ExpertFFN])
			p.addBias(up, upBias[e*mc.ExpertFFN:(e+1)*mc.ExpertFFN])
		}
		p.glu(gate, up)
		out := ms.out[:m*c.Hidden]
		p.ops.MatMul(out, &el.down[e], gate, m)
		if mc.Bias {
			p.addBias(out, downBias[e*c.Hidden:(e+1)*c.Hidden])
		}
		for j, ts := range routed {
			t := int(ts) / mc.TopK
			w := ms.weights[ts]
			dst, src := sum[t*c.Hidden:(t+1)*c.Hidden], out[j*c.Hidden:(j+1)*c.Hidden]
			for k, v := range src {
				dst[k] += float32(w * v)
			}
		}
	}
	p.residual(x, sum, l.Vector(arch.RoleFFNPostNorm))
}

// route picks token t's experts from its router logits (ms.scores): the
// TopK largest, the lowest index first among equals, as torch.topk and
// llama.cpp's argsort pick them; their weights are the softmax over all
// experts, renormalized over the chosen ones with NormTopK, or the
// softmax over the chosen ones' logits with GateSoftmaxTopK (the same
// numbers: computed in float64 from the logits, the softmax's denominator
// cancels).
func (ms *moeScratch) route(mc *arch.MoE, t int) {
	scores := ms.scores[t*mc.Experts : (t+1)*mc.Experts]
	top := ms.top[:0]
	for e, s := range scores {
		if len(top) == mc.TopK && !(s > top[len(top)-1].score) {
			continue
		}
		// Insert after every entry of a larger or equal score.
		j := len(top)
		for j > 0 && s > top[j-1].score {
			j--
		}
		if len(top) < mc.TopK {
			top = append(top, topEntry{})
		}
		copy(top[j+1:], top[j:len(top)-1])
		top[j] = topEntry{s, int32(e)}
	}
	ms.top = top
	best := float64(top[0].score)
	var total float64
	if mc.NormTopK || mc.Gating == arch.GateSoftmaxTopK {
		for _, te := range top {
			total += math.Exp(float64(te.score) - best)
		}
	} else {
		for _, s := range scores {
			total += math.Exp(float64(s) - best)
		}
	}
	picks, weights := ms.picks[t*mc.TopK:(t+1)*mc.TopK], ms.weights[t*mc.TopK:(t+1)*mc.TopK]
	for j, te := range top {
		picks[j] = te.e
		weights[j] = float32(math.Exp(float64(te.score)-best) / total)
	}
}

// group lists, expert by expert, the (token, slot) pairs routed to each
// (ms.order, ms.start), tokens in increasing order: a counting sort.
func (ms *moeScratch) group(mc *arch.MoE, n int) {
	clear(ms.count)
	picks := ms.picks[:n*mc.TopK]
	for _, e := range picks {
		ms.count[e]++
	}
	ms.start[0] = 0
	for e, k := range ms.count {
		ms.start[e+1] = ms.start[e] + k
	}
	copy(ms.count, ms.start[:mc.Experts]) // next free place per expert
	for ts, e := range picks {
		ms.order[ms.count[e]] = int32(ts)
		ms.count[e]++
	}
}
