package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// TestChatChoices: a chat completion of n choices with a seed gives, as
// choice i, the reply the same request with seed+i gives alone (n = 1),
// streamed or not, with the official client; the usage counts the prompt
// once and every choice's tokens.
func TestChatChoices(t *testing.T) {
	ts := modelServer(t)
	msgs := `"messages": [{"role": "user", "content": "Who made the heaven?"}], "chat_template_kwargs": {"enable_thinking": false}, "max_tokens": 24, "temperature": 1`
	alone := make([]string, 3)
	completion := 0
	for i := range alone {
		status, v, _ := ts.post(t, "/v1/chat/completions", fmt.Sprintf(`{%s, "seed": %d}`, msgs, 40+i))
		if status != 200 {
			t.Fatalf("seed %d alone: status %d %v", 40+i, status, v)
		}
		alone[i] = v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
		completion += int(v["usage"].(map[string]any)["completion_tokens"].(float64))
	}
	if alone[0] == alone[1] && alone[1] == alone[2] {
		t.Fatalf("three seeds gave the same reply %q: the test cannot tell the choices apart", alone[0])
	}
	status, v, _ := ts.post(t, "/v1/chat/completions", fmt.Sprintf(`{%s, "seed": 40, "n": 3}`, msgs))
	if status != 200 {
		t.Fatalf("n = 3: status %d %v", status, v)
	}
	choices := v["choices"].([]any)
	if len(choices) != 3 {
		t.Fatalf("n = 3: %d choices", len(choices))
	}
	for i, c := range choices {
		ch := c.(map[string]any)
		if got := ch["message"].(map[string]any)["content"].(string); int(ch["index"].(float64)) != i || got != alone[i] {
			t.Errorf("choice %d (index %v): %q, alone with seed %d %q", i, ch["index"], got, 40+i, alone[i])
		}
	}
	u := v["usage"].(map[string]any)
	if got := int(u["completion_tokens"].(float64)); got != completion {
		t.Errorf("usage: %d completion tokens, the three alone %d", got, completion)
	}

	// Streamed, through the official client.
	cl := noThinkClient(ts)
	stream := cl.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:       "tiny",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Who made the heaven?")},
		MaxTokens:   openai.Int(24),
		Temperature: openai.Float(1),
		Seed:        openai.Int(40),
		N:           openai.Int(3),
	})
	texts := make([]strings.Builder, 3)
	for stream.Next() {
		chunk := stream.Current()
		for _, c := range chunk.Choices {
			if c.Index < 0 || c.Index > 2 {
				t.Fatalf("a chunk of choice %d", c.Index)
			}
			texts[c.Index].WriteString(c.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if texts[i].String() != alone[i] {
			t.Errorf("streamed choice %d: %q, alone %q", i, texts[i].String(), alone[i])
		}
	}
}

// TestCompletionChoices: a completions request of several prompts and n
// choices each, echo on, gives as choice p*n+i the prompt p followed by
// the text that prompt gives alone with seed+i, streamed or not; the
// usage counts each prompt once.
func TestCompletionChoices(t *testing.T) {
	ts := modelServer(t)
	prompts := []string{"In the beginning", "And God said"}
	const n = 2
	common := `"max_tokens": 12, "temperature": 1`
	var want []string
	completion := 0
	for _, p := range prompts {
		for i := range n {
			status, v, _ := ts.post(t, "/v1/completions", fmt.Sprintf(`{"prompt": %q, %s, "seed": %d}`, p, common, 7+i))
			if status != 200 {
				t.Fatalf("%q alone: status %d %v", p, status, v)
			}
			want = append(want, p+v["choices"].([]any)[0].(map[string]any)["text"].(string))
			completion += int(v["usage"].(map[string]any)["completion_tokens"].(float64))
		}
	}
	body := fmt.Sprintf(`{"prompt": [%q, %q], "n": %d, "echo": true, %s, "seed": 7}`, prompts[0], prompts[1], n, common)
	status, v, _ := ts.post(t, "/v1/completions", body)
	if status != 200 {
		t.Fatalf("status %d %v", status, v)
	}
	choices := v["choices"].([]any)
	if len(choices) != len(want) {
		t.Fatalf("%d choices, want %d", len(choices), len(want))
	}
	for k, c := range choices {
		ch := c.(map[string]any)
		if got := ch["text"].(string); int(ch["index"].(float64)) != k || got != want[k] {
			t.Errorf("choice %d (index %v): %q, want %q", k, ch["index"], got, want[k])
		}
	}
	if got := int(v["usage"].(map[string]any)["completion_tokens"].(float64)); got != completion {
		t.Errorf("usage: %d completion tokens, alone %d", got, completion)
	}

	// Streamed.
	req, _ := http.NewRequest("POST", ts.URL+"/v1/completions", strings.NewReader(strings.Replace(body, "{", `{"stream": true, `, 1)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	texts := make([]strings.Builder, len(want))
	for _, ev := range sseEvents(t, resp.Body) {
		if ev == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Index int    `json:"index"`
				Text  string `json:"text"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(ev), &chunk); err != nil {
			t.Fatalf("chunk %s: %v", ev, err)
		}
		for _, c := range chunk.Choices {
			if c.Index < 0 || c.Index >= len(want) {
				t.Fatalf("a chunk of choice %d", c.Index)
			}
			texts[c.Index].WriteString(c.Text)
		}
	}
	for k := range texts {
		if texts[k].String() != want[k] {
			t.Errorf("streamed choice %d: %q, want %q", k, texts[k].String(), want[k])
		}
	}
}
