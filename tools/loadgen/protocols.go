package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
)

// An api is a protocol loadgen speaks (-api): where its requests go, how
// a request is spelled, and how the events of its stream are read.
type api struct {
	name   string
	path   string
	ndjson bool // the stream is lines of JSON (ollama's), not server-sent events
	// body returns a request's body, its prompt drawn with rng.
	body func(o options, rng *rand.Rand) map[string]any
	// header sets the request's headers beyond Content-Type.
	header func(h http.Header, key string)
	// decode reads one event of the stream: a server-sent event's name
	// and data, or a line of NDJSON.
	decode func(event string, data []byte) (step, error)
}

// A step is what one event of a stream tells.
type step struct {
	text      bool // it carries generated text (content, reasoning or a tool call's arguments)
	prompt    int  // the prompt's tokens, when it reports them; -1 otherwise
	generated int  // the generated tokens, when it reports them; -1 otherwise
	end       bool // it is the stream's last event
}

// none is a step that tells nothing.
var none = step{prompt: -1, generated: -1}

// apiNames lists the protocols in the order -api's help names them.
var apiNames = []string{"completions", "chat", "responses", "messages", "ollama"}

var apis = map[string]*api{
	"completions": {name: "completions", path: "/v1/completions", body: completionsBody, header: bearer, decode: decodeOpenAI},
	"chat":        {name: "chat", path: "/v1/chat/completions", body: chatBody, header: bearer, decode: decodeOpenAI},
	"responses":   {name: "responses", path: "/v1/responses", body: responsesBody, header: bearer, decode: decodeResponses},
	"messages":    {name: "messages", path: "/v1/messages", body: messagesBody, header: anthropicHeader, decode: decodeMessages},
	"ollama":      {name: "ollama", path: "/api/chat", ndjson: true, body: ollamaBody, header: bearer, decode: decodeOllama},
}

// bearer sends the API key as OpenAI's clients (and ollama's, behind a
// proxy) do.
func bearer(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// anthropicHeader sends the API key and version as Anthropic's SDK does.
func anthropicHeader(h http.Header, key string) {
	h.Set("anthropic-version", "2023-06-01")
	if key != "" {
		h.Set("x-api-key", key)
	}
}

// openAISampling sets the sampling fields as OpenAI's APIs (and, for
// top_k, min_p and seed, vLLM's and inferno's extensions of them) spell
// them.
func openAISampling(o options, body map[string]any) {
	body["temperature"] = o.temperature
	body["top_p"] = o.topP
	if o.topK > 0 {
		body["top_k"] = o.topK
	}
	if o.minP > 0 {
		body["min_p"] = o.minP
	}
	if o.seed >= 0 {
		body["seed"] = o.seed
	}
	if o.model != "" {
		body["model"] = o.model
	}
}

// userMessage is the one message of a chat-shaped request.
func userMessage(rng *rand.Rand, o options) []map[string]any {
	return []map[string]any{{"role": "user", "content": textPrompt(rng, o.prompt)}}
}

// completionsBody is a /v1/completions request: a prompt of random token
// ids, json_schema (llama.cpp's field) for -json-schema.
func completionsBody(o options, rng *rand.Rand) map[string]any {
	body := map[string]any{
		"prompt":         tokenPrompt(rng, o.prompt, o.vocab),
		"max_tokens":     o.maxTokens,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if o.ignoreEOS {
		body["ignore_eos"] = true
	}
	openAISampling(o, body)
	if o.schema != nil {
		body["json_schema"] = o.schema
	}
	return body
}

// chatBody is a /v1/chat/completions request, Qwen3's thinking off.
func chatBody(o options, rng *rand.Rand) map[string]any {
	body := map[string]any{
		"messages":             userMessage(rng, o),
		"max_tokens":           o.maxTokens,
		"stream":               true,
		"stream_options":       map[string]any{"include_usage": true},
		"chat_template_kwargs": map[string]any{"enable_thinking": false},
	}
	if o.ignoreEOS {
		body["ignore_eos"] = true
	}
	openAISampling(o, body)
	if o.schema != nil {
		body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "loadgen", "schema": o.schema}}
	}
	return body
}

// responsesBody is a /v1/responses request: reasoning effort "none"
// turns Qwen3's thinking off.
func responsesBody(o options, rng *rand.Rand) map[string]any {
	body := map[string]any{
		"input":             textPrompt(rng, o.prompt),
		"max_output_tokens": o.maxTokens,
		"stream":            true,
		"reasoning":         map[string]any{"effort": "none"},
	}
	openAISampling(o, body)
	if o.schema != nil {
		body["text"] = map[string]any{"format": map[string]any{"type": "json_schema", "name": "loadgen", "schema": o.schema}}
	}
	return body
}

// messagesBody is an Anthropic /v1/messages request, thinking disabled.
// Anthropic's API has no min_p and no seed (checkOptions refuses them).
func messagesBody(o options, rng *rand.Rand) map[string]any {
	body := map[string]any{
		"model":       o.model,
		"messages":    userMessage(rng, o),
		"max_tokens":  o.maxTokens,
		"stream":      true,
		"thinking":    map[string]any{"type": "disabled"},
		"temperature": o.temperature,
		"top_p":       o.topP,
	}
	if o.topK > 0 {
		body["top_k"] = o.topK
	}
	if o.schema != nil {
		body["output_config"] = map[string]any{"format": map[string]any{"type": "json_schema", "schema": o.schema}}
	}
	return body
}

