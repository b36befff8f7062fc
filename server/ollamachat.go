package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"inferno/engine"
	"inferno/parser"
	"inferno/sampling"
	"inferno/structured"
)

// ollama's /api/chat and /api/generate: the chat goes through the chat
// core (startChat) as OpenAI's chat completions do; generate renders its
// prompt as one user message through the chat template, or with "raw"
// takes it as it is, as completions do.

// ollamaMessage is a message of an /api/chat request.
type ollamaMessage struct {
	Role       string            `json:"role"`
	Content    json.RawMessage   `json:"content"` // a string (or null)
	Thinking   string            `json:"thinking"`
	Images     json.RawMessage   `json:"images"`
	ToolCalls  []requestToolCall `json:"tool_calls"`
	ToolName   string            `json:"tool_name"`
	ToolCallID string            `json:"tool_call_id"`
}

// ollamaChatRequest is the body of POST /api/chat. Temperature, TopP,
// MaxOutputTokens and ToolChoice are not ollama's (which ignores them):
// ollama-ai-provider-v2 sends them, and they apply where options does not
// say; tool_choice is "auto", "none", "required", or {"type": "function",
// "name": N} (or OpenAI's spelling of it).
type ollamaChatRequest struct {
	Model           string            `json:"model"`
	Messages        []ollamaMessage   `json:"messages"`
	Tools           []json.RawMessage `json:"tools"`
	Format          json.RawMessage   `json:"format"`
	Options         json.RawMessage   `json:"options"`
	Stream          *bool             `json:"stream"`
	Think           json.RawMessage   `json:"think"`
	KeepAlive       json.RawMessage   `json:"keep_alive"`
	Logprobs        bool              `json:"logprobs"`
	TopLogprobs     *int              `json:"top_logprobs"`
	Temperature     *float64          `json:"temperature"`
	TopP            *float64          `json:"top_p"`
	MaxOutputTokens *int              `json:"max_output_tokens"`
	ToolChoice      json.RawMessage   `json:"tool_choice"`
}

// ollamaGenerateRequest is the body of POST /api/generate.
type ollamaGenerateRequest struct {
	Model       string          `json:"model"`
	Prompt      string          `json:"prompt"`
	Suffix      string          `json:"suffix"`
	System      string          `json:"system"`
	Template    string          `json:"template"`
	Context     []int64         `json:"context"`
	Raw         bool            `json:"raw"`
	Images      json.RawMessage `json:"images"`
	Format      json.RawMessage `json:"format"`
	Options     json.RawMessage `json:"options"`
	Stream      *bool           `json:"stream"`
	Think       json.RawMessage `json:"think"`
	KeepAlive   json.RawMessage `json:"keep_alive"`
	Logprobs    bool            `json:"logprobs"`
	TopLogprobs *int            `json:"top_logprobs"`
}

// ollamaResponseMessage is the assistant's message of a chat reply, or
// its part in a streamed line.
type ollamaResponseMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking,omitempty"`
	ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
}

// ollamaToolCall is a tool call as ollama returns it: its arguments a
// JSON object, not the text of one.
type ollamaToolCall struct {
	ID       string         `json:"id,omitempty"`
	Function ollamaFunction `json:"function"`
}

