package server

import (
	"strings"
	"time"

	"inferno/engine"
	"inferno/parser"
	"inferno/sampling"
)

// outputBuilder turns a reply's parser deltas into the response's output
// items and, when the response is streamed, into its events, in the
// order OpenAI sends them: response.created and response.in_progress;
// for each item response.output_item.added, its part's added event, its
// deltas, its done events and response.output_item.done; then
// response.completed (or response.incomplete, or response.failed). A
// change of kind (reasoning, text, a tool call) closes the item open and
// opens the next.
type outputBuilder struct {
	resp     *responseObject
	m        *Model
	send     func(*streamEvent) error // nil: not streamed
	summary  bool                     // reasoning goes to the item's summary, not its content
	logprobs bool                     // output_text carries the tokens' log-probabilities
	seq      int                      // the next event's sequence_number
	items    []convItem               // the output, as the store keeps it

	msg     *messageItem   // the message open, if one is
	rs      *reasoningItem // the reasoning item open, if one is
	index   int            // the open item's output_index
	text    strings.Builder
	lps     []tokenLogprob // the open message's log-probabilities
	pending []tokenLogprob // those of tokens whose text has not come out yet

	reasoningTokens int
	inReasoning     bool // the reply is in its reasoning
}

// emit sends ev, numbered, when the response is streamed.
func (b *outputBuilder) emit(ev streamEvent) error {
	if b.send == nil {
		return nil
	}
	ev.SequenceNumber = b.seq
	b.seq++
	return b.send(&ev)
}

// start sends the response, in progress.
func (b *outputBuilder) start() error {
	if err := b.emit(streamEvent{Type: "response.created", Response: b.resp}); err != nil {
		return err
	}
	return b.emit(streamEvent{Type: "response.in_progress", Response: b.resp})
}

// add takes one of the reply's deltas and the token that made it (nil:
// none).
func (b *outputBuilder) add(d parser.Delta, tok *sampling.Token) error {
	if tok != nil {
		if d.Reasoning != "" || (b.inReasoning && d.Content == "" && len(d.ToolCalls) == 0) {
			b.reasoningTokens++
		} else if b.logprobs && !b.m.EOG[tok.ID] {
			b.pending = append(b.pending, b.m.chatLogprob(*tok))
		}
	}
	if d.Reasoning != "" {
		b.inReasoning = true
		if err := b.reasoning(d.Reasoning); err != nil {
			return err
		}
	}
	if d.Content != "" {
		b.inReasoning = false
		if err := b.content(d.Content); err != nil {
			return err
		}
	}
	for _, c := range d.ToolCalls {
		b.inReasoning = false
		if err := b.call(c); err != nil {
			return err
		}
	}
	return nil
}

func (b *outputBuilder) reasoning(text string) error {
	if b.rs == nil {
		if err := b.close("completed"); err != nil {
			return err
		}
		b.rs = &reasoningItem{ID: requestID("rs_"), Type: "reasoning", Summary: []textPart{}, Status: "in_progress"}
		b.index = len(b.resp.Output)
		b.resp.Output = append(b.resp.Output, b.rs)
		if err := b.emit(streamEvent{Type: "response.output_item.added", OutputIndex: ptr(b.index), Item: b.rs}); err != nil {
			return err
		}
		var err error
		if b.summary {
			err = b.emit(streamEvent{Type: "response.reasoning_summary_part.added", ItemID: b.rs.ID, OutputIndex: ptr(b.index),
				SummaryIndex: ptr(0), Part: textPart{Type: "summary_text"}})
		} else {
			err = b.emit(streamEvent{Type: "response.content_part.added", ItemID: b.rs.ID, OutputIndex: ptr(b.index),
				ContentIndex: ptr(0), Part: textPart{Type: "reasoning_text"}})
		}
		if err != nil {
			return err
		}
	}
	b.text.WriteString(text)
	if b.summary {
		return b.emit(streamEvent{Type: "response.reasoning_summary_text.delta", ItemID: b.rs.ID, OutputIndex: ptr(b.index),
			SummaryIndex: ptr(0), Delta: &text})
	}
	return b.emit(streamEvent{Type: "response.reasoning_text.delta", ItemID: b.rs.ID, OutputIndex: ptr(b.index),
		ContentIndex: ptr(0), Delta: &text})
}

func (b *outputBuilder) content(text string) error {
	if b.msg == nil {
		if err := b.openMessage(); err != nil {
			return err
		}
	}
	b.text.WriteString(text)
	lps := b.takePending()
	return b.emit(streamEvent{Type: "response.output_text.delta", ItemID: b.msg.ID, OutputIndex: ptr(b.index),
		ContentIndex: ptr(0), Delta: &text, Logprobs: &lps})
}

// takePending moves the pending log-probabilities to the open message's
// and returns them.
func (b *outputBuilder) takePending() []tokenLogprob {
	lps := b.pending
	if lps == nil {
		lps = []tokenLogprob{}
	}
	b.lps = append(b.lps, lps...)
	b.pending = nil
	return lps
}

func (b *outputBuilder) openMessage() error {
	if err := b.close("completed"); err != nil {
		return err
	}
	b.msg = &messageItem{ID: requestID("msg_"), Type: "message", Status: "in_progress", Role: "assistant", Content: []outputText{}}
	b.index = len(b.resp.Output)
	b.resp.Output = append(b.resp.Output, b.msg)
	b.lps = []tokenLogprob{}
	if err := b.emit(streamEvent{Type: "response.output_item.added", OutputIndex: ptr(b.index), Item: b.msg}); err != nil {
		return err
	}
	return b.emit(streamEvent{Type: "response.content_part.added", ItemID: b.msg.ID, OutputIndex: ptr(b.index), ContentIndex: ptr(0),
		Part: outputText{Type: "output_text", Annotations: []any{}, Logprobs: []tokenLogprob{}}})
}

