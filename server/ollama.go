package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"inferno/parser"
)

// ollama's API (/api/*), a layer over the same chat core, completions
// path and embeddings as the OpenAI routes: requests translate into them,
// and replies come back in ollama's shape, streamed as NDJSON (one JSON
// object a line) unless "stream": false. Errors are {"error": "..."}.
// The model-management routes that change files (pull, push, create,
// copy, delete) are not served: models are what serve was given.

// OllamaVersion is the ollama release whose API /api/* follows, which
// /api/version reports: clients gate features (thinking, tool names,
// embedding dimensions) by it.
const OllamaVersion = "0.12.6"

// ollamaRoutes registers ollama's API.
func (s *Server) ollamaRoutes() {
	const gen = routeAuth | routeAdmit | routeOllama
	s.route("POST /api/chat", "ollama_chat", gen, s.needOllamaModel("messages", s.ollamaChat))
	s.route("POST /api/generate", "ollama_generate", gen, s.needOllamaModel("prompt", s.ollamaGenerate))
	s.route("POST /api/embed", "ollama_embed", gen, s.needOllamaModel("", s.ollamaEmbed))
	s.route("POST /api/embeddings", "ollama_embeddings", gen, s.needOllamaModel("", s.ollamaEmbeddings))
	s.route("POST /api/show", "ollama_show", routeAuth|routeOllama, s.needOllamaModel("", s.ollamaShow))
	s.route("GET /api/tags", "ollama_tags", routeAuth|routeOllama, s.ollamaTags)
	s.route("GET /api/ps", "ollama_ps", routeAuth|routeOllama, s.ollamaPS)
	s.route("GET /api/version", "ollama_version", routeAuth|routeOllama, s.ollamaVersion)
}

// ModelInfo describes a model's file as ollama's /api/tags, /api/show
// and /api/ps report it. Serve fills it in from the GGUF file.
type ModelInfo struct {
	// Size is the file's size in bytes, and Modified its modification
	// time.
	Size     int64
	Modified time.Time
	// Digest identifies the file: the SHA-256 of its GGUF header (the
	// metadata and the tensors' index, not their data), in hexadecimal.
	Digest string
	// Architecture is general.architecture ("qwen3").
	Architecture string
	// Parameters is the number of weights; Quantization the file's
	// type as llama.cpp names it ("Q8_0", "Q4_K_M", "F16").
	Parameters   int64
	Quantization string
	// Metadata holds the file's scalar metadata (general.*, the
	// architecture's hyperparameters, tokenizer.ggml.* but its arrays),
	// /api/show's model_info.
	Metadata map[string]any
	// Memory is the memory the loaded model holds (its weights and KV
	// cache), and GPUMemory the part of it on the GPU.
	Memory    int64
	GPUMemory int64
}

// needOllamaModel is needModel for ollama's routes: it acquires the model
// the body's "model" names (or its older "name", /api/show's), with or
// without ollama's default tag ":latest", and writes the error h returns,
// in ollama's shape. An empty name is a 400 and one the server does not
// serve a 404, as ollama answers them. empty names the field ("messages",
// "prompt") whose absence, with keep_alive 0, asks to unload the model
// (ollama's way): with several models that is answered here, without
// loading the model, and the model unloads once its requests are done.
func (s *Server) needOllamaModel(empty string, h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.ready() {
			writeError(w, errLoading())
			return
		}
		var body map[string]json.RawMessage
		if e := decodeBody(r, &body); e != nil {
			writeError(w, e)
			return
		}
		sent, e := ollamaModelField(body)
		if e != nil {
			writeError(w, e)
			return
		}
		name, e := s.ollamaResolve(sent)
		if e != nil {
			writeError(w, e)
			return
		}
		if empty != "" && s.fleet.Load() != nil && ollamaUnloads(body, empty) {
			if err := s.KeepAlive(name, 0); err != nil {
				writeError(w, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("model '%s' not found", sent)})
				return
			}
			reply := ollamaReply{model: sent, chat: empty == "messages"}
			writeJSON(w, http.StatusOK, reply.body(parser.Delta{}, nil, &ollamaMetrics{DoneReason: "unload"}))
			return
		}
		m, release, e := s.acquireNamed(r, name)
		if e != nil {
			if r.Context().Err() == nil {
				writeError(w, e)
			}
			return
		}
		defer release()
		if e := h(w, r, m); e != nil && r.Context().Err() == nil {
			writeError(w, e)
		}
	}
}

