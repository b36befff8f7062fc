package server

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"inferno/engine"
)

// MaxEmbeddingInputs is the most inputs one /v1/embeddings request may
// hold (OpenAI's limit).
const MaxEmbeddingInputs = 2048

// embeddingRequest is the body of POST /v1/embeddings.
type embeddingRequest struct {
	Input          json.RawMessage `json:"input"`
	Model          string          `json:"model"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	User           string          `json:"user"`
}

// EmbeddingList is the answer of /v1/embeddings (and what `inferno
// embed` prints): one embedding per input, in input order.
type EmbeddingList struct {
	Object string         `json:"object"` // "list"
	Data   []Embedding    `json:"data"`
	Model  string         `json:"model"`
	Usage  EmbeddingUsage `json:"usage"`
}

// Embedding is one input's embedding: a JSON array of floats, or with
// encoding_format "base64" the little-endian float32 bytes in base64.
type Embedding struct {
	Object    string `json:"object"` // "embedding"
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// EmbeddingUsage counts the tokens embedded.
type EmbeddingUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// NewEmbedding returns the entry of input index for vector v, encoded as
// format says ("float" or "" for floats, "base64").
func NewEmbedding(index int, v []float32, format string) Embedding {
	e := Embedding{Object: "embedding", Index: index, Embedding: v}
	if format == "base64" {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		e.Embedding = base64.StdEncoding.EncodeToString(b)
	}
	return e
}

// embeddings serves POST /v1/embeddings on an embedding model: every input
// runs as a prefill-only sequence of the scheduler, in the same batches
// as other requests, and its embedding is its last token's final hidden
// state, L2-normalized (truncated to dimensions and normalized again when
// asked).
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req embeddingRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	if e := checkModel(m, req.Model); e != nil {
		return e
	}
	if !m.Embedding {
		return badRequest("model", "the model %q is not an embedding model (its file states no pooling type): use /v1/chat/completions or /v1/completions", m.Name)
	}
	if m.Rerank != nil {
		return badRequest("model", "the model %q is a reranker (rank pooling): it answers /v1/rerank, not /v1/embeddings", m.Name)
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		return badRequest("encoding_format", "encoding_format %q is not float or base64", req.EncodingFormat)
	}
	dims := m.EmbedDim
	if req.Dimensions != nil {
		if dims = *req.Dimensions; dims < 1 || dims > m.EmbedDim {
			return badRequest("dimensions", "dimensions %d is outside [1, %d] (the model's embedding has %d)", dims, m.EmbedDim, m.EmbedDim)
		}
	}
	inputs, e := embeddingInputs(m, req.Input)
	if e != nil {
		return e
	}
	vs, tokens, e := s.embedAll(r.Context(), m, inputs, dims, start)
	if e != nil {
		return e
	}
	out := EmbeddingList{Object: "list", Data: make([]Embedding, len(inputs)), Model: m.Name}
	for i, v := range vs {
		out.Data[i] = NewEmbedding(i, v, req.EncodingFormat)
	}
	out.Usage.PromptTokens = tokens
	out.Usage.TotalTokens = out.Usage.PromptTokens
	writeJSON(w, http.StatusOK, out)
	return nil
}

// embedAll embeds inputs on m and returns their vectors, in order, each
// truncated to dims values and normalized again when dims is less than
// the embedding's width, and the tokens embedded.
func (s *Server) embedAll(ctx context.Context, m *Model, inputs [][]int32, dims int, start time.Time) ([][]float32, int, *apiError) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([][]float32, 0, len(inputs))
	tokens := 0
	// Submitted in order; when the queue is full, the oldest in flight is
	// collected before the next goes in, so a long list waits for room
	// instead of failing.
	var flight []*generation
	collect := func() *apiError {
		g := flight[0]
		flight = flight[1:]
		v, e := embeddingOf(g)
		if e != nil {
			return e
		}
		if dims < len(v) {
			var err error
			if v, err = engine.Normalize(v[:dims]); err != nil {
				return &apiError{Status: http.StatusInternalServerError, Message: err.Error()}
			}
		}
		out = append(out, v)
		tokens += g.prompt
		return nil
	}
	for i, ids := range inputs {
		for {
			g, e := s.submit(ctx, m, engine.Request{Prompt: ids, Embed: true}, start)
			if e == nil {
				flight = append(flight, g)
				break
			}
			if e.Code != "queue_full" || len(flight) == 0 {
				if e.Param == "messages" {
					e.Param = "input"
				}
				if len(inputs) > 1 && e.Param == "input" {
					e.Message = "input " + strconv.Itoa(i) + ": " + e.Message
				}
				return nil, 0, e
			}
			if e := collect(); e != nil {
				return nil, 0, e
			}
		}
	}
	for len(flight) > 0 {
		if e := collect(); e != nil {
			return nil, 0, e
		}
	}
	return out, tokens, nil
}

