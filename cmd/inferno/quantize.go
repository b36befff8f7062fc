package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"inferno/family"
	"inferno/gguf"
	"inferno/quantize"
)

func quantizeCmd() *cobra.Command {
	var (
		typ     string
		threads int
		pure    bool
	)
	cmd := &cobra.Command{
		Use:   "quantize IN.gguf OUT.gguf --type Q4_K_M",
		Short: "Quantize an F32, F16 or BF16 model as llama-quantize does",
		Long: `Quantize rewrites a GGUF model (` + family.Titles() + `) stored in F32, F16 or BF16 into one of
llama.cpp's quantization mixtures: ` + quantize.Names() + `
(any case; Q3_K, Q4_K and Q5_K are aliases of the _M mixtures, as in
llama-quantize). Each tensor gets the type llama-quantize gives it: the
output head (or the tied token embedding) and some attn_v and ffn_down
layers get more bits, rows that do not hold whole blocks fall back to a
smaller block, norms stay F32. Without an importance matrix the tensor
data is byte for byte what llama-quantize writes. --pure gives every
weight matrix the mixture's base type instead.

The metadata is copied, with general.file_type set to the mixture. The
input is memory-mapped and the output streamed; the file is written under
a temporary name in OUT's folder and renamed when complete. A progress bar
shows on standard error when it is a terminal; Ctrl-C stops with exit
status 130 and leaves nothing behind.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if typ == "" {
				return fmt.Errorf("--type is required (one of %s)", quantize.Names())
			}
			if _, err := quantize.ParseMixture(typ); err != nil {
				return fmt.Errorf("--type: %w", err)
			}
			if threads < 0 || threads > 4096 {
				return fmt.Errorf("--threads %d: want 0 (all cores) to 4096", threads)
			}
			if threads == 0 {
				threads = runtime.GOMAXPROCS(0)
			}
			ctx, stop := signalContext()
			defer stop()
			opts := quantize.Options{Mixture: typ, Pure: pure, Threads: threads}
			bar := workBar{desc: "quantizing"}
			opts.Progress = bar.progress()
			res, err := quantize.Quantize(ctx, args[0], args[1], opts)
			bar.end(err)
			if errors.Is(err, context.Canceled) {
				return signalled(ctx)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "wrote %s: %s, %d tensors (%s), %.1f MiB (%.2f bits per weight) -> %.1f MiB (%.2f bits per weight) in %.1fs with %d threads\n",
				res.Path, res.Mixture.Name, res.Tensors, typeCounts(res.Types),
				float64(res.InFile)/(1<<20), res.InBitsPerWeight(), float64(res.OutFile)/(1<<20), res.BitsPerWeight(),
				res.Duration.Seconds(), threads)
			return nil
		},
	}
	cmd.Flags().StringVar(&typ, "type", "", "quantization mixture: "+quantize.Names())
	cmd.Flags().IntVar(&threads, "threads", 0, "threads that quantize (0: all cores)")
	cmd.Flags().BoolVar(&pure, "pure", false, "give every weight matrix the mixture's base type (llama-quantize --pure)")
	return cmd
}

// typeCounts formats tensors per type as "197 Q4_K, 29 Q6_K, 113 F32",
// most first.
func typeCounts(m map[gguf.TensorType]int) string {
	type tc struct {
		name string
		n    int
	}
	var l []tc
	for t, n := range m {
		l = append(l, tc{t.String(), n})
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].n != l[j].n {
			return l[i].n > l[j].n
		}
		return l[i].name < l[j].name
	})
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = fmt.Sprintf("%d %s", x.n, x.name)
	}
	return strings.Join(parts, ", ")
}
