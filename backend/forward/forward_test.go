package forward_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/forward"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/internal/glutest"
	"inferno/backend/pool"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/batch"
	"inferno/gguf"
	"inferno/internal/floatbits"
	"inferno/kvcache"
)

// model is an arch.Model held in memory: F32 weights of random values.
type model struct {
	c    arch.Config
	w    arch.Weights
	plan []arch.Step
}

func (m *model) Hyper() *arch.Config    { return &m.c }
func (m *model) Plan() []arch.Step      { return m.plan }
func (m *model) Tensors() *arch.Weights { return &m.w }

// newModel returns a model of c with random weights: every role of c's
// layers, norm gains near 1.
func newModel(c arch.Config, seed uint64) *model {
	rng := rand.New(rand.NewPCG(seed, 7))
	matrix := func(r arch.Role, layer int) *arch.Weight {
		rows, cols, experts := c.Shape(r)
		data := make([]byte, 4*rows*cols*experts)
		for i := 0; i < len(data); i += 4 {
			binary.LittleEndian.PutUint32(data[i:], math.Float32bits(float32(0.15*rng.NormFloat64())))
		}
		return &arch.Weight{Name: r.Tensor(layer), Type: gguf.TensorF32, Rows: rows * experts, Cols: cols, Data: data}
	}
	vector := func(r arch.Role) []float32 {
		rows, _, experts := c.Shape(r)
		v := make([]float32, rows*experts)
		for i := range v {
			switch r {
			case arch.RoleQBias, arch.RoleKBias, arch.RoleVBias, arch.RoleOBias, arch.RoleRouterBias,
				arch.RoleExpertGateBias, arch.RoleExpertUpBias, arch.RoleExpertDownBias:
				v[i] = float32(0.5 * rng.NormFloat64())
			case arch.RoleSinks:
				v[i] = float32(1 + rng.NormFloat64())
			default:
				v[i] = float32(1 + 0.1*rng.NormFloat64())
			}
		}
		return v
	}
	m := &model{c: c, plan: arch.NewPlan(&c)}
	m.w.Embed = matrix(arch.RoleEmbed, 0)
	m.w.Output = m.w.Embed
	if !c.TiedOutput {
		m.w.Output = matrix(arch.RoleOutput, 0)
	}
	m.w.OutputNorm = vector(arch.RoleOutputNorm)
	m.w.Layers = make([]arch.Layer, c.Layers)
	for i := range m.w.Layers {
		l := &m.w.Layers[i]
		for _, r := range c.LayerRoles() {
			if r.Vector() {
				l.SetVector(r, vector(r))
			} else {
				l.SetMatrix(r, matrix(r, i))
			}
		}
	}
	return m
}

// small is a Qwen3-like configuration.
func small() arch.Config {
	return arch.Config{Arch: "test", Layers: 2, Hidden: 64, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 16, Vocab: 40,
		ContextLength: 64, Eps: 1e-6, QKNorm: true, Rope: arch.Rope{Theta: 10000}}
}

