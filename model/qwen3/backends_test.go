package qwen3_test

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"inferno/backend"
	"inferno/backend/pool"
	"inferno/backend/simd"
	"inferno/model/qwen3"
	"inferno/sampling"
)

// fastBackends are the backends that quantize activations to 8 bits, held
// to the 8-bit tolerance of testdata/README.md.
func fastBackends() map[string]func() backend.Ops {
	return map[string]func() backend.Ops{
		"simd":   func() backend.Ops { return simd.New() },
		"pool-1": func() backend.Ops { return pool.New(1) },
		"pool-2": func() backend.Ops { return pool.New(2) },
		"pool-3": func() backend.Ops { return pool.New(3) },
	}
}

func TestGoldenLogitsFast(t *testing.T) {
	g := loadGolden(t)
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	for _, be := range sortedKeys(fastBackends()) {
		t.Run(be, func(t *testing.T) {
			r := qwen3.NewRunner(m, fastBackends()[be](), 0)
			defer r.Close()
			for _, name := range sortedKeys(g.Prompts) {
				p := g.Prompts[name]
				r.Reset()
				if err := r.Forward(p.IDs); err != nil {
					t.Fatal(err)
				}
				got, _ := r.Logits()
				want := readLogits(t, p.LastLogitsFile)
				e, mg := relL2(got, want), margin(want)
				t.Logf("%s: relative L2 error %.3g, top-1 margin %.3f", name, e, mg)
				if e > 5e-2 {
					t.Errorf("%s: relative L2 error %.3g > 5e-2", name, e)
				}
				if a, b := sampling.Argmax(got), sampling.Argmax(want); a != b && mg >= 0.5 {
					t.Errorf("%s: top-1 %d, want %d (margin %.3f)", name, a, b, mg)
				}
			}
		})
	}
}

// logitsOf runs prompt on a fresh runner, all at once or one token at a time.
func logitsOf(t *testing.T, m *qwen3.Model, ops backend.Ops, prompt []int32, oneByOne bool) []float32 {
	t.Helper()
	r := qwen3.NewRunner(m, ops, 0)
	defer r.Close()
	if oneByOne {
		for i := range prompt {
			if err := r.Forward(prompt[i : i+1]); err != nil {
				t.Fatal(err)
			}
		}
	} else if err := r.Forward(prompt); err != nil {
		t.Fatal(err)
	}
	l, _ := r.Logits()
	return append([]float32(nil), l...)
}

func sameBits(a, b []float32) error {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return fmt.Errorf("logit %d: %v vs %v", i, a[i], b[i])
		}
	}
	return nil
}

// TestDeterminism checks that logits are bitwise identical for every thread
// count, and for a prompt run at once or one token at a time.
func TestDeterminism(t *testing.T) {
	g := loadGolden(t)
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	prompt := g.Prompts["baker"].IDs
	want := logitsOf(t, m, simd.New(), prompt, false)
	for _, threads := range []int{1, 2, 3, 4, 8} {
		if err := sameBits(logitsOf(t, m, pool.New(threads), prompt, false), want); err != nil {
			t.Errorf("pool with %d threads differs from simd: %v", threads, err)
		}
	}
	for name, ops := range map[string]func() backend.Ops{"simd": fastBackends()["simd"], "pool-2": fastBackends()["pool-2"]} {
		if err := sameBits(logitsOf(t, m, ops(), prompt, true), want); err != nil {
			t.Errorf("%s: token-by-token differs from prefill: %v", name, err)
		}
	}
}

func TestDecodeAllocsFast(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	for _, be := range sortedKeys(fastBackends()) {
		r := qwen3.NewRunner(m, fastBackends()[be](), 256)
		if err := r.Forward([]int32{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		step := []int32{4}
		allocs := testing.AllocsPerRun(20, func() {
			if err := r.Forward(step); err != nil {
				t.Fatal(err)
			}
			step[0], _ = r.Greedy()
		})
		r.Close()
		if allocs != 0 {
			t.Errorf("%s: decode step allocates %.1f times", be, allocs)
		}
	}
}
