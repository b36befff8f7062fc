// Package server is inferno's OpenAI-compatible HTTP server: chat
// completions and completions (streamed as Server-Sent Events or not),
// the model list, tokenization, the chat template's rendering, health,
// Prometheus metrics, and a chat page at "/" (package webui).
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
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"inferno/chat"
	"inferno/parser"
	"inferno/scheduler"
	"inferno/server/webui"
	"inferno/structured"
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
	// Queue is the most requests that may wait for a slot (serve's
	// --queue). Requests whose body has arrived and is being rendered and
	// tokenized count against it along with those in the scheduler's
	// queue; beyond it they get 503 before that work is done. A body
	// still arriving takes no place.
	Queue int
	// ReadTimeout bounds the time a client may take to send a request's
	// body (0: DefaultReadTimeout). One not sent whole by then gets 408
	// and its connection is closed. HTTPServer bounds the header's time
	// by it too.
	ReadTimeout time.Duration
	// CheckHost guards against DNS rebinding: when set, requests whose Host
	// is not a loopback name or address (localhost, 127.0.0.1, [::1]) or
	// one of AllowedHosts get 403. Serve sets it when it listens on a
	// loopback address with no API key.
	CheckHost bool
	// AllowedHosts are further Host names (without the port) accepted when
	// CheckHost is set; "*" accepts any.
	AllowedHosts []string
	// CORSOrigins are the browser origins ("https://app.example:8443",
	// or "*" for any) allowed to call the server: their requests get CORS
	// headers and their preflights an answer. A request with any other
	// Origin header gets 403, so that a web page cannot drive the server
	// through a visitor's browser; requests without one (every non-browser
	// client) are unaffected.
	CORSOrigins []string
	// NoWebUI: no chat page at "/" (package webui); "/" is a 404 as any
	// path without an endpoint.
	NoWebUI bool
	// Logger receives one line per request and the server's notices; nil:
	// slog.Default().
	Logger *slog.Logger
}

// DefaultMaxBodyBytes is the request body cap when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 16 << 20

// DefaultReadTimeout is the time a client may take to send a request's
// body when Config.ReadTimeout is 0.
const DefaultReadTimeout = 60 * time.Second

// maxHeaderTimeout bounds the time a client may take to send a request's
// header (less when the read timeout is shorter).
const maxHeaderTimeout = 10 * time.Second

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
	// Format is the format of the model's replies, which package parser
	// splits into content, reasoning_content and tool calls; empty: Plain.
	Format parser.Format
	// Reasoning: the model writes its reasoning between the tags of its
	// format (Format.ThinkTags: <think> and </think> for Qwen), returned
	// apart as reasoning_content. Harmony's reasoning needs no tags.
	Reasoning bool
	// Context is the most positions a sequence may hold.
	Context int
	// Vocab is the number of logits (token ids run 0..Vocab-1).
	Vocab int
	// Scheduler runs the generations.
	Scheduler scheduler.Scheduler
	// Created is reported as the model's creation time.
	Created time.Time
	// Embedding: an embedding model, which answers /v1/embeddings and
	// refuses chat and completions. EmbedDim is its embedding's width, and
	// EmbedTokens the ids it embeds for a text (model.Model.EmbedTokens).
	Embedding   bool
	EmbedDim    int
	EmbedTokens func(text string) []int32
	// Rerank is set on a reranker (an Embedding model of rank pooling,
	// whose Scheduler pools a prompt into its score and the logits'
	// difference, model.RankHead.Score), which answers
	// /v1/rerank and refuses the other endpoints: it returns the ids
	// scored for a document against a query under an instruction ("":
	// the model's default) (model.Model.RerankTokens).
	Rerank func(query, document, instruction string) ([]int32, error)
	// JSONWhitespace bounds the whitespace between the tokens of the JSON
	// that structured output constrains (structured.Spec.Whitespace): 0
	// the default, a space or a newline; negative none; n > 1 a newline
	// and up to n-1 spaces and tabs.
	JSONWhitespace int
	// Info describes the model's file, for ollama's /api/tags, /api/show
	// and /api/ps.
	Info ModelInfo

	maxTokenBytes int // the most bytes a token stands for; set by SetModel
}

// format returns the model's reply format.
func (m *Model) format() parser.Format {
	if m.Format == "" {
		return parser.Plain
	}
	return m.Format
}

