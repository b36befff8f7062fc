package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Models is a set of models served together, loaded on demand (package
// fleet implements it): each request's "model" field picks one. The
// server calls Acquire once per request that needs a model and calls the
// release function it returns when the handler returns (a stream
// included).
type Models interface {
	// Acquire returns the model name names ("" names the one model when
	// there is only one), loading it first when it is not loaded, and a
	// function to call once the request is done with it. It fails with
	// an error wrapping ErrUnknownModel, ErrModelRequired,
	// ErrLoadTimeout, ErrNoRoom or ErrShuttingDown, with ctx's error, or
	// with the load's error.
	Acquire(ctx context.Context, name string) (m *Model, release func(), err error)
	// List returns every model with its state, in a fixed order.
	List() []ModelStatus
}

// KeepAliver is a Models whose models' idle time before they are
// unloaded can be set per request (ollama's keep_alive): see
// Server.KeepAlive.
type KeepAliver interface {
	KeepAlive(name string, d time.Duration) error
}

// ModelState is where a model of a Models stands.
type ModelState string

// The states of a model.
const (
	StateUnloaded ModelState = "unloaded"
	StateLoading  ModelState = "loading"
	StateLoaded   ModelState = "loaded"
)

// ModelStatus describes a model of a Models.
type ModelStatus struct {
	// Name is the model's name in requests; Aliases are further names.
	Name    string
	Aliases []string
	State   ModelState
	// Model is the model while it is loaded, else nil.
	Model *Model
	// Context is the most positions a sequence may hold, 0 until the
	// model was loaded once.
	Context int
	// Bytes is the memory the model takes when loaded (its weights and
	// KV pool; before its first load an estimate).
	Bytes int64
	// Running is the requests holding the model.
	Running int
	// ExpiresAt is when the idle loaded model will be unloaded; zero
	// while requests hold it, when it is not loaded or when it stays.
	ExpiresAt time.Time
	// Info describes the model's file as read before its load (ollama's
	// /api/tags lists models not loaded); nil when unknown. The loaded
	// Model's Info supersedes it.
	Info *ModelInfo
}

// Errors a Models' Acquire wraps.
var (
	// ErrUnknownModel: no model has the name asked for (404).
	ErrUnknownModel = errors.New("no such model")
	// ErrModelRequired: the request named no model and several are
	// served (400).
	ErrModelRequired = errors.New("the request names no model and several are served")
	// ErrLoadTimeout: the model did not load within the time a request
	// may wait for it (503).
	ErrLoadTimeout = errors.New("the model did not load in time")
	// ErrNoRoom: the model does not fit in the memory left, and the
	// models that hold the rest are busy (503).
	ErrNoRoom = errors.New("not enough memory to load the model")
	// ErrShuttingDown: the server is stopping and loads no model (503).
	ErrShuttingDown = errors.New("the server is shutting down")
)

// SetModels makes the server answer with the models of ms, each request
// naming one; a server has either one model (SetModel) or a Models.
func (s *Server) SetModels(ms Models) {
	s.fleet.Store(&ms)
}

// Init computes what the server derives from the model (the longest
// token's bytes, which bound a prompt's tokens by its length). SetModel
// calls it; a Models calls it on each model it loads, before Acquire
// returns the model.
func (m *Model) Init() {
	m.maxTokenBytes = longestToken(m)
}

// ModelList returns every model the server serves with its state: the
// one model of SetModel (loaded), or those of SetModels; nil before
// either.
func (s *Server) ModelList() []ModelStatus {
	if ms := s.fleet.Load(); ms != nil {
		return (*ms).List()
	}
	if m := s.model.Load(); m != nil {
		return []ModelStatus{{Name: m.Name, Aliases: m.Aliases, State: StateLoaded, Model: m, Context: m.Context,
			Running: m.Scheduler.Stats().Running}}
	}
	return nil
}

// KeepAlive sets how long the model name stays loaded once the requests
// now holding it are done (ollama's keep_alive), for that idle time only:
// 0 unloads it as soon as they are done, a negative d keeps it loaded.
// The model must be served; with one model (SetModel), which is never
// unloaded, it does nothing.
func (s *Server) KeepAlive(name string, d time.Duration) error {
	ms := s.fleet.Load()
	if ms == nil {
		return nil
	}
	if k, ok := (*ms).(KeepAliver); ok {
		return k.KeepAlive(name, d)
	}
	return nil
}

// ready reports whether the server can take requests.
func (s *Server) ready() bool {
	return s.fleet.Load() != nil || s.model.Load() != nil
}

// loadedModels calls f on each model loaded now.
func (s *Server) loadedModels(f func(m *Model)) {
	if ms := s.fleet.Load(); ms != nil {
		for _, st := range (*ms).List() {
			if st.Model != nil {
				f(st.Model)
			}
		}
		return
	}
	if m := s.model.Load(); m != nil {
		f(m)
	}
}

// modelFor returns the model a request's body names if it is loaded now
// (the one model of SetModel, if any); nil when it is not.
func (s *Server) modelFor(body []byte) *Model {
	if s.fleet.Load() != nil {
		name := peekModel(body)
		m := s.loadedModel(name)
		if base, ok := strings.CutSuffix(name, ":latest"); ok && m == nil {
			m = s.loadedModel(base) // ollama's default tag (ollamaResolve)
		}
		return m
	}
	return s.model.Load()
}

// loadedModel returns the model of SetModels named name ("": the only
// one) if it is loaded now, else nil.
func (s *Server) loadedModel(name string) *Model {
	ms := s.fleet.Load()
	if ms == nil {
		return nil
	}
	list := (*ms).List()
	for _, st := range list {
		if st.Model != nil && (st.Name == name || slices.Contains(st.Aliases, name) || name == "" && len(list) == 1) {
			return st.Model
		}
	}
	return nil
}

// acquire returns the model r's body names and the function that gives
// it back, or the error to answer with.
func (s *Server) acquire(r *http.Request) (*Model, func(), *apiError) {
	if s.fleet.Load() == nil {
		return s.acquireNamed(r, "")
	}
	var v struct {
		Model json.RawMessage `json:"model"`
	}
	if e := decodeBody(r, &v); e != nil {
		return nil, nil, e
	}
	name, e := modelName(v.Model)
	if e != nil {
		return nil, nil, e
	}
	return s.acquireNamed(r, name)
}

// acquireNamed returns the model name names ("": the only one) for
// request r, loading it when it is not loaded, and the function that
// gives it back, or the error to answer with. With one model (SetModel)
// it returns that model whatever name says: the handler checks the name.
func (s *Server) acquireNamed(r *http.Request, name string) (*Model, func(), *apiError) {
	msp := s.fleet.Load()
	if msp == nil {
		m := s.model.Load()
		if m == nil {
			return nil, nil, errLoading()
		}
		return m, func() {}, nil
	}
	ms := *msp
	// A request that waits for its model's load gives its turn to
	// prepare a prompt back meanwhile: the other models' requests go on.
	info := requestInfoOf(r.Context())
	yield := info.turn && s.loadedModel(name) == nil
	if yield {
		s.admit.yieldTurn(info)
	}
	m, release, err := ms.Acquire(r.Context(), name)
	if yield && err == nil {
		if s.admit.prepare(r.Context(), info) != nil {
			release()
			err = r.Context().Err()
		}
	}
	if err == nil {
		return m, release, nil
	}
	names := func() string {
		var q []string
		for _, st := range ms.List() {
			q = append(q, fmt.Sprintf("%q", st.Name))
		}
		return strings.Join(q, ", ")
	}
	switch {
	case errors.Is(err, ErrUnknownModel):
		return nil, nil, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q does not exist; this server serves %s", name, names())}
	case errors.Is(err, ErrModelRequired):
		return nil, nil, badRequest("model", "model: name one of the models this server serves: %s", names())
	case errors.Is(err, ErrLoadTimeout):
		return nil, nil, &apiError{Status: http.StatusServiceUnavailable, Code: "model_loading", retry: 10,
			Message: fmt.Sprintf("the model %q is still loading; try again in a few seconds", name)}
	case errors.Is(err, ErrNoRoom):
		return nil, nil, &apiError{Status: http.StatusServiceUnavailable, Code: "model_busy", retry: 5,
			Message: fmt.Sprintf("the model %q does not fit in the memory left, and the models that hold it are busy; retry later", name)}
	case errors.Is(err, ErrShuttingDown):
		return nil, nil, &apiError{Status: http.StatusServiceUnavailable, Code: "shutting_down",
			Message: "the server is shutting down"}
	case r.Context().Err() != nil:
		return nil, nil, &apiError{Status: StatusClientClosed, Message: "the client went away"}
	}
	// The load's error names files: it goes to the log, not the client.
	s.log.Error("loading a model", "model", name, "err", err)
	return nil, nil, &apiError{Status: http.StatusInternalServerError, Code: "model_load_failed",
		Message: fmt.Sprintf("the model %q could not be loaded; the server's log says why", name)}
}

// peekModel returns the top-level "model" string of a JSON request body,
// "" when it has none or the body is malformed (the handler says why).
func peekModel(body []byte) string {
	var v struct {
		Model json.RawMessage `json:"model"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	name, _ := modelName(v.Model)
	return name
}

// modelName returns the model a request's "model" field names ("" when
// it is absent or null).
func modelName(raw json.RawMessage) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return "", badRequest("model", "model: expected a string, got %s", jsonKindOf(raw))
	}
	return name, nil
}

// jsonKindOf names the kind of a JSON value for an error message.
func jsonKindOf(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	}
	return "a number"
}

// Shutdown stops hs gracefully: it stops accepting, lets running
// requests finish for up to grace, then cancels what still runs (Cancel)
// and closes the connections.
func (s *Server) Shutdown(hs *http.Server, grace time.Duration) error {
	return shutdown(hs, s.Cancel, grace)
}

// Cancel ends every running request: it closes the scheduler of every
// model loaded now, which ends their streams.
func (s *Server) Cancel() {
	s.loadedModels(func(m *Model) {
		if m.Scheduler != nil {
			m.Scheduler.Close()
		}
	})
}

// shutdown is Shutdown with stop cancelling what runs.
func shutdown(hs *http.Server, stop func(), grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		stop()
		ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel2()
		if err = hs.Shutdown(ctx2); err != nil {
			err = hs.Close()
		}
	}
	return err
}