// reference computes the logits of every position of tokens in float64,
// straight from the description: the computation of package arch's doc
// comment, one token at a time, with the options of arch.Config as
// transformers computes them (Gemma 3's scaled embeddings, post-norms and
// sliding windows with a RoPE of their own, gpt-oss's sinks and output
// bias, partial RoPE, YaRN).
func reference(m *model, tokens []int32) [][]float64 {
	c, w := &m.c, &m.w
	row := func(wt *arch.Weight, r int) []float64 {
		v := make([]float64, wt.Cols)
		for i := range v {
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(wt.Data[4*(r*wt.Cols+i):])))
		}
		return v
	}
	matvec := func(wt *arch.Weight, x []float64) []float64 {
		y := make([]float64, wt.Rows)
		for r := range y {
			for i, a := range row(wt, r) {
				y[r] += a * x[i]
			}
		}
		return y
	}
	rmsnorm := func(x []float64, gain []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+float64(c.Eps))
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = v * s * float64(gain[i])
		}
		return y
	}
	add := func(x []float64, b []float32) {
		for i := range x {
			x[i] += float64(b[i])
		}
	}
	// perHead applies f to each head of x.
	perHead := func(x []float64, f func([]float64) []float64) {
		for h := 0; h < len(x); h += c.HeadDim {
			copy(x[h:h+c.HeadDim], f(x[h:h+c.HeadDim]))
		}
	}
	rope := func(r *arch.Rope, pos int) func([]float64) []float64 {
		return func(x []float64) []float64 {
			d := c.HeadDim // the rotated values of a head
			if c.RopeDims != 0 {
				d = c.RopeDims
			}
			half := d / 2
			y := append([]float64(nil), x...)
			for i := range half {
				a := float64(pos) * refFreq(r, i, d)
				m := refMscale(r)
				j, k := i, i+half // NeoX: rotate_half
				if r.Style == arch.RopeNormal {
					j, k = 2*i, 2*i+1
				}
				y[j] = x[j]*math.Cos(a)*m - x[k]*math.Sin(a)*m
				y[k] = x[j]*math.Sin(a)*m + x[k]*math.Cos(a)*m
			}
			return y
		}
	}
	scaleAttn := 1 / math.Sqrt(float64(c.HeadDim))
	if c.AttnScale != 0 {
		scaleAttn = float64(c.AttnScale)
	}
	keys := make([][][]float64, c.Layers)
	values := make([][][]float64, c.Layers)
	var out [][]float64
	for pos, tok := range tokens {
		x := row(w.Embed, int(tok))
		if c.EmbedScale != 0 {
			for j := range x {
				x[j] *= float64(c.EmbedScale)
			}
		}
		for i := range w.Layers {
			l := &w.Layers[i]
			// The layer's RoPE and window, from the configuration's fields.
			r, window := &c.Rope, 0
			if c.Local != nil && c.Local[i] {
				window = c.Window
				if c.LocalRope.Theta != 0 {
					r = &c.LocalRope
				}
			}
			h := rmsnorm(x, l.Vector(arch.RoleAttnNorm))
			q, k, v := matvec(l.Matrix(arch.RoleQ), h), matvec(l.Matrix(arch.RoleK), h), matvec(l.Matrix(arch.RoleV), h)
			if c.Bias {
				add(q, l.Vector(arch.RoleQBias))
				add(k, l.Vector(arch.RoleKBias))
				add(v, l.Vector(arch.RoleVBias))
			}
			if c.QKNorm {
				perHead(q, func(x []float64) []float64 { return rmsnorm(x, l.Vector(arch.RoleQNorm)) })
				perHead(k, func(x []float64) []float64 { return rmsnorm(x, l.Vector(arch.RoleKNorm)) })
			}
			perHead(q, rope(r, pos))
			perHead(k, rope(r, pos))
			keys[i], values[i] = append(keys[i], k), append(values[i], v)
			att := make([]float64, c.QDim())
			lo := 0 // the first position the window holds
			if window > 0 {
				lo = max(0, pos-window+1)
			}
			for hd := range c.Heads {
				kv := hd / (c.Heads / c.KVHeads) * c.HeadDim
				qh := q[hd*c.HeadDim : (hd+1)*c.HeadDim]
				// transformers' eager attention: the masked logits, and
				// gpt-oss's sink as one more column of the softmax.
				var scores []float64
				for s := lo; s <= pos; s++ {
					var dot float64
					for j, a := range qh {
						dot += a * keys[i][s][kv+j]
					}
					scores = append(scores, dot*scaleAttn)
				}
				if c.Sinks {
					scores = append(scores, float64(l.Vector(arch.RoleSinks)[hd]))
				}
				top := math.Inf(-1)
				for _, sc := range scores {
					top = max(top, sc)
				}
				var sum float64
				for s := range scores {
					scores[s] = math.Exp(scores[s] - top)
					sum += scores[s]
				}
				for s := lo; s <= pos; s++ {
					for j := range c.HeadDim {
						att[hd*c.HeadDim+j] += scores[s-lo] / sum * values[i][s][kv+j]
					}
				}
			}
			o := matvec(l.Matrix(arch.RoleO), att)
			if c.OutBias {
				add(o, l.Vector(arch.RoleOBias))
			}
			if c.PostNorm {
				o = rmsnorm(o, l.Vector(arch.RoleAttnPostNorm))
			}
			for j := range o {
				x[j] += o[j]
			}
			h = rmsnorm(x, l.Vector(arch.RoleFFNNorm))
			var d []float64
			if c.MoE.Enabled() {
				d = refMoE(c, l, h, matvec)
			} else {
				g, u := matvec(l.Matrix(arch.RoleGate), h), matvec(l.Matrix(arch.RoleUp), h)
				for j := range g {
					g[j] = refAct(c.Act, g[j], u[j])
				}
				d = matvec(l.Matrix(arch.RoleDown), g)
			}
			if c.PostNorm {
				d = rmsnorm(d, l.Vector(arch.RoleFFNPostNorm))
			}
			for j := range d {
				x[j] += d[j]
			}
		}
		out = append(out, matvec(w.Output, rmsnorm(x, w.OutputNorm)))
	}
	return out
}

