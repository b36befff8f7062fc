package vulkan

// The upper rungs of the ladder on whatever Vulkan device is there (Mesa's
// lavapipe in CI): whole-model logits against the golden reference and
// against the CPU backend (same f16 KV cache), token-by-token decode
// against prefill, replayed command buffers against recorded ones, every
// family the backend runs and every weight type, and batched against
// alone.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"inferno/arch"
	"inferno/backend/forward"
	"inferno/backend/scalar"
	"inferno/batch"
	"inferno/engine"
	"inferno/family"
	"inferno/gguf"
	"inferno/internal/gumbel"
	"inferno/kvcache"
	_ "inferno/model/gemma3" // the families archModel looks up
	_ "inferno/model/gptoss"
	_ "inferno/model/llama"
	_ "inferno/model/mistral3"
	_ "inferno/model/phi3"
	_ "inferno/model/qwen2"
	_ "inferno/model/qwen3"
	_ "inferno/model/qwen3moe"
	"inferno/sampling"
	"inferno/synth"
)

const goldenDir = "../../testdata/golden"

// loadModel uploads m; the model is closed when the test ends.
func loadModel(t testing.TB, m arch.Model, opts Options) *Model {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	if opts.IntDot == IntDotAuto {
		opts.IntDot = testIntDot
	}
	md, err := Load(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { md.Close() })
	return md
}

// single returns one sequence of md as the commands run it: a batch of one
// on a runner whose pool holds MaxLen positions in blocks of 16.
func single(t testing.TB, md *Model) *engine.Single {
	t.Helper()
	br, err := md.NewBatchRunner((md.maxLen+15)/16, 16)
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewSingle(br)
	t.Cleanup(func() { s.Close() })
	return s
}

// cpuSingle returns the CPU reference: the scalar backend (float32
// products, where simd's quantize the activations to 8 bits) with an f16
// KV cache, as the device keeps.
func cpuSingle(t testing.TB, m arch.Model, maxLen int) *engine.Single {
	t.Helper()
	br, err := forward.NewBatched(m, scalar.NewScalar(), maxLen, (maxLen+15)/16, 16, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewSingle(br)
	t.Cleanup(func() { s.Close() })
	return s
}

func lastLogits(t testing.TB, s *engine.Single) []float32 {
	t.Helper()
	l, err := s.Logits()
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), l...)
}

func openGGUF(t testing.TB, path string) arch.Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	name, err := f.String("general.architecture")
	if err != nil {
		t.Fatal(err)
	}
	fam, ok := family.Lookup(name)
	if !ok {
		t.Fatalf("%s: no family %q", path, name)
	}
	m, err := arch.LoadModel(f, fam.Config)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGoldenTiny runs the golden prompts of tiny-q8_0.gguf as one prefill
