package server

// Tests that drive the server with the official OpenAI Go client, on a
// scripted model whose replies are fixed text (the real model's path is
// tested in cmd/inferno, against the binary).

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

func client(ts *testServer) openai.Client {
	return openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

func userTurn(text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: "tiny", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}}
}

// extra returns a response field the client does not know, decoded.
func extra(t *testing.T, raw string) string {
	t.Helper()
	if raw == "" {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return s
}

func TestClientChat(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "The capital of France is Paris."})
	c := client(ts)
	ctx := context.Background()
	resp, err := c.Chat.Completions.New(ctx, userTurn("What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "The capital of France is Paris." {
		t.Errorf("content %q", got)
	}
	if resp.Choices[0].FinishReason != "stop" || resp.Object != "chat.completion" || !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Errorf("finish %q object %q id %q", resp.Choices[0].FinishReason, resp.Object, resp.ID)
	}
	u := resp.Usage
	if u.PromptTokens != 15 || u.CompletionTokens != 8 || u.TotalTokens != 23 {
		t.Errorf("usage %+v", u)
	}

	// Streaming, with usage: the accumulated message equals the whole one.
	p := userTurn("What is the capital of France?")
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(ctx, p)
	var acc openai.ChatCompletionAccumulator
	var last openai.CompletionUsage
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if u := stream.Current().Usage; u.TotalTokens > 0 {
			last = u
		}
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "The capital of France is Paris." {
		t.Errorf("streamed content %q", got)
	}
	if acc.Choices[0].FinishReason != "stop" || last.CompletionTokens != 8 || last.PromptTokens != 15 {
		t.Errorf("streamed finish %q usage %+v", acc.Choices[0].FinishReason, last)
	}
	if chunks < 5 {
		t.Errorf("only %d chunks", chunks)
	}

	// max_tokens cuts the reply with finish_reason length.
	p = userTurn("Hi")
	p.MaxTokens = openai.Int(3)
	resp, err = c.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].FinishReason != "length" || resp.Usage.CompletionTokens != 3 || resp.Choices[0].Message.Content != "The capital of" {
		t.Errorf("max_tokens: finish %q, %d tokens, %q", resp.Choices[0].FinishReason, resp.Usage.CompletionTokens, resp.Choices[0].Message.Content)
	}
}

// TestStreamFormat checks the raw stream: data lines only, the role
// first, a finish reason, the usage chunk with no choices, [DONE] last.
func TestStreamFormat(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hello there"})
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	ev := sseEvents(t, resp.Body)
	if len(ev) < 4 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("events %q", ev)
	}
	var first, usage struct {
		Object  string `json:"object"`
		Choices []struct {
			Delta        map[string]any `json:"delta"`
			FinishReason *string        `json:"finish_reason"`
		} `json:"choices"`
		Usage *usage `json:"usage"`
	}
	json.Unmarshal([]byte(ev[0]), &first)
	json.Unmarshal([]byte(ev[len(ev)-2]), &usage)
	if first.Object != "chat.completion.chunk" || first.Choices[0].Delta["role"] != "assistant" {
		t.Errorf("first chunk %s", ev[0])
	}
	if len(usage.Choices) != 0 || usage.Usage == nil || usage.Usage.CompletionTokens != 3 {
		t.Errorf("usage chunk %s", ev[len(ev)-2])
	}
	var text strings.Builder
	finishes := 0
	for _, e := range ev[:len(ev)-2] {
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Choices[0].Delta.Content)
		if c.Choices[0].FinishReason != nil {
			finishes++
			if *c.Choices[0].FinishReason != "stop" {
				t.Errorf("finish %q", *c.Choices[0].FinishReason)
			}
		}
	}
	if text.String() != "Hello there" || finishes != 1 {
		t.Errorf("text %q, %d finish reasons", text.String(), finishes)
	}
}

func weatherTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("The weather in a city"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
	})
}