type ollamaFunction struct {
	Index     int             `json:"index"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ollamaMetrics end a reply (the last line of a stream): why it ended
// and its counts and durations, in nanoseconds.
type ollamaMetrics struct {
	DoneReason         string        `json:"done_reason"`
	TotalDuration      time.Duration `json:"total_duration"`
	LoadDuration       time.Duration `json:"load_duration"`
	PromptEvalCount    int           `json:"prompt_eval_count"`
	PromptEvalDuration time.Duration `json:"prompt_eval_duration"`
	EvalCount          int           `json:"eval_count"`
	EvalDuration       time.Duration `json:"eval_duration"`
}

type ollamaChatResponse struct {
	Model     string                `json:"model"`
	CreatedAt string                `json:"created_at"`
	Message   ollamaResponseMessage `json:"message"`
	Logprobs  []tokenLogprob        `json:"logprobs,omitempty"`
	Done      bool                  `json:"done"`
	*ollamaMetrics
}

type ollamaGenerateResponse struct {
	Model     string         `json:"model"`
	CreatedAt string         `json:"created_at"`
	Response  string         `json:"response"`
	Thinking  string         `json:"thinking,omitempty"`
	Logprobs  []tokenLogprob `json:"logprobs,omitempty"`
	Done      bool           `json:"done"`
	*ollamaMetrics
}

// ollamaChat serves POST /api/chat.
func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req ollamaChatRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	if m.Embedding {
		return badRequest("model", "%q does not support chat", req.Model)
	}
	if e := s.keepAlive(m, req.KeepAlive); e != nil {
		return e
	}
	reply := ollamaReply{model: req.Model, chat: true, logprobs: req.Logprobs}
	if len(req.Messages) == 0 {
		// ollama's way to load (or, with keep_alive 0, unload) a model.
		return reply.loaded(w)
	}
	opts, e := decodeOptions(req.Options)
	if e != nil {
		return e
	}
	sf, e := opts.sampling(samplingFields{Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.MaxOutputTokens})
	if e != nil {
		return e
	}
	creq := &chatRequest{Messages: make([]chatMessage, len(req.Messages)), samplingFields: sf, Tools: req.Tools,
		Logprobs: req.Logprobs, TopLogprobs: req.TopLogprobs}
	for i, om := range req.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		if e := refuseImages(om.Images, param+".images"); e != nil {
			return e
		}
		content, e := ollamaContent(om.Content, param+".content")
		if e != nil {
			return e
		}
		cm := chatMessage{Role: om.Role, Content: content, Name: om.ToolName, ToolCallID: om.ToolCallID, ToolCalls: om.ToolCalls}
		if om.Thinking != "" {
			cm.ReasoningContent = &om.Thinking
		}
		creq.Messages[i] = cm
	}
	if creq.ToolChoice, e = ollamaToolChoice(req.ToolChoice); e != nil {
		return e
	}
	if creq.ResponseFormat, e = ollamaFormat(req.Format); e != nil {
		return e
	}
	if e := applyThink(m, creq, req.Think, req.Model); e != nil {
		return e
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel() // ends the generation when the handler returns
	run, e := s.startChat(ctx, m, creq, start)
	if e != nil {
		return ollamaParams(e)
	}
	run.chs[0].g.info.id = requestID("chat-")
	return reply.run(w, run.chs[0], req.Stream == nil || *req.Stream)
}

// ollamaContent returns a message's content as the chat core reads it: a
// string, or null for none.
func ollamaContent(raw json.RawMessage, param string) (json.RawMessage, *apiError) {
	if !present(raw) {
		return json.RawMessage(`""`), nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, badRequest(param, "%s must be a string", param)
	}
	return raw, nil
}

// ollamaToolChoice turns ollama-ai-provider-v2's tool_choice into the
// chat core's: a named function is {"type": "function", "name": N} there.
func ollamaToolChoice(raw json.RawMessage) (json.RawMessage, *apiError) {
	var named struct {
		Type     string          `json:"type"`
		Name     string          `json:"name"`
		Function json.RawMessage `json:"function"`
	}
	if !present(raw) || json.Unmarshal(raw, &named) != nil || named.Type != "function" || named.Function != nil {
		return raw, nil // a string, OpenAI's shape, or an error toolChoiceOf reports
	}
	if named.Name == "" {
		return nil, badRequest("tool_choice", `tool_choice {"type": "function"} needs the function's "name"`)
	}
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": named.Name}})
	return b, nil
}

