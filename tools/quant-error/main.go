// Command quant-error measures, for each quantization mixture, how far the
// logits of a small synthetic Qwen3 model quantized by `inferno quantize`
// are from those of the same model in float32, in inferno (the CPU pool
// backend) and in llama.cpp (tools/llama-logits) on the very same file,
// and the same for the file llama-quantize writes. It writes the figures
// as model/qwen3/testdata/quant_error.json, the fixture of
// model/qwen3's TestQuantError, and prints them as the Markdown table of
// docs/QUANT.md. tools/quant-error.sh builds what it needs and runs it.
//
//	go run ./tools/quant-error -llama-logits bin/llama-logits \
//	    -llama-quantize /tmp/llama.cpp/build/bin/llama-quantize \
//	    [-inferno bin/inferno] [-work DIR] [-fixture FILE]
//
// With -inferno, the files are made by that binary's `synth` and
// `quantize` commands; without it, in-process by the same packages
// (synth.Write, quantize.Quantize). Either way the tensor data of every
// file is hashed into the fixture, so the test can check that it rebuilds
// the very files the llama.cpp figures were measured on.
//
// `quant-error -compare A.f32 B.f32 -vocab N` prints the errors of the
// logits in A against those in B (rows of N float32 values).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"inferno/backend/pool"
	"inferno/batch"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/qwen3"
	"inferno/quant"
	"inferno/quantize"
	"inferno/synth"
)

// The model and the token sequence. TestQuantError reads them from the
// fixture, so changing them here and rerunning tools/quant-error.sh is
// all it takes.
var (
	synthOpts = Synth{Preset: "tiny", Layers: 4, Hidden: 256, FFN: 768, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 4096, Seed: 1}
	nTokens   = 64
	tokenSeed = uint64(10)
	mixtures  = []string{"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS"}
)

// Synth is the synthetic model: `inferno synth` flags, F32 weights.
type Synth struct {
	Preset  string `json:"preset"`
	Layers  int    `json:"layers"`
	Hidden  int    `json:"hidden"`
	FFN     int    `json:"ffn"`
	Heads   int    `json:"heads"`
	KVHeads int    `json:"kv_heads"`
	HeadDim int    `json:"head_dim"`
	Vocab   int    `json:"vocab_size"`
	Seed    uint64 `json:"seed"`
}

// Errors are a quantized model's logits against the float32 model's, over
// every position of the token sequence.
type Errors struct {
	RelL2  float64 `json:"rel_l2"`  // ||q - f|| / ||f|| over all positions and tokens
	MaxAbs float64 `json:"max_abs"` // largest |q - f|
	Top1   float64 `json:"top1"`    // share of positions whose largest logit is the float32 model's
	KLD    float64 `json:"kld"`     // mean over positions of KL(softmax f || softmax q), nats
}

// Pair is one file's errors in both engines, each against its own logits
// of a float32 model.
type Pair struct {
	Inferno Errors `json:"inferno"`
	Llama   Errors `json:"llama"`
}

// Entry is one mixture.
type Entry struct {
	Mixture string         `json:"mixture"`
	Types   map[string]int `json:"types"` // tensors per type in the file
	BPW     float64        `json:"bpw"`   // tensor data bits per weight
	// TensorSHA256 hashes the tensors of `inferno quantize`'s file,
	// DequantizedSHA256 those of its dequantized float32 copy
	// (tensorHash).
	TensorSHA256      string `json:"tensor_sha256"`
	DequantizedSHA256 string `json:"dequantized_sha256"`
	// VsF32 is the quantized file's logits against the float32 model's:
	// the error of quantization, weights and activations together.
	VsF32 Pair `json:"vs_f32"`
	// VsDequantized is the quantized file's logits against those of its
	// dequantized copy (the same weights in float32): the error of the
	// products alone, 8-bit activations and the kernels' arithmetic.
	VsDequantized Pair `json:"vs_dequantized"`
	// LlamaVsInferno is llama.cpp's logits of the quantized file against
	// inferno's: how far apart the two engines are on the same file.
	LlamaVsInferno Errors `json:"llama_vs_inferno"`
	// LlamaQuantizeSame says whether llama-quantize's file for the same
	// input and mixture has the same tensors; LlamaQuantize is its logits'
	// errors against the float32 model's.
	LlamaQuantizeSame bool  `json:"llama_quantize_same"`
	LlamaQuantize     *Pair `json:"llama_quantize,omitempty"`
}

