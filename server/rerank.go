package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"inferno/engine"
)

// MaxRerankDocuments is the most documents one rerank request may hold.
const MaxRerankDocuments = 2048

// MaxRerankBytes bounds the text a rerank request has tokenized, its
// prompts' bytes without the template: the query and the instruction are
// in every document's prompt, so a body within --max-body could otherwise
// ask for gigabytes. It is the default --max-body: a request tokenizes no
// more than the largest body of another endpoint holds.
const MaxRerankBytes = DefaultMaxBodyBytes

// rerankRequest is the body of POST /v1/rerank (/rerank, /v2/rerank,
// /reranking, /v1/reranking): the shape of vLLM's, llama-server's,
// Jina's and Cohere's rerank APIs. Fields of theirs not listed are
// accepted and ignored.
type rerankRequest struct {
	Model string  `json:"model"`
	Query *string `json:"query"`
	// Documents are strings or objects with a "text" field (Jina's and
	// Cohere's v1 form), read by documentText.
	Documents []json.RawMessage `json:"documents"`
	// TopN keeps the best N results (absent, 0 or more than there are
	// documents: all, as vLLM does).
	TopN *int `json:"top_n"`
	// ReturnDocuments puts each result's document text in it (absent:
	// true, as vLLM and Jina do).
	ReturnDocuments *bool `json:"return_documents"`
	// Instruction is Qwen3-Reranker's task description (absent: the
	// model card's default, model.DefaultRerankInstruction).
	Instruction string `json:"instruction"`
	// Texts are the documents in Hugging Face text-embeddings-inference's
	// form of the request (as llama-server reads it), answered in its
	// form: a bare array of {index, score, text}. ReturnText puts the
	// texts in (absent: false).
	Texts      []json.RawMessage `json:"texts"`
	ReturnText bool              `json:"return_text"`
	// RawScores gives l_yes - l_no as the score instead of its sigmoid
	// (text-embeddings-inference's raw_scores).
	RawScores bool `json:"raw_scores"`
}

// teiResult is one document's result in text-embeddings-inference's form.
type teiResult struct {
	Index int     `json:"index"`
	Score float64 `json:"score"`
	Text  *string `json:"text,omitempty"`
}

// docsParam names the field that holds req's documents.
func docsParam(req *rerankRequest) string {
	if req.Texts != nil {
		return "texts"
	}
	return "documents"
}

// documentText reads one document of a rerank request, param: a JSON
// string or an object whose "text" is a string.
func documentText(raw json.RawMessage, param string) (string, *apiError) {
	// Decoding null into a string or an object succeeds: only a JSON
	// string and an object are read.
	isString := func(b json.RawMessage) bool { return len(b) > 0 && b[0] == '"' }
	var text string
	if isString(raw) && json.Unmarshal(raw, &text) == nil {
		return text, nil
	}
	var o struct {
		Text json.RawMessage `json:"text"`
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &o) != nil || o.Text == nil {
		return "", badRequest(param, "%s is not a string nor an object with a text string", param)
	}
	if !isString(o.Text) || json.Unmarshal(o.Text, &text) != nil {
		return "", badRequest(param+".text", "%s.text is not a string", param)
	}
	return text, nil
}

// RerankResponse is the answer of /v1/rerank: the documents' results,
// the most relevant first.
type RerankResponse struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Usage   RerankUsage    `json:"usage"`
	Results []RerankResult `json:"results"`
}

// RerankUsage counts the tokens scored: every document's whole prompt.
type RerankUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// RerankResult is one document's score: Index is its place in the
// request's documents, RelevanceScore the reranker's probability that it
// meets the query, in [0, 1].
type RerankResult struct {
	Index          int             `json:"index"`
	RelevanceScore float64         `json:"relevance_score"`
	Document       *RerankDocument `json:"document,omitempty"`

	logit float64 // l_yes - l_no, which sorts the results
}

// RerankDocument is a result's document, as the request gave it.
type RerankDocument struct {
	Text string `json:"text"`
}

