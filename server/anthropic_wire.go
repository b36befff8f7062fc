package server

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Anthropic's Messages API on the wire (POST /v1/messages and
// /v1/messages/count_tokens): the request as its clients send it, its
// translation into a chatRequest of the chat core, and the message and
// stream events the server writes.

// messagesRequest is the body of POST /v1/messages and, without
// max_tokens, of POST /v1/messages/count_tokens.
type messagesRequest struct {
	Model         string                 `json:"model"`
	MaxTokens     *int                   `json:"max_tokens"`
	Messages      []anthropicMessage     `json:"messages"`
	System        json.RawMessage        `json:"system"` // a string or text blocks
	Tools         []anthropicTool        `json:"tools"`
	ToolChoice    *anthropicToolChoice   `json:"tool_choice"`
	Thinking      *anthropicThinking     `json:"thinking"`
	Temperature   *float64               `json:"temperature"`
	TopP          *float64               `json:"top_p"`
	TopK          *int                   `json:"top_k"`
	StopSequences []string               `json:"stop_sequences"`
	Stream        bool                   `json:"stream"`
	Metadata      *anthropicMetadata     `json:"metadata"`
	OutputConfig  *anthropicOutputConfig `json:"output_config"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or content blocks
}

// anthropicBlock is a content block of a request, any of the types read:
// text, thinking, redacted_thinking, tool_use and tool_result.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Thinking  *string         `json:"thinking"`
	Signature *string         `json:"signature"`
	Data      *string         `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a tool_result's: a string or blocks
	IsError   bool            `json:"is_error"`
}

type anthropicTool struct {
	Type        string          `json:"type"` // "custom" or absent; Anthropic's server tools are refused
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Strict      *bool           `json:"strict"`
}

type anthropicToolChoice struct {
	Type                   string `json:"type"` // auto, any, tool or none
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

type anthropicThinking struct {
	Type         string `json:"type"` // enabled, disabled or adaptive
	BudgetTokens *int   `json:"budget_tokens"`
}

type anthropicMetadata struct {
	UserID *string `json:"user_id"`
}

type anthropicOutputConfig struct {
	Effort *string `json:"effort"`
	Format *struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	} `json:"format"`
}

// minThinkingBudget is the least budget_tokens Anthropic accepts.
const minThinkingBudget = 1024

// chatRequest translates r into the chat core's request. A body for
// count_tokens (count) needs no max_tokens. The system prompt comes
// first; user messages' tool_result blocks become tool messages, in
// order with the text around them; an assistant's thinking becomes its
// reasoning_content and its tool_use blocks its tool_calls; a last
// assistant message is continued (Anthropic's prefill).
func (r *messagesRequest) chatRequest(count bool) (*chatRequest, *apiError) {
	req := &chatRequest{Model: r.Model, Messages: []chatMessage{}}
	if !count {
		switch {
		case r.MaxTokens == nil:
			return nil, badRequest("max_tokens", "max_tokens is required")
		case *r.MaxTokens < 1:
			return nil, badRequest("max_tokens", "max_tokens = %d: want at least 1", *r.MaxTokens)
		}
		req.MaxTokens = r.MaxTokens
	}
	if v := r.Temperature; v != nil && !(*v >= 0 && *v <= 1) {
		return nil, badRequest("temperature", "temperature %v is outside [0, 1]", *v)
	}
	req.Temperature, req.TopP, req.TopK = r.Temperature, r.TopP, r.TopK
	if e := r.stops(req); e != nil {
		return nil, e
	}
	req.Stream = r.Stream
	if present(r.System) {
		text, e := textBlocks(r.System, "system")
		if e != nil {
			return nil, e
		}
		req.Messages = append(req.Messages, textMessage("system", text))
	}
	if r.Messages == nil {
		return nil, badRequest("messages", "messages is required")
	}
	if len(r.Messages) == 0 {
		return nil, badRequest("messages", "messages must not be empty")
	}
	for i, m := range r.Messages {
		msgs, e := m.chatMessages(fmt.Sprintf("messages[%d]", i), i == len(r.Messages)-1)
		if e != nil {
			return nil, e
		}
		req.Messages = append(req.Messages, msgs...)
	}
	if last := r.Messages[len(r.Messages)-1]; last.Role == "assistant" {
		req.ContinueFinalMessage = true
	}
	if e := r.tools(req); e != nil {
		return nil, e
	}
	if e := r.thinking(req, count); e != nil {
		return nil, e
	}
	if e := r.output(req); e != nil {
		return nil, e
	}
	return req, nil
}

