package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// namedEvent is an event of a streamed response: its event: line and its
// data, decoded.
type namedEvent struct {
	name string
	data map[string]any
}

// postResponses posts body to /v1/responses and returns the status and
// the whole body.
func postResponses(t testing.TB, ts *testServer, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(ts.URL+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// createResponse posts a non-streamed request and decodes its response.
func createResponse(t testing.TB, ts *testServer, body string) map[string]any {
	t.Helper()
	status, b := postResponses(t, ts, body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil || status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", body, status, b)
	}
	return v
}

// streamResponse posts a streamed request and reads its events, checking
// the framing: each event's name is its data's type, and the sequence
// numbers count from 0.
func streamResponse(t testing.TB, ts *testServer, body string) []namedEvent {
	t.Helper()
	status, b := postResponses(t, ts, body)
	if status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", body, status, b)
	}
	var evs []namedEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
			if data["type"] != name {
				t.Errorf("event %q carries type %v", name, data["type"])
			}
			if n := data["sequence_number"]; n != float64(len(evs)) {
				t.Errorf("event %d (%s) has sequence_number %v", len(evs), name, n)
			}
			evs = append(evs, namedEvent{name, data})
			name = ""
		default:
			t.Fatalf("stream line %q", line)
		}
	}
	return evs
}

// checkItems checks the events of each output item: they name its
// output_index and id, from its output_item.added to its
// output_item.done, and its deltas add up to its done text. It returns
// the items as their output_item.done events carry them.
func checkItems(t *testing.T, evs []namedEvent) []map[string]any {
	t.Helper()
	var items []map[string]any
	var id string
	var deltas strings.Builder
	for _, ev := range evs {
		d := ev.data
		switch ev.name {
		case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed":
			if id != "" {
				t.Errorf("%s while item %s is open", ev.name, id)
			}
			continue
		case "response.output_item.added":
			if id != "" {
				t.Errorf("item added while %s is open", id)
			}
			item := d["item"].(map[string]any)
			id = item["id"].(string)
			if d["output_index"] != float64(len(items)) || item["status"] != "in_progress" {
				t.Errorf("added %v at output_index %v", item, d["output_index"])
			}
			deltas.Reset()
			continue
		}
		if d["output_index"] != float64(len(items)) {
			t.Errorf("%s: output_index %v, want %d", ev.name, d["output_index"], len(items))
		}
		switch ev.name {
		case "response.output_item.done":
			item := d["item"].(map[string]any)
			if item["id"] != id {
				t.Errorf("item %v done, %s open", item["id"], id)
			}
			items = append(items, item)
			id = ""
		case "response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.function_call_arguments.delta":
			deltas.WriteString(d["delta"].(string))
		case "response.output_text.done", "response.reasoning_text.done", "response.reasoning_summary_text.done":
			if d["text"] != deltas.String() {
				t.Errorf("%s: text %q, deltas %q", ev.name, d["text"], deltas.String())
			}
		case "response.function_call_arguments.done":
			if d["arguments"] != deltas.String() {
				t.Errorf("%s: arguments %q, deltas %q", ev.name, d["arguments"], deltas.String())
			}
		}
		if ev.name != "response.output_item.done" && d["item_id"] != id {
			t.Errorf("%s: item_id %v, %s open", ev.name, d["item_id"], id)
		}
	}
	return items
}

// eventNames lists the events' names, deltas of a kind in a row once.
func eventNames(evs []namedEvent) []string {
	var out []string
	for _, ev := range evs {
		if strings.HasSuffix(ev.name, ".delta") && len(out) > 0 && out[len(out)-1] == ev.name {
			continue
		}
		out = append(out, ev.name)
	}
	return out
}

// withoutIDs is v with its "id" fields dropped, for comparing output
// items of two responses.
func withoutIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "id" {
				out[k] = withoutIDs(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutIDs(e)
		}
		return out
	}
	return v
}

