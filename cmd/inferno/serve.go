package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"inferno/engine"
	"inferno/fleet"
	"inferno/model"
	"inferno/placement"
	"inferno/scheduler"
	"inferno/server"
)

func serveCmd() *cobra.Command {
	var (
		rf       runnerFlags
		lf       listenFlags
		parallel int
		queue    int
		pool     poolFlags
		apiKey   string
		aliases  []string
		maxBody  int64
		grace    time.Duration
		logLevel string
		ff       fleetFlags
	)
	cmd := &cobra.Command{
		Use:   "serve MODEL...",
		Short: "Serve models over an OpenAI-compatible HTTP API",
		Long: `Serve answers OpenAI's chat completions and completions API (streamed or
not), the model list, tokenization and Prometheus metrics; docs/SERVER.md
describes every endpoint. An embedding model (a file that states a pooling
type, such as Qwen3-Embedding's, or any model with --pooling last) answers
/v1/embeddings instead of chat and completions, its inputs batched with the
other requests; a reranker (rank pooling, such as a Qwen3-Reranker file from
llama.cpp's converter, or one converted as a language model with --pooling
rank) answers /v1/rerank alone. It listens at once on --addr (HTTPS with
--tls-cert and --tls-key): /health answers 503 while the model loads and
200 when it is ready.

Up to --parallel requests generate at once (default: 4 on the CPU; on the
GPU as many as the KV pool holds sequences of 2048 positions, at most
256). Every step is one forward pass over the next token of every running
request and chunks of at most --prefills new prompts (by default 8 on the
GPU, 2 on the CPU), --batch-tokens in all (by default 1024 on the GPU, its
most a pass, and 512 on the CPU).
With the paged KV cache (--kv paged, the default) a request whose prompt
starts as an earlier one did (a system prompt, the earlier turns of a
conversation) reuses those tokens' keys and values. The pool of KV blocks
takes --kv-mem bytes (default: room for every running request's full
context, on the GPU at most what is free); when it is full new requests
wait, and the newest running one may be paused and resumed later. With
--kv basic each running request holds one block as long as the context
(on the CPU; the GPU keeps its blocks) and nothing is kept for later
requests. Further requests wait in a queue of --queue, and beyond it get 503;
requests whose body is being read, rendered and tokenized count against
the queue too. A prompt longer than the context can hold gets 400 before
it is rendered.

With --api-key (or INFERNO_API_KEY) every API request needs the header
"Authorization: Bearer KEY". On a loopback address without a key, only
requests for localhost or a loopback address (or --allowed-hosts) are
answered, so that a web page cannot reach the server through DNS
rebinding. Browsers' requests from origins not listed in --cors-origin
get 403 whatever the address, but for the server's own: its chat page at
/ (--no-webui: none). A client has --read-timeout to send its
request; at most --max-conns connections are open at once.

Several models (serve a.gguf b.gguf, REPO:QUANT references, or a folder,
whose .gguf files are each a model) are served together: a model's name
is its file's name without .gguf, or NAME in a NAME=MODEL argument
(--alias names one model only), and each request's "model" picks one (a
request naming none gets 400, one naming another 404). A model loads on
its first request, which waits for it up to --load-timeout (then 503),
and unloads after --keep-alive without requests, or when a model to load
needs its memory, the least recently used first; a model that requests
are using stays. The loaded models share --host-memory (on the CPU: their
files and KV pools) and on the GPU --gpu-memory (their weights, KV pools
and scratch), where each one's KV pool takes by default an equal share
of --gpu-memory less its weights (--kv-mem sets it); --max-models bounds
their number. References are pulled at start. /v1/models lists every
model with its state; /health answers 200 at once.

SIGINT or SIGTERM stops accepting requests, lets running ones finish for
--grace, then cancels them and exits 0.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if parallel < 0 {
				return fmt.Errorf("--parallel %d: want at least 1 (or 0: the backend's default)", parallel)
			}
			if err := pool.check(); err != nil {
				return err
			}
			if queue < 0 {
				return fmt.Errorf("--queue %d: must not be negative", queue)
			}
			if maxBody < 1024 {
				return fmt.Errorf("--max-body %d: want at least 1024 bytes", maxBody)
			}
			if err := lf.check(); err != nil {
				return err
			}
			if err := ff.check(); err != nil {
				return err
			}
			margs, err := modelArgs(args)
			if err != nil {
				return err
			}
			if len(margs) > 1 {
				if len(aliases) > 0 {
					return errors.New("--alias names one model: name several with NAME=MODEL arguments")
				}
				if rf.trace {
					return errTraceModels
				}
			} else if margs[0].name != "" {
				aliases = append([]string{margs[0].name}, aliases...)
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
			}
			if apiKey == "" {
				apiKey = os.Getenv("INFERNO_API_KEY")
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			ln, err := lf.listen()
			if err != nil {
				return err
			}
			cfg := server.Config{APIKey: apiKey, MaxBodyBytes: maxBody, Queue: queue, Logger: log}
			lf.configure(&cfg, ln)
			srv := server.New(cfg)
			hs := srv.HTTPServer(ln.Addr().String())
			serveErr := make(chan error, 1)
			go func() { serveErr <- ln.serve(hs) }()
			log.Info("listening", "addr", ln.URL(), "auth", apiKey != "", "host_check", cfg.CheckHost)

			sig := make(chan os.Signal, 2)
			signal.Notify(sig, stopSignals...)
			defer signal.Stop(sig)

			type result struct {
				l   *served
				f   *fleet.Fleet
				err error
			}
			done := make(chan result, 1)
			loadCtx, cancelLoad := context.WithCancel(context.Background())
			defer cancelLoad()
			go func() {
				if len(margs) > 1 {
					f, err := newFleet(loadCtx, margs, &fleetSetup{rf: &rf, pf: &pool, ff: &ff, parallel: parallel, queue: queue, srv: srv, log: log})
					done <- result{f: f, err: err}
					return
				}
				l, err := loadServed(loadCtx, margs[0].ref, &rf, &pool, parallel, queue, aliases, srv, log)
				done <- result{l: l, err: err}
			}()
			var loaded *served
			select {
			case res := <-done:
				if res.err != nil {
					hs.Close()
					return res.err
				}
				if res.f != nil {
					defer res.f.Close()
					return serveFleet(srv, hs, res.f, sig, serveErr, grace, log)
				}
				loaded = res.l
			case s := <-sig:
				// A pull in progress stops (its partial file resumes next
				// time); a load from disk is abandoned with the process.
				log.Info("stopped while loading", "signal", s.String())
				cancelLoad()
				hs.Close()
				return nil
			}
			defer loaded.close()
			srv.SetModel(loaded.model)
			log.Info("ready", "model", loaded.model.Name, "backend", loaded.backend.Name(), "context", loaded.model.Context,
				"parallel", loaded.parallel, "kv", rf.kv)

			if err := awaitShutdown(srv, hs, sig, serveErr, grace, log); err != nil {
				return err
			}
			if rf.trace {
				loaded.sched.Close() // no step runs while the trace is read
				if err := reportBatchTrace(os.Stderr, loaded.backend, loaded.batched, 0); err != nil {
					log.Warn("trace", "err", err)
				}
			}
			log.Info("stopped")
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().IntVar(&parallel, "parallel", 0, "requests that generate at once (0: 4 on the CPU; on the GPU what the KV pool holds at 2048 positions each, at most 256)")
	cmd.Flags().IntVar(&queue, "queue", 64, "requests that may wait for a slot, those being tokenized included (not those still sending their body); more get 503")
	cmd.Flags().StringVar(&apiKey, "api-key", "", "require this bearer token on API requests (default: $INFERNO_API_KEY)")
	cmd.Flags().StringArrayVar(&aliases, "alias", nil, "the model's name in the API (default: the file's name without .gguf); repeat for more names; one model only (name several with NAME=MODEL)")
	cmd.Flags().Int64Var(&maxBody, "max-body", server.DefaultMaxBodyBytes, "largest request body, in bytes; larger ones get 413")
	cmd.Flags().DurationVar(&grace, "grace", 30*time.Second, "on SIGTERM or SIGINT, how long running requests may go on before they are cancelled")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug (adds a line per request), info, warn or error")
	cmd.Flags().StringVar(&pool.pooling, "pooling", "", poolingHelp)
	ff.register(cmd)
	rf.register(cmd)
	rf.prompts = true // --trace prints the GPU's passes other than decode steps at shutdown
	pool.register(cmd)
	rf.kv = "paged"
	cmd.Flags().Lookup("kv").DefValue = "paged"
	return cmd
}

// served is the model a server serves and what runs it.
type served struct {
	file     *model.Model
	backend  *placement.Backend
	batched  engine.BatchRunner
	sched    scheduler.Scheduler
	model    *server.Model
	parallel int
}

// Default --parallel per backend: the CPU gains little past a few
// sequences a step (its matrix products become compute-bound), the GPU
// keeps gaining to a hundred and more, so it admits as many sequences of
// gpuTypicalPositions as its KV pool holds, up to maxParallelGPU (the
// largest batch of its captured decode graphs; vLLM's default too).
const (
	defaultParallelCPU  = 4
	maxParallelGPU      = 256
	gpuTypicalPositions = 2048
)

// gpuParallel is the default --parallel of a GPU pool of positions.
func gpuParallel(positions, maxLen int) int {
	return max(1, min(maxParallelGPU, positions/min(maxLen, gpuTypicalPositions)))
}

// loadServed opens the model and its backend and starts the scheduler:
// continuous batching over one batched runner, its KV pool in the layout
// --kv names.
func loadServed(ctx context.Context, path string, rf *runnerFlags, pf *poolFlags, parallel, queue int, aliases []string, srv *server.Server, log *slog.Logger) (*served, error) {
	start := time.Now()
	path, err := modelPath(ctx, path)
	if err != nil {
		return nil, err
	}
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
	if err := setPooling(m, pf.pooling); err != nil {
		return nil, err
	}
	// A reranker's requests are embedding requests pooled by its head.
	var pool func([]float32) ([]float32, error)
	var rerank func(query, document, instruction string) ([]int32, error)
	if m.Rank() {
		head, err := m.RankHead()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		pool, rerank = head.Score, m.RerankTokens
	}
	tmpl, err := chatTemplate(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if l.backend, err = rf.open(m); err != nil {
		return nil, err
	}
	gpuAuto := parallel == 0 && l.backend.GPU()
	switch {
	case gpuAuto:
		parallel = maxParallelGPU // sizes the pool's request; the pool then sizes parallel
	case parallel == 0:
		parallel = defaultParallelCPU
	}
	basic := rf.kv == "basic"
	bc := placement.BatchConfig{BlockSize: pf.blockSize, Memory: pf.mem, Sequences: parallel, Contiguous: basic}
	if basic {
		bc.BlockSize = 0
	}
	if l.batched, err = l.backend.NewBatchRunner(bc); err != nil {
		return nil, err
	}
	if gpuAuto {
		parallel = gpuParallel(l.batched.Blocks()*l.batched.BlockSize(), l.backend.MaxLen())
	}
	l.parallel = parallel
	// The GPU's passes grow cheaper per token up to its most, so by
	// default they take it and the prompts of up to 8 requests; the CPU's
	// cost what their tokens cost (the notebook in git show
	// 2497e83:docs/PERF.md, "The server (calls b3 and b4)").
	batchTokens, prefills := pf.batchTokens, pf.prefills
	mb, gpuPass := l.batched.(interface{ MaxBatch() int })
	if batchTokens == 0 {
		batchTokens = 512
		if gpuPass {
			batchTokens = mb.MaxBatch()
		}
	}
	if prefills == 0 {
		prefills = 2
		if gpuPass {
			prefills = 8
		}
	}
	if gpuPass && max(batchTokens, parallel) > mb.MaxBatch() {
		return nil, fmt.Errorf("--batch-tokens %d (at least --parallel): the %s backend runs at most %d tokens a pass", batchTokens, l.backend.Name(), mb.MaxBatch())
	}
	prefix := !pf.noPrefix && !basic
	l.sched, err = scheduler.NewBatcher(l.batched, scheduler.Config{
		Parallel: parallel, BatchTokens: max(batchTokens, parallel), Prefills: prefills, Queue: queue,
		PrefixCache: prefix, Tokenizer: m.Tokenizer, OnStep: srv.ObserveStep, Pool: pool,
	})
	if err != nil {
		return nil, err
	}
	var poolMiB float64
	if ps, ok := l.batched.(engine.PoolSizer); ok {
		pool, _ := ps.PoolBytes()
		poolMiB = math.Round(float64(pool)/(1<<20)*10) / 10
	}
	log.Info("KV cache", "layout", rf.kv, "blocks", l.batched.Blocks(), "block_size", l.batched.BlockSize(),
		"positions", l.batched.Blocks()*l.batched.BlockSize(), "pool_mib", poolMiB, "prefix_cache", prefix, "parallel", parallel,
		"batch_tokens", max(batchTokens, parallel), "prefills", prefills)
	name := strings.TrimSuffix(filepath.Base(path), ".gguf")
	var more []string
	if len(aliases) > 0 {
		name, more = aliases[0], aliases[1:]
	}
	format, reasoning, err := replyFormat(m)
	if err != nil {
		return nil, err
	}
	l.model = &server.Model{
		Name: name, Aliases: more, Tokenizer: m.Tokenizer, Template: tmpl, EOG: m.EOG,
		Format: format, Reasoning: reasoning, Context: l.backend.MaxLen(), Vocab: m.Arch.Hyper().Vocab,
		Scheduler: l.sched, Created: time.Now(),
		Embedding: m.Embedding(), EmbedDim: m.Arch.Hyper().Hidden, EmbedTokens: m.EmbedTokens, Rerank: rerank,
		JSONWhitespace: jsonWhitespace(pf.jsonWS),
	}
	if l.model.Info, err = modelInfo(m, l.backend.Name(), l.batched); err != nil {
		return nil, err
	}
	log.Info("model loaded", "file", path, "backend", l.backend.Name(), "threads", l.backend.Threads(), "took", time.Since(start).Round(time.Millisecond))
	ok = true
	return l, nil
}

func (l *served) close() {
	if l.sched != nil {
		l.sched.Close()
	}
	if l.batched != nil {
		l.batched.Close()
	}
	if l.backend != nil {
		l.backend.Close()
	}
	l.file.Close()
}

// poolFlags size the paged KV cache and the batches of the server, and
// shape what it generates (--json-whitespace).
type poolFlags struct {
	mem         int64
	memText     string
	blockSize   int
	batchTokens int
	prefills    int
	noPrefix    bool
	pooling     string // --pooling: the model's pooling (setPooling)
	jsonWS      int    // --json-whitespace
}

func (f *poolFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.memText, "kv-mem", "", "memory of the paged KV cache's pool, e.g. 2GiB or 512MiB (default: every running request's full context; on the GPU at most what is free)")
	cmd.Flags().IntVar(&f.blockSize, "kv-block", 0, "positions per block of the paged KV cache (default: 16 on a GPU, 128 on the CPU)")
	cmd.Flags().IntVar(&f.batchTokens, "batch-tokens", 0, "most tokens one forward pass runs: every running request's next token, then chunks of new prompts (default: the GPU's most a pass, 1024; 512 on the CPU)")
	cmd.Flags().IntVar(&f.prefills, "prefills", 0, "most new prompts whose chunks join one forward pass (default: 8 on the GPU, 2 on the CPU)")
	cmd.Flags().BoolVar(&f.noPrefix, "no-prefix-cache", false, "do not keep finished requests' KV blocks for later requests that start alike")
	cmd.Flags().IntVar(&f.jsonWS, "json-whitespace", 1, "whitespace structured output allows between JSON tokens: 0 none, 1 a space or a newline, N a newline and up to N-1 spaces and tabs of indentation")
}

// check validates the flags and parses --kv-mem.
func (f *poolFlags) check() error {
	if f.blockSize < 0 || f.blockSize > 1024 {
		return fmt.Errorf("--kv-block %d: want 1 to 1024 (0: the default)", f.blockSize)
	}
	if f.batchTokens < 0 {
		return fmt.Errorf("--batch-tokens %d: want at least 1 (0: the default)", f.batchTokens)
	}
	if f.jsonWS < 0 || f.jsonWS > 64 {
		return fmt.Errorf("--json-whitespace %d: want 0 to 64", f.jsonWS)
	}
	if f.prefills < 0 {
		return fmt.Errorf("--prefills %d: want at least 1 (0: the default)", f.prefills)
	}
	if f.memText == "" {
		return nil
	}
	n, err := parseBytes(f.memText)
	if err != nil {
		return fmt.Errorf("--kv-mem: %w", err)
	}
	f.mem = n
	return nil
}

// parseBytes parses a size such as 512MiB, 2GiB, 1.5G or 1000000 (bytes).
// K, M, G and T count powers of 1024, as KiB, MiB, GiB and TiB do.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range []struct {
		suf  string
		mult float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suf)) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suf)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || v*mult > 1<<62 {
		return 0, fmt.Errorf("%q is not a size (want, for example, 512MiB or 2GiB)", s)
	}
	return int64(v * mult), nil
}

// jsonWhitespace is server.Model.JSONWhitespace for --json-whitespace n:
// none is negative there, 0 the default.
func jsonWhitespace(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
