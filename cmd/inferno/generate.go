package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"inferno/engine"
	"inferno/model"
)

func generateCmd() *cobra.Command {
	var (
		rf runnerFlags
		n  int
	)
	cmd := &cobra.Command{
		Use:   "generate MODEL.gguf PROMPT",
		Short: "Generate text from a prompt with greedy decoding",
		Long: `Generate streams the model's greedy continuation of PROMPT to standard
output, stopping at an end-of-generation token (<|im_end|>, <|endoftext|>)
or after -n tokens, and prints timing metrics to standard error.
PROMPT "-" reads the prompt from standard input. Ctrl-C stops the
generation (a second Ctrl-C ends the program at once) with exit status 130.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return fmt.Errorf("-n %d: want at least 1 token", n)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			go func() {
				<-ctx.Done()
				stop() // a second Ctrl-C gets the default behaviour: exit now
			}()
			m, err := model.Open(args[0])
			if err != nil {
				return err
			}
			defer m.Close()
			prompt, err := textArg(args[1])
			if err != nil {
				return err
			}
			ids := m.Tokenizer.Encode(prompt)
			if len(ids) == 0 {
				return fmt.Errorf("the prompt is empty")
			}
			r, tracer, err := rf.newRunner(m)
			if err != nil {
				return err
			}
			defer r.Close()

			out := bufio.NewWriter(os.Stdout)
			dec := m.Tokenizer.NewStreamDecoder()
			_, metrics, err := engine.Generate(ctx, r, ids, engine.Options{
				MaxTokens: n,
				Stop:      m.EOG,
				OnToken: func(id int32) error {
					if m.EOG[id] {
						return nil
					}
					out.WriteString(dec.Next(id))
					return out.Flush()
				},
			})
			out.WriteString(dec.Flush())
			out.WriteString("\n")
			out.Flush()
			if err != nil && ctx.Err() == nil {
				return err
			}
			if metrics.GeneratedTokens > 0 {
				fmt.Fprint(os.Stderr, engine.FormatMetrics(&metrics))
			}
			if err := rf.reportTrace(os.Stderr, r, tracer); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return errInterrupted
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&n, "n", "n", 128, "most tokens to generate")
	rf.register(cmd)
	return cmd
}