func TestResponsesWire(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "<think>I think.</think>\n\nThe answer."})
	v := createResponse(t, ts, `{"model": "tiny", "input": "Hi", "metadata": {"k": "v"}}`)
	if id, _ := v["id"].(string); !strings.HasPrefix(id, "resp_") || v["object"] != "response" || v["status"] != "completed" ||
		v["completed_at"] == nil || v["model"] != "tiny" || v["error"] != nil || v["incomplete_details"] != nil {
		t.Errorf("response %v", v)
	}
	if v["tool_choice"] != "auto" || v["store"] != true || v["parallel_tool_calls"] != true || v["metadata"].(map[string]any)["k"] != "v" {
		t.Errorf("echoed settings %v", v)
	}
	out := v["output"].([]any)
	if len(out) != 2 {
		t.Fatalf("output %v", out)
	}
	rs, msg := out[0].(map[string]any), out[1].(map[string]any)
	if rs["type"] != "reasoning" || !strings.HasPrefix(rs["id"].(string), "rs_") || len(rs["summary"].([]any)) != 0 ||
		!reflect.DeepEqual(rs["content"], []any{map[string]any{"type": "reasoning_text", "text": "I think."}}) {
		t.Errorf("reasoning item %v", rs)
	}
	if msg["type"] != "message" || msg["role"] != "assistant" || msg["status"] != "completed" || !strings.HasPrefix(msg["id"].(string), "msg_") ||
		!reflect.DeepEqual(msg["content"], []any{map[string]any{"type": "output_text", "text": "The answer.", "annotations": []any{}, "logprobs": []any{}}}) {
		t.Errorf("message item %v", msg)
	}
	u := v["usage"].(map[string]any)
	in, outTok := u["input_tokens"].(float64), u["output_tokens"].(float64)
	reasoning := u["output_tokens_details"].(map[string]any)["reasoning_tokens"].(float64)
	if in < 1 || outTok < 4 || u["total_tokens"] != in+outTok || reasoning < 3 || reasoning >= outTok {
		t.Errorf("usage %v", u)
	}
	if _, ok := u["input_tokens_details"].(map[string]any)["cached_tokens"]; !ok {
		t.Errorf("usage without cached_tokens: %v", u)
	}

	// Streamed: OpenAI's event sequence, and the same output.
	evs := streamResponse(t, ts, `{"model": "tiny", "input": "Hi", "stream": true}`)
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
		"response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed"}
	if got := eventNames(evs); !reflect.DeepEqual(got, want) {
		t.Errorf("events\n%v\nwant\n%v", got, want)
	}
	items := checkItems(t, evs)
	final := evs[len(evs)-1].data["response"].(map[string]any)
	if created := evs[0].data["response"].(map[string]any); created["id"] != final["id"] || created["status"] != "in_progress" || len(created["output"].([]any)) != 0 {
		t.Errorf("response.created %v", created)
	}
	var itemList []any
	for _, it := range items {
		itemList = append(itemList, it)
	}
	if !reflect.DeepEqual(withoutIDs(final["output"]), withoutIDs(out)) || !reflect.DeepEqual(withoutIDs(itemList), withoutIDs(out)) {
		t.Errorf("streamed output %v, items %v; not streamed %v", final["output"], items, out)
	}

	// The official Go client decodes both.
	c := client(ts)
	r, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: "tiny",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if r.OutputText() != "The answer." || r.Usage.OutputTokensDetails.ReasoningTokens == 0 || r.Output[0].Type != "reasoning" {
		t.Errorf("openai-go: %q, %+v", r.OutputText(), r.Usage)
	}
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "tiny",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	var text, last string
	for stream.Next() {
		ev := stream.Current()
		if ev.Type == "response.output_text.delta" {
			text += ev.Delta
		}
		last = ev.Type
	}
	if err := stream.Err(); err != nil || text != "The answer." || last != "response.completed" {
		t.Errorf("openai-go stream: %v, text %q, last %q", err, text, last)
	}
}

// TestResponsesSummary checks reasoning returned as a summary when the
// request asks for one.
func TestResponsesSummary(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "<think>I think.</think>\n\nThe answer."})
	body := `{"input": "Hi", "reasoning": {"effort": "high", "summary": "auto"}, "stream": true}`
	evs := streamResponse(t, ts, body)
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed"}
	if got := eventNames(evs); !reflect.DeepEqual(got, want) {
		t.Errorf("events\n%v\nwant\n%v", got, want)
	}
	items := checkItems(t, evs)
	if rs := items[0]; !reflect.DeepEqual(rs["summary"], []any{map[string]any{"type": "summary_text", "text": "I think."}}) || rs["content"] != nil {
		t.Errorf("reasoning item %v", rs)
	}
	final := evs[len(evs)-1].data["response"].(map[string]any)
	if r := final["reasoning"].(map[string]any); r["effort"] != "high" || r["summary"] != "auto" {
		t.Errorf("reasoning %v", r)
	}
}

