package cuda

// Benchmarks of the CUDA backend (they skip without a GPU). The model is
// synth's Qwen3-0.6B shape in Q8_0, built in memory, or the GGUF file
// -model names. A benchmark's sub-benchmarks are the variants of the
// launch choices that tuning.go's measurements compare with the defaults,
// each a change to the tuning structs in code (variant). On the GPU
// machine, with the test binary (go test -c):
//
//	./cuda.test -test.run '^$' -test.bench 'Single/default/' -test.benchtime 5x
//	./cuda.test -test.run '^$' -test.bench 'BatchDecode/(default|mmh)/' -test.benchtime 3x -model /tmp/8b-q4_k_m.gguf
//
// or, where Go is installed, go test ./backend/cuda -run '^$' -bench
// Single -args -model=file.gguf. The per-kernel profiles of a decode step
// and of the prompt passes are `inferno bench --trace` (with --parallel B,
// the batch runner's steps).

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"inferno/arch"
	"inferno/engine"
	"inferno/gguf"
	"inferno/model/llama"
	"inferno/model/qwen2"
	"inferno/model/qwen3"
	"inferno/model/qwen3moe"
)

var (
	modelFile = flag.String("model", "", "GGUF file the benchmarks run (default: synth's 0.6B Q8_0, built in memory) and TestStartup opens")
	imageFile = flag.String("image", "", "kernel image (a cubin or PTX file, as INFERNO_CUDA_PTX takes) the benchmarks' \"file\" variants load")
)

