// Package fleet serves several models from one server, as ollama and
// llama-server's router do: a model loads on its first request, within
// budgets of host and GPU memory (and of loaded models), and unloads
// when it has been idle for its keep-alive or when another needs its
// room, the least recently used first. A Fleet is the server.Models the
// server asks for each request's model.
//
// A model's cost is what its Spec estimates before its first load (its
// file's size, and its KV pool's when known) and what its load measured
// since. A load that does not fit unloads idle models, least recently
// used first; a model that requests hold is never unloaded: the load
// waits for one to become idle, and fails with server.ErrNoRoom when the
// request's wait ends first.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"inferno/server"
)

// Spec is a model a Fleet serves.
type Spec struct {
	// Name is the model's name in requests; Aliases are further names.
	Name    string
	Aliases []string
	// Load loads the model; ctx ends when the Fleet closes.
	Load func(ctx context.Context) (*Loaded, error)
	// Cost is the memory the model is expected to take before its first
	// load (the file's size, its KV pool's when known); each load's
	// Loaded.Cost replaces it.
	Cost Cost
	// Info describes the model's file, read before its load (from the
	// file's header), for the lists of models that are not loaded:
	// server.ModelStatus.Info. Nil when unknown.
	Info *server.ModelInfo
}

// Cost is the memory a model takes.
type Cost struct {
	Host int64 // bytes of host memory
	GPU  int64 // bytes of GPU memory
}

func (c Cost) add(d Cost) Cost { return Cost{c.Host + d.Host, c.GPU + d.GPU} }
func (c Cost) sub(d Cost) Cost { return Cost{c.Host - d.Host, c.GPU - d.GPU} }

// Loaded is a loaded model.
type Loaded struct {
	Model *server.Model
	// Cost is the memory the model takes, measured.
	Cost Cost
	// Close unloads the model: its scheduler, runner and weights. No
	// request holds it then.
	Close func()
}

// Config configures a Fleet.
type Config struct {
	// Budget bounds the memory of the loaded models (0: no bound of
	// that kind).
	Budget Cost
	// MaxLoaded bounds the number of models loaded at once (0: no bound).
	MaxLoaded int
	// KeepAlive is how long a model stays loaded once its last request
	// is done: 0 unloads it at once, a negative duration never.
	KeepAlive time.Duration
	// LoadTimeout bounds how long a request waits for its model to load
	// (0: DefaultLoadTimeout); the load goes on beyond it.
	LoadTimeout time.Duration
	// Registerer, when set, receives the Fleet's metrics.
	Registerer prometheus.Registerer
	// Logger receives a line per load and unload; nil: slog.Default().
	Logger *slog.Logger
}

// DefaultLoadTimeout is how long a request waits for its model's load
// unless Config says otherwise.
const DefaultLoadTimeout = 5 * time.Minute

// Fleet is a set of models loaded on demand. Its methods may be called
// from any goroutine.
type Fleet struct {
	cfg     Config
	log     *slog.Logger
	models  []*entry
	byName  map[string]*entry
	ctx     context.Context // ends at Close: the loads' context
	cancel  context.CancelFunc
	metrics metrics

	mu      sync.Mutex
	used    Cost          // the loaded, loading and closing models' costs
	closing Cost          // the closing models' costs (in used)
	changed chan struct{} // closed and renewed when a model is given back or unloaded
	clock   int64         // orders uses, for least recently used
	closed  bool
	loads   sync.WaitGroup // loads and closes in flight
}

// entry is a model of a Fleet; its fields but spec are guarded by
// Fleet.mu.
type entry struct {
	spec    Spec
	state   server.ModelState
	loaded  *Loaded
	ready   chan struct{} // closed when the load in flight ends
	loadErr error         // the last load's error
	cost    Cost          // measured, or the estimate before the first load
	context int           // the model's context, once loaded
	refs    int           // requests holding the model
	waiters int           // requests waiting for its load
	used    int64         // Fleet.clock at the last use
	gen     int           // counts loads, so that a stale keep-alive timer does nothing
	timer   *time.Timer   // unloads the idle model after its keep-alive
	expires time.Time     // when timer fires
	keep    *time.Duration
}