// TestResponsesIncomplete checks a response cut by max_output_tokens.
func TestResponsesIncomplete(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "One two three four five six seven."})
	v := createResponse(t, ts, `{"input": "Hi", "max_output_tokens": 3}`)
	msg := v["output"].([]any)[0].(map[string]any)
	if v["status"] != "incomplete" || v["completed_at"] != nil || msg["status"] != "incomplete" || v["max_output_tokens"] != 3.0 ||
		!reflect.DeepEqual(v["incomplete_details"], map[string]any{"reason": "max_output_tokens"}) {
		t.Errorf("response %v", v)
	}
	evs := streamResponse(t, ts, `{"input": "Hi", "max_output_tokens": 3, "stream": true}`)
	checkItems(t, evs)
	if last := evs[len(evs)-1]; last.name != "response.incomplete" || last.data["response"].(map[string]any)["status"] != "incomplete" {
		t.Errorf("last event %v", last)
	}
}

// TestResponsesLogprobs checks output_text's log-probabilities: one per
// token of the text, the same streamed.
func TestResponsesLogprobs(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "The answer is here."})
	body := `{"input": "Hi", "include": ["message.output_text.logprobs"], "top_logprobs": 2`
	v := createResponse(t, ts, body+`}`)
	part := v["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)
	lps := part["logprobs"].([]any)
	var text string
	for _, lp := range lps {
		e := lp.(map[string]any)
		text += e["token"].(string)
		if len(e["top_logprobs"].([]any)) != 2 || e["bytes"] == nil {
			t.Errorf("logprob %v", e)
		}
	}
	if text != part["text"] {
		t.Errorf("tokens %q, text %q", text, part["text"])
	}
	var streamed []any
	for _, ev := range streamResponse(t, ts, body+`, "stream": true}`) {
		if ev.name == "response.output_text.delta" {
			streamed = append(streamed, ev.data["logprobs"].([]any)...)
		}
	}
	if !reflect.DeepEqual(streamed, lps) {
		t.Errorf("streamed logprobs %v, not %v", streamed, lps)
	}
}

const flatWeatherTool = `{"type": "function", "name": "get_weather", "description": "the weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}`