// ollamaBody is an ollama /api/chat request, think false, its sampling
// in options.
func ollamaBody(o options, rng *rand.Rand) map[string]any {
	opts := map[string]any{"num_predict": o.maxTokens, "temperature": o.temperature, "top_p": o.topP}
	if o.topK > 0 {
		opts["top_k"] = o.topK
	}
	if o.minP > 0 {
		opts["min_p"] = o.minP
	}
	if o.seed >= 0 {
		opts["seed"] = o.seed
	}
	body := map[string]any{
		"model":    o.model,
		"messages": userMessage(rng, o),
		"stream":   true,
		"think":    false,
		"options":  opts,
	}
	if o.schema != nil {
		body["format"] = o.schema
	}
	return body
}

// openAIError is the error object of OpenAI's streams.
type openAIError struct {
	Message string `json:"message"`
}

// decodeOpenAI reads a chunk of a /v1/completions or /v1/chat/completions
// stream: a choice's text, or its delta's content, reasoning or tool
// calls, and the usage of the last chunk.
func decodeOpenAI(_ string, data []byte) (step, error) {
	if string(data) == "[DONE]" {
		return step{prompt: -1, generated: -1, end: true}, nil
	}
	var c struct {
		Choices []struct {
			Text  string `json:"text"`
			Delta struct {
				Content          string            `json:"content"`
				ReasoningContent string            `json:"reasoning_content"`
				ToolCalls        []json.RawMessage `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
		Error *openAIError `json:"error"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return none, fmt.Errorf("a chunk that is not JSON: %w", err)
	}
	if c.Error != nil {
		return none, errors.New(c.Error.Message)
	}
	s := none
	for _, ch := range c.Choices {
		d := ch.Delta
		s.text = s.text || ch.Text != "" || d.Content != "" || d.ReasoningContent != "" || len(d.ToolCalls) > 0
	}
	if c.Usage != nil {
		s.prompt, s.generated = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	return s, nil
}

// decodeResponses reads an event of a /v1/responses stream: text deltas,
// and the usage of response.completed (or response.incomplete, the end
// of a response that reached max_output_tokens).
func decodeResponses(event string, data []byte) (step, error) {
	var ev struct {
		Type     string `json:"type"`
		Delta    string `json:"delta"`
		Message  string `json:"message"` // an error event's
		Response *struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
			Usage *struct {
				InputTokens  int `json:"input_tokens"`
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		} `json:"response"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return none, fmt.Errorf("a %s event that is not JSON: %w", event, err)
	}
	s := none
	switch ev.Type {
	case "response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta",
		"response.function_call_arguments.delta", "response.refusal.delta":
		s.text = ev.Delta != ""
	case "response.completed", "response.incomplete":
		if ev.Response == nil || ev.Response.Usage == nil {
			return none, fmt.Errorf("a %s event without the response's usage", ev.Type)
		}
		s.prompt, s.generated, s.end = ev.Response.Usage.InputTokens, ev.Response.Usage.OutputTokens, true
	case "response.failed":
		if ev.Response != nil && ev.Response.Error != nil {
			return none, fmt.Errorf("response.failed: %s", ev.Response.Error.Message)
		}
		return none, errors.New("response.failed without an error")
	case "error":
		return none, errors.New(ev.Message)
	}
	return s, nil
}

// decodeMessages reads an event of an Anthropic /v1/messages stream: the
// prompt's tokens in message_start, text deltas in content_block_delta,
// the generated tokens in message_delta, message_stop its end.
func decodeMessages(event string, data []byte) (step, error) {
	type usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	}
	var ev struct {
		Type    string `json:"type"`
		Message *struct {
			Usage usage `json:"usage"`
		} `json:"message"`
		Delta struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			Thinking    string `json:"thinking"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
		Usage *usage `json:"usage"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return none, fmt.Errorf("a %s event that is not JSON: %w", event, err)
	}
	s := none
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			s.prompt = ev.Message.Usage.InputTokens
		}
	case "content_block_delta":
		d := ev.Delta
		s.text = d.Text != "" || d.Thinking != "" || d.PartialJSON != ""
	case "message_delta":
		if ev.Usage == nil {
			return none, errors.New("a message_delta event without usage")
		}
		s.generated = ev.Usage.OutputTokens
	case "message_stop":
		s.end = true
	case "error":
		if ev.Error == nil {
			return none, errors.New("an error event without its error")
		}
		return none, fmt.Errorf("%s: %s", ev.Error.Type, ev.Error.Message)
	}
	return s, nil
}

// decodeOllama reads a line of an ollama /api/chat stream: the message's
// content (or thinking) so far, and on the last line (done) the counts.
func decodeOllama(_ string, data []byte) (step, error) {
	var l struct {
		Message struct {
			Content   string            `json:"content"`
			Thinking  string            `json:"thinking"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"message"`
		Done            bool    `json:"done"`
		PromptEvalCount int     `json:"prompt_eval_count"`
		EvalCount       int     `json:"eval_count"`
		Error           *string `json:"error"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return none, fmt.Errorf("a line that is not JSON: %w", err)
	}
	if l.Error != nil {
		return none, errors.New(*l.Error)
	}
	m := l.Message
	s := none
	s.text = m.Content != "" || m.Thinking != "" || len(m.ToolCalls) > 0
	if l.Done {
		s.prompt, s.generated, s.end = l.PromptEvalCount, l.EvalCount, true
	}
	return s, nil
}
