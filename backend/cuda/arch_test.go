package cuda

// The architectures beyond Qwen3 (rope.go, moe.go): Llama 3 (normal RoPE,
// Llama 3 frequency factors, no QK-norm, tied or untied head), Qwen2.5
// (Q/K/V biases, no QK-norm) and Qwen3-MoE (the experts) on the GPU
// against the CPU, and batched against alone. The models are synth's presets of those families at small widths
// (the kernels take head dimensions 32 to 256; testdata/arch's
// checkpoints have 8 and 16).

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/scalar"
	"inferno/family"
	"inferno/gguf"
	_ "inferno/model/gemma3" // the families archModel looks up
	_ "inferno/model/gptoss"
	_ "inferno/model/llama"
	_ "inferno/model/phi3"
	_ "inferno/model/qwen2"
	_ "inferno/model/qwen3moe"
	"inferno/synth"
)

// thetaFreqs returns the RoPE frequencies of base theta without scaling.
func thetaFreqs(theta float64, hd int) []float64 {
	r := arch.Rope{Theta: theta}
	return r.Freqs(hd)
}

// archCase is a small model of a Llama or Qwen2.5 preset.
type archCase struct {
	name, preset, mix string
	shape             synth.Shape
	tol, batchTol     float64 // logits relative L2: GPU vs CPU, batched vs alone (0: not compared)
	noNorm            bool    // qwen3moe: gating weights over all experts (norm_topk_prob false)
	// flips is how many of the GPU's steps may pass tol: a mixture that
	// chooses k < E experts flips a choice where two routers' logits
	// nearly tie, and the experts' int8 (or f16) inputs move the next
	// layer's logits by ~1e-2, so a step now and then takes another
	// expert than the CPU's float32 pass (llama.cpp's backends differ so
	// too). Mixtures with k = E cannot flip: they are held to tol at every
	// step and batched against alone.
	flips int
}

