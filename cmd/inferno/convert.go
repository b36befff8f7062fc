package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"inferno/convert"
	"inferno/family"
	"inferno/gguf"
)

// weightTypes are the --type values of convert.
var weightTypes = map[string]gguf.TensorType{
	"q8_0": gguf.TensorQ8_0,
	"f16":  gguf.TensorF16,
	"bf16": gguf.TensorBF16,
	"f32":  gguf.TensorF32,
}

func convertCmd() *cobra.Command {
	var typ, name string
	cmd := &cobra.Command{
		Use:   "convert HF_DIR OUT.gguf",
		Short: "Convert a Hugging Face checkpoint of a " + family.Titles() + " model to GGUF",
		Long: `Convert reads a Hugging Face checkpoint folder whose config.json names
one of the architectures ` + family.CheckpointNames() + `
(a mixture of experts' projections are stacked as llama.cpp's converter
does) (config.json, model.safetensors or shards with model.safetensors.index.json,
tokenizer.json, tokenizer_config.json, and generation_config.json when
present) and writes a GGUF file that inferno and llama.cpp load, with the
metadata, tensor names and tokenizer llama.cpp's convert_hf_to_gguf.py
writes. --type sets the type of the weight matrices (norm weights stay
F32). The weights are converted tensor by tensor from memory-mapped
files, so memory use stays small whatever the model's size. The file is
written under a temporary name in OUT's folder (created if needed) and
renamed when complete. A progress bar shows on standard error when it is
a terminal; Ctrl-C stops with exit status 130 and leaves nothing behind.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, ok := weightTypes[strings.ToLower(typ)]
			if !ok {
				return fmt.Errorf("--type %q: want f32, f16, bf16 or q8_0", typ)
			}
			ctx, stop := signalContext()
			defer stop()
			opts := convert.Options{Type: t, Name: name}
			bar := workBar{desc: "converting"}
			opts.Progress = bar.progress()
			res, err := convert.Convert(ctx, args[0], args[1], opts)
			bar.end(err)
			if errors.Is(err, context.Canceled) {
				return signalled(ctx)
			}
			if err != nil {
				return err
			}
			head := "output head tied to the embedding"
			if !res.Tied {
				head = "separate output head"
			}
			fmt.Fprintf(os.Stderr, "wrote %s: %d tensors, %s weights, %s parameters, %s, %.1f MiB in %.1fs\n",
				res.Path, res.Tensors, res.Type, count(res.Params), head, float64(res.Bytes)/(1<<20), res.Duration.Seconds())
			return nil
		},
	}
	cmd.Flags().StringVar(&typ, "type", "f16", "weight type: f32, f16, bf16 or q8_0")
	cmd.Flags().StringVar(&name, "name", "", "general.name of the model (default: the folder's name)")
	return cmd
}

// count formats a parameter count as 1.72B, 596M or 40.1K.
func count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.3gB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.3gM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.3gK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
