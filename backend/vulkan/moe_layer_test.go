package vulkan

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/arch"
	"inferno/gguf"
)

// moeLayerRef is OpMoE of c's layer in float64 over x (n tokens), the
// matrices' values given dequantized (router E x H; gate, up E*F x H;
// down E*H x F) and the vectors by role: x's new values.
func moeLayerRef(c *arch.Config, x []float32, router, gate, up, down []float32, vecs map[arch.Role][]float32) []float64 {
	mc := &c.MoE
	H, F, E, K := c.Hidden, mc.ExpertFFN, mc.Experts, mc.TopK
	n := len(x) / H
	rms := func(v []float64, g []float32) []float64 {
		var ss float64
		for _, a := range v {
			ss += a * a
		}
		f := 1 / math.Sqrt(ss/float64(len(v))+float64(c.Eps))
		o := make([]float64, len(v))
		for i, a := range v {
			o[i] = a * f * float64(g[i])
		}
		return o
	}
	mv := func(w []float32, row, cols int, in []float64) float64 {
		var s float64
		for k, a := range in {
			s += float64(w[row*cols+k]) * a
		}
		return s
	}
	act := func(g, u float64) float64 {
		switch c.Act {
		case arch.SwiGLUOAI:
			g, u = min(g, 7), max(min(u, 7), -7)
			return g / (1 + math.Exp(-1.702*g)) * (u + 1)
		case arch.GeGLU:
			return g / (1 + math.Exp(-2*0.7978845608028654*(g+0.044715*g*g*g))) * u
		}
		return g / (1 + math.Exp(-g)) * u
	}
	out := make([]float64, len(x))
	for t := range n {
		xt := make([]float64, H)
		for i := range xt {
			xt[i] = float64(x[t*H+i])
		}
		h := rms(xt, vecs[arch.RoleFFNNorm])
		logits := make([]float32, E)
		for e := range logits {
			l := float32(mv(router, e, H, h))
			if mc.Bias {
				l += vecs[arch.RoleRouterBias][e]
			}
			logits[e] = l
		}
		ids, wts := routeRef(logits, K, mc.NormTopK || mc.Gating == arch.GateSoftmaxTopK)
		d := make([]float64, H)
		for j, e32 := range ids {
			e := int(e32)
			a := make([]float64, F)
			for i := range a {
				g, u := mv(gate, e*F+i, H, h), mv(up, e*F+i, H, h)
				if mc.Bias {
					g += float64(vecs[arch.RoleExpertGateBias][e*F+i])
					u += float64(vecs[arch.RoleExpertUpBias][e*F+i])
				}
				a[i] = act(g, u)
			}
			for i := range d {
				v := mv(down, e*H+i, F, a)
				if mc.Bias {
					v += float64(vecs[arch.RoleExpertDownBias][e*H+i])
				}
				d[i] += wts[j] * v
			}
		}
		if c.PostNorm {
			d = rms(d, vecs[arch.RoleFFNPostNorm])
		}
		for i := range d {
			out[t*H+i] = xt[i] + d[i]
		}
	}
	return out
}

