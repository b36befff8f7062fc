package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"inferno/scheduler"
)

// admission bounds the work requests cost before they reach the
// scheduler. A request is admitted before its body is read: those being
// read, rendered and tokenized count against the queue along with those
// in the scheduler's, so that a burst of large requests gets 503 instead
// of holding their bodies and prompts in memory at once. Once its body is
// read, an admitted request waits for one of a few turns (as many as
// there are cores) to decode, render and tokenize it; it leaves both when
// the scheduler has it, or when the handler returns.
type admission struct {
	mu      sync.Mutex
	pending int           // admitted, not yet in the scheduler
	turns   chan struct{} // a token per request preparing its prompt
}

func (a *admission) init(turns int) {
	a.turns = make(chan struct{}, max(1, turns))
}

// admitRequest admits the request described by info, or answers 503 when
// the requests in preparation and in the scheduler's queue fill --queue
// and the free slots.
func (s *Server) admitRequest(info *requestInfo, body []byte) *apiError {
	if !s.ready() {
		return errLoading()
	}
	// With several models, the queue of the one named, if loaded (one
	// not loaded yet has an empty queue).
	var st scheduler.Stats
	if m := s.modelFor(body); m != nil {
		st = m.Scheduler.Stats()
	}
	a := &s.admit
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending+st.Waiting >= s.cfg.Queue+max(0, st.Slots-st.Running) {
		return errQueueFull()
	}
	a.pending++
	info.admitted = a
	return nil
}

// prepare waits for a turn to prepare the prompt; it fails when ctx ends
// first.
func (a *admission) prepare(ctx context.Context, info *requestInfo) error {
	select {
	case a.turns <- struct{}{}:
		info.turn = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// yieldTurn gives back the turn the request holds, keeping its place in
// the queue.
func (a *admission) yieldTurn(info *requestInfo) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if info.turn && info.admitted != nil {
		<-a.turns
		info.turn = false
	}
}

// requestInfo follows a request through route and its handler, for the
// admission, the metrics and the log line of a cancelled request.
type requestInfo struct {
	route     string
	id        string     // the completion's id, once submitted
	admitted  *admission // nil once left
	turn      bool       // holds a turn of admitted's
	submitted bool       // the scheduler has it
	finished  bool       // the generation reached its end or failed
	tokens    int        // generated so far
}

type infoKey struct{}

// requestInfoOf returns the requestInfo route put in ctx (a blank one
// outside route).
func requestInfoOf(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

// leave gives the admission and the turn back; a.mu is held.
func (info *requestInfo) leave() {
	a := info.admitted
	if a == nil {
		return
	}
	a.pending--
	if info.turn {
		<-a.turns
		info.turn = false
	}
	info.admitted = nil
}

// release gives the admission and the turn back if the request still
// holds them.
func (info *requestInfo) release() {
	if a := info.admitted; a != nil {
		a.mu.Lock()
		info.leave()
		a.mu.Unlock()
	}
}

// cancelled reports whether the request ended before its answer did: its
// generation stopped short, or its client left first.
func (info *requestInfo) cancelled(ctx context.Context) bool {
	return !info.finished && (info.submitted || ctx.Err() != nil)
}

// reason says why a cancelled request ended, for the log.
func (info *requestInfo) reason(ctx context.Context) string {
	if ctx.Err() != nil {
		return "the client disconnected"
	}
	return "the response could not be written (the client is gone)"
}

func errLoading() *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Code: "model_loading", retry: 5,
		Message: "the model is still loading; try again in a few seconds"}
}

func errQueueFull() *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Code: "queue_full", retry: 1,
		Message: "the server is busy: every slot is taken and the queue is full; retry later"}
}

// longestToken returns the most bytes one of m's tokens stands for.
func longestToken(m *Model) int {
	n := 1
	if m.Tokenizer == nil {
		return n
	}
	for id := range m.Tokenizer.VocabSize() {
		n = max(n, len(m.Tokenizer.DecodeBytes([]int32{int32(id)})))
	}
	return n
}

// checkPromptBytes refuses, before it is rendered or tokenized, a prompt
// of n bytes that cannot fit the context: no token stands for more than
// the model's longest token, so such a prompt has more tokens than the
// context holds whatever its text.
func checkPromptBytes(m *Model, param string, n int) *apiError {
	if limit := m.promptBytes(); n > limit {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Code: "context_length_exceeded",
			Message: fmt.Sprintf("this model's context is %d tokens, but the prompt's %d bytes are more than %d tokens of at most %d bytes can hold",
				m.Context, n, m.Context, m.maxTokenBytes)}
	}
	return nil
}

// promptBytes is the most bytes of text a prompt that fits the context
// can have.
func (m *Model) promptBytes() int {
	return m.Context * max(1, m.maxTokenBytes)
}
