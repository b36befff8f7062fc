package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"inferno/arch"
	"inferno/engine"
	"inferno/model"
	"inferno/sampling"
)

// benchResult is one row of the bench table: a test repeated r times.
type benchResult struct {
	Model    string    `json:"model"`
	Size     int64     `json:"model_size"`
	Params   int64     `json:"model_n_params"`
	Backend  string    `json:"backend"`
	Threads  int       `json:"n_threads"`
	Test     string    `json:"test"`
	NPrompt  int       `json:"n_prompt"`
	NGen     int       `json:"n_gen"`
	NDepth   int       `json:"n_depth"`
	NPar     int       `json:"n_parallel,omitempty"`
	AvgTS    float64   `json:"avg_ts"`
	StdTS    float64   `json:"stddev_ts"`
	SamplesT []float64 `json:"samples_ts"`
}

func benchCmd() *cobra.Command {
	var (
		rf                  runnerFlags
		prompts, gens       string
		depths, threadsFlag string
		parallelFlag        string
		sf                  samplingFlags
		reps                int
		asJSON              bool
	)
	cmd := &cobra.Command{
		Use:   "bench MODEL.gguf",
		Short: "Measure prompt processing and generation speed, llama-bench style",
		Long: `Bench measures, on random tokens, prompt processing (ppP: P prompt tokens in
one forward pass, tokens per second) and text generation (tgN: N tokens, one
forward pass and one greedy pick each, tokens per second), optionally after
D tokens of context ("tg128 @ d512"). Each test runs -r times after a warm-up
and reports the mean and standard deviation, as llama.cpp's llama-bench does.
Lists are comma-separated; every combination is measured.

With --parallel B1,B2,... it measures batched decoding instead, as
llama.cpp's llama-batched-bench does: B sequences each prefill -p random
tokens (several prompts to a forward pass, up to 512 tokens), then decode
-n tokens together, one forward pass a step over all B sequences, their
keys and values in a paged KV cache. "pp128 x8" is the prompt tokens of
all 8 sequences per second (S_PP), "tg128 x8" their generated tokens per
second (S_TG). The sampling flags (--temperature, --top-k, --top-p,
--min-p, the penalties, --seed) choose the generated tokens of --parallel
as the server would: on the GPU where the runner samples under them, else
with a sampler per sequence from the logits; the default is greedy.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := intList("-p", prompts)
			if err != nil {
				return err
			}
			ns, err := intList("-n", gens)
			if err != nil {
				return err
			}
			ds, err := intList("-d", depths)
			if err != nil {
				return err
			}
			ts, err := intList("-t", threadsFlag)
			if err != nil {
				return err
			}
			if reps < 1 {
				return fmt.Errorf("-r %d: want at least 1 repetition", reps)
			}
			var pars []int
			if parallelFlag != "" {
				if pars, err = intList("--parallel", parallelFlag); err != nil {
					return err
				}
				if len(ps) != 1 || len(ns) != 1 || len(ds) != 1 || ds[0] != 0 || slices.Contains(pars, 0) {
					return fmt.Errorf("--parallel takes one -p, one -n, no -d and sequence counts of at least 1")
				}
			}
			var sp *sampling.Params
			for _, name := range []string{"temperature", "top-k", "top-p", "min-p", "repetition-penalty", "presence-penalty", "frequency-penalty", "seed"} {
				if !cmd.Flags().Changed(name) {
					continue
				}
				if pars == nil {
					return fmt.Errorf("--%s: the sampling flags need --parallel", name)
				}
				if sp == nil {
					p, err := sf.params()
					if err != nil {
						return err
					}
					sp = &p
				}
			}
			m, err := openModel(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer m.Close()
			desc, size, params := describe(m)
			var results []benchResult
			if !asJSON {
				fmt.Fprintf(os.Stderr, "model %s: %s, %.2f MiB, %.2f M params\n", args[0], desc, float64(size)/(1<<20), float64(params)/1e6)
			}
			for _, t := range ts {
				rf.threads = t
				if pars != nil {
					rs, err := benchParallel(&rf, m, desc, size, params, pars, ps[0], ns[0], reps, sp)
					if err != nil {
						return err
					}
					results = append(results, rs...)
					continue
				}
				r, be, err := rf.newRunner(m)
				if err != nil {
					return err
				}
				threads := be.Threads()
				if ps, ok := r.(engine.PoolSizer); ok && !asJSON {
					if pool, full := ps.PoolBytes(); pool > 0 {
						fmt.Fprintln(os.Stderr, kvLine(m.Arch.Hyper(), r.MaxLen(), pool, full))
					}
				}
				b := bencher{r: r, vocab: m.Arch.Hyper().Vocab, rng: rand.New(rand.NewPCG(1, 2))}
				name := r.Backend()
				if rf.noGraph && be.GPU() {
					name += " --no-graph"
				}
				for _, d := range ds {
					for _, p := range ps {
						if p == 0 {
							continue
						}
						samples, err := b.run(d, p, 0, reps)
						if err != nil {
							r.Close()
							be.Close()
							return err
						}
						results = append(results, summarize(desc, size, params, name, threads, fmt.Sprintf("pp%d", p), p, 0, d, samples))
					}
					for _, n := range ns {
						if n == 0 {
							continue
						}
						samples, err := b.run(d, 0, n, reps)
						if err != nil {
							r.Close()
							be.Close()
							return err
						}
						results = append(results, summarize(desc, size, params, name, threads, fmt.Sprintf("tg%d", n), 0, n, d, samples))
					}
				}
				if rf.trace {
					fmt.Fprintln(os.Stderr)
					if err := rf.reportTrace(os.Stderr, r, be); err != nil {
						fmt.Fprintf(os.Stderr, "inferno: %v\n", err)
					}
				}
				r.Close()
				be.Close()
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(results)
			}
			return writeBenchTable(os.Stdout, results)
		},
	}
	cmd.Flags().StringVarP(&prompts, "p", "p", "512", "prompt lengths to measure (comma-separated; 0 skips)")
	cmd.Flags().StringVarP(&gens, "n", "n", "128", "generation lengths to measure (comma-separated; 0 skips)")
	cmd.Flags().StringVarP(&depths, "d", "d", "0", "context depths to measure at (comma-separated)")
	cmd.Flags().StringVarP(&threadsFlag, "t", "t", "", "thread counts for the pool backend (comma-separated; default: the number of cores; on Apple M-series, of performance cores)")
	cmd.Flags().IntVarP(&reps, "r", "r", 5, "repetitions of each test")
	cmd.Flags().StringVar(&parallelFlag, "parallel", "", "measure batched decoding of this many sequences at once (comma-separated, e.g. 1,8,32)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a markdown table")
	sf.registerSampling(cmd, 0, 1, 0)
	rf.registerBench(cmd)
	rf.prompts = true // --trace prints the GPU's prompt passes
	return cmd
}

// bencher runs timed tests on one runner.
type bencher struct {
	r     engine.Runner
	vocab int
	rng   *rand.Rand
}

func (b *bencher) tokens(n int) []int32 {
	t := make([]int32, n)
	for i := range t {
		t[i] = int32(b.rng.IntN(b.vocab))
	}
	return t
}

// run measures p prompt tokens or n generated tokens after d tokens of
// context, reps times after one warm-up, and returns tokens per second.
func (b *bencher) run(d, p, n, reps int) ([]float64, error) {
	if d+p+n > b.r.MaxLen() {
		return nil, fmt.Errorf("depth %d + %d tokens exceed the context of %d (raise --ctx)", d, p+n, b.r.MaxLen())
	}
	// Fill the context once per depth; each repetition truncates back to it.
	b.r.Reset()
	if d > 0 {
		if err := b.r.Forward(b.tokens(d)); err != nil {
			return nil, err
		}
	}
	prompt, first := b.tokens(p), b.tokens(1)
	step := make([]int32, 1)
	var samples []float64
	for rep := -1; rep < reps; rep++ { // rep -1 is the warm-up
		if err := b.r.Truncate(d); err != nil {
			return nil, err
		}
		start := time.Now()
		if p > 0 {
			if err := b.r.Forward(prompt); err != nil {
				return nil, err
			}
			if _, err := b.r.Greedy(); err != nil {
				return nil, err
			}
		}
		step[0] = first[0]
		for range n {
			if err := b.r.Forward(step); err != nil {
				return nil, err
			}
			id, err := b.r.Greedy()
			if err != nil {
				return nil, err
			}
			step[0] = id
		}
		if rep >= 0 {
			samples = append(samples, float64(p+n)/time.Since(start).Seconds())
		}
	}
	return samples, nil
}

func summarize(desc string, size, params int64, backendName string, threads int, test string, p, n, d int, samples []float64) benchResult {
	var mean, sd float64
	for _, s := range samples {
		mean += s
	}
	mean /= float64(len(samples))
	for _, s := range samples {
		sd += (s - mean) * (s - mean)
	}
	if len(samples) > 1 {
		sd = math.Sqrt(sd / float64(len(samples)-1))
	}
	if d > 0 {
		test += fmt.Sprintf(" @ d%d", d)
	}
	return benchResult{Model: desc, Size: size, Params: params, Backend: backendName, Threads: threads, Test: test,
		NPrompt: p, NGen: n, NDepth: d, AvgTS: mean, StdTS: sd, SamplesT: samples}
}

func writeBenchTable(w io.Writer, rs []benchResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| model\t size\t params\t backend\t threads\t test\t t/s\t")
	fmt.Fprintln(tw, "| ---\t ---:\t ---:\t ---\t ---:\t ---:\t ---:\t")
	for _, r := range rs {
		threads := strconv.Itoa(r.Threads)
		if r.Threads == 0 {
			threads = "-"
		}
		fmt.Fprintf(tw, "| %s\t %.2f MiB\t %.2f M\t %s\t %s\t %s\t %.2f ± %.2f\t\n",
			r.Model, float64(r.Size)/(1<<20), float64(r.Params)/1e6, r.Backend, threads, r.Test, r.AvgTS, r.StdTS)
	}
	return tw.Flush()
}

// describe names the model by architecture and the type of its first
// feed-forward gate (dense or the experts'), and counts its
// tensor bytes and parameters.
func describe(m *model.Model) (desc string, size, params int64) {
	for _, t := range m.File.Tensors {
		size += int64(len(t.Data))
		params += int64(t.Elements())
	}
	c := m.Arch.Hyper()
	gate := m.Arch.Tensors().Layers[0].Matrix(arch.RoleGate)
	if gate == nil { // a mixture of experts
		gate = m.Arch.Tensors().Layers[0].Matrix(arch.RoleExpertGate)
	}
	return fmt.Sprintf("%s %dL/%d %s", c.Arch, c.Layers, c.Hidden, gate.Type), size, params
}

// intList parses "1,2,3".
func intList(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: %q is not a non-negative number", flag, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out, nil
}

// benchParallel measures batched decoding for each sequence count of
// pars: p prompt tokens and n generated tokens per sequence.
// describeSampling names the sampling of a --parallel run in the table's
// backend column: its settings, and where the tokens are drawn.
func describeSampling(p sampling.Params, device bool) string {
	d := fmt.Sprintf("T=%g", p.Temperature)
	if p.TopK > 0 {
		d += fmt.Sprintf(" k=%d", p.TopK)
	}
	if p.TopP > 0 && p.TopP < 1 {
		d += fmt.Sprintf(" p=%g", p.TopP)
	}
	if p.MinP > 0 {
		d += fmt.Sprintf(" min-p=%g", p.MinP)
	}
	if p.Penalized() {
		d += " penalties"
	}
	if device {
		return d + " (device)"
	}
	return d + " (host)"
}

func benchParallel(rf *runnerFlags, m *model.Model, desc string, size, params int64, pars []int, p, n, reps int, sp *sampling.Params) ([]benchResult, error) {
	be, err := rf.open(m)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	if be.Tracer() != nil { // the CPU's operations, every pass of the run
		defer func() {
			fmt.Fprintln(os.Stderr)
			writeTracer(os.Stderr, be)
		}()
	}
	traceGPU := rf.trace && be.Tracer() == nil
	var out []benchResult
	for _, par := range pars {
		bb, err := newBatchBencher(be, m.Arch.Hyper().Vocab, par, max(p, 1), n, sp)
		if err != nil {
			return nil, err
		}
		name := bb.br.Backend()
		if sp != nil {
			name += " " + describeSampling(*sp, bb.ds != nil)
		}
		var pps, tgs []float64
		for rep := -1; rep < reps; rep++ { // rep -1 is the warm-up
			pp, tg, err := bb.run(max(p, 1), n)
			if err != nil {
				bb.close()
				return nil, err
			}
			if rep >= 0 {
				pps, tgs = append(pps, pp), append(tgs, tg)
			}
		}
		if traceGPU {
			fmt.Fprintf(os.Stderr, "\n--parallel %d:\n", par)
			if err := reportBatchTrace(os.Stderr, be, bb.br, par); err != nil {
				bb.close()
				return nil, err
			}
		}
		bb.close()
		for _, r := range []struct {
			test    string
			p, n    int
			samples []float64
		}{{fmt.Sprintf("pp%d x%d", p, par), p, 0, pps}, {fmt.Sprintf("tg%d x%d", n, par), 0, n, tgs}} {
			if r.samples == nil || (r.p == 0 && r.n == 0) {
				continue
			}
			res := summarize(desc, size, params, name, be.Threads(), r.test, r.p, r.n, 0, r.samples)
			res.NPar = par
			out = append(out, res)
		}
	}
	return out, nil
}

// kvLine describes a runner's KV pools for one sequence of maxLen
// positions: their memory and, for a model with sliding-window layers
// (in a window pool of their own), what every layer's keys and values
// would take.
func kvLine(c *arch.Config, maxLen int, pool, full int64) string {
	local := 0
	for i := range c.Layers {
		if c.LayerWindow(i) > 0 {
			local++
		}
	}
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	if pool == full || local == 0 {
		return fmt.Sprintf("KV cache: %.1f MiB for a sequence of %d positions", mib(pool), maxLen)
	}
	return fmt.Sprintf("KV cache: %.1f MiB for a sequence of %d positions, %d of %d layers see the last %d positions, in a window pool (%.1f%% of the %.1f MiB of every layer's keys and values)",
		mib(pool), maxLen, local, c.Layers, c.Window, 100*float64(pool)/float64(full), mib(full))
}