// TestClientToolCalls: a reply of two <tool_call> blocks comes back as
// tool_calls, streamed and not, with finish_reason tool_calls.
func TestClientToolCalls(t *testing.T) {
	reply := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>\n" +
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"
	ts := newTestServer(t, serverOpts{reply: reply})
	c := client(ts)
	p := userTurn("Weather in Paris and Oslo?")
	p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool()}
	check := func(name string, content string, finish string, calls []openai.ChatCompletionMessageToolCallUnion) {
		t.Helper()
		if finish != "tool_calls" {
			t.Errorf("%s: finish %q", name, finish)
		}
		if content != "" {
			t.Errorf("%s: content %q", name, content)
		}
		if len(calls) != 2 {
			t.Fatalf("%s: %d tool calls", name, len(calls))
		}
		want := []string{`{"city":"Paris","unit":"celsius"}`, `{"city":"Oslo"}`}
		for i, call := range calls {
			if call.Function.Name != "get_weather" || call.Function.Arguments != want[i] || !strings.HasPrefix(call.ID, "call_") || call.Type != "function" {
				t.Errorf("%s: call %d = %+v", name, i, call)
			}
		}
		if calls[0].ID == calls[1].ID {
			t.Errorf("%s: both calls have id %s", name, calls[0].ID)
		}
	}
	resp, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	check("whole", resp.Choices[0].Message.Content, string(resp.Choices[0].FinishReason), resp.Choices[0].Message.ToolCalls)

	stream := c.Chat.Completions.NewStreaming(context.Background(), p)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	check("streamed", acc.Choices[0].Message.Content, string(acc.Choices[0].FinishReason), acc.Choices[0].Message.ToolCalls)

	// Without tools in the request the same text is plain content.
	resp, err = c.Chat.Completions.New(context.Background(), userTurn("Weather?"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != reply || len(resp.Choices[0].Message.ToolCalls) != 0 || resp.Choices[0].FinishReason != "stop" {
		t.Errorf("no tools: %q, %d calls, %q", resp.Choices[0].Message.Content, len(resp.Choices[0].Message.ToolCalls), resp.Choices[0].FinishReason)
	}
}

// TestMalformedToolCall: a block that is not a valid call is content.
func TestMalformedToolCall(t *testing.T) {
	reply := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>"
	ts := newTestServer(t, serverOpts{reply: reply})
	p := userTurn("Weather?")
	p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool()}
	c := client(ts)
	resp, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if m := resp.Choices[0].Message; m.Content != reply || len(m.ToolCalls) != 0 || resp.Choices[0].FinishReason != "stop" {
		t.Errorf("malformed call: %q, %d calls, %q", m.Content, len(m.ToolCalls), resp.Choices[0].FinishReason)
	}
}

// TestClientReasoning: <think> comes back as reasoning_content.
func TestClientReasoning(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "<think>\nThe user greets me.\n</think>\n\nHello! How can I help?"})
	c := client(ts)
	resp, err := c.Chat.Completions.New(context.Background(), userTurn("Hi"))
	if err != nil {
		t.Fatal(err)
	}
	m := resp.Choices[0].Message
	if m.Content != "Hello! How can I help?" {
		t.Errorf("content %q", m.Content)
	}
	if r := extra(t, m.JSON.ExtraFields["reasoning_content"].Raw()); strings.TrimSpace(r) != "The user greets me." {
		t.Errorf("reasoning_content %q", r)
	}
	stream := c.Chat.Completions.NewStreaming(context.Background(), userTurn("Hi"))
	var content, reasoning strings.Builder
	for stream.Next() {
		ch := stream.Current()
		if len(ch.Choices) == 0 {
			continue
		}
		d := ch.Choices[0].Delta
		content.WriteString(d.Content)
		reasoning.WriteString(extra(t, d.JSON.ExtraFields["reasoning_content"].Raw()))
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if content.String() != m.Content || reasoning.String() != extra(t, m.JSON.ExtraFields["reasoning_content"].Raw()) {
		t.Errorf("streamed %q / %q, whole %q / %q", content.String(), reasoning.String(), m.Content, m.JSON.ExtraFields["reasoning_content"].Raw())
	}
}