func TestResponsesTools(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"})
	body := `{"input": "Weather in Paris?", "tools": [` + flatWeatherTool + `]`
	v := createResponse(t, ts, body+`}`)
	out := v["output"].([]any)
	call := out[0].(map[string]any)
	if len(out) != 1 || call["type"] != "function_call" || call["name"] != "get_weather" || call["arguments"] != `{"city":"Paris"}` ||
		call["status"] != "completed" || !strings.HasPrefix(call["id"].(string), "fc_") || !strings.HasPrefix(call["call_id"].(string), "call_") {
		t.Errorf("output %v", out)
	}
	tool := v["tools"].([]any)[0].(map[string]any)
	if tool["name"] != "get_weather" || tool["strict"] != true || tool["type"] != "function" {
		t.Errorf("tools echoed %v", tool)
	}
	evs := streamResponse(t, ts, body+`, "tool_choice": {"type": "function", "name": "get_weather"}, "stream": true}`)
	want := []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"}
	if got := eventNames(evs); !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if items := checkItems(t, evs); items[0]["arguments"] != `{"city":"Paris"}` {
		t.Errorf("streamed call %v", items[0])
	}

	// The call and its output given back render as the template's
	// assistant tool call and tool response.
	req := responsesRequest{Input: json.RawMessage(`[{"role": "user", "content": "Weather in Paris?"},
		{"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
		{"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": "18 C"}]}]`),
		Tools: []json.RawMessage{json.RawMessage(flatWeatherTool)}}
	conv, e := ts.srv.responsesChat(&req)
	if e != nil {
		t.Fatal(e)
	}
	msgs := conv.chat.Messages
	if len(msgs) != 3 || msgs[1].Role != "assistant" || msgs[1].ToolCalls[0].ID != "call_1" || msgs[2].Role != "tool" ||
		msgs[2].ToolCallID != "call_1" || msgs[2].Name != "get_weather" {
		t.Fatalf("messages %+v", msgs)
	}
	prompt, e := renderChat(ts.model, &conv.chat)
	if e != nil {
		t.Fatal(e)
	}
	for _, s := range []string{`"name": "get_weather", "arguments": {"city": "Paris"}`, "<tool_response>\n18 C\n</tool_response>"} {
		if !strings.Contains(prompt, s) {
			t.Errorf("prompt lacks %q:\n%s", s, prompt)
		}
	}

	// allowed_tools: the template gets the tools it names, the response
	// echoes all.
	timeTool := `{"type": "function", "name": "get_time", "parameters": {"type": "object"}}`
	v = createResponse(t, ts, `{"input": "x", "tools": [`+flatWeatherTool+`, `+timeTool+`],
		"tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_time"}]}}`)
	if len(v["tools"].([]any)) != 2 || v["tool_choice"].(map[string]any)["type"] != "allowed_tools" {
		t.Errorf("echoed tools %v, tool_choice %v", v["tools"], v["tool_choice"])
	}
	req = responsesRequest{Input: json.RawMessage(`"x"`), Tools: []json.RawMessage{json.RawMessage(flatWeatherTool), json.RawMessage(timeTool)},
		ToolChoice: json.RawMessage(`{"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_time"}]}`)}
	if conv, e = ts.srv.responsesChat(&req); e != nil {
		t.Fatal(e)
	}
	if prompt, e = renderChat(ts.model, &conv.chat); e != nil {
		t.Fatal(e)
	}
	if !strings.Contains(prompt, `"name": "get_time"`) || strings.Contains(prompt, "get_weather") || string(conv.chat.ToolChoice) != `"required"` {
		t.Errorf("tool_choice %s, prompt:\n%s", conv.chat.ToolChoice, prompt)
	}
}

func TestResponsesPrevious(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "<think>Hm.</think>\n\nHello Ada."})
	first := createResponse(t, ts, `{"input": "I am Ada.", "instructions": "Be brief."}`)
	id := first["id"].(string)
	second := createResponse(t, ts, `{"input": "Who am I?", "previous_response_id": "`+id+`"}`)
	if second["previous_response_id"] != id || second["instructions"] != nil {
		t.Errorf("second %v", second)
	}
	// The follow-up's conversation: the first's input and output, then
	// its own input; the first's instructions are not carried over.
	req := responsesRequest{Input: json.RawMessage(`"Who am I?"`), PreviousResponseID: &id}
	conv, e := ts.srv.responsesChat(&req)
	if e != nil {
		t.Fatal(e)
	}
	var roles []string
	for _, m := range conv.chat.Messages {
		roles = append(roles, m.Role+":"+string(m.Content))
	}
	if want := []string{`user:"I am Ada."`, `assistant:"Hello Ada."`, `user:"Who am I?"`}; !reflect.DeepEqual(roles, want) ||
		*conv.chat.Messages[1].ReasoningContent != "Hm." {
		t.Errorf("messages %v, want %v", roles, want)
	}

	// GET answers the stored response as it was.
	resp, err := http.Get(ts.URL + "/v1/responses/" + id)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != 200 || !reflect.DeepEqual(got, first) {
		t.Errorf("GET: %d %v, want %v", resp.StatusCode, got, first)
	}

	// An item of a stored response is referred to by its id.
	msgID := first["output"].([]any)[1].(map[string]any)["id"].(string)
	createResponse(t, ts, `{"input": [{"role": "user", "content": "I am Ada."}, {"type": "item_reference", "id": "`+msgID+`"}, {"role": "user", "content": "Who am I?"}]}`)

	// store: false is not kept; unknown ids are 400s (404 for GET).
	unstored := createResponse(t, ts, `{"input": "x", "store": false}`)
	for _, tc := range []struct{ body, param, code string }{
		{`{"input": "x", "previous_response_id": "resp_nothing"}`, "previous_response_id", "previous_response_not_found"},
		{`{"input": "x", "previous_response_id": "` + unstored["id"].(string) + `"}`, "previous_response_id", "previous_response_not_found"},
		{`{"input": [{"type": "item_reference", "id": "msg_nothing"}]}`, "input[0].id", "item_not_found"},
	} {
		status, v, _ := ts.post(t, "/v1/responses", tc.body)
		if e := errorOf(t, v); status != 400 || e["param"] != tc.param || e["code"] != tc.code {
			t.Errorf("%s: %d %v", tc.body, status, e)
		}
	}
	resp, err = http.Get(ts.URL + "/v1/responses/" + unstored["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET of a store: false response: %d", resp.StatusCode)
	}
}