// ollamaGenerate serves POST /api/generate.
func (s *Server) ollamaGenerate(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req ollamaGenerateRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	if m.Embedding {
		return badRequest("model", "%q does not support generate", req.Model)
	}
	if e := s.keepAlive(m, req.KeepAlive); e != nil {
		return e
	}
	switch {
	case req.Suffix != "":
		return badRequest("suffix", "suffix (fill in the middle) is not supported")
	case req.Template != "":
		return badRequest("template", "template is not supported: prompts are rendered with the model's own chat template (use raw: true to send a prompt as it is)")
	case len(req.Context) > 0:
		return badRequest("context", "context is not supported (ollama deprecates it): send the conversation's messages to /api/chat")
	case req.Raw && req.System != "":
		return badRequest("system", "system is not used with raw: true: put it in the prompt")
	}
	if e := refuseImages(req.Images, "images"); e != nil {
		return e
	}
	reply := ollamaReply{model: req.Model, logprobs: req.Logprobs}
	if req.Prompt == "" {
		return reply.loaded(w)
	}
	opts, e := decodeOptions(req.Options)
	if e != nil {
		return e
	}
	sf, e := opts.sampling(samplingFields{})
	if e != nil {
		return e
	}
	rf, e := ollamaFormat(req.Format)
	if e != nil {
		return e
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel() // ends the generation when the handler returns
	var c chatGen
	if req.Raw {
		if c, e = s.startRaw(ctx, m, &req, sf, rf, start); e != nil {
			return ollamaParams(e)
		}
	} else {
		creq := &chatRequest{samplingFields: sf, Logprobs: req.Logprobs, TopLogprobs: req.TopLogprobs}
		creq.ResponseFormat = rf
		if req.System != "" {
			creq.Messages = append(creq.Messages, chatMessage{Role: "system", Content: jsonString(req.System)})
		}
		creq.Messages = append(creq.Messages, chatMessage{Role: "user", Content: jsonString(req.Prompt)})
		if e := applyThink(m, creq, req.Think, req.Model); e != nil {
			return e
		}
		run, e := s.startChat(ctx, m, creq, start)
		if e != nil {
			return ollamaParams(e)
		}
		c = run.chs[0]
	}
	c.g.info.id = requestID("gen-")
	return reply.run(w, c, req.Stream == nil || *req.Stream)
}

// startRaw submits a raw generate request: its prompt tokenized as it
// is, its reply all content.
func (s *Server) startRaw(ctx context.Context, m *Model, req *ollamaGenerateRequest, sf samplingFields, rf *responseFormat, start time.Time) (chatGen, *apiError) {
	if on, _, _, e := ollamaThink(req.Think); e != nil || on {
		if e == nil {
			e = badRequest("think", "think is not used with raw: true: the prompt is not rendered with the template")
		}
		return chatGen{}, e
	}
	if req.TopLogprobs != nil {
		if top := *req.TopLogprobs; top < 0 || top > 20 || !req.Logprobs {
			return chatGen{}, badRequest("top_logprobs", "top_logprobs %d must be in [0, 20], with logprobs: true", top)
		}
	}
	ids, e := encodePrompt(m, req.Prompt, "prompt")
	if e != nil {
		return chatGen{}, e
	}
	limit := 0
	if sf.MaxTokens != nil {
		limit = *sf.MaxTokens
	}
	top := 0
	if req.TopLogprobs != nil {
		top = *req.TopLogprobs
	}
	gen, e := sf.request(m, ids, limit, req.Logprobs, top)
	if e != nil {
		return chatGen{}, e
	}
	var cs *constraintSpec
	if rf != nil {
		specs, e := (&structuredFields{ResponseFormat: rf}).specs()
		if e != nil {
			return chatGen{}, e
		}
		if cs, e = oneSpec(specs); e != nil {
			return chatGen{}, e
		}
	}
	c, e := constrainRequest(ctx, m, cs, structured.NoThinking)
	if e != nil {
		return chatGen{}, e
	}
	if c != nil {
		gen.Constraint = c
	}
	g, e := s.submit(ctx, m, gen, start)
	if e != nil {
		return chatGen{}, e
	}
	p, err := parser.New(parser.Options{Format: parser.Plain})
	if err != nil {
		return chatGen{}, &apiError{Status: http.StatusInternalServerError, Message: err.Error()}
	}
	return chatGen{g: g, p: p}, nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// ollamaParams renames the parameters of the chat core's errors to
// ollama's: the sampling fields are options, response_format is format.
func ollamaParams(e *apiError) *apiError {
	p, _ := e.Param.(string)
	name, ok := map[string]string{
		"temperature": "options.temperature", "top_p": "options.top_p", "top_k": "options.top_k", "min_p": "options.min_p",
		"repetition_penalty": "options.repeat_penalty", "presence_penalty": "options.presence_penalty",
		"frequency_penalty": "options.frequency_penalty", "stop": "options.stop", "max_tokens": "options.num_predict",
		"response_format": "format", "tool_choice": "tools",
	}[p]
	if !ok {
		return e
	}
	e.Param = name
	if strings.Contains(e.Message, p) {
		e.Message = strings.Replace(e.Message, p, name, 1)
	} else {
		e.Message = name + ": " + e.Message
	}
	return e
}

// ollamaReply writes a chat or generate reply in ollama's shape.
type ollamaReply struct {
	model    string // the model's name as the request gave it
	chat     bool   // a chat message, not generate's response text
	logprobs bool
}

// body is one line (or the whole reply): d's text, lps, and when done is
// set the end's metrics.
func (o ollamaReply) body(d parser.Delta, lps []tokenLogprob, done *ollamaMetrics) any {
	now := ollamaTime(time.Now())
	if o.chat {
		msg := ollamaResponseMessage{Role: "assistant", Content: d.Content, Thinking: d.Reasoning}
		for _, c := range d.ToolCalls {
			args := json.RawMessage(c.Arguments)
			if !json.Valid(args) {
				args = json.RawMessage("{}")
			}
			msg.ToolCalls = append(msg.ToolCalls, ollamaToolCall{ID: c.ID, Function: ollamaFunction{Index: c.Index, Name: c.Name, Arguments: args}})
		}
		return ollamaChatResponse{Model: o.model, CreatedAt: now, Message: msg, Logprobs: lps, Done: done != nil, ollamaMetrics: done}
	}
	return ollamaGenerateResponse{Model: o.model, CreatedAt: now, Response: d.Content, Thinking: d.Reasoning, Logprobs: lps,
		Done: done != nil, ollamaMetrics: done}
}

// loaded answers a request with nothing to generate, ollama's way to
// load a model (done_reason "load"; needOllamaModel answers those that
// unload one).
func (o ollamaReply) loaded(w http.ResponseWriter) *apiError {
	writeJSON(w, http.StatusOK, o.body(parser.Delta{}, nil, &ollamaMetrics{DoneReason: "load"}))
	return nil
}

// run runs choice c to its end, streamed as NDJSON lines (each with the
// text the reply gained, then a last one with done: true and the
// metrics) or answered whole.
func (o ollamaReply) run(w http.ResponseWriter, c chatGen, stream bool) *apiError {
	m := c.g.m
	lp := func(tok *sampling.Token) []tokenLogprob {
		if tok == nil || !o.logprobs {
			return nil
		}
		return []tokenLogprob{m.chatLogprob(*tok)}
	}
	var finish string
	if stream {
		out := newNDJSON(w)
		gone, err := c.drive(func(d parser.Delta, tok *sampling.Token, f string) error {
			finish = f
			lps := lp(tok)
			if d.IsEmpty() && lps == nil {
				return nil
			}
			return out.send(o.body(d, lps, nil))
		})
		switch {
		case gone:
		case err != nil:
			out.sendError(failure(err))
		default:
			_ = out.send(o.body(parser.Delta{}, nil, ollamaMetricsOf(c.g, finish)))
		}
		return nil
	}
	var content, thinking strings.Builder
	var all parser.Delta
	var lps []tokenLogprob
	gone, err := c.drive(func(d parser.Delta, tok *sampling.Token, f string) error {
		content.WriteString(d.Content)
		thinking.WriteString(d.Reasoning)
		all.ToolCalls = append(all.ToolCalls, d.ToolCalls...)
		lps = append(lps, lp(tok)...)
		finish = f
		return nil
	})
	switch {
	case gone:
		return nil
	case err != nil:
		return failure(err)
	}
	all.Content, all.Reasoning = content.String(), thinking.String()
	writeJSON(w, http.StatusOK, o.body(all, lps, ollamaMetricsOf(c.g, finish)))
	return nil
}

// ollamaMetricsOf returns the metrics of generation g, ended for reason:
// the prompt's evaluation runs from the request's start to the first
// token (its wait in the queue included), the reply's from there to now.
// No model is loaded for a request: load_duration is 0.
func ollamaMetricsOf(g *generation, finish string) *ollamaMetrics {
	end := time.Now()
	first := g.first
	if first.IsZero() {
		first = end
	}
	reason := finish
	if reason == FinishToolCalls {
		reason = engine.FinishStop // ollama's reason for a reply that called tools
	}
	return &ollamaMetrics{DoneReason: reason, TotalDuration: end.Sub(g.start), PromptEvalCount: g.prompt,
		PromptEvalDuration: first.Sub(g.start), EvalCount: g.tokens, EvalDuration: end.Sub(first)}
}