// rerank serves POST /v1/rerank on a reranker (Model.Rerank): every
// document's prompt (the query, the document and the instruction in the
// model's rerank template) runs as a prefill-only sequence of the
// scheduler, in the same batches as other requests, sharing the prompt's
// common prefix through the prefix cache, and its score is the
// reranker's classifier head on its last token's final hidden state.
func (s *Server) rerank(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req rerankRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	if e := checkModel(m, req.Model); e != nil {
		return e
	}
	if m.Rerank == nil {
		return badRequest("model", "the model %q is not a reranker (its file states no rank pooling; run a Qwen3-Reranker, or one converted as a language model with --pooling rank)", m.Name)
	}
	texts, prompts, e := rerankPrompts(m, &req)
	if e != nil {
		return e
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	out := RerankResponse{ID: requestID("rerank-"), Model: m.Name, Results: make([]RerankResult, len(prompts))}
	// Submitted in order; when the queue is full, the oldest in flight is
	// collected before the next goes in, so a long list waits for room
	// instead of failing.
	var flight []*generation
	next := 0 // the index of flight[0]
	collect := func() *apiError {
		g := flight[0]
		flight = flight[1:]
		v, e := embeddingOf(g)
		if e != nil {
			return e
		}
		if len(v) != 2 {
			return failure(fmt.Errorf("the reranker returned %d values, not a score and a logit", len(v)))
		}
		score := float64(v[0])
		if req.RawScores {
			score = float64(v[1])
		}
		out.Results[next] = RerankResult{Index: next, RelevanceScore: score, logit: float64(v[1])}
		out.Usage.PromptTokens += g.prompt
		next++
		return nil
	}
	lead := leadFirst(prompts)
	for i, ids := range prompts {
		for {
			g, e := s.submit(ctx, m, engine.Request{Prompt: ids, Embed: true}, start)
			if e == nil {
				flight = append(flight, g)
				if i == 0 && lead {
					// The others start once its keys and values are in
					// the prefix cache.
					if e := collect(); e != nil {
						return e
					}
				}
				break
			}
			if e.Code != "queue_full" || len(flight) == 0 {
				if e.Param == "messages" {
					e.Param = docsParam(&req)
					e.Message = docsParam(&req) + "[" + strconv.Itoa(i) + "]: " + e.Message
				}
				return e
			}
			if e := collect(); e != nil {
				return e
			}
		}
	}
	for len(flight) > 0 {
		if e := collect(); e != nil {
			return e
		}
	}
	out.Usage.TotalTokens = out.Usage.PromptTokens
	slices.SortStableFunc(out.Results, func(a, b RerankResult) int {
		switch {
		case a.logit > b.logit:
			return -1
		case a.logit < b.logit:
			return 1
		}
		return 0
	})
	if req.TopN != nil && *req.TopN > 0 && *req.TopN < len(out.Results) {
		out.Results = out.Results[:*req.TopN]
	}
	if req.Texts != nil {
		tei := make([]teiResult, len(out.Results))
		for i, r := range out.Results {
			tei[i] = teiResult{Index: r.Index, Score: r.RelevanceScore}
			if req.ReturnText {
				tei[i].Text = &texts[r.Index]
			}
		}
		writeJSON(w, http.StatusOK, tei)
		return nil
	}
	if req.ReturnDocuments == nil || *req.ReturnDocuments {
		for i := range out.Results {
			out.Results[i].Document = &RerankDocument{Text: texts[out.Results[i].Index]}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// leadSaving is the fewest prompt tokens the prefix cache must save for
// a rerank request's first document to run before the others: below it,
// the others' wait for the first costs more than computing the common
// prefix again (one forward pass, on a GPU about the time of one of
// 1024 tokens).
const leadSaving = 1024

// leadFirst reports whether the first of prompts should run alone before
// the others are submitted, so that they take the prompt's common start
// (the system message, the instruction and the query: everything before
// the document) from the prefix cache instead of each computing it:
// when that saves at least leadSaving tokens.
func leadFirst(prompts [][]int32) bool {
	if len(prompts) < 2 {
		return false
	}
	common := len(prompts[0])
	for _, p := range prompts[1:] {
		n := 0
		for n < min(common, len(p)) && p[n] == prompts[0][n] {
			n++
		}
		common = n
	}
	return common*(len(prompts)-1) >= leadSaving
}

// rerankPrompts checks a rerank request and returns its documents' texts
// and each one's prompt ids.
func rerankPrompts(m *Model, req *rerankRequest) (texts []string, prompts [][]int32, e *apiError) {
	docs, name := req.Documents, docsParam(req)
	if req.Texts != nil {
		docs = req.Texts
	}
	switch {
	case req.Query == nil:
		return nil, nil, badRequest("query", "query is required (a string)")
	case req.Texts != nil && req.Documents != nil:
		return nil, nil, badRequest("texts", "texts and documents are two forms of the same field: send one")
	case docs == nil:
		return nil, nil, badRequest("documents", "documents is required (an array of strings or of objects with a text string)")
	case len(docs) == 0:
		return nil, nil, badRequest(name, "%s is an empty array", name)
	case len(docs) > MaxRerankDocuments:
		return nil, nil, badRequest(name, "%s holds %d items; at most %d", name, len(docs), MaxRerankDocuments)
	case req.TopN != nil && *req.TopN < 0:
		return nil, nil, badRequest("top_n", "top_n is %d; it is a number of results, at least 0 (0: all)", *req.TopN)
	}
	texts = make([]string, len(docs))
	shared := len(*req.Query) + len(req.Instruction) // in every prompt
	total := 0
	for i, raw := range docs {
		param := name + "[" + strconv.Itoa(i) + "]"
		if texts[i], e = documentText(raw, param); e != nil {
			return nil, nil, e
		}
		if e := checkPromptBytes(m, param, shared+len(texts[i])); e != nil {
			return nil, nil, e
		}
		if total += shared + len(texts[i]); total > MaxRerankBytes {
			return nil, nil, badRequest(name, "the query (and instruction) with each of %d documents make more than %d bytes of prompts to tokenize: send a shorter query or fewer documents", len(docs), MaxRerankBytes)
		}
	}
	prompts = make([][]int32, len(docs))
	for i := range docs {
		ids, err := m.Rerank(*req.Query, texts[i], req.Instruction)
		if err != nil {
			return nil, nil, badRequest("instruction", "%v", err)
		}
		prompts[i] = ids
	}
	return texts, prompts, nil
}
