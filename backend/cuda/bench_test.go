package cuda

// Decode and prefill speed on synth's 0.6B model (Qwen3-0.6B shapes, Q8_0):
//
//	INFERNO_CUDA_BENCH=1 ./cuda.test -test.run TestBench -test.v
//
// prints tg128 (128 greedy decode steps from an empty context), tg128 at
// 4,096 tokens of context, the same without the graph, pp512 (a 512-token
// prompt), each beside its bandwidth floor, a per-kernel profile of one
// decode step and graph micro-benchmarks. Every sequence runs as the
// commands run one (engine.Single on a BatchRunner).
// INFERNO_CUDA_SWEEP="qkv=2,head=4;o=2" also times tg128 under each
// listed tuning (see INFERNO_CUDA_TUNE).

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"inferno/engine"
	"inferno/model/qwen3"
)

// copyBandwidth is the measured device-to-device copy bandwidth of an H200
// (bytes read plus written per second), the ceiling the floors use.
const copyBandwidth = 4.25e12

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// tg times steps greedy decode steps after a prompt of depth tokens
// (untimed), returning the median per-step time of reps runs.
func tg(t *testing.T, r *engine.Single, depth, steps, reps int) time.Duration {
	t.Helper()
	var runs []time.Duration
	for rep := range reps {
		r.Reset()
		tok := int32(1000 + rep)
		if depth > 0 {
			if err := r.Forward(randomPrompt(uint64(depth+rep), depth, r.Vocab())); err != nil {
				t.Fatal(err)
			}
			tok, _ = r.Greedy()
		}
		start := time.Now()
		for range steps {
			if err := r.Forward([]int32{tok}); err != nil {
				t.Fatal(err)
			}
			var err error
			if tok, err = r.Greedy(); err != nil {
				t.Fatal(err)
			}
		}
		runs = append(runs, time.Since(start)/time.Duration(steps))
	}
	return median(runs)
}

// pp times a prompt of n tokens (median of reps).
func pp(t *testing.T, r *engine.Single, n, reps int) time.Duration {
	t.Helper()
	var runs []time.Duration
	for rep := range reps {
		prompt := randomPrompt(uint64(77+rep), n, r.Vocab())
		r.Reset()
		start := time.Now()
		if err := r.Forward(prompt); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Greedy(); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, time.Since(start))
	}
	return median(runs)
}