// Fixture is model/qwen3/testdata/quant_error.json.
type Fixture struct {
	About  string `json:"about"`
	Synth  Synth  `json:"synth"`
	Tokens []int  `json:"tokens"`
	// F32TensorSHA256 hashes the float32 model's tensor data.
	F32TensorSHA256 string `json:"f32_tensor_sha256"`
	// F32 is llama.cpp's float32 logits against inferno's: the floor
	// under every figure.
	F32      Errors  `json:"f32_llama_vs_inferno"`
	Mixtures []Entry `json:"mixtures"`
}

func main() {
	var (
		work      = flag.String("work", "", "folder for the models and logits (default: a temporary folder, removed)")
		inferno   = flag.String("inferno", "", "inferno binary whose synth and quantize commands make the files (default: in-process)")
		llamaLog  = flag.String("llama-logits", "bin/llama-logits", "tools/llama-logits binary")
		llamaQ    = flag.String("llama-quantize", "/tmp/llama.cpp/build/bin/llama-quantize", "llama-quantize binary (empty: skip the cross-check)")
		fixture   = flag.String("fixture", "model/qwen3/testdata/quant_error.json", "fixture to write (empty: none)")
		compare   = flag.Bool("compare", false, "compare two logits files A B: errors of A against B")
		vocab     = flag.Int("vocab", 0, "with -compare: values per row")
		threadsFl = flag.Int("threads", 0, "inferno pool threads (0: all cores); the logits do not depend on it")
	)
	flag.Parse()
	if *compare {
		if flag.NArg() != 2 || *vocab <= 0 {
			fatalf("usage: quant-error -compare -vocab N A.f32 B.f32")
		}
		a, b := readF32(flag.Arg(0)), readF32(flag.Arg(1))
		if len(a) != len(b) || len(a)%*vocab != 0 {
			fatalf("%d and %d values: not the same number of rows of %d", len(a), len(b), *vocab)
		}
		e := Measure(a, b, *vocab)
		fmt.Printf("rows %d: rel L2 %.4g, max abs %.4g, top-1 %.4f, KLD %.4g\n", len(a) / *vocab, e.RelL2, e.MaxAbs, e.Top1, e.KLD)
		return
	}
	if flag.NArg() != 0 {
		fatalf("unexpected arguments %q", flag.Args())
	}
	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "quant-error-*")
		check(err)
		defer os.RemoveAll(d)
		dir = d
	}
	check(os.MkdirAll(dir, 0o755))
	r := &run{dir: dir, inferno: *inferno, llamaLogits: *llamaLog, llamaQuantize: *llamaQ, threads: *threadsFl}
	fx := r.all()
	if *fixture != "" {
		b, err := json.MarshalIndent(fx, "", "  ")
		check(err)
		check(os.WriteFile(*fixture, append(b, '\n'), 0o644))
		fmt.Fprintf(os.Stderr, "wrote %s\n", *fixture)
	}
	printTable(os.Stdout, fx)
}

type run struct {
	dir, inferno, llamaLogits, llamaQuantize string
	threads                                  int
	tokens                                   []int32
	tokFile                                  string
}

// Tokens returns the token sequence: n ids drawn uniformly from the
// vocabulary by a PCG seeded with seed.
func Tokens(n, vocab int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 0x71756e74))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(rng.IntN(vocab))
	}
	return ids
}

