package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"inferno/engine"
	"inferno/model"
	"inferno/runner"
	"inferno/scheduler"
	"inferno/server"
)

func serveCmd() *cobra.Command {
	var (
		rf       runnerFlags
		addr     string
		parallel int
		queue    int
		apiKey   string
		aliases  []string
		maxBody  int64
		grace    time.Duration
		logLevel string
	)
	cmd := &cobra.Command{
		Use:   "serve MODEL.gguf",
		Short: "Serve the model over an OpenAI-compatible HTTP API",
		Long: `Serve answers OpenAI's chat completions and completions API (streamed or
not), the model list, tokenization and Prometheus metrics; docs/SERVER.md
describes every endpoint. It listens at once: /health answers 503 while
the model loads and 200 when it is ready.

Up to --parallel requests generate at once, taking turns step by step;
further requests wait in a queue of --queue, and beyond it get 503. With
--api-key (or INFERNO_API_KEY) every API request needs the header
"Authorization: Bearer KEY". SIGINT or SIGTERM stops accepting requests,
lets running ones finish for --grace, then cancels them and exits 0.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if parallel < 1 {
				return fmt.Errorf("--parallel %d: want at least 1", parallel)
			}
			if queue < 0 {
				return fmt.Errorf("--queue %d: must not be negative", queue)
			}
			if maxBody < 1024 {
				return fmt.Errorf("--max-body %d: want at least 1024 bytes", maxBody)
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
			}
			if apiKey == "" {
				apiKey = os.Getenv("INFERNO_API_KEY")
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			srv := server.New(server.Config{APIKey: apiKey, MaxBodyBytes: maxBody, Logger: log})
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			hs := srv.HTTPServer(addr)
			serveErr := make(chan error, 1)
			go func() { serveErr <- hs.Serve(ln) }()
			log.Info("listening", "addr", "http://"+ln.Addr().String(), "auth", apiKey != "")

			sig := make(chan os.Signal, 2)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sig)

			type result struct {
				l   *served
				err error
			}
			done := make(chan result, 1)
			go func() {
				l, err := loadServed(args[0], &rf, parallel, queue, aliases, log)
				done <- result{l, err}
			}()
			var loaded *served
			select {
			case res := <-done:
				if res.err != nil {
					hs.Close()
					return res.err
				}
				loaded = res.l
			case s := <-sig:
				// The process ends with the load half done; nothing to save.
				log.Info("stopped while loading", "signal", s.String())
				hs.Close()
				return nil
			}
			defer loaded.close()
			srv.SetModel(loaded.model)
			log.Info("ready", "model", loaded.model.Name, "backend", loaded.backend.Name(), "context", loaded.model.Context, "parallel", parallel)

			select {
			case err := <-serveErr:
				if !errors.Is(err, http.ErrServerClosed) {
					return err
				}
				return nil
			case s := <-sig:
				log.Info("shutting down", "signal", s.String(), "grace", grace)
			}
			go func() {
				<-sig // a second signal: stop waiting
				log.Warn("second signal: cancelling running requests")
				loaded.sched.Close()
				hs.Close()
			}()
			if err := server.Shutdown(hs, loaded.sched, grace); err != nil {
				log.Warn("shutdown", "err", err)
			}
			log.Info("stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; 0.0.0.0:8080 for every interface)")
	cmd.Flags().IntVar(&parallel, "parallel", 4, "requests that generate at once")
	cmd.Flags().IntVar(&queue, "queue", 64, "requests that may wait for a slot; more get 503")
	cmd.Flags().StringVar(&apiKey, "api-key", "", "require this bearer token on API requests (default $INFERNO_API_KEY)")
	cmd.Flags().StringArrayVar(&aliases, "alias", nil, "the model's name in the API (default: the file's name without .gguf); repeat for more names")
	cmd.Flags().Int64Var(&maxBody, "max-body", server.DefaultMaxBodyBytes, "largest request body in bytes (larger: 413)")
	cmd.Flags().DurationVar(&grace, "grace", 30*time.Second, "on SIGTERM or SIGINT, how long running requests may finish")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug (a line per request), info, warn, error")
	rf.register(cmd)
	return cmd
}

// served is the model a server serves and what runs it.
type served struct {
	file    *model.Model
	backend *runner.Backend
	runners []engine.Runner
	sched   scheduler.Scheduler
	model   *server.Model
}

// loadServed opens the model and its backend, one runner per slot, and
// the scheduler over them.
func loadServed(path string, rf *runnerFlags, parallel, queue int, aliases []string, log *slog.Logger) (*served, error) {
	start := time.Now()
	m, err := model.Open(path)
	if err != nil {
		return nil, err
	}
	l := &served{file: m}
	ok := false
	defer func() {
		if !ok {
			l.close()
		}
	}()
	tmpl, err := chatTemplate(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if l.backend, err = rf.open(m); err != nil {
		return nil, err
	}
	if max := l.backend.MaxSequences(); max > 0 && parallel > max {
		return nil, fmt.Errorf("--parallel %d: the %s backend runs at most %d sequences", parallel, l.backend.Name(), max)
	}
	for range parallel {
		r, err := l.backend.NewRunner()
		if err != nil {
			return nil, err
		}
		l.runners = append(l.runners, r)
	}
	l.sched = scheduler.NewSlots(l.runners, m.Tokenizer, queue)
	name := strings.TrimSuffix(filepath.Base(path), ".gguf")
	var more []string
	if len(aliases) > 0 {
		name, more = aliases[0], aliases[1:]
	}
	_, think := m.Tokenizer.TokenID("<think>")
	_, endThink := m.Tokenizer.TokenID("</think>")
	l.model = &server.Model{
		Name: name, Aliases: more, Tokenizer: m.Tokenizer, Template: tmpl, EOG: m.EOG,
		Reasoning: think && endThink, Context: l.backend.MaxLen(), Vocab: m.Qwen3.Config.Vocab,
		Scheduler: l.sched, Created: time.Now(),
	}
	log.Info("model loaded", "file", path, "backend", l.backend.Name(), "threads", l.backend.Threads(), "took", time.Since(start).Round(time.Millisecond))
	ok = true
	return l, nil
}

func (l *served) close() {
	if l.sched != nil {
		l.sched.Close()
	}
	for _, r := range l.runners {
		r.Close()
	}
	if l.backend != nil {
		l.backend.Close()
	}
	l.file.Close()
}
