package qwen3_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"inferno/backend"
	"inferno/backend/pool"
	"inferno/batch"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/qwen3"
	"inferno/quant"
	"inferno/quantize"
	"inferno/synth"
)

// quantErrorFixture is testdata/quant_error.json, written by
// tools/quant-error.sh (tools/quant-error): a synthetic model, a token
// sequence, and for each mixture the errors of the quantized model's
// logits against the float32 model's and against its own dequantized
// copy's, measured in inferno and in llama.cpp on the same files.
// docs/QUANT.md shows it as tables.
type quantErrorFixture struct {
	Synth struct {
		Preset  string `json:"preset"`
		Layers  int    `json:"layers"`
		Hidden  int    `json:"hidden"`
		FFN     int    `json:"ffn"`
		Heads   int    `json:"heads"`
		KVHeads int    `json:"kv_heads"`
		HeadDim int    `json:"head_dim"`
		Vocab   int    `json:"vocab_size"`
		Seed    uint64 `json:"seed"`
	} `json:"synth"`
	Tokens          []int32 `json:"tokens"`
	F32TensorSHA256 string  `json:"f32_tensor_sha256"`
	Mixtures        []struct {
		Mixture           string `json:"mixture"`
		TensorSHA256      string `json:"tensor_sha256"`
		DequantizedSHA256 string `json:"dequantized_sha256"`
		VsF32             qePair `json:"vs_f32"`
		VsDequantized     qePair `json:"vs_dequantized"`
	} `json:"mixtures"`
}

// qePair is one file's errors in both engines.
type qePair struct {
	Inferno qeErrors `json:"inferno"`
	Llama   qeErrors `json:"llama"`
}

// qeErrors are logits errors against a float32 model's over every
// position (tools/quant-error's Errors).
type qeErrors struct {
	RelL2  float64 `json:"rel_l2"`
	MaxAbs float64 `json:"max_abs"`
	Top1   float64 `json:"top1"`
	KLD    float64 `json:"kld"`
}

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