// replyOptions returns the options of the parser of a chat reply to
// prompt, tool calls parsed when tools is set.
func (m *Model) replyOptions(prompt string, tools bool) parser.Options {
	f := m.format()
	return parser.Options{
		Format:    f,
		Reasoning: m.Reasoning,
		// Only Qwen3's templates open the reasoning in the prompt.
		StartInReasoning: m.Reasoning && f == parser.Qwen && structured.ThinkingAfter(prompt) == structured.InThinking,
		Tools:            tools,
	}
}

// Server answers the API. Until SetModel is called, /health answers 503
// and the API 503 "loading".
type Server struct {
	cfg     Config
	log     *slog.Logger
	model   atomic.Pointer[Model]  // the one model (SetModel)
	fleet   atomic.Pointer[Models] // or the models (SetModels)
	metrics *metrics
	mux     *http.ServeMux
	methods map[string][]string // path -> the methods its routes take, for 405's Allow
	handler http.Handler
	admit   admission

	responses *responseStore // the Responses API's stored responses
	started   time.Time      // reported as the creation time of models not loaded
}

// New returns a Server with no model yet.
func New(cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), methods: map[string][]string{}, started: time.Now()}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.admit.init(runtime.GOMAXPROCS(0))
	s.metrics = newMetrics(s)
	s.route("GET /health", "health", 0, s.health)
	s.route("GET /metrics", "metrics", 0, s.metrics.handler().ServeHTTP)
	s.route("GET /v1/models", "models", routeAuth, s.models)
	s.route("GET /v1/models/{id...}", "model", routeAuth, s.modelByID)
	s.route("POST /v1/chat/completions", "chat_completions", routeAuth|routeAdmit, s.needModel(generative(s.chatCompletions)))
	s.route("POST /v1/completions", "completions", routeAuth|routeAdmit, s.needModel(generative(s.completions)))
	s.route("POST /v1/embeddings", "embeddings", routeAuth|routeAdmit, s.needModel(s.embeddings))
	s.responsesRoutes()
	for _, p := range []string{"/v1/rerank", "/rerank", "/v2/rerank", "/reranking", "/v1/reranking"} {
		s.route("POST "+p, "rerank", routeAuth|routeAdmit, s.needModel(s.rerank))
	}
	s.route("POST /tokenize", "tokenize", routeAuth|routeAdmit, s.needModel(s.tokenize))
	s.route("POST /detokenize", "detokenize", routeAuth, s.needModel(s.detokenize))
	s.route("POST /apply-template", "apply_template", routeAuth|routeAdmit, s.needModel(s.applyTemplate))
	s.ollamaRoutes()
	if !cfg.NoWebUI {
		page := webui.New(http.HandlerFunc(notFound))
		s.route("GET /{$}", "page", 0, page.ServeHTTP)
		s.route("GET "+webui.Prefix, "page", 0, page.ServeHTTP)
	}
	s.route("POST /v1/messages", "messages", routeAuth|routeAdmit|routeAnthropic, s.needModel(generative(s.messages)))
	s.route("POST /v1/messages/count_tokens", "messages_count_tokens", routeAuth|routeAdmit|routeAnthropic, s.needModel(generative(s.countTokens)))
	s.mux.HandleFunc("/", notFound)
	s.handler = s.guard(s.mux)
	return s
}

// notFound answers a path the server has no endpoint for.
func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, &apiError{Status: http.StatusNotFound, Type: "not_found_error",
		Message: fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)})
}

// Registry returns the Prometheus registry the server's metrics are in.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

// SetModel makes the server ready to answer with m.
func (s *Server) SetModel(m *Model) {
	m.Init()
	s.model.Store(m)
}

// ServeHTTP implements http.Handler. Reading the request, its body
// included, must end within the read timeout: a client cannot hold a
// connection by trickling its body (a byte at a time resets nothing),
// nor by sending it slowly after an early answer (a 401, a 503), when
// net/http reads what is left of it before reusing the connection. Route
// lifts the deadline once it has the body, for the response, which
// streams as long as generation lasts.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout))
	s.handler.ServeHTTP(w, r)
}

// Route options.
const (
	routeAuth      = 1 << iota // the API key is required
	routeAdmit                 // the request is admitted against the queue once its body is read
	routeOllama                // errors are answered in ollama's shape, {"error": "..."}
	routeAnthropic             // errors are answered in Anthropic's shape
)

// StatusClientClosed is the status metrics and logs give a request whose
// client went away before it was answered (nginx's 499); nothing is sent.
const StatusClientClosed = 499