func (r *run) all() *Fixture {
	s := synthOpts
	r.tokens = Tokens(nTokens, s.Vocab, tokenSeed)
	fx := &Fixture{
		About: "Errors of the logits of a synthetic Qwen3 model quantized by `inferno quantize`, over every position of the " +
			"token sequence, in inferno (CPU pool backend, float32 KV cache) and in llama.cpp (tools/llama-logits: CPU, one batch, " +
			"float32 KV cache, no flash attention) on the same files, each engine against its own logits of the float32 model " +
			"(vs_f32) and of the quantized file dequantized to float32 (vs_dequantized). Made by tools/quant-error.sh; checked by " +
			"model/qwen3 TestQuantError; shown in docs/QUANT.md.",
		Synth: s,
	}
	strs := make([]string, len(r.tokens))
	for i, t := range r.tokens {
		fx.Tokens = append(fx.Tokens, int(t))
		strs[i] = strconv.Itoa(int(t))
	}
	r.tokFile = filepath.Join(r.dir, "tokens.txt")
	check(os.WriteFile(r.tokFile, []byte(strings.Join(strs, ",")+"\n"), 0o644))

	f32 := filepath.Join(r.dir, "f32.gguf")
	r.synth(f32)
	fx.F32TensorSHA256 = tensorHash(f32)
	refI, refL := r.inferLogits(f32), r.llamaLogitsOf(f32)
	fx.F32 = Measure(refL, refI, s.Vocab)
	logf("F32: llama.cpp vs inferno: %+v", fx.F32)

	for _, mix := range mixtures {
		e := Entry{Mixture: mix}
		out := filepath.Join(r.dir, "inferno-"+mix+".gguf")
		r.quantize(f32, out, mix)
		e.TensorSHA256 = tensorHash(out)
		e.Types, e.BPW = typesOf(out)
		deq := filepath.Join(r.dir, "inferno-"+mix+".dequantized.gguf")
		check(Dequantize(out, deq))
		e.DequantizedSHA256 = tensorHash(deq)
		qi, ql := r.inferLogits(out), r.llamaLogitsOf(out)
		e.VsF32 = Pair{Inferno: Measure(qi, refI, s.Vocab), Llama: Measure(ql, refL, s.Vocab)}
		e.LlamaVsInferno = Measure(ql, qi, s.Vocab)
		e.VsDequantized = Pair{Inferno: Measure(qi, r.inferLogits(deq), s.Vocab), Llama: Measure(ql, r.llamaLogitsOf(deq), s.Vocab)}
		logf("%s: against F32: inferno %+v llama %+v", mix, e.VsF32.Inferno, e.VsF32.Llama)
		logf("%s: against dequantized: inferno %+v llama %+v", mix, e.VsDequantized.Inferno, e.VsDequantized.Llama)
		if r.llamaQuantize != "" {
			lq := filepath.Join(r.dir, "llama-"+mix+".gguf")
			cmd(r.llamaQuantize, f32, lq, mix)
			e.LlamaQuantizeSame = tensorHash(lq) == e.TensorSHA256
			e.LlamaQuantize = &Pair{
				Inferno: Measure(r.inferLogits(lq), refI, s.Vocab),
				Llama:   Measure(r.llamaLogitsOf(lq), refL, s.Vocab),
			}
			logf("%s llama-quantize: same tensors %v, inferno %+v llama %+v", mix, e.LlamaQuantizeSame, e.LlamaQuantize.Inferno, e.LlamaQuantize.Llama)
		}
		fx.Mixtures = append(fx.Mixtures, e)
	}
	return fx
}

// SynthOptions returns the synth.Options of s with F32 weights.
func SynthOptions(s Synth) synth.Options {
	return synth.Options{
		Preset: s.Preset, Seed: s.Seed, Type: gguf.TensorF32,
		Shape: synth.Shape{Layers: s.Layers, Hidden: s.Hidden, FFN: s.FFN, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Vocab: s.Vocab},
	}
}

func (r *run) synth(out string) {
	s := synthOpts
	if r.inferno != "" {
		cmd(r.inferno, "synth", out, "--type", "f32", "--preset", s.Preset, "--seed", fmt.Sprint(s.Seed),
			"--layers", fmt.Sprint(s.Layers), "--hidden", fmt.Sprint(s.Hidden), "--ffn", fmt.Sprint(s.FFN),
			"--heads", fmt.Sprint(s.Heads), "--kv-heads", fmt.Sprint(s.KVHeads), "--head-dim", fmt.Sprint(s.HeadDim),
			"--vocab-size", fmt.Sprint(s.Vocab))
		return
	}
	var buf bytes.Buffer
	check(synth.Write(&buf, SynthOptions(s)))
	check(os.WriteFile(out, buf.Bytes(), 0o644))
}