var archCases = []archCase{
	// Llama 3.2 1B's options (tied head, frequency factors of factor 32),
	// Llama 3.1 8B's (untied, factor 8), Qwen2.5 0.5B's (tied, 14/2 heads
	// of 64) and 7B's (untied, 7/1 heads of 128). Batched against alone
	// as TestBatchEqualsAlone (f16 activations from 128 tokens on).
	{"llama-tied-q8_0", "llama3-1b", "Q8_0", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024}, 2e-2, 3e-3, false, 0},
	{"llama-untied-q8_0", "llama3-8b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 2, HeadDim: 128, Vocab: 1024}, 2e-2, 3e-3, false, 0},
	{"qwen2-tied-q8_0", "qwen2.5-0.5b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 14, KVHeads: 2, HeadDim: 64, Vocab: 1024}, 2e-2, 3e-3, false, 0},
	{"qwen2-untied-q8_0", "qwen2.5-7b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 7, KVHeads: 1, HeadDim: 128, Vocab: 1024}, 2e-2, 3e-3, false, 0},
	// Q4_K_M: batches run f16 tensor-core tiles, one token int8 matvecs
	// (quant_gpu_test.go's TestQuantModel: ~1e-2 apart on small models).
	{"llama-untied-q4_k_m", "llama3-8b", "Q4_K_M", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 2, HeadDim: 128, Vocab: 1024}, 5e-2, 4e-2, false, 0},
	{"qwen2-untied-q4_k_m", "qwen2.5-7b", "Q4_K_M", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 7, KVHeads: 1, HeadDim: 128, Vocab: 1024}, 5e-2, 4e-2, false, 0},
	// Qwen3-MoE (moe.go): every expert chosen (k = E: no choice can flip)
	// in Q8_0 and Q4_K_M, against the CPU and batched against alone (a
	// batch of tuning.moeH tokens or more takes the f16 tensor-core products, a
	// smaller one the int8 ones: ~1e-2 apart); then real choices: 8
	// experts of width 256, 2 a token, with and without renormalized
	// gating weights, and 30B-A3B's mixture of 128, 8 a token, in Q4_K_M
	// (the expert stacks Q4_K and Q6_K), against the CPU.
	{"qwen3moe-all-q8_0", "30b-a3b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 4, TopK: 4, ExpertFFN: 256}, 2e-2, 3e-2, false, 0},
	{"qwen3moe-all-q4_k_m", "30b-a3b", "Q4_K_M", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 16, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 4, TopK: 4, ExpertFFN: 256}, 5e-2, 5e-2, false, 0},
	{"qwen3moe-q8_0", "30b-a3b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 8, TopK: 2, ExpertFFN: 256}, 2e-2, 0, false, 2},
	{"qwen3moe-nonorm-q8_0", "30b-a3b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 8, TopK: 2, ExpertFFN: 256}, 2e-2, 0, true, 2},
	{"qwen3moe-q4_k_m", "30b-a3b", "Q4_K_M", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 16, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 128, TopK: 8, ExpertFFN: 256}, 5e-2, 0, false, 2},
}

// archModel writes c's model with synth (seed 1) in memory and loads it
// with its architecture's package.
func archModel(t testing.TB, c archCase) *arch.Loaded {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Preset: c.preset, Shape: c.shape, Mixture: c.mix, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	fam, ok := family.Lookup(presetArch(c.preset))
	if !ok {
		t.Fatalf("%s: no family for preset %s", c.name, c.preset)
	}
	m, err := arch.LoadModel(f, fam.Config)
	if err != nil {
		t.Fatal(err)
	}
	if c.noNorm {
		m.Config.MoE.NormTopK = false
	}
	return m
}

// TestArchFeatures checks, without a GPU, that the CUDA backend takes
// every Llama and Qwen2.5 model's options and still refuses, in one line
// naming it, an option it does not run.
func TestArchFeatures(t *testing.T) {
	t.Parallel()
	for _, c := range archCases {
		c.mix = "Q8_0" // the options, not the weights: Q8_0 is the quickest to write
		m := archModel(t, c)
		h := m.Hyper()
		if err := h.Check("cuda", Features); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if err := checkShape(h); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.preset == "llama3-1b" && (h.Rope.Style != arch.RopeNormal || h.Rope.FreqFactors == nil || h.QKNorm || !h.TiedOutput) {
			t.Errorf("%s: configuration %+v does not exercise normal RoPE with frequency factors and a tied head", c.name, h)
		}
	}
	m := archModel(t, archCases[0])
	h := *m.Hyper()
	h.MoE = arch.MoE{Experts: 4, TopK: 2, ExpertFFN: 64, Gating: arch.GateSigmoid}
	err := h.Check("cuda", Features)
	if err == nil || !strings.Contains(err.Error(), "sigmoid") || strings.Contains(err.Error(), "\n") {
		t.Errorf("sigmoid gating: %v, want a one-line refusal naming it", err)
	}
}

// kernelRope rotates the heads of v (hd values each, float32) at position
// p as the kernels do (norm_rope_warp): NeoX pairs (i, i+hd/2) over the
// whole head by the table's (cos, sin) of that position.
func kernelRope(v []float32, hd, p int, tab []float32) {
	h := hd / 2
	row := tab[2*p*h : 2*(p+1)*h]
	for o := 0; o < len(v); o += hd {
		for i := range h {
			c, s := row[2*i], row[2*i+1]
			a, b := v[o+i], v[o+i+h]
			v[o+i], v[o+i+h] = a*c-b*s, a*s+b*c
		}
	}
}

// TestRopeRows checks the reordering that runs normal and partial RoPE as
// the kernels' NeoX rotation over whole heads: the rows of each head of a
// matrix move as ropeVec moves a vector's values; the kernels' rotation
// (ropeTable: the unrotated pairs turned by the identity, YaRN's factor
// on cos and sin) of a reordered head is the reordered rotation of the CPU
// (scalar RoPE over rotDims values); and so a query's dot product with a
// key at another position is the one the model's RoPE gives.
func TestRopeRows(t *testing.T) {
	t.Parallel()
	const hd, heads, cols = 16, 3, 64
	rng := rand.New(rand.NewPCG(3, 4))
	w := randQ8(rng, "attn_q.weight", heads*hd, cols)
	sc := scalar.NewScalar()
	ropes := []arch.Rope{
		{Theta: 500000, Scaling: arch.ScaleLlama3, Factor: 8, OrigContext: 64, LowFreqFactor: 1, HighFreqFactor: 4},
		{Theta: 150000, Scaling: arch.ScaleYaRN, Factor: 32, OrigContext: 64, BetaFast: 32, BetaSlow: 1},
		{Theta: 10000, Scaling: arch.ScaleLinear, Factor: 8},
	}
	for _, style := range []arch.RopeStyle{arch.RopeNormal, arch.RopeNeoX} {
		for _, rot := range []int{hd, 12, 8, 2} {
			for ri := range ropes {
				rope := ropes[ri]
				rope.Style = style
				name := fmt.Sprintf("%v RoPE on %d of %d, %v scaling", style, rot, hd, rope.Scaling)
				got, err := ropeRows(w, style, hd, rot)
				if err != nil {
					t.Fatal(err)
				}
				if ropeIdentity(style, hd, rot) {
					if got != w {
						t.Errorf("%s: the rows were reordered", name)
					}
				} else if got == w {
					t.Errorf("%s: no reordering", name)
				}
				idx := make([]float32, heads*hd)
				for i := range idx {
					idx[i] = float32(i)
				}
				perm := ropeVec(idx, style, hd, rot)
				for r := range heads * hd {
					if !bytes.Equal(got.Row(r), w.Row(int(perm[r]))) {
						t.Fatalf("%s: row %d of the reordered matrix is not row %v of the original", name, r, perm[r])
					}
				}
				c := arch.Config{HeadDim: hd, RopeDims: rot}
				tab := layerRopeTable(&c, &rope, 64)
				q, k := randVec(rng, heads*hd, 1), randVec(rng, heads*hd, 1)
				// The CPU's rotation, then reordered; the reordered head
				// rotated as the kernels do.
				qc, kc := append([]float32(nil), q...), append([]float32(nil), k...)
				sc.RoPE(qc, []int32{37}, heads, hd, rot, &rope)
				sc.RoPE(kc, []int32{5}, heads, hd, rot, &rope)
				qg, kg := ropeVec(q, style, hd, rot), ropeVec(k, style, hd, rot)
				kernelRope(qg, hd, 37, tab)
				kernelRope(kg, hd, 5, tab)
				for i, x := range ropeVec(qc, style, hd, rot) {
					if math.Abs(float64(x-qg[i])) > 1e-6 {
						t.Fatalf("%s: value %d: the kernels' rotation %v, the reordered CPU rotation %v", name, i, qg[i], x)
					}
				}
				for h := range heads {
					var dc, dg float64
					for d := range hd {
						dc += float64(qc[h*hd+d]) * float64(kc[h*hd+d])
						dg += float64(qg[h*hd+d]) * float64(kg[h*hd+d])
					}
					if math.Abs(dc-dg) > 1e-5 {
						t.Errorf("%s: head %d: score %v, the model's %v", name, h, dg, dc)
					}
				}
			}
		}
	}
	if _, err := ropeRows(&backend.Weight{Name: "x", Type: w.Type, Rows: 20, Cols: cols, Data: w.Data}, arch.RopeNormal, hd, hd); err == nil {
		t.Error("20 rows as heads of 16: no error")
	}
	// A table's unrotated pairs are the identity, its rotated ones YaRN's
	// factor times (cos, sin).
	yarn := ropes[1]
	c := arch.Config{HeadDim: hd, RopeDims: 8}
	tab := layerRopeTable(&c, &yarn, 8)
	for p := range 8 {
		for i := range hd / 2 {
			cs, sn := tab[2*(p*hd/2+i)], tab[2*(p*hd/2+i)+1]
			if i >= 4 && (cs != 1 || sn != 0) {
				t.Fatalf("position %d, pair %d (unrotated): (%v, %v)", p, i, cs, sn)
			}
			if m := math.Hypot(float64(cs), float64(sn)); i < 4 && math.Abs(m-yarn.Mscale()) > 1e-6 {
				t.Fatalf("position %d, pair %d: |(cos, sin)| = %v, want YaRN's factor %v", p, i, m, yarn.Mscale())
			}
		}
	}
}

// TestArchModels runs each case's model on the GPU and on the CPU (the
// scalar reference on the same weights): a 40-token prompt as one batch
// (the prompt path), then 12 greedy steps through the decode graph, both
// fed the CPU's tokens; logits within the case's bound, the same greedy
// token unless a near tie explains the difference. Then 8 sequences
// batched against each alone (batchEqualsAloneTol: prompts, a mixed
// batch, decode graphs of 8, 3 and 1).
//
// Unless -short, the mixtures run again with each expert's product on one
// block (moe-b1: every block loops over all its expert's tiles, the next
// tile's weights in flight) and on two, taking pairs eight at a time
// (moe-b2).
func TestArchModels(t *testing.T) {
	requireGPU(t)
	type run struct {
		archCase
		name string
		tune func(*tuning)
	}
	var runs []run
	for _, c := range archCases {
		runs = append(runs, run{c, c.name, nil})
		if presetArch(c.preset) == "qwen3moe" && !testing.Short() {
			runs = append(runs, run{c, c.name + "/moe-b1", func(t *tuning) { t.moeB = 1 }},
				run{c, c.name + "/moe-b2", func(t *tuning) { t.moeB, t.moeNT = 2, 0 }})
		}
	}
	for _, rc := range runs {
		c := rc.archCase
		t.Run(rc.name, func(t *testing.T) {
			m := archModel(t, c)
			archAgainstCPU(t, c, m, rc.tune, randomPrompt(7, 40, m.Config.Vocab), 12)
			if c.batchTol > 0 {
				batchEqualsAloneTol(t, m, rc.tune, 16, 16, c.batchTol)
			}
		})
	}
}

// archAgainstCPU runs m on the GPU and on the CPU (the scalar reference
// on the same weights): prompt as one batch (the prompt path), then
// steps-1 greedy steps through the decode graph, both fed the CPU's
// tokens; logits within c's bound (but for c.flips steps), the same
// greedy token unless a near tie explains the difference.
func archAgainstCPU(t *testing.T, c archCase, m *arch.Loaded, tune func(*tuning), prompt []int32, steps int) {
	t.Helper()
	maxLen := len(prompt) + steps + 1
	r := gpuSingle(t, m, Options{MaxLen: maxLen, tune: tune})
	cpu := cpuRunner(t, m, maxLen)
	next := prompt
	var worst float64
	flips, over := 0, 0
	for step := range steps {
		if err := cpu.Forward(next); err != nil {
			t.Fatal(err)
		}
		if err := r.Forward(next); err != nil {
			t.Fatal(err)
		}
		cl, _ := cpu.Logits()
		gl := logits(t, r)
		e := relL2(gl, cl)
		worst = max(worst, e)
		if math.IsNaN(e) {
			t.Errorf("step %d: logits relative L2 %.3g vs the CPU", step, e)
		} else if e > c.tol {
			if over++; over > c.flips {
				t.Errorf("step %d: logits relative L2 %.3g vs the CPU (bound %.g; %d steps past it, %d allowed)", step, e, c.tol, over, c.flips)
			} else {
				t.Logf("step %d: logits relative L2 %.3g vs the CPU: an expert choice flipped (%d of %d allowed)", step, e, over, c.flips)
			}
		}
		ct, _ := cpu.Greedy()
		if gt, _ := r.Greedy(); gt != ct {
			flips++
			var rms float64
			for _, v := range cl {
				rms += float64(v) * float64(v)
			}
			rms = math.Sqrt(rms / float64(len(cl)))
			if gap := float64(cl[ct] - cl[gt]); gap > 20*e*rms+1e-3 {
				t.Errorf("step %d: greedy %d, CPU %d: gap %.3g not explained by the logit error %.3g", step, gt, ct, gap, e*rms)
			}
		}
		next = []int32{ct}
	}
	t.Logf("%s: worst logits relative L2 vs the CPU %.3g over a prompt of %d and %d decode steps (%d past %.g); greedy differs at %d",
		c.name, worst, len(prompt), steps-1, over, c.tol, flips)
}

// presetArch returns the architecture of synth's preset name.
func presetArch(name string) string {
	_, p, _ := family.LookupPreset(name)
	return p.Config.Arch
}