// route registers h for pattern ("METHOD /path") under the name metrics
// and logs use, with the options opts. A path may have several routes,
// one a method; a method none of them takes gets 405, with Allow
// listing those they take (a GET route takes HEAD too). Every error, the
// route's own (401, 405, 413, 503) and h's, is answered in OpenAI's
// shape, or in ollama's or Anthropic's with routeOllama or
// routeAnthropic (writeError finds the errorShaper the writer carries).
func (s *Server) route(pattern, name string, opts int, h http.HandlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	shaped := func(h http.HandlerFunc) http.HandlerFunc {
		switch {
		case opts&routeOllama != 0:
			return func(w http.ResponseWriter, r *http.Request) { h(ollamaWriter{w}, r) }
		case opts&routeAnthropic != 0:
			return func(w http.ResponseWriter, r *http.Request) { h(anthropicWriter{w}, r) }
		}
		return h
	}
	if s.methods[path] == nil {
		// The path without a method: the mux's own 405 is plain text.
		s.mux.HandleFunc(path, shaped(s.notAllowed(path, name)))
	}
	s.methods[path] = append(s.methods[path], method)
	s.mux.HandleFunc(pattern, shaped(s.routed(name, opts, h)))
}

// notAllowed answers a request for path with a method none of its
// routes takes: 405, counted under name, the path's first route's.
func (s *Server) notAllowed(path, name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		methods := s.methods[path] // complete once New has returned
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		w.Header().Set("Allow", strings.Join(methods, ", "))
		writeError(rec, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: fmt.Sprintf("%s %s: use %s", r.Method, path, strings.Join(methods, " or "))})
		s.metrics.requests.WithLabelValues(name, fmt.Sprint(rec.status)).Inc()
	}
}

// routed returns the handler route registers for h: the API key's
// check, the body's reading and the admission, then h, with the
// request's log line and metrics.
func (s *Server) routed(name string, opts int, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		info := &requestInfo{route: name}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		defer func() {
			if p := recover(); p != nil {
				// A bug must not take the server down with it.
				s.log.Error("panic serving request", "path", r.URL.Path, "panic", p)
				if !rec.wrote {
					writeError(rec, &apiError{Status: http.StatusInternalServerError, Message: "internal error"})
				}
			}
			info.release()
			status := rec.status
			if !rec.wrote && r.Context().Err() != nil {
				status = StatusClientClosed
			}
			// A request the server answered itself before it reached the
			// scheduler (a 408, a 400 for a cut body) was not cancelled,
			// though its connection may be closed by now.
			if info.cancelled(r.Context()) && !(rec.wrote && !info.submitted) {
				s.log.Info("request cancelled", "id", info.id, "route", name, "tokens", info.tokens,
					"reason", info.reason(r.Context()), "status", status)
			}
			s.metrics.requests.WithLabelValues(name, fmt.Sprint(status)).Inc()
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", status, "duration", time.Since(start))
		}()
		if opts&routeAuth != 0 && !s.authorized(r) {
			rec.Header().Set("WWW-Authenticate", `Bearer realm="inferno"`)
			writeError(rec, &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
				Message: "missing or wrong API key: send the header Authorization: Bearer KEY"})
			return
		}
		body, e := s.readBody(rec, r)
		if e != nil {
			writeError(rec, e)
			return
		}
		// Admitted once its body has arrived: clients that trickle their
		// bodies hold connections (bounded by --max-conns and the read
		// timeout), not places of the queue.
		if opts&routeAdmit != 0 {
			if e := s.admitRequest(info, body); e != nil {
				writeError(rec, e)
				return
			}
		}
		r.Body = &bodyReader{Reader: bytes.NewReader(body), data: body}
		if opts&routeAdmit != 0 {
			// Decoding, rendering and tokenizing take a turn on the CPU.
			if e := s.admit.prepare(r.Context(), info); e != nil {
				return // the client is gone
			}
		}
		h(rec, r)
	}
}

// readBody reads a request's body whole, within the deadline ServeHTTP
// set, before the handler runs, and then lifts the deadline. A body that
// fails to arrive gets its answer with "Connection: close" and the
// connection is closed: what is left of the body is never read.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	rc := http.NewResponseController(w)
	if r.ContentLength > s.cfg.MaxBodyBytes {
		// Answered at once, the body never read.
		w.Header().Set("Connection", "close")
		return nil, bodyTooLarge(s.cfg.MaxBodyBytes)
	}
	// The buffer grows as the body arrives: a client announcing a large
	// body and sending little holds little memory.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(r.ContentLength, 0), initialBodyBytes)+1))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	body := buf.Bytes()
	if err == nil {
		_ = rc.SetReadDeadline(time.Time{})
		return body, nil
	}
	w.Header().Set("Connection", "close")
	var tooBig *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &tooBig):
		return nil, bodyTooLarge(tooBig.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		return nil, &apiError{Status: http.StatusRequestTimeout, Type: "invalid_request_error", Code: "request_timeout",
			Message: fmt.Sprintf("the request body did not arrive within %v", s.cfg.ReadTimeout)}
	case isEOF(err):
		return nil, badRequest("", "the request body was cut short")
	}
	// Errors of the connection name its addresses: keep them out of the
	// answer.
	s.log.Debug("reading a request body", "err", err)
	return nil, badRequest("", "the request body could not be read")
}