// stops checks stop_sequences and sets req's stop strings.
func (r *messagesRequest) stops(req *chatRequest) *apiError {
	if len(r.StopSequences) == 0 {
		return nil
	}
	if len(r.StopSequences) > maxStops {
		return badRequest("stop_sequences", "stop_sequences has %d strings; at most %d are supported", len(r.StopSequences), maxStops)
	}
	for i, s := range r.StopSequences {
		if s == "" {
			return badRequest(fmt.Sprintf("stop_sequences[%d]", i), "stop_sequences[%d] is empty", i)
		}
	}
	req.Stop, _ = json.Marshal(r.StopSequences)
	return nil
}

// tools translates tools and tool_choice into OpenAI's function tools,
// tool_choice and parallel_tool_calls.
func (r *messagesRequest) tools(req *chatRequest) *apiError {
	names := make(map[string]bool, len(r.Tools))
	for i, t := range r.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		switch {
		case t.Type != "" && t.Type != "custom":
			return badRequest(param+".type", "%s: the tool type %q is one of Anthropic's server tools, which are not supported: give client tools {name, description, input_schema}", param, t.Type)
		case t.Name == "":
			return badRequest(param+".name", "%s.name is required", param)
		case names[t.Name]:
			return badRequest(param+".name", "%s: the tool name %q is given twice", param, t.Name)
		case !present(t.InputSchema):
			return badRequest(param+".input_schema", "%s.input_schema is required", param)
		}
		names[t.Name] = true
		var fn struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description,omitempty"`
				Parameters  json.RawMessage `json:"parameters"`
				Strict      *bool           `json:"strict,omitempty"`
			} `json:"function"`
		}
		fn.Type = "function"
		fn.Function.Name, fn.Function.Description, fn.Function.Parameters, fn.Function.Strict = t.Name, t.Description, t.InputSchema, t.Strict
		raw, err := json.Marshal(fn)
		if err != nil {
			return badRequest(param+".input_schema", "%s.input_schema: %v", param, err)
		}
		req.Tools = append(req.Tools, raw)
	}
	tc := r.ToolChoice
	if tc == nil {
		return nil
	}
	choice := ""
	switch tc.Type {
	case "auto":
		choice = `"auto"`
	case "none":
		choice = `"none"`
	case "any":
		choice = `"required"`
	case "tool":
		if tc.Name == "" {
			return badRequest("tool_choice.name", `tool_choice {"type": "tool"} needs the tool's name`)
		}
		if !names[tc.Name] {
			return badRequest("tool_choice.name", "tool_choice names the tool %q, which is not among the tools", tc.Name)
		}
		b, _ := json.Marshal(tc.Name)
		choice = `{"type": "function", "function": {"name": ` + string(b) + `}}`
	default:
		return badRequest("tool_choice.type", "tool_choice.type %q is not one of auto, any, tool, none", tc.Type)
	}
	if (tc.Type == "any" || tc.Type == "tool") && len(r.Tools) == 0 {
		return badRequest("tool_choice", "tool_choice %q needs tools", tc.Type)
	}
	req.ToolChoice = json.RawMessage(choice)
	if tc.DisableParallelToolUse {
		req.ParallelToolCalls = ptr(false)
	}
	return nil
}

// thinking turns the model's reasoning on or off through the chat
// template's enable_thinking (Qwen3's and others'); adaptive leaves the
// template's default, which reasons.
func (r *messagesRequest) thinking(req *chatRequest, count bool) *apiError {
	t := r.Thinking
	if t == nil {
		return nil
	}
	on := true
	switch t.Type {
	case "enabled":
		switch {
		case t.BudgetTokens == nil:
			return badRequest("thinking.budget_tokens", `thinking {"type": "enabled"} needs budget_tokens`)
		case *t.BudgetTokens < minThinkingBudget:
			return badRequest("thinking.budget_tokens", "thinking.budget_tokens = %d: want at least %d", *t.BudgetTokens, minThinkingBudget)
		case !count && *t.BudgetTokens >= *r.MaxTokens:
			return badRequest("thinking.budget_tokens", "thinking.budget_tokens (%d) must be less than max_tokens (%d)", *t.BudgetTokens, *r.MaxTokens)
		}
	case "adaptive":
		return nil
	case "disabled":
		on = false
	default:
		return badRequest("thinking.type", "thinking.type %q is not one of enabled, disabled, adaptive", t.Type)
	}
	req.ChatTemplateKwargs = map[string]json.RawMessage{"enable_thinking": json.RawMessage(fmt.Sprint(on))}
	return nil
}