// TestResponseStoreBound checks the store's LRU bound in bytes.
func TestResponseStoreBound(t *testing.T) {
	st := newResponseStore(1 << 20)
	put := func(id string) {
		st.put(&responseObject{ID: id}, []convItem{{Kind: "message", Role: "user", Text: strings.Repeat("x", 400)}}, 1,
			[]convItem{{Kind: "message", ID: "msg_" + id, Role: "assistant", Text: "ok"}})
	}
	put("a")
	st.limit = 3 * st.size // three responses
	put("b")
	if _, ok := st.history("a"); !ok { // a is now the most recent
		t.Fatal("a was not kept")
	}
	put("c")
	put("d") // over the bound: b, the least recently used, goes
	if _, ok := st.lookup("b"); ok {
		t.Error("b was kept past the bound")
	}
	if _, ok := st.item("msg_b"); ok {
		t.Error("b's item was kept past the bound")
	}
	for _, id := range []string{"a", "c", "d"} {
		if h, ok := st.history(id); !ok || len(h) != 2 || h[1].ID != "msg_"+id {
			t.Errorf("%s: %v %v", id, h, ok)
		}
	}
	if st.size > st.limit {
		t.Errorf("size %d over %d", st.size, st.limit)
	}
	st.put(&responseObject{ID: "huge"}, []convItem{{Text: strings.Repeat("x", st.limit)}}, 1, nil)
	if _, ok := st.lookup("huge"); ok {
		t.Error("a response larger than the store was kept")
	}
}

