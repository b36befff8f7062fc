package parser

import (
	"bytes"
	"encoding/json"
)

// parseCall parses a JSON object that describes a call, {"name": NAME,
// "arguments": ARGS}, and returns the name and the compacted arguments, or
// ok == false if body is not a well-formed call (see the package
// documentation, Qwen).
func parseCall(body []byte) (name, args string, ok bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return "", "", false
	}
	if err := json.Unmarshal(m["name"], &name); err != nil || name == "" {
		return "", "", false
	}
	raw := bytes.TrimSpace(m["arguments"])
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", "", false
		}
		raw = bytes.TrimSpace([]byte(s))
		if !json.Valid(raw) {
			return "", "", false
		}
	} else if len(raw) == 0 || string(raw) == "null" {
		return name, "{}", true
	}
	args, ok = compactObject(raw)
	return name, args, ok
}

// compactObject returns b, which must be the text of one JSON object with
// optional surrounding whitespace, with insignificant space removed.
func compactObject(b []byte) (string, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return "", false
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return "", false
	}
	return out.String(), true
}

// jsonScan finds where a JSON object or array ends, byte by byte: it
// counts brackets of both kinds outside strings. It does not check that
// the text is JSON; the caller validates the value once its end is found.
type jsonScan struct {
	depth int
	inStr bool // inside a string
	esc   bool // after a backslash inside a string
}

// feed scans b, which continues the text scanned so far and begins, on the
// first call, with the opening bracket. It returns the offset in b just
// past the bracket that closes the value, or -1 if the value goes on.
func (s *jsonScan) feed(b []byte) int {
	for i, c := range b {
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth <= 0 {
				return i + 1
			}
		}
	}
	return -1
}
