package main

// Several models in one server (serve a.gguf b.gguf, serve DIR): the
// arguments' names, the memory budgets and each model's loader for
// package fleet.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"inferno/engine"
	"inferno/fleet"
	"inferno/placement"
	"inferno/server"
)

// modelArg is a model serve's arguments name: NAME=MODEL, MODEL (a file
// or a hub reference) or one .gguf file of a folder.
type modelArg struct {
	name string // "" for the file's name without .gguf
	ref  string
}

// modelArgs expands serve's arguments into models: NAME=MODEL names the
// model (when the whole argument is no file), a folder stands for every
// .gguf file in it but vision projectors (mmproj*).
func modelArgs(args []string) ([]modelArg, error) {
	var out []modelArg
	for _, a := range args {
		name, ref := "", a
		if n, r, ok := strings.Cut(a, "="); ok && !strings.ContainsAny(n, `/\`) {
			if _, err := os.Stat(a); err != nil {
				name, ref = n, r
				if name == "" || ref == "" {
					return nil, fmt.Errorf("%q: want NAME=MODEL, both not empty", a)
				}
			}
		}
		st, err := os.Stat(ref)
		if err != nil || !st.IsDir() {
			out = append(out, modelArg{name: name, ref: ref})
			continue
		}
		if name != "" {
			return nil, fmt.Errorf("%q: a folder's models take their files' names; name a file instead", a)
		}
		files, err := ggufFiles(ref)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			out = append(out, modelArg{ref: f})
		}
	}
	return out, nil
}

// ggufFiles lists the models of folder dir, sorted.
func ggufFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(strings.ToLower(n), ".gguf") || strings.HasPrefix(strings.ToLower(n), "mmproj") {
			continue
		}
		files = append(files, filepath.Join(dir, n))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .gguf file in the folder", dir)
	}
	sort.Strings(files)
	return files, nil
}

// modelName is the name of the model in file path: its base name without
// .gguf.
func modelName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".gguf")
}

// fleetFlags are serve's flags for several models.
type fleetFlags struct {
	keepAlive   time.Duration
	loadTimeout time.Duration
	hostMem     string
	maxModels   int
}

func (f *fleetFlags) register(cmd *cobra.Command) {
	f.keepAlive = 5 * time.Minute
	cmd.Flags().Var((*keepAliveValue)(&f.keepAlive), "keep-alive", "with several models: how long a model stays loaded after its last request, a duration (10m) or seconds (600) as ollama's (0: unload at once; negative, -1: never)")
	cmd.Flags().DurationVar(&f.loadTimeout, "load-timeout", fleet.DefaultLoadTimeout, "with several models: how long a request waits for its model to load before it gets 503 (the load goes on)")
	cmd.Flags().StringVar(&f.hostMem, "host-memory", "0.75", "with several models: the host memory the models loaded on the CPU may take, weights and KV pools: a share of the machine's (0.75) or a size (32GiB)")
	cmd.Flags().IntVar(&f.maxModels, "max-models", 0, "with several models: the most loaded at once (0: as many as the memory budgets hold)")
}

// keepAliveValue is --keep-alive: a duration, or a number of seconds as
// ollama's OLLAMA_KEEP_ALIVE takes (-1: never).
type keepAliveValue time.Duration

func (v *keepAliveValue) String() string { return time.Duration(*v).String() }
func (v *keepAliveValue) Type() string   { return "duration" }

func (v *keepAliveValue) Set(s string) error {
	if n, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && n > -1e9 && n < 1e9 {
		*v = keepAliveValue(time.Duration(n * float64(time.Second)))
		return nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q: want a duration (5m, 1h, 0) or seconds (300; -1: never)", s)
	}
	*v = keepAliveValue(d)
	return nil
}

// check validates the flags.
func (f *fleetFlags) check() error {
	if f.loadTimeout <= 0 {
		return fmt.Errorf("--load-timeout %v: must be positive", f.loadTimeout)
	}
	if f.maxModels < 0 {
		return fmt.Errorf("--max-models %d: must not be negative", f.maxModels)
	}
	_, err := f.hostBudget()
	return err
}

// hostBudget parses --host-memory into bytes.
func (f *fleetFlags) hostBudget() (int64, error) {
	if v, err := strconv.ParseFloat(strings.TrimSpace(f.hostMem), 64); err == nil {
		if !(v > 0 && v <= 1) {
			return 0, fmt.Errorf("--host-memory %s: a share of the machine's memory must be in (0, 1] (or give a size, such as 32GiB)", f.hostMem)
		}
		return int64(v * float64(placement.HostMemory())), nil
	}
	n, err := parseBytes(f.hostMem)
	if err != nil {
		return 0, fmt.Errorf("--host-memory: %w, or a share such as 0.75", err)
	}
	return n, nil
}

// gpuReserve is what a model on the GPU takes beside its weights and KV
// pool: its runner's graphs and scratch (the cuda backend keeps as much
// from a pool it sizes).
const gpuReserve = 3 << 29 // 1.5 GiB

// fleetSetup is what serve needs to build the models' loaders.
type fleetSetup struct {
	rf       *runnerFlags
	pf       *poolFlags
	ff       *fleetFlags
	parallel int
	queue    int
	srv      *server.Server
	log      *slog.Logger
}

// newFleet resolves the models (pulling references not in the cache),
// and returns the Fleet that loads them on demand within the budgets:
// the host's (--host-memory) and, when the models run on the GPU, the
// GPU's (--gpu-memory), where each model's KV pool is by default its
// equal share of the budget less its weights.
func newFleet(ctx context.Context, margs []modelArg, s *fleetSetup) (*fleet.Fleet, error) {
	host, err := s.ff.hostBudget()
	if err != nil {
		return nil, err
	}
	var gpu int64
	onGPU := s.rf.backend == "cuda" || s.rf.backend == "vulkan" || s.rf.backend == "auto" || s.rf.backend == ""
	if onGPU {
		if total, err := placement.GPUMemory(); err == nil {
			share, size, err := gpuMemory(s.rf.gpuMem)
			if err != nil {
				return nil, err
			}
			gpu = size
			if size == 0 {
				gpu = int64(share * float64(total))
			}
		} else {
			onGPU = false
		}
	}
	specs := make([]fleet.Spec, 0, len(margs))
	for _, a := range margs {
		path, err := modelPath(ctx, a.ref)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s: a folder inside the folder of models", path)
		}
		name := a.name
		if name == "" {
			name = modelName(path)
		}
		size := st.Size()
		info, err := headerInfo(path)
		if err != nil {
			return nil, fmt.Errorf("the model %q: %w", name, err)
		}
		pf := *s.pf
		cost := fleet.Cost{Host: size + pf.mem}
		if onGPU {
			if pf.mem == 0 {
				// An equal share of the budget, less a 64th of it: a
				// pool rounds to whole blocks, and shares that add up
				// to the budget exactly would not fit beside each other.
				share := gpu / int64(len(margs))
				pf.mem = max(share-share/64-size-gpuReserve, 64<<20)
			}
			cost = fleet.Cost{GPU: size + pf.mem + gpuReserve}
		}
		specs = append(specs, fleet.Spec{Name: name, Cost: cost, Info: info, Load: func(ctx context.Context) (*fleet.Loaded, error) {
			l, err := loadServed(ctx, path, s.rf, &pf, s.parallel, s.queue, []string{name}, s.srv, s.log.With("model", name))
			if err != nil {
				return nil, err
			}
			var pool int64
			if ps, ok := l.batched.(engine.PoolSizer); ok {
				pool, _ = ps.PoolBytes()
			}
			c := fleet.Cost{Host: size + pool}
			if l.backend.GPU() {
				c = fleet.Cost{GPU: size + pool + gpuReserve}
			}
			return &fleet.Loaded{Model: l.model, Cost: c, Close: l.close}, nil
		}})
	}
	budget := fleet.Cost{Host: host}
	if onGPU {
		budget.GPU = gpu
	}
	return fleet.New(fleet.Config{
		Budget: budget, MaxLoaded: s.ff.maxModels, KeepAlive: s.ff.keepAlive, LoadTimeout: s.ff.loadTimeout,
		Registerer: s.srv.Registry(), Logger: s.log,
	}, specs)
}

// serveFleet serves the models of f until a signal or the listener's
// end, then shuts down (awaitShutdown). The caller closes f.
func serveFleet(srv *server.Server, hs *http.Server, f *fleet.Fleet, sig chan os.Signal, serveErr chan error, grace time.Duration, log *slog.Logger) error {
	srv.SetModels(f)
	var names []string
	for _, st := range f.List() {
		names = append(names, st.Name)
	}
	log.Info("ready", "models", strings.Join(names, ","), "loaded", "on demand")
	if err := awaitShutdown(srv, hs, sig, serveErr, grace, log); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// awaitShutdown waits for a signal or the listener's end, then shuts the
// server down: running requests have grace, and a second signal cancels
// them at once.
func awaitShutdown(srv *server.Server, hs *http.Server, sig chan os.Signal, serveErr chan error, grace time.Duration, log *slog.Logger) error {
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
		srv.Cancel()
		hs.Close()
	}()
	if err := srv.Shutdown(hs, grace); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return nil
}

// errTraceModels refuses --trace with several models.
var errTraceModels = errors.New("--trace reports on one model: serve one")
