package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"inferno/server"
)

// fakes are models whose loads are counted, may be held back and may fail.
type fakes struct {
	mu     sync.Mutex
	loads  map[string]int
	closes map[string]int
	gate   map[string]chan struct{} // a load waits for its gate to close
	fail   map[string]error
}

func newFakes() *fakes {
	return &fakes{loads: map[string]int{}, closes: map[string]int{}, gate: map[string]chan struct{}{}, fail: map[string]error{}}
}

func (fk *fakes) spec(name string, host int64) Spec {
	return Spec{Name: name, Cost: Cost{Host: host}, Load: func(ctx context.Context) (*Loaded, error) {
		fk.mu.Lock()
		gate, err := fk.gate[name], fk.fail[name]
		fk.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if err != nil {
			return nil, err
		}
		fk.mu.Lock()
		fk.loads[name]++
		fk.mu.Unlock()
		return &Loaded{Model: &server.Model{Name: name, Context: 128}, Cost: Cost{Host: host}, Close: func() {
			fk.mu.Lock()
			fk.closes[name]++
			fk.mu.Unlock()
		}}, nil
	}}
}

func (fk *fakes) count(m map[string]int, name string) int {
	fk.mu.Lock()
	defer fk.mu.Unlock()
	return m[name]
}

func newFleet(t *testing.T, cfg Config, specs ...Spec) *Fleet {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	f, err := New(cfg, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// value reads a gauge's or a counter's value.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	if d.Gauge != nil {
		return d.Gauge.GetValue()
	}
	return d.Counter.GetValue()
}

// states returns the models' states as "a:loaded b:unloaded".
func states(f *Fleet) string {
	var parts []string
	for _, st := range f.List() {
		parts = append(parts, st.Name+":"+string(st.State))
	}
	return strings.Join(parts, " ")
}

// eventually waits up to 5 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func use(t *testing.T, f *Fleet, name string) {
	t.Helper()
	m, release, err := f.Acquire(context.Background(), name)
	if err != nil {
		t.Fatalf("acquire %q: %v", name, err)
	}
	if m.Name != name {
		t.Fatalf("acquire %q gave %q", name, m.Name)
	}
	release()
}

// TestLeastRecentlyUsed: a third model over the host budget unloads the
// least recently used of the two loaded, and only it.
func TestLeastRecentlyUsed(t *testing.T) {
	fk := newFakes()
	f := newFleet(t, Config{Budget: Cost{Host: 250}, KeepAlive: -1}, fk.spec("a", 100), fk.spec("b", 100), fk.spec("c", 100))
	if got := states(f); got != "a:unloaded b:unloaded c:unloaded" {
		t.Fatalf("at start: %s", got)
	}
	use(t, f, "a")
	use(t, f, "b")
	use(t, f, "a") // b is now the least recently used
	use(t, f, "c")
	eventually(t, "b's close", func() bool { return fk.count(fk.closes, "b") == 1 })
	if got := states(f); got != "a:loaded b:unloaded c:loaded" {
		t.Errorf("after c: %s", got)
	}
	if fk.count(fk.closes, "a") != 0 || fk.count(fk.loads, "a") != 1 {
		t.Errorf("a: %d loads, %d closes", fk.count(fk.loads, "a"), fk.count(fk.closes, "a"))
	}
	if v := value(t, f.metrics.unloads.WithLabelValues("evicted")); v != 1 {
		t.Errorf("evictions: %v", v)
	}
	if v := value(t, f.metrics.loaded); v != 2 {
		t.Errorf("loaded gauge: %v", v)
	}
}

// TestMaxLoaded: MaxLoaded bounds the models loaded as a budget does.
func TestMaxLoaded(t *testing.T) {
	fk := newFakes()
	f := newFleet(t, Config{MaxLoaded: 1, KeepAlive: -1}, fk.spec("a", 1), fk.spec("b", 1))
	use(t, f, "a")
	use(t, f, "b")
	eventually(t, "a's close", func() bool { return fk.count(fk.closes, "a") == 1 })
	if got := states(f); got != "a:unloaded b:loaded" {
		t.Errorf("%s", got)
	}
}

