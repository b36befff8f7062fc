package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"inferno/gguf"
	"inferno/synth"
)

var weightTypes = map[string]gguf.TensorType{
	"q8_0": gguf.TensorQ8_0,
	"f16":  gguf.TensorF16,
	"bf16": gguf.TensorBF16,
	"f32":  gguf.TensorF32,
}

func synthCmd() *cobra.Command {
	var (
		preset, typ, vocabFrom string
		seed                   uint64
	)
	cmd := &cobra.Command{
		Use:   "synth OUT.gguf",
		Short: "Write a Qwen3 model with deterministic random weights",
		Long: `Synth writes a Qwen3-architecture GGUF model with random weights drawn from
--seed. Preset 0.6b has exactly Qwen3-0.6B's shapes (tied embeddings); tiny
is a 2-layer model for tests. --vocab-from copies the tokenizer metadata
(tokens, merges, special ids, chat template) of another GGUF file, such as
a real Qwen3 model or testdata/golden/tiny-q8_0.gguf; without it, a
byte-level vocabulary is written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, ok := weightTypes[strings.ToLower(typ)]
			if !ok {
				return fmt.Errorf("--type %q: want q8_0, f16, bf16 or f32", typ)
			}
			opts := synth.Options{Preset: preset, Type: t, Seed: seed}
			if vocabFrom != "" {
				f, err := gguf.Open(vocabFrom)
				if err != nil {
					return fmt.Errorf("--vocab-from: %w", err)
				}
				defer f.Close()
				opts.Vocab = f
			}
			start := time.Now()
			out := args[0]
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), ".synth-*.gguf")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			if err := synth.Write(tmp, opts); err != nil {
				tmp.Close()
				return fmt.Errorf("writing %s: %w", out, err)
			}
			if err := tmp.Chmod(0o644); err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Close(); err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			st, err := os.Stat(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "wrote %s: preset %s, %s weights, %.1f MiB in %.1fs\n",
				out, preset, t, float64(st.Size())/(1<<20), time.Since(start).Seconds())
			return nil
		},
	}
	cmd.Flags().StringVar(&preset, "preset", "tiny", "model shape: tiny or 0.6b")
	cmd.Flags().StringVar(&typ, "type", "q8_0", "weight type: q8_0, f16, bf16 or f32")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed")
	cmd.Flags().StringVar(&vocabFrom, "vocab-from", "", "GGUF file to copy the tokenizer from")
	return cmd
}