// call adds a complete function call as an item of its own.
func (b *outputBuilder) call(c parser.ToolCall) error {
	if err := b.close("completed"); err != nil {
		return err
	}
	item := &functionCallItem{ID: requestID("fc_"), Type: "function_call", Status: "in_progress", CallID: c.ID, Name: c.Name}
	index := len(b.resp.Output)
	b.resp.Output = append(b.resp.Output, item)
	if err := b.emit(streamEvent{Type: "response.output_item.added", OutputIndex: ptr(index), Item: item}); err != nil {
		return err
	}
	args := c.Arguments
	if err := b.emit(streamEvent{Type: "response.function_call_arguments.delta", ItemID: item.ID, OutputIndex: ptr(index), Delta: &args}); err != nil {
		return err
	}
	if err := b.emit(streamEvent{Type: "response.function_call_arguments.done", ItemID: item.ID, OutputIndex: ptr(index), Arguments: &args}); err != nil {
		return err
	}
	item.Arguments, item.Status = args, "completed"
	b.items = append(b.items, convItem{Kind: "function_call", ID: item.ID, CallID: c.ID, Name: c.Name, Args: args})
	return b.emit(streamEvent{Type: "response.output_item.done", OutputIndex: ptr(index), Item: item})
}

// close ends the item open, if one is, with status.
func (b *outputBuilder) close(status string) error {
	text := b.text.String()
	b.text.Reset()
	switch {
	case b.msg != nil:
		msg := b.msg
		b.msg = nil
		lps := b.lps
		part := outputText{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: lps}
		if err := b.emit(streamEvent{Type: "response.output_text.done", ItemID: msg.ID, OutputIndex: ptr(b.index), ContentIndex: ptr(0),
			Text: &text, Logprobs: &lps}); err != nil {
			return err
		}
		if err := b.emit(streamEvent{Type: "response.content_part.done", ItemID: msg.ID, OutputIndex: ptr(b.index), ContentIndex: ptr(0),
			Part: part}); err != nil {
			return err
		}
		msg.Content, msg.Status = []outputText{part}, status
		b.items = append(b.items, convItem{Kind: "message", ID: msg.ID, Role: "assistant", Text: text})
		return b.emit(streamEvent{Type: "response.output_item.done", OutputIndex: ptr(b.index), Item: msg})
	case b.rs != nil:
		rs := b.rs
		b.rs = nil
		var err error
		if b.summary {
			part := textPart{Type: "summary_text", Text: text}
			rs.Summary = []textPart{part}
			err = b.emit(streamEvent{Type: "response.reasoning_summary_text.done", ItemID: rs.ID, OutputIndex: ptr(b.index), SummaryIndex: ptr(0), Text: &text})
			if err == nil {
				err = b.emit(streamEvent{Type: "response.reasoning_summary_part.done", ItemID: rs.ID, OutputIndex: ptr(b.index), SummaryIndex: ptr(0), Part: part})
			}
		} else {
			part := textPart{Type: "reasoning_text", Text: text}
			rs.Content = []textPart{part}
			err = b.emit(streamEvent{Type: "response.reasoning_text.done", ItemID: rs.ID, OutputIndex: ptr(b.index), ContentIndex: ptr(0), Text: &text})
			if err == nil {
				err = b.emit(streamEvent{Type: "response.content_part.done", ItemID: rs.ID, OutputIndex: ptr(b.index), ContentIndex: ptr(0), Part: part})
			}
		}
		if err != nil {
			return err
		}
		rs.Status = status
		b.items = append(b.items, convItem{Kind: "reasoning", ID: rs.ID, Text: text})
		return b.emit(streamEvent{Type: "response.output_item.done", OutputIndex: ptr(b.index), Item: rs})
	}
	return nil
}

// finish ends the response: the item open ends, the response is complete
// (or incomplete: its output reached max_output_tokens or the context's
// end) with usage u, and the last event is sent. A reply with no output
// at all gets an empty message.
func (b *outputBuilder) finish(finish string, u *usage) error {
	status, itemStatus := "completed", "completed"
	if finish == engine.FinishLength {
		status, itemStatus = "incomplete", "incomplete"
	}
	if len(b.resp.Output) == 0 {
		if err := b.openMessage(); err != nil {
			return err
		}
	}
	if b.msg != nil && len(b.pending) > 0 {
		b.takePending()
	}
	if err := b.close(itemStatus); err != nil {
		return err
	}
	b.resp.Status = status
	if status == "incomplete" {
		b.resp.IncompleteDetails = &incompleteDetails{Reason: "max_output_tokens"}
	} else {
		b.resp.CompletedAt = ptr(time.Now().Unix())
	}
	b.resp.Usage = &responseUsage{InputTokens: u.PromptTokens, InputTokensDetails: inputTokensDetails{CachedTokens: u.PromptTokensDetails.CachedTokens},
		OutputTokens: u.CompletionTokens, OutputTokensDetails: outputTokensDetails{ReasoningTokens: b.reasoningTokens}, TotalTokens: u.TotalTokens}
	return b.emit(streamEvent{Type: "response." + status, Response: b.resp})
}

// fail ends a streamed response with the error that ended its generation.
func (b *outputBuilder) fail(ae *apiError) {
	code := "server_error"
	if c, ok := ae.Code.(string); ok && c != "" {
		code = c
	}
	b.resp.Status = "failed"
	b.resp.Error = &responseError{Code: code, Message: ae.Message}
	_ = b.emit(streamEvent{Type: "response.failed", Response: b.resp})
}
