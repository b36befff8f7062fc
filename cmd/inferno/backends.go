package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"inferno/backend"
	"inferno/chat"
	"inferno/engine"
	"inferno/model"
	"inferno/placement"
)

// runnerFlags are the flags that choose and size the backend a command runs on.
type runnerFlags struct {
	backend string
	threads int
	ctx     int
	kv      string
	kvType  string
	trace   bool
	noGraph bool
	gpuMem  string // --gpu-memory
	device  int    // --device
	// prompts: the command prints the GPU's prompt passes under --trace
	// (reportTrace), so the runner times them (placement.Config.TracePrompts).
	prompts bool
}

func (f *runnerFlags) register(cmd *cobra.Command) {
	f.registerBench(cmd)
	cmd.Flags().IntVarP(&f.threads, "threads", "t", 0, "worker threads of the pool backend (0: the number of cores; on Apple M-series, of performance cores)")
}

// registerBench registers the flags bench shares (it takes its thread counts as a list).
func (f *runnerFlags) registerBench(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.backend, "backend", "auto", "compute backend: auto (cuda, else vulkan, else pool), scalar, simd, pool, cuda, vulkan")
	cmd.Flags().IntVar(&f.device, "device", -1, "vulkan: the device to run on, by its number in `inferno devices` (-1: the first discrete GPU, else the first usable device)")
	cmd.Flags().IntVar(&f.ctx, "ctx", 0, "context length in tokens (0: the model's)")
	cmd.Flags().StringVar(&f.kv, "kv", "basic", "KV cache layout: basic (one contiguous region per sequence, a block as long as the context) or paged (a pool of blocks, as the server keeps by default)")
	cmd.Flags().StringVar(&f.kvType, "kv-type", "auto", "CPU KV cache element type: f32, f16 (half the memory and bytes read), or auto (f32 on scalar, f16 on simd and pool)")
	cmd.Flags().BoolVar(&f.trace, "trace", false, "count calls and time per operation and print a table at the end")
	cmd.Flags().BoolVar(&f.noGraph, "no-graph", false, "GPU: launch the decode step's kernels one by one (cuda, a synchronization after each) or record every pass's command buffer anew (vulkan)")
	cmd.Flags().StringVar(&f.gpuMem, "gpu-memory", "0.9", "GPU: the memory the process may take, weights, KV cache and scratch together: a share of the device's (0.9) or a size (40GiB); the KV pool sized from it leaves the rest to others")
}

// gpuMemory parses --gpu-memory: a share of the device's memory in (0, 1],
// or a size in bytes.
func gpuMemory(s string) (fraction float64, bytes int64, err error) {
	if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		if !(v > 0 && v <= 1) {
			return 0, 0, fmt.Errorf("--gpu-memory %s: a share of the GPU's memory must be in (0, 1] (or give a size, such as 40GiB)", s)
		}
		return v, 0, nil
	}
	n, err := parseBytes(s)
	if err != nil {
		return 0, 0, fmt.Errorf("--gpu-memory: %w, or a share such as 0.9", err)
	}
	return 0, n, nil
}

