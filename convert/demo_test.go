package convert_test

// The demo model: the checkpoint trained by train/ (bf16 weights, in
// testdata/demo/ckpt) against the float32 PyTorch reference computed from
// it on the GPU machine (testdata/demo/fixtures), and the Q8_0 file the
// quick start runs (assets/kjv-q8_0.gguf).

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"inferno/backend/forward/forwardtest"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/convert"
	"inferno/engine"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model"
	"inferno/sampling"
)

const (
	demoCkpt     = "../testdata/demo/ckpt"
	demoFixtures = "../testdata/demo/fixtures"
	demoModel    = "../assets/kjv-q8_0.gguf"
	demoName     = "inferno KJV demo (Qwen3, 4 layers, hidden 256)"
)

type demoPrompt struct {
	IDs            []int32     `json:"ids"`
	LastLogitsFile string      `json:"last_logits_file"`
	Greedy32       []int32     `json:"greedy32"`
	Margins        []float64   `json:"greedy32_margins"`
	Top10          [][]float64 `json:"top10_last"`
}

func demoReference(t *testing.T) map[string]demoPrompt {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(demoFixtures, "fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Prompts map[string]demoPrompt `json:"prompts"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Prompts) < 3 {
		t.Fatalf("%d prompts in the fixtures", len(f.Prompts))
	}
	return f.Prompts
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// greedy returns the n tokens r generates greedily after the sequence it
// holds: the argmax of its last logits, then n-1 steps.
func greedy(t *testing.T, r *engine.Single, n int) []int32 {
	t.Helper()
	var out []int32
	for i := range n {
		if i > 0 {
			if err := r.Forward(out[i-1:]); err != nil {
				t.Fatal(err)
			}
		}
		id, err := r.Greedy()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// TestDemoF32 converts the trained checkpoint to F32 and checks the
// scalar backend (float32 throughout, float32 KV cache) against PyTorch's
// float32 forward: last-position logits within 1e-4 relative L2, and the
// same 32 greedy tokens (the first 8 with -short: each costs a product
// with the 39-million-weight output head on the scalar backend).
func TestDemoF32(t *testing.T) {
	t.Parallel()
	ref := demoReference(t)
	steps := 32
	if testing.Short() {
		steps = 8
	}
	out := filepath.Join(t.TempDir(), "demo-f32.gguf")
	if _, err := convert.Convert(context.Background(), demoCkpt, out, convert.Options{Type: gguf.TensorF32}); err != nil {
		t.Fatal(err)
	}
	m, err := model.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := forwardtest.Single(t, m.Arch, scalar.NewScalar(), 0, kvcache.F32)
	defer r.Close()
	same := 0
	for _, name := range slices.Sorted(maps.Keys(ref)) {
		p := ref[name]
		r.Reset()
		if err := r.Forward(p.IDs); err != nil {
			t.Fatal(err)
		}
		got, _ := r.Logits()
		want := readF32(t, filepath.Join(demoFixtures, p.LastLogitsFile))
		e := relL2(got, want)
		t.Logf("%-8s %3d tokens: relative L2 %.2e, top-1 %d (reference %d)", name, len(p.IDs), e, sampling.Argmax(got), sampling.Argmax(want))
		if e > 1e-4 {
			t.Errorf("%s: relative L2 %.3g against PyTorch float32, want at most 1e-4", name, e)
		}
		pyGreedy, margins := p.Greedy32[:steps], p.Margins[:steps]
		g := greedy(t, r, steps)
		if slices.Equal(g, pyGreedy) {
			same++
		} else if slices.Min(margins) > 1e-3 {
			t.Errorf("%s: greedy %v, PyTorch %v (smallest margin %.3g)", name, g, pyGreedy, slices.Min(margins))
		}
	}
	if same < 3 {
		t.Errorf("greedy generation equals PyTorch's on %d prompts, want at least 3", same)
	}
}

// TestDemoQ8 checks the committed Q8_0 file: it is exactly what "inferno
// convert --type q8_0" makes of the checkpoint, and on the simd backend
// (8-bit activations, f16 KV cache) its logits are within 5e-2 relative L2
// of PyTorch's with the same top-1 wherever the reference's margin is at
// least 0.5.
func TestDemoQ8(t *testing.T) {
	t.Parallel()
	ref := demoReference(t)
	out := filepath.Join(t.TempDir(), "demo-q8_0.gguf")
	if _, err := convert.Convert(context.Background(), demoCkpt, out, convert.Options{Type: gguf.TensorQ8_0, Name: demoName}); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(demoModel)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s is not what convert makes of %s (%d and %d bytes): regenerate it with\n  inferno convert testdata/demo/ckpt assets/kjv-q8_0.gguf --type q8_0 --name %q", demoModel, demoCkpt, len(b), len(a), demoName)
	}
	m, err := model.Open(demoModel)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := forwardtest.Single(t, m.Arch, simd.New(), 0, kvcache.F16)
	defer r.Close()
	for _, name := range slices.Sorted(maps.Keys(ref)) {
		p := ref[name]
		r.Reset()
		if err := r.Forward(p.IDs); err != nil {
			t.Fatal(err)
		}
		got, _ := r.Logits()
		want := readF32(t, filepath.Join(demoFixtures, p.LastLogitsFile))
		e := relL2(got, want)
		margin := p.Top10[0][1] - p.Top10[1][1]
		t.Logf("%-8s relative L2 %.2e, top-1 %d (reference %d, margin %.3f)", name, e, sampling.Argmax(got), sampling.Argmax(want), margin)
		if e > 5e-2 {
			t.Errorf("%s: relative L2 %.3g, want at most 5e-2", name, e)
		}
		if margin >= 0.5 && sampling.Argmax(got) != sampling.Argmax(want) {
			t.Errorf("%s: top-1 %d, reference %d with margin %.3f", name, sampling.Argmax(got), sampling.Argmax(want), margin)
		}
	}
}
