package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"inferno/backend"
	"inferno/backend/cpu"
	"inferno/backend/cuda"
	"inferno/backend/pool"
	"inferno/backend/simd"
	"inferno/engine"
	"inferno/kvcache"
	"inferno/model"
	"inferno/model/qwen3"
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
}

func (f *runnerFlags) register(cmd *cobra.Command) {
	f.registerBench(cmd)
	cmd.Flags().IntVarP(&f.threads, "threads", "t", 0, "worker threads of the pool backend (0: the number of cores)")
}

// registerBench registers the flags bench shares (it takes its thread counts as a list).
func (f *runnerFlags) registerBench(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.backend, "backend", "auto", "compute backend: auto, scalar, simd, pool, cuda")
	cmd.Flags().IntVar(&f.ctx, "ctx", 0, "context length in tokens (0: the model's)")
	cmd.Flags().StringVar(&f.kv, "kv", "basic", "KV cache layout: basic (contiguous per layer)")
	cmd.Flags().StringVar(&f.kvType, "kv-type", "auto", "CPU KV cache element type: f32, f16 (half the memory and bytes read), or auto (f32 on scalar, f16 on simd and pool)")
	cmd.Flags().BoolVar(&f.trace, "trace", false, "count calls and time per operation and print a table at the end")
	cmd.Flags().BoolVar(&f.noGraph, "no-graph", false, "cuda: launch the decode step's kernels one by one, a synchronization after each")
}

// newRunner returns a runner of m on the backend f names, and the tracer
// wrapping its operations when --trace is set on a CPU backend. "auto"
// takes the GPU when a driver and a device are there and the model runs
// on it, and the pool backend otherwise.
func (f *runnerFlags) newRunner(m *model.Model) (engine.Runner, *backend.Tracer, error) {
	if f.kv != "basic" {
		return nil, nil, fmt.Errorf("unknown KV cache layout %q (want basic)", f.kv)
	}
	if f.ctx < 0 {
		return nil, nil, fmt.Errorf("--ctx %d must not be negative", f.ctx)
	}
	if f.threads < 0 || f.threads > maxThreads {
		return nil, nil, fmt.Errorf("--threads %d: want 0 (all cores) to %d", f.threads, maxThreads)
	}
	if c := m.Qwen3.Config.ContextLength; f.ctx > c {
		return nil, nil, fmt.Errorf("--ctx %d exceeds the model's context length %d", f.ctx, c)
	}
	kvType := kvcache.F16
	switch f.kvType {
	case "auto":
		if f.backend == "scalar" {
			kvType = kvcache.F32
		}
	default:
		t, err := kvcache.ParseType(f.kvType)
		if err != nil {
			return nil, nil, fmt.Errorf("--kv-type: %w", err)
		}
		kvType = t
	}
	switch f.backend {
	case "scalar", "simd", "pool":
		if f.noGraph {
			return nil, nil, fmt.Errorf("--no-graph applies to the cuda backend, not %s", f.backend)
		}
	case "cuda":
		if f.threads != 0 {
			return nil, nil, fmt.Errorf("--threads applies to the pool backend, not cuda")
		}
		if f.kvType != "auto" {
			return nil, nil, fmt.Errorf("--kv-type applies to the CPU backends (the cuda backend keeps an f16 cache)")
		}
	}
	var ops backend.Ops
	switch f.backend {
	case "cuda":
		if err := cuda.Available(); err != nil {
			return nil, nil, err
		}
		r, err := f.newCUDA(m)
		return r, nil, err
	case "auto":
		if cuda.Available() == nil {
			r, err := f.newCUDA(m)
			if err == nil {
				return r, nil, nil
			}
			fmt.Fprintf(os.Stderr, "inferno: the GPU cannot run this model (%v); using the CPU\n", err)
		}
		ops = pool.New(f.threads)
	case "scalar":
		ops = cpu.NewScalar()
	case "simd":
		ops = simd.New()
	case "pool":
		ops = pool.New(f.threads)
	default:
		return nil, nil, fmt.Errorf("unknown backend %q (want auto, scalar, simd, pool or cuda)", f.backend)
	}
	var tracer *backend.Tracer
	if f.trace {
		tracer = backend.NewTracer(ops)
		ops = tracer
	}
	return qwen3.NewRunnerKV(m.Qwen3, ops, f.ctx, kvType), tracer, nil
}

// maxThreads bounds --threads: far more workers than cores only waste memory.
const maxThreads = 1024

// reportTrace prints the per-operation table of a --trace run: the CPU
// tracer's counts and times, or for the GPU a profile of one decode step
// (the graph replayed with an event after each kernel).
func (f *runnerFlags) reportTrace(w io.Writer, r engine.Runner, tracer *backend.Tracer) error {
	if !f.trace {
		return nil
	}
	if tracer != nil {
		fmt.Fprintf(w, "trace (%s, every forward pass):\n", r.Backend())
		return backend.WriteTraceTable(w, tracer.Stats())
	}
	cr, ok := r.(*cuda.Runner)
	if !ok {
		return nil
	}
	const reps = 20
	kernels, step, err := cr.Profile(reps)
	if err != nil {
		return fmt.Errorf("--trace: %w", err)
	}
	stats := make([]backend.OpStats, len(kernels))
	for i, k := range kernels {
		stats[i] = backend.OpStats{Name: k.Name, Calls: k.Calls, Total: time.Duration(k.Micros * 1e3)}
	}
	fmt.Fprintf(w, "trace (cuda, one decode step at position %d: %.1f us, the mean of %d replays with an event after each kernel):\n", r.Len(), step, reps)
	return backend.WriteTraceTable(w, stats)
}

// newCUDA uploads m to the GPU, with a progress bar when stderr is a terminal.
func (f *runnerFlags) newCUDA(m *model.Model) (engine.Runner, error) {
	var progress io.Writer
	if term.IsTerminal(int(os.Stderr.Fd())) {
		progress = os.Stderr
	}
	return cuda.NewRunner(m.Qwen3, cuda.Options{MaxLen: f.ctx, NoGraph: f.noGraph, Progress: progress})
}

// threadsUsed returns the number of CPU threads a backend computes with, 0
// for a GPU backend.
func (f *runnerFlags) threadsUsed(backendName string) int {
	switch backendName {
	case "pool":
		if f.threads > 0 {
			return f.threads
		}
		return runtime.NumCPU()
	case "cuda":
		return 0
	}
	return 1
}
