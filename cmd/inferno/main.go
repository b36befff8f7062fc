// Command inferno runs language models (Qwen3 dense and mixture-of-experts,
// Qwen2.5, Llama 3 and more) from GGUF files on the CPU and on GPUs (CUDA on
// NVIDIA, Vulkan on NVIDIA, AMD, Intel and Apple).
//
// Usage:
//
//	inferno pull REPO[:QUANT] | inferno pull REPO FILE
//	inferno generate MODEL.gguf PROMPT [-n N] [--backend NAME] [--device N]
//	inferno chat MODEL.gguf [--system TEXT]
//	inferno serve MODEL... [--addr 127.0.0.1:8080] [--parallel N] [--api-key KEY] [--keep-alive 5m]
//	inferno tokenize MODEL.gguf TEXT
//	inferno embed MODEL.gguf TEXT... [--dimensions N] [--instruct TASK]
//	inferno logits MODEL.gguf --tokens 1,2,3 --out FILE
//	inferno bench MODEL.gguf [-p 512] [-n 128] [-d 0,512] [-t 1,2] [-r 5] [--json]
//	inferno convert HF_DIR OUT.gguf [--type f16|bf16|f32|q8_0]
//	inferno quantize IN.gguf OUT.gguf --type Q4_K_M
//	inferno devices
//	inferno synth OUT.gguf --preset tiny|0.6b|llama3-1b|qwen2.5-0.5b|... --type q8_0|f16|bf16|f32
//
// pull downloads a GGUF file from the Hugging Face Hub; generate continues a
// prompt; chat is an interactive conversation; serve answers OpenAI's API
// over HTTP (docs/SERVER.md); tokenize prints a text's token ids; embed
// prints the embeddings of texts (embedding models); logits
// writes a prompt's logits; bench measures prompt and generation speed;
// devices lists the GPUs the cuda and vulkan backends see;
// convert turns a Hugging Face checkpoint (Qwen3, Qwen2, Llama) into GGUF; quantize writes a
// quantized copy of a GGUF file; synth writes a model of random weights for
// tests. convert, quantize and synth write under a temporary name, renamed
// when complete; SIGINT or SIGTERM stops them with nothing left behind.
//
// MODEL.gguf may be a Hugging Face Hub reference instead, REPO:QUANT or
// hf://REPO/FILE (e.g. Qwen/Qwen3-0.6B-GGUF:Q8_0): it is pulled into the
// Hugging Face cache first, or with --offline taken from the cache alone.
//
// Run "inferno help COMMAND" for the flags of each command.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"inferno/family"
)

func main() {
	root := rootCmd()
	if err := root.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "inferno: %v\n", err)
		var se *signalError
		if errors.As(err, &se) {
			os.Exit(se.exitCode())
		}
		if errors.Is(err, errInterrupted) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

// rootCmd returns the inferno command with its subcommands.
func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "inferno",
		Short:         "Run " + family.Titles() + " models from GGUF files on the CPU and NVIDIA GPUs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(generateCmd(), chatCmd(), serveCmd(), tokenizeCmd(), logitsCmd(), synthCmd(), benchCmd(), convertCmd(), quantizeCmd(), pullCmd(), embedCmd(), devicesCmd())
	addHubFlags(root)
	addConfigFlags(root)
	return root
}
