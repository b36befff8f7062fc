package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// completions serves POST /v1/completions: raw text (or token ids) in,
// its continuation out; several prompts and n choices of each give
// choice index prompt*n + i.
func (s *Server) completions(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req completionRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	if e := checkModel(m, req.Model); e != nil {
		return e
	}
	prompts, e := completionPrompts(m, req.Prompt)
	if e != nil {
		return e
	}
	switch {
	case len(req.Suffix) > 0 && string(req.Suffix) != "null":
		return badRequest("suffix", "suffix is not supported")
	case req.Echo && req.Logprobs != nil:
		return badRequest("echo", "echo with logprobs is not supported: the prompt's log-probabilities are not computed")
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
	n, e := req.choices(maxChoices)
	if e != nil {
		return e
	}
	if k := len(prompts) * n; k > maxChoices {
		return badRequest("n", "%d prompts of %d choices each: at most %d choices in all", len(prompts), n, maxChoices)
	}
	gen, e := req.request(m, prompts[0].ids, limit, req.Logprobs != nil, top)
	if e != nil {
		return e
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel() // ends every choice submitted when the handler returns
	gens := make([]*generation, 0, len(prompts)*n)
	for _, p := range prompts {
		for j := range n {
			gi := gen
			gi.Prompt = p.ids
			if j > 0 && gi.Sampling.HasSeed {
				gi.Sampling.Seed += uint64(j) // as the same prompt alone with seed + j
			}
			c, e := req.completionConstraint(r.Context(), m)
			if e != nil {
				return e
			}
			if c != nil {
				gi.Constraint = c
			}
			sctx := ctx
			if len(gens) > 0 {
				// The route's requestInfo (log and metrics) follows the
				// first choice; the others keep their own.
				sctx = context.WithValue(ctx, infoKey{}, &requestInfo{route: requestInfoOf(ctx).route})
			}
			g, e := s.submit(sctx, m, gi, start)
			if e != nil {
				if e.Param == "messages" {
					e.Param = "prompt"
				}
				return e
			}
			gens = append(gens, g)
		}
	}
	id := requestID("cmpl-")
	gens[0].info.id = id
	echo := func(k int) string {
		if req.Echo {
			return prompts[k/n].text
		}
		return ""
	}
	chunk := func(k int, text string, lp *completionLogprobs, finish *string) completionResponse {
		return completionResponse{ID: id, Object: "text_completion", Created: gens[0].created, Model: m.Name, SystemFingerprint: fingerprint,
			Choices: []completionChoice{{Index: k, Text: text, Logprobs: lp, FinishReason: finish}}}
	}
	usage := func() *usage {
		u := &usage{}
		for k, g := range gens {
			if k%n == 0 { // each prompt once
				u.PromptTokens += g.prompt
				u.PromptTokensDetails.CachedTokens += g.cached
			}
			u.CompletionTokens += g.tokens
		}
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
		return u
	}
	if req.Stream {
		s.streamCompletions(w, gens, req.StreamOptions != nil && req.StreamOptions.IncludeUsage, echo, chunk, usage)
		return nil
	}
	choices := make([]completionChoice, len(gens))
	errs := make([]error, len(gens))
	gone := make([]bool, len(gens))
	var wg sync.WaitGroup
	for k, g := range gens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var text strings.Builder
			var all *completionLogprobs
			gone[k], errs[k] = runCompletion(g, m, func(t string, lp *completionLogprobs, _ *string) error {
				text.WriteString(t)
				if lp != nil {
					if all == nil {
						all = &completionLogprobs{Tokens: []string{}, TokenLogprobs: []float32{}, TopLogprobs: []map[string]float32{}, TextOffset: []int{}}
					}
					all.Tokens = append(all.Tokens, lp.Tokens...)
					all.TokenLogprobs = append(all.TokenLogprobs, lp.TokenLogprobs...)
					all.TopLogprobs = append(all.TopLogprobs, lp.TopLogprobs...)
					all.TextOffset = append(all.TextOffset, lp.TextOffset...)
				}
				return nil
			})
			if all == nil && g.wantLogprobs() {
				all = &completionLogprobs{Tokens: []string{}, TokenLogprobs: []float32{}, TopLogprobs: []map[string]float32{}, TextOffset: []int{}}
			}
			choices[k] = completionChoice{Index: k, Text: echo(k) + text.String(), Logprobs: all, FinishReason: &g.finish}
		}()
	}
	wg.Wait()
	for k := range gens {
		switch {
		case gone[k]:
			return nil // the client is gone
		case errs[k] != nil:
			return failure(errs[k])
		}
	}
	writeJSON(w, http.StatusOK, completionResponse{ID: id, Object: "text_completion", Created: gens[0].created, Model: m.Name,
		SystemFingerprint: fingerprint, Choices: choices, Usage: usage()})
	return nil
}