func TestResponsesBadRequests(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", ctx: 64})
	tools := `"tools": [` + flatWeatherTool + `]`
	tests := []struct {
		name, body string
		status     int
		param, msg string
	}{
		{"no input", `{"model": "tiny"}`, 400, "input", "input is required"},
		{"empty input", `{"input": []}`, 400, "input", "input is required"},
		{"input type", `{"input": 3}`, 400, "input", "a string or an array"},
		{"item type", `{"input": [3]}`, 400, "input[0]", "must be an object"},
		{"field type", `{"input": [{"role": "user", "content": "x", "call_id": 5}]}`, 400, "input[0].call_id", "expected a string"},
		{"role", `{"input": [{"role": "tool", "content": "x"}]}`, 400, "input[0].role", `"tool" is not one of`},
		{"no role", `{"input": [{"content": "x"}]}`, 400, "input[0].role", "role is required"},
		{"no content", `{"input": [{"role": "user"}]}`, 400, "input[0].content", "is required"},
		{"image", `{"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "http://x"}]}]}`, 400, "input[0].content[0]", "text only"},
		{"part type", `{"input": [{"role": "user", "content": [{"type": "video"}]}]}`, 400, "input[0].content[0].type", "unknown content part"},
		{"part text", `{"input": [{"role": "user", "content": [{"type": "input_text"}]}]}`, 400, "input[0].content[0].text", "needs text"},
		{"call id", `{"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]}`, 400, "input[0].call_id", "required"},
		{"call name", `{"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]}`, 400, "input[0].name", "required"},
		{"call args", `{"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": 5}]}`, 400, "input[0].arguments", "JSON object"},
		{"output", `{"input": [{"type": "function_call_output", "call_id": "c"}]}`, 400, "input[0].output", "required"},
		{"reasoning", `{"input": [{"type": "reasoning", "content": [{"type": "x"}]}]}`, 400, "input[0].content[0]", "reasoning_text"},
		{"item kind", `{"input": [{"type": "web_search_call"}]}`, 400, "input[0].type", "not supported"},
		{"tool type", `{"input": "x", "tools": [{"type": "web_search"}]}`, 400, "tools[0].type", "function tools only"},
		{"tool name", `{"input": "x", "tools": [{"type": "function"}]}`, 400, "tools[0].name", "required"},
		{"tool params", `{"input": "x", "tools": [{"type": "function", "name": "f", "parameters": 3}], "tool_choice": "required"}`, 400, "tools[0].parameters", "JSON schema"},
		{"tool_choice", `{"input": "x", ` + tools + `, "tool_choice": "sometimes"}`, 400, "tool_choice", "not one of"},
		{"tool_choice type", `{"input": "x", ` + tools + `, "tool_choice": {"type": "file_search"}}`, 400, "tool_choice.type", "not supported"},
		{"tool_choice name", `{"input": "x", ` + tools + `, "tool_choice": {"type": "function", "name": "g"}}`, 400, "tool_choice.name", "not among the tools"},
		{"tool_choice no tools", `{"input": "x", "tool_choice": "required"}`, 400, "tool_choice", "needs tools"},
		{"allowed_tools", `{"input": "x", ` + tools + `, "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "g"}]}}`, 400, "tool_choice.tools[0]", "among the tools"},
		{"two constraints", `{"input": "x", ` + tools + `, "tool_choice": "required", "text": {"format": {"type": "json_object"}}}`, 400, "tool_choice", "text.format both constrain"},
		{"effort type", `{"input": "x", "reasoning": {"effort": 3}}`, 400, "reasoning.effort", "expected a string"},
		{"format type", `{"input": "x", "text": {"format": {"type": "xml"}}}`, 400, "text.format.type", "not one of"},
		{"format schema", `{"input": "x", "text": {"format": {"type": "json_schema", "name": "p"}}}`, 400, "text.format.schema", "needs a schema"},
		{"format bad schema", `{"input": "x", "text": {"format": {"type": "json_schema", "name": "p", "schema": 3}}}`, 400, "text.format.schema", "JSON schema"},
		{"effort", `{"input": "x", "reasoning": {"effort": "extreme"}}`, 400, "reasoning.effort", "not one of"},
		{"summary", `{"input": "x", "reasoning": {"summary": "long"}}`, 400, "reasoning.summary", "not one of"},
		{"max_output_tokens", `{"input": "x", "max_output_tokens": 0}`, 400, "max_output_tokens", "at least 1"},
		{"max_output_tokens type", `{"input": "x", "max_output_tokens": 1.5}`, 400, "max_output_tokens", "expected an integer"},
		{"temperature", `{"input": "x", "temperature": 3}`, 400, "temperature", "outside [0, 2]"},
		{"top_logprobs", `{"input": "x", "top_logprobs": 21}`, 400, "top_logprobs", "outside [0, 20]"},
		{"metadata", `{"input": "x", "metadata": {"k": 1}}`, 400, "metadata", "expected a string"},
		{"metadata size", `{"input": "x", "metadata": {"k": "` + strings.Repeat("v", 513) + `"}}`, 400, "metadata.k", "512"},
		{"background", `{"input": "x", "background": true}`, 400, "background", "not supported"},
		{"conversation", `{"input": "x", "conversation": "conv_1"}`, 400, "conversation", "previous_response_id"},
		{"truncation", `{"input": "x", "truncation": "middle"}`, 400, "truncation", "not one of"},
		{"too long", `{"input": "` + strings.Repeat("word ", 100) + `"}`, 400, "input", "context is 64 tokens"},
		{"unknown model", `{"model": "gpt-9", "input": "x"}`, 404, "model", "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, v, _ := ts.post(t, "/v1/responses", tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, v)
			}
			e := errorOf(t, v)
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not contain %q", msg, tc.msg)
			}
			if e["param"] != tc.param {
				t.Errorf("param %v, want %q", e["param"], tc.param)
			}
		})
	}
}

// TestResponsesTextFormat drives text.format on the golden model: every
// reply that ends is JSON valid against the schema.
func TestResponsesTextFormat(t *testing.T) {
	ts := modelServer(t)
	schema := compileSchema(t, personSchema)
	const n = 4
	bodies, errs := replies(n, func(i int) (map[string]any, error) {
		body := fmt.Sprintf(`{"input": "Describe a person.", "temperature": 1, "seed": %d, "max_output_tokens": %d, "stream": %t,
			"reasoning": {"effort": "none"}, "text": {"format": {"type": "json_schema", "name": "person", "strict": true, "schema": %s}}}`,
			i, replyTokens, i%2 == 1, personSchema)
		if i%2 == 0 {
			return createResponse(t, ts, body), nil
		}
		evs := streamResponse(t, ts, body)
		return evs[len(evs)-1].data["response"].(map[string]any), nil
	})
	stopped := 0
	for i, v := range bodies {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if v["status"] != "completed" {
			continue
		}
		stopped++
		out := v["output"].([]any)
		text := out[len(out)-1].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
		if err := validate(schema, text); err != nil {
			t.Errorf("reply %d %q: %v", i, text, err)
		}
	}
	checkStops(t, "text.format", stopped, n)
}

