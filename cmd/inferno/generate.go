package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"inferno/chat"
	"inferno/engine"
)

func generateCmd() *cobra.Command {
	var (
		rf      runnerFlags
		sf      samplingFlags
		cf      constraintFlags
		n       int
		asChat  bool
		noThink bool
		system  string
	)
	cmd := &cobra.Command{
		Use:   "generate MODEL.gguf PROMPT",
		Short: "Generate text from a prompt",
		Long: `Generate streams the model's continuation of PROMPT to standard output,
stopping at an end-of-generation token (<|im_end|>, <|endoftext|>), a
--stop string or after -n tokens, and prints timing metrics to standard
error. Decoding is greedy unless --temperature is above 0.
PROMPT "-" reads the prompt from standard input. With --chat the prompt is
one user turn, rendered with the model's chat template. Ctrl-C stops the
generation (a second Ctrl-C ends the program at once) with exit status 130.
--json-schema FILE and --grammar FILE (GBNF) constrain the text generated
(after the model's reasoning, with --chat).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return fmt.Errorf("-n %d: want at least 1 token", n)
			}
			params, err := sf.params()
			if err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			go func() {
				<-ctx.Done()
				stop() // a second Ctrl-C gets the default behaviour: exit now
			}()
			m, err := openModel(ctx, args[0])
			if err != nil {
				return err
			}
			defer m.Close()
			prompt, err := textArg(args[1])
			if err != nil {
				return err
			}
			if asChat {
				tmpl, err := chatTemplate(m)
				if err != nil {
					return err
				}
				var msgs []chat.Message
				if system != "" {
					msgs = append(msgs, chat.Message{Role: "system", Content: system})
				}
				msgs = append(msgs, chat.Message{Role: "user", Content: prompt})
				opts := chat.Options{AddGenerationPrompt: true}
				if noThink {
					opts.Kwargs = map[string]any{"enable_thinking": false, "reasoning_effort": "low"}
				}
				if prompt, err = tmpl.Render(msgs, opts); err != nil {
					return fmt.Errorf("chat template: %w", err)
				}
			}
			ids := m.Tokenizer.Encode(prompt)
			if len(ids) == 0 {
				return fmt.Errorf("the prompt is empty")
			}
			r, b, err := rf.newRunner(m)
			if err != nil {
				return err
			}
			defer b.Close()
			defer r.Close()
			if err := cf.load(m, r.Vocab()); err != nil {
				return err
			}
			cons, err := cf.constraint(m, prompt, asChat)
			if err != nil {
				return err
			}
			seq, err := engine.NewSequence(r, m.Tokenizer, engine.Request{
				Prompt: ids, MaxTokens: n, Sampling: params, Stop: sf.stop, EOG: m.EOG, IgnoreEOS: sf.ignoreEOS, Constraint: cons,
			})
			if err != nil {
				return err
			}
			out := bufio.NewWriter(os.Stdout)
			for !seq.Done() && ctx.Err() == nil {
				st, err := seq.Step()
				if err != nil {
					out.Flush()
					return err
				}
				if st.Text != "" {
					out.WriteString(st.Text)
					out.Flush()
				}
			}
			out.WriteString("\n")
			out.Flush()
			metrics := seq.Metrics()
			if metrics.GeneratedTokens > 0 {
				fmt.Fprint(os.Stderr, engine.FormatMetrics(&metrics))
			}
			if err := rf.reportTrace(os.Stderr, r, b); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return signalled(ctx)
			}
			if seq.Finish() == engine.FinishLength && seq.Generated() < n {
				fmt.Fprintf(os.Stderr, "stopped after %d tokens: the context of %d tokens is full (the prompt took %d); --ctx sets a longer one, up to the model's\n",
					seq.Generated(), seq.MaxLen(), len(ids))
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&n, "n", "n", 128, "most tokens to generate")
	cmd.Flags().BoolVar(&asChat, "chat", false, "wrap the prompt as one user turn with the model's chat template")
	cmd.Flags().BoolVar(&noThink, "no-think", false, "with --chat: ask the model to answer without reasoning first (enable_thinking=false; gpt-oss, which always reasons: reasoning_effort=low)")
	cmd.Flags().StringVar(&system, "system", "", "with --chat: a system message before the prompt")
	sf.register(cmd, 0, 1, 0)
	cf.register(cmd)
	rf.register(cmd)
	rf.prompts = true
	return cmd
}