// TestMoELayer runs pass's OpMoE on 11 tokens of a small mixture of
// experts (Q8_0 experts, an F32 router), Qwen3-MoE's, gpt-oss's
// and one of a post-norm, GeGLU and the softmax over all experts, each
// along its three paths: a decode pass of 11 tokens (the router's input
// normalized apart), a prompt (the pairs grouped by expert, mul_mm_id),
// and a decode pass of its first 3 tokens (every input computed by the
// products): x's new values within 1e-5 relative L2 of the float64
// reference's change.
func TestMoELayer(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewPCG(31, 32))
	const H, F, E, K, n = 256, 96, 6, 2, 11
	for _, tc := range []struct {
		name string
		c    arch.Config
	}{
		{"qwen3moe", arch.Config{Act: arch.SwiGLU, MoE: arch.MoE{NormTopK: true, Gating: arch.GateSoftmax}}},
		{"gptoss", arch.Config{Act: arch.SwiGLUOAI, MoE: arch.MoE{Gating: arch.GateSoftmaxTopK, Bias: true}}},
		{"postnorm-geglu", arch.Config{Act: arch.GeGLU, PostNorm: true, MoE: arch.MoE{Gating: arch.GateSoftmax}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Hidden, c.Eps = H, 1e-6
			c.MoE.Experts, c.MoE.TopK, c.MoE.ExpertFFN = E, K, F
			gate := newWeightMatrix(t, d, rng, gguf.TensorQ8_0, E*F, H)
			up := newWeightMatrix(t, d, rng, gguf.TensorQ8_0, E*F, H)
			down := newWeightMatrix(t, d, rng, gguf.TensorQ8_0, E*H, F)
			router := normF32(rng, E*H)
			mat := func(w *weightMatrix) *matrix {
				return &matrix{buf: w.buf, typ: w.typ, rows: w.rows, cols: w.cols, rb: w.rowBytes}
			}
			l := &layer{mats: map[arch.Role]*matrix{
				arch.RoleRouter:     {buf: upload(t, d, F32Bytes(router)), typ: gguf.TensorF32, rows: E, cols: H, rb: 4 * H},
				arch.RoleExpertGate: mat(gate), arch.RoleExpertUp: mat(up), arch.RoleExpertDown: mat(down),
			}, vecs: map[arch.Role]*vector{}}
			vecs := map[arch.Role][]float32{}
			vec := func(r arch.Role, n int, scale float64) {
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(1 + scale*rng.NormFloat64())
				}
				vecs[r], l.vecs[r] = v, &vector{buf: upload(t, d, F32Bytes(v)), n: n}
			}
			vec(arch.RoleFFNNorm, H, 0.2)
			vec(arch.RoleFFNPostNorm, H, 0.2)
			if c.MoE.Bias {
				vec(arch.RoleRouterBias, E, 1)
				vec(arch.RoleExpertGateBias, E*F, 1)
				vec(arch.RoleExpertUpBias, E*F, 1)
				vec(arch.RoleExpertDownBias, E*H, 1)
			}
			x := normF32(rng, n*H)
			want := moeLayerRef(&c, x, router, gate.values, up.values, down.values, vecs)
			for _, path := range []struct {
				name   string
				tokens int
				prompt bool
			}{{"decode", n, false}, {"prompt", n, true}, {"short", 3, false}} {
				r := &BatchRunner{d: d, c: &c}
				r.x, r.h, r.out = upload(t, d, F32Bytes(x)), upload(t, d, make([]byte, 4*n*H)), upload(t, d, make([]byte, 4*n*H))
				if err := r.moe.alloc(d, &c, n); err != nil {
					t.Fatal(err)
				}
				rec, err := d.Begin()
				if err != nil {
					t.Fatal(err)
				}
				p := &pass{r: r, rec: rec, sh: shape{tokens: path.tokens, seqs: 1, prompt: path.prompt}, c: &c}
				p.moe(l)
				if p.err != nil {
					t.Fatal(p.err)
				}
				if err := d.Submit(rec); err != nil {
					t.Fatal(err)
				}
				got := readF32(t, d, r.x, n*H)
				r.moe.free()
				var num, den float64
				for i := range path.tokens * H {
					dv := float64(got[i]) - want[i]
					ch := want[i] - float64(x[i])
					num += dv * dv
					den += ch * ch
				}
				if e := math.Sqrt(num / den); !(e <= 1e-5) {
					t.Errorf("%s: relative L2 %.3g of the layer's change > 1e-5", path.name, e)
				}
				for i := path.tokens * H; i < n*H; i++ {
					if got[i] != x[i] {
						t.Fatalf("%s: x[%d] past the pass's tokens changed", path.name, i)
					}
				}
			}
		})
	}
}