// open opens m on the backend the flags name (see placement.Open), with the
// GPU upload's progress bar when stderr is a terminal.
func (f *runnerFlags) open(m *model.Model) (*placement.Backend, error) {
	if f.kv != "basic" && f.kv != "paged" {
		return nil, fmt.Errorf("unknown KV cache layout %q (want basic or paged)", f.kv)
	}
	if f.ctx < 0 {
		return nil, fmt.Errorf("--ctx %d must not be negative", f.ctx)
	}
	if f.threads < 0 || f.threads > placement.MaxThreads {
		return nil, fmt.Errorf("--threads %d: want 0 (all cores) to %d", f.threads, placement.MaxThreads)
	}
	if c := m.Arch.Hyper().ContextLength; f.ctx > c {
		return nil, fmt.Errorf("--ctx %d exceeds the model's context length %d", f.ctx, c)
	}
	share, size, err := gpuMemory(f.gpuMem)
	if err != nil {
		return nil, err
	}
	var progress io.Writer
	if term.IsTerminal(int(os.Stderr.Fd())) {
		progress = os.Stderr
	}
	b, err := placement.Open(m, placement.Config{
		Backend: f.backend, Threads: f.threads, Context: f.ctx, KVType: f.kvType, Trace: f.trace, NoGraph: f.noGraph,
		Device: f.device, DeviceSet: f.device >= 0,
		TracePrompts: f.trace && f.prompts, GPUMemory: share, GPUMemoryBytes: size,
		Progress: progress,
		Warn:     func(msg string) { fmt.Fprintf(os.Stderr, "inferno: %s\n", msg) },
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// newRunner opens the backend and one sequence on it: the batched runner
// the server runs, driven as a batch of one (engine.Single), its KV pool
// holding one sequence of the context in the layout --kv names. Closing
// the runner and then the backend releases both.
func (f *runnerFlags) newRunner(m *model.Model) (engine.Runner, *placement.Backend, error) {
	b, err := f.open(m)
	if err != nil {
		return nil, nil, err
	}
	var r engine.Runner
	br, err := b.NewBatchRunner(placement.BatchConfig{Sequences: 1, Contiguous: f.kv == "basic"})
	if err == nil {
		r = engine.NewSingle(br)
	}
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	return r, b, nil
}

// reportTrace prints the per-operation table of a --trace run: the CPU
// tracer's counts and times, or for a runner that can profile itself (the
// GPU) the kernels of its prompt passes and a profile of one decode step.
func (f *runnerFlags) reportTrace(w io.Writer, r engine.Runner, b *placement.Backend) error {
	if !f.trace {
		return nil
	}
	if ok, err := writeTracer(w, b); ok || err != nil {
		return err
	}
	if err := writePassProfile(w, r, r.Backend(), "prompt passes"); err != nil {
		return err
	}
	p, ok := r.(engine.Profiler)
	if !ok {
		return nil
	}
	const reps = 20
	stats, step, err := p.Profile(reps)
	if err != nil {
		return fmt.Errorf("--trace: %w", err)
	}
	fmt.Fprintf(w, "trace (%s, one decode step at position %d: %.1f us, the mean of %d replays with an event after each kernel):\n", r.Backend(), r.Len(), step, reps)
	return backend.WriteTraceTable(w, stats)
}

// writeTracer prints the table of the CPU tracer be keeps under --trace
// (every forward pass's operations) and reports whether it has one.
func writeTracer(w io.Writer, be *placement.Backend) (bool, error) {
	t := be.Tracer()
	if t == nil {
		return false, nil
	}
	fmt.Fprintf(w, "trace (%s, %d threads, every forward pass):\n", be.Name(), be.Threads())
	return true, backend.WriteTraceTable(w, t.Stats())
}

// writePassProfile prints the kernels of the passes r timed, when it is
// an engine.PromptProfiler that kept some; what names the passes.
func writePassProfile(w io.Writer, r any, backendName, what string) error {
	pp, ok := r.(engine.PromptProfiler)
	if !ok {
		return nil
	}
	ops, micros, passes, tokens, err := pp.PromptProfile()
	if err != nil || passes == 0 {
		return nil
	}
	fmt.Fprintf(w, "trace (%s, %d %s, %d tokens: %.1f us, an event after each kernel):\n", backendName, passes, what, tokens, micros)
	return backend.WriteTraceTable(w, ops)
}

// reportBatchTrace prints what a batched run's --trace kept: the CPU
// tracer's table, or on a runner that times its passes (the GPU) the
// kernels of every pass that was no captured decode step (prompts, and
// in the server the steps that carried a prompt's chunk), then, when B >
// 0 and the last pass was a decode step of B tokens, one decode step's
// kernels replayed.
func reportBatchTrace(w io.Writer, be *placement.Backend, br engine.BatchRunner, B int) error {
	if ok, err := writeTracer(w, be); ok || err != nil {
		return err
	}
	if err := writePassProfile(w, br, br.Backend(), "passes other than decode steps"); err != nil {
		return err
	}
	p, ok := br.(engine.BatchProfiler)
	if !ok || B <= 0 {
		return nil
	}
	const reps = 20
	stats, step, err := p.Profile(B, reps)
	if err != nil {
		return fmt.Errorf("--trace: %w", err)
	}
	fmt.Fprintf(w, "trace (%s, one decode step of %d sequences: %.1f us, the mean of %d replays with an event after each kernel):\n", br.Backend(), B, step, reps)
	return backend.WriteTraceTable(w, stats)
}

// chatTemplate returns m's chat template: tokenizer.chat_template, or
// ChatML when the file has none.
func chatTemplate(m *model.Model) (*chat.Template, error) {
	tokenText := func(key string) string {
		id, err := m.File.Int(key)
		if err != nil || id < 0 || id >= int64(m.Tokenizer.VocabSize()) {
			return ""
		}
		return m.Tokenizer.TokenText(int32(id))
	}
	t, err := chat.New(m.ChatTemplate, tokenText("tokenizer.ggml.bos_token_id"), tokenText("tokenizer.ggml.eos_token_id"))
	if err != nil {
		return nil, fmt.Errorf("%s: chat template: %w", m.Path, err)
	}
	return t, nil
}
