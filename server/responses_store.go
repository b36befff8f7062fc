package server

import (
	"container/list"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// responseStoreBytes bounds the memory the stored responses hold: past
// it, the least recently used are dropped.
const responseStoreBytes = 64 << 20

// responseStore keeps finished responses (those with store: true) for
// previous_response_id, item_reference and GET /v1/responses/{id}: a
// least-recently-used list bounded in bytes. Each keeps the JSON of its
// response object and its conversation (its input items, those of the
// responses before it first, and its output items), so that a follow-up
// needs no other entry.
type responseStore struct {
	mu    sync.Mutex
	limit int
	size  int
	lru   *list.List               // of *storedResponse, the most recent first
	byID  map[string]*list.Element // response id -> its element
	items map[string]convItem      // output item id -> the item
}

type storedResponse struct {
	id      string
	model   string     // the model that answered it
	body    []byte     // the response object, as answered
	history []convItem // the conversation, output included
	output  []string   // the ids of its output items
	inputs  int        // how many items, before the output, are its request's input
	size    int
}

func newResponseStore(limit int) *responseStore {
	return &responseStore{limit: limit, lru: list.New(), byID: map[string]*list.Element{}, items: map[string]convItem{}}
}

// put stores resp (finished) with its conversation: input, the items
// before its output, the last own of them its request's input items, and
// output, the items of resp.Output. Input items without an id get one.
// A response larger than the whole store is not kept.
func (st *responseStore) put(resp *responseObject, input []convItem, own int, output []convItem) {
	body, err := json.Marshal(resp)
	if err != nil {
		return
	}
	history := append(input[:len(input):len(input)], output...)
	for i := len(input) - own; i < len(input); i++ {
		if history[i].ID == "" {
			history[i].ID = requestID(itemIDPrefix[history[i].Kind])
		}
	}
	e := &storedResponse{id: resp.ID, model: resp.Model, body: body, history: history, inputs: own, size: len(body) + 128}
	for _, it := range history {
		e.size += it.size()
	}
	if e.size > st.limit {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.size += e.size
	st.byID[e.id] = st.lru.PushFront(e)
	for _, it := range output {
		e.output = append(e.output, it.ID)
		st.items[it.ID] = it
	}
	for st.size > st.limit {
		st.remove(st.lru.Back())
	}
}

// remove drops element el; st.mu is held.
func (st *responseStore) remove(el *list.Element) {
	e := st.lru.Remove(el).(*storedResponse)
	delete(st.byID, e.id)
	for _, id := range e.output {
		delete(st.items, id)
	}
	st.size -= e.size
}

// lookup returns the stored response id, now the most recently used.
func (st *responseStore) lookup(id string) (*storedResponse, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	el, ok := st.byID[id]
	if !ok {
		return nil, false
	}
	st.lru.MoveToFront(el)
	return el.Value.(*storedResponse), true
}

// delete drops the stored response id and reports whether it was there.
func (st *responseStore) delete(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	el, ok := st.byID[id]
	if ok {
		st.remove(el)
	}
	return ok
}

// input returns the input items of the stored response id's request, in
// order (not those of the responses before it, nor its output).
func (st *responseStore) input(id string) ([]convItem, bool) {
	e, ok := st.lookup(id)
	if !ok {
		return nil, false
	}
	end := len(e.history) - len(e.output)
	return e.history[end-e.inputs : end : end], true
}

// history returns the conversation of the stored response id, its
// output last (a copy: the caller appends to it).
func (st *responseStore) history(id string) ([]convItem, bool) {
	e, ok := st.lookup(id)
	if !ok {
		return nil, false
	}
	return append([]convItem(nil), e.history...), true
}

// item returns the output item id of a stored response.
func (st *responseStore) item(id string) (convItem, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	it, ok := st.items[id]
	return it, ok
}

// getResponse serves GET /v1/responses/{id}: a stored response, or 404.
func (s *Server) getResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	e, ok := s.responses.lookup(id)
	if !ok {
		writeError(w, responseNotFound(id))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(e.body, '\n'))
}

// responseNotFound is the answer to a request for a response the store
// does not hold, in OpenAI's shape.
func responseNotFound(id string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "response_id", Code: "response_not_found",
		Message: fmt.Sprintf("response with id %q not found", id)}
}

// responsesRoutes sets up the Responses API: its store and its routes.
func (s *Server) responsesRoutes() {
	s.responses = newResponseStore(responseStoreBytes)
	s.route("POST /v1/responses", "responses", routeAuth|routeAdmit, s.needModelBy(s.acquireResponseModel, generative(s.createResponse)))
	s.route("GET /v1/responses/{id}", "response", routeAuth, s.getResponse)
	s.route("DELETE /v1/responses/{id}", "response_delete", routeAuth, s.deleteResponse)
	s.route("GET /v1/responses/{id}/input_items", "response_input_items", routeAuth, s.responseInputItems)
}

// acquireResponseModel is acquire for POST /v1/responses: a follow-up
// that names no model (previous_response_id without "model") continues
// on the model that answered the response it follows, as OpenAI's does.
func (s *Server) acquireResponseModel(r *http.Request) (*Model, func(), *apiError) {
	if s.fleet.Load() == nil {
		return s.acquireNamed(r, "")
	}
	var v struct {
		Model              json.RawMessage `json:"model"`
		PreviousResponseID json.RawMessage `json:"previous_response_id"`
	}
	if e := decodeBody(r, &v); e != nil {
		return nil, nil, e
	}
	name, e := modelName(v.Model)
	if e != nil {
		return nil, nil, e
	}
	var prev string
	if name == "" && json.Unmarshal(v.PreviousResponseID, &prev) == nil {
		if e, ok := s.responses.lookup(prev); ok {
			name = e.model
		}
	}
	return s.acquireNamed(r, name)
}
