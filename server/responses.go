package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"inferno/parser"
	"inferno/sampling"
)

// OpenAI's Responses API (POST /v1/responses) over the chat core: the
// request's instructions and input items (with the conversation of a
// stored previous response before them) become chat messages, its tools,
// tool_choice and text.format the chat request's fields, and the reply's
// reasoning, text and tool calls become output items: reasoning, message
// and function_call. A response is stored (store, the default) in a
// bounded in-memory store, so that a later request continues it by its
// previous_response_id, and GET /v1/responses/{id} returns it.

// createResponse serves POST /v1/responses.
func (s *Server) createResponse(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req responsesRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	conv, e := s.responsesChat(&req)
	if e != nil {
		return e
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel() // ends the generation when the handler returns
	run, e := s.startChat(ctx, m, &conv.chat, start)
	if e != nil {
		return responsesParam(e)
	}
	resp := conv.response(requestID("resp_"), run.chs[0].g.created, m.Name)
	run.chs[0].g.info.id = resp.ID
	b := &outputBuilder{resp: resp, m: m, summary: conv.summary, logprobs: conv.chat.Logprobs,
		inReasoning: m.replyOptions(run.prompt, false).StartInReasoning}
	if req.Stream {
		out := newSSE(w)
		b.send = func(ev *streamEvent) error { return out.event(ev.Type, ev) }
	}
	if b.start() != nil {
		return nil // the client is gone
	}
	var finish string
	gone, err := run.chs[0].drive(func(d parser.Delta, tok *sampling.Token, f string) error {
		finish = f
		return b.add(d, tok)
	})
	switch {
	case gone:
		return nil
	case err != nil:
		ae := failure(err)
		if !req.Stream {
			return ae
		}
		b.fail(ae)
		return nil
	}
	if b.finish(finish, run.usage()) != nil {
		return nil
	}
	if resp.Store {
		s.responses.put(resp, conv.history, conv.own, b.items)
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp)
	}
	return nil
}

// responsesConversion is a Responses request translated for the chat
// core: the chat request, the conversation (the resolved input items,
// those of the previous response first) and what the response object
// echoes of the request.
type responsesConversion struct {
	chat    chatRequest
	history []convItem
	own     int  // the last items of history that are the request's input
	summary bool // reasoning is returned as a summary
	req     *responsesRequest
	tools   []functionTool  // the tools as the response echoes them
	offered []functionTool  // those the template gets: tools, or those allowed_tools names
	choice  json.RawMessage // tool_choice as the response echoes it
	format  json.RawMessage
	effort  *string
}

