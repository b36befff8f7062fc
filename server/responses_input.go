package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// convItem is an item of a Responses conversation as the store keeps it
// and as chat messages are made from it: an input item, resolved, or an
// output item.
type convItem struct {
	Kind   string // "message", "reasoning", "function_call" or "function_call_output"
	ID     string // an output item's id
	Role   string // a message's: user, system, developer or assistant
	Text   string // a message's text, a reasoning item's, a function call's output
	CallID string
	Name   string // a function call's function
	Args   string // a function call's arguments, JSON text
}

// size is the bytes the item holds, roughly, for the store's bound.
func (it convItem) size() int {
	return 96 + len(it.ID) + len(it.Role) + len(it.Text) + len(it.CallID) + len(it.Name) + len(it.Args)
}

// decodeInput decodes the request's input: a string (one user message)
// or an array of input items; item references are resolved in st.
func decodeInput(raw json.RawMessage, st *responseStore) ([]convItem, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	const shape = "input must be a string or an array of input items"
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badRequest("input", "%s", shape)
		}
		return []convItem{{Kind: "message", Role: "user", Text: s}}, nil
	case '[':
	default:
		return nil, badRequest("input", "%s", shape)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequest("input", "%s", shape)
	}
	items := make([]convItem, 0, len(list))
	for i, r := range list {
		param := fmt.Sprintf("input[%d]", i)
		var in inputItem
		if err := json.Unmarshal(r, &in); err != nil {
			return nil, itemError(param, err)
		}
		it, e := in.convert(param, st)
		if e != nil {
			return nil, e
		}
		items = append(items, it)
	}
	return items, nil
}

// itemError is the answer to an input item that does not decode.
func itemError(param string, err error) *apiError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return badRequest(param, "%s must be an object, not %s", param, typeErr.Value)
		}
		field := param + "." + typeErr.Field
		return badRequest(field, "%s: expected %s, got %s", field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	}
	return badRequest(param, "%s: %v", param, err)
}

// convert checks an input item and resolves it.
func (in *inputItem) convert(param string, st *responseStore) (convItem, *apiError) {
	switch in.Type {
	case "", "message":
		switch in.Role {
		case "user", "system", "developer", "assistant":
		case "":
			return convItem{}, badRequest(param+".role", "%s.role is required", param)
		default:
			return convItem{}, badRequest(param+".role", "%s.role %q is not one of user, system, developer, assistant", param, in.Role)
		}
		text, e := partsText(in.Content, param+".content", in.Role != "assistant")
		if e != nil {
			return convItem{}, e
		}
		return convItem{Kind: "message", Role: in.Role, Text: text}, nil
	case "function_call":
		if in.CallID == "" {
			return convItem{}, badRequest(param+".call_id", "%s.call_id is required", param)
		}
		if in.Name == "" {
			return convItem{}, badRequest(param+".name", "%s.name is required", param)
		}
		args, e := toolArguments(in.Arguments, param+".arguments")
		if e != nil {
			return convItem{}, e
		}
		return convItem{Kind: "function_call", ID: in.ID, CallID: in.CallID, Name: in.Name, Args: args}, nil
	case "function_call_output":
		if in.CallID == "" {
			return convItem{}, badRequest(param+".call_id", "%s.call_id is required", param)
		}
		text, e := partsText(in.Output, param+".output", true)
		if e != nil {
			return convItem{}, e
		}
		return convItem{Kind: "function_call_output", CallID: in.CallID, Text: text}, nil
	case "reasoning":
		text, e := reasoningText(in, param)
		if e != nil {
			return convItem{}, e
		}
		return convItem{Kind: "reasoning", ID: in.ID, Text: text}, nil
	case "item_reference":
		if in.ID == "" {
			return convItem{}, badRequest(param+".id", "%s.id is required", param)
		}
		it, ok := st.item(in.ID)
		if !ok {
			e := badRequest(param+".id", "%s: item with id %q not found (items of stored responses only)", param, in.ID)
			e.Code = "item_not_found"
			return convItem{}, e
		}
		return it, nil
	}
	return convItem{}, badRequest(param+".type", "%s.type %q is not supported: input items are messages, function_call, function_call_output, reasoning and item_reference", param, in.Type)
}

