package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// apiError is an error answered in OpenAI's shape:
// {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"` // string or null
	Code    any    `json:"code"`  // string or null
	retry   int    // seconds for Retry-After, 0: none
}

func (e *apiError) Error() string { return e.Message }

// badRequest is a 400 about param (may be "").
func badRequest(param, format string, args ...any) *apiError {
	e := &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...), Type: "invalid_request_error"}
	if param != "" {
		e.Param = param
	}
	return e
}

// writeError answers e in OpenAI's shape, or in the shape of the
// protocol whose errorShaper w is or wraps.
func writeError(w http.ResponseWriter, e *apiError) {
	if e.Type == "" {
		e.Type = "server_error"
	}
	if e.retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retry))
	}
	if sh := shaperOf(w); sh != nil {
		writeJSON(w, e.Status, sh.shapeError(e))
		return
	}
	writeJSON(w, e.Status, struct {
		Error *apiError `json:"error"`
	}{e})
}

// An errorShaper is a ResponseWriter of a route whose protocol answers
// errors in a shape of its own (Anthropic's, ollama's): shapeError
// returns e's body.
type errorShaper interface {
	shapeError(e *apiError) any
}

// shaperOf returns the errorShaper w is or wraps (through Unwrap), nil if
// none.
func shaperOf(w http.ResponseWriter) errorShaper {
	for {
		if sh, ok := w.(errorShaper); ok {
			return sh
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeBody reads a JSON request body (read whole and capped by route)
// into v: malformed JSON and fields of the wrong type are 400s naming what
// was wrong.
func decodeBody(r *http.Request, v any) *apiError {
	if b, ok := r.Body.(*bodyReader); ok {
		// The common case, decoded without a copy of the body; a failure
		// is decoded again below for its message.
		if json.Unmarshal(b.data, v) == nil {
			return nil
		}
		b.Reset(b.data)
	}
	dec := json.NewDecoder(r.Body)
	err := dec.Decode(v)
	if err == nil {
		// Anything after the value but white space is malformed.
		if _, err2 := dec.Token(); err2 == nil {
			return badRequest("", "the request body holds more than one JSON value")
		} else if !errors.Is(err2, io.EOF) {
			return badRequest("", "malformed JSON after the request object: %v", err2)
		}
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := jsonPath(typeErr.Field)
		if field == "" {
			return badRequest("", "the request body must be a JSON object, not %s", typeErr.Value)
		}
		return badRequest(field, "%s: expected %s, got %s", field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return badRequest("", "malformed JSON at byte %d: %v", syntaxErr.Offset, err)
	case isEOF(err):
		return badRequest("", "the request body is empty or cut short: expected a JSON object")
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return badRequest("", "invalid request body: %v", err)
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// jsonKind names a Go kind the way a JSON user thinks of it.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "an integer"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case k == "slice", k == "array":
		return "an array"
	case k == "map", k == "struct":
		return "an object"
	}
	return k
}

// jsonPath drops the names of the request types' embedded structs from a
// decoding error's field path: "samplingFields.temperature" is the
// request's "temperature".
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "samplingFields" && p != "structuredFields" && p != "chatRequest" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}