// TestBusyNotUnloaded: a model a request holds is not unloaded; the load
// that needs its room waits for it, and fails with ErrNoRoom when the
// wait ends first.
func TestBusyNotUnloaded(t *testing.T) {
	fk := newFakes()
	f := newFleet(t, Config{Budget: Cost{Host: 150}, KeepAlive: -1, LoadTimeout: 100 * time.Millisecond},
		fk.spec("a", 100), fk.spec("b", 100))
	_, release, err := f.Acquire(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Acquire(context.Background(), "b"); !errors.Is(err, server.ErrNoRoom) {
		t.Fatalf("b while a is busy: %v", err)
	}
	if got := states(f); got != "a:loaded b:unloaded" {
		t.Errorf("%s", got)
	}
	// A request for b waits until a is given back.
	got := make(chan error, 1)
	f.cfg.LoadTimeout = 5 * time.Second
	go func() {
		_, rel, err := f.Acquire(context.Background(), "b")
		if err == nil {
			rel()
		}
		got <- err
	}()
	eventually(t, "a waiting request", func() bool { return value(t, f.metrics.waiting) == 1 })
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's close", func() bool { return fk.count(fk.closes, "a") == 1 })
}

// TestKeepAlive: 0 unloads a model once its last request is done, a
// duration after that long idle, a negative one never; KeepAlive
// overrides it once.
func TestKeepAlive(t *testing.T) {
	fk := newFakes()
	f := newFleet(t, Config{KeepAlive: 0}, fk.spec("a", 1), fk.spec("b", 1))
	m, release, err := f.Acquire(context.Background(), "a")
	if err != nil || m.Name != "a" {
		t.Fatal(m, err)
	}
	time.Sleep(20 * time.Millisecond)
	if fk.count(fk.closes, "a") != 0 {
		t.Fatal("unloaded while held")
	}
	release()
	release() // twice: once only
	eventually(t, "a's unload", func() bool { return fk.count(fk.closes, "a") == 1 })

	f2 := newFleet(t, Config{KeepAlive: 50 * time.Millisecond}, fk.spec("c", 1))
	use(t, f2, "c")
	if st := f2.List()[0]; st.State != server.StateLoaded || st.ExpiresAt.IsZero() {
		t.Errorf("idle c: %+v", st)
	}
	eventually(t, "c's unload", func() bool { return fk.count(fk.closes, "c") == 1 })
	if v := value(t, f2.metrics.unloads.WithLabelValues("idle")); v != 1 {
		t.Errorf("idle unloads: %v", v)
	}

	f3 := newFleet(t, Config{KeepAlive: -1}, fk.spec("d", 1))
	_, release, err = f3.Acquire(context.Background(), "d")
	if err != nil {
		t.Fatal(err)
	}
	if err := f3.KeepAlive("d", 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if fk.count(fk.closes, "d") != 0 {
		t.Fatal("keep_alive 0 unloaded a model still held")
	}
	release()
	eventually(t, "d's unload after keep_alive 0", func() bool { return fk.count(fk.closes, "d") == 1 })
	use(t, f3, "d") // the override held once: d stays now
	time.Sleep(20 * time.Millisecond)
	if fk.count(fk.closes, "d") != 1 || f3.List()[0].State != server.StateLoaded {
		t.Errorf("d after a second use: %d closes, %s", fk.count(fk.closes, "d"), states(f3))
	}
	// On an idle model it applies at once.
	if err := f3.KeepAlive("d", 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "idle d's unload", func() bool { return fk.count(fk.closes, "d") == 2 })
	if err := f3.KeepAlive("nope", 0); !errors.Is(err, server.ErrUnknownModel) {
		t.Errorf("unknown model: %v", err)
	}
	// On an unloaded model (ollama's unload of a model not loaded) it
	// loads nothing, and is not kept for the next load.
	if err := f3.KeepAlive("d", 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if fk.count(fk.loads, "d") != 2 || f3.List()[0].State != server.StateUnloaded {
		t.Errorf("keep_alive 0 of an unloaded model: %d loads, %s", fk.count(fk.loads, "d"), states(f3))
	}
	use(t, f3, "d")
	time.Sleep(20 * time.Millisecond)
	if fk.count(fk.closes, "d") != 2 || f3.List()[0].State != server.StateLoaded {
		t.Errorf("d loaded after keep_alive 0 while unloaded: %d closes, %s", fk.count(fk.closes, "d"), states(f3))
	}
}

// TestInfo: List gives each model's Spec.Info, loaded or not.
func TestInfo(t *testing.T) {
	fk := newFakes()
	sp := fk.spec("a", 1)
	sp.Info = &server.ModelInfo{Size: 7, Digest: "ab"}
	f := newFleet(t, Config{KeepAlive: -1}, sp, fk.spec("b", 1))
	if l := f.List(); l[0].Info != sp.Info || l[1].Info != nil {
		t.Errorf("unloaded: %+v", l)
	}
	use(t, f, "a")
	if l := f.List(); l[0].Info != sp.Info || l[0].Model == nil {
		t.Errorf("loaded: %+v", l[0])
	}
}

// TestWaitForLoad: requests for a loading model wait for the one load,
// and one whose wait ends first gets ErrLoadTimeout; the load goes on.
func TestWaitForLoad(t *testing.T) {
	fk := newFakes()
	gate := make(chan struct{})
	fk.gate["a"] = gate
	f := newFleet(t, Config{KeepAlive: -1, LoadTimeout: 50 * time.Millisecond}, fk.spec("a", 1))
	if _, _, err := f.Acquire(context.Background(), "a"); !errors.Is(err, server.ErrLoadTimeout) {
		t.Fatalf("a load held back: %v", err)
	}
	if got := states(f); got != "a:loading" {
		t.Fatalf("%s", got)
	}
	f.cfg.LoadTimeout = 5 * time.Second
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, rel, err := f.Acquire(context.Background(), "a")
			if err == nil {
				rel()
			}
			errs <- err
		}()
	}
	eventually(t, "4 waiting requests", func() bool { return value(t, f.metrics.waiting) == 4 })
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := fk.count(fk.loads, "a"); n != 1 {
		t.Errorf("%d loads", n)
	}
	var d dto.Metric
	if err := f.metrics.loadSeconds.Write(&d); err != nil || d.Histogram.GetSampleCount() != 1 {
		t.Errorf("load histogram: %v, %v", d.Histogram, err)
	}
	// A cancelled wait returns the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fk.gate["b"] = make(chan struct{})
	f2 := newFleet(t, Config{KeepAlive: -1}, fk.spec("b", 1))
	if _, _, err := f2.Acquire(ctx, "b"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestKeepAliveZeroWaiters: with keep-alive 0, the requests that waited
// for a load get the model before it unloads.
func TestKeepAliveZeroWaiters(t *testing.T) {
	fk := newFakes()
	gate := make(chan struct{})
	fk.gate["a"] = gate
	f := newFleet(t, Config{KeepAlive: 0}, fk.spec("a", 1))
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, rel, err := f.Acquire(context.Background(), "a")
			if err == nil {
				rel()
			}
			errs <- err
		}()
	}
	eventually(t, "3 waiting requests", func() bool { return value(t, f.metrics.waiting) == 3 })
	close(gate)
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := fk.count(fk.loads, "a"); n > 3 {
		t.Errorf("%d loads for 3 requests", n)
	}
	eventually(t, "the unload", func() bool { return states(f) == "a:unloaded" })
}

// TestNames: an unknown name, no name with one model and with several,
// duplicate names, a failed load (retried by the next request).
func TestNames(t *testing.T) {
	fk := newFakes()
	f := newFleet(t, Config{KeepAlive: -1}, fk.spec("a", 1), fk.spec("b", 1))
	if _, _, err := f.Acquire(context.Background(), "zz"); !errors.Is(err, server.ErrUnknownModel) {
		t.Errorf("unknown: %v", err)
	}
	if _, _, err := f.Acquire(context.Background(), ""); !errors.Is(err, server.ErrModelRequired) {
		t.Errorf("no name: %v", err)
	}
	one := newFleet(t, Config{KeepAlive: -1}, fk.spec("c", 1))
	use(t, one, "c")
	if m, rel, err := one.Acquire(context.Background(), ""); err != nil || m.Name != "c" {
		t.Errorf("no name, one model: %v %v", m, err)
	} else {
		rel()
	}
	if _, err := New(Config{}, []Spec{fk.spec("a", 1), fk.spec("a", 1)}); err == nil {
		t.Error("duplicate names accepted")
	}
	if _, err := New(Config{}, nil); err == nil {
		t.Error("no models accepted")
	}
	fk.fail["a"] = fmt.Errorf("corrupt file")
	if _, _, err := f.Acquire(context.Background(), "a"); err == nil || !strings.Contains(err.Error(), "corrupt file") {
		t.Errorf("failed load: %v", err)
	}
	if got := states(f); got != "a:unloaded b:unloaded" {
		t.Errorf("after the failure: %s", got)
	}
	delete(fk.fail, "a")
	use(t, f, "a")
}

// TestClose: Close unloads every model and refuses later requests.
func TestClose(t *testing.T) {
	fk := newFakes()
	f, err := New(Config{KeepAlive: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, []Spec{fk.spec("a", 1), fk.spec("b", 1)})
	if err != nil {
		t.Fatal(err)
	}
	use(t, f, "a")
	use(t, f, "b")
	f.Close()
	if fk.count(fk.closes, "a") != 1 || fk.count(fk.closes, "b") != 1 {
		t.Errorf("closes: %v", fk.closes)
	}
	if _, _, err := f.Acquire(context.Background(), "a"); !errors.Is(err, server.ErrShuttingDown) {
		t.Errorf("acquired after Close: %v", err)
	}
	f.Close()
}

// TestConcurrent: many requests over three models in a budget of two,
// under the race detector: every request gets its model.
func TestConcurrent(t *testing.T) {
	fk := newFakes()
	f := newFleet(t, Config{Budget: Cost{Host: 2}, KeepAlive: time.Millisecond}, fk.spec("a", 1), fk.spec("b", 1), fk.spec("c", 1))
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := string(rune('a' + i%3))
			m, rel, err := f.Acquire(context.Background(), name)
			if err != nil {
				t.Error(err)
				return
			}
			if m.Name != name {
				t.Errorf("%s gave %s", name, m.Name)
			}
			time.Sleep(time.Millisecond)
			rel()
		}()
	}
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.loadedCount() > 2 {
		t.Errorf("%d loaded, budget 2", f.loadedCount())
	}
}