// refAct returns the gated activation act(g) * u in float64, as
// transformers computes it: silu, gelu_pytorch_tanh (in its form without
// cancellation, x * sigmoid(2z)), gpt-oss's clamped SwiGLU.
func refAct(a arch.Activation, g, u float64) float64 {
	switch a {
	case arch.GeGLU:
		return glutest.GeLU(g) * u
	case arch.SwiGLUOAI:
		return glutest.SwiGLUOAI(g, u)
	}
	return g / (1 + math.Exp(-g)) * u
}

// refMscale returns the factor of cos and sin: YaRN's attention factor
// (transformers' get_mscale), LongRoPE's, 1 otherwise.
func refMscale(r *arch.Rope) float64 {
	if r.Scaling == arch.ScaleLongRoPE {
		return r.AttnFactor
	}
	if r.Scaling != arch.ScaleYaRN || r.Factor <= 1 {
		return 1
	}
	return 0.1*math.Log(r.Factor) + 1
}

// refFreq returns the frequency of RoPE pair i of d rotated values:
// theta^(-2i/d); divided by the factor with linear scaling; with YaRN's
// as transformers' _compute_yarn_parameters computes it (truncate as
// !NoTruncate); with Llama 3's as its _compute_llama3_parameters computes
// it, or divided by the file's frequency factor; with LongRoPE's as its
// _compute_longrope_parameters, divided by the long or short factor.
func refFreq(r *arch.Rope, i, d int) float64 {
	f := 1 / math.Pow(r.Theta, float64(2*i)/float64(d))
	switch r.Scaling {
	case arch.ScaleLinear:
		return f / r.Factor
	case arch.ScaleLongRoPE:
		if r.Long {
			return f / float64(r.LongFactors[i])
		}
		return f / float64(r.ShortFactors[i])
	case arch.ScaleYaRN:
		corr := func(rot float64) float64 {
			return float64(d) * math.Log(float64(r.OrigContext)/(rot*2*math.Pi)) / (2 * math.Log(r.Theta))
		}
		low, high := corr(r.BetaFast), corr(r.BetaSlow)
		if !r.NoTruncate {
			low, high = math.Floor(low), math.Ceil(high)
		}
		low, high = max(low, 0), min(high, float64(d-1))
		if low == high {
			high += 0.001
		}
		extrapolation := 1 - min(max((float64(i)-low)/(high-low), 0), 1)
		return f/r.Factor*(1-extrapolation) + f*extrapolation
	}
	if r.Scaling != arch.ScaleLlama3 {
		return f
	}
	if r.FreqFactors != nil {
		return f / float64(r.FreqFactors[i])
	}
	wavelen := 2 * math.Pi / f
	lowWavelen, highWavelen := float64(r.OrigContext)/r.LowFreqFactor, float64(r.OrigContext)/r.HighFreqFactor
	scaled := f
	if wavelen > lowWavelen {
		scaled = f / r.Factor
	}
	if wavelen >= highWavelen && wavelen <= lowWavelen {
		smooth := (float64(r.OrigContext)/wavelen - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
		scaled = (1-smooth)*scaled/r.Factor + smooth*scaled
	}
	return scaled
}

// llama3Rope is Llama 3's RoPE on a head of 16 values: a theta and
// original context that put pairs in all three of its bands (kept,
// blended, divided by the factor).
func llama3Rope() arch.Rope {
	return arch.Rope{Style: arch.RopeNormal, Theta: 10000, Scaling: arch.ScaleLlama3, Factor: 8, OrigContext: 64, LowFreqFactor: 1, HighFreqFactor: 4}
}

// relErr returns |got - want| / |want| in the L2 norm.
func relErr(got []float32, want []float64) float64 {
	var d, n float64
	for i, w := range want {
		d += (float64(got[i]) - w) * (float64(got[i]) - w)
		n += w * w
	}
	return math.Sqrt(d / n)
}

// TestOptions runs the options this package executes (QK-norm or none,
// Q/K/V biases or none, a tied or untied head) on every CPU backend,
// token by token, against the float64 reference at every position.
func TestOptions(t *testing.T) {
	configs := map[string]func(*arch.Config){
		"qwen3":       func(*arch.Config) {},
		"qwen3-tied":  func(c *arch.Config) { c.TiedOutput = true },
		"qwen2":       func(c *arch.Config) { c.QKNorm, c.Bias, c.TiedOutput = false, true, true },
		"plain":       func(c *arch.Config) { c.QKNorm = false },
		"bias+qknorm": func(c *arch.Config) { c.Bias = true },
		"llama":       func(c *arch.Config) { c.QKNorm, c.Heads, c.KVHeads, c.Rope = false, 6, 2, llama3Rope() },
		"llama-factors": func(c *arch.Config) {
			c.QKNorm, c.Heads, c.KVHeads, c.Rope = false, 6, 2, llama3Rope()
			c.Rope.FreqFactors = []float32{1, 1.5, 3, 8, 8, 8, 8, 8}
		},
		"normal-rope": func(c *arch.Config) { c.QKNorm, c.Rope.Style, c.Bias = false, arch.RopeNormal, true },
	}
	backends := map[string]func() backend.Ops{"scalar": func() backend.Ops { return scalar.NewScalar() },
		"simd": func() backend.Ops { return simd.New() }, "pool": func() backend.Ops { return pool.New(2) }}
	tokens := []int32{3, 17, 39, 0, 22, 22, 5, 11, 9, 30, 2, 38, 14, 1, 27, 8, 33, 19, 6, 25}
	for name, edit := range configs {
		c := small()
		edit(&c)
		m := newModel(c, uint64(len(name)))
		want := reference(m, tokens)
		for be, ops := range backends {
			t.Run(name+"/"+be, func(t *testing.T) {
				checkReference(t, m, ops(), tokens, want, "")
			})
		}
	}
}

// TestBiasBatchedEqualsAlone: with biases and without QK-norm (Qwen2),
// and with Llama 3's RoPE, sequences decoded in one batch have bitwise
// the logits they have alone.
func TestBiasBatchedEqualsAlone(t *testing.T) {
	c := small()
	c.QKNorm, c.Bias = false, true
	t.Run("qwen2", func(t *testing.T) { batchedEqualsAlone(t, newModel(c, 5)) })
	c.Bias, c.Rope = false, llama3Rope()
	t.Run("llama", func(t *testing.T) { batchedEqualsAlone(t, newModel(c, 6)) })
}

func batchedEqualsAlone(t *testing.T, m *model) {
	ops := simd.New()
	br, err := forward.NewBatched(m, ops, 0, 16, 4, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	prompts := [][]int32{{1, 2, 3, 4, 5, 6}, {7, 8, 9}, {10, 11, 12, 13, 14, 15, 16, 17, 18}}
	tables := [][]int32{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}
	var b batch.Batch
	for i, p := range prompts {
		b.Add(b.AddSeq(tables[i]), p, 0, true)
	}
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		r := forwardtest.Single(t, m, ops, 0, kvcache.F16)
		defer r.Close()
		if err := r.Forward(p); err != nil {
			t.Fatal(err)
		}
		alone, _ := r.Logits()
		batched, err := br.Logits(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := floatbits.Check(batched, alone); err != nil {
			t.Fatalf("sequence %d batched against alone: %v", i, err)
		}
	}
}

// TestRefused: a model that needs what this package does not execute is
// refused in one line, by Check and NewBatched.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		edit func(*arch.Config)
		want string
	}{
		{func(c *arch.Config) { c.MoE = arch.MoE{Experts: 4, TopK: 2, ExpertFFN: 32, Gating: arch.GateSigmoid} },
			"test: the CPU backend does not run mixture of experts (sigmoid gating)"},
	} {
		c := small()
		tc.edit(&c)
		m := newModel(c, 1)
		errs := []error{forward.Check(m, scalar.NewScalar())}
		_, err := forward.NewBatched(m, scalar.NewScalar(), 0, 4, 16, kvcache.F32)
		errs = append(errs, err)
		for i, err := range errs {
			if err == nil || err.Error() != tc.want {
				t.Errorf("%d: err = %v, want %q", i, err, tc.want)
			}
		}
	}
	// A plan with an operation the package does not run, or weights that
	// do not match the configuration.
	m := newModel(small(), 1)
	m.plan = append(m.plan[:len(m.plan):len(m.plan)], arch.Step{Op: arch.OpMoE, Layer: 1})
	if err := forward.Check(m, scalar.NewScalar()); err == nil || !strings.Contains(err.Error(), "does not run the operation moe") {
		t.Errorf("MoE step: %v", err)
	}
	m = newModel(small(), 1)
	m.w.Layers[1].SetMatrix(arch.RoleUp, nil)
	if err := forward.Check(m, scalar.NewScalar()); err == nil || err.Error() != "test: no ffn_up weights in layer 1" {
		t.Errorf("missing weights: %v", err)
	}
}

