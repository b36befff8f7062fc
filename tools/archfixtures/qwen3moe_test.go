package archfixtures_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"

	"inferno/arch"
	"inferno/model"
)

// moeSpec is a Qwen3-MoE checkpoint's shape, as qwen3moe.py's MODELS.
type moeSpec struct {
	name                                           string
	vocab, hidden, ffn, layers, heads, kv, headDim int
	experts, top, expertFFN                        int
	norm, tied                                     bool
	theta                                          float64
}

func (s *moeSpec) config() map[string]any {
	return map[string]any{
		"architectures": []string{"Qwen3MoeForCausalLM"}, "model_type": "qwen3_moe",
		"vocab_size": s.vocab, "hidden_size": s.hidden, "intermediate_size": s.ffn, "num_hidden_layers": s.layers,
		"num_attention_heads": s.heads, "num_key_value_heads": s.kv, "head_dim": s.headDim,
		"max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": s.theta, "tie_word_embeddings": s.tied,
		"hidden_act": "silu", "torch_dtype": "float32", "decoder_sparse_step": 1, "mlp_only_layers": []int{},
		"num_experts": s.experts, "num_experts_per_tok": s.top, "moe_intermediate_size": s.expertFFN, "norm_topk_prob": s.norm,
	}
}

// randomMoE returns random weights of s in the Hub's layout (one tensor
// per expert and projection) or, fused, in transformers 5's (gate_up_proj
// and down_proj, one tensor of all experts each).
func randomMoE(s *moeSpec, seed uint64, fused bool) weights {
	rng := rand.New(rand.NewPCG(seed, 13))
	w := weights{}
	draw := func(n int, scale, offset float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(offset + scale*rng.NormFloat64())
		}
		return v
	}
	add := func(name string, scale, offset float64, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		w[name] = tensor{shape, draw(n, scale, offset)}
	}
	inv := func(n int) float64 { return 1 / math.Sqrt(float64(n)) }
	q, kv := s.heads*s.headDim, s.kv*s.headDim
	add("model.embed_tokens.weight", 2*inv(s.hidden), 0, s.vocab, s.hidden)
	for i := range s.layers {
		p := "model.layers." + strconv.Itoa(i) + "."
		add(p+"input_layernorm.weight", 0.3, 1, s.hidden)
		add(p+"self_attn.q_proj.weight", inv(s.hidden), 0, q, s.hidden)
		add(p+"self_attn.k_proj.weight", inv(s.hidden), 0, kv, s.hidden)
		add(p+"self_attn.v_proj.weight", inv(s.hidden), 0, kv, s.hidden)
		add(p+"self_attn.q_norm.weight", 0.3, 1, s.headDim)
		add(p+"self_attn.k_norm.weight", 0.3, 1, s.headDim)
		add(p+"self_attn.o_proj.weight", inv(q), 0, s.hidden, q)
		add(p+"post_attention_layernorm.weight", 0.3, 1, s.hidden)
		add(p+"mlp.gate.weight", 2*inv(s.hidden), 0, s.experts, s.hidden)
		var gateUp, down []float32
		for e := range s.experts {
			g, u := draw(s.expertFFN*s.hidden, inv(s.hidden), 0), draw(s.expertFFN*s.hidden, inv(s.hidden), 0)
			d := draw(s.hidden*s.expertFFN, inv(s.expertFFN), 0)
			if fused {
				gateUp = append(append(gateUp, g...), u...)
				down = append(down, d...)
				continue
			}
			x := p + "mlp.experts." + strconv.Itoa(e) + "."
			w[x+"gate_proj.weight"] = tensor{[]int{s.expertFFN, s.hidden}, g}
			w[x+"up_proj.weight"] = tensor{[]int{s.expertFFN, s.hidden}, u}
			w[x+"down_proj.weight"] = tensor{[]int{s.hidden, s.expertFFN}, d}
		}
		if fused {
			w[p+"mlp.experts.gate_up_proj"] = tensor{[]int{s.experts, 2 * s.expertFFN, s.hidden}, gateUp}
			w[p+"mlp.experts.down_proj"] = tensor{[]int{s.experts, s.hidden, s.expertFFN}, down}
		}
	}
	add("model.norm.weight", 0.3, 1, s.hidden)
	if !s.tied {
		add("lm_head.weight", 2*inv(s.hidden), 0, s.vocab, s.hidden)
	}
	return w
}

// expertMatrix returns expert e's matrix of a projection ("gate_proj",
// "up_proj", "down_proj") of layer prefix p in either layout, as rows.
func expertMatrix(w weights, p string, e int, proj string) tensor {
	if t, ok := w[p+"mlp.experts."+strconv.Itoa(e)+"."+proj+".weight"]; ok {
		return t
	}
	if proj == "down_proj" {
		t := w[p+"mlp.experts.down_proj"]
		n := t.shape[1] * t.shape[2]
		return tensor{t.shape[1:], t.v[e*n : (e+1)*n]}
	}
	t := w[p+"mlp.experts.gate_up_proj"]
	rows, cols := t.shape[1]/2, t.shape[2]
	off := e * 2 * rows * cols
	if proj == "up_proj" {
		off += rows * cols
	}
	return tensor{[]int{rows, cols}, t.v[off : off+rows*cols]}
}

