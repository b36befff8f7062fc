package qwen3_test

import (
	"path/filepath"
	"testing"

	"inferno/backend"
	"inferno/backend/pool"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/internal/floatbits"
	"inferno/kvcache"
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
			r := newSingle(t, m, fastBackends()[be](), 0, kvcache.F32)
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

// logitsOf runs prompt on a fresh runner with a float32 KV cache, all at
// once or one token at a time.
func logitsOf(t *testing.T, m *qwen3.Model, ops backend.Ops, prompt []int32, oneByOne bool) []float32 {
	return logitsKV(t, m, ops, kvcache.F32, prompt, oneByOne)
}

// logitsKV is logitsOf with a KV cache of type kv.
func logitsKV(t *testing.T, m *qwen3.Model, ops backend.Ops, kv kvcache.Type, prompt []int32, oneByOne bool) []float32 {
	t.Helper()
	r := newSingle(t, m, ops, 0, kv)
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

// TestDeterminism checks that logits are bitwise identical for every thread
// count, and for a prompt run at once or one token at a time.
func TestDeterminism(t *testing.T) {
	g := loadGolden(t)
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	prompt := g.Prompts["baker"].IDs
	want := logitsOf(t, m, simd.New(), prompt, false)
	for _, threads := range []int{1, 2, 3, 4, 8} {
		if err := floatbits.Check(logitsOf(t, m, pool.New(threads), prompt, false), want); err != nil {
			t.Errorf("pool with %d threads differs from simd: %v", threads, err)
		}
	}
	for name, ops := range map[string]func() backend.Ops{"simd": fastBackends()["simd"], "pool-2": fastBackends()["pool-2"]} {
		if err := floatbits.Check(logitsOf(t, m, ops(), prompt, true), want); err != nil {
			t.Errorf("%s: token-by-token differs from prefill: %v", name, err)
		}
	}
}

func TestDecodeAllocsFast(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	for _, be := range sortedKeys(fastBackends()) {
		checkDecodeAllocs(t, be, newSingle(t, m, fastBackends()[be](), 256, kvcache.F32))
	}
}

// f16Backends are the backends checked with an F16 KV cache: the scalar
// reference and the fast ones (the pool on 2 threads only where
// TestDeterminismF16KV covers the others).
func f16Backends(allPools bool) map[string]func() backend.Ops {
	b := fastBackends()
	b["scalar"] = func() backend.Ops { return scalar.NewScalar() }
	if !allPools {
		delete(b, "pool-1")
		delete(b, "pool-3")
	}
	return b
}

// TestGoldenLogitsF16KV checks the logits with keys and values stored in
// half precision: within the 8-bit tolerance on every backend, and within
// 2e-3 on the scalar one, whose float32 cache meets 1e-4.
func TestGoldenLogitsF16KV(t *testing.T) {
	g := loadGolden(t)
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	backends := f16Backends(false)
	for _, be := range sortedKeys(backends) {
		t.Run(be, func(t *testing.T) {
			r := newSingle(t, m, backends[be](), 0, kvcache.F16)
			defer r.Close()
			if r.KVType() != kvcache.F16 {
				t.Fatalf("KV type %v", r.KVType())
			}
			tol := 5e-2
			if be == "scalar" {
				tol = 2e-3
			}
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
				if e > tol {
					t.Errorf("%s: relative L2 error %.3g > %g", name, e, tol)
				}
				if a, b := sampling.Argmax(got), sampling.Argmax(want); a != b && mg >= 0.5 {
					t.Errorf("%s: top-1 %d, want %d (margin %.3f)", name, a, b, mg)
				}
			}
		})
	}
}

// TestDeterminismF16KV checks, with an F16 KV cache, that logits are
// bitwise identical for every thread count, through the tracer, and for a
// prompt run at once or one token at a time.
func TestDeterminismF16KV(t *testing.T) {
	g := loadGolden(t)
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	prompt := g.Prompts["baker"].IDs
	want := logitsKV(t, m, simd.New(), kvcache.F16, prompt, false)
	for _, threads := range []int{1, 2, 3} {
		if err := floatbits.Check(logitsKV(t, m, pool.New(threads), kvcache.F16, prompt, false), want); err != nil {
			t.Errorf("pool with %d threads differs from simd: %v", threads, err)
		}
	}
	tr := backend.NewTracer(simd.New())
	if err := floatbits.Check(logitsKV(t, m, tr, kvcache.F16, prompt, false), want); err != nil {
		t.Errorf("traced simd differs: %v", err)
	}
	calls := map[string]int{}
	for _, s := range tr.Stats() {
		calls[s.Name] = s.Calls
	}
	if layers := m.Config.Layers; calls["AttentionF16"] != layers || calls["ToF16"] != 2*layers || calls["Attention"] != 0 {
		t.Errorf("tracer counted %d AttentionF16, %d ToF16, %d Attention calls; want %d, %d, 0",
			calls["AttentionF16"], calls["ToF16"], calls["Attention"], layers, 2*layers)
	}
	for _, be := range []string{"simd", "pool-2"} {
		if err := floatbits.Check(logitsKV(t, m, fastBackends()[be](), kvcache.F16, prompt, true), want); err != nil {
			t.Errorf("%s: token-by-token differs from prefill: %v", be, err)
		}
	}
	ref := logitsKV(t, m, scalar.NewScalar(), kvcache.F16, prompt, false)
	if err := floatbits.Check(logitsKV(t, m, scalar.NewScalar(), kvcache.F16, prompt, true), ref); err != nil {
		t.Errorf("scalar: token-by-token differs from prefill: %v", err)
	}
}

func TestDecodeAllocsF16KV(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	backends := f16Backends(true)
	for _, be := range sortedKeys(backends) {
		checkDecodeAllocs(t, be, newSingle(t, m, backends[be](), 256, kvcache.F16))
	}
}

// TestChunkedPrefill checks that a prompt longer than one batch gives the
// same logits whether it runs in one call (chunks of 512) or in calls that
// split it elsewhere.
func TestChunkedPrefill(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	prompt := make([]int32, 1100)
	for i := range prompt {
		prompt[i] = int32(i*7919) % 151000
	}
	want := logitsOf(t, m, pool.New(2), prompt, false)
	r := newSingle(t, m, pool.New(2), 0, kvcache.F32)
	defer r.Close()
	for _, part := range [][]int32{prompt[:700], prompt[700:]} {
		if err := r.Forward(part); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := r.Logits()
	if err := floatbits.Check(got, want); err != nil {
		t.Errorf("700+400 differs from one call of 1100: %v", err)
	}
}