// output translates output_config: a JSON schema the reply follows, and
// the effort, passed to the template as reasoning_effort (gpt-oss's reads
// it).
func (r *messagesRequest) output(req *chatRequest) *apiError {
	oc := r.OutputConfig
	if oc == nil {
		return nil
	}
	if oc.Effort != nil {
		switch e := *oc.Effort; e {
		case "low", "medium", "high":
			req.ReasoningEffort = ptr(e)
		case "xhigh", "max":
			req.ReasoningEffort = ptr("high")
		default:
			return badRequest("output_config.effort", "output_config.effort %q is not one of low, medium, high, xhigh, max", e)
		}
	}
	if f := oc.Format; f != nil {
		if f.Type != "json_schema" {
			return badRequest("output_config.format.type", `output_config.format.type %q is not "json_schema"`, f.Type)
		}
		if !present(f.Schema) {
			return badRequest("output_config.format.schema", "output_config.format.schema is required")
		}
		rf, err := json.Marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "output", "schema": f.Schema}})
		if err == nil {
			err = json.Unmarshal(rf, &req.ResponseFormat)
		}
		if err != nil {
			return badRequest("output_config.format.schema", "output_config.format.schema: %v", err)
		}
	}
	return nil
}

// chatMessages translates message m (param names it in errors) into chat
// messages. Only the last message, an assistant's to continue, may have
// no blocks.
func (m *anthropicMessage) chatMessages(param string, last bool) ([]chatMessage, *apiError) {
	switch m.Role {
	case "user", "assistant", "system":
	case "":
		return nil, badRequest(param+".role", "%s.role is required", param)
	default:
		return nil, badRequest(param+".role", "%s.role %q is not one of user, assistant, system", param, m.Role)
	}
	if m.Role == "system" {
		text, e := textBlocks(m.Content, param+".content")
		if e != nil {
			return nil, e
		}
		return []chatMessage{textMessage("system", text)}, nil
	}
	blocks, e := contentBlocks(m.Content, param+".content")
	if e != nil {
		return nil, e
	}
	if len(blocks) == 0 && !(last && m.Role == "assistant") {
		return nil, badRequest(param+".content", "%s.content must not be empty", param)
	}
	if m.Role == "assistant" {
		msg, e := assistantMessage(blocks, param+".content")
		if e != nil {
			return nil, e
		}
		return []chatMessage{msg}, nil
	}
	// A user message: its text, and its tool results as tool messages, in
	// their order.
	var out []chatMessage
	var text []string
	flush := func() {
		if text != nil {
			out = append(out, textMessage("user", strings.Join(text, "\n")))
			text = nil
		}
	}
	for j, b := range blocks {
		bp := fmt.Sprintf("%s.content[%d]", param, j)
		switch b.Type {
		case "text":
			if b.Text == nil {
				return nil, badRequest(bp+".text", "%s: a text block needs text", bp)
			}
			text = append(text, *b.Text)
		case "tool_result":
			if b.ToolUseID == "" {
				return nil, badRequest(bp+".tool_use_id", "%s: a tool_result block needs tool_use_id", bp)
			}
			result := ""
			if present(b.Content) {
				if result, e = textBlocks(b.Content, bp+".content"); e != nil {
					return nil, e
				}
			}
			if b.IsError {
				// Chat templates have no field for it: the model reads it.
				result = strings.TrimSuffix("Error: "+result, " ")
			}
			flush()
			msg := textMessage("tool", result)
			msg.ToolCallID = b.ToolUseID
			out = append(out, msg)
		default:
			return nil, unsupportedBlock(b.Type, bp, "user")
		}
	}
	flush()
	return out, nil
}

// assistantMessage translates an assistant's blocks: text, thinking
// (its reasoning_content), redacted_thinking (which only Anthropic can
// read: dropped) and tool_use.
func assistantMessage(blocks []anthropicBlock, param string) (chatMessage, *apiError) {
	var text, reasoning []string
	msg := chatMessage{Role: "assistant"}
	for j, b := range blocks {
		bp := fmt.Sprintf("%s[%d]", param, j)
		switch b.Type {
		case "text":
			if b.Text == nil {
				return msg, badRequest(bp+".text", "%s: a text block needs text", bp)
			}
			text = append(text, *b.Text)
		case "thinking":
			if b.Thinking == nil {
				return msg, badRequest(bp+".thinking", "%s: a thinking block needs thinking", bp)
			}
			reasoning = append(reasoning, *b.Thinking)
		case "redacted_thinking":
		case "tool_use":
			if b.Name == "" {
				return msg, badRequest(bp+".name", "%s: a tool_use block needs the tool's name", bp)
			}
			in := trimSpace(b.Input)
			if len(in) == 0 || in[0] != '{' {
				return msg, badRequest(bp+".input", "%s.input must be a JSON object", bp)
			}
			tc := requestToolCall{ID: b.ID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = b.Name, in
			msg.ToolCalls = append(msg.ToolCalls, tc)
		default:
			return msg, unsupportedBlock(b.Type, bp, "assistant")
		}
	}
	msg.Content, _ = json.Marshal(strings.Join(text, "\n"))
	if reasoning != nil {
		msg.ReasoningContent = ptr(strings.Join(reasoning, "\n"))
	}
	return msg, nil
}

// unsupportedBlock is the error for a block of type typ that a message
// of role cannot hold here.
func unsupportedBlock(typ, param, role string) *apiError {
	switch typ {
	case "image", "document", "search_result", "container_upload":
		return badRequest(param+".type", "%s: %s blocks are not supported: this model reads text only", param, typ)
	case "":
		return badRequest(param+".type", "%s.type is required", param)
	}
	return badRequest(param+".type", "%s: a block of type %q is not supported in a %s message", param, typ, role)
}

// contentBlocks reads a message's content: a string (one text block) or
// an array of blocks.
func contentBlocks(raw json.RawMessage, param string) ([]anthropicBlock, *apiError) {
	if !present(raw) {
		return nil, badRequest(param, "%s is required", param)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: &s}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest(param, "%s must be a string or an array of content blocks", param)
	}
	blocks := make([]anthropicBlock, len(items))
	for j, item := range items {
		if err := json.Unmarshal(item, &blocks[j]); err != nil {
			return nil, badRequest(fmt.Sprintf("%s[%d]", param, j), "%s[%d] is not a content block: %v", param, j, err)
		}
	}
	return blocks, nil
}