// referenceMoE computes the logits of every position of tokens in float64
// as transformers' Qwen3MoeForCausalLM does, from the checkpoint's
// tensors: Qwen3's attention (QK-norm before rotate_half RoPE) and
// Qwen3MoeSparseMoeBlock (softmax over the router's logits, the top
// experts, renormalized with norm_topk_prob, their SwiGLU outputs summed
// by weight).
func referenceMoE(s *moeSpec, w weights, tokens []int32) [][]float64 {
	matvec := func(t tensor, x []float64) []float64 {
		rows, cols := t.shape[0], t.shape[1]
		y := make([]float64, rows)
		for r := range rows {
			for c := range cols {
				y[r] += float64(t.v[r*cols+c]) * x[c]
			}
		}
		return y
	}
	rmsnorm := func(x []float64, g []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(len(x))+1e-6)
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = v * r * float64(g[i])
		}
		return y
	}
	d := s.headDim
	perHead := func(x []float64, f func([]float64) []float64) {
		for h := 0; h < len(x); h += d {
			copy(x[h:h+d], f(x[h:h+d]))
		}
	}
	rope := func(pos int) func([]float64) []float64 {
		return func(v []float64) []float64 {
			y := slices.Clone(v)
			for i := range d / 2 {
				f := float64(pos) / math.Pow(s.theta, float64(2*i)/float64(d))
				c, sn := math.Cos(f), math.Sin(f)
				y[i] = v[i]*c - v[i+d/2]*sn
				y[i+d/2] = v[i+d/2]*c + v[i]*sn
			}
			return y
		}
	}
	embed := w["model.embed_tokens.weight"]
	keys := make([][][]float64, s.layers)
	values := make([][][]float64, s.layers)
	var out [][]float64
	for pos, tok := range tokens {
		x := make([]float64, s.hidden)
		for i := range x {
			x[i] = float64(embed.v[int(tok)*s.hidden+i])
		}
		for l := range s.layers {
			p := "model.layers." + strconv.Itoa(l) + "."
			h := rmsnorm(x, w[p+"input_layernorm.weight"].v)
			q, k, v := matvec(w[p+"self_attn.q_proj.weight"], h), matvec(w[p+"self_attn.k_proj.weight"], h), matvec(w[p+"self_attn.v_proj.weight"], h)
			perHead(q, func(x []float64) []float64 { return rmsnorm(x, w[p+"self_attn.q_norm.weight"].v) })
			perHead(k, func(x []float64) []float64 { return rmsnorm(x, w[p+"self_attn.k_norm.weight"].v) })
			perHead(q, rope(pos))
			perHead(k, rope(pos))
			keys[l], values[l] = append(keys[l], k), append(values[l], v)
			att := make([]float64, s.heads*d)
			for hd := range s.heads {
				kvh := hd / (s.heads / s.kv) * d
				scores := make([]float64, pos+1)
				top := math.Inf(-1)
				for j := range scores {
					for e := range d {
						scores[j] += q[hd*d+e] * keys[l][j][kvh+e]
					}
					scores[j] /= math.Sqrt(float64(d))
					top = max(top, scores[j])
				}
				var sum float64
				for j := range scores {
					scores[j] = math.Exp(scores[j] - top)
					sum += scores[j]
				}
				for j, pr := range scores {
					for e := range d {
						att[hd*d+e] += pr / sum * values[l][j][kvh+e]
					}
				}
			}
			for i, o := range matvec(w[p+"self_attn.o_proj.weight"], att) {
				x[i] += o
			}
			h = rmsnorm(x, w[p+"post_attention_layernorm.weight"].v)
			logits := matvec(w[p+"mlp.gate.weight"], h)
			top := slices.Max(logits)
			probs := make([]float64, len(logits))
			var sum float64
			for e, v := range logits {
				probs[e] = math.Exp(v - top)
				sum += probs[e]
			}
			order := make([]int, len(probs))
			for e := range order {
				order[e] = e
				probs[e] /= sum
			}
			sort.SliceStable(order, func(a, b int) bool { return probs[order[a]] > probs[order[b]] })
			order = order[:s.top]
			var picked float64
			for _, e := range order {
				picked += probs[e]
			}
			for _, e := range order {
				wt := probs[e]
				if s.norm {
					wt /= picked
				}
				g, u := matvec(expertMatrix(w, p, e, "gate_proj"), h), matvec(expertMatrix(w, p, e, "up_proj"), h)
				for i := range g {
					g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
				}
				for i, o := range matvec(expertMatrix(w, p, e, "down_proj"), g) {
					x[i] += wt * o
				}
			}
		}
		head := "lm_head.weight"
		if s.tied {
			head = "model.embed_tokens.weight"
		}
		out = append(out, matvec(w[head], rmsnorm(x, w["model.norm.weight"].v)))
	}
	return out
}