// pass each against the float64 reference: within 2e-3 relative L2
// (coopTol's on cooperative matrices), the same top-1 where the
// reference's margin is at least 0.5. The prompts of
// up to 20 tokens run token by token too (decode passes replaying their
// command buffer) and so with every pass recorded anew (NoGraph), which
// must give the replay's bits.
func TestGoldenTiny(t *testing.T) {
	var gold struct {
		Prompts map[string]struct {
			IDs            []int32 `json:"ids"`
			LastLogitsFile string  `json:"last_logits_file"`
		} `json:"prompts"`
	}
	b, err := os.ReadFile(filepath.Join(goldenDir, "tiny-q8_0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &gold); err != nil {
		t.Fatal(err)
	}
	m := openGGUF(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	const maxLen = 512
	md := loadModel(t, m, Options{MaxLen: maxLen, Device: -1})
	mdNoGraph := loadModel(t, m, Options{MaxLen: maxLen, Device: -1, NoGraph: true})
	names := make([]string, 0, len(gold.Prompts))
	for k := range gold.Prompts {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		p := gold.Prompts[name]
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(goldenDir, p.LastLogitsFile))
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float32, len(raw)/4)
			for i := range want {
				want[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			_, margin := top2(want)
			tol := 2e-3
			if md.d.CoopMatrix {
				tol = coopTol(tol)
			}
			check := func(path string, got []float32) {
				e := relL2(got, want)
				t.Logf("%-7s %3d tokens: relative L2 %.3g vs golden (margin %.3f)", path, len(p.IDs), e, margin)
				if !(e <= tol) {
					t.Errorf("%s: relative L2 %.3g vs the golden logits > %g", path, e, tol)
				}
				if a, b := sampling.Argmax(got), sampling.Argmax(want); margin >= 0.5 && a != b {
					t.Errorf("%s: top-1 %d, the golden %d (margin %.3f)", path, a, b, margin)
				}
			}
			prefill := single(t, md)
			if err := prefill.Forward(p.IDs); err != nil {
				t.Fatal(err)
			}
			check("prefill", lastLogits(t, prefill))
			if len(p.IDs) > 20 {
				return
			}
			steps, stepsNG := single(t, md), single(t, mdNoGraph)
			for i := range p.IDs {
				for _, s := range []*engine.Single{steps, stepsNG} {
					if err := s.Forward(p.IDs[i : i+1]); err != nil {
						t.Fatal(err)
					}
				}
			}
			dl, ngl := lastLogits(t, steps), lastLogits(t, stepsNG)
			check("decode", dl)
			for i := range dl {
				if math.Float32bits(dl[i]) != math.Float32bits(ngl[i]) {
					t.Fatalf("NoGraph logit %d = %g, the replayed pass's %g", i, ngl[i], dl[i])
				}
			}
		})
	}
}

// top2 returns the argmax of v and its margin over the second largest.
func top2(v []float32) (int, float64) {
	a := int(sampling.Argmax(v))
	second := math.Inf(-1)
	for i, x := range v {
		if i != a && float64(x) > second {
			second = float64(x)
		}
	}
	return a, float64(v[a]) - second
}

// archCase is a small model of a family's preset in a weight mixture.
type archCase struct {
	name, preset, mix string
	shape             synth.Shape
}

var archCases = []archCase{
	{"qwen3-q8_0", "0.6b", "Q8_0", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512}},
	{"qwen3-f16", "0.6b", "F16", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512}},
	{"llama-tied-q4_k_m", "llama3-1b", "Q4_K_M", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 8, KVHeads: 2, HeadDim: 32, Vocab: 512}},
	{"llama-untied-q4_0", "llama3-8b", "Q4_0", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 2, KVHeads: 1, HeadDim: 128, Vocab: 512}},
	{"qwen2-tied-q5_k_m", "qwen2.5-0.5b", "Q5_K_M", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512}},
	{"qwen2-untied-iq4_xs", "qwen2.5-7b", "IQ4_XS", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 1, HeadDim: 64, Vocab: 512}},
	{"mistral3-q6_k", "mistral3-24b", "Q6_K", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512}},
	{"phi4-q8_0", "phi4-14b", "Q8_0", synth.Shape{Layers: 2, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512}},
	// Gemma 3: a scaled embedding, GeGLU, post-norms, sliding-window
	// layers with a RoPE of their own (the window is longer than these
	// sequences: TestOpsAttention checks windows that bite), an
	// attention scale.
	{"gemma3-q4_0", "gemma3-12b", "Q4_0", synth.Shape{Layers: 6, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512}},
	moeCases[0], moeCases[1], moeCases[2],
}

// moeCases are the mixtures of experts (moe.go): Qwen3-MoE's softmax over
// all experts renormalized over the top k, in two formats, and gpt-oss's
// router and expert biases, softmax over the top k, clamped SwiGLU, sinks
// and sliding windows, with its files' MXFP4 experts.
var moeCases = []archCase{
	{"qwen3moe-q8_0", "tiny-moe", "Q8_0", synth.Shape{Layers: 2, Hidden: 256, FFN: 256, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512, Experts: 8, TopK: 3, ExpertFFN: 96}},
	{"qwen3moe-q4_k_m", "tiny-moe", "Q4_K_M", synth.Shape{Layers: 2, Hidden: 256, FFN: 256, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512, Experts: 6, TopK: 2, ExpertFFN: 256}},
	{"gptoss-mxfp4", "gpt-oss-20b", "MXFP4_MOE", synth.Shape{Layers: 2, Hidden: 256, FFN: 256, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 512, Experts: 8, TopK: 4, ExpertFFN: 128}},
}

