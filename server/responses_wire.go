package server

import "encoding/json"

// The wire format of OpenAI's Responses API (POST /v1/responses): the
// request as clients send it, the response object, its output items and
// the events of a streamed response. Field names and shapes follow the
// official SDK's types (openai-node's resources/responses/responses.ts).

// responsesRequest is a POST /v1/responses body. Optional fields are
// pointers, so that an absent field and a zero are told apart. Beyond
// OpenAI's fields it takes, as vLLM does, the sampling fields of the chat
// request (top_k, min_p, seed, stop, penalties) and chat_template_kwargs.
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"` // a string or an array of items
	Instructions       *string           `json:"instructions"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	Text               *responsesText    `json:"text"`
	Reasoning          *reasoningConfig  `json:"reasoning"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	TopLogprobs        *int              `json:"top_logprobs"`
	Include            []string          `json:"include"`
	Stream             bool              `json:"stream"`
	Store              *bool             `json:"store"`
	Metadata           map[string]string `json:"metadata"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Background         *bool             `json:"background"`
	Conversation       json.RawMessage   `json:"conversation"`
	Prompt             json.RawMessage   `json:"prompt"`
	Truncation         *string           `json:"truncation"`
	User               *string           `json:"user"`
	MaxToolCalls       *int              `json:"max_tool_calls"`

	TopK               *int                       `json:"top_k"`
	MinP               *float64                   `json:"min_p"`
	RepetitionPenalty  *float64                   `json:"repetition_penalty"`
	PresencePenalty    *float64                   `json:"presence_penalty"`
	FrequencyPenalty   *float64                   `json:"frequency_penalty"`
	Seed               *int64                     `json:"seed"`
	Stop               json.RawMessage            `json:"stop"`
	ChatTemplateKwargs map[string]json.RawMessage `json:"chat_template_kwargs"`
}

// responsesText is the request's (and the response's) text configuration.
type responsesText struct {
	Format    json.RawMessage `json:"format,omitempty"`
	Verbosity *string         `json:"verbosity,omitempty"`
}

// textFormat is text.format: {"type": "text"}, {"type": "json_object"} or
// {"type": "json_schema", "name", "schema", "strict", "description"}.
type textFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Schema      json.RawMessage `json:"schema"`
	Strict      *bool           `json:"strict"`
	Description string          `json:"description"`
}

// reasoningConfig is the request's (and the response's) reasoning object.
type reasoningConfig struct {
	Effort          *string `json:"effort"`
	Summary         *string `json:"summary"`
	GenerateSummary *string `json:"generate_summary,omitempty"` // the deprecated name of summary
}

// functionTool is a function tool in Responses' flat shape.
type functionTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// inputItem is an item of the request's input: a message (type
// "message", or no type), a function_call, a function_call_output, a
// reasoning item, or an item_reference to an item of a stored response.
type inputItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a message's string or parts; a reasoning item's parts
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Output    json.RawMessage `json:"output"` // a string or parts
	Summary   []inputPart     `json:"summary"`
}

// inputPart is a content part of an input item.
type inputPart struct {
	Type    string  `json:"type"`
	Text    *string `json:"text"`
	Refusal *string `json:"refusal"`
}

// responseObject is the response: answered whole when not streamed, and
// carried by the lifecycle events of a stream.
type responseObject struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"`
	Background         bool               `json:"background"`
	CompletedAt        *int64             `json:"completed_at"`
	Error              *responseError     `json:"error"`
	IncompleteDetails  *incompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	MaxToolCalls       *int               `json:"max_tool_calls"`
	Model              string             `json:"model"`
	Output             []any              `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Reasoning          reasoningConfig    `json:"reasoning"`
	ServiceTier        string             `json:"service_tier"`
	Store              bool               `json:"store"`
	Temperature        float64            `json:"temperature"`
	Text               responsesText      `json:"text"`
	ToolChoice         json.RawMessage    `json:"tool_choice"`
	Tools              []functionTool     `json:"tools"`
	TopLogprobs        int                `json:"top_logprobs"`
	TopP               float64            `json:"top_p"`
	Truncation         string             `json:"truncation"`
	Usage              *responseUsage     `json:"usage"`
	User               *string            `json:"user"`
	Metadata           map[string]string  `json:"metadata"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

type responseUsage struct {
	InputTokens         int                 `json:"input_tokens"`
	InputTokensDetails  inputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int                 `json:"output_tokens"`
	OutputTokensDetails outputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int                 `json:"total_tokens"`
}

type inputTokensDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
}

type outputTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// Output items.

type messageItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"` // "message"
	Status  string       `json:"status"`
	Role    string       `json:"role"` // "assistant"
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string         `json:"type"` // "output_text"
	Text        string         `json:"text"`
	Annotations []any          `json:"annotations"`
	Logprobs    []tokenLogprob `json:"logprobs"`
}

type reasoningItem struct {
	ID               string     `json:"id"`
	Type             string     `json:"type"` // "reasoning"
	Summary          []textPart `json:"summary"`
	Content          []textPart `json:"content,omitempty"`
	EncryptedContent *string    `json:"encrypted_content"`
	Status           string     `json:"status"`
}

// textPart is a reasoning item's summary_text or reasoning_text part.
type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"` // "function_call"
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// streamEvent is an event of a streamed response; its type says which
// of the fields it carries.
type streamEvent struct {
	Type           string          `json:"type"`
	SequenceNumber int             `json:"sequence_number"`
	Response       *responseObject `json:"response,omitempty"`
	OutputIndex    *int            `json:"output_index,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	ContentIndex   *int            `json:"content_index,omitempty"`
	SummaryIndex   *int            `json:"summary_index,omitempty"`
	Item           any             `json:"item,omitempty"`
	Part           any             `json:"part,omitempty"`
	Delta          *string         `json:"delta,omitempty"`
	Text           *string         `json:"text,omitempty"`
	Arguments      *string         `json:"arguments,omitempty"`
	Logprobs       *[]tokenLogprob `json:"logprobs,omitempty"`
}
