// Package server is inferno's OpenAI-compatible HTTP server: chat
// completions and completions (streamed as Server-Sent Events or not),
// the model list, tokenization, the chat template's rendering, health and
// Prometheus metrics.
//
// A request's path: the handler decodes and checks the body, renders the
// messages with the model's chat template, tokenizes the prompt and
// submits it to the scheduler (package scheduler) with its sampling
// parameters; the scheduler's events (a token and the text it completed)
// go through the reply parser (package parser: reasoning and tool calls)
// to the client.
package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"inferno/chat"
	"inferno/scheduler"
	"inferno/tokenizer"
)

// Config configures a Server.
type Config struct {
	// APIKey, when set, is the bearer token every /v1/* request (and
	// /tokenize, /detokenize, /apply-template) must carry.
	APIKey string
	// MaxBodyBytes caps request bodies (0: DefaultMaxBodyBytes); larger
	// ones get 413.
	MaxBodyBytes int64
	// Logger receives one line per request and the server's notices; nil:
	// slog.Default().
	Logger *slog.Logger
}

// DefaultMaxBodyBytes is the request body cap when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 16 << 20

// bodyTimeout bounds the time a client may take to send a request body.
const bodyTimeout = 60 * time.Second

// Model is what the server serves, ready for requests.
type Model struct {
	// Name is the id /v1/models lists and requests name in "model" (the
	// file's name or an alias). Aliases are further names accepted.
	Name    string
	Aliases []string
	// Tokenizer encodes prompts and decodes generated tokens.
	Tokenizer *tokenizer.Tokenizer
	// Template renders chat messages (the model's tokenizer.chat_template,
	// or ChatML).
	Template *chat.Template
	// EOG holds the ids that end generation.
	EOG map[int32]bool
	// Reasoning: the model writes its reasoning between <think> and
	// </think>, returned apart as reasoning_content.
	Reasoning bool
	// Context is the most positions a sequence may hold.
	Context int
	// Vocab is the number of logits (token ids run 0..Vocab-1).
	Vocab int
	// Scheduler runs the generations.
	Scheduler scheduler.Scheduler
	// Created is reported as the model's creation time.
	Created time.Time
}

// Server answers the API. Until SetModel is called, /health answers 503
// and the API 503 "loading".
type Server struct {
	cfg     Config
	log     *slog.Logger
	model   atomic.Pointer[Model]
	metrics *metrics
	mux     *http.ServeMux
	handler http.Handler
}

// New returns a Server with no model yet.
func New(cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux()}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.metrics = newMetrics(s)
	s.route("GET /health", "health", false, s.health)
	s.route("GET /metrics", "metrics", false, s.metrics.handler().ServeHTTP)
	s.route("GET /v1/models", "models", true, s.models)
	s.route("POST /v1/chat/completions", "chat_completions", true, s.needModel(s.chatCompletions))
	s.route("POST /v1/completions", "completions", true, s.needModel(s.completions))
	s.route("POST /tokenize", "tokenize", true, s.needModel(s.tokenize))
	s.route("POST /detokenize", "detokenize", true, s.needModel(s.detokenize))
	s.route("POST /apply-template", "apply_template", true, s.needModel(s.applyTemplate))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Status: http.StatusNotFound, Type: "not_found_error",
			Message: fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)})
	})
	s.handler = s.mux
	return s
}

// Registry returns the Prometheus registry the server's metrics are in.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

// SetModel makes the server ready to answer with m.
func (s *Server) SetModel(m *Model) { s.model.Store(m) }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// route registers h for pattern ("METHOD /path") under the name metrics
// and logs use, with the API key check when auth is set. Another method on
// the path gets 405 in OpenAI's error shape.
func (s *Server) route(pattern, name string, auth bool, h http.HandlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", method)
			writeError(rec, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
				Message: fmt.Sprintf("%s %s: use %s", r.Method, path, method)})
			s.metrics.requests.WithLabelValues(name, fmt.Sprint(rec.status)).Inc()
			return
		}
		defer func() {
			if p := recover(); p != nil {
				// A bug must not take the server down with it.
				s.log.Error("panic serving request", "path", r.URL.Path, "panic", p)
				if !rec.wrote {
					writeError(rec, &apiError{Status: http.StatusInternalServerError, Message: "internal error"})
				}
			}
			s.metrics.requests.WithLabelValues(name, fmt.Sprint(rec.status)).Inc()
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", time.Since(start))
		}()
		if auth && !s.authorized(r) {
			writeError(rec, &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
				Message: "missing or wrong API key: send the header Authorization: Bearer KEY"})
			return
		}
		// The body is read whole, within a deadline (a client cannot hold
		// a connection by trickling it), before the handler runs; the
		// deadline is lifted for the response, which streams as long as
		// generation lasts.
		rc := http.NewResponseController(rec)
		_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(rec, r.Body, s.cfg.MaxBodyBytes))
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(rec, &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
					Message: fmt.Sprintf("the request body is larger than %d bytes", tooBig.Limit)})
			} else {
				writeError(rec, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error",
					Message: fmt.Sprintf("reading the request body: %v", err)})
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(rec, r)
	})
}

// authorized checks the bearer token in constant time.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.cfg.APIKey)) == 1
}

// apiHandler serves an API request on the model. It returns the error to
// answer with before it has written anything, or nil.
type apiHandler func(w http.ResponseWriter, r *http.Request, m *Model) *apiError

// needModel answers 503 while the model loads, and writes the error h
// returns.
func (s *Server) needModel(h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := s.model.Load()
		if m == nil {
			writeError(w, &apiError{Status: http.StatusServiceUnavailable, Code: "model_loading", retry: 5,
				Message: "the model is still loading; try again in a few seconds"})
			return
		}
		if e := h(w, r, m); e != nil {
			writeError(w, e)
		}
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.model.Load() == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	type entry struct {
		ID            string `json:"id"`
		Object        string `json:"object"`
		Created       int64  `json:"created"`
		OwnedBy       string `json:"owned_by"`
		MaxModelLen   int    `json:"max_model_len"`
		ContextLength int    `json:"context_length"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{Object: "list", Data: []entry{}}
	if m := s.model.Load(); m != nil {
		for _, name := range append([]string{m.Name}, m.Aliases...) {
			list.Data = append(list.Data, entry{ID: name, Object: "model", Created: m.Created.Unix(), OwnedBy: "inferno",
				MaxModelLen: m.Context, ContextLength: m.Context})
		}
	}
	writeJSON(w, http.StatusOK, list)
}

// checkModel accepts an empty name (the one model) or one of its names.
func checkModel(m *Model, name string) *apiError {
	if name == "" || name == m.Name {
		return nil
	}
	for _, a := range m.Aliases {
		if name == a {
			return nil
		}
	}
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist; this server serves %q", name, m.Name)}
}

// HTTPServer returns an http.Server for s on addr with the timeouts a
// public-facing server needs: a bound on reading the header and on idle
// connections (no write timeout: a stream lasts as long as generation).
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Shutdown stops hs gracefully: it stops accepting, lets running requests
// finish for up to grace, then cancels what still runs (closing the
// scheduler ends their streams) and closes the connections.
func Shutdown(hs *http.Server, sched scheduler.Scheduler, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		if sched != nil {
			sched.Close()
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel2()
		if err = hs.Shutdown(ctx2); err != nil {
			err = hs.Close()
		}
	}
	return err
}