// New returns a Fleet of the models specs describes, none loaded. Names
// and aliases must be distinct and not empty.
func New(cfg Config, specs []Spec) (*Fleet, error) {
	if cfg.LoadTimeout <= 0 {
		cfg.LoadTimeout = DefaultLoadTimeout
	}
	f := &Fleet{cfg: cfg, log: cfg.Logger, byName: map[string]*entry{}, changed: make(chan struct{})}
	if f.log == nil {
		f.log = slog.Default()
	}
	if len(specs) == 0 {
		return nil, errors.New("fleet: no models")
	}
	for _, sp := range specs {
		if sp.Load == nil {
			return nil, fmt.Errorf("fleet: the model %q has no loader", sp.Name)
		}
		e := &entry{spec: sp, state: server.StateUnloaded, cost: sp.Cost}
		for _, name := range append([]string{sp.Name}, sp.Aliases...) {
			if name == "" {
				return nil, errors.New("fleet: a model without a name")
			}
			if _, dup := f.byName[name]; dup {
				return nil, fmt.Errorf("fleet: two models are named %q (name them apart with NAME=MODEL)", name)
			}
			f.byName[name] = e
		}
		f.models = append(f.models, e)
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.metrics.init(f)
	if cfg.Registerer != nil {
		if err := f.metrics.register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("fleet: metrics: %w", err)
		}
	}
	return f, nil
}

// Acquire implements server.Models: it returns the model name names,
// loading it (and unloading others to make room) when it is not loaded,
// and the function that gives it back.
func (f *Fleet) Acquire(ctx context.Context, name string) (*server.Model, func(), error) {
	var e *entry
	switch {
	case name != "":
		e = f.byName[name]
		if e == nil {
			return nil, nil, fmt.Errorf("%w: %q", server.ErrUnknownModel, name)
		}
	case len(f.models) == 1:
		e = f.models[0]
	default:
		return nil, nil, server.ErrModelRequired
	}
	deadline := time.NewTimer(f.cfg.LoadTimeout)
	defer deadline.Stop()
	f.mu.Lock()
	for {
		if f.closed {
			f.mu.Unlock()
			return nil, nil, server.ErrShuttingDown
		}
		var wait chan struct{}
		switch e.state {
		case server.StateLoaded:
			e.refs++
			f.clock++
			e.used = f.clock
			f.stopTimer(e)
			m := e.loaded.Model
			f.mu.Unlock()
			var once sync.Once
			return m, func() { once.Do(func() { f.release(e) }) }, nil
		case server.StateLoading:
			wait = e.ready
		default:
			victims, ok := f.makeRoom(e)
			if !ok {
				// Wait for a model to be given back, then try again.
				wait = f.changed
				break
			}
			f.startLoad(e, victims)
			wait = e.ready
		}
		loading := e.state == server.StateLoading
		e.waiters++
		f.mu.Unlock()
		f.metrics.waiting.Inc()
		var err error
		select {
		case <-wait:
		case <-ctx.Done():
			err = ctx.Err()
		case <-deadline.C:
			err = fmt.Errorf("%w: %q, waited %v", server.ErrNoRoom, e.spec.Name, f.cfg.LoadTimeout)
			if loading {
				err = fmt.Errorf("%w: %q after %v", server.ErrLoadTimeout, e.spec.Name, f.cfg.LoadTimeout)
			}
		}
		f.metrics.waiting.Dec()
		f.mu.Lock()
		e.waiters--
		if err == nil && loading && e.state == server.StateUnloaded && e.loadErr != nil {
			err = e.loadErr
		}
		if err != nil {
			// The model may have loaded for nobody else.
			if e.state == server.StateLoaded && e.refs == 0 && e.waiters == 0 {
				f.idleNow(e)
			}
			f.mu.Unlock()
			return nil, nil, err
		}
	}
}

// makeRoom returns the idle models to unload, least recently used first,
// so that e fits beside the others; ok is false when it cannot fit
// without unloading a busy one. f.mu is held.
func (f *Fleet) makeRoom(e *entry) (victims []*entry, ok bool) {
	used, count := f.used.add(e.cost), f.loadedCount()+1
	if f.fits(used, count) {
		return nil, true
	}
	idle := f.idle(e)
	for _, v := range idle {
		victims = append(victims, v)
		used, count = used.sub(v.cost), count-1
		if f.fits(used, count) {
			return victims, true
		}
	}
	if count == 1 && used == e.cost {
		// Larger than the budget alone: it loads once it is alone (its
		// load may fail for want of memory, which says why).
		f.log.Warn("the model is larger than the memory budget", "model", e.spec.Name,
			"host_mib", mib(e.cost.Host), "gpu_mib", mib(e.cost.GPU))
		return victims, true
	}
	return nil, false
}