// fileModel opens the GGUF file -model names with its architecture's
// package, or skips; the file closes when tb ends.
func fileModel(tb testing.TB) *arch.Loaded {
	tb.Helper()
	if *modelFile == "" {
		tb.Skip("no -model file")
	}
	f, err := gguf.Open(*modelFile)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	name, err := f.String("general.architecture")
	if err != nil {
		tb.Fatal(err)
	}
	load := map[string]func(*gguf.File) (*arch.Loaded, error){
		qwen3.Architecture: qwen3.Load, qwen2.Architecture: qwen2.Load, llama.Architecture: llama.Load, qwen3moe.Architecture: qwen3moe.Load,
	}[name]
	if load == nil {
		tb.Fatalf("%s: architecture %q", *modelFile, name)
	}
	m, err := load(f)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// benchModel returns the model a benchmark runs: -model's, else synth's
// 0.6B Q8_0.
func benchModel(b *testing.B) *arch.Loaded {
	b.Helper()
	requireGPU(b)
	if *modelFile != "" {
		return fileModel(b)
	}
	return synthModel(b, "0.6b")
}

// variant is a set of launch choices a benchmark runs: set changes the
// options a Model is loaded with (its tuning hooks), or skips where the
// variant is the defaults or does not apply to the model; runner changes
// a BatchRunner made from it.
type variant struct {
	name   string
	set    func(b *testing.B, m *arch.Loaded, o *Options)
	runner func(br *BatchRunner)
}

// setTune and setBatch return a variant's set that changes the Model's or
// the BatchRunner's tuning.
func setTune(f func(*tuning)) func(*testing.B, *arch.Loaded, *Options) {
	return func(_ *testing.B, _ *arch.Loaded, o *Options) { o.tune = f }
}

func setBatch(f func(*batchTuning)) func(*testing.B, *arch.Loaded, *Options) {
	return func(_ *testing.B, _ *arch.Loaded, o *Options) { o.batchTune = f }
}

// setQ8h is the variant of Q8_0 on the generic block kernels (on) or on
// its own (off), skipped where that is the model's default (q8hFor).
func setQ8h(on bool) func(*testing.B, *arch.Loaded, *Options) {
	return func(b *testing.B, m *arch.Loaded, o *Options) {
		if q8hFor(&m.Config) == on {
			b.Skip("the default for this model")
		}
		o.tune = func(t *tuning) { t.q8h = on }
	}
}

// imageVariants load the kernels from elsewhere than the embedded cubin:
// the embedded PTX (the driver compiles it) and the -image file.
var imageVariants = []variant{
	{name: "jit", set: func(b *testing.B, _ *arch.Loaded, _ *Options) { b.Setenv("INFERNO_CUDA_JIT", "1") }},
	{name: "file", set: func(b *testing.B, _ *arch.Loaded, _ *Options) {
		if *imageFile == "" {
			b.Skip("no -image file")
		}
		b.Setenv("INFERNO_CUDA_PTX", *imageFile)
	}},
}

// singleVariants are BenchmarkSingle's: the defaults, no graphs, the
// one-token matvecs as they were before the _b3 kernels (and O and down
// on them), Q8_0 on the other path (q8hFor), the kernel images.
var singleVariants = append([]variant{
	{name: "default"},
	{name: "nograph", set: func(_ *testing.B, _ *arch.Loaded, o *Options) { o.NoGraph = true }},
	{name: "mv-r2", set: setTune(func(t *tuning) { t.head, t.qkv.b3, t.gu.b3 = mvCfg{2, 1, false, false}, false, false })},
	{name: "mv-od-b3", set: setTune(func(t *tuning) { t.o.b3, t.down.b3 = true, true })},
	{name: "q8h", set: setQ8h(true)},
	{name: "q8own", set: setQ8h(false)},
}, imageVariants...)

// loadVariant loads m under v (closed when b ends), with a BatchRunner of
// blocks blocks of 16 positions.
func loadVariant(b *testing.B, m *arch.Loaded, v variant, opts Options, blocks int) (*Model, *BatchRunner) {
	b.Helper()
	if v.set != nil {
		v.set(b, m, &opts)
	}
	md := newModel(b, m, opts)
	br := newBatchRunner(b, md, blocks, 16)
	if v.runner != nil {
		v.runner(br)
	}
	return md, br
}

// BenchmarkSingle measures one sequence as the commands run it
// (engine.Single on a BatchRunner), as `inferno bench` does: tg128 (128
// greedy decode steps after a prompt of 0 or 4,096 tokens) and pp512,
// pp4096 (a prompt). It reports tok/s, us/token and, for decode, the
// bytes a step must read (weights and KV cache) over its time (GB/s).
func BenchmarkSingle(b *testing.B) {
	m := benchModel(b)
	const maxLen = 4096 + 256
	for _, v := range singleVariants {
		b.Run(v.name, func(b *testing.B) {
			md, br := loadVariant(b, m, v, Options{MaxLen: maxLen}, maxLen/16)
			r := engine.NewSingle(br)
			for _, depth := range []int{0, 4096} {
				b.Run(fmt.Sprintf("tg128-d%d", depth), func(b *testing.B) {
					decodeSteps(b, r, depth, 16) // warm up: the graphs
					var per time.Duration
					for b.Loop() {
						per += decodeSteps(b, r, depth, 128)
					}
					per /= time.Duration(b.N)
					b.ReportMetric(1/per.Seconds(), "tok/s")
					b.ReportMetric(float64(per.Nanoseconds())/1e3, "us/token")
					b.ReportMetric(float64(md.StepBytes(depth+64))/per.Seconds()/1e9, "GB/s")
				})
			}
			for _, n := range []int{512, 4096} {
				b.Run(fmt.Sprintf("pp%d", n), func(b *testing.B) {
					prompt := randomPrompt(77, n, r.Vocab())
					prefill(b, r, prompt) // warm up
					var d time.Duration
					for b.Loop() {
						d += prefill(b, r, prompt)
					}
					b.ReportMetric(float64(n*b.N)/d.Seconds(), "tok/s")
				})
			}
		})
	}
}

// decodeSteps times steps greedy decode steps of r after a prompt of
// depth tokens (the reset and the prompt untimed, the benchmark's timer
// stopped meanwhile), returning the time a step.
func decodeSteps(b *testing.B, r *engine.Single, depth, steps int) time.Duration {
	b.Helper()
	b.StopTimer()
	r.Reset()
	tok := int32(1000)
	if depth > 0 {
		if err := r.Forward(randomPrompt(uint64(depth), depth, r.Vocab())); err != nil {
			b.Fatal(err)
		}
		tok, _ = r.Greedy()
	}
	b.StartTimer()
	start := time.Now()
	for range steps {
		if err := r.Forward([]int32{tok}); err != nil {
			b.Fatal(err)
		}
		var err error
		if tok, err = r.Greedy(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(steps)
}

// prefill times prompt on r from an empty context (the reset untimed),
// to its greedy token.
func prefill(b *testing.B, r *engine.Single, prompt []int32) time.Duration {
	b.Helper()
	b.StopTimer()
	r.Reset()
	b.StartTimer()
	start := time.Now()
	if err := r.Forward(prompt); err != nil {
		b.Fatal(err)
	}
	if _, err := r.Greedy(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkLoad measures a Model's load (the kernels, the weights'
// upload) and a one-sequence BatchRunner, closed again, with the
// embedded cubin and each imageVariants variant.
func BenchmarkLoad(b *testing.B) {
	m := benchModel(b)
	for _, v := range append([]variant{{name: "embedded"}}, imageVariants...) {
		b.Run(v.name, func(b *testing.B) {
			opts := Options{MaxLen: 4096}
			if v.set != nil {
				v.set(b, m, &opts)
			}
			var what string
			for b.Loop() {
				md, err := Load(m, opts)
				if err != nil {
					b.Fatal(err)
				}
				br, err := md.NewBatchRunner(opts.MaxLen/16, 16)
				if err != nil {
					b.Fatal(err)
				}
				what = md.Stats().PTX
				if err := br.Close(); err != nil {
					b.Fatal(err)
				}
				if err := md.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.Logf("kernels: %s", what)
		})
	}
}

// BenchmarkGraphNodes times graphs of single kinds of nodes on synth's
// 0.6B, to separate the cost of graph nodes from the kernels' own work:
// the one-token decode step (bucket 1, replayed on the last inputs),
// empty kernels, and each matvec of the step over every layer. It
// reports the GPU time of a graph replayed 20 times back to back (us/graph)
// and of a node (us/node).
func BenchmarkGraphNodes(b *testing.B) {
	requireGPU(b)
	md := newModel(b, synthModel(b, "0.6b"), Options{MaxLen: 256})
	br := newBatchRunner(b, md, 256/16, 16)
	r := engine.NewSingle(br)
	if err := r.Forward([]int32{1, 2, 3}); err != nil {
		b.Fatal(err)
	}
	if err := r.Forward([]int32{4}); err != nil {
		b.Fatal(err)
	}
	c := &md.cfg
	w := &md.layers[0]
	n := 5*c.Layers + 3
	var kernels int
	if _, err := timeGraph(md.dev, 1, func(l *launcher) { br.decodeOps(l, 1, br.slot, 0); kernels = l.count }); err != nil {
		b.Fatal(err)
	}
	layers := func(f func(l *launcher)) func(l *launcher) {
		return func(l *launcher) {
			for range c.Layers {
				f(l)
			}
		}
	}
	noops := func(blocks uint32) func(l *launcher) {
		return func(l *launcher) {
			for range n {
				l.launch("noop", [3]uint32{blocks}, 256, 0, 0)
			}
		}
	}
	for _, k := range []struct {
		name  string
		nodes int
		build func(l *launcher)
	}{
		{"decode-step", kernels, func(l *launcher) { br.decodeOps(l, 1, br.slot, 0) }},
		{"noop-1", n, noops(1)},
		{"noop-132", n, noops(132)},
		{"noop-1056", n, noops(1056)},
		{"qkv", c.Layers, layers(func(l *launcher) {
			md.mv(l, "store", md.tune.qkv, &w.qkv, br.px, w.attnNorm, br.pqkv, w.qkv.rows, 0, 0)
		})},
		{"o", c.Layers, layers(func(l *launcher) { md.mv(l, "add", md.tune.o, &w.o, br.patt, 0, br.px, c.Hidden, 0, 0) })},
		{"gateup", c.Layers, layers(func(l *launcher) { md.mv(l, "swiglu", md.tune.gu, &w.gateUp, br.px, w.ffnNorm, br.pact, c.FFN, 0, 0) })},
		{"down", c.Layers, layers(func(l *launcher) { md.mv(l, "add", md.tune.down, &w.down, br.pact, 0, br.px, c.Hidden, 0, 0) })},
	} {
		b.Run(k.name, func(b *testing.B) {
			var us float64
			for b.Loop() {
				t, err := timeGraph(md.dev, 20, k.build)
				if err != nil {
					b.Fatal(err)
				}
				us += t
			}
			us /= float64(b.N)
			b.ReportMetric(us, "us/graph")
			b.ReportMetric(us/float64(k.nodes), "us/node")
		})
	}
}

// timeGraph captures what build enqueues into a graph, replays it reps
// times back to back (no host synchronization between replays) and
// returns the GPU time per replay in microseconds.
func timeGraph(g *device, reps int, build func(l *launcher)) (float64, error) {
	if err := g.enter(); err != nil {
		return 0, err
	}
	defer g.exit()
	if err := g.sync("before timing a graph"); err != nil {
		return 0, err
	}
	if err := g.beginCapture(); err != nil {
		return 0, err
	}
	l := &launcher{g: g}
	build(l)
	graph, exec, err := g.endCapture()
	if l.err != nil {
		g.destroyGraph(graph, exec)
		return 0, l.err
	}
	if err != nil {
		return 0, err
	}
	defer g.destroyGraph(graph, exec)
	a, err := g.newEvent()
	if err != nil {
		return 0, err
	}
	defer g.destroyEvent(a)
	b, err := g.newEvent()
	if err != nil {
		return 0, err
	}
	defer g.destroyEvent(b)
	if err := g.launchGraph(exec); err != nil { // warm up
		return 0, err
	}
	if err := g.record(a); err != nil {
		return 0, err
	}
	for range reps {
		if err := g.launchGraph(exec); err != nil {
			return 0, err
		}
	}
	if err := g.record(b); err != nil {
		return 0, err
	}
	ms, err := g.elapsed(a, b)
	return float64(ms) * 1000 / float64(reps), err
}