// TestReferenceMoE converts random Qwen3-MoE checkpoints (renormalized
// top-2 of 8 experts, untied, in the Hub's layout; top-3 of 6 without
// renormalizing, tied, in transformers 5's fused layout; grouped-query
// ratios of 3 and 4) and checks them on every CPU backend against the
// float64 re-implementation of transformers.
func TestReferenceMoE(t *testing.T) {
	specs := []struct {
		moeSpec
		fused bool
	}{
		{moeSpec{name: "norm", vocab: 300, hidden: 64, ffn: 136, layers: 2, heads: 6, kv: 2, headDim: 16,
			experts: 8, top: 2, expertFFN: 40, norm: true, theta: 1e6}, false},
		{moeSpec{name: "nonorm-fused", vocab: 296, hidden: 72, ffn: 120, layers: 2, heads: 4, kv: 1, headDim: 24,
			experts: 6, top: 3, expertFFN: 56, tied: true, theta: 1e4}, true},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	prompt := make([]int32, 20)
	for i := range prompt {
		prompt[i] = int32(rng.IntN(280))
	}
	for i, s := range specs {
		t.Run(s.name, func(t *testing.T) {
			w := randomMoE(&s.moeSpec, uint64(i), s.fused)
			m := convertOpen(t, checkpointDir(t, "qwen2", s.config(), "", w, ""))
			c := m.Arch.Hyper()
			want := arch.MoE{Experts: s.experts, TopK: s.top, ExpertFFN: s.expertFFN, NormTopK: s.norm}
			if c.Arch != "qwen3moe" || c.MoE != want || c.TiedOutput != s.tied || c.HeadDim != s.headDim {
				t.Fatalf("configuration %+v", c)
			}
			check(t, m, prompt, 0, referenceMoE(&s.moeSpec, w, prompt), nil)
		})
	}
}

// TestTransformersMoE checks the checkpoints of qwen3moe.py against the
// float32 logits and greedy tokens transformers computed for them.
func TestTransformersMoE(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "qwen3moe.logits.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Models map[string]struct {
			Kind    string `json:"kind"`
			Prompts []struct {
				IDs    []int32     `json:"ids"`
				First  int         `json:"first"`
				Logits [][]float64 `json:"logits"`
				Greedy []int32     `json:"greedy"`
			} `json:"prompts"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Models) != 2 {
		t.Fatalf("%d models in qwen3moe.logits.json, want 2", len(fx.Models))
	}
	for name, mf := range fx.Models {
		t.Run(name, func(t *testing.T) {
			dir := checkpointDir(t, mf.Kind, nil, filepath.Join(testdata, name+".config.json"), nil, filepath.Join(testdata, name+".safetensors"))
			m := convertOpen(t, dir)
			if got := m.Arch.Hyper().Arch; got != "qwen3moe" {
				t.Fatalf("architecture %q, want qwen3moe", got)
			}
			for _, p := range mf.Prompts {
				check(t, m, p.IDs, p.First, p.Logits, p.Greedy)
			}
		})
	}
}

// TestLlamaCppConvertedMoE opens the file llama.cpp's convert_hf_to_gguf.py
// made of qwen3moe.py's renormalized checkpoint (qwen3moe.py's run on the
// GPU machine, F32, testdata/arch/qwen3moe-norm.llamacpp.gguf) and checks
// it against transformers' logits and greedy tokens, as inferno's own
// conversion is. (llama.cpp's converter writes no norm_topk_prob: its
// qwen3moe renormalizes always, and so does inferno on its files.)
func TestLlamaCppConvertedMoE(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "qwen3moe.logits.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Models map[string]struct {
			Prompts []struct {
				IDs    []int32     `json:"ids"`
				First  int         `json:"first"`
				Logits [][]float64 `json:"logits"`
				Greedy []int32     `json:"greedy"`
			} `json:"prompts"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	m, err := model.Open(filepath.Join(testdata, "qwen3moe-norm.llamacpp.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := arch.MoE{Experts: 8, TopK: 2, ExpertFFN: 40, NormTopK: true}
	if c := m.Arch.Hyper(); c.Arch != "qwen3moe" || c.MoE != want || c.TiedOutput {
		t.Fatalf("configuration %+v", c)
	}
	for _, p := range fx.Models["qwen3moe-norm"].Prompts {
		check(t, m, p.IDs, p.First, p.Logits, p.Greedy)
	}
}
