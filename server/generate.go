package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"inferno/constrain"
	"inferno/engine"
	"inferno/sampling"
	"inferno/scheduler"
)

// generation is one running request as a handler sees it: the stream of
// the scheduler's events and the bookkeeping for usage and metrics.
type generation struct {
	s       *Server
	m       *Model
	stream  *scheduler.Stream
	start   time.Time
	first   time.Time
	prompt  int
	tokens  int
	finish  string
	stop    string // the stop string that ended the generation, if one did
	cached  int
	ctx     context.Context
	created int64
	info    *requestInfo
	lps     bool // the request asked for log-probabilities
}

// wantLogprobs reports whether the request asked for the tokens'
// log-probabilities.
func (g *generation) wantLogprobs() bool { return g.lps }

// submit hands req to the scheduler. The generation stops when ctx ends
// (the handler cancels it when it returns, so a client gone mid-stream
// frees its slot).
func (s *Server) submit(ctx context.Context, m *Model, req engine.Request, start time.Time) (*generation, *apiError) {
	info := requestInfoOf(ctx)
	var stream *scheduler.Stream
	var err error
	if a := info.admitted; a != nil {
		// The request leaves the admission as it enters the scheduler's
		// queue: it is counted once, by one or the other.
		a.mu.Lock()
		stream, err = m.Scheduler.Submit(ctx, req)
		info.leave()
		a.mu.Unlock()
	} else {
		stream, err = m.Scheduler.Submit(ctx, req)
	}
	var ce *engine.ContextError
	switch {
	case err == nil:
	case errors.Is(err, scheduler.ErrQueueFull):
		return nil, errQueueFull()
	case errors.Is(err, scheduler.ErrClosed):
		return nil, &apiError{Status: http.StatusServiceUnavailable, Code: "shutting_down", Message: "the server is shutting down"}
	case errors.As(err, &ce):
		e := badRequest("messages", "this model's context is %d tokens, but the prompt has %d tokens", ce.Context, ce.Prompt)
		e.Code = "context_length_exceeded"
		return nil, e
	default:
		return nil, badRequest("", "%v", err)
	}
	info.submitted = true
	s.metrics.promptTokens.Add(float64(len(req.Prompt)))
	return &generation{s: s, m: m, stream: stream, start: start, prompt: len(req.Prompt), ctx: ctx, created: time.Now().Unix(), info: info,
		lps: req.Sampling.Logprobs}, nil
}

// next returns the next event; ok is false at the end. A failed or
// cancelled generation ends with an event whose Err is set.
func (g *generation) next() (scheduler.Event, bool) {
	ev, ok := g.stream.Next(g.ctx)
	if !ok {
		return ev, false
	}
	if ev.Err != nil && g.ctx.Err() == nil {
		g.info.finished = true // a failure, not the request's cancellation
	}
	if ev.HasToken {
		g.tokens++
		g.info.tokens = g.tokens
		g.s.metrics.generationTokens.Inc()
		if g.tokens == 1 {
			g.first = time.Now()
			g.s.metrics.ttft.Observe(g.first.Sub(g.start).Seconds())
		}
	}
	if ev.Finish != "" {
		g.info.finished = true
		g.finish = ev.Finish
		g.stop = ev.Metrics.Stop
		g.cached = ev.Metrics.CachedTokens
		g.s.metrics.cachedTokens.Add(float64(g.cached))
		m := ev.Metrics
		end := time.Now()
		if ev.Embedding != nil {
			g.s.log.Info("embedded", "prompt_tokens", g.prompt, "cached_tokens", g.cached, "ms", float64(end.Sub(g.start).Microseconds())/1e3)
		} else {
			g.s.log.Info("generated", "prompt_tokens", g.prompt, "cached_tokens", g.cached, "tokens", g.tokens,
				"finish", g.finish, "ttft_ms", float64(g.first.Sub(g.start).Microseconds())/1e3,
				"decode_tok_s", roundTo(m.DecodeTokensPerSecond(), 1))
		}
		g.s.metrics.duration.Observe(end.Sub(g.start).Seconds())
		if g.tokens > 1 {
			g.s.metrics.tpot.Observe(end.Sub(g.first).Seconds() / float64(g.tokens-1))
		}
	}
	return ev, true
}

func (g *generation) usage() *usage {
	return &usage{PromptTokens: g.prompt, CompletionTokens: g.tokens, TotalTokens: g.prompt + g.tokens,
		PromptTokensDetails: promptDetails{CachedTokens: g.cached}}
}

