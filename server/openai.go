package server

import "encoding/json"

// The OpenAI wire format: request bodies as clients send them, and the
// responses and stream chunks the server writes. Optional request fields
// are pointers, so that an absent field and a zero are told apart.

// samplingFields are the sampling fields the chat and completions
// requests share (OpenAI's, and vLLM's extensions top_k, min_p,
// repetition_penalty and ignore_eos).
type samplingFields struct {
	Temperature       *float64           `json:"temperature"`
	TopP              *float64           `json:"top_p"`
	TopK              *int               `json:"top_k"`
	MinP              *float64           `json:"min_p"`
	RepetitionPenalty *float64           `json:"repetition_penalty"`
	PresencePenalty   *float64           `json:"presence_penalty"`
	FrequencyPenalty  *float64           `json:"frequency_penalty"`
	Seed              *int64             `json:"seed"`
	Stop              json.RawMessage    `json:"stop"` // a string or up to 4 strings
	N                 *int               `json:"n"`
	LogitBias         map[string]float64 `json:"logit_bias"`
	IgnoreEOS         bool               `json:"ignore_eos"`
	MaxTokens         *int               `json:"max_tokens"`
	Stream            bool               `json:"stream"`
	StreamOptions     *streamOptions     `json:"stream_options"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	samplingFields
	MaxCompletionTokens  *int                       `json:"max_completion_tokens"`
	Logprobs             bool                       `json:"logprobs"`
	TopLogprobs          *int                       `json:"top_logprobs"`
	Tools                []json.RawMessage          `json:"tools"`
	ToolChoice           json.RawMessage            `json:"tool_choice"`
	AddGenerationPrompt  *bool                      `json:"add_generation_prompt"`
	ContinueFinalMessage bool                       `json:"continue_final_message"`
	ChatTemplateKwargs   map[string]json.RawMessage `json:"chat_template_kwargs"`
	ParallelToolCalls    *bool                      `json:"parallel_tool_calls"`
	ReasoningEffort      *string                    `json:"reasoning_effort"` // low, medium or high
	structuredFields
}

type chatMessage struct {
	Role             string            `json:"role"`
	Content          json.RawMessage   `json:"content"` // a string, content parts, or null
	ReasoningContent *string           `json:"reasoning_content"`
	Name             string            `json:"name"`
	ToolCalls        []requestToolCall `json:"tool_calls"`
	ToolCallID       string            `json:"tool_call_id"`
}

// requestToolCall is a tool call in a request's assistant message. Its
// arguments are JSON text in a string, as OpenAI sends them, or the JSON
// object itself, as Hugging Face's templates and ollama's clients do.
type requestToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type contentPart struct {
	Type string  `json:"type"`
	Text *string `json:"text"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type completionRequest struct {
	Model  string          `json:"model"`
	Prompt json.RawMessage `json:"prompt"` // a string, one string in an array, or token ids
	samplingFields
	structuredFields
	Logprobs *int            `json:"logprobs"` // 0..5 alternatives
	Echo     bool            `json:"echo"`
	Suffix   json.RawMessage `json:"suffix"`
	BestOf   *int            `json:"best_of"`
}

type usage struct {
	PromptTokens        int           `json:"prompt_tokens"`
	CompletionTokens    int           `json:"completion_tokens"`
	TotalTokens         int           `json:"total_tokens"`
	PromptTokensDetails promptDetails `json:"prompt_tokens_details"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"` // prompt tokens whose KV cache was kept from the slot's last request
}

type responseMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type chatChoice struct {
	Index        int              `json:"index"`
	Message      *responseMessage `json:"message,omitempty"`
	Delta        *chatDelta       `json:"delta,omitempty"`
	Logprobs     *chatLogprobs    `json:"logprobs"`
	FinishReason *string          `json:"finish_reason"`
}

type chatDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type chatLogprobs struct {
	Content []tokenLogprob `json:"content"`
}

type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float32      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float32 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             *usage       `json:"usage,omitempty"`
}

type completionChoice struct {
	Index        int                 `json:"index"`
	Text         string              `json:"text"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float32            `json:"token_logprobs"`
	TopLogprobs   []map[string]float32 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

type completionResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             *usage             `json:"usage,omitempty"`
}