// responsesChat checks req and translates it into a chat request.
func (s *Server) responsesChat(req *responsesRequest) (*responsesConversion, *apiError) {
	c := &responsesConversion{req: req}
	switch {
	case req.Background != nil && *req.Background:
		return nil, badRequest("background", "background responses are not supported: leave background false")
	case present(req.Conversation):
		return nil, badRequest("conversation", "conversation objects are not supported: continue a response with previous_response_id")
	case present(req.Prompt):
		return nil, badRequest("prompt", "prompt templates are not supported: send the instructions and input")
	case req.Truncation != nil && *req.Truncation != "auto" && *req.Truncation != "disabled":
		return nil, badRequest("truncation", `truncation %q is not one of "auto", "disabled"`, *req.Truncation)
	case req.MaxOutputTokens != nil && *req.MaxOutputTokens < 1:
		return nil, badRequest("max_output_tokens", "max_output_tokens = %d: want at least 1", *req.MaxOutputTokens)
	case req.TopLogprobs != nil && (*req.TopLogprobs < 0 || *req.TopLogprobs > 20):
		return nil, badRequest("top_logprobs", "top_logprobs %d is outside [0, 20]", *req.TopLogprobs)
	}
	if e := checkMetadata(req.Metadata); e != nil {
		return nil, e
	}
	if req.PreviousResponseID != nil {
		prev, ok := s.responses.history(*req.PreviousResponseID)
		if !ok {
			e := badRequest("previous_response_id", "previous response with id %q not found", *req.PreviousResponseID)
			e.Code = "previous_response_not_found"
			return nil, e
		}
		c.history = prev
	}
	items, e := decodeInput(req.Input, s.responses)
	if e != nil {
		return nil, e
	}
	if len(items) == 0 && req.PreviousResponseID == nil {
		return nil, badRequest("input", "input is required: a string or an array of input items")
	}
	c.history, c.own = append(c.history, items...), len(items)
	msgs := chatMessages(req.Instructions, c.history)
	c.chat = chatRequest{Model: req.Model, Messages: msgs, ParallelToolCalls: req.ParallelToolCalls, ChatTemplateKwargs: req.ChatTemplateKwargs}
	f := &c.chat.samplingFields
	f.Temperature, f.TopP, f.TopK, f.MinP = req.Temperature, req.TopP, req.TopK, req.MinP
	f.RepetitionPenalty, f.PresencePenalty, f.FrequencyPenalty = req.RepetitionPenalty, req.PresencePenalty, req.FrequencyPenalty
	f.Seed, f.Stop, f.MaxTokens = req.Seed, req.Stop, req.MaxOutputTokens
	if slices.Contains(req.Include, "message.output_text.logprobs") {
		c.chat.Logprobs, c.chat.TopLogprobs = true, req.TopLogprobs
	}
	if e := c.convertTools(); e != nil {
		return nil, e
	}
	if e := c.convertFormat(); e != nil {
		return nil, e
	}
	if e := c.convertReasoning(); e != nil {
		return nil, e
	}
	return c, nil
}

// checkMetadata checks metadata against OpenAI's bounds: 16 pairs, keys
// of up to 64 characters, values of up to 512.
func checkMetadata(md map[string]string) *apiError {
	if len(md) > 16 {
		return badRequest("metadata", "metadata has %d pairs; at most 16 are allowed", len(md))
	}
	for k, v := range md {
		if utf8.RuneCountInString(k) > 64 {
			return badRequest("metadata", "metadata key %q is longer than 64 characters", k[:64])
		}
		if utf8.RuneCountInString(v) > 512 {
			return badRequest("metadata."+k, "metadata[%q] is longer than 512 characters", k)
		}
	}
	return nil
}

// convertTools turns the function tools and tool_choice into the chat
// request's. An allowed_tools choice keeps only the tools it names.
func (c *responsesConversion) convertTools() *apiError {
	req := c.req
	c.tools = make([]functionTool, 0, len(req.Tools))
	for i, raw := range req.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		var t functionTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return badRequest(param, `%s must be a function tool {"type": "function", "name": ..., "parameters": {...}}`, param)
		}
		if t.Type != "function" {
			return badRequest(param+".type", "%s.type %q is not supported: this server calls function tools only", param, t.Type)
		}
		if t.Name == "" {
			return badRequest(param+".name", "%s.name is required", param)
		}
		if t.Strict == nil {
			t.Strict = ptr(true) // the Responses API's default
		}
		if !present(t.Parameters) {
			t.Parameters = nil
		}
		c.tools = append(c.tools, t)
	}
	c.offered = c.tools
	choice, e := c.toolChoice()
	if e != nil {
		return e
	}
	for _, t := range c.offered {
		var tool struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description *string         `json:"description,omitempty"`
				Parameters  json.RawMessage `json:"parameters,omitempty"`
				Strict      *bool           `json:"strict,omitempty"`
			} `json:"function"`
		}
		tool.Type = "function"
		tool.Function.Name, tool.Function.Description, tool.Function.Parameters, tool.Function.Strict = t.Name, t.Description, t.Parameters, t.Strict
		raw, err := json.Marshal(tool)
		if err != nil {
			return badRequest("tools", "tools: %v", err)
		}
		c.chat.Tools = append(c.chat.Tools, raw)
	}
	c.chat.ToolChoice = choice
	return nil
}

