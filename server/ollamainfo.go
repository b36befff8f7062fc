package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ollama's /api/embed and /api/embeddings (on an embedding model, as
// /v1/embeddings), and the routes that describe the models: /api/tags,
// /api/show, /api/ps and /api/version.

// ollamaEmbedRequest is the body of POST /api/embed.
type ollamaEmbedRequest struct {
	Model      string          `json:"model"`
	Input      json.RawMessage `json:"input"` // a string or an array of strings
	Truncate   *bool           `json:"truncate"`
	Dimensions *int            `json:"dimensions"`
	KeepAlive  json.RawMessage `json:"keep_alive"`
	Options    json.RawMessage `json:"options"`
}

// ollamaEmbeddingsRequest is the body of the older POST /api/embeddings.
type ollamaEmbeddingsRequest struct {
	Model     string          `json:"model"`
	Prompt    string          `json:"prompt"`
	KeepAlive json.RawMessage `json:"keep_alive"`
	Options   json.RawMessage `json:"options"`
}

type ollamaEmbedResponse struct {
	Model           string        `json:"model"`
	Embeddings      [][]float32   `json:"embeddings"`
	TotalDuration   time.Duration `json:"total_duration"`
	LoadDuration    time.Duration `json:"load_duration"`
	PromptEvalCount int           `json:"prompt_eval_count"`
}