// check returns an error when e breaks the bounds against llama.cpp's l.
func (e qeErrors) check(l qeErrors) error {
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

func (e qeErrors) String() string {
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
// a faulty kernel shows most): qeErrors.check.
//
// As a control, each mixture also runs with a deliberately wrong kernel
// for its main type (qeFaulty: every other row of the result off by
// 1/32, far less than a dropped or misread scale does), which the same
// checks must reject: a test that cannot fail would be worth nothing.
func TestQuantError(t *testing.T) {
	fx, ref, files, deqs := quantErrorSetup(t)
	ops := pool.New(0)
	defer ops.Close()
	for i, mx := range fx.Mixtures {
		t.Run(mx.Mixture, func(t *testing.T) {
			m, dm := openModel(t, files[i]), openModel(t, deqs[i])
			dref := qeLogits(t, dm, ops, fx.Tokens, false)
			for _, oneByOne := range []bool{false, true} {
				how := "one pass"
				if oneByOne {
					how = "token by token"
				}
				got := qeLogits(t, m, ops, fx.Tokens, oneByOne)
				e, d := qeMeasure(got, ref, fx.Synth.Vocab), qeMeasure(got, dref, fx.Synth.Vocab)
				t.Logf("%s: against float32: %v (llama.cpp %v; recorded %.4g)", how, e, mx.VsF32.Llama, mx.VsF32.Inferno.RelL2)
				t.Logf("%s: against dequantized: %v (llama.cpp %v; recorded %.4g)", how, d, mx.VsDequantized.Llama, mx.VsDequantized.Inferno.RelL2)
				if err := e.check(mx.VsF32.Llama); err != nil {
					t.Errorf("%s, against the float32 model: %v", how, err)
				}
				if err := d.check(mx.VsDequantized.Llama); err != nil {
					t.Errorf("%s, against the dequantized model: %v", how, err)
				}
			}

			mix, err := quantize.ParseMixture(mx.Mixture)
			if err != nil {
				t.Fatal(err)
			}
			faulty := &qeFaulty{Ops: ops, typ: mix.Default, delta: qeFault}
			got := qeLogits(t, m, faulty, fx.Tokens, false)
			if faulty.calls == 0 {
				t.Fatalf("control: no product with %s weights", mix.Default)
			}
			e, d := qeMeasure(got, ref, fx.Synth.Vocab), qeMeasure(got, dref, fx.Synth.Vocab)
			ef, df := e.check(mx.VsF32.Llama), d.check(mx.VsDequantized.Llama)
			t.Logf("control, wrong %s kernel: against float32: %v: %v", mix.Default, e, ef)
			t.Logf("control, wrong %s kernel: against dequantized: %v: %v", mix.Default, d, df)
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
func quantErrorSetup(t *testing.T) (*quantErrorFixture, []float32, []string, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "quant_error.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx quantErrorFixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Mixtures) == 0 || len(fx.Tokens) == 0 {
		t.Fatal("quant_error.json: no mixtures or no tokens")
	}
	const regen = "the llama.cpp figures are for another file; rerun tools/quant-error.sh"
	dir := t.TempDir()
	f32 := filepath.Join(dir, "f32.gguf")
	s := fx.Synth
	opts := synth.Options{
		Preset: s.Preset, Seed: s.Seed, Type: gguf.TensorF32,
		Shape: synth.Shape{Layers: s.Layers, Hidden: s.Hidden, FFN: s.FFN, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Vocab: s.Vocab},
	}
	out, err := os.Create(f32)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(out, opts); err != nil {
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
		qeDequantize(t, files[i], deqs[i])
		if h := qeTensorHash(t, deqs[i]); h != mx.DequantizedSHA256 {
			t.Fatalf("%s dequantized: tensor hash %s, want %s: %s", mx.Mixture, h, mx.DequantizedSHA256, regen)
		}
	}
	ops := pool.New(0)
	defer ops.Close()
	ref := qeLogits(t, openModel(t, f32), ops, fx.Tokens, false)
	return &fx, ref, files, deqs
}

// qeDequantize is tools/quant-error's Dequantize: a copy of the GGUF file
// in whose tensors are all float32, general.file_type 0.
func qeDequantize(t *testing.T, in, out string) {
	t.Helper()
	f, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KVs {
		v := kv.Value
		if kv.Key == "general.file_type" {
			v, _ = gguf.MakeValue(uint32(0))
		}
		if err := w.Set(kv.Key, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range f.Tensors {
		typ, data := ti.Type, ti.Data
		if typ != gguf.TensorF32 {
			vals := make([]float32, ti.Elements())
			if err := quant.DequantizeRow(vals, data, typ, len(vals)); err != nil {
				t.Fatalf("%s: %v", ti.Name, err)
			}
			typ, data = gguf.TensorF32, make([]byte, 4*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
			}
		}
		if err := w.AddTensor(ti.Name, typ, ti.Shape, data); err != nil {
			t.Fatal(err)
		}
	}
	o, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(o); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
}

// qeLogits returns the logits of every position of tokens, position after
// position: computed in one forward pass with every position an output,
// or one token at a time.
func qeLogits(t *testing.T, m *qwen3.Model, ops backend.Ops, tokens []int32, oneByOne bool) []float32 {
	t.Helper()
	var out []float32
	if oneByOne {
		r := qwen3.NewRunner(m, ops, len(tokens)) // not closed: that would stop ops's workers
		for _, tok := range tokens {
			if err := r.Forward([]int32{tok}); err != nil {
				t.Fatal(err)
			}
			l, err := r.Logits()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, l...)
		}
		return out
	}
	br, err := qwen3.NewBatched(m, ops, 0, 1, len(tokens), kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	var b batch.Batch
	b.Add(b.AddSeq([]int32{0}), tokens, 0, false)
	for i := range tokens {
		b.Outputs = append(b.Outputs, int32(i))
	}
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	for i := range tokens {
		l, err := br.Logits(i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l...)
	}
	return out
}

// qeMeasure returns the errors of got against want, rows of vocab values
// (tools/quant-error's Measure).
func qeMeasure(got, want []float32, vocab int) qeErrors {
	var num, den, maxAbs, kld float64
	top1 := 0
	rows := len(want) / vocab
	for r := range rows {
		g, w := got[r*vocab:(r+1)*vocab], want[r*vocab:(r+1)*vocab]
		for i := range w {
			d := float64(g[i]) - float64(w[i])
			num += d * d
			den += float64(w[i]) * float64(w[i])
			maxAbs = math.Max(maxAbs, math.Abs(d))
		}
		if qeArgmax(g) == qeArgmax(w) {
			top1++
		}
		lw, lg := qeLogSoftmax(w), qeLogSoftmax(g)
		for i := range lw {
			kld += math.Exp(lw[i]) * (lw[i] - lg[i])
		}
	}
	return qeErrors{RelL2: math.Sqrt(num / den), MaxAbs: maxAbs, Top1: float64(top1) / float64(rows), KLD: kld / float64(rows)}
}

func qeArgmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func qeLogSoftmax(v []float32) []float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, float64(x))
	}
	var s float64
	for _, x := range v {
		s += math.Exp(float64(x) - m)
	}
	ls := m + math.Log(s)
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x) - ls
	}
	return out
}

// qeTensorHash is tools/quant-error's tensorHash: the SHA-256 of a GGUF
// file's tensors (name, type, shape and data of each, in the order of
// their names).
func qeTensorHash(t *testing.T, path string) string {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts := append([]gguf.TensorInfo(nil), f.Tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	h := sha256.New()
	for _, ti := range ts {
		var hdr []byte
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(ti.Name)))
		hdr = append(hdr, ti.Name...)
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(ti.Type))
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(ti.Shape)))
		for _, d := range ti.Shape {
			hdr = binary.LittleEndian.AppendUint64(hdr, d)
		}
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(ti.Data)))
		h.Write(hdr)
		h.Write(ti.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}
