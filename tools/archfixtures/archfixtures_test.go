// Package archfixtures_test checks inferno's llama and qwen2 architectures
// end to end, from a Hugging Face checkpoint folder: convert it to GGUF
// (package convert), open the file (package model) and run it on every
// CPU backend (package backend/forward), against
//
//   - transformers' float32 logits of the checkpoints make.py writes
//     (testdata/arch), and
//   - a float64 re-implementation of transformers' LlamaForCausalLM and
//     Qwen2ForCausalLM on random checkpoints made here, computed from the
//     checkpoint's own tensors (rotate_half on unpermuted rows, Llama 3's
//     inv_freq from config.json), so that the converter's row permutation
//     and rope_freqs.weight are checked too.
package archfixtures_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"

	"inferno/backend"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/pool"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/convert"
	"inferno/engine"
	"inferno/kvcache"
	"inferno/model"
	"inferno/sampling"
)

const testdata = "../../testdata/arch"

// backends are the CPU backends, by name.
var backends = []struct {
	name string
	ops  func() backend.Ops
	tol  float64 // relative L2 error allowed against the reference
}{
	{"scalar", func() backend.Ops { return scalar.NewScalar() }, 1e-4},
	{"simd", func() backend.Ops { return simd.New() }, 5e-2},
	{"pool", func() backend.Ops { return pool.New(2) }, 5e-2},
}

// spec is a checkpoint's shape, as make.py's MODELS.
type spec struct {
	name, kind                                     string
	vocab, hidden, ffn, layers, heads, kv, headDim int
	tied                                           bool
	theta                                          float64
	// llama3 scaling: factor, low_freq_factor, high_freq_factor,
	// original_max_position_embeddings; nil without.
	llama3 []float64
}

func (s *spec) config() map[string]any {
	c := map[string]any{
		"vocab_size": s.vocab, "hidden_size": s.hidden, "intermediate_size": s.ffn,
		"num_hidden_layers": s.layers, "num_attention_heads": s.heads, "num_key_value_heads": s.kv,
		"max_position_embeddings": 256, "rms_norm_eps": 1e-5, "rope_theta": s.theta,
		"tie_word_embeddings": s.tied, "hidden_act": "silu", "torch_dtype": "float32",
	}
	if s.kind == "llama" {
		c["architectures"] = []string{"LlamaForCausalLM"}
		c["head_dim"] = s.headDim
		c["model_type"] = "llama"
		if s.llama3 != nil {
			c["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": s.llama3[0], "low_freq_factor": s.llama3[1],
				"high_freq_factor": s.llama3[2], "original_max_position_embeddings": s.llama3[3]}
		}
	} else {
		c["architectures"] = []string{"Qwen2ForCausalLM"}
		c["model_type"] = "qwen2"
	}
	return c
}

// weights are a checkpoint's tensors by Hugging Face name, float32 values
// with their PyTorch shapes.
type weights map[string]tensor

type tensor struct {
	shape []int
	v     []float32
}

// random returns random weights of s: matrices of unit-scale rows, norm
// gains near 1, biases of 0.5.
func random(s *spec, seed uint64) weights {
	rng := rand.New(rand.NewPCG(seed, 11))
	w := weights{}
	add := func(name string, scale, offset float64, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(offset + scale*rng.NormFloat64())
		}
		w[name] = tensor{shape, v}
	}
	q, kv := s.heads*s.headDim, s.kv*s.headDim
	add("model.embed_tokens.weight", 2/math.Sqrt(float64(s.hidden)), 0, s.vocab, s.hidden)
	for i := range s.layers {
		p := "model.layers." + strconv.Itoa(i) + "."
		add(p+"input_layernorm.weight", 0.3, 1, s.hidden)
		add(p+"self_attn.q_proj.weight", 1/math.Sqrt(float64(s.hidden)), 0, q, s.hidden)
		add(p+"self_attn.k_proj.weight", 1/math.Sqrt(float64(s.hidden)), 0, kv, s.hidden)
		add(p+"self_attn.v_proj.weight", 1/math.Sqrt(float64(s.hidden)), 0, kv, s.hidden)
		if s.kind == "qwen2" {
			add(p+"self_attn.q_proj.bias", 0.5, 0, q)
			add(p+"self_attn.k_proj.bias", 0.5, 0, kv)
			add(p+"self_attn.v_proj.bias", 0.5, 0, kv)
		}
		add(p+"self_attn.o_proj.weight", 1/math.Sqrt(float64(q)), 0, s.hidden, q)
		add(p+"post_attention_layernorm.weight", 0.3, 1, s.hidden)
		add(p+"mlp.gate_proj.weight", 1/math.Sqrt(float64(s.hidden)), 0, s.ffn, s.hidden)
		add(p+"mlp.up_proj.weight", 1/math.Sqrt(float64(s.hidden)), 0, s.ffn, s.hidden)
		add(p+"mlp.down_proj.weight", 1/math.Sqrt(float64(s.ffn)), 0, s.hidden, s.ffn)
	}
	add("model.norm.weight", 0.3, 1, s.hidden)
	if !s.tied {
		add("lm_head.weight", 2/math.Sqrt(float64(s.hidden)), 0, s.vocab, s.hidden)
	}
	return w
}

