// Command inferno runs Qwen3 language models from GGUF files on the CPU and
// on NVIDIA GPUs.
//
// Usage:
//
//	inferno generate MODEL.gguf PROMPT [-n N] [--backend NAME]
//	inferno tokenize MODEL.gguf TEXT
//	inferno logits MODEL.gguf --tokens 1,2,3 --out FILE
//	inferno synth OUT.gguf --preset tiny|0.6b --type q8_0|f16|bf16|f32
//
// Run "inferno help COMMAND" for the flags of each command.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "inferno",
		Short:         "Run Qwen3 models from GGUF files on the CPU and NVIDIA GPUs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(generateCmd(), tokenizeCmd(), logitsCmd(), synthCmd(), benchCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "inferno: %v\n", err)
		os.Exit(1)
	}
}