// TestLlamaDecodeAllocs: with the RoPE this package computes itself
// (adjacent pairs, Llama 3's frequencies), a batched decode step
// allocates nothing once a batch as large has run.
func TestLlamaDecodeAllocs(t *testing.T) {
	c := small()
	c.QKNorm, c.Rope = false, llama3Rope()
	m := newModel(c, 9)
	allocs := decodeAllocs(t, m, func(int) int32 { return 7 })
	if allocs != 0 {
		t.Errorf("%v allocations per decode step", allocs)
	}
}

// decodeAllocs runs a prompt of 3 tokens for each of two sequences of m in
// one batch on simd, then returns the allocations of a batched decode step
// (token tok(pos) at pos for each sequence), once a batch as large has run.
func decodeAllocs(t *testing.T, m arch.Model, tok func(pos int) int32) float64 {
	t.Helper()
	br, err := forward.NewBatched(m, simd.New(), 0, 16, 4, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	tables := [][]int32{{0, 1, 2, 3}, {4, 5, 6, 7}}
	var b batch.Batch
	for s := range tables {
		b.Add(b.AddSeq(tables[s]), []int32{1, 2, 3}, 0, true)
	}
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	pos := 3
	return testing.AllocsPerRun(10, func() {
		b.Reset()
		for s := range tables {
			b.Add(b.AddSeq(tables[s]), []int32{tok(pos)}, pos, true)
		}
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		pos++
	})
}

// checkReference runs tokens one at a time through m on ops and checks
// each position's logits within 1e-5 of want's (relative L2); what
// prefixes the errors.
func checkReference(t *testing.T, m arch.Model, ops backend.Ops, tokens []int32, want [][]float64, what string) {
	t.Helper()
	r := forwardtest.Single(t, m, ops, 0, kvcache.F32)
	defer r.Close()
	for pos, tok := range tokens {
		if err := r.Forward([]int32{tok}); err != nil {
			t.Fatal(err)
		}
		l, _ := r.Logits()
		if e := relErr(l, want[pos]); e > 1e-5 {
			t.Errorf("%sposition %d: relative error %.3g", what, pos, e)
		}
	}
}
