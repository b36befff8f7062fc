package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"hash"
	"net/http"
	"strings"
	"time"

	"inferno/engine"
	"inferno/parser"
	"inferno/sampling"
)

// anthropicWriter is the ResponseWriter of an Anthropic route: writeError
// finds it and answers in Anthropic's error shape.
type anthropicWriter struct{ http.ResponseWriter }

func (w anthropicWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (anthropicWriter) shapeError(e *apiError) any { return anthropicError(e) }

// anthropicError returns e in Anthropic's shape, its type chosen by its
// HTTP status as Anthropic's API chooses it.
func anthropicError(e *apiError) anthropicErrorBody {
	var b anthropicErrorBody
	b.Type = "error"
	b.Error.Message = e.Message
	if e.Code == "context_length_exceeded" {
		// Anthropic's words, which clients look for to compact a
		// conversation.
		b.Error.Message = "prompt is too long: " + e.Message
	}
	switch e.Status {
	case http.StatusUnauthorized:
		b.Error.Type = "authentication_error"
		b.Error.Message = "missing or wrong API key: send the header x-api-key: KEY (or Authorization: Bearer KEY)"
	case http.StatusForbidden:
		b.Error.Type = "permission_error"
	case http.StatusNotFound:
		b.Error.Type = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		b.Error.Type = "request_too_large"
	case http.StatusTooManyRequests:
		b.Error.Type = "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		b.Error.Type = "overloaded_error"
	case http.StatusGatewayTimeout:
		b.Error.Type = "timeout_error"
	default:
		if e.Status >= 500 {
			b.Error.Type = "api_error"
		} else {
			b.Error.Type = "invalid_request_error"
		}
	}
	return b
}

// coreNames renames the chat core's OpenAI field names in its error
// messages to the Messages API's.
var coreNames = strings.NewReplacer(
	".function.parameters", ".input_schema",
	"tool_choice.function.name", "tool_choice.name",
	`tool_choice "required"`, `tool_choice {"type": "any"}`,
	"response_format.json_schema.schema", "output_config.format.schema",
	"response_format", "output_config.format",
)

// messages serves POST /v1/messages: the request is translated into a
// chat request (anthropic_wire.go) and run by the chat core; the reply's
// reasoning, text and tool calls become thinking, text and tool_use
// blocks, streamed as Anthropic's events or answered whole.
func (s *Server) messages(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var body messagesRequest
	if e := decodeBody(r, &body); e != nil {
		return e
	}
	req, e := body.chatRequest(false)
	if e != nil {
		return e
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel() // ends the generation when the handler returns
	run, e := s.startChat(ctx, m, req, start)
	if e != nil {
		e.Message = coreNames.Replace(e.Message)
		return e
	}
	id := requestID("msg_")
	c := run.chs[0]
	c.g.info.id = id
	w.Header().Set("Request-Id", id)
	if body.Stream {
		streamMessage(w, run, id, *body.MaxTokens)
		return nil
	}
	var col blockCollector
	bw := &blockWriter{send: col.send}
	var finish string
	gone, err := c.drive(func(d parser.Delta, _ *sampling.Token, f string) error {
		finish = f
		return bw.add(d, f != "")
	})
	switch {
	case gone:
		return nil // the client is gone
	case err != nil:
		return failure(err)
	}
	if col.blocks == nil {
		col.blocks = []anthropicContent{}
	}
	msg := &anthropicResponse{ID: id, Type: "message", Role: "assistant", Model: m.Name, Content: col.blocks, Usage: usageOf(c.g)}
	msg.StopReason, msg.StopSequence = stopReason(c.g, finish, *body.MaxTokens)
	writeJSON(w, http.StatusOK, msg)
	return nil
}

// streamMessage streams the run's one choice as Anthropic's events:
// message_start (the usage of the prompt), a ping, each content block's
// content_block_start, deltas and content_block_stop, then message_delta
// (the stop reason, the usage) and message_stop. A failed generation ends
// the stream with an error event.
func streamMessage(w http.ResponseWriter, run *chatRun, id string, maxTokens int) {
	out := newSSE(w)
	c := run.chs[0]
	msg := &anthropicResponse{ID: id, Type: "message", Role: "assistant", Model: run.m.Name, Content: []anthropicContent{},
		Usage: anthropicUsage{InputTokens: c.g.prompt}}
	if out.event("message_start", messageStartEvent{Type: "message_start", Message: msg}) != nil ||
		out.event("ping", typeOnlyEvent{Type: "ping"}) != nil {
		return
	}
	bw := &blockWriter{send: out.event}
	var finish string
	gone, err := c.drive(func(d parser.Delta, _ *sampling.Token, f string) error {
		finish = f
		return bw.add(d, f != "")
	})
	switch {
	case gone:
		return
	case err != nil:
		_ = out.event("error", anthropicError(failure(err)))
		return
	}
	md := messageDeltaEvent{Type: "message_delta", Usage: usageOf(c.g)}
	md.Delta.StopReason, md.Delta.StopSequence = stopReason(c.g, finish, maxTokens)
	if out.event("message_delta", md) != nil {
		return
	}
	_ = out.event("message_stop", typeOnlyEvent{Type: "message_stop"})
}

// countTokens serves POST /v1/messages/count_tokens: the tokens of the
// prompt a messages request with this body would read.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	var body messagesRequest
	if e := decodeBody(r, &body); e != nil {
		return e
	}
	req, e := body.chatRequest(true)
	if e != nil {
		return e
	}
	if e := checkModel(m, req.Model); e != nil {
		return e
	}
	prompt, e := renderChat(m, req)
	if e != nil {
		e.Message = coreNames.Replace(e.Message)
		return e
	}
	writeJSON(w, http.StatusOK, struct {
		InputTokens int `json:"input_tokens"`
	}{len(m.Tokenizer.Encode(prompt))})
	return nil
}

// usageOf is a generation's usage: the prompt's tokens split into those
// the prefix cache held (cache_read_input_tokens) and the rest
// (input_tokens), as Anthropic counts them.
func usageOf(g *generation) anthropicUsage {
	return anthropicUsage{InputTokens: g.prompt - g.cached, CacheReadInputTokens: g.cached, OutputTokens: g.tokens}
}

// stopReason is the stop_reason (and stop_sequence) of a reply that ended
// with the chat core's finish reason: end_turn, tool_use, stop_sequence,
// max_tokens, or model_context_window_exceeded when the context filled
// before max_tokens.
func stopReason(g *generation, finish string, maxTokens int) (*string, *string) {
	switch {
	case finish == FinishToolCalls:
		return ptr("tool_use"), nil
	case finish == engine.FinishLength && g.tokens < maxTokens:
		return ptr("model_context_window_exceeded"), nil
	case finish == engine.FinishLength:
		return ptr("max_tokens"), nil
	case g.stop != "":
		return ptr("stop_sequence"), ptr(g.stop)
	}
	return ptr("end_turn"), nil
}

// blockWriter turns a reply's parser deltas into content blocks, as the
// events that stream them: each block is opened by content_block_start,
// filled by deltas and closed by content_block_stop, its index counting
// from 0. Reasoning fills thinking blocks, closed with their signature;
// text fills text blocks, which white space alone does not open; each
// tool call is a tool_use block whose input arrives in one
// input_json_delta.
type blockWriter struct {
	send     func(event string, v any) error
	next     int             // the next block's index
	open     string          // the open block's type: "", "text" or "thinking"
	space    strings.Builder // white space held until a text block opens
	thinking hash.Hash       // the open thinking block's text, for its signature
}

// add writes the blocks of delta d, in the order of its parts (reasoning,
// text, tool calls); last closes the open block.
func (b *blockWriter) add(d parser.Delta, last bool) error {
	if d.Reasoning != "" {
		if err := b.reasoning(d.Reasoning); err != nil {
			return err
		}
	}
	if d.Content != "" {
		if err := b.text(d.Content); err != nil {
			return err
		}
	}
	for _, c := range d.ToolCalls {
		if err := b.toolUse(c); err != nil {
			return err
		}
	}
	if last {
		return b.close()
	}
	return nil
}

func (b *blockWriter) reasoning(text string) error {
	if b.open != "thinking" {
		if err := b.start("thinking", anthropicContent{Type: "thinking", Thinking: ptr(""), Signature: ptr("")}); err != nil {
			return err
		}
		b.thinking = sha256.New()
	}
	b.thinking.Write([]byte(text))
	return b.delta(anthropicDelta{Type: "thinking_delta", Thinking: &text})
}

func (b *blockWriter) text(text string) error {
	if b.open != "text" {
		if strings.TrimSpace(text) == "" {
			b.space.WriteString(text)
			return nil
		}
		text = b.space.String() + text
		if err := b.start("text", anthropicContent{Type: "text", Text: ptr("")}); err != nil {
			return err
		}
	}
	return b.delta(anthropicDelta{Type: "text_delta", Text: &text})
}

func (b *blockWriter) toolUse(c parser.ToolCall) error {
	block := anthropicContent{Type: "tool_use", ID: requestID("toolu_"), Name: c.Name, Input: json.RawMessage("{}"), Caller: &toolCaller{Type: "direct"}}
	if err := b.start("tool_use", block); err != nil {
		return err
	}
	if err := b.delta(anthropicDelta{Type: "input_json_delta", PartialJSON: &c.Arguments}); err != nil {
		return err
	}
	return b.close()
}

// start closes the open block and opens the next, of type typ.
func (b *blockWriter) start(typ string, block anthropicContent) error {
	if err := b.close(); err != nil {
		return err
	}
	b.open = typ
	b.space.Reset()
	return b.send("content_block_start", blockStartEvent{Type: "content_block_start", Index: b.next, ContentBlock: block})
}

func (b *blockWriter) delta(d anthropicDelta) error {
	return b.send("content_block_delta", blockDeltaEvent{Type: "content_block_delta", Index: b.next, Delta: d})
}

// close closes the open block, if one is: a thinking block gets its
// signature first, a digest of its text that is not checked when a client
// gives it back.
func (b *blockWriter) close() error {
	if b.open == "" {
		return nil
	}
	if b.open == "thinking" {
		sig := base64.StdEncoding.EncodeToString(b.thinking.Sum(nil))
		if err := b.delta(anthropicDelta{Type: "signature_delta", Signature: &sig}); err != nil {
			return err
		}
	}
	b.open = ""
	b.next++
	return b.send("content_block_stop", blockStopEvent{Type: "content_block_stop", Index: b.next - 1})
}

// blockCollector gathers the content blocks of a blockWriter's events,
// as Anthropic's clients accumulate a stream, for a reply answered whole.
type blockCollector struct {
	blocks []anthropicContent
	bufs   []strings.Builder // by block: its text, thinking or input so far
}

func (c *blockCollector) send(_ string, v any) error {
	switch ev := v.(type) {
	case blockStartEvent:
		c.blocks = append(c.blocks, ev.ContentBlock)
		c.bufs = append(c.bufs, strings.Builder{})
	case blockDeltaEvent:
		d, buf := ev.Delta, &c.bufs[ev.Index]
		switch d.Type {
		case "text_delta":
			buf.WriteString(*d.Text)
		case "thinking_delta":
			buf.WriteString(*d.Thinking)
		case "input_json_delta":
			buf.WriteString(*d.PartialJSON)
		case "signature_delta":
			c.blocks[ev.Index].Signature = d.Signature
		}
	case blockStopEvent:
		b, text := &c.blocks[ev.Index], c.bufs[ev.Index].String()
		switch b.Type {
		case "text":
			b.Text = &text
		case "thinking":
			b.Thinking = &text
		case "tool_use":
			b.Input = json.RawMessage(text)
		}
	}
	return nil
}