// embeddingOf waits for a submitted embedding's last event.
func embeddingOf(g *generation) ([]float32, *apiError) {
	for {
		ev, ok := g.next()
		if !ok {
			return nil, &apiError{Status: http.StatusServiceUnavailable, Message: "the request was cancelled"}
		}
		if ev.Err != nil {
			return nil, failure(ev.Err)
		}
		if ev.Finish != "" {
			if ev.Embedding == nil {
				return nil, failure(errors.New("the scheduler returned no embedding"))
			}
			return ev.Embedding, nil
		}
	}
}

// embeddingInputs reads input as OpenAI defines it: a string, an array of
// strings, an array of token ids, or an array of arrays of token ids.
// Texts are tokenized as the model embeds them (Model.EmbedTokens: ended
// with <|endoftext|>); token ids are taken as they are.
func embeddingInputs(m *Model, raw json.RawMessage) ([][]int32, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("input", "input is required")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		ids, e := embedText(m, text, "input")
		if e != nil {
			return nil, e
		}
		return [][]int32{ids}, nil
	}
	var texts []string
	var ids []int64
	var lists [][]int64
	var out [][]int32
	switch {
	case json.Unmarshal(raw, &texts) == nil:
		if e := checkInputCount(len(texts)); e != nil {
			return nil, e
		}
		for i, t := range texts {
			v, e := embedText(m, t, "input["+strconv.Itoa(i)+"]")
			if e != nil {
				return nil, e
			}
			out = append(out, v)
		}
	case json.Unmarshal(raw, &ids) == nil:
		v, e := tokenIDs(m, ids, "input")
		if e != nil {
			return nil, e
		}
		out = append(out, v)
	case json.Unmarshal(raw, &lists) == nil:
		if e := checkInputCount(len(lists)); e != nil {
			return nil, e
		}
		for i, l := range lists {
			v, e := tokenIDs(m, l, "input["+strconv.Itoa(i)+"]")
			if e != nil {
				return nil, e
			}
			out = append(out, v)
		}
	default:
		return nil, badRequest("input", "input must be a string, an array of strings, an array of token ids or an array of arrays of token ids")
	}
	return out, nil
}

func checkInputCount(n int) *apiError {
	switch {
	case n == 0:
		return badRequest("input", "input is an empty array")
	case n > MaxEmbeddingInputs:
		return badRequest("input", "input holds %d items; at most %d", n, MaxEmbeddingInputs)
	}
	return nil
}

// embedText tokenizes one text input, refusing an empty one and one whose
// bytes cannot fit the context.
func embedText(m *Model, text, param string) ([]int32, *apiError) {
	if text == "" {
		return nil, badRequest(param, "%s is an empty string", param)
	}
	if e := checkPromptBytes(m, param, len(text)); e != nil {
		return nil, e
	}
	return m.EmbedTokens(text), nil
}

// generative refuses, in one line, a chat or completion request to an
// embedding model or a reranker.
func generative(h apiHandler) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
		if m.Rerank != nil {
			return badRequest("model", "the model %q is a reranker: it answers /v1/rerank, not %s", m.Name, r.URL.Path)
		}
		if m.Embedding {
			return badRequest("model", "the model %q is an embedding model: it answers /v1/embeddings, not %s", m.Name, r.URL.Path)
		}
		return h(w, r, m)
	}
}
