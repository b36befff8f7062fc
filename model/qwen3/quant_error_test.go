package qwen3_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"inferno/backend"
	"inferno/backend/pool"
	"inferno/gguf"
	"inferno/internal/quanterror"
	"inferno/model/qwen3"
	"inferno/quantize"
	"inferno/synth"
)

// The bounds of TestQuantError: inferno's relative L2 error on a file is
// at most qeRatio times llama.cpp's on the same file, its KL divergence
// (quadratic in the error) qeRatio squared times, its largest error (an
// extreme, noisier) qeMaxAbsRatio times, each plus a small absolute
// epsilon (the float32 logits of the two engines differ by about 1e-6
// relative; the epsilons are well above that and far below any error
// here); its top-1 agreement at most qeTop1Slack below llama.cpp's (4 of
// 64 positions: the two engines round activations apart, which moves the
// top token of a few close calls).
const (
	qeRatio       = 1.25
	qeMaxAbsRatio = 1.5
	qeEpsRelL2    = 1e-4
	qeEpsMaxAbs   = 1e-3
	qeEpsKLD      = 1e-6
	qeTop1Slack   = 4.0 / 64
)

// qeCheck returns an error when e breaks the bounds against llama.cpp's l.
func qeCheck(e, l quanterror.Errors) error {
	switch {
	case e.RelL2 > qeRatio*l.RelL2+qeEpsRelL2:
		return fmt.Errorf("relative L2 error %.4g > %.2f x llama.cpp's %.4g", e.RelL2, qeRatio, l.RelL2)
	case e.KLD > qeRatio*qeRatio*l.KLD+qeEpsKLD:
		return fmt.Errorf("KL divergence %.4g > %.2f^2 x llama.cpp's %.4g", e.KLD, qeRatio, l.KLD)
	case e.MaxAbs > qeMaxAbsRatio*l.MaxAbs+qeEpsMaxAbs:
		return fmt.Errorf("max abs error %.4g > %.2f x llama.cpp's %.4g", e.MaxAbs, qeMaxAbsRatio, l.MaxAbs)
	case e.Top1 < l.Top1-qeTop1Slack:
		return fmt.Errorf("top-1 agreement %.4f < llama.cpp's %.4f - %.4f", e.Top1, l.Top1, qeTop1Slack)
	}
	return nil
}

// qeString formats e for the log.
func qeString(e quanterror.Errors) string {
	return fmt.Sprintf("rel L2 %.4g, max abs %.4g, top-1 %.3f, KLD %.3g", e.RelL2, e.MaxAbs, e.Top1, e.KLD)
}

// qeFault is how far off the control kernel of TestQuantError is (qeFaulty).
const qeFault = 1.0 / 32

// TestQuantError builds the fixture's float32 model with package synth,
// quantizes it to each mixture with package quantize (what `inferno
// synth` and `inferno quantize` do), dequantizes each back to float32,
// checks the files are those llama.cpp's errors were measured on, and
// checks that the logits inferno computes on the CPU pool backend (every
// position of the token sequence, in one pass and token by token) are as
// close as llama.cpp's to the float32 model's (the error of quantization)
// and to the dequantized model's (the error of the products alone, where
// a faulty kernel shows most): qeCheck.
//
// As a control, each mixture also runs with a deliberately wrong kernel
// for its main type (qeFaulty: every other row of the result off by
// 1/32, far less than a dropped or misread scale does), which the same
// checks must reject: a test that cannot fail would be worth nothing.
// With -short, every other mixture of the fixture.
func TestQuantError(t *testing.T) {
	t.Parallel()
	fx, tokens, ref, files, deqs := quantErrorSetup(t)
	ops := pool.New(0)
	defer ops.Close()
	for i, mx := range fx.Mixtures {
		t.Run(mx.Mixture, func(t *testing.T) {
			m, dm := openModel(t, files[i]), openModel(t, deqs[i])
			dref := qeLogits(t, dm, ops, tokens, false)
			for _, oneByOne := range []bool{false, true} {
				how := "one pass"
				if oneByOne {
					how = "token by token"
				}
				got := qeLogits(t, m, ops, tokens, oneByOne)
				e, d := quanterror.Measure(got, ref, fx.Synth.Vocab), quanterror.Measure(got, dref, fx.Synth.Vocab)
				t.Logf("%s: against float32: %s (llama.cpp %s; recorded %.4g)", how, qeString(e), qeString(mx.VsF32.Llama), mx.VsF32.Inferno.RelL2)
				t.Logf("%s: against dequantized: %s (llama.cpp %s; recorded %.4g)", how, qeString(d), qeString(mx.VsDequantized.Llama), mx.VsDequantized.Inferno.RelL2)
				if err := qeCheck(e, mx.VsF32.Llama); err != nil {
					t.Errorf("%s, against the float32 model: %v", how, err)
				}
				if err := qeCheck(d, mx.VsDequantized.Llama); err != nil {
					t.Errorf("%s, against the dequantized model: %v", how, err)
				}
			}

			mix, err := quantize.ParseMixture(mx.Mixture)
			if err != nil {
				t.Fatal(err)
			}
			faulty := &qeFaulty{Ops: ops, typ: mix.Default, delta: qeFault}
			got := qeLogits(t, m, faulty, tokens, false)
			if faulty.calls == 0 {
				t.Fatalf("control: no product with %s weights", mix.Default)
			}
			e, d := quanterror.Measure(got, ref, fx.Synth.Vocab), quanterror.Measure(got, dref, fx.Synth.Vocab)
			ef, df := qeCheck(e, mx.VsF32.Llama), qeCheck(d, mx.VsDequantized.Llama)
			t.Logf("control, wrong %s kernel: against float32: %s: %v", mix.Default, qeString(e), ef)
			t.Logf("control, wrong %s kernel: against dequantized: %s: %v", mix.Default, qeString(d), df)
			if ef == nil && df == nil {
				t.Errorf("control: a %s kernel off by %.3g in every other row passes the checks", mix.Default, qeFault)
			}
		})
	}
}

