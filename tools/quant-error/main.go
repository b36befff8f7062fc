// Command quant-error measures, for each quantization mixture, how far the
// logits of a small synthetic Qwen3 model quantized by `inferno quantize`
// are from those of the same model in float32, in inferno (the CPU pool
// backend) and in llama.cpp (tools/llama-logits) on the very same file,
// and the same for the file llama-quantize writes. It writes the figures
// as model/qwen3/testdata/quant_error.json, the fixture of
// model/qwen3's TestQuantError, and prints them as the Markdown table of
// docs/QUANT.md. tools/quant-error/run.sh builds what it needs and runs it.
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
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"inferno/backend/pool"
	"inferno/gguf"
	"inferno/internal/quanterror"
	"inferno/model/qwen3"
	"inferno/quantize"
	"inferno/synth"
)

// The model and the token sequence. TestQuantError reads them from the
// fixture, so changing them here and rerunning tools/quant-error/run.sh is
// all it takes.
var (
	synthOpts = quanterror.Synth{Preset: "tiny", Layers: 4, Hidden: 256, FFN: 768, Heads: 4, KVHeads: 2, HeadDim: 64, Vocab: 4096, Seed: 1}
	nTokens   = 64
	tokenSeed = uint64(10)
	mixtures  = []string{"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS"}
)

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
		e := quanterror.Measure(a, b, *vocab)
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

func (r *run) all() *quanterror.Fixture {
	s := synthOpts
	r.tokens = quanterror.Tokens(nTokens, s.Vocab, tokenSeed)
	fx := &quanterror.Fixture{
		About: "Errors of the logits of a synthetic Qwen3 model quantized by `inferno quantize`, over every position of the " +
			"token sequence, in inferno (CPU pool backend, float32 KV cache) and in llama.cpp (tools/llama-logits: CPU, one batch, " +
			"float32 KV cache, no flash attention) on the same files, each engine against its own logits of the float32 model " +
			"(vs_f32) and of the quantized file dequantized to float32 (vs_dequantized). Made by tools/quant-error/run.sh; checked by " +
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
	fx.F32 = quanterror.Measure(refL, refI, s.Vocab)
	logf("F32: llama.cpp vs inferno: %+v", fx.F32)

	for _, mix := range mixtures {
		e := quanterror.Entry{Mixture: mix}
		out := filepath.Join(r.dir, "inferno-"+mix+".gguf")
		r.quantize(f32, out, mix)
		e.TensorSHA256 = tensorHash(out)
		e.Types, e.BPW = typesOf(out)
		deq := filepath.Join(r.dir, "inferno-"+mix+".dequantized.gguf")
		check(quanterror.Dequantize(out, deq))
		e.DequantizedSHA256 = tensorHash(deq)
		qi, ql := r.inferLogits(out), r.llamaLogitsOf(out)
		e.VsF32 = quanterror.Pair{Inferno: quanterror.Measure(qi, refI, s.Vocab), Llama: quanterror.Measure(ql, refL, s.Vocab)}
		e.LlamaVsInferno = quanterror.Measure(ql, qi, s.Vocab)
		e.VsDequantized = quanterror.Pair{Inferno: quanterror.Measure(qi, r.inferLogits(deq), s.Vocab), Llama: quanterror.Measure(ql, r.llamaLogitsOf(deq), s.Vocab)}
		logf("%s: against F32: inferno %+v llama %+v", mix, e.VsF32.Inferno, e.VsF32.Llama)
		logf("%s: against dequantized: inferno %+v llama %+v", mix, e.VsDequantized.Inferno, e.VsDequantized.Llama)
		if r.llamaQuantize != "" {
			lq := filepath.Join(r.dir, "llama-"+mix+".gguf")
			cmd(r.llamaQuantize, f32, lq, mix)
			e.LlamaQuantizeSame = tensorHash(lq) == e.TensorSHA256
			e.LlamaQuantize = &quanterror.Pair{
				Inferno: quanterror.Measure(r.inferLogits(lq), refI, s.Vocab),
				Llama:   quanterror.Measure(r.llamaLogitsOf(lq), refL, s.Vocab),
			}
			logf("%s llama-quantize: same tensors %v, inferno %+v llama %+v", mix, e.LlamaQuantizeSame, e.LlamaQuantize.Inferno, e.LlamaQuantize.Llama)
		}
		fx.Mixtures = append(fx.Mixtures, e)
	}
	return fx
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
	check(synth.Write(&buf, s.Options()))
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
	l, err := quanterror.Logits(m, ops, r.tokens, false)
	check(err)
	writeF32(strings.TrimSuffix(path, ".gguf")+".inferno.f32", l)
	return l
}

func (r *run) llamaLogitsOf(path string) []float32 {
	out := strings.TrimSuffix(path, ".gguf") + ".llama.f32"
	cmd(r.llamaLogits, "--threads", "1", path, "@"+r.tokFile, out)
	return readF32(out)
}

// tensorHash is quanterror.TensorHash, failing the run on an error.
func tensorHash(path string) string {
	h, err := quanterror.TensorHash(path)
	check(err)
	return h
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
func printTable(w *os.File, fx *quanterror.Fixture) {
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
