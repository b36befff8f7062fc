package server

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// doJSON sends a bodiless request and decodes its JSON answer.
func doJSON(t *testing.T, method, url string, header ...string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if method != http.MethodHead {
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s %s: status %d, body is not a JSON object: %q", method, url, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, v, resp.Header
}

func TestResponsesDelete(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", apiKey: "k"})
	auth := []string{"Authorization", "Bearer k"}
	status, v, _ := ts.post(t, "/v1/responses", `{"input": "x"}`, auth...)
	if status != 200 {
		t.Fatalf("POST: %d %v", status, v)
	}
	id := v["id"].(string)
	url := ts.URL + "/v1/responses/" + id
	for _, req := range [][2]string{{"DELETE", url}, {"GET", url + "/input_items"}} {
		if status, _, _ := doJSON(t, req[0], req[1]); status != http.StatusUnauthorized {
			t.Errorf("%s without the key: %d", req, status)
		}
	}
	if status, v, _ := doJSON(t, "GET", url+"/input_items", auth...); status != 200 || len(v["data"].([]any)) != 1 {
		t.Errorf("input_items with the key: %d %v", status, v)
	}
	if status, v, _ := doJSON(t, "DELETE", url, auth...); status != 200 ||
		!reflect.DeepEqual(v, map[string]any{"id": id, "object": "response.deleted", "deleted": true}) {
		t.Errorf("DELETE: %d %v", status, v)
	}
	for _, req := range [][2]string{{"GET", url}, {"DELETE", url}, {"GET", url + "/input_items"}} {
		status, v, _ := doJSON(t, req[0], req[1], auth...)
		if e := errorOf(t, v); status != 404 || e["code"] != "response_not_found" || e["type"] != "invalid_request_error" ||
			!strings.Contains(e["message"].(string), id) {
			t.Errorf("%s after DELETE: %d %v", req, status, v)
		}
	}
	// A follow-up cannot name it any more.
	status, v, _ = ts.post(t, "/v1/responses", `{"input": "y", "previous_response_id": "`+id+`"}`, auth...)
	if e := errorOf(t, v); status != 400 || e["code"] != "previous_response_not_found" {
		t.Errorf("follow-up of a deleted response: %d %v", status, v)
	}
}

func TestResponsesInputItems(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hello."})
	first := createResponse(t, ts, `{"instructions": "Be brief.", "input": [
		{"role": "user", "content": "Weather?"},
		{"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"},
		{"type": "function_call_output", "call_id": "call_1", "output": "rain"},
		{"role": "assistant", "content": [{"type": "output_text", "text": "It rains."}]},
		{"role": "user", "content": [{"type": "input_text", "text": "And"}, {"type": "input_text", "text": "tomorrow?"}]}]}`)
	id := first["id"].(string)
	list := func(query string) map[string]any {
		t.Helper()
		status, v, _ := doJSON(t, "GET", ts.URL+"/v1/responses/"+id+"/input_items"+query)
		if status != 200 || v["object"] != "list" {
			t.Fatalf("input_items%s: %d %v", query, status, v)
		}
		return v
	}
	all := list("?order=asc")
	data := all["data"].([]any)
	if len(data) != 5 || all["has_more"] != false {
		t.Fatalf("asc: %v", all)
	}
	var ids []string
	for _, d := range data {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	want := []any{
		map[string]any{"id": ids[0], "type": "message", "role": "user", "status": "completed",
			"content": []any{map[string]any{"type": "input_text", "text": "Weather?"}}},
		map[string]any{"id": ids[1], "type": "function_call", "status": "completed", "call_id": "call_1", "name": "get_weather",
			"arguments": `{"city":"Oslo"}`},
		map[string]any{"id": ids[2], "type": "function_call_output", "status": "completed", "call_id": "call_1", "output": "rain"},
		map[string]any{"id": ids[3], "type": "message", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "It rains.", "annotations": []any{}, "logprobs": []any{}}}},
		map[string]any{"id": ids[4], "type": "message", "role": "user", "status": "completed",
			"content": []any{map[string]any{"type": "input_text", "text": "And\ntomorrow?"}}},
	}
	if !reflect.DeepEqual(data, want) || all["first_id"] != ids[0] || all["last_id"] != ids[4] {
		t.Errorf("asc:\n got %v\nwant %v", all, want)
	}
	for i, p := range []string{"msg_", "fc_", "fco_", "msg_", "msg_"} {
		if !strings.HasPrefix(ids[i], p) {
			t.Errorf("item %d id %q, want prefix %q", i, ids[i], p)
		}
	}

	// Default order is desc; ids are the same on every call; limit and
	// after page through.
	pageIDs := func(v map[string]any) []string {
		var out []string
		for _, d := range v["data"].([]any) {
			out = append(out, d.(map[string]any)["id"].(string))
		}
		return out
	}
	desc := list("")
	if got := pageIDs(desc); !reflect.DeepEqual(got, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}) {
		t.Errorf("desc ids %v, asc %v", got, ids)
	}
	p1 := list("?limit=2")
	p2 := list("?limit=2&after=" + ids[3])
	p3 := list("?limit=2&after=" + ids[1])
	for i, tc := range []struct {
		page    map[string]any
		ids     []string
		hasMore bool
	}{{p1, []string{ids[4], ids[3]}, true}, {p2, []string{ids[2], ids[1]}, true}, {p3, []string{ids[0]}, false}} {
		got := pageIDs(tc.page)
		if !reflect.DeepEqual(got, tc.ids) || tc.page["has_more"] != tc.hasMore || tc.page["first_id"] != tc.ids[0] ||
			tc.page["last_id"] != tc.ids[len(tc.ids)-1] {
			t.Errorf("page %d: %v, want ids %v has_more %v", i+1, tc.page, tc.ids, tc.hasMore)
		}
	}
	if got := pageIDs(list("?order=asc&limit=3&after=" + ids[0])); !reflect.DeepEqual(got, ids[1:4]) {
		t.Errorf("asc after the first: %v", got)
	}
	if v := list("?after=" + ids[0]); len(v["data"].([]any)) != 0 || v["first_id"] != nil || v["has_more"] != false {
		t.Errorf("after the last: %v", v)
	}

	// A follow-up's items are its own input only, not the conversation
	// before it; a follow-up without input has none.
	second := createResponse(t, ts, `{"previous_response_id": "`+id+`", "input": [
		{"role": "developer", "content": "Answer in French."}, {"role": "user", "content": "Demain?"}]}`)
	id = second["id"].(string)
	v := list("")
	got := v["data"].([]any)
	if len(got) != 2 || got[0].(map[string]any)["role"] != "user" || got[1].(map[string]any)["role"] != "developer" ||
		got[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] != "Demain?" {
		t.Errorf("follow-up's items: %v", v)
	}
	id = createResponse(t, ts, `{"previous_response_id": "`+id+`"}`)["id"].(string)
	if v := list(""); len(v["data"].([]any)) != 0 || v["last_id"] != nil {
		t.Errorf("items of a follow-up without input: %v", v)
	}

	// Bad queries are 400s naming the parameter.
	for _, tc := range []struct{ query, param string }{
		{"?limit=0", "limit"}, {"?limit=101", "limit"}, {"?limit=x", "limit"},
		{"?order=up", "order"}, {"?after=msg_nothing", "after"},
	} {
		status, v, _ := doJSON(t, "GET", ts.URL+"/v1/responses/"+first["id"].(string)+"/input_items"+tc.query)
		if e := errorOf(t, v); status != 400 || e["param"] != tc.param {
			t.Errorf("%s: %d %v", tc.query, status, v)
		}
	}
	id = first["id"].(string)
	if v := list("?limit=100"); len(v["data"].([]any)) != 5 {
		t.Errorf("limit=100: %v", v)
	}
}

