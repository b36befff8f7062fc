package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// completions serves POST /v1/completions: raw text (or token ids) in,
// its continuation out.
func (s *Server) completions(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req completionRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	if e := checkModel(m, req.Model); e != nil {
		return e
	}
	ids, e := completionPrompt(m, req.Prompt)
	if e != nil {
		return e
	}
	switch {
	case len(req.Suffix) > 0 && string(req.Suffix) != "null":
		return badRequest("suffix", "suffix is not supported")
	case req.Echo:
		return badRequest("echo", "echo is not supported")
	case req.BestOf != nil && *req.BestOf != 1:
		return badRequest("best_of", "best_of = %d: only 1 is supported", *req.BestOf)
	}
	top := 0
	if req.Logprobs != nil {
		if top = *req.Logprobs; top < 0 || top > 5 {
			return badRequest("logprobs", "logprobs %d is outside [0, 5]", top)
		}
	}
	limit := 16 // OpenAI's default for completions
	if req.MaxTokens != nil {
		if limit, e = maxTokens("max_tokens", req.MaxTokens, nil); e != nil {
			return e
		}
	}
	if _, e := req.choices(1); e != nil {
		return e
	}
	gen, e := req.request(m, ids, limit, req.Logprobs != nil, top)
	if e != nil {
		return e
	}
	c, e := req.completionConstraint(r.Context(), m)
	if e != nil {
		return e
	}
	if c != nil {
		gen.Constraint = c
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	g, e := s.submit(ctx, m, gen, start)
	if e != nil {
		if e.Param == "messages" {
			e.Param = "prompt"
		}
		return e
	}
	id := requestID("cmpl-")
	g.info.id = id
	resp := func(text string, lp *completionLogprobs, finish *string) completionResponse {
		return completionResponse{ID: id, Object: "text_completion", Created: g.created, Model: m.Name, SystemFingerprint: fingerprint,
			Choices: []completionChoice{{Text: text, Logprobs: lp, FinishReason: finish}}}
	}
	var out *sse
	if req.Stream {
		out = newSSE(w)
	}
	var text strings.Builder
	var all *completionLogprobs
	if gen.Sampling.Logprobs {
		all = &completionLogprobs{Tokens: []string{}, TokenLogprobs: []float32{}, TopLogprobs: []map[string]float32{}, TextOffset: []int{}}
	}
	offset := 0
	for {
		ev, ok := g.next()
		if !ok {
			return nil
		}
		if ev.Err != nil {
			if out == nil {
				return failure(ev.Err)
			}
			out.sendError(failure(ev.Err))
			_ = out.done()
			return nil
		}
		var lp *completionLogprobs
		if ev.HasToken && gen.Sampling.Logprobs {
			lp = &completionLogprobs{}
			tok, _ := m.tokenBytes(ev.Token.ID)
			top := make(map[string]float32, len(ev.Token.Top))
			for _, alt := range ev.Token.Top {
				t, _ := m.tokenBytes(alt.ID)
				top[t] = finite(alt.Logprob)
			}
			lp.Tokens, lp.TokenLogprobs = []string{tok}, []float32{finite(ev.Token.Logprob)}
			lp.TopLogprobs, lp.TextOffset = []map[string]float32{top}, []int{offset}
			offset += utf8.RuneCountInString(tok) // OpenAI counts characters
			all.Tokens = append(all.Tokens, lp.Tokens...)
			all.TokenLogprobs = append(all.TokenLogprobs, lp.TokenLogprobs...)
			all.TopLogprobs = append(all.TopLogprobs, lp.TopLogprobs...)
			all.TextOffset = append(all.TextOffset, lp.TextOffset...)
		}
		var finish *string
		if ev.Finish != "" {
			finish = &g.finish
		}
		if out != nil {
			if ev.Text != "" || lp != nil || finish != nil {
				if out.send(resp(ev.Text, lp, finish)) != nil {
					return nil
				}
			}
		} else {
			text.WriteString(ev.Text)
		}
		if finish != nil {
			break
		}
	}
	if out == nil {
		r := resp(text.String(), all, &g.finish)
		r.Usage = g.usage()
		writeJSON(w, http.StatusOK, r)
		return nil
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := completionResponse{ID: id, Object: "text_completion", Created: g.created, Model: m.Name, SystemFingerprint: fingerprint,
			Choices: []completionChoice{}, Usage: g.usage()}
		if out.send(u) != nil {
			return nil
		}
	}
	_ = out.done()
	return nil
}

// completionPrompt returns the prompt's token ids: a string (special-token
// text such as <|im_start|> becomes its id), an array of one string, or
// an array of token ids.
func completionPrompt(m *Model, raw json.RawMessage) ([]int32, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("prompt", "prompt is required")
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return encodePrompt(m, text)
	}
	var texts []string
	if err := json.Unmarshal(raw, &texts); err == nil {
		if len(texts) != 1 {
			return nil, badRequest("prompt", "prompt holds %d strings: only one prompt per request is supported", len(texts))
		}
		return encodePrompt(m, texts[0])
	}
	var ids []int64
	if err := json.Unmarshal(raw, &ids); err == nil {
		return tokenIDs(m, ids, "prompt")
	}
	return nil, badRequest("prompt", "prompt must be a string, an array of one string, or an array of token ids")
}

func encodePrompt(m *Model, text string) ([]int32, *apiError) {
	if e := checkPromptBytes(m, "prompt", len(text)); e != nil {
		return nil, e
	}
	ids := m.Tokenizer.Encode(text)
	if len(ids) == 0 {
		return nil, badRequest("prompt", "the prompt is empty")
	}
	return ids, nil
}

// tokenIDs checks ids against the vocabulary.
func tokenIDs(m *Model, ids []int64, param string) ([]int32, *apiError) {
	if len(ids) == 0 {
		return nil, badRequest(param, "%s has no token ids", param)
	}
	out := make([]int32, len(ids))
	for i, id := range ids {
		if id < 0 || id >= int64(m.Vocab) {
			return nil, badRequest(param, "%s[%d] = %d is not a token id (0 to %d)", param, i, id, m.Vocab-1)
		}
		out[i] = int32(id)
	}
	return out, nil
}