func (r *run) quantize(in, out, mix string) {
	if r.inferno != "" {
		cmd(r.inferno, "quantize", in, out, "--type", mix)
		return
	}
	_, err := quantize.Quantize(context.Background(), in, out, quantize.Options{Mixture: mix})
	check(err)
}

// Dequantize writes a copy of the GGUF file in whose quantized tensors
// are dequantized to float32 (package quant's decoders, bit-exact with
// ggml's), the metadata unchanged but general.file_type (0, all F32).
func Dequantize(in, out string) error {
	f, err := gguf.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KVs {
		v := kv.Value
		if kv.Key == "general.file_type" {
			v, _ = gguf.MakeValue(uint32(0))
		}
		if err := w.Set(kv.Key, v); err != nil {
			return err
		}
	}
	for _, t := range f.Tensors {
		typ, data := t.Type, t.Data
		if typ != gguf.TensorF32 {
			vals := make([]float32, t.Elements())
			if err := quant.DequantizeRow(vals, data, typ, len(vals)); err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
			typ, data = gguf.TensorF32, make([]byte, 4*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
			}
		}
		if err := w.AddTensor(t.Name, typ, t.Shape, data); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// inferLogits returns inferno's logits of every position of the token
// sequence, computed in one pass on the pool backend.
func (r *run) inferLogits(path string) []float32 {
	f, err := gguf.Open(path)
	check(err)
	defer f.Close()
	m, err := qwen3.Load(f)
	check(err)
	ops := pool.New(r.threads)
	defer ops.Close()
	l, err := AllLogits(m, ops, r.tokens)
	check(err)
	writeF32(strings.TrimSuffix(path, ".gguf")+".inferno.f32", l)
	return l
}

// AllLogits runs tokens through m in one forward pass with every position
// an output and returns the logits, position after position.
func AllLogits(m *qwen3.Model, ops *pool.Ops, tokens []int32) ([]float32, error) {
	br, err := qwen3.NewBatched(m, ops, 0, 1, len(tokens), kvcache.F32)
	if err != nil {
		return nil, err
	}
	defer br.Close()
	var b batch.Batch
	b.Add(b.AddSeq([]int32{0}), tokens, 0, false)
	for i := range tokens {
		b.Outputs = append(b.Outputs, int32(i))
	}
	if err := br.Forward(&b); err != nil {
		return nil, err
	}
	var out []float32
	for i := range tokens {
		l, err := br.Logits(i)
		if err != nil {
			return nil, err
		}
		out = append(out, l...)
	}
	return out, nil
}

func (r *run) llamaLogitsOf(path string) []float32 {
	out := strings.TrimSuffix(path, ".gguf") + ".llama.f32"
	cmd(r.llamaLogits, "--threads", "1", path, "@"+r.tokFile, out)
	return readF32(out)
}

// Measure returns the errors of got against want, rows of vocab values.
func Measure(got, want []float32, vocab int) Errors {
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
		if argmax(g) == argmax(w) {
			top1++
		}
		kld += kl(w, g)
	}
	return Errors{RelL2: math.Sqrt(num / den), MaxAbs: maxAbs, Top1: float64(top1) / float64(rows), KLD: kld / float64(rows)}
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// kl returns KL(softmax p || softmax q) in nats.
func kl(p, q []float32) float64 {
	lp, lq := logSoftmax(p), logSoftmax(q)
	var s float64
	for i := range lp {
		s += math.Exp(lp[i]) * (lp[i] - lq[i])
	}
	return s
}

func logSoftmax(v []float32) []float64 {
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

// tensorHash returns the SHA-256 of a GGUF file's tensors: name, type,
// shape and data of each, in the order of their names (llama-quantize
// writes them in another order than its input's). Metadata does not
// enter it.
func tensorHash(path string) string {
	f, err := gguf.Open(path)
	check(err)
	defer f.Close()
	ts := append([]gguf.TensorInfo(nil), f.Tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	h := sha256.New()
	for _, t := range ts {
		var hdr []byte
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(t.Name)))
		hdr = append(hdr, t.Name...)
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(t.Type))
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(t.Shape)))
		for _, d := range t.Shape {
			hdr = binary.LittleEndian.AppendUint64(hdr, d)
		}
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(t.Data)))
		h.Write(hdr)
		h.Write(t.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// typesOf returns the number of tensors of each type and the tensor data's
// bits per weight.
func typesOf(path string) (map[string]int, float64) {
	f, err := gguf.Open(path)
	check(err)
	defer f.Close()
	types := map[string]int{}
	var bytes, weights float64
	for _, t := range f.Tensors {
		types[t.Type.String()]++
		bytes += float64(len(t.Data))
		weights += float64(t.Elements())
	}
	return types, bytes * 8 / weights
}

func readF32(path string) []float32 {
	b, err := os.ReadFile(path)
	check(err)
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func writeF32(path string, v []float32) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	check(os.WriteFile(path, b, 0o644))
}

// printTable writes the fixture as Markdown tables.
func printTable(w *os.File, fx *Fixture) {
	fmt.Fprintf(w, "float32 model, llama.cpp against inferno: rel L2 %.2e, max abs %.2e, top-1 %.3f, KLD %.1e\n\n",
		fx.F32.RelL2, fx.F32.MaxAbs, fx.F32.Top1, fx.F32.KLD)
	fmt.Fprintln(w, "Against the float32 model (quantization error):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| mixture | tensors | bpw | rel L2 inferno | rel L2 llama.cpp | ratio | max abs inferno | max abs llama.cpp | top-1 inferno | top-1 llama.cpp | KLD inferno | KLD llama.cpp |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, e := range fx.Mixtures {
		i, l := e.VsF32.Inferno, e.VsF32.Llama
		fmt.Fprintf(w, "| %s | %s | %.2f | %.4f | %.4f | %.3f | %.3f | %.3f | %.3f | %.3f | %.4f | %.4f |\n",
			e.Mixture, typeList(e.Types), e.BPW, i.RelL2, l.RelL2, i.RelL2/l.RelL2, i.MaxAbs, l.MaxAbs, i.Top1, l.Top1, i.KLD, l.KLD)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Against the dequantized model (the products' own error):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| mixture | rel L2 inferno | rel L2 llama.cpp | ratio | max abs inferno | max abs llama.cpp | top-1 inferno | top-1 llama.cpp | KLD inferno | KLD llama.cpp | llama.cpp vs inferno rel L2 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, e := range fx.Mixtures {
		i, l := e.VsDequantized.Inferno, e.VsDequantized.Llama
		fmt.Fprintf(w, "| %s | %.4f | %.4f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2e | %.2e | %.2e |\n",
			e.Mixture, i.RelL2, l.RelL2, i.RelL2/l.RelL2, i.MaxAbs, l.MaxAbs, i.Top1, l.Top1, i.KLD, l.KLD, e.LlamaVsInferno.RelL2)
	}
	if len(fx.Mixtures) == 0 || fx.Mixtures[0].LlamaQuantize == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "llama-quantize's file for the same input and mixture, against the float32 model:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| mixture | same tensors as inferno's | rel L2 inferno | rel L2 llama.cpp | top-1 inferno | top-1 llama.cpp |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	for _, e := range fx.Mixtures {
		q := e.LlamaQuantize
		same := "no"
		if e.LlamaQuantizeSame {
			same = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %.4f | %.4f | %.3f | %.3f |\n", e.Mixture, same, q.Inferno.RelL2, q.Llama.RelL2, q.Inferno.Top1, q.Llama.Top1)
	}
}

func typeList(types map[string]int) string {
	names := make([]string, 0, len(types))
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	for i, t := range names {
		names[i] = fmt.Sprintf("%s×%d", t, types[t])
	}
	return strings.Join(names, " ")
}

func cmd(name string, args ...string) {
	c := exec.Command(name, args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "quant-error: "+format+"\n", args...)
	os.Exit(1)
}