// toolChoice checks tool_choice and returns the chat request's: "auto",
// "none", "required", {"type": "function", "name": N}, or
// {"type": "allowed_tools", "mode": "auto" or "required", "tools": [...]}
// (which narrows c.offered to those it names).
func (c *responsesConversion) toolChoice() (json.RawMessage, *apiError) {
	raw := c.req.ToolChoice
	c.choice = json.RawMessage(`"auto"`)
	if !present(raw) {
		return nil, nil
	}
	c.choice = raw
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return raw, nil
		}
		return nil, badRequest("tool_choice", `tool_choice %q is not one of "auto", "none", "required"`, s)
	}
	var obj struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Mode  string `json:"mode"`
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, badRequest("tool_choice", `tool_choice must be "auto", "none", "required", {"type": "function", "name": ...} or {"type": "allowed_tools", ...}`)
	}
	has := func(name string) bool {
		return slices.ContainsFunc(c.tools, func(t functionTool) bool { return t.Name == name })
	}
	switch obj.Type {
	case "function":
		if obj.Name == "" {
			return nil, badRequest("tool_choice.name", "tool_choice.name is required")
		}
		if !has(obj.Name) {
			return nil, badRequest("tool_choice.name", "tool_choice names the function %q, which is not among the tools", obj.Name)
		}
		named, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": obj.Name}})
		return named, nil
	case "allowed_tools":
		if obj.Mode != "auto" && obj.Mode != "required" {
			return nil, badRequest("tool_choice.mode", `tool_choice.mode %q is not one of "auto", "required"`, obj.Mode)
		}
		allowed := map[string]bool{}
		for i, t := range obj.Tools {
			if t.Type != "function" || !has(t.Name) {
				return nil, badRequest(fmt.Sprintf("tool_choice.tools[%d]", i), `tool_choice.tools[%d] must be {"type": "function", "name": N} with N among the tools`, i)
			}
			allowed[t.Name] = true
		}
		c.offered = slices.DeleteFunc(slices.Clone(c.tools), func(t functionTool) bool { return !allowed[t.Name] })
		mode, _ := json.Marshal(obj.Mode)
		return mode, nil
	}
	return nil, badRequest("tool_choice.type", "tool_choice.type %q is not supported: this server calls function tools only", obj.Type)
}

// convertFormat maps text.format onto the chat request's response_format.
func (c *responsesConversion) convertFormat() *apiError {
	c.format = json.RawMessage(`{"type":"text"}`)
	if c.req.Text == nil || !present(c.req.Text.Format) {
		return nil
	}
	var f textFormat
	if err := json.Unmarshal(c.req.Text.Format, &f); err != nil {
		return badRequest("text.format", `text.format must be {"type": "text"}, {"type": "json_object"} or {"type": "json_schema", "name": ..., "schema": {...}}`)
	}
	c.format = c.req.Text.Format
	var rf any
	switch f.Type {
	case "text":
		return nil
	case "json_object":
		rf = map[string]string{"type": "json_object"}
	case "json_schema":
		if !present(f.Schema) {
			return badRequest("text.format.schema", `text.format {"type": "json_schema"} needs a schema`)
		}
		rf = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": f.Name, "schema": f.Schema, "strict": f.Strict}}
	default:
		return badRequest("text.format.type", `text.format.type %q is not one of "text", "json_object", "json_schema"`, f.Type)
	}
	raw, err := json.Marshal(rf)
	if err == nil {
		err = json.Unmarshal(raw, &c.chat.ResponseFormat)
	}
	if err != nil {
		return badRequest("text.format", "text.format: %v", err)
	}
	return nil
}

