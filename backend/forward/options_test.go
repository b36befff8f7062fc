package forward_test

import (
	"math"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/forward"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/pool"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/batch"
	"inferno/internal/floatbits"
	"inferno/kvcache"
)

// gemmaLike is small() with Gemma 3's options: three layers, the first
// two local with a window of 5 positions and a RoPE of their own (base
// 10000, no scaling), the last global (base 1e6, linear scaling 8);
// scaled embeddings, an attention scale other than 1/sqrt(head_dim),
// post-norms, GeGLU, a tied head.
func gemmaLike() arch.Config {
	c := small()
	c.Layers, c.Act, c.PostNorm, c.TiedOutput = 3, arch.GeGLU, true, true
	c.EmbedScale, c.AttnScale = 8, 0.2
	c.Window, c.Local, c.LocalRope = 5, []bool{true, true, false}, arch.Rope{Theta: 10000}
	c.Rope = arch.Rope{Theta: 1e6, Scaling: arch.ScaleLinear, Factor: 8}
	return c
}

// gptOSSLike is small() with gpt-oss's options: Q/K/V and output biases,
// sinks, every other layer local with a window of 5 positions, YaRN
// (blending pairs 2 to 5 of 8, bounds not rounded), a mixture of 6
// experts, 2 a token, softmax over the chosen logits, with router and
// expert biases and OpenAI's clamped SwiGLU.
func gptOSSLike() arch.Config {
	c := small()
	c.QKNorm, c.Bias, c.OutBias, c.Sinks, c.Act = false, true, true, true, arch.SwiGLUOAI
	c.Window, c.Local = 5, arch.SWAPattern(2, 2)
	c.Rope = arch.Rope{Theta: 10000, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 2048, BetaFast: 32, BetaSlow: 1, NoTruncate: true}
	c.MoE = arch.MoE{Experts: 6, TopK: 2, ExpertFFN: 40, Gating: arch.GateSoftmaxTopK, Bias: true}
	return c
}

// phiLike is small() with Phi-4-mini's partial RoPE: 12 of a head's 16
// values rotated.
func phiLike() arch.Config {
	c := small()
	c.QKNorm, c.RopeDims = false, 12
	return c
}

var cpuBackends = map[string]func() backend.Ops{"scalar": func() backend.Ops { return scalar.NewScalar() },
	"simd": func() backend.Ops { return simd.New() }, "pool": func() backend.Ops { return pool.New(2) }}

// TestNewOptions runs the options of gpt-oss, Gemma 3 and Phi-4 (and some
// of their combinations) on every CPU backend, token by token, against
// the float64 reference at every position: 20 positions, four times the
// sliding window.
func TestNewOptions(t *testing.T) {
	configs := map[string]func() arch.Config{
		"gemma3":  gemmaLike,
		"gpt-oss": gptOSSLike,
		"phi4":    phiLike,
		"phi4-normal-yarn": func() arch.Config {
			c := phiLike()
			c.Rope = arch.Rope{Style: arch.RopeNormal, Theta: 10000, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 2048}
			return c
		},
		"sinks-window-dense": func() arch.Config {
			c := small()
			c.Sinks, c.Window, c.Local, c.AttnScale, c.Act = true, 3, []bool{false, true}, 0.3, arch.SwiGLUOAI
			return c
		},
		"moe-postnorm-geglu": func() arch.Config {
			c := moeConfig(true)
			c.PostNorm, c.Act, c.MoE.Bias = true, arch.GeGLU, true
			return c
		},
	}
	tokens := []int32{3, 17, 39, 0, 22, 22, 5, 11, 9, 30, 2, 38, 14, 1, 27, 8, 33, 19, 6, 25}
	for name, config := range configs {
		c := config()
		m := newModel(c, uint64(len(name))+100)
		want := reference(m, tokens)
		for be, ops := range cpuBackends {
			t.Run(name+"/"+be, func(t *testing.T) {
				checkReference(t, m, ops(), tokens, want, "")
			})
		}
	}
}

// TestWindowReference checks that the reference's sliding window is one:
// with a window shorter than the sequence the logits differ from those of
// global attention, with one as long they are the same.
func TestWindowReference(t *testing.T) {
	tokens := []int32{3, 17, 39, 0, 22, 22, 5, 11, 9, 30}
	c := small()
	global := reference(newModel(c, 3), tokens)
	c.Window, c.Local = 4, []bool{true, true}
	local := reference(newModel(c, 3), tokens)
	c.Window = len(tokens)
	wide := reference(newModel(c, 3), tokens)
	for pos := range tokens {
		d := relErr64(local[pos], global[pos])
		if pos < 4 && d != 0 || pos >= 4 && d < 1e-3 {
			t.Errorf("position %d: a window of 4 differs from global attention by %.3g", pos, d)
		}
		if d := relErr64(wide[pos], global[pos]); d != 0 {
			t.Errorf("position %d: a window as long as the sequence differs by %.3g", pos, d)
		}
	}
}

// relErr64 is relErr on float64 values.
func relErr64(got, want []float64) float64 {
	var d, n float64
	for i, w := range want {
		d += (got[i] - w) * (got[i] - w)
		n += w * w
	}
	return math.Sqrt(d / n)
}