// initialBodyBytes is the buffer a request body starts in, whatever its
// Content-Length announces.
const initialBodyBytes = 64 << 10

// bodyTooLarge is the answer to a body over limit bytes.
func bodyTooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
		Message: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

// bodyReader is a request body route has read whole: decodeBody decodes
// its bytes in place rather than through a json.Decoder's copy.
type bodyReader struct {
	*bytes.Reader
	data []byte
}

func (*bodyReader) Close() error { return nil }

// authorized checks the API key in constant time: the bearer token or
// the X-Api-Key header (Anthropic's clients send it) must hold it.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	if key := r.Header.Get("X-Api-Key"); key != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(key)), []byte(s.cfg.APIKey)) == 1 {
		return true
	}
	// The scheme is case-insensitive (RFC 9110, section 11.1).
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.cfg.APIKey)) == 1
}

// apiHandler serves an API request on the model. It returns the error to
// answer with before it has written anything, or nil.
type apiHandler func(w http.ResponseWriter, r *http.Request, m *Model) *apiError

// needModel runs h on the model the request names (the one model, or
// that of SetModels named by the body's "model", waiting for its load),
// answers 503 while the one model loads, and writes the error h returns.
// The model is given back when h returns.
func (s *Server) needModel(h apiHandler) http.HandlerFunc {
	return s.needModelBy(s.acquire, h)
}

// needModelBy is needModel with the model acquired by acquire.
func (s *Server) needModelBy(acquire func(*http.Request) (*Model, func(), *apiError), h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m, release, e := acquire(r)
		if e != nil {
			if r.Context().Err() == nil {
				writeError(w, e)
			}
			return
		}
		defer release()
		if e := h(w, r, m); e != nil && r.Context().Err() == nil {
			writeError(w, e) // (the client is there to read it)
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
	if !s.ready() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// modelEntry is a model as /v1/models lists it. Status is llama-server's
// router's: {"value": "loaded"}, "loading" or "unloaded". The lengths
// are 0 (left out) for a model never loaded.
type modelEntry struct {
	ID            string      `json:"id"`
	Object        string      `json:"object"`
	Created       int64       `json:"created"`
	OwnedBy       string      `json:"owned_by"`
	MaxModelLen   int         `json:"max_model_len,omitempty"`
	ContextLength int         `json:"context_length,omitempty"`
	Status        modelStatus `json:"status"`
}

type modelStatus struct {
	Value ModelState `json:"value"`
}

// entries lists the model of st under each of its names.
func (st *ModelStatus) entries(started time.Time) []modelEntry {
	created := started
	if st.Model != nil && !st.Model.Created.IsZero() {
		created = st.Model.Created
	}
	var out []modelEntry
	for _, name := range append([]string{st.Name}, st.Aliases...) {
		out = append(out, modelEntry{ID: name, Object: "model", Created: created.Unix(), OwnedBy: "inferno",
			MaxModelLen: st.Context, ContextLength: st.Context, Status: modelStatus{st.State}})
	}
	return out
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	list := struct {
		Object string       `json:"object"`
		Data   []modelEntry `json:"data"`
	}{Object: "list", Data: []modelEntry{}}
	for _, st := range s.ModelList() {
		list.Data = append(list.Data, st.entries(s.started)...)
	}
	writeJSON(w, http.StatusOK, list)
}

// modelByID serves GET /v1/models/{id}: the model under that name, or 404
// (an id may hold slashes, as "Qwen/Qwen3-8B" does).
func (s *Server) modelByID(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for _, st := range s.ModelList() {
		for _, e := range st.entries(s.started) {
			if e.ID == id {
				writeJSON(w, http.StatusOK, e)
				return
			}
		}
	}
	writeError(w, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist", id)})
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
// public-facing server needs: a bound on reading the header (10 s, or the
// read timeout when shorter; the body's is route's) and on idle
// connections (no write timeout: a stream lasts as long as generation).
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: min(maxHeaderTimeout, s.cfg.ReadTimeout),
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}