// FuzzResponsesInput sends arbitrary input items (and whole bodies) to
// /v1/responses: the answer is a success or a client error naming what
// was wrong, never a 500 or a panic.
//
//	go test ./server -run '^$' -fuzz FuzzResponsesInput -fuzztime 20s
func FuzzResponsesInput(f *testing.F) {
	seeds := []string{
		`"Hi"`,
		`[{"role": "user", "content": "Hi"}]`,
		`[{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "x"}, {"type": "input_text", "text": "y"}]}]`,
		`[{"role": "user", "content": "Hi"}, {"type": "reasoning", "summary": [{"type": "summary_text", "text": "r"}]}, {"role": "assistant", "content": [{"type": "output_text", "text": "a"}]}]`,
		`[{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{\"a\":1}"}, {"type": "function_call_output", "call_id": "c", "output": "2"}]`,
		`[{"type": "reasoning", "content": [{"type": "reasoning_text", "text": "t"}]}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": [1]}}]`,
		`[{"type": "item_reference", "id": "msg_seed"}, {"role": "user", "content": [{"type": "refusal", "refusal": "no"}]}]`,
		`[{"role": "assistant", "content": null}, {"role": "user", "content": ""}]`,
		`[null]`, `[[]]`, `{"a": 1}`, `null`, `[{"role": "user", "content": [{}]}]`, "\"\xff\"",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	ts := newTestServer(f, serverOpts{reply: "<think>\nok\n</think>\n\nfine <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", ctx: 256})
	ts.srv.responses.put(&responseObject{ID: "resp_seed"}, nil, 0, []convItem{{Kind: "message", ID: "msg_seed", Role: "assistant", Text: "a"}})
	extras := []string{``, `, "stream": true`, `, "tools": [` + flatWeatherTool + `], "tool_choice": "auto"`, `, "previous_response_id": "resp_seed"`,
		`, "instructions": "Be brief.", "reasoning": {"summary": "auto"}`}
	f.Fuzz(func(t *testing.T, which uint8, input []byte) {
		body := `{"max_output_tokens": 4, "input": ` + string(input) + extras[int(which)%len(extras)] + `}`
		req := httptest.NewRequest("POST", "/v1/responses", strings.NewReader(body))
		rec := httptest.NewRecorder()
		ts.srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest:
			var e struct {
				Error *struct {
					Message string `json:"message"`
					Param   string `json:"param"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" {
				t.Fatalf("400 with body %q", rec.Body.Bytes())
			}
		default:
			t.Fatalf("status %d for %s: %s", rec.Code, body, rec.Body.Bytes())
		}
		// The input alone decodes without a panic, its errors naming it.
		if _, e := decodeInput(input, ts.srv.responses); e != nil {
			if p, _ := e.Param.(string); e.Status != 400 || !strings.HasPrefix(p, "input") {
				t.Fatalf("decodeInput(%q): %d %v", input, e.Status, e.Param)
			}
		}
	})
}

// TestResponsesAuth checks that both routes need the API key.
func TestResponsesAuth(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", apiKey: "s3cret"})
	if status, _, _ := ts.post(t, "/v1/responses", `{"input": "x"}`); status != http.StatusUnauthorized {
		t.Errorf("POST without the key: %d", status)
	}
	status, v, _ := ts.post(t, "/v1/responses", `{"input": "x"}`, "Authorization", "Bearer s3cret")
	if status != http.StatusOK {
		t.Fatalf("POST with the key: %d %v", status, v)
	}
	for key, want := range map[string]int{"": http.StatusUnauthorized, "Bearer s3cret": http.StatusOK} {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/responses/"+v["id"].(string), nil)
		if key != "" {
			req.Header.Set("Authorization", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET with %q: %d, want %d", key, resp.StatusCode, want)
		}
	}
}