// failure turns the error that ended a generation into an API error.
func failure(err error) *apiError {
	if errors.Is(err, scheduler.ErrClosed) {
		return &apiError{Status: http.StatusServiceUnavailable, Code: "shutting_down", Message: "the server is shutting down"}
	}
	if errors.Is(err, constrain.ErrAmbiguous) {
		e := badRequest("grammar", "the request's grammar or schema is too ambiguous to follow: %v", err)
		e.Code = "grammar_too_ambiguous"
		return e
	}
	return &apiError{Status: http.StatusInternalServerError, Message: fmt.Sprintf("generation failed: %v", err)}
}

// requestID returns prefix and 24 random hexadecimal digits.
func requestID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s%x", prefix, b)
}

// tokenBytes returns the bytes of token id as JSON wants them (ints).
func (m *Model) tokenBytes(id int32) (string, []int) {
	b := m.Tokenizer.DecodeBytes([]int32{id})
	ints := make([]int, len(b))
	for i, c := range b {
		ints[i] = int(c)
	}
	return string(b), ints
}

// chatLogprob converts a token's log-probabilities to the chat format.
func (m *Model) chatLogprob(t sampling.Token) tokenLogprob {
	text, b := m.tokenBytes(t.ID)
	lp := tokenLogprob{Token: text, Logprob: finite(t.Logprob), Bytes: b, TopLogprobs: []topLogprob{}}
	for _, alt := range t.Top {
		at, ab := m.tokenBytes(alt.ID)
		lp.TopLogprobs = append(lp.TopLogprobs, topLogprob{Token: at, Logprob: finite(alt.Logprob), Bytes: ab})
	}
	return lp
}

// finite returns lp, or -9999 for -Inf and NaN (JSON has no such numbers;
// vLLM answers the same).
func finite(lp float32) float32 {
	if lp != lp || math.IsInf(float64(lp), 0) {
		return -9999
	}
	return lp
}

// stream writes a response's parts as they come, each flushed at once.
// After a failed write (the client is gone) it writes nothing more, and
// err reports the failure.
type stream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
	err error
}

// start sends the header of a stream of contentType.
func (st *stream) start(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st.w, st.rc = w, http.NewResponseController(w)
}

// emit writes prefix, v as JSON and its newline, and suffix.
func (st *stream) emit(prefix string, v any, suffix string) error {
	if st.err != nil {
		return st.err
	}
	st.buf.Reset()
	st.buf.WriteString(prefix)
	enc := json.NewEncoder(&st.buf) // ends the JSON with a newline
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		st.err = err
		return err
	}
	st.buf.WriteString(suffix)
	return st.write(st.buf.Bytes())
}

func (st *stream) write(b []byte) error {
	if st.err != nil {
		return st.err
	}
	if _, err := st.w.Write(b); err != nil {
		st.err = err
		return err
	}
	if err := st.rc.Flush(); err != nil {
		st.err = err
	}
	return st.err
}

// sse writes Server-Sent Events: "data: JSON" per event (OpenAI's
// streams), or "event: NAME" and its data (Anthropic's and Responses').
type sse struct{ stream }

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Connection", "keep-alive")
	e := &sse{}
	e.start(w, "text/event-stream")
	return e
}

// send writes one unnamed event.
func (e *sse) send(v any) error { return e.emit("data: ", v, "\n") }

// event writes one event named name.
func (e *sse) event(name string, v any) error { return e.emit("event: "+name+"\ndata: ", v, "\n") }

func (e *sse) done() error { return e.write([]byte("data: [DONE]\n\n")) }

// sendError writes an error event in OpenAI's error shape.
func (e *sse) sendError(ae *apiError) {
	if ae.Type == "" {
		ae.Type = "server_error"
	}
	_ = e.send(struct {
		Error *apiError `json:"error"`
	}{ae})
}

func ptr[T any](v T) *T { return &v }

// roundTo rounds v to digits decimal places, for logs.
func roundTo(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// fanOut streams n choices side by side into out: run(k, send) streams
// choice k through send (safe for the n goroutines to call at once) and
// returns the error that ended its generation, if one did; the first such
// error ends the stream with it. fanOut reports whether the stream is
// still open once every choice has ended (no error, the client still
// there): the caller then sends the usage and [DONE].
func fanOut(out *sse, n int, run func(k int, send func(any) error) error) bool {
	var mu sync.Mutex
	over := false // an error was sent, or a write failed
	send := func(v any) error {
		mu.Lock()
		defer mu.Unlock()
		if over {
			return errStreamOver
		}
		if err := out.send(v); err != nil {
			over = true
			return err
		}
		return nil
	}
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			if err := run(k, send); err != nil {
				mu.Lock()
				defer mu.Unlock()
				if !over {
					over = true
					out.sendError(failure(err))
					_ = out.done()
				}
			}
		})
	}
	wg.Wait()
	return !over
}

// errStreamOver stops a choice whose stream has ended (an error sent, or
// the client gone).
var errStreamOver = errors.New("server: the stream is over")