// textBlocks reads content that only text may fill (the system prompt, a
// tool result, a system message): a string, or text blocks joined by
// newlines.
func textBlocks(raw json.RawMessage, param string) (string, *apiError) {
	blocks, e := contentBlocks(raw, param)
	if e != nil {
		return "", e
	}
	text := make([]string, len(blocks))
	for j, b := range blocks {
		bp := fmt.Sprintf("%s[%d]", param, j)
		switch {
		case b.Type == "text" && b.Text != nil:
			text[j] = *b.Text
		case b.Type == "text":
			return "", badRequest(bp+".text", "%s: a text block needs text", bp)
		default:
			return "", unsupportedBlock(b.Type, bp, "text-only")
		}
	}
	return strings.Join(text, "\n"), nil
}

// textMessage is a chat message of role holding text.
func textMessage(role, text string) chatMessage {
	content, _ := json.Marshal(text)
	return chatMessage{Role: role, Content: content}
}

func trimSpace(raw json.RawMessage) json.RawMessage {
	return json.RawMessage(strings.TrimSpace(string(raw)))
}

// anthropicResponse is a message, as POST /v1/messages answers it and as
// message_start opens a stream.
type anthropicResponse struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"` // "message"
	Role         string             `json:"role"` // "assistant"
	Model        string             `json:"model"`
	Content      []anthropicContent `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	StopDetails  *struct{}          `json:"stop_details"` // a refusal's details: always null
	Usage        anthropicUsage     `json:"usage"`
}

// anthropicContent is a content block of a reply: text, thinking or
// tool_use.
type anthropicContent struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Caller    *toolCaller     `json:"caller,omitempty"`
}

// toolCaller says who called a tool: the model, directly.
type toolCaller struct {
	Type string `json:"type"` // "direct"
}

// anthropicUsage counts a message's tokens. The prompt's are
// input_tokens, cache_read_input_tokens (those whose keys and values the
// prefix cache held) and cache_creation_input_tokens (always 0: caching
// is automatic here).
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// The stream's events, each sent as "event: TYPE" and "data: JSON".
type (
	messageStartEvent struct {
		Type    string             `json:"type"` // "message_start"
		Message *anthropicResponse `json:"message"`
	}
	blockStartEvent struct {
		Type         string           `json:"type"` // "content_block_start"
		Index        int              `json:"index"`
		ContentBlock anthropicContent `json:"content_block"`
	}
	blockDeltaEvent struct {
		Type  string         `json:"type"` // "content_block_delta"
		Index int            `json:"index"`
		Delta anthropicDelta `json:"delta"`
	}
	blockStopEvent struct {
		Type  string `json:"type"` // "content_block_stop"
		Index int    `json:"index"`
	}
	messageDeltaEvent struct {
		Type  string `json:"type"` // "message_delta"
		Delta struct {
			StopReason   *string   `json:"stop_reason"`
			StopSequence *string   `json:"stop_sequence"`
			StopDetails  *struct{} `json:"stop_details"`
		} `json:"delta"`
		Usage anthropicUsage `json:"usage"`
	}
	typeOnlyEvent struct {
		Type string `json:"type"` // "message_stop", "ping"
	}
)

// anthropicDelta is a content_block_delta's delta: text_delta,
// thinking_delta, signature_delta or input_json_delta.
type anthropicDelta struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	Thinking    *string `json:"thinking,omitempty"`
	Signature   *string `json:"signature,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
}

// anthropicErrorBody is an error in Anthropic's shape.
type anthropicErrorBody struct {
	Type  string `json:"type"` // "error"
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID *string `json:"request_id"`
}