// ollamaModelField returns the model a body names: "model", or the older
// "name" when "model" is absent or empty.
func ollamaModelField(body map[string]json.RawMessage) (string, *apiError) {
	name, e := modelName(body["model"])
	if e != nil || name != "" {
		return name, e
	}
	name, e = modelName(body["name"])
	if e != nil {
		return "", badRequest("name", "name: expected a string, got %s", jsonKindOf(body["name"]))
	}
	return name, nil
}

// ollamaResolve returns the name the server serves the model sent names
// by: sent itself, or sent with ollama's default tag ":latest" dropped or
// added where the served name has it not or has it.
func (s *Server) ollamaResolve(sent string) (string, *apiError) {
	if sent == "" {
		return "", badRequest("model", "model is required")
	}
	list := s.ModelList()
	var candidates []string
	if base, ok := strings.CutSuffix(sent, ":latest"); ok {
		candidates = []string{sent, base}
	} else if !strings.Contains(sent, ":") {
		candidates = []string{sent, sent + ":latest"}
	} else {
		candidates = []string{sent}
	}
	for _, c := range candidates {
		for _, st := range list {
			if st.Name == c || slices.Contains(st.Aliases, c) {
				return c, nil
			}
		}
	}
	return "", &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("model '%s' not found", sent)}
}

// ollamaUnloads reports whether body asks to unload its model: its field
// empty (absent, null, "" or []) and keep_alive 0.
func ollamaUnloads(body map[string]json.RawMessage, empty string) bool {
	if raw := body[empty]; present(raw) {
		var list []json.RawMessage
		var text string
		if json.Unmarshal(raw, &list) == nil {
			if len(list) > 0 {
				return false
			}
		} else if json.Unmarshal(raw, &text) != nil || text != "" {
			return false
		}
	}
	d, given, e := parseKeepAlive(body["keep_alive"])
	return e == nil && given && d == 0
}

// ollamaWriter is the ResponseWriter of an ollama route: writeError finds
// it and answers in ollama's error shape, {"error": "..."}.
type ollamaWriter struct{ http.ResponseWriter }

func (w ollamaWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (ollamaWriter) shapeError(e *apiError) any { return map[string]string{"error": e.Message} }

// ollamaName is the name ollama's lists give m: its name with the tag
// ":latest" when it has none.
func ollamaName(name string) string {
	if strings.Contains(name, ":") {
		return name
	}
	return name + ":latest"
}

// forever is the keep-alive that never ends.
const forever = time.Duration(math.MaxInt64)

// parseKeepAlive reads keep_alive as ollama does: a duration string
// ("5m", "1h30m", "-1s"), a number of seconds (-1 or any negative:
// forever; 0: unload once idle), or a string holding such a number. ok
// is false when keep_alive is absent or null.
func parseKeepAlive(raw json.RawMessage) (d time.Duration, ok bool, e *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, nil
	}
	bad := badRequest("keep_alive", `keep_alive must be a duration ("5m", "1h") or a number of seconds (negative: forever, 0: unload now), not %s`, truncateText(string(raw), 40))
	var secs float64
	if raw[0] == '"' {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return 0, false, bad
		}
		text = strings.TrimSpace(text)
		if v, err := time.ParseDuration(text); err == nil {
			if v < 0 {
				return forever, true, nil
			}
			return v, true, nil
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return 0, false, bad
		}
		secs = v
	} else if json.Unmarshal(raw, &secs) != nil {
		return 0, false, bad
	}
	switch {
	case math.IsNaN(secs):
		return 0, false, bad
	case secs < 0:
		return forever, true, nil
	case secs >= float64(forever/time.Second):
		return forever, true, nil
	}
	return time.Duration(secs * float64(time.Second)), true, nil
}

// keepAlive reads a request's keep_alive and passes it to the model's
// Models (Server.KeepAlive): m stays loaded that long once idle.
func (s *Server) keepAlive(m *Model, raw json.RawMessage) *apiError {
	d, given, e := parseKeepAlive(raw)
	if e != nil || !given {
		return e
	}
	keep := d
	if keep == forever {
		keep = -1
	}
	if err := s.KeepAlive(m.Name, keep); err != nil {
		s.log.Warn("keep_alive", "model", m.Name, "err", err)
	}
	return nil
}