// idle returns the loaded models no request holds but e, least recently
// used first. f.mu is held.
func (f *Fleet) idle(e *entry) []*entry {
	var idle []*entry
	for _, v := range f.models {
		if v != e && v.state == server.StateLoaded && v.refs == 0 {
			idle = append(idle, v)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].used < idle[j].used })
	return idle
}

// fits reports whether used memory and count models are within the
// budgets.
func (f *Fleet) fits(used Cost, count int) bool {
	b := f.cfg.Budget
	return (b.Host <= 0 || used.Host <= b.Host) && (b.GPU <= 0 || used.GPU <= b.GPU) &&
		(f.cfg.MaxLoaded <= 0 || count <= f.cfg.MaxLoaded)
}

// loadedCount counts the models loaded and loading. f.mu is held.
func (f *Fleet) loadedCount() int {
	n := 0
	for _, v := range f.models {
		if v.state != server.StateUnloaded {
			n++
		}
	}
	return n
}

// startLoad unloads victims and then loads e, in the background. f.mu is
// held.
func (f *Fleet) startLoad(e *entry, victims []*entry) {
	for _, v := range victims {
		f.unload(v, "to make room for "+e.spec.Name)
	}
	e.state, e.ready, e.loadErr = server.StateLoading, make(chan struct{}), nil
	f.used = f.used.add(e.cost)
	reserved := e.cost
	f.loads.Add(1)
	go func() {
		defer f.loads.Done()
		start := time.Now()
		f.log.Info("loading model", "model", e.spec.Name)
		l, err := e.spec.Load(f.ctx)
		if err == nil && (l == nil || l.Model == nil) {
			err = errors.New("the loader returned no model")
		}
		if err == nil {
			l.Model.Init() // (a pass over the vocabulary: not under f.mu)
		}
		took := time.Since(start)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.used = f.used.sub(reserved)
		if err == nil && f.closed {
			err = server.ErrShuttingDown
			f.closeLoaded(e.spec.Name, l)
		}
		if err != nil {
			f.metrics.failures.Inc()
			f.log.Error("loading model failed", "model", e.spec.Name, "took", took.Round(time.Millisecond), "err", err)
			e.state, e.loadErr = server.StateUnloaded, fmt.Errorf("loading the model %q: %w", e.spec.Name, err)
			close(e.ready)
			f.broadcast()
			return
		}
		e.loaded, e.cost, e.context = l, l.Cost, l.Model.Context
		e.state = server.StateLoaded
		e.gen++
		f.used = f.used.add(e.cost)
		f.clock++
		e.used = f.clock
		f.metrics.loadSeconds.Observe(took.Seconds())
		f.log.Info("model ready", "model", e.spec.Name, "took", took.Round(time.Millisecond),
			"host_mib", mib(e.cost.Host), "gpu_mib", mib(e.cost.GPU))
		// The measured cost may pass the estimate: make room after the
		// fact (idle models only; those closing are on their way out).
		over := func() bool { return !f.fits(f.used.sub(f.closing), f.loadedCount()) }
		if over() {
			for _, v := range f.idle(e) {
				f.unload(v, "to make room for "+e.spec.Name)
				if !over() {
					break
				}
			}
			if over() {
				f.log.Warn("the loaded models pass the memory budget; the others are busy", "model", e.spec.Name,
					"host_mib", mib(f.used.Host), "gpu_mib", mib(f.used.GPU))
			}
		}
		close(e.ready)
		// When no request waits for it any more (their waits ended), it
		// is idle from now on.
		if e.refs == 0 && e.waiters == 0 {
			f.idleNow(e)
		}
	}()
}

