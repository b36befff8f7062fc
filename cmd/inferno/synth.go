package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"inferno/family"
	"inferno/gguf"
	"inferno/outfile"
	"inferno/quantize"
	"inferno/synth"
)

// synthType sets opts from a --type value: Q3_K, Q4_K and Q5_K are block
// types given to every weight matrix, any other name a llama-quantize
// mixture.
func synthType(opts *synth.Options, typ string) error {
	switch up := strings.ToUpper(typ); up {
	case "Q3_K":
		opts.Type = gguf.TensorQ3_K
	case "Q4_K":
		opts.Type = gguf.TensorQ4_K
	case "Q5_K":
		opts.Type = gguf.TensorQ5_K
	default:
		if _, err := quantize.ParseMixture(up); err != nil {
			return fmt.Errorf("--type %q: want a mixture (%s) or a block type (Q3_K, Q4_K, Q5_K)", typ, quantize.Names())
		}
		opts.Mixture = up
	}
	return nil
}

func synthCmd() *cobra.Command {
	var (
		preset, typ, vocabFrom string
		seed                   uint64
		shape                  synth.Shape
		pure, embedding        bool
		bank, threads          int
	)
	cmd := &cobra.Command{
		Use:   "synth OUT.gguf",
		Short: "Write a model of any architecture inferno runs, with deterministic random weights",
		Long: `Synth writes a GGUF model with random weights drawn from --seed, in the
shape of a released model (--preset):

` + presetHelp() + `

--layers, --hidden, --ffn, --heads, --kv-heads, --head-dim, --vocab-size,
--untied and, for mixture-of-experts presets, --experts, --experts-used
and --expert-ffn change the preset's shape.

--type is a quantization mixture as llama-quantize names it (` + quantize.Names() + `):
each tensor gets the type llama-quantize gives it (in Q4_K_M, Q4_K for
most matrices, Q6_K for the output head and some attn_v and ffn_down
layers); norms are F32. Q3_K, Q4_K and Q5_K give every matrix that block
type, and --pure gives every matrix the mixture's base type (Q4_0 --pure:
all Q4_0).

Models up to a billion weights draw every value in turn (a mixture then
holds what "inferno quantize" makes of the F32 model of the same seed);
larger ones copy rows from a bank of distinct random rows per row length
and type, so that a 32B model is written as fast as the disk takes it
(--bank sets the rows per bank, -1 draws every value).

--vocab-from copies the tokenizer metadata (tokens, merges, special ids,
chat template) of another GGUF file, such as a real Qwen3 model or
testdata/golden/tiny-q8_0.gguf; without it, a byte-level vocabulary is
written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkShapeFlags(cmd); err != nil {
				return err
			}
			opts := synth.Options{Preset: preset, Seed: seed, Shape: shape, Pure: pure, Bank: bank, Workers: threads, Embedding: embedding}
			if err := synthType(&opts, typ); err != nil {
				return err
			}
			if threads < 0 || threads > 4096 {
				return fmt.Errorf("--threads %d: want 0 (all cores) to 4096", threads)
			}
			p, err := synth.Resolve(opts)
			if err != nil {
				return err
			}
			if _, _, err := synth.Types(opts); err != nil {
				return err
			}
			if vocabFrom != "" {
				f, err := gguf.Open(vocabFrom)
				if err != nil {
					return fmt.Errorf("--vocab-from: %w", err)
				}
				defer f.Close()
				opts.Vocab = f
			}
			ctx, stop := signalContext()
			defer stop()
			bar := workBar{desc: "writing"}
			opts.Progress = bar.progress()
			start := time.Now()
			out := args[0]
			file, err := outfile.Create(out)
			if err != nil {
				return err
			}
			defer file.Abort() // does nothing once committed
			err = synth.WriteContext(ctx, file, opts)
			if err == nil {
				err = file.Commit()
			}
			bar.end(err)
			if errors.Is(err, context.Canceled) {
				return signalled(ctx)
			}
			if err != nil {
				return err
			}
			st, err := os.Stat(out)
			if err != nil {
				return err
			}
			what := typ
			if pure {
				what += " (pure)"
			}
			fmt.Fprintf(os.Stderr, "wrote %s: preset %s (%d layers, hidden %d, %d/%d heads of %d), %s weights, %.1f MiB in %.1fs\n",
				out, p.Name, p.Config.Layers, p.Config.Hidden, p.Config.Heads, p.Config.KVHeads, p.Config.HeadDim, strings.ToUpper(what), float64(st.Size())/(1<<20), time.Since(start).Seconds())
			return nil
		},
	}
	cmd.Flags().StringVar(&preset, "preset", "tiny", "model shape: "+strings.Join(synth.PresetNames(), ", "))
	cmd.Flags().StringVar(&typ, "type", "q8_0", "weight type: a mixture ("+quantize.Names()+") or Q3_K, Q4_K, Q5_K")
	cmd.Flags().BoolVar(&pure, "pure", false, "give every weight matrix the mixture's base type")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed")
	cmd.Flags().BoolVar(&embedding, "embedding", false, "write an embedding model (presets of architectures with embedding models: pooling_type last, as Qwen3-Embedding; run it with inferno embed or /v1/embeddings)")
	cmd.Flags().StringVar(&vocabFrom, "vocab-from", "", "GGUF file to copy the tokenizer from")
	cmd.Flags().IntVar(&shape.Layers, "layers", 0, "number of layers (0: the preset's)")
	cmd.Flags().IntVar(&shape.Hidden, "hidden", 0, "hidden size (0: the preset's)")
	cmd.Flags().IntVar(&shape.FFN, "ffn", 0, "feed-forward size (0: the preset's)")
	cmd.Flags().IntVar(&shape.Heads, "heads", 0, "query heads (0: the preset's)")
	cmd.Flags().IntVar(&shape.KVHeads, "kv-heads", 0, "key/value heads (0: the preset's)")
	cmd.Flags().IntVar(&shape.HeadDim, "head-dim", 0, "head dimension (0: the preset's)")
	cmd.Flags().IntVar(&shape.Vocab, "vocab-size", 0, "embedding rows (0: the preset's)")
	cmd.Flags().BoolVar(&shape.Untied, "untied", false, "write a separate output head (output.weight)")
	cmd.Flags().IntVar(&shape.Experts, "experts", 0, "experts a layer, mixture-of-experts presets (0: the preset's)")
	cmd.Flags().IntVar(&shape.TopK, "experts-used", 0, "experts a token, mixture-of-experts presets (0: the preset's)")
	cmd.Flags().IntVar(&shape.ExpertFFN, "expert-ffn", 0, "feed-forward size of one expert, mixture-of-experts presets (0: the preset's)")
	cmd.Flags().IntVar(&bank, "bank", 0, "rows per bank of random rows (0: banks of 1024 above a billion weights, -1: draw every value)")
	cmd.Flags().IntVar(&threads, "threads", 0, "threads that encode (0: all cores)")
	return cmd
}

// shapeFlags are synth's flags that change the preset's shape: 0 there
// means the preset's value, so a 0 given on the command line is refused
// rather than ignored.
var shapeFlags = []string{"layers", "hidden", "ffn", "heads", "kv-heads", "head-dim", "vocab-size", "experts", "experts-used", "expert-ffn"}

// checkShapeFlags refuses a shape flag set to 0 or less.
func checkShapeFlags(cmd *cobra.Command) error {
	for _, name := range shapeFlags {
		fl := cmd.Flags().Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		if n, err := cmd.Flags().GetInt(name); err == nil && n <= 0 {
			return fmt.Errorf("--%s %d: want at least 1", name, n)
		}
	}
	return nil
}

// presetHelp lists synth's presets, one line each: name, architecture,
// the released model whose shape it has.
func presetHelp() string {
	var b strings.Builder
	for _, f := range family.All() {
		for _, p := range f.Presets {
			fmt.Fprintf(&b, "  %-14s %-10s %s\n", p.Name, f.Name, p.Doc)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