// expiresAt is when the loaded model of st will be unloaded, as /api/ps
// reports it: never (zero) is ollama's "forever", the largest duration
// from now.
func expiresAt(st *ModelStatus, now time.Time) time.Time {
	if !st.ExpiresAt.IsZero() {
		return st.ExpiresAt
	}
	return now.Add(forever)
}

// truncateText shortens s to at most n bytes, whole characters, for
// messages.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// ollamaOptions are ollama's "options". What the server's load fixed
// (the context, the threads, the GPU layers, the batch) is accepted and
// has no effect; the sampling options ollama has that the sampler lacks
// are accepted at their neutral values only; any other key is refused.
type ollamaOptions struct {
	Temperature      *float64        `json:"temperature"`
	TopK             *int            `json:"top_k"`
	TopP             *float64        `json:"top_p"`
	MinP             *float64        `json:"min_p"`
	RepeatPenalty    *float64        `json:"repeat_penalty"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	Seed             *int64          `json:"seed"`
	NumPredict       *int            `json:"num_predict"`
	Stop             json.RawMessage `json:"stop"`
	NumCtx           *int            `json:"num_ctx"`
	// Neutral values only.
	TypicalP *float64 `json:"typical_p"`
	TFSZ     *float64 `json:"tfs_z"`
	Mirostat *int     `json:"mirostat"`
	// Without effect.
	RepeatLastN     *int     `json:"repeat_last_n"`
	MirostatTau     *float64 `json:"mirostat_tau"`
	MirostatEta     *float64 `json:"mirostat_eta"`
	PenalizeNewline *bool    `json:"penalize_newline"`
	NumKeep         *int     `json:"num_keep"`
	NumBatch        *int     `json:"num_batch"`
	NumGPU          *int     `json:"num_gpu"`
	MainGPU         *int     `json:"main_gpu"`
	NumThread       *int     `json:"num_thread"`
	Numa            *bool    `json:"numa"`
	LowVRAM         *bool    `json:"low_vram"`
	F16KV           *bool    `json:"f16_kv"`
	LogitsAll       *bool    `json:"logits_all"`
	VocabOnly       *bool    `json:"vocab_only"`
	UseMMap         *bool    `json:"use_mmap"`
	UseMLock        *bool    `json:"use_mlock"`
	EmbeddingOnly   *bool    `json:"embedding_only"`
}

// ollama's defaults for what options leave out (api.DefaultOptions; its
// Go engine applies no repeat penalty by default).
const (
	ollamaTemperature = 0.8
	ollamaTopK        = 40
	ollamaTopP        = 0.9
)

// decodeOptions reads "options" (absent or null: none), refusing keys
// ollama does not have.
func decodeOptions(raw json.RawMessage) (*ollamaOptions, *apiError) {
	o := &ollamaOptions{}
	if !present(raw) {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(o)
	if err == nil {
		return o, nil
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return nil, badRequest("options."+typeErr.Field, "options.%s: expected %s, got %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &typeErr):
		return nil, badRequest("options", "options must be an object, not %s", typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return nil, badRequest("options", "options: unknown option %s", key)
	}
	return nil, badRequest("options", "options: %v", err)
}

// sampling returns the sampling fields o asks for, ollama's defaults where
// it is silent. fallback holds the request's own fields that some clients
// send beside options (ollama-ai-provider-v2's temperature, top_p and
// max_output_tokens), applied where options does not set them.
func (o *ollamaOptions) sampling(fallback samplingFields) (samplingFields, *apiError) {
	switch {
	case o.TypicalP != nil && *o.TypicalP != 1 && *o.TypicalP != 0:
		return fallback, badRequest("options.typical_p", "options.typical_p %v is not supported (only 1, off)", *o.TypicalP)
	case o.TFSZ != nil && *o.TFSZ != 1 && *o.TFSZ != 0:
		return fallback, badRequest("options.tfs_z", "options.tfs_z %v is not supported (only 1, off)", *o.TFSZ)
	case o.Mirostat != nil && *o.Mirostat != 0:
		return fallback, badRequest("options.mirostat", "options.mirostat %d is not supported (only 0, off)", *o.Mirostat)
	case o.NumCtx != nil && *o.NumCtx < 0:
		return fallback, badRequest("options.num_ctx", "options.num_ctx %d is negative", *o.NumCtx)
	}
	f := samplingFields{Temperature: ptr(ollamaTemperature), TopK: ptr(ollamaTopK), TopP: ptr(ollamaTopP)}
	switch {
	case o.Temperature != nil:
		f.Temperature = o.Temperature
	case fallback.Temperature != nil:
		f.Temperature = fallback.Temperature
	}
	switch {
	case o.TopP != nil:
		f.TopP = o.TopP
	case fallback.TopP != nil:
		f.TopP = fallback.TopP
	}
	if *f.TopP == 0 {
		f.TopP = ptr(1.0) // ollama: 0 is off
	}
	if o.TopK != nil {
		f.TopK = ptr(max(*o.TopK, 0)) // ollama: 0 or less is off
	}
	f.MinP, f.PresencePenalty, f.FrequencyPenalty = o.MinP, o.PresencePenalty, o.FrequencyPenalty
	f.RepetitionPenalty = o.RepeatPenalty
	if o.Seed != nil && *o.Seed >= 0 { // ollama: -1 is a random seed
		f.Seed = o.Seed
	}
	f.MaxTokens = fallback.MaxTokens
	if o.NumPredict != nil {
		f.MaxTokens = nil // ollama: -1 unbounded, -2 until the context is full
		if *o.NumPredict > 0 {
			f.MaxTokens = o.NumPredict
		}
	}
	f.Stop = o.Stop
	return f, nil
}

// ollamaThink reads "think": true or false, or a level ("low", "medium",
// "high"); set is false when it is absent or null.
func ollamaThink(raw json.RawMessage) (on bool, level string, set bool, e *apiError) {
	if !present(raw) {
		return false, "", false, nil
	}
	if json.Unmarshal(raw, &on) == nil {
		return on, "", true, nil
	}
	if json.Unmarshal(raw, &level) == nil {
		switch level {
		case "low", "medium", "high":
			return true, level, true, nil
		case "true", "false":
			return level == "true", "", true, nil
		}
	}
	return false, "", false, badRequest("think", `think must be true, false, "low", "medium" or "high", not %s`, truncateText(string(raw), 40))
}

// applyThink sets what think asks for on a chat request: Qwen3's
// templates read enable_thinking, gpt-oss's reasoning_effort. A model
// that does not reason refuses think: true, as ollama does.
func applyThink(m *Model, req *chatRequest, raw json.RawMessage, name string) *apiError {
	on, level, set, e := ollamaThink(raw)
	if e != nil || !set {
		return e
	}
	if on && !m.Reasoning {
		return badRequest("think", "%q does not support thinking", name)
	}
	if !m.Reasoning {
		return nil
	}
	if req.ChatTemplateKwargs == nil {
		req.ChatTemplateKwargs = map[string]json.RawMessage{}
	}
	req.ChatTemplateKwargs["enable_thinking"] = json.RawMessage(strconv.FormatBool(on))
	if level != "" {
		req.ReasoningEffort = &level
	}
	return nil
}

// ollamaFormat turns "format" into the structured-output field it means:
// "json" any JSON object, an object a JSON schema; "" and null nothing.
func ollamaFormat(raw json.RawMessage) (*responseFormat, *apiError) {
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "":
			return nil, nil
		case "json":
			return &responseFormat{Type: "json_object"}, nil
		}
		return nil, badRequest("format", `format must be "json" or a JSON schema (an object), not %q`, truncateText(s, 40))
	}
	if raw[0] != '{' {
		return nil, badRequest("format", `format must be "json" or a JSON schema (an object)`)
	}
	rf := &responseFormat{Type: "json_schema"}
	rf.JSONSchema = &struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	}{Name: "format", Schema: raw}
	return rf, nil
}

// refuseImages answers a request that carries images: the models served
// read text only.
func refuseImages(raw json.RawMessage, param string) *apiError {
	raw = bytes.TrimSpace(raw)
	if !present(raw) || string(raw) == "[]" {
		return nil
	}
	return badRequest(param, "%s: images are not supported: this model reads text only", param)
}

// ndjson writes ollama's streams: one JSON object a line.
type ndjson struct{ stream }

func newNDJSON(w http.ResponseWriter) *ndjson {
	n := &ndjson{}
	n.start(w, "application/x-ndjson")
	return n
}

// send writes v as one line.
func (n *ndjson) send(v any) error { return n.emit("", v, "") }

// sendError ends a stream with an error line, as ollama does.
func (n *ndjson) sendError(e *apiError) { _ = n.send(map[string]string{"error": e.Message}) }

// ollamaTime is a timestamp as ollama writes them (RFC 3339 in UTC, with
// nanoseconds).
func ollamaTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
