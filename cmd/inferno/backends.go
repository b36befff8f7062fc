package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"inferno/backend"
	"inferno/backend/cpu"
	"inferno/backend/pool"
	"inferno/backend/simd"
	"inferno/engine"
	"inferno/model"
	"inferno/model/qwen3"
)

// runnerFlags are the flags that choose and size the backend a command runs on.
type runnerFlags struct {
	backend string
	threads int
	ctx     int
	kv      string
	trace   bool
}

func (f *runnerFlags) register(cmd *cobra.Command) {
	f.registerBench(cmd)
	cmd.Flags().IntVarP(&f.threads, "threads", "t", 0, "worker threads of the pool backend (0: the number of cores)")
}

// registerBench registers the flags bench shares (it takes its thread counts as a list).
func (f *runnerFlags) registerBench(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.backend, "backend", "auto", "compute backend: auto, scalar, simd, pool")
	cmd.Flags().IntVar(&f.ctx, "ctx", 0, "context length in tokens (0: the model's)")
	cmd.Flags().StringVar(&f.kv, "kv", "basic", "KV cache layout: basic (contiguous per layer)")
	cmd.Flags().BoolVar(&f.trace, "trace", false, "count calls and time per operation and print a table at the end")
}

// newRunner returns a runner of m on the backend f names, and the tracer
// wrapping its operations when --trace is set.
func (f *runnerFlags) newRunner(m *model.Model) (engine.Runner, *backend.Tracer, error) {
	if f.kv != "basic" {
		return nil, nil, fmt.Errorf("unknown KV cache layout %q (want basic)", f.kv)
	}
	if f.ctx < 0 {
		return nil, nil, fmt.Errorf("--ctx %d must not be negative", f.ctx)
	}
	if f.threads < 0 {
		return nil, nil, fmt.Errorf("--threads %d must not be negative", f.threads)
	}
	var ops backend.Ops
	switch f.backend {
	case "scalar":
		ops = cpu.NewScalar()
	case "simd":
		ops = simd.New()
	case "auto", "pool":
		ops = pool.New(f.threads)
	default:
		return nil, nil, fmt.Errorf("unknown backend %q (want auto, scalar, simd or pool)", f.backend)
	}
	var tracer *backend.Tracer
	if f.trace {
		tracer = backend.NewTracer(ops)
		ops = tracer
	}
	return qwen3.NewRunner(m.Qwen3, ops, f.ctx), tracer, nil
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
