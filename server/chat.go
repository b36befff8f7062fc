package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"inferno/chat"
	"inferno/parser"
	"inferno/sampling"
)

// chatCompletions serves POST /v1/chat/completions: the messages are
// rendered with the chat template, tokenized and generated from; the reply
// goes through the parser (reasoning, tool calls) to the client.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req chatRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel() // ends every choice submitted when the handler returns
	run, e := s.startChat(ctx, m, &req, start)
	if e != nil {
		return e
	}
	id := requestID("chatcmpl-")
	run.chs[0].g.info.id = id
	if req.Stream {
		s.streamChat(w, run, id)
		return nil
	}
	choices := make([]chatChoice, len(run.chs))
	errs := make([]error, len(run.chs))
	gone := make([]bool, len(run.chs))
	var wg sync.WaitGroup
	for i := range run.chs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			choices[i], gone[i], errs[i] = collectChat(m, run.chs[i], &req)
			choices[i].Index = i
		}()
	}
	wg.Wait()
	for i := range run.chs {
		switch {
		case gone[i]:
			return nil // the client is gone
		case errs[i] != nil:
			return failure(errs[i])
		}
	}
	writeJSON(w, http.StatusOK, chatResponse{ID: id, Object: "chat.completion", Created: run.chs[0].g.created, Model: m.Name,
		SystemFingerprint: fingerprint, Choices: choices, Usage: run.usage()})
	return nil
}

// collectChat runs choice c to its end and returns its message; gone
// reports that the client went away first, err the error that ended the
// generation.
func collectChat(m *Model, c chatGen, req *chatRequest) (choice chatChoice, gone bool, err error) {
	var content, reasoning strings.Builder
	var calls []parser.ToolCall
	var lps []tokenLogprob
	var finish string
	gone, err = c.drive(func(d parser.Delta, tok *sampling.Token, f string) error {
		content.WriteString(d.Content)
		reasoning.WriteString(d.Reasoning)
		calls = append(calls, d.ToolCalls...)
		if tok != nil && req.Logprobs {
			lps = append(lps, m.chatLogprob(*tok))
		}
		finish = f
		return nil
	})
	if gone || err != nil {
		return choice, gone, err
	}
	msg := &responseMessage{Role: "assistant"}
	if c := content.String(); c != "" || len(calls) == 0 {
		msg.Content = &c
	}
	if r := reasoning.String(); r != "" {
		msg.ReasoningContent = &r
	}
	if len(calls) > 0 {
		msg.ToolCalls = wireCalls(calls)
	}
	choice = chatChoice{Message: msg, FinishReason: &finish}
	if req.Logprobs {
		choice.Logprobs = &chatLogprobs{Content: lps}
		if lps == nil {
			choice.Logprobs.Content = []tokenLogprob{}
		}
	}
	return choice, false, nil
}

// fingerprint identifies the server build in responses.
const fingerprint = "inferno"

// streamChat streams a chat completion's choices as chunks, each choice's
// interleaved with the others' by their index: its role first, then
// content, reasoning and tool-call deltas and its finish reason; then the
// usage when asked for, and [DONE]. A failed choice ends the stream with
// the error.
func (s *Server) streamChat(w http.ResponseWriter, run *chatRun, id string) {
	out := newSSE(w)
	req := run.req
	created, model := run.chs[0].g.created, run.m.Name
	if !fanOut(out, len(run.chs), func(i int, send func(any) error) error {
		return streamChoice(run.chs[i], i, id, created, model, req, send)
	}) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		if out.send(chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
			SystemFingerprint: fingerprint, Choices: []chatChoice{}, Usage: run.usage()}) != nil {
			return
		}
	}
	_ = out.done()
}

// streamChoice streams choice c (index i) through emit until it ends; it
// returns the error that ended its generation, nil otherwise (its end, or
// the stream over).
func streamChoice(c chatGen, i int, id string, created int64, model string, req *chatRequest, emit func(any) error) error {
	chunk := func(d *chatDelta, lp *chatLogprobs, finish *string) chatResponse {
		return chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, SystemFingerprint: fingerprint,
			Choices: []chatChoice{{Index: i, Delta: d, Logprobs: lp, FinishReason: finish}}}
	}
	if emit(chunk(&chatDelta{Role: "assistant", Content: ptr("")}, nil, nil)) != nil {
		return nil
	}
	_, err := c.drive(func(d parser.Delta, tok *sampling.Token, finish string) error {
		delta := &chatDelta{}
		if d.Content != "" {
			delta.Content = &d.Content
		}
		if d.Reasoning != "" {
			delta.ReasoningContent = &d.Reasoning
		}
		if len(d.ToolCalls) > 0 {
			delta.ToolCalls = wireCalls(d.ToolCalls)
		}
		var lp *chatLogprobs
		if tok != nil && req.Logprobs {
			lp = &chatLogprobs{Content: []tokenLogprob{c.g.m.chatLogprob(*tok)}}
		}
		var f *string
		if finish != "" {
			f = &finish
		}
		if delta.Content == nil && delta.ReasoningContent == nil && delta.ToolCalls == nil && lp == nil && f == nil {
			return nil
		}
		return emit(chunk(delta, lp, f))
	})
	return err
}

