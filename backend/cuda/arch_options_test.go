package cuda

// The families whose options run as kernels of their own (options.go,
// moe.go's biases, rope.go's partial and YaRN RoPE): Gemma 3, gpt-oss and
// Phi-4 on synth's presets at small widths, on the GPU against the CPU,
// batched against alone and sampled.

import (
	"math"
	"testing"
	"unsafe"

	"inferno/arch"
	"inferno/synth"
)

// optCase is an archCase of a family with the options, and how to run it.
type optCase struct {
	archCase
	prompt int                // the prompt's length against the CPU
	edit   func(*arch.Config) // changes to the loaded configuration, or nil
	sample bool               // also decode sampled on the GPU (sampledLookahead)
	tune   func(*tuning)      // launch choices other than the defaults, or nil
}

// window returns an edit setting the local layers' window to w.
func window(w int) func(*arch.Config) { return func(c *arch.Config) { c.Window = w } }

var optCases = []optCase{
	// Gemma 3 1B's options: five local layers in six (a window of 48
	// here: its 512 is past these prompts) with their own RoPE base,
	// QK-norm, post-norms, GeGLU, the embedding scaled, heads of 256, a
	// tied head. Q8_0 on Q8_0's own kernels: the gate/up rows stored raw
	// and activated by glu_rows.
	{archCase{"gemma3-q8_0", "gemma3-1b", "Q8_0", synth.Shape{Layers: 6, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 1, HeadDim: 256, Vocab: 1024}, 2e-2, 3e-3, false, 0},
		100, window(48), true, nil},
	// The same on the generic kernels' Q8_0 (tuning.q8h, a hidden size
	// from 2,048 on): their GeGLU epilogues, and Q8_0's own skinny
	// products for 2 to 8 tokens (glu_rows).
	{archCase{"gemma3-q8_0-q8h", "gemma3-1b", "Q8_0", synth.Shape{Layers: 6, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 1, HeadDim: 256, Vocab: 1024}, 3e-2, 4e-2, false, 0},
		100, window(48), false, func(t *tuning) { t.q8h = true }},
	// Gemma 3 4B's: the global layers' linear RoPE scaling, 8/4 heads;
	// Q4_K_M (the generic kernels' GeGLU epilogue); the 27B's attention
	// scale (hidden/heads).
	// Its post-norms (every sub-layer's output normalized) and scaled
	// embedding carry the int8 and f16 activations' error further than
	// Llama's at these widths (2e-2 on Q8_0 there, gemma3-q8_0-q8h; the
	// options' own arithmetic is the f16 case's 1e-3).
	{archCase{"gemma3-q4_k_m", "gemma3-4b", "Q4_K_M", synth.Shape{Layers: 6, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 4, HeadDim: 256, Vocab: 1024}, 8e-2, 6e-2, false, 0},
		100, func(c *arch.Config) { c.Window, c.AttnScale = 40, float32(1/math.Sqrt(float64(c.Hidden/c.Heads))) }, false, nil},
	// F16 matrices: the float kernels' GeGLU epilogues.
	{archCase{"gemma3-f16", "gemma3-1b", "F16", synth.Shape{Layers: 6, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 1, HeadDim: 256, Vocab: 1024}, 2e-2, 3e-2, false, 0},
		100, window(48), false, nil},
	// gpt-oss's: sinks, its window of 128 on alternate layers (the
	// prompts pass it), YaRN, Q/K/V and output biases, experts with
	// biases and OpenAI's clamped SwiGLU, the softmax over the top k; a
	// float router. Every expert chosen (k = E: no choice can flip), then
	// 2 of 8.
	{archCase{"gptoss-all-q8_0", "gpt-oss-20b", "Q8_0", synth.Shape{Layers: 4, Hidden: 512, FFN: 512, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 4, TopK: 4, ExpertFFN: 256}, 2e-2, 3e-2, false, 0},
		150, nil, true, nil},
	{archCase{"gptoss-q8_0", "gpt-oss-20b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 512, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 8, TopK: 2, ExpertFFN: 256}, 2e-2, 0, false, 3},
		150, nil, false, nil},
	// Its files' MXFP4 experts (llama-quantize's MXFP4_MOE).
	{archCase{"gptoss-all-mxfp4", "gpt-oss-20b", "MXFP4_MOE", synth.Shape{Layers: 4, Hidden: 512, FFN: 512, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 4, TopK: 4, ExpertFFN: 256}, 5e-2, 5e-2, false, 0},
		150, nil, false, nil},
	// Phi-4: Q, K and V one tensor, gate and up another (the weights are
	// views of them), NeoX RoPE, an untied head.
	{archCase{"phi4-q8_0", "phi4-14b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024}, 2e-2, 3e-3, false, 0},
		40, nil, true, nil},
	{archCase{"phi4-q4_k_m", "phi4-14b", "Q4_K_M", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 2, HeadDim: 128, Vocab: 1024}, 5e-2, 4e-2, false, 0},
		40, nil, false, nil},
	// Phi-4-mini's partial RoPE (three quarters of each head).
	{archCase{"phi4-partial-q8_0", "phi4-14b", "Q8_0", synth.Shape{Layers: 2, Hidden: 512, FFN: 1024, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024}, 2e-2, 3e-3, false, 0},
		40, func(c *arch.Config) { c.RopeDims = 48 }, false, nil},
}

// optModel returns c's model with its edit applied.
func optModel(t testing.TB, c optCase) *arch.Loaded {
	t.Helper()
	m := archModel(t, c.archCase)
	if c.edit != nil {
		c.edit(&m.Config)
		if err := m.Config.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	return m
}

// TestArchOptionFeatures checks, without a GPU, that the CUDA backend
// takes every case's options, that the cases have the options they are
// there for, and that Phi-4's fused tensors reach the upload as views:
// Q, K and V rows of one attn_qkv, gate and up of one ffn_up, read where
// they lie (the upload packs them into the kernels' layout once; no host
// copy for NeoX RoPE over whole heads).
func TestArchOptionFeatures(t *testing.T) {
	t.Parallel()
	for _, c := range optCases {
		c.mix = "Q8_0" // the options, not the weights: Q8_0 is the quickest to write
		m := optModel(t, c)
		h := m.Hyper()
		if err := h.Check("cuda", Features); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if err := checkShape(h); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		var want arch.Feature
		switch presetArch(c.preset) {
		case "gemma3":
			want = arch.FeatSWA | arch.FeatPostNorm | arch.FeatEmbedScale | arch.FeatGeGLU | arch.FeatQKNorm
		case "gpt-oss":
			want = arch.FeatSWA | arch.FeatSinks | arch.FeatOutBias | arch.FeatBias | arch.FeatRopeYaRN | arch.FeatSwiGLUOAI | arch.FeatMoESoftmaxTopK | arch.FeatMoEBias
		}
		if f := h.Features(); f&want != want {
			t.Errorf("%s: features %v, want %v among them", c.name, f, want)
		}
		if h.Window > 0 && c.prompt <= h.Window {
			t.Errorf("%s: a prompt of %d does not pass the window of %d", c.name, c.prompt, h.Window)
		}
		md := &Model{cfg: *h, ext: needsExt(h)}
		md.shape = shapeOf(h, md.ext)
		// Phi-4's options (fused tensors, partial RoPE) need no kernel of
		// their own; Gemma 3's and gpt-oss's do, and are looked up.
		if ks := md.optionKernels(); (len(ks) == 0) != (want == 0) {
			t.Errorf("%s: option kernels %v", c.name, ks)
		}
		if !h.FusedQKV {
			continue
		}
		w := &m.Tensors().Layers[0]
		q, k, v := w.Matrix(arch.RoleQ), w.Matrix(arch.RoleK), w.Matrix(arch.RoleV)
		gate, up := w.Matrix(arch.RoleGate), w.Matrix(arch.RoleUp)
		if end(q) != start(k) || end(k) != start(v) || end(gate) != start(up) {
			t.Errorf("%s: Q, K and V (or gate and up) are not consecutive views of one tensor", c.name)
		}
		if r, _ := ropeRows(q, h.Rope.Style, h.HeadDim, h.RotaryDims()); h.RotaryDims() == h.HeadDim && r != q {
			t.Errorf("%s: the Q view was copied for NeoX RoPE", c.name)
		}
		if f := estimateFootprint(m, 64); f.weights <= 0 {
			t.Errorf("%s: footprint %+v", c.name, f)
		}
	}
}

// TestOptionKernelsOld checks that the families the committed kernel
// images ran before the options need none of the options' kernels: a
// build with those images still runs them (checkOptionKernels refuses
// only the models that need the new kernels).
func TestOptionKernelsOld(t *testing.T) {
	t.Parallel()
	for _, c := range archCases {
		c.mix = "Q8_0"
		h := archModel(t, c).Hyper()
		md := &Model{cfg: *h, ext: needsExt(h)}
		md.shape = shapeOf(h, md.ext)
		if ks := md.optionKernels(); len(ks) != 0 || md.ext {
			t.Errorf("%s: needs %v (extended attention %v)", c.name, ks, md.ext)
		}
	}
}

// start and end return the addresses of the first and past the last byte
// of w's data.
func start(w *arch.Weight) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(w.Data))) }
func end(w *arch.Weight) uintptr   { return start(w) + uintptr(len(w.Data)) }

// TestArchOptions runs each case's model on the GPU against the CPU
// (archAgainstCPU: its prompt, past the local layers' window, then 12
// decode steps), batched against alone (sequences of up to 200 positions:
// past the windows), and for some sampled on the GPU with and without the
// lookahead past the window.
func TestArchOptions(t *testing.T) {
	requireGPU(t)
	for _, c := range optCases {
		t.Run(c.name, func(t *testing.T) {
			m := optModel(t, c)
			archAgainstCPU(t, c.archCase, m, c.tune, randomPrompt(11, c.prompt, m.Config.Vocab), 12)
			if c.batchTol > 0 {
				batchEqualsAloneTol(t, m, c.tune, 16, 16, c.batchTol)
			}
			if c.sample {
				p := 7
				if w := m.Config.Window; w > 0 {
					p = w - 10 // the steps pass the window
				}
				sampledLookahead(t, m, p, 24)
			}
		})
	}
}
