package server

import (
	"net/http"
)

// tokenize serves POST /tokenize: {"content": text} (llama.cpp), or
// {"prompt": text} or {"messages": [...]} (vLLM; messages are rendered with
// the chat template first), to {"tokens": [...], "count", "max_model_len"}.
// "with_pieces": true also returns each token's text.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	var req struct {
		chatRequest
		Content    *string `json:"content"`
		Prompt     *string `json:"prompt"`
		WithPieces bool    `json:"with_pieces"`
	}
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	var text string
	switch {
	case req.Content != nil:
		text = *req.Content
	case req.Prompt != nil:
		text = *req.Prompt
	case req.Messages != nil:
		var e *apiError
		if text, e = renderChat(m, &req.chatRequest); e != nil {
			return e
		}
	default:
		return badRequest("content", "give the text to tokenize as content (or prompt, or messages)")
	}
	if req.Messages == nil {
		if e := checkPromptBytes(m, "content", len(text)); e != nil {
			return e
		}
	}
	ids := m.Tokenizer.Encode(text)
	resp := struct {
		Tokens      []int32  `json:"tokens"`
		Pieces      []string `json:"pieces,omitempty"`
		Count       int      `json:"count"`
		MaxModelLen int      `json:"max_model_len"`
	}{Tokens: ids, Count: len(ids), MaxModelLen: m.Context}
	if resp.Tokens == nil {
		resp.Tokens = []int32{}
	}
	if req.WithPieces {
		resp.Pieces = make([]string, len(ids))
		for i, id := range ids {
			resp.Pieces[i], _ = m.tokenBytes(id)
		}
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// detokenize serves POST /detokenize: {"tokens": [ids]} to
// {"content": text, "prompt": text} (llama.cpp's and vLLM's names).
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	var req struct {
		Tokens []int64 `json:"tokens"`
	}
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	if req.Tokens == nil {
		return badRequest("tokens", "tokens is required")
	}
	ids := make([]int32, len(req.Tokens))
	for i, id := range req.Tokens {
		if id < 0 || id >= int64(m.Vocab) {
			return badRequest("tokens", "tokens[%d] = %d is not a token id (0 to %d)", i, id, m.Vocab-1)
		}
		ids[i] = int32(id)
	}
	text := m.Tokenizer.Decode(ids)
	writeJSON(w, http.StatusOK, map[string]string{"content": text, "prompt": text})
	return nil
}

// applyTemplate serves POST /apply-template: a chat-completions body in,
// {"prompt": text} out, the text the model would read.
func (s *Server) applyTemplate(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	var req chatRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	text, e := renderChat(m, &req)
	if e != nil {
		return e
	}
	writeJSON(w, http.StatusOK, map[string]string{"prompt": text})
	return nil
}