// writeSafetensors writes w as an F32 safetensors file.
func writeSafetensors(t *testing.T, path string, w weights) {
	t.Helper()
	names := make([]string, 0, len(w))
	for n := range w {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{}
	var data []byte
	for _, n := range names {
		tn := w[n]
		start := len(data)
		for _, x := range tn.v {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
		}
		header[n] = map[string]any{"dtype": "F32", "shape": tn.shape, "data_offsets": []int{start, len(data)}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkpointDir makes a checkpoint folder of config.json (config, or the
// file configPath), the weights (w, or the file weightsPath) and the
// kind's tokenizer files from testdata.
func checkpointDir(t *testing.T, kind string, config map[string]any, configPath string, w weights, weightsPath string) string {
	t.Helper()
	dir := t.TempDir()
	copyFile := func(dst, src string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("tokenizer.json", filepath.Join(testdata, kind+".tokenizer.json"))
	copyFile("tokenizer_config.json", filepath.Join(testdata, kind+".tokenizer_config.json"))
	if configPath != "" {
		copyFile("config.json", configPath)
	} else {
		b, err := json.Marshal(config)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if weightsPath != "" {
		copyFile("model.safetensors", weightsPath)
	} else {
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), w)
	}
	return dir
}

// convertOpen converts the checkpoint in dir to an F32 GGUF file and
// opens it.
func convertOpen(t *testing.T, dir string) *model.Model {
	t.Helper()
	out := filepath.Join(t.TempDir(), "model.gguf")
	if _, err := convert.Convert(context.Background(), dir, out, convert.Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := model.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
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

// clearMargin returns the margin (see margin) above which a backend
// within relative error tol must pick the reference's top token: 1e-2,
// or half of tol for the backends whose activations are rounded to 8 bits
// (5e-2: a logit vector 5% off can reorder two logits 1.8% apart, as
// llama.cpp's CPU kernels do on gpt-oss's MXFP4 experts).
func clearMargin(tol float64) float64 { return max(1e-2, tol/2) }

// margin returns the gap between the two largest values of v, relative to
// the largest magnitude.
func margin(v []float64) float64 {
	a, b, m := math.Inf(-1), math.Inf(-1), 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
		if x > a {
			a, b = x, a
		} else if x > b {
			b = x
		}
	}
	return (a - b) / m
}

func argmax(v []float64) int32 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int32(best)
}

// check runs prompt through m on every backend, token by token, and
// compares the logits of positions first.. with want (one row a
// position); with the scalar backend it then decodes len(greedy) tokens
// greedily and compares them with greedy as long as the reference's
// choice is clear.
func check(t *testing.T, m *model.Model, prompt []int32, first int, want [][]float64, greedy []int32) {
	t.Helper()
	for _, be := range backends {
		r := newSingle(t, m, be.ops())
		g := greedy
		if be.name != "scalar" {
			g = nil
		}
		checkRun(t, be.name, r.Single, be.tol, prompt, first, want, g)
		r.Close()
	}
}

// checkRun runs prompt through r, a fresh sequence on the backend called
// name, as check does: logits of positions first.. within tol of want
// (relative L2) and of the same top token where want's is clear, then
// greedy's tokens while the reference's choice is clear.
func checkRun(t *testing.T, name string, r *engine.Single, tol float64, prompt []int32, first int, want [][]float64, greedy []int32) {
	t.Helper()
	worst := 0.0
	for pos, tok := range prompt {
		if err := r.Forward([]int32{tok}); err != nil {
			t.Fatal(err)
		}
		if pos < first {
			continue
		}
		l, _ := r.Logits()
		w := want[pos-first]
		if len(l) != len(w) {
			t.Fatalf("%s: %d logits, the reference %d", name, len(l), len(w))
		}
		e := relErr(l, w)
		if e > tol {
			t.Errorf("%s: prompt of %d, position %d: relative error %.3g > %g", name, len(prompt), pos, e, tol)
		}
		worst = max(worst, e)
		if got := sampling.Argmax(l); got != argmax(w) && margin(w) > clearMargin(tol) {
			t.Errorf("%s: prompt of %d, position %d: top token %d, want %d (margin %.3g)", name, len(prompt), pos, got, argmax(w), margin(w))
		}
	}
	t.Logf("%s: prompt of %d: largest relative error %.2g", name, len(prompt), worst)
	if greedy == nil {
		return
	}
	same := 0
	defer func() {
		t.Logf("%s: prompt of %d: %d of %d greedy tokens as transformers", name, len(prompt), same, len(greedy))
	}()
	for i, want := range greedy {
		l, _ := r.Logits()
		got := sampling.Argmax(l)
		if got != want {
			lf := make([]float64, len(l))
			for j, x := range l {
				lf[j] = float64(x)
			}
			if margin(lf) > 1e-3 {
				t.Errorf("%s: greedy token %d after a prompt of %d: %d, want %d", name, i, len(prompt), got, want)
			}
			break
		}
		same++
		if err := r.Forward([]int32{got}); err != nil {
			t.Fatal(err)
		}
	}
}

// single is one sequence of m alone on ops, as the commands run it: a
// batch of one on a forward.Batched whose pool is one block of 256
// positions. That context is also what chooses a LongRoPE model's
// factors, as --ctx 256 would (arch.ForContext): phi4-mini's original
// context is 256, so it runs with the short factors, as transformers does
// for its prompts and greedy tokens (at most 164 positions).
type single struct {
	*engine.Single
	ops backend.Ops
}

func newSingle(t *testing.T, m *model.Model, ops backend.Ops) *single {
	t.Helper()
	return &single{forwardtest.Single(t, m.Arch, ops, 256, kvcache.F32), ops}
}

// Close releases the pool and stops ops's workers, if it has any.
func (s *single) Close() error {
	err := s.Single.Close()
	if c, ok := s.ops.(interface{ Close() }); ok {
		c.Close()
	}
	return err
}

// TestTransformers checks the checkpoints of make.py against the float32
// logits and greedy tokens transformers computed for them.
func TestTransformers(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testdata, "logits.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Transformers string `json:"transformers"`
		Models       map[string]struct {
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
	if len(fx.Models) != 3 {
		t.Fatalf("%d models in logits.json, want 3", len(fx.Models))
	}
	for name, mf := range fx.Models {
		t.Run(name, func(t *testing.T) {
			dir := checkpointDir(t, mf.Kind, nil, filepath.Join(testdata, name+".config.json"), nil, filepath.Join(testdata, name+".safetensors"))
			m := convertOpen(t, dir)
			if got := m.Arch.Hyper().Arch; got != mf.Kind {
				t.Fatalf("architecture %q, want %q", got, mf.Kind)
			}
			for _, p := range mf.Prompts {
				check(t, m, p.IDs, p.First, p.Logits, p.Greedy)
			}
		})
	}
}

// TestReference checks random checkpoints of both architectures, tied
// and untied, with and without Llama 3's scaling, against the float64
// re-implementation of transformers (reference).
func TestReference(t *testing.T) {
	specs := []spec{
		{name: "llama-tied", kind: "llama", vocab: 300, hidden: 80, ffn: 176, layers: 2, heads: 6, kv: 2, headDim: 16, tied: true,
			theta: 10000, llama3: []float64{8, 1, 4, 64}},
		{name: "llama-untied", kind: "llama", vocab: 290, hidden: 72, ffn: 120, layers: 2, heads: 9, kv: 3, headDim: 8, theta: 500000},
		{name: "qwen2", kind: "qwen2", vocab: 296, hidden: 96, ffn: 200, layers: 2, heads: 6, kv: 2, headDim: 16, tied: true, theta: 1e6},
		{name: "qwen2-untied", kind: "qwen2", vocab: 284, hidden: 64, ffn: 96, layers: 2, heads: 4, kv: 1, headDim: 16, theta: 1e4},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	prompt := make([]int32, 24)
	for i := range prompt {
		prompt[i] = int32(rng.IntN(280))
	}
	for i, s := range specs {
		t.Run(s.name, func(t *testing.T) {
			w := random(&s, uint64(i))
			m := convertOpen(t, checkpointDir(t, s.kind, s.config(), "", w, ""))
			c := m.Arch.Hyper()
			if c.Arch != s.kind || c.HeadDim != s.headDim || c.TiedOutput != s.tied || (c.Rope.FreqFactors != nil) != (s.llama3 != nil) {
				t.Fatalf("configuration %+v", c)
			}
			check(t, m, prompt, 0, reference(&s, w, prompt), nil)
		})
	}
}

// reference computes the logits of every position of tokens in float64
// as transformers' LlamaForCausalLM and Qwen2ForCausalLM do, from the
// checkpoint's tensors.
func reference(s *spec, w weights, tokens []int32) [][]float64 {
	get := func(name string) tensor { return w[name] }
	matvec := func(name string, x []float64) []float64 {
		t := get(name)
		rows, cols := t.shape[0], t.shape[1]
		y := make([]float64, rows)
		for r := range rows {
			for c := range cols {
				y[r] += float64(t.v[r*cols+c]) * x[c]
			}
		}
		if b, ok := w[name[:len(name)-len("weight")]+"bias"]; ok {
			for r := range y {
				y[r] += float64(b.v[r])
			}
		}
		return y
	}
	rmsnorm := func(x []float64, name string) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(len(x))+1e-5)
		g := get(name).v
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = v * r * float64(g[i])
		}
		return y
	}
	// inv_freq as transformers' default and llama3 rope initializations.
	d := s.headDim
	inv := make([]float64, d/2)
	for i := range inv {
		inv[i] = 1 / math.Pow(s.theta, float64(2*i)/float64(d))
		if l := s.llama3; l != nil {
			factor, low, high, orig := l[0], l[1], l[2], l[3]
			wavelen := 2 * math.Pi / inv[i]
			switch {
			case wavelen > orig/low:
				inv[i] /= factor
			case wavelen >= orig/high:
				smooth := (orig/wavelen - low) / (high - low)
				inv[i] = (1-smooth)*inv[i]/factor + smooth*inv[i]
			}
		}
	}
	rope := func(x []float64, pos int) { // rotate_half on each head
		for h := 0; h < len(x); h += d {
			v := slices.Clone(x[h : h+d])
			for i, f := range inv {
				c, sn := math.Cos(float64(pos)*f), math.Sin(float64(pos)*f)
				x[h+i] = v[i]*c - v[i+d/2]*sn
				x[h+i+d/2] = v[i+d/2]*c + v[i]*sn
			}
		}
	}
	embed := get("model.embed_tokens.weight")
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
			h := rmsnorm(x, p+"input_layernorm.weight")
			q := matvec(p+"self_attn.q_proj.weight", h)
			k := matvec(p+"self_attn.k_proj.weight", h)
			v := matvec(p+"self_attn.v_proj.weight", h)
			rope(q, pos)
			rope(k, pos)
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
			for i, o := range matvec(p+"self_attn.o_proj.weight", att) {
				x[i] += o
			}
			h = rmsnorm(x, p+"post_attention_layernorm.weight")
			g, u := matvec(p+"mlp.gate_proj.weight", h), matvec(p+"mlp.up_proj.weight", h)
			for i := range g {
				g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
			}
			for i, o := range matvec(p+"mlp.down_proj.weight", g) {
				x[i] += o
			}
		}
		head := "lm_head.weight"
		if s.tied {
			head = "model.embed_tokens.weight"
		}
		out = append(out, matvec(head, rmsnorm(x, "model.norm.weight")))
	}
	return out
}