// unload takes the idle model e out of service and closes it in the
// background; its memory counts until it is closed. f.mu is held.
func (f *Fleet) unload(e *entry, reason string) {
	f.stopTimer(e)
	l, cost := e.loaded, e.cost
	e.loaded, e.state = nil, server.StateUnloaded
	f.closing = f.closing.add(cost)
	f.metrics.unloads.WithLabelValues(reasonLabel(reason)).Inc()
	f.log.Info("unloading model", "model", e.spec.Name, "reason", reason)
	f.loads.Add(1)
	go func() {
		defer f.loads.Done()
		l.Close()
		f.mu.Lock()
		f.used, f.closing = f.used.sub(cost), f.closing.sub(cost)
		f.broadcast()
		f.mu.Unlock()
	}()
}

// closeLoaded closes a model loaded after Close. f.mu is held.
func (f *Fleet) closeLoaded(name string, l *Loaded) {
	f.loads.Add(1)
	go func() {
		defer f.loads.Done()
		l.Close()
	}()
}

func reasonLabel(reason string) string {
	switch reason {
	case "idle", "keep_alive":
		return "idle"
	case "shutting down":
		return "shutdown"
	}
	return "evicted"
}

// release gives back a request's hold on e.
func (f *Fleet) release(e *entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e.refs--
	f.clock++
	e.used = f.clock
	if e.refs == 0 {
		f.idleNow(e)
	}
	f.broadcast()
}

// idleNow starts e's keep-alive now that no request holds it. f.mu is
// held.
func (f *Fleet) idleNow(e *entry) {
	if f.closed || e.state != server.StateLoaded {
		return
	}
	d := f.cfg.KeepAlive
	reason := "idle"
	if e.keep != nil {
		d, reason, e.keep = *e.keep, "keep_alive", nil
	}
	f.stopTimer(e)
	switch {
	case d == 0:
		f.unload(e, reason)
	case d > 0:
		gen := e.gen
		e.expires = time.Now().Add(d)
		e.timer = time.AfterFunc(d, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if e.gen == gen && e.state == server.StateLoaded && e.refs == 0 && e.timer != nil && !f.closed {
				e.timer = nil
				f.unload(e, reason)
			}
		})
	}
}

// stopTimer cancels e's keep-alive. f.mu is held.
func (f *Fleet) stopTimer(e *entry) {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	e.expires = time.Time{}
}

// broadcast wakes the requests waiting for room. f.mu is held.
func (f *Fleet) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// KeepAlive implements server.KeepAliver: the model name stays loaded for
// d once the requests holding it now are done (0: it unloads then; a
// negative d: it stays), that once; later idle times are the Fleet's
// KeepAlive again. When no request holds the loaded model, its keep-alive
// starts over from now.
func (f *Fleet) KeepAlive(name string, d time.Duration) error {
	e := f.byName[name]
	if e == nil {
		return fmt.Errorf("%w: %q", server.ErrUnknownModel, name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.state == server.StateUnloaded {
		return nil
	}
	e.keep = &d
	if e.state == server.StateLoaded && e.refs == 0 {
		f.idleNow(e)
	}
	return nil
}

// List implements server.Models: every model, in the order of the specs.
func (f *Fleet) List() []server.ModelStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]server.ModelStatus, 0, len(f.models))
	for _, e := range f.models {
		st := server.ModelStatus{Name: e.spec.Name, Aliases: e.spec.Aliases, State: e.state, Context: e.context,
			Bytes: e.cost.Host + e.cost.GPU, Running: e.refs, ExpiresAt: e.expires, Info: e.spec.Info}
		if e.loaded != nil {
			st.Model = e.loaded.Model
		}
		out = append(out, st)
	}
	return out
}

// Load loads the model name now unless it is loaded, and waits for it as
// a request would; it stays loaded for the keep-alive.
func (f *Fleet) Load(ctx context.Context, name string) error {
	_, release, err := f.Acquire(ctx, name)
	if err != nil {
		return err
	}
	release()
	return nil
}

// Close unloads every model, cancels the loads in flight and waits for
// them. Requests that still hold a model must be over (the server shut
// down first).
func (f *Fleet) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	f.cancel()
	for _, e := range f.models {
		if e.state == server.StateLoaded {
			f.unload(e, "shutting down")
		}
	}
	f.broadcast()
	f.mu.Unlock()
	f.loads.Wait()
}

func mib(n int64) float64 { return float64(n*10/(1<<20)) / 10 }