// streamCompletions streams the choices of gens side by side, each
// chunk naming its choice's index, the prompt first where echo gives it;
// then the usage when asked for, and [DONE]. A failed choice ends the
// stream with the error.
func (s *Server) streamCompletions(w http.ResponseWriter, gens []*generation, includeUsage bool, echo func(int) string,
	chunk func(int, string, *completionLogprobs, *string) completionResponse, usage func() *usage) {
	out := newSSE(w)
	if !fanOut(out, len(gens), func(k int, send func(any) error) error {
		if e := echo(k); e != "" && send(chunk(k, e, nil, nil)) != nil {
			return nil
		}
		_, err := runCompletion(gens[k], gens[k].m, func(t string, lp *completionLogprobs, finish *string) error {
			if t == "" && lp == nil && finish == nil {
				return nil
			}
			return send(chunk(k, t, lp, finish))
		})
		return err
	}) {
		return
	}
	if includeUsage {
		u := chunk(0, "", nil, nil) // the response's id, time and model
		u.Choices, u.Usage = []completionChoice{}, usage()
		if out.send(u) != nil {
			return
		}
	}
	_ = out.done()
}

// runCompletion runs g to its end, handing emit each event's text, its
// token's log-probabilities (when asked for) and, at the end, the finish
// reason; it stops when emit fails. gone reports that the client went
// away, err the error that ended the generation.
func runCompletion(g *generation, m *Model, emit func(string, *completionLogprobs, *string) error) (gone bool, err error) {
	offset := 0
	for {
		ev, ok := g.next()
		if !ok {
			return true, nil
		}
		if ev.Err != nil {
			return false, ev.Err
		}
		var lp *completionLogprobs
		if ev.HasToken && g.wantLogprobs() {
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
		}
		var finish *string
		if ev.Finish != "" {
			finish = &g.finish
		}
		if emit(ev.Text, lp, finish) != nil {
			return false, nil
		}
		if finish != nil {
			return false, nil
		}
	}
}

// A completionPromptText is one prompt of a completions request: its
// token ids and, for echo, its text.
type completionPromptText struct {
	ids  []int32
	text string
}

// completionPrompts returns the request's prompts: a string (special-token
// text such as <|im_start|> becomes its id), an array of strings, an
// array of token ids, or an array of arrays of token ids.
func completionPrompts(m *Model, raw json.RawMessage) ([]completionPromptText, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("prompt", "prompt is required")
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		ids, e := encodePrompt(m, text, "prompt")
		return []completionPromptText{{ids, text}}, e
	}
	check := func(k int) *apiError {
		if k == 0 || k > maxChoices {
			return badRequest("prompt", "prompt holds %d prompts: want 1 to %d", k, maxChoices)
		}
		return nil
	}
	var texts []string
	if err := json.Unmarshal(raw, &texts); err == nil {
		if e := check(len(texts)); e != nil {
			return nil, e
		}
		out := make([]completionPromptText, len(texts))
		for i, t := range texts {
			ids, e := encodePrompt(m, t, fmt.Sprintf("prompt[%d]", i))
			if e != nil {
				return nil, e
			}
			out[i] = completionPromptText{ids, t}
		}
		return out, nil
	}
	var ids []int64
	if err := json.Unmarshal(raw, &ids); err == nil {
		p, e := tokenIDs(m, ids, "prompt")
		if e != nil {
			return nil, e
		}
		return []completionPromptText{{p, m.Tokenizer.Decode(p)}}, nil
	}
	var lists [][]int64
	if err := json.Unmarshal(raw, &lists); err == nil {
		if e := check(len(lists)); e != nil {
			return nil, e
		}
		out := make([]completionPromptText, len(lists))
		for i, l := range lists {
			p, e := tokenIDs(m, l, fmt.Sprintf("prompt[%d]", i))
			if e != nil {
				return nil, e
			}
			out[i] = completionPromptText{p, m.Tokenizer.Decode(p)}
		}
		return out, nil
	}
	return nil, badRequest("prompt", "prompt must be a string, an array of strings, an array of token ids or an array of such arrays")
}

func encodePrompt(m *Model, text, param string) ([]int32, *apiError) {
	if e := checkPromptBytes(m, param, len(text)); e != nil {
		return nil, e
	}
	ids := m.Tokenizer.Encode(text)
	if len(ids) == 0 {
		return nil, badRequest(param, "the prompt is empty")
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
