package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"inferno/chat"
	"inferno/engine"
	"inferno/model"
	"inferno/parser"
	"inferno/sampling"
	"inferno/structured"
)

func chatCmd() *cobra.Command {
	var (
		rf      runnerFlags
		sf      samplingFlags
		cf      constraintFlags
		system  string
		think   bool
		noThink bool
		n       int
	)
	cmd := &cobra.Command{
		Use:   "chat MODEL.gguf",
		Short: "Chat with the model in the terminal",
		Long: `Chat reads your messages line by line, renders the conversation with the
model's chat template and streams each reply. The model's reasoning
(<think>...</think>) is shown dimmed before the answer; --no-think asks
the model to answer without it.

Commands: /reset starts a new conversation (keeping --system), /exit (or
Ctrl-D) quits. Ctrl-C stops the reply being written and keeps the
conversation; at the prompt it quits.

Sampling defaults to Qwen3's recommendation: temperature 0.6, top-p 0.95,
top-k 20 with reasoning, 0.7, 0.8 and 20 with --no-think.

--json-schema FILE and --grammar FILE (GBNF) constrain every reply (after
the model's reasoning).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if think && noThink {
				return fmt.Errorf("--think and --no-think exclude each other")
			}
			if n < 1 {
				return fmt.Errorf("-n %d: want at least 1 token", n)
			}
			if noThink {
				fl := cmd.Flags()
				if !fl.Changed("temperature") {
					sf.temperature = 0.7
				}
				if !fl.Changed("top-p") {
					sf.topP = 0.8
				}
			}
			params, err := sf.params()
			if err != nil {
				return err
			}
			m, err := openModel(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer m.Close()
			tmpl, err := chatTemplate(m)
			if err != nil {
				return err
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
			c := &chatSession{cons: &cf,
				m: m, tmpl: tmpl, r: r, params: params, stops: sf.stop, ignoreEOS: sf.ignoreEOS, max: n,
				system: system, noThink: noThink, out: os.Stdout,
				color: term.IsTerminal(int(os.Stdout.Fd())),
			}
			if c.format, c.reasoning, err = replyFormat(m); err != nil {
				return err
			}
			c.reset()
			return c.run(os.Stdin)
		},
	}
	cmd.Flags().StringVar(&system, "system", "", "system message that starts every conversation")
	cmd.Flags().BoolVar(&think, "think", false, "let the model reason before answering (the default)")
	cmd.Flags().BoolVar(&noThink, "no-think", false, "ask the model to answer without reasoning (enable_thinking=false; gpt-oss, which always reasons: reasoning_effort=low)")
	cmd.Flags().IntVarP(&n, "n", "n", 4096, "most tokens per reply")
	sf.register(cmd, 0.6, 0.95, 20)
	cf.register(cmd)
	rf.register(cmd)
	return cmd
}

// chatSession is one terminal conversation.
type chatSession struct {
	m         *model.Model
	tmpl      *chat.Template
	r         engine.Runner
	params    sampling.Params
	stops     []string
	ignoreEOS bool
	cons      *constraintFlags // --json-schema, --grammar
	max       int
	system    string
	noThink   bool
	format    parser.Format // of the model's replies
	reasoning bool          // the model reasons between its format's tags
	color     bool
	out       io.Writer

	msgs   []chat.Message
	cached []int32 // what the runner holds, for the next turn's prefix reuse
}

func (c *chatSession) reset() {
	c.msgs = c.msgs[:0]
	if c.system != "" {
		c.msgs = append(c.msgs, chat.Message{Role: "system", Content: c.system})
	}
}

// run reads lines until /exit, end of input or Ctrl-C at the prompt.
func (c *chatSession) run(in io.Reader) error {
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	interactive := term.IsTerminal(int(os.Stdin.Fd()))
	if interactive {
		fmt.Fprintf(c.out, "Chatting with %s. /reset starts over, /exit quits, Ctrl-C stops a reply.\n", c.m.Path)
	}
	for {
		if interactive {
			fmt.Fprint(c.out, c.style("1", ">>> "))
		}
		var line string
		var ok bool
		select {
		case line, ok = <-lines:
		case <-sig:
			fmt.Fprintln(c.out)
			return nil
		}
		if !ok {
			if interactive {
				fmt.Fprintln(c.out)
			}
			return nil
		}
		switch strings.TrimSpace(line) {
		case "":
			continue
		case "/exit", "/quit", "/bye":
			return nil
		case "/reset", "/clear":
			c.reset()
			fmt.Fprintln(c.out, c.style("2", "(new conversation)"))
			continue
		case "/help", "/?":
			fmt.Fprintln(c.out, "/reset  start a new conversation\n/exit   quit (or Ctrl-D)\nCtrl-C  stop the reply being written")
			continue
		}
		if err := c.turn(line, sig); err != nil {
			return err
		}
	}
}

// turn sends one user message and streams the reply.
func (c *chatSession) turn(text string, sig <-chan os.Signal) error {
	c.msgs = append(c.msgs, chat.Message{Role: "user", Content: text})
	opts := chat.Options{AddGenerationPrompt: true}
	if c.noThink {
		// Qwen's templates skip the reasoning; gpt-oss always reasons,
		// as little as its template's lowest effort asks.
		opts.Kwargs = map[string]any{"enable_thinking": false, "reasoning_effort": "low"}
	}
	prompt, err := c.tmpl.Render(c.msgs, opts)
	if err != nil {
		c.msgs = c.msgs[:len(c.msgs)-1]
		return fmt.Errorf("chat template: %w", err)
	}
	ids := c.m.Tokenizer.Encode(prompt)
	if len(ids) >= c.r.MaxLen() {
		c.msgs = c.msgs[:len(c.msgs)-1]
		fmt.Fprintf(c.out, "%s\n", c.style("33", fmt.Sprintf("(the conversation would take %d tokens, the context holds %d: /reset to start a new one)", len(ids), c.r.MaxLen())))
		return nil
	}
	req := engine.Request{Prompt: ids, MaxTokens: c.max, Sampling: c.params, Stop: c.stops, EOG: c.m.EOG, IgnoreEOS: c.ignoreEOS, Cached: c.cached, Inexact: true}
	if c.cons != nil {
		if req.Constraint, err = c.cons.constraint(c.m, prompt, true); err != nil {
			c.msgs = c.msgs[:len(c.msgs)-1]
			return err
		}
	}
	seq, err := engine.NewSequence(c.r, c.m.Tokenizer, req)
	if err != nil {
		c.msgs = c.msgs[:len(c.msgs)-1]
		return err
	}
	defer seq.Release()
	var stopped atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sig:
			stopped.Store(true)
		case <-done:
		}
	}()
	p, err := parser.New(parser.Options{Format: c.format, Reasoning: c.reasoning,
		StartInReasoning: c.reasoning && c.format == parser.Qwen && structured.ThinkingAfter(prompt) == structured.InThinking})
	if err != nil {
		return err
	}
	var content, reasoning strings.Builder
	inReasoning := false
	show := func(d parser.Delta) {
		if d.Reasoning != "" {
			if !inReasoning {
				inReasoning = true
				if c.color {
					fmt.Fprint(c.out, "\x1b[2m")
				}
			}
			fmt.Fprint(c.out, d.Reasoning)
			reasoning.WriteString(d.Reasoning)
		}
		if d.Content != "" {
			if inReasoning {
				inReasoning = false
				if c.color {
					fmt.Fprint(c.out, "\x1b[0m")
				}
				fmt.Fprintln(c.out)
			}
			fmt.Fprint(c.out, d.Content)
			content.WriteString(d.Content)
		}
	}
	for !seq.Done() && !stopped.Load() {
		st, err := seq.Step()
		if err != nil {
			c.cached = nil
			return err
		}
		show(p.Add(st.Text))
	}
	show(p.Finish())
	if inReasoning && c.color {
		fmt.Fprint(c.out, "\x1b[0m")
	}
	fmt.Fprintln(c.out)
	c.cached = seq.Tokens()
	c.msgs = append(c.msgs, chat.Message{Role: "assistant", Content: content.String(), ReasoningContent: reasoning.String()})
	switch {
	case stopped.Load():
		fmt.Fprintln(c.out, c.style("2", "(stopped)"))
	case seq.Finish() == engine.FinishLength && seq.Len()+1 >= c.r.MaxLen():
		fmt.Fprintln(c.out, c.style("33", fmt.Sprintf("(the reply filled the context of %d tokens: /reset to start a new conversation)", c.r.MaxLen())))
	case seq.Finish() == engine.FinishLength:
		fmt.Fprintln(c.out, c.style("2", fmt.Sprintf("(the reply reached -n %d tokens)", c.max)))
	}
	return nil
}

// replyFormat returns the format of m's replies (its family's, package
// parser's names) and whether the model reasons between that format's
// tags, which its vocabulary then has.
func replyFormat(m *model.Model) (parser.Format, bool, error) {
	f, err := parser.ParseFormat(m.ReplyFormat())
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", m.Path, err)
	}
	open, close := f.ThinkTags()
	if open == "" {
		return f, false, nil
	}
	_, t1 := m.Tokenizer.TokenID(open)
	_, t2 := m.Tokenizer.TokenID(close)
	return f, t1 && t2, nil
}

// style wraps s in an ANSI style when the output is a terminal.
func (c *chatSession) style(code, s string) string {
	if !c.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}