// qeFaulty is a backend whose products with weights of type typ are
// wrong: row r of the result is multiplied by 1+delta for even r, 1-delta
// for odd r.
type qeFaulty struct {
	backend.Ops
	typ   gguf.TensorType
	delta float32
	calls int
}

func (f *qeFaulty) MatMul(y []float32, w *backend.Weight, x []float32, n int) {
	f.Ops.MatMul(y, w, x, n)
	if w.Type != f.typ {
		return
	}
	f.calls++
	for i := range y[:n*w.Rows] {
		if i%w.Rows%2 == 0 {
			y[i] *= 1 + f.delta
		} else {
			y[i] *= 1 - f.delta
		}
	}
}

// quantErrorSetup loads the fixture, writes its float32 model, every
// mixture's quantization of it and their dequantized copies into a
// temporary folder, checks their tensors are those the fixture was made
// from, and returns the fixture, the float32 model's logits (pool
// backend, one pass), the quantized files and the dequantized ones.
func quantErrorSetup(t *testing.T) (*quanterror.Fixture, []int32, []float32, []string, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "quant_error.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx quanterror.Fixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Mixtures) == 0 || len(fx.Tokens) == 0 {
		t.Fatal("quant_error.json: no mixtures or no tokens")
	}
	if testing.Short() {
		// Every other mixture: Q4_1, Q5_1, Q2_K, Q4_K_M, Q6_K and IQ4_XS
		// of the fixture's twelve (backend/simd's tests check every
		// block type's kernels in any case).
		var half []quanterror.Entry
		for i := 1; i < len(fx.Mixtures); i += 2 {
			half = append(half, fx.Mixtures[i])
		}
		fx.Mixtures = half
	}
	const regen = "the llama.cpp figures are for another file; rerun tools/quant-error/run.sh"
	dir := t.TempDir()
	f32 := filepath.Join(dir, "f32.gguf")
	out, err := os.Create(f32)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(out, fx.Synth.Options()); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if h := qeTensorHash(t, f32); h != fx.F32TensorSHA256 {
		t.Fatalf("float32 model: tensor hash %s, want %s: %s", h, fx.F32TensorSHA256, regen)
	}
	files := make([]string, len(fx.Mixtures))
	deqs := make([]string, len(fx.Mixtures))
	for i, mx := range fx.Mixtures {
		files[i] = filepath.Join(dir, mx.Mixture+".gguf")
		deqs[i] = filepath.Join(dir, mx.Mixture+".dequantized.gguf")
		if _, err := quantize.Quantize(context.Background(), f32, files[i], quantize.Options{Mixture: mx.Mixture}); err != nil {
			t.Fatal(err)
		}
		if h := qeTensorHash(t, files[i]); h != mx.TensorSHA256 {
			t.Fatalf("%s: tensor hash %s, want %s: %s", mx.Mixture, h, mx.TensorSHA256, regen)
		}
		if err := quanterror.Dequantize(files[i], deqs[i]); err != nil {
			t.Fatal(err)
		}
		if h := qeTensorHash(t, deqs[i]); h != mx.DequantizedSHA256 {
			t.Fatalf("%s dequantized: tensor hash %s, want %s: %s", mx.Mixture, h, mx.DequantizedSHA256, regen)
		}
	}
	ops := pool.New(0)
	defer ops.Close()
	tokens := make([]int32, len(fx.Tokens))
	for i, tok := range fx.Tokens {
		tokens[i] = int32(tok)
	}
	ref := qeLogits(t, openModel(t, f32), ops, tokens, false)
	return &fx, tokens, ref, files, deqs
}

// qeLogits is quanterror.Logits, failing t on an error.
func qeLogits(t *testing.T, m *qwen3.Model, ops backend.Ops, tokens []int32, oneByOne bool) []float32 {
	t.Helper()
	l, err := quanterror.Logits(m, ops, tokens, oneByOne)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// qeTensorHash is quanterror.TensorHash, failing t on an error.
func qeTensorHash(t *testing.T, path string) string {
	t.Helper()
	h, err := quanterror.TensorHash(path)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