// TestStopSplit: a stop string that spans two tokens is never emitted,
// streamed or not.
func TestStopSplit(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hello world, this is the end."})
	m := tinyModel(t)
	ids := m.Tokenizer.Encode("Hello world")
	if len(ids) != 2 {
		t.Fatalf("want two tokens for %q, got %v", "Hello world", ids)
	}
	c := client(ts)
	p := userTurn("Hi")
	p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"o w", "zzz"}}
	resp, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "Hell" || resp.Choices[0].FinishReason != "stop" {
		t.Errorf("content %q finish %q", got, resp.Choices[0].FinishReason)
	}
	stream := c.Chat.Completions.NewStreaming(context.Background(), p)
	var text strings.Builder
	for stream.Next() {
		if ch := stream.Current(); len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "Hell" {
		t.Errorf("streamed %q", text.String())
	}
}

func TestClientCompletions(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: " jumps over the lazy dog"})
	c := client(ts)
	p := openai.CompletionNewParams{Model: "tiny", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("The quick brown fox")},
		MaxTokens: openai.Int(64), Logprobs: openai.Int(2)}
	resp, err := c.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.Text != " jumps over the lazy dog" || ch.FinishReason != "stop" || resp.Usage.PromptTokens != 4 {
		t.Errorf("text %q finish %q usage %+v", ch.Text, ch.FinishReason, resp.Usage)
	}
	if n := len(ch.Logprobs.Tokens); n != int(resp.Usage.CompletionTokens) || len(ch.Logprobs.TopLogprobs[0]) != 2 {
		t.Errorf("%d logprob tokens for %d completion tokens; top %v", n, resp.Usage.CompletionTokens, ch.Logprobs.TopLogprobs)
	}
	if lp := ch.Logprobs.TokenLogprobs[0]; lp > 0 || lp < -1e-3 {
		t.Errorf("the scripted token's logprob %v, want about 0", lp)
	}
	stream := c.Completions.NewStreaming(context.Background(), p)
	var text strings.Builder
	for stream.Next() {
		text.WriteString(stream.Current().Choices[0].Text)
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != ch.Text {
		t.Errorf("streamed %q", text.String())
	}
	// Token ids as the prompt.
	p.Prompt = openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{785, 3974, 13876, 38835}}
	if resp, err = c.Completions.New(context.Background(), p); err != nil || resp.Usage.PromptTokens != 4 {
		t.Errorf("token prompt: %v %+v", err, resp)
	}
}

func TestClientLogprobs(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Yes"})
	p := userTurn("Hi")
	p.Logprobs = openai.Bool(true)
	p.TopLogprobs = openai.Int(3)
	c := client(ts)
	resp, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	lps := resp.Choices[0].Logprobs.Content
	if len(lps) != int(resp.Usage.CompletionTokens) {
		t.Fatalf("%d logprobs for %d tokens", len(lps), resp.Usage.CompletionTokens)
	}
	if lps[0].Token != "Yes" || len(lps[0].TopLogprobs) != 3 || lps[0].TopLogprobs[0].Token != "Yes" || len(lps[0].Bytes) != 3 {
		t.Errorf("first logprob %+v", lps[0])
	}
	if lps[0].TopLogprobs[1].Logprob > lps[0].TopLogprobs[0].Logprob {
		t.Error("top logprobs not in descending order")
	}
}

// TestErrorShapeWithClient: the client surfaces the server's errors.
func TestErrorShapeWithClient(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "x"})
	p := userTurn("Hi")
	p.Temperature = openai.Float(3)
	c := client(ts)
	_, err := c.Chat.Completions.New(context.Background(), p)
	var apiErr *openai.Error
	if err == nil || !asError(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "temperature") {
		t.Errorf("error %v", err)
	}
}

func asError(err error, target **openai.Error) bool {
	e, ok := err.(*openai.Error)
	if ok {
		*target = e
	}
	return ok
}
