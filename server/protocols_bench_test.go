package server

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// BenchmarkStreamProtocols streams the same chat, 256 tokens greedy from
// the scripted model, to 8 clients at once through each protocol that
// chats (OpenAI's chat completions and Responses, Anthropic's messages,
// ollama's /api/chat):
// what the protocols' layers cost per token, the engine's work being the
// same (nothing).
//
//	go test ./server -run '^$' -bench StreamProtocols -benchtime 20x
func BenchmarkStreamProtocols(b *testing.B) {
	ts := newTestServer(b, serverOpts{reply: strings.Repeat("word ", 300), parallel: 8, queue: 64})
	msgs := `"messages":[{"role":"user","content":"Tell me a story."}]`
	for _, p := range []struct{ name, path, body string }{
		{"openai", "/v1/chat/completions", `{` + msgs + `,"stream":true,"max_tokens":256,"temperature":0}`},
		{"responses", "/v1/responses", `{"input":"Tell me a story.","stream":true,"max_output_tokens":256,"temperature":0,"store":false}`},
		{"messages", "/v1/messages", `{"stream":true,"max_tokens":256,"temperature":0,` + msgs + `}`},
		{"ollama", "/api/chat", `{"model":"tiny",` + msgs + `,"options":{"num_predict":256,"temperature":0}}`},
	} {
		b.Run(p.name, func(b *testing.B) {
			const clients = 8
			for b.Loop() {
				var wg sync.WaitGroup
				for range clients {
					wg.Go(func() {
						resp, err := http.Post(ts.URL+p.path, "application/json", strings.NewReader(p.body))
						if err != nil {
							b.Error(err)
							return
						}
						defer resp.Body.Close()
						if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != 200 {
							b.Errorf("status %d, %v", resp.StatusCode, err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*clients*256)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