// ollamaEmbed serves POST /api/embed: every input's embedding,
// L2-normalized, in input order. Inputs longer than the context are cut
// to it unless truncate is false, which refuses them.
func (s *Server) ollamaEmbed(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req ollamaEmbedRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	texts, e := ollamaInputs(req.Input)
	if e != nil {
		return e
	}
	if e := s.embedChecks(m, req.Model, req.KeepAlive, req.Options); e != nil {
		return e
	}
	dims := m.EmbedDim
	if req.Dimensions != nil {
		if dims = *req.Dimensions; dims < 1 || dims > m.EmbedDim {
			return badRequest("dimensions", "dimensions %d is outside [1, %d] (the model's embedding has %d)", dims, m.EmbedDim, m.EmbedDim)
		}
	}
	truncate := req.Truncate == nil || *req.Truncate
	out := ollamaEmbedResponse{Model: req.Model, Embeddings: [][]float32{}}
	if len(texts) > 0 {
		inputs := make([][]int32, len(texts))
		for i, t := range texts {
			param := "input"
			if len(texts) > 1 {
				param = "input[" + strconv.Itoa(i) + "]"
			}
			if inputs[i], e = ollamaEmbedTokens(m, t, truncate, param); e != nil {
				return e
			}
		}
		if out.Embeddings, out.PromptEvalCount, e = s.embedAll(r.Context(), m, inputs, dims, start); e != nil {
			return e
		}
	}
	out.TotalDuration = time.Since(start)
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ollamaEmbeddings serves POST /api/embeddings: {"prompt": text} to
// {"embedding": [...]} (L2-normalized, as /api/embed's; an empty prompt
// gives an empty embedding). Prompts longer than the context are
// refused.
func (s *Server) ollamaEmbeddings(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	start := time.Now()
	var req ollamaEmbeddingsRequest
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	if e := s.embedChecks(m, req.Model, req.KeepAlive, req.Options); e != nil {
		return e
	}
	out := struct {
		Embedding []float32 `json:"embedding"`
	}{Embedding: []float32{}}
	if req.Prompt != "" {
		ids, e := ollamaEmbedTokens(m, req.Prompt, false, "prompt")
		if e != nil {
			return e
		}
		vs, _, e := s.embedAll(r.Context(), m, [][]int32{ids}, m.EmbedDim, start)
		if e != nil {
			return e
		}
		out.Embedding = vs[0]
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// embedChecks checks what the two embedding routes share: the model, an
// embedding one, its keep_alive and options.
func (s *Server) embedChecks(m *Model, name string, keep, options json.RawMessage) *apiError {
	if !m.Embedding {
		return badRequest("model", "%q does not support embeddings: it is not an embedding model (its file states no pooling type)", name)
	}
	if e := s.keepAlive(m, keep); e != nil {
		return e
	}
	_, e := decodeOptions(options)
	return e
}

// ollamaInputs reads /api/embed's input: a string or an array of
// strings; an empty one holds none.
func ollamaInputs(raw json.RawMessage) ([]string, *apiError) {
	if !present(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		return nil, badRequest("input", "input must be a string or an array of strings")
	}
	if len(list) == 0 {
		return nil, nil
	}
	if e := checkInputCount(len(list)); e != nil {
		return nil, e
	}
	for i, t := range list {
		if t == "" {
			return nil, badRequest(fmt.Sprintf("input[%d]", i), "input[%d] is an empty string", i)
		}
	}
	return list, nil
}

// ollamaEmbedTokens returns the ids m embeds for text. One longer than
// the context is cut to it, its last token (the end the model pools)
// kept, when truncate is set, and refused otherwise.
func ollamaEmbedTokens(m *Model, text string, truncate bool, param string) ([]int32, *apiError) {
	if !truncate {
		if e := checkPromptBytes(m, param, len(text)); e != nil {
			return nil, e
		}
	} else if limit := m.promptBytes(); len(text) > limit {
		// More bytes than the context's tokens can hold: what is past
		// them would be cut anyway.
		cut := limit
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	ids := m.EmbedTokens(text)
	if len(ids) > m.Context {
		if !truncate {
			return nil, &apiError{Status: http.StatusBadRequest, Param: param,
				Message: fmt.Sprintf("%s: the input length (%d tokens) exceeds the context length (%d)", param, len(ids), m.Context)}
		}
		ids = append(ids[:m.Context-1], ids[len(ids)-1])
	}
	return ids, nil
}

// ollamaDetails are a model's details as ollama's lists give them.
type ollamaDetails struct {
	ParentModel       string   `json:"parent_model"`
	Format            string   `json:"format"`
	Family            string   `json:"family"`
	Families          []string `json:"families"`
	ParameterSize     string   `json:"parameter_size"`
	QuantizationLevel string   `json:"quantization_level"`
}

func (info *ModelInfo) details() ollamaDetails {
	d := ollamaDetails{Format: "gguf", Family: info.Architecture, QuantizationLevel: info.Quantization}
	if d.Family != "" {
		d.Families = []string{d.Family}
	}
	if info.Parameters > 0 {
		d.ParameterSize = parameterSize(info.Parameters)
	}
	return d
}

// parameterSize writes a number of weights as ollama does: "751.63M",
// "8.0B".
func parameterSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2fK", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// ollamaModelEntry is a model as /api/tags and /api/ps list it; ExpiresAt,
// SizeVRAM and ContextLength are /api/ps's.
type ollamaModelEntry struct {
	Name          string        `json:"name"`
	Model         string        `json:"model"`
	ModifiedAt    *time.Time    `json:"modified_at,omitempty"`
	Size          int64         `json:"size"`
	Digest        string        `json:"digest"`
	Details       ollamaDetails `json:"details"`
	ExpiresAt     *time.Time    `json:"expires_at,omitempty"`
	SizeVRAM      *int64        `json:"size_vram,omitempty"`
	ContextLength int           `json:"context_length,omitempty"`
}

// ollamaTags serves GET /api/tags: every model the server serves, loaded
// or not.
func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request) {
	list := struct {
		Models []ollamaModelEntry `json:"models"`
	}{Models: []ollamaModelEntry{}}
	for _, st := range s.ModelList() {
		info := st.fileInfo()
		mod := info.Modified
		if mod.IsZero() && st.Model != nil {
			mod = st.Model.Created
		}
		if mod.IsZero() {
			mod = s.started
		}
		name := ollamaName(st.Name)
		list.Models = append(list.Models, ollamaModelEntry{Name: name, Model: name, ModifiedAt: &mod, Size: info.Size,
			Digest: info.Digest, Details: info.details()})
	}
	writeJSON(w, http.StatusOK, list)
}

// ollamaPS serves GET /api/ps: the models loaded, the memory they hold
// and when they will be unloaded.
func (s *Server) ollamaPS(w http.ResponseWriter, r *http.Request) {
	list := struct {
		Models []ollamaModelEntry `json:"models"`
	}{Models: []ollamaModelEntry{}}
	now := time.Now()
	for _, st := range s.ModelList() {
		m := st.Model
		if m == nil {
			continue
		}
		name := ollamaName(st.Name)
		size, vram := m.Info.Memory, m.Info.GPUMemory
		if size == 0 {
			size = st.Bytes
		}
		exp := expiresAt(&st, now)
		list.Models = append(list.Models, ollamaModelEntry{Name: name, Model: name, Size: size, Digest: m.Info.Digest,
			Details: m.Info.details(), ExpiresAt: &exp, SizeVRAM: &vram, ContextLength: m.Context})
	}
	writeJSON(w, http.StatusOK, list)
}

// fileInfo is what is known of st's file: the loaded model's Info, else
// what the Models read of it before the load.
func (st *ModelStatus) fileInfo() *ModelInfo {
	switch {
	case st.Model != nil:
		return &st.Model.Info
	case st.Info != nil:
		return st.Info
	}
	return &ModelInfo{}
}

// ollamaShow serves POST /api/show: {"model": name} (or the older
// "name") to the model's details, metadata, chat template and
// capabilities.
func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request, m *Model) *apiError {
	var req struct {
		Model   string `json:"model"`
		Name    string `json:"name"`
		Verbose bool   `json:"verbose"`
	}
	if e := decodeBody(r, &req); e != nil {
		return e
	}
	info := maps.Clone(m.Info.Metadata)
	if info == nil {
		info = map[string]any{}
	}
	arch := m.Info.Architecture
	if arch != "" {
		info["general.architecture"] = arch
		if _, ok := info[arch+".context_length"]; !ok {
			info[arch+".context_length"] = m.Context
		}
	}
	if _, ok := info["general.parameter_count"]; !ok && m.Info.Parameters > 0 {
		info["general.parameter_count"] = m.Info.Parameters
	}
	mod := m.Info.Modified
	if mod.IsZero() {
		mod = m.Created
	}
	tmpl := ""
	if m.Template != nil {
		tmpl = m.Template.Source()
	}
	writeJSON(w, http.StatusOK, struct {
		License      string         `json:"license"`
		Modelfile    string         `json:"modelfile"`
		Parameters   string         `json:"parameters"`
		Template     string         `json:"template"`
		System       string         `json:"system"`
		Details      ollamaDetails  `json:"details"`
		ModelInfo    map[string]any `json:"model_info"`
		Capabilities []string       `json:"capabilities"`
		ModifiedAt   time.Time      `json:"modified_at"`
	}{
		License:   "",
		Modelfile: "FROM " + ollamaName(m.Name) + "\n",
		Template:  tmpl, Details: m.Info.details(), ModelInfo: info, Capabilities: m.capabilities(), ModifiedAt: mod,
	})
	return nil
}

// capabilities are what ollama says m can do: "embedding" for an
// embedding model; else "completion", "tools" where its chat template
// renders tools, and "thinking" where it reasons.
func (m *Model) capabilities() []string {
	if m.Embedding {
		return []string{"embedding"}
	}
	caps := []string{"completion"}
	if m.Template != nil && strings.Contains(m.Template.Source(), "tools") {
		caps = append(caps, "tools")
	}
	if m.Reasoning {
		caps = append(caps, "thinking")
	}
	return caps
}

// ollamaVersion serves GET /api/version.
func (s *Server) ollamaVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": OllamaVersion})
}