// TestNewOptionsBatchedEqualsAlone: with the options of Gemma 3 and
// gpt-oss, prompts longer than the window, run together in one batch over
// a paged cache (blocks of 4 positions, F16 and F32) and then decoded,
// have bitwise the logits they have alone, on one thread and on a pool;
// and a prompt split into passes has the logits of one pass.
func TestNewOptionsBatchedEqualsAlone(t *testing.T) {
	for name, config := range map[string]func() arch.Config{"gemma3": gemmaLike, "gpt-oss": gptOSSLike} {
		m := newModel(config(), 31)
		for _, kv := range []kvcache.Type{kvcache.F32, kvcache.F16} {
			for be, ops := range map[string]backend.Ops{"simd": simd.New(), "pool": pool.New(2)} {
				t.Run(name+"/"+be+"/"+kv.String(), func(t *testing.T) {
					optionsBatchedEqualsAlone(t, m, ops, kv)
				})
			}
		}
	}
}

func optionsBatchedEqualsAlone(t *testing.T, m *model, ops backend.Ops, kv kvcache.Type) {
	br, err := forward.NewBatched(m, ops, 0, 24, 4, kv)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	prompts := [][]int32{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {7, 8, 9}, {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}}
	tables := [][]int32{{0, 1, 2, 3}, {4, 5}, {6, 7, 8, 9, 10}}
	var b batch.Batch
	for i, p := range prompts {
		b.Add(b.AddSeq(tables[i]), p, 0, true)
	}
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for i, p := range prompts {
		b.Add(b.AddSeq(tables[i]), []int32{int32(30 + i)}, len(p), true)
	}
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		all := append(append([]int32(nil), p...), int32(30+i))
		// Alone, in one pass.
		r := forwardtest.Single(t, m, ops, 0, kv)
		defer r.Close()
		if err := r.Forward(all); err != nil {
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
		// Alone, in passes of 3 tokens.
		r3 := forwardtest.Single(t, m, ops, 0, kv)
		defer r3.Close()
		for j := 0; j < len(all); j += 3 {
			if err := r3.Forward(all[j:min(j+3, len(all))]); err != nil {
				t.Fatal(err)
			}
		}
		split, _ := r3.Logits()
		if err := floatbits.Check(split, alone); err != nil {
			t.Fatalf("sequence %d in passes of 3 against one pass: %v", i, err)
		}
	}
}

// TestNewOptionsDecodeAllocs: a batched decode step with the options of
// Gemma 3 (two RoPEs, a window) and gpt-oss allocates nothing once a
// batch as large has run.
func TestNewOptionsDecodeAllocs(t *testing.T) {
	for name, config := range map[string]func() arch.Config{"gemma3": gemmaLike, "gpt-oss": gptOSSLike} {
		m := newModel(config(), 9)
		allocs := decodeAllocs(t, m, func(pos int) int32 { return int32(7 + pos) })
		if allocs != 0 {
			t.Errorf("%s: %v allocations per decode step", name, allocs)
		}
	}
}

// TestFusedViews: a model whose Q, K, V, gate and up matrices are row
// ranges of fused matrices (as arch.Load presents Phi-3's files) has
// bitwise the logits of the same model with the matrices apart.
func TestFusedViews(t *testing.T) {
	c := phiLike()
	apart := newModel(c, 41)
	fused := newModel(c, 41)
	for i := range fused.w.Layers {
		l := &fused.w.Layers[i]
		cat := func(rs ...arch.Role) *arch.Weight {
			w := &arch.Weight{Name: "fused", Type: l.Matrix(rs[0]).Type, Cols: c.Hidden}
			for _, r := range rs {
				w.Rows += l.Matrix(r).Rows
				w.Data = append(w.Data, l.Matrix(r).Data...)
			}
			return w
		}
		qkv, gu := cat(arch.RoleQ, arch.RoleK, arch.RoleV), cat(arch.RoleGate, arch.RoleUp)
		q, kv := c.QDim(), c.KVDim()
		l.SetMatrix(arch.RoleQ, qkv.RowRange(0, q))
		l.SetMatrix(arch.RoleK, qkv.RowRange(q, q+kv))
		l.SetMatrix(arch.RoleV, qkv.RowRange(q+kv, q+2*kv))
		l.SetMatrix(arch.RoleGate, gu.RowRange(0, c.FFN))
		l.SetMatrix(arch.RoleUp, gu.RowRange(c.FFN, 2*c.FFN))
	}
	tokens := []int32{3, 17, 39, 0, 22, 22, 5}
	for be, ops := range cpuBackends {
		var logits [2][]float32
		for k, m := range []*model{apart, fused} {
			r := forwardtest.Single(t, m, ops(), 0, kvcache.F32)
			if err := r.Forward(tokens); err != nil {
				t.Fatal(err)
			}
			l, _ := r.Logits()
			logits[k] = append([]float32(nil), l...)
			r.Close()
		}
		if err := floatbits.Check(logits[1], logits[0]); err != nil {
			t.Errorf("%s: fused against apart: %v", be, err)
		}
	}
}