// TestRouteMethods checks the routing of methods: a path with several
// routes takes each of their methods and answers 405 to others, with
// Allow listing them, in the protocol's error shape; HEAD goes to GET.
func TestRouteMethods(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi"})
	for _, tc := range []struct{ method, path, allow string }{
		{"PUT", "/v1/responses/resp_x", "GET, DELETE"},
		{"POST", "/v1/responses/resp_x", "GET, DELETE"},
		{"DELETE", "/v1/responses/resp_x/input_items", "GET"},
		{"GET", "/v1/responses", "POST"},
		{"DELETE", "/v1/chat/completions", "POST"},
		{"POST", "/v1/models", "GET"},
	} {
		status, v, h := doJSON(t, tc.method, ts.URL+tc.path)
		if e := errorOf(t, v); status != 405 || h.Get("Allow") != tc.allow || e["type"] != "invalid_request_error" {
			t.Errorf("%s %s: %d Allow %q %v, want 405 Allow %q", tc.method, tc.path, status, h.Get("Allow"), v, tc.allow)
		}
	}
	status, v, _ := doJSON(t, "GET", ts.URL+"/api/chat")
	if status != 405 || v["error"] == nil || reflect.TypeOf(v["error"]).Kind() != reflect.String {
		t.Errorf("GET /api/chat: %d %v, want ollama's error shape", status, v)
	}
	if status, _, _ := doJSON(t, "HEAD", ts.URL+"/v1/models"); status != 200 {
		t.Errorf("HEAD /v1/models: %d", status)
	}
	if status, v, _ := doJSON(t, "GET", ts.URL+"/v1/responses/resp_x"); status != 404 {
		t.Errorf("GET of an unknown response: %d %v", status, v)
	}
}

// FuzzInputItemsQuery checks that any query is answered, a 400 naming
// limit, order or after, or a page within the bounds.
func FuzzInputItemsQuery(f *testing.F) {
	for _, q := range []string{"", "limit=1", "limit=100&order=asc", "order=desc&after=msg_1", "limit=-1", "limit=1e3", "order=ASC", "limit=%zz"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		r, err := http.NewRequest("GET", "/v1/responses/resp_1/input_items?"+query, nil)
		if err != nil {
			return
		}
		q, e := parseInputItemsQuery(r)
		switch {
		case e != nil:
			if e.Status != 400 || (e.Param != "limit" && e.Param != "order") {
				t.Errorf("%q: %+v", query, e)
			}
		case q.limit < 1 || q.limit > inputItemsMax:
			t.Errorf("%q: limit %d", query, q.limit)
		}
	})
}
