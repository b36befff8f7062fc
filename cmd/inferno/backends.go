package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"inferno/backend/cpu"
	"inferno/engine"
	"inferno/model"
	"inferno/model/qwen3"
)

// runnerFlags are the flags that choose and size the backend a command runs on.
type runnerFlags struct {
	backend string
	ctx     int
	kv      string
}

func (f *runnerFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.backend, "backend", "auto", "compute backend: auto, scalar")
	cmd.Flags().IntVar(&f.ctx, "ctx", 0, "context length in tokens (0: the model's)")
	cmd.Flags().StringVar(&f.kv, "kv", "basic", "KV cache layout: basic (contiguous per layer)")
}

// newRunner returns a runner of m on the backend f names.
func (f *runnerFlags) newRunner(m *model.Model) (engine.Runner, error) {
	if f.kv != "basic" {
		return nil, fmt.Errorf("unknown KV cache layout %q (want basic)", f.kv)
	}
	if f.ctx < 0 {
		return nil, fmt.Errorf("--ctx %d must not be negative", f.ctx)
	}
	switch f.backend {
	case "auto", "scalar":
		return qwen3.NewRunner(m.Qwen3, cpu.NewScalar(), f.ctx), nil
	}
	return nil, fmt.Errorf("unknown backend %q (want auto or scalar)", f.backend)
}