func TestBench(t *testing.T) {
	if os.Getenv("INFERNO_CUDA_BENCH") == "" {
		t.Skip("set INFERNO_CUDA_BENCH=1 to run the CUDA benchmarks")
	}
	requireGPU(t)
	start := time.Now()
	m := synthModel(t, "0.6b")
	t.Logf("synth 0.6b built in %.1fs", time.Since(start).Seconds())
	md := newModel(t, m, Options{MaxLen: 4096 + 256})
	br := newBatchRunner(t, md, (4096+256)/16, 16)
	r := engine.NewSingle(br)
	s := md.Stats()
	t.Logf("%s, %d SMs, cc %d.%d; weights %.1f MB read per step; GPU memory held %.0f MiB; upload %.2fs; PTX: %s",
		s.Device, s.SMs, s.ComputeCap/10, s.ComputeCap%10, float64(s.WeightBytes)/1e6, mib(s.GPUBytes), s.Upload.Seconds(), s.PTX)

	type row struct {
		name  string
		per   time.Duration // per token
		floor time.Duration
		n     int // tokens per timing
	}
	floor := func(ctx int) time.Duration {
		return time.Duration(float64(md.StepBytes(ctx)) / copyBandwidth * 1e9)
	}
	var rows []row
	add := func(x row) {
		rows = append(rows, x)
		t.Logf("%-26s %10.1f tok/s  %8.2f us/token", x.name, 1/x.per.Seconds(), float64(x.per.Nanoseconds())/1000)
	}
	tg(t, r, 0, 16, 1) // warm up
	add(row{"tg128", tg(t, r, 0, 128, 5), floor(64), 1})
	add(row{"tg128 @ d4096", tg(t, r, 4096, 128, 3), floor(4096 + 64), 1})
	if s := br.Stats(); true {
		t.Logf("lookahead: %d steps taken, %d discarded; %d graph captures", s.LookaheadHits, s.LookaheadMisses, s.GraphCaptures)
	}
	br.noGraph = true // Options.NoGraph's effect on this runner
	add(row{"tg128 --no-graph", tg(t, r, 0, 128, 3), floor(64), 1})
	add(row{"tg128 @ d4096 --no-graph", tg(t, r, 4096, 128, 1), floor(4096 + 64), 1})
	br.noGraph = false
	pp(t, r, 512, 1) // warm up
	d := pp(t, r, 512, 5)
	add(row{"pp512", d / 512, 0, 512})
	d = pp(t, r, 4096, 3)
	add(row{"pp4096", d / 4096, 0, 4096})

	// Per-kernel profile of one decode step at an empty context and at 4096.
	for _, depth := range []int{0, 4096} {
		r.Reset()
		if depth > 0 {
			if err := r.Forward(randomPrompt(5, depth, r.Vocab())); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Forward([]int32{7}); err != nil {
			t.Fatal(err)
		}
		prof, total, err := r.Profile(20)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "decode step at context %d, profiled with events: %.1f us\n", depth, total)
		for _, k := range prof {
			us := k.Total.Seconds() * 1e6
			fmt.Fprintf(&b, "  %-22s %4d calls %8.1f us %5.1f%%\n", k.Name, k.Calls, us, 100*us/total)
		}
		t.Log(b.String())
	}

	microBench(t, md, br)

	// Tuning sweep.
	if sweep := os.Getenv("INFERNO_CUDA_SWEEP"); sweep != "" {
		for _, tu := range strings.Split(sweep, ";") {
			rs := sweepRunner(t, m, tu)
			if rs == nil {
				continue
			}
			per := tg(t, rs, 0, 128, 3)
			per4k := tg(t, rs, 4096, 128, 3)
			t.Logf("sweep %-40q tg128 %7.1f tok/s (%.1f us)  tg@4096 %7.1f tok/s", tu, 1/per.Seconds(),
				float64(per.Nanoseconds())/1000, 1/per4k.Seconds())
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n%-26s %12s %12s %14s\n", "test", "tok/s", "us/token", "floor us (BW)")
	for _, x := range rows {
		fl := "-"
		if x.floor > 0 {
			fl = fmt.Sprintf("%.1f", float64(x.floor.Nanoseconds())/1000)
		}
		fmt.Fprintf(&b, "%-26s %12.1f %12.2f %14s\n", x.name, 1/x.per.Seconds(), float64(x.per.Nanoseconds())/1000, fl)
	}
	fmt.Fprintf(&b, "floor: bytes a step must read (weights %.1f MB + f16 KV cache) / %.2f TB/s measured copy bandwidth\n", float64(md.StepBytes(0))/1e6, copyBandwidth/1e12)
	t.Log(b.String())
	fmt.Print(b.String())
}

// sweepRunner returns a sequence of m loaded under the tuning tu
// (INFERNO_CUDA_TUNE), closed when the test ends; nil when tu is refused.
func sweepRunner(t *testing.T, m *qwen3.Model, tu string) *engine.Single {
	t.Helper()
	t.Setenv("INFERNO_CUDA_TUNE", tu)
	md, err := Load(m, Options{MaxLen: 4096 + 256})
	if err != nil {
		t.Logf("sweep %q: %v", tu, err)
		return nil
	}
	t.Cleanup(func() { md.Close() })
	return newSingle(t, md)
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

// microBench times graphs of single kinds of nodes, to separate the cost
// of graph nodes from the kernels' own work: the one-token decode step
// (bucket 1, replayed on br's last inputs), empty kernels, and each
// matvec of the step over every layer.
func microBench(t *testing.T, md *Model, br *BatchRunner) {
	c := &md.cfg
	w := &md.layers[0]
	n := 5*c.Layers + 3
	var b strings.Builder
	report := func(name string, per int, build func(l *launcher)) {
		us, err := timeGraph(md.dev, 20, build)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		fmt.Fprintf(&b, "  %-44s %8.1f us/graph %7.2f us/node\n", name, us, us/float64(per))
	}
	var kernels int
	if _, err := timeGraph(md.dev, 1, func(l *launcher) { br.decodeOps(l, 1, br.slot, 0); kernels = l.count }); err != nil {
		t.Fatal(err)
	}
	report(fmt.Sprintf("decode step (%d kernels), back to back", kernels), kernels, func(l *launcher) { br.decodeOps(l, 1, br.slot, 0) })
	for _, blocks := range []uint32{1, 132, 1056} {
		report(fmt.Sprintf("%d noop kernels of %d blocks x 256", n, blocks), n, func(l *launcher) {
			for range n {
				l.launch("noop", [3]uint32{blocks}, 256, 0, 0)
			}
		})
	}
	kinds := []struct {
		name string
		f    func(l *launcher)
	}{
		{"qkv matvec (store)", func(l *launcher) {
			md.mv(l, "store", md.tune.qkv, &w.qkv, br.px, w.attnNorm, br.pqkv, w.qkv.rows, 0, 0)
		}},
		{"o matvec (add)", func(l *launcher) { md.mv(l, "add", md.tune.o, &w.o, br.patt, 0, br.px, c.Hidden, 0, 0) }},
		{"gate/up matvec (swiglu)", func(l *launcher) {
			md.mv(l, "swiglu", md.tune.gu, &w.gateUp, br.px, w.ffnNorm, br.pact, c.FFN, 0, 0)
		}},
		{"down matvec (add)", func(l *launcher) { md.mv(l, "add", md.tune.down, &w.down, br.pact, 0, br.px, c.Hidden, 0, 0) }},
	}
	for _, k := range kinds {
		report(fmt.Sprintf("%d x %s", c.Layers, k.name), c.Layers, func(l *launcher) {
			for range c.Layers {
				k.f(l)
			}
		})
	}
	t.Logf("graph micro-benchmarks (GPU time, 20 replays back to back):\n%s", b.String())
}

// TestNCU runs a few decode steps kernel by kernel, for Nsight Compute:
//
//	INFERNO_CUDA_NCU=1 ncu -k regex:mv_q8 ... ./cuda.test -test.run TestNCU
func TestNCU(t *testing.T) {
	if os.Getenv("INFERNO_CUDA_NCU") == "" {
		t.Skip("set INFERNO_CUDA_NCU=1 (and run under ncu)")
	}
	requireGPU(t)
	m := synthModel(t, "0.6b")
	r := gpuSingle(t, m, Options{MaxLen: 4096 + 256, NoGraph: true})
	if err := r.Forward(randomPrompt(5, 4096, r.Vocab())); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := r.Forward([]int32{5}); err != nil {
			t.Fatal(err)
		}
	}
}
