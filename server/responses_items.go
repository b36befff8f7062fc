package server

import (
	"net/http"
	"slices"
	"strconv"
)

// DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items: a
// stored response's removal and its request's input items, as OpenAI
// serves them.

// itemIDPrefix is the prefix of the id a stored input item gets, by kind.
var itemIDPrefix = map[string]string{
	"message":              "msg_",
	"function_call":        "fc_",
	"function_call_output": "fco_",
	"reasoning":            "rs_",
}

// Bounds of input_items' limit, as OpenAI's.
const (
	inputItemsDefault = 20
	inputItemsMax     = 100
)

// responseDeleted is DELETE /v1/responses/{id}'s answer.
type responseDeleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "response.deleted"
	Deleted bool   `json:"deleted"`
}

// deleteResponse serves DELETE /v1/responses/{id}: the stored response
// is dropped (the responses that follow it keep their conversations), or
// 404.
func (s *Server) deleteResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.responses.delete(id) {
		writeError(w, responseNotFound(id))
		return
	}
	writeJSON(w, http.StatusOK, responseDeleted{ID: id, Object: "response.deleted", Deleted: true})
}

// itemList is input_items' answer: a page of items.
type itemList struct {
	Object  string  `json:"object"` // "list"
	Data    []any   `json:"data"`
	FirstID *string `json:"first_id"` // null when data is empty
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// inputItemsQuery is input_items' query: limit, order and after.
type inputItemsQuery struct {
	limit int
	asc   bool
	after string
}

// parseInputItemsQuery checks input_items' query parameters. include is
// accepted and changes nothing: the items hold text only.
func parseInputItemsQuery(r *http.Request) (inputItemsQuery, *apiError) {
	q := r.URL.Query()
	p := inputItemsQuery{limit: inputItemsDefault, after: q.Get("after")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > inputItemsMax {
			return p, badRequest("limit", "limit %q must be an integer in [1, %d]", v, inputItemsMax)
		}
		p.limit = n
	}
	switch v := q.Get("order"); v {
	case "asc":
		p.asc = true
	case "", "desc":
	default:
		return p, badRequest("order", `order %q is not one of "asc", "desc"`, v)
	}
	return p, nil
}

// responseInputItems serves GET /v1/responses/{id}/input_items: a page of
// the input items of the stored response's request (not those of the
// responses before it), the newest first unless order is asc.
func (s *Server) responseInputItems(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q, e := parseInputItemsQuery(r)
	if e != nil {
		writeError(w, e)
		return
	}
	items, ok := s.responses.input(id)
	if !ok {
		writeError(w, responseNotFound(id))
		return
	}
	if !q.asc {
		items = slices.Clone(items)
		slices.Reverse(items)
	}
	if q.after != "" {
		i := slices.IndexFunc(items, func(it convItem) bool { return it.ID == q.after })
		if i < 0 {
			e := badRequest("after", "after: item with id %q is not an input item of response %q", q.after, id)
			e.Code = "item_not_found"
			writeError(w, e)
			return
		}
		items = items[i+1:]
	}
	list := itemList{Object: "list", Data: []any{}, HasMore: len(items) > q.limit}
	for _, it := range items[:min(len(items), q.limit)] {
		list.Data = append(list.Data, it.wire())
	}
	if n := min(len(items), q.limit); n > 0 {
		list.FirstID, list.LastID = &items[0].ID, &items[n-1].ID
	}
	writeJSON(w, http.StatusOK, list)
}

// functionCallOutputItem is a function_call_output item as input_items
// lists it.
type functionCallOutputItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"` // "function_call_output"
	CallID string `json:"call_id"`
	Output string `json:"output"`
	Status string `json:"status"`
}

// inputMessageItem is a user, system or developer message as input_items
// lists it.
type inputMessageItem struct {
	ID      string     `json:"id"`
	Type    string     `json:"type"` // "message"
	Role    string     `json:"role"`
	Content []textPart `json:"content"` // input_text parts
	Status  string     `json:"status"`
}

// wire returns the item in the Responses API's shape (ResponseItem):
// an assistant message as an output message, the others as input items.
func (it convItem) wire() any {
	switch it.Kind {
	case "function_call":
		return functionCallItem{ID: it.ID, Type: it.Kind, Status: "completed", Arguments: it.Args, CallID: it.CallID, Name: it.Name}
	case "function_call_output":
		return functionCallOutputItem{ID: it.ID, Type: it.Kind, CallID: it.CallID, Output: it.Text, Status: "completed"}
	case "reasoning":
		rs := reasoningItem{ID: it.ID, Type: it.Kind, Summary: []textPart{}, Status: "completed"}
		if it.Text != "" {
			rs.Content = []textPart{{Type: "reasoning_text", Text: it.Text}}
		}
		return rs
	}
	if it.Role == "assistant" {
		return messageItem{ID: it.ID, Type: "message", Status: "completed", Role: it.Role,
			Content: []outputText{{Type: "output_text", Text: it.Text, Annotations: []any{}, Logprobs: []tokenLogprob{}}}}
	}
	return inputMessageItem{ID: it.ID, Type: "message", Role: it.Role, Content: []textPart{{Type: "input_text", Text: it.Text}}, Status: "completed"}
}