func wireCalls(calls []parser.ToolCall) []wireToolCall {
	out := make([]wireToolCall, len(calls))
	for i, c := range calls {
		out[i] = wireToolCall{Index: ptr(c.Index), ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}

// renderChat checks the messages and renders them with the model's chat
// template.
func renderChat(m *Model, req *chatRequest) (string, *apiError) {
	if req.Messages == nil {
		return "", badRequest("messages", "messages is required")
	}
	if len(req.Messages) == 0 {
		return "", badRequest("messages", "messages must not be empty")
	}
	msgs := make([]chat.Message, len(req.Messages))
	size := 0 // the bytes of text the prompt holds at least
	for i, wm := range req.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		role := wm.Role
		switch role {
		case "system", "user", "assistant", "tool":
		case "developer":
			role = "system"
		case "":
			return "", badRequest(param+".role", "%s.role is required", param)
		default:
			return "", badRequest(param+".role", "%s.role %q is not one of system, developer, user, assistant, tool", param, wm.Role)
		}
		content, e := flattenContent(wm.Content, role, param+".content")
		if e != nil {
			return "", e
		}
		msg := chat.Message{Role: role, Content: content, Name: wm.Name, ToolCallID: wm.ToolCallID}
		if wm.ReasoningContent != nil {
			msg.ReasoningContent = *wm.ReasoningContent
		}
		for j, tc := range wm.ToolCalls {
			if role != "assistant" {
				return "", badRequest(param+".tool_calls", "%s: only assistant messages carry tool_calls", param)
			}
			if tc.Function.Name == "" {
				return "", badRequest(fmt.Sprintf("%s.tool_calls[%d].function.name", param, j), "%s.tool_calls[%d]: the function's name is required", param, j)
			}
			args, e := toolArguments(tc.Function.Arguments, fmt.Sprintf("%s.tool_calls[%d].function.arguments", param, j))
			if e != nil {
				return "", e
			}
			msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
			size += len(tc.Function.Name) + len(args)
		}
		msgs[i] = msg
		size += len(msg.Content) + len(msg.ReasoningContent)
	}
	for i, t := range req.Tools {
		var probe struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(t, &probe); err != nil || probe.Function == nil || probe.Function.Name == "" {
			return "", badRequest(fmt.Sprintf("tools[%d]", i), `tools[%d] must be {"type": "function", "function": {"name": ..., "parameters": ...}}`, i)
		}
		size += len(t)
	}
	// A prompt too long for the context is refused before the template
	// renders it and the tokenizer splits it.
	if e := checkPromptBytes(m, "messages", size); e != nil {
		return "", e
	}
	opts := chat.Options{Tools: req.Tools, AddGenerationPrompt: true, ContinueFinalMessage: req.ContinueFinalMessage}
	if len(req.ChatTemplateKwargs) > 0 || req.ReasoningEffort != nil {
		// Raw values keep their key order and number types in the template.
		opts.Kwargs = make(map[string]any, len(req.ChatTemplateKwargs)+1)
		for k, v := range req.ChatTemplateKwargs {
			opts.Kwargs[k] = v
		}
	}
	if e := reasoningEffort(req, opts.Kwargs); e != nil {
		return "", e
	}
	if req.AddGenerationPrompt != nil {
		opts.AddGenerationPrompt = *req.AddGenerationPrompt
	} else if req.ContinueFinalMessage {
		opts.AddGenerationPrompt = false
	}
	if opts.AddGenerationPrompt && opts.ContinueFinalMessage {
		return "", badRequest("continue_final_message", "continue_final_message and add_generation_prompt cannot both be true")
	}
	if opts.ContinueFinalMessage && msgs[len(msgs)-1].Role != "assistant" {
		return "", badRequest("continue_final_message", "continue_final_message needs an assistant message last")
	}
	text, err := m.Template.Render(msgs, opts)
	if err != nil {
		return "", badRequest("messages", "the chat template failed on these messages: %v", err)
	}
	return text, nil
}

// reasoningEffort checks the request's reasoning_effort and passes it to
// the template as the variable reasoning_effort (gpt-oss's template reads
// it), as vLLM does, unless chat_template_kwargs sets that variable itself.
func reasoningEffort(req *chatRequest, kwargs map[string]any) *apiError {
	if req.ReasoningEffort == nil {
		return nil
	}
	switch v := *req.ReasoningEffort; v {
	case "low", "medium", "high":
		if _, ok := kwargs["reasoning_effort"]; !ok {
			kwargs["reasoning_effort"] = v
		}
		return nil
	default:
		return badRequest("reasoning_effort", "reasoning_effort %q is not one of low, medium, high", v)
	}
}

// toolArguments returns a tool call's arguments as JSON text: a string
// is taken as it is, a JSON object as its text.
func toolArguments(raw json.RawMessage, param string) (string, *apiError) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", badRequest(param, "%s: %v", param, err)
		}
		return s, nil
	case raw[0] == '{':
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", badRequest(param, "%s: %v", param, err)
		}
		return b.String(), nil
	}
	return "", badRequest(param, "%s must be a JSON object or a string holding one", param)
}

// flattenContent turns a message's content (a string, an array of content
// parts, or null) into text. Only text parts are supported.
func flattenContent(raw json.RawMessage, role, param string) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		if role == "assistant" || role == "tool" {
			return "", nil
		}
		return "", badRequest(param, "%s is required for a %s message", param, role)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(param, "%s must be a string or an array of content parts", param)
	}
	var b strings.Builder
	for i, p := range parts {
		switch p.Type {
		case "text":
			if p.Text == nil {
				return "", badRequest(fmt.Sprintf("%s[%d].text", param, i), "%s[%d]: a text part needs text", param, i)
			}
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(*p.Text)
		case "image_url", "image", "input_image":
			return "", badRequest(fmt.Sprintf("%s[%d]", param, i), "%s[%d]: images are not supported: this model reads text only", param, i)
		case "input_audio", "audio", "file", "video", "video_url":
			return "", badRequest(fmt.Sprintf("%s[%d]", param, i), "%s[%d]: %s parts are not supported: this model reads text only", param, i, p.Type)
		default:
			return "", badRequest(fmt.Sprintf("%s[%d].type", param, i), "%s[%d]: unknown content part type %q", param, i, p.Type)
		}
	}
	return b.String(), nil
}