// partsText returns the text of a message's content or a function's
// output: a string, or text parts (input_text, output_text, refusal).
// Absent content is an error where required.
func partsText(raw json.RawMessage, param string, required bool) (string, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		if required {
			return "", badRequest(param, "%s is required", param)
		}
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", badRequest(param, "%s: %v", param, err)
		}
		return s, nil
	}
	var parts []inputPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(param, "%s must be a string or an array of content parts", param)
	}
	var b strings.Builder
	for i, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, i)
		var text *string
		switch p.Type {
		case "input_text", "output_text":
			text = p.Text
		case "refusal":
			text = p.Refusal
		case "input_image", "input_file", "input_audio":
			return "", badRequest(pp, "%s: %s parts are not supported: this model reads text only", pp, p.Type)
		case "":
			return "", badRequest(pp+".type", "%s.type is required", pp)
		default:
			return "", badRequest(pp+".type", "%s: unknown content part type %q", pp, p.Type)
		}
		if text == nil {
			field := "text"
			if p.Type == "refusal" {
				field = "refusal"
			}
			return "", badRequest(pp+"."+field, "%s: a %s part needs %s", pp, p.Type, field)
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(*text)
	}
	return b.String(), nil
}

// reasoningText returns a reasoning item's text: its reasoning_text
// content, or else its summary. Encrypted content is opaque and left out.
func reasoningText(in *inputItem, param string) (string, *apiError) {
	var texts []string
	if present(in.Content) {
		var parts []inputPart
		if err := json.Unmarshal(in.Content, &parts); err != nil {
			return "", badRequest(param+".content", `%s.content must be an array of {"type": "reasoning_text", "text": ...}`, param)
		}
		for i, p := range parts {
			if p.Type != "reasoning_text" || p.Text == nil {
				return "", badRequest(fmt.Sprintf("%s.content[%d]", param, i), `%s.content[%d] must be {"type": "reasoning_text", "text": ...}`, param, i)
			}
			texts = append(texts, *p.Text)
		}
	}
	if len(texts) == 0 {
		for i, p := range in.Summary {
			if p.Type != "summary_text" || p.Text == nil {
				return "", badRequest(fmt.Sprintf("%s.summary[%d]", param, i), `%s.summary[%d] must be {"type": "summary_text", "text": ...}`, param, i)
			}
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// chatMessages turns the instructions and a conversation's items into
// chat messages: the instructions a system message first; a run of
// reasoning, assistant message and function_call items one assistant
// message (a reasoning item, or a message after text or calls, opens the
// next); a function_call_output a tool message, named after its call.
func chatMessages(instructions *string, items []convItem) []chatMessage {
	var msgs []chatMessage
	if instructions != nil {
		msgs = append(msgs, chatMessage{Role: "system", Content: jsonText(*instructions)})
	}
	names := map[string]string{} // call_id -> function
	var turn *chatMessage        // the assistant message being gathered
	flush := func() {
		if turn != nil {
			msgs = append(msgs, *turn)
			turn = nil
		}
	}
	for _, it := range items {
		switch it.Kind {
		case "message":
			if it.Role != "assistant" {
				flush()
				msgs = append(msgs, chatMessage{Role: it.Role, Content: jsonText(it.Text)})
				continue
			}
			if turn != nil && (turn.Content != nil || len(turn.ToolCalls) > 0) {
				flush()
			}
			if turn == nil {
				turn = &chatMessage{Role: "assistant"}
			}
			turn.Content = jsonText(it.Text)
		case "reasoning":
			if turn != nil && turn.Content == nil && len(turn.ToolCalls) == 0 && turn.ReasoningContent != nil {
				*turn.ReasoningContent += "\n" + it.Text // a second part of the same reasoning
				continue
			}
			flush()
			turn = &chatMessage{Role: "assistant", ReasoningContent: ptr(it.Text)}
		case "function_call":
			if turn == nil {
				turn = &chatMessage{Role: "assistant"}
			}
			var tc requestToolCall
			tc.ID, tc.Type = it.CallID, "function"
			tc.Function.Name, tc.Function.Arguments = it.Name, jsonText(it.Args)
			turn.ToolCalls = append(turn.ToolCalls, tc)
			names[it.CallID] = it.Name
		case "function_call_output":
			flush()
			msgs = append(msgs, chatMessage{Role: "tool", Content: jsonText(it.Text), ToolCallID: it.CallID, Name: names[it.CallID]})
		}
	}
	flush()
	return msgs
}

// jsonText is s as a JSON string.
func jsonText(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