// convertReasoning maps reasoning.effort onto the chat request: "none"
// turns the template's thinking off (enable_thinking false, Qwen3's
// switch), the others pass as reasoning_effort (minimal as low, xhigh and
// max as high). reasoning.summary asks for the reasoning as a summary.
func (c *responsesConversion) convertReasoning() *apiError {
	rc := c.req.Reasoning
	if rc == nil {
		return nil
	}
	if rc.Effort != nil {
		effort := *rc.Effort
		switch effort {
		case "none":
			if _, ok := c.chat.ChatTemplateKwargs["enable_thinking"]; !ok {
				kw := make(map[string]json.RawMessage, len(c.chat.ChatTemplateKwargs)+1)
				for k, v := range c.chat.ChatTemplateKwargs {
					kw[k] = v
				}
				kw["enable_thinking"] = json.RawMessage("false")
				c.chat.ChatTemplateKwargs = kw
			}
		case "minimal":
			effort = "low"
		case "xhigh", "max":
			effort = "high"
		case "low", "medium", "high":
		default:
			return badRequest("reasoning.effort", `reasoning.effort %q is not one of "none", "minimal", "low", "medium", "high", "xhigh", "max"`, effort)
		}
		if effort != "none" {
			c.chat.ReasoningEffort = &effort
		}
		c.effort = rc.Effort
	}
	summary := rc.Summary
	if summary == nil {
		summary = rc.GenerateSummary
	}
	if summary != nil {
		switch *summary {
		case "auto", "concise", "detailed":
			c.summary = true
		default:
			return badRequest("reasoning.summary", `reasoning.summary %q is not one of "auto", "concise", "detailed"`, *summary)
		}
	}
	return nil
}

// response returns the response object of the conversion, in progress:
// the request's settings and no output yet.
func (c *responsesConversion) response(id string, created int64, model string) *responseObject {
	req := c.req
	resp := &responseObject{ID: id, Object: "response", CreatedAt: created, Status: "in_progress", Model: model,
		Output: []any{}, Instructions: req.Instructions, MaxOutputTokens: req.MaxOutputTokens, MaxToolCalls: req.MaxToolCalls,
		ParallelToolCalls: req.ParallelToolCalls == nil || *req.ParallelToolCalls, PreviousResponseID: req.PreviousResponseID,
		ServiceTier: "default", Store: req.Store == nil || *req.Store, Temperature: 1, TopP: 1, Truncation: "disabled",
		Text: responsesText{Format: c.format, Verbosity: ptr("medium")}, ToolChoice: c.choice, Tools: c.tools,
		User: req.User, Metadata: req.Metadata}
	if req.Temperature != nil {
		resp.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		resp.TopP = *req.TopP
	}
	if req.TopLogprobs != nil {
		resp.TopLogprobs = *req.TopLogprobs
	}
	if req.Truncation != nil {
		resp.Truncation = *req.Truncation
	}
	if req.Text != nil && req.Text.Verbosity != nil {
		resp.Text.Verbosity = req.Text.Verbosity
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	resp.Reasoning.Effort = c.effort
	if c.summary {
		resp.Reasoning.Summary = c.req.Reasoning.Summary
		if resp.Reasoning.Summary == nil {
			resp.Reasoning.Summary = c.req.Reasoning.GenerateSummary
		}
	}
	return resp
}

// responsesParam renames the chat request's fields in an error of the
// chat core to the Responses request's.
func responsesParam(e *apiError) *apiError {
	p, ok := e.Param.(string)
	if !ok {
		return e
	}
	renamed := p
	switch {
	case p == "messages" || strings.HasPrefix(p, "messages["):
		renamed = "input"
	case strings.HasPrefix(p, "response_format"):
		renamed = "text.format" + strings.TrimPrefix(strings.TrimPrefix(p, "response_format"), ".json_schema")
	case strings.HasPrefix(p, "tools[") && strings.Contains(p, "].function."):
		renamed = strings.Replace(p, "].function.", "].", 1)
	case p == "tool_choice.function.name":
		renamed = "tool_choice.name"
	case p == "max_tokens":
		renamed = "max_output_tokens"
	case p == "reasoning_effort":
		renamed = "reasoning.effort"
	}
	if renamed != p {
		e.Param = renamed
		if strings.HasPrefix(e.Message, p) {
			e.Message = renamed + strings.TrimPrefix(e.Message, p)
		}
	}
	// A conflict of constraints names the other field in its message.
	e.Message = strings.ReplaceAll(e.Message, "response_format", "text.format")
	return e
}