// archModel writes c's model with synth (seed 1) in memory and loads it.
func archModel(t testing.TB, c archCase) arch.Model {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Preset: c.preset, Shape: c.shape, Mixture: c.mix, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := family.LookupPreset(c.preset)
	fam, ok := family.Lookup(p.Config.Arch)
	if !ok {
		t.Fatalf("%s: no family for preset %s", c.name, c.preset)
	}
	m, err := arch.LoadModel(f, fam.Config)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestArchitectures runs each family's model on the device against the
// CPU: a prompt of 37 tokens, then 8 decode steps of the CPU's greedy
// token, every step within 2e-3 relative L2 (coopTol's on cooperative
// matrices) with the same top-1 (but where the CPU's logits of the two
// differ by less than tieGap: a tie within the step's error).
func TestArchitectures(t *testing.T) {
	for _, c := range archCases {
		t.Run(c.name, func(t *testing.T) {
			m := archModel(t, c)
			const maxLen = 128
			md := loadModel(t, m, Options{MaxLen: maxLen, Device: -1})
			g := single(t, md)
			tol := 2e-3
			if md.d.CoopMatrix {
				tol = coopTol(tol)
			}
			cpu := cpuSingle(t, m, maxLen)
			rng := rand.New(rand.NewPCG(3, 4))
			next := make([]int32, 37)
			for i := range next {
				next[i] = int32(rng.IntN(m.Hyper().Vocab))
			}
			worst := 0.0
			defer func() { t.Logf("worst relative L2 against the CPU over 9 steps: %.3g", worst) }()
			for step := range 9 {
				for _, s := range []*engine.Single{g, cpu} {
					if err := s.Forward(next); err != nil {
						t.Fatal(err)
					}
				}
				gl, cl := lastLogits(t, g), lastLogits(t, cpu)
				e := relL2(gl, cl)
				worst = max(worst, e)
				if !(e <= tol) {
					t.Errorf("step %d: relative L2 %.3g vs the CPU > %g", step, e, tol)
				}
				if a, b := sampling.Argmax(gl), sampling.Argmax(cl); a != b && cl[b]-cl[a] > tieGap(cl, e) {
					t.Errorf("step %d: top-1 %d, the CPU's %d (%.4g above it there)", step, a, b, cl[b]-cl[a])
				}
				id, err := cpu.Greedy()
				if err != nil {
					t.Fatal(err)
				}
				gid, err := g.Greedy()
				if err != nil {
					t.Fatal(err)
				}
				if gid != int32(sampling.Argmax(gl)) {
					t.Errorf("step %d: the device's argmax %d, the logits' %d", step, gid, sampling.Argmax(gl))
				}
				next = []int32{id}
			}
		})
	}
}

// TestBatchedEqualsAlone runs eleven sequences (prompts of different
// lengths in blocks out of order, then decode steps together, more tokens
// than a tile of mul_mv) against each alone: every output within 1e-3
// relative L2; a dense model and a mixture of experts (each token's
// experts chosen on the device).
func TestBatchedEqualsAlone(t *testing.T) {
	for _, c := range []archCase{archCases[0], moeCases[2]} {
		t.Run(c.name, func(t *testing.T) { testBatchedEqualsAlone(t, c) })
	}
}

func testBatchedEqualsAlone(t *testing.T, c archCase) {
	m := archModel(t, c)
	md := loadModel(t, m, Options{MaxLen: 256, Device: -1})
	const bs = 16
	br, err := md.NewBatchRunner(48, bs)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	// Eleven sequences: the decode passes take more tokens than a tile of
	// mul_mv (with the integer products, fuseNorm past fuseInputs).
	lens := []int{23, 1, 40, 2, 5, 3, 1, 7, 2, 4, 3}
	prompts := make([][]int32, len(lens))
	for i, n := range lens {
		for range n {
			prompts[i] = append(prompts[i], int32(rng.IntN(m.Hyper().Vocab)))
		}
	}
	// Blocks of each sequence, taken from a shuffled pool.
	perm := rng.Perm(48)
	tables := [][]int32{}
	for i := range lens {
		var tab []int32
		for j := range 4 {
			tab = append(tab, int32(perm[4*i+j]))
		}
		tables = append(tables, tab)
	}
	var b batch.Batch
	pos := make([]int, len(lens))
	for i, p := range prompts {
		b.Add(b.AddSeq(tables[i]), p, 0, true)
		pos[i] = len(p)
	}
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	got := make([][][]float32, len(lens))
	next := make([]int32, len(lens))
	for i := range lens {
		l, _ := br.Logits(i)
		got[i] = append(got[i], append([]float32(nil), l...))
		id, _ := br.Greedy(i)
		next[i] = id
	}
	for range 3 {
		b.Reset()
		for i := range lens {
			b.Add(b.AddSeq(tables[i]), next[i:i+1], pos[i], true)
			pos[i]++
		}
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		for i := range lens {
			l, _ := br.Logits(i)
			got[i] = append(got[i], append([]float32(nil), l...))
			id, _ := br.Greedy(i)
			next[i] = id
		}
	}
	// A prompt's products take mul_mm's tiles in the batched pass and, alone,
	// mul_mv's (up to 8 tokens; mul_mvq's quantized activations with
	// integer products) or mul_mm's tiles of another width: sums in other
	// orders, which this random model's logits carry up to about 1e-4
	// apart on lavapipe (prompts of 2 to 8 tokens). A wrong position,
	// table or row is off by far more.
	tol := 1e-3
	if md.d.CoopMatrix {
		tol = coopTol(tol)
	}
	for i := range lens {
		alone := single(t, md)
		if err := alone.Forward(prompts[i]); err != nil {
			t.Fatal(err)
		}
		for step := range got[i] {
			if step > 0 {
				id, _ := alone.Greedy()
				if err := alone.Forward([]int32{id}); err != nil {
					t.Fatal(err)
				}
			}
			if e := relL2(got[i][step], lastLogits(t, alone)); !(e <= tol) {
				t.Errorf("sequence %d step %d: batched vs alone relative L2 %.3g > %g", i, step, e, tol)
			}
		}
	}
}

// TestDeviceSampling runs three sequences' decode step with the device
// choosing their tokens (engine.DeviceSampler) under different settings,
// replayed under other seeds, and checks each token against the
// definition's reference (gumbel.Sample of the same logits), and that a
// seeded row draws the same token batched with others as alone.
func TestDeviceSampling(t *testing.T) {
	m := archModel(t, archCases[0])
	md := loadModel(t, m, Options{MaxLen: 128, Device: -1})
	br, err := md.NewBatchRunner(24, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	params := []sampling.Params{
		{Temperature: 0.8},
		{Temperature: 1, TopK: 40},
		{Temperature: 0.7, TopP: 0.9, MinP: 0.05},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	vocab := m.Hyper().Vocab
	prompts := make([][]int32, len(params))
	for i := range prompts {
		for range 5 + 3*i {
			prompts[i] = append(prompts[i], int32(rng.IntN(vocab)))
		}
	}
	step := func(seqs []int, seed uint64) []int32 {
		var b batch.Batch
		rows := make([]sampling.Row, len(seqs))
		for j, i := range seqs {
			b.Add(b.AddSeq([]int32{int32(8 * i), int32(8*i + 1), int32(8*i + 2)}), prompts[i], 0, true)
			rows[j] = sampling.Row{On: true, Params: params[i], Seed: seed + uint64(i), Index: 3}
		}
		if err := br.SetSamples(rows); err != nil {
			t.Fatal(err)
		}
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		ids := make([]int32, len(seqs))
		for j, i := range seqs {
			tok, err := br.Sampled(j)
			if err != nil {
				t.Fatal(err)
			}
			l, err := br.Logits(j)
			if err != nil {
				t.Fatal(err)
			}
			if want := gumbel.Sample(l, params[i], nil, nil, seed+uint64(i), 3); tok.ID != want {
				t.Errorf("seed %d, sequence %d: the device drew %d, the reference %d", seed, i, tok.ID, want)
			}
			ids[j] = tok.ID
		}
		return ids
	}
	for seed := uint64(1); seed <= 20; seed++ {
		all := step([]int{0, 1, 2}, seed)
		alone := step([]int{1}, seed)
		if alone[0] != all[1] {
			t.Errorf("seed %d: sequence 1 drew %d batched, %d alone", seed, all[1], alone[0])
		}
	}
}

// TestDecodeAllocs checks that a decode step replaying its command buffer
// allocates nothing on the Go heap but what its three driver calls do
// (submit, wait, reset the fence): purego's SyscallN allocates once a call
// (measured with purego v0.11.3 on linux/amd64: 1 allocation a call of
// strlen, whatever the arguments).
func TestDecodeAllocs(t *testing.T) {
	m := archModel(t, archCases[0])
	md := loadModel(t, m, Options{MaxLen: 128, Device: -1})
	br, err := md.NewBatchRunner(8, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	var b batch.Batch
	tab := []int32{0, 1, 2, 3}
	b.Add(b.AddSeq(tab), []int32{1, 2, 3}, 0, true)
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	pos := 3
	step := func() {
		b.Reset()
		b.Add(b.AddSeq(tab), []int32{5}, pos%60+3, true)
		pos++
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		if _, err := br.Greedy(0); err != nil {
			t.Fatal(err)
		}
	}
	step() // records the decode shape
	if n := testing.AllocsPerRun(20, step); n > 3 {
		t.Errorf("a decode step allocates %v times, more than its 3 driver calls", n)
	}
}

// TestHidden runs the last-token hidden rows of an embedding pass (three
// sequences batched, one of them also wanting logits) against the CPU's:
// within 1e-4 relative L2 (coopTol's on cooperative matrices).
func TestHidden(t *testing.T) {
	m := archModel(t, archCases[0])
	md := loadModel(t, m, Options{MaxLen: 128, Device: -1})
	br, err := md.NewBatchRunner(24, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	cpu, err := forward.NewBatched(m, scalar.NewScalar(), 128, 24, 16, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	rng := rand.New(rand.NewPCG(11, 12))
	var b batch.Batch
	for i, n := range []int{7, 20, 3} {
		ids := make([]int32, n)
		for j := range ids {
			ids[j] = int32(rng.IntN(m.Hyper().Vocab))
		}
		s := b.AddSeq([]int32{int32(8 * i), int32(8*i + 1)})
		if i == 1 {
			b.Add(s, ids, 0, true)
			continue
		}
		b.AddHidden(s, ids, 0)
	}
	for _, r := range []interface {
		Forward(*batch.Batch) error
	}{br, cpu} {
		if err := r.Forward(&b); err != nil {
			t.Fatal(err)
		}
	}
	for i := range b.Hidden {
		got, err := br.Hidden(i)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cpu.Hidden(i)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-4
		if md.d.CoopMatrix {
			tol = coopTol(tol)
		}
		if e := relL2(got, want); !(e <= tol) {
			t.Errorf("hidden row %d: relative L2 %.3g against the CPU > %g", i, e, tol)
		}
	}
	gl, _ := br.Logits(0)
	cl, _ := cpu.Logits(0)
	if e := relL2(gl, cl); !(e <= 2e-3) {
		t.Errorf("logits beside the hidden rows: relative L2 %.3g against the CPU > 2e-3", e)
	}
}

// coopTol is a test's tolerance tol against the CPU, the reference or a
// path without them where the prompts' products run on cooperative
// matrices (mul_mm_cm): their float16 factors put a product within 1e-4
// of its magnitudes' sum as measured (TestMulMM holds 1.2e-3, the
// rounding's bound), and a model's hidden rows and logits within 1.1e-3
// to 1.7e-3 relative L2 of float32's (H100, 2026-12-07); the bound is
// 3e-3, CUDA's for its float16 prompt products, or tol if larger.
func coopTol(tol float64) float64 { return max(tol, 3e-3) }

// tieGap is how far apart two logits of want may be and still be a tie
// for a comparison whose relative L2 error is e: four times the error's
// root mean square per logit.
func tieGap(want []float32, e float64) float32 {
	var ss float64
	for _, v := range want {
		ss += float64(v) * float64(v)
	}
	return float32(4 * e * math.Sqrt(ss/float64(max(len(want), 1))))
}
