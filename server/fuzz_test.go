package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

var fuzzPaths = []string{"/v1/chat/completions", "/v1/completions", "/tokenize", "/detokenize", "/apply-template"}

// FuzzRequest sends arbitrary bodies to every POST endpoint: whatever
// arrives, the answer is a success or a well-formed client error, never a
// 500 or a panic.
//
//	go test ./server -run '^$' -fuzz FuzzRequest -fuzztime 60s
func FuzzRequest(f *testing.F) {
	seeds := []string{
		`{"messages":[{"role":"user","content":"Hi"}],"max_tokens":3}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}],"stream":true,"max_tokens":2,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"system","content":"x"},{"role":"user","content":"Hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c","content":"2"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"max_tokens":2}`,
		`{"prompt":"The quick","max_tokens":2,"logprobs":2,"temperature":0.5,"seed":3,"stop":["x"]}`,
		`{"prompt":[1,2,3],"max_tokens":1,"logit_bias":{"5":100}}`,
		`{"content":"Hello <|im_end|>","with_pieces":true}`,
		`{"tokens":[1,2,3]}`,
		`{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hel"}],"continue_final_message":true,"chat_template_kwargs":{"enable_thinking":false}}`,
		`{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"a":[1,{"b":null}]}}}]}]}`,
		`{"messages": [`, `[]`, `null`, `{"temperature": 9}`, "\x00\xff",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	ts := newTestServer(f, serverOpts{reply: "<think>\nok\n</think>\n\nfine <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", ctx: 256, maxBody: 1 << 16})
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := fuzzPaths[int(which)%len(fuzzPaths)]
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		ts.srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			if ct := rec.Header().Get("Content-Type"); ct == "application/json" && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s: 200 with invalid JSON %q", path, rec.Body.Bytes())
			}
		case 400, 404, 413, 503:
			var e struct {
				Error *struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("%s: status %d with body %q", path, rec.Code, rec.Body.Bytes())
			}
		default:
			t.Fatalf("%s: status %d for %q: %s", path, rec.Code, body, rec.Body.Bytes())
		}
	})
}
