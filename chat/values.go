package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// parseJSON decodes one JSON value the way Python's json.loads does: objects
// become dicts that keep their keys in the order of the text (a repeated key
// keeps its first place and its last value), integers become ints and numbers
// with a fraction or exponent floats.
func parseJSON(data []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return jinja.Value{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return jinja.Value{}, errors.New("invalid JSON: data after the value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return jinja.Value{}, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			v := jinja.NewDict()
			d := v.AsDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return jinja.Value{}, err
				}
				key, ok := k.(string)
				if !ok {
					return jinja.Value{}, fmt.Errorf("object key %v is not a string", k)
				}
				val, err := decodeValue(dec)
				if err != nil {
					return jinja.Value{}, err
				}
				d.Set(key, val)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Value{}, err
			}
			return v, nil
		case '[':
			items := []jinja.Value{}
			for dec.More() {
				val, err := decodeValue(dec)
				if err != nil {
					return jinja.Value{}, err
				}
				items = append(items, val)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Value{}, err
			}
			return jinja.NewList(items), nil
		}
		return jinja.Value{}, fmt.Errorf("unexpected %v", tok)
	case json.Number:
		return numberValue(tok), nil
	case string:
		return jinja.NewString(tok), nil
	case bool:
		return jinja.NewBool(tok), nil
	case nil:
		return jinja.None(), nil
	}
	return jinja.Value{}, fmt.Errorf("unexpected token %v", tok)
}

// numberValue converts a JSON number as Python's json.loads does: an int
// unless it has a fraction or an exponent. Integers beyond int64, which
// Python keeps exact, become floats.
func numberValue(n json.Number) jinja.Value {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return jinja.NewInt(i)
		}
	}
	f, _ := strconv.ParseFloat(s, 64) // out of range gives ±Inf, as in Python
	return jinja.NewFloat(f)
}

// goValue converts a Go value given in Options.Kwargs to a template value.
func goValue(v any) (jinja.Value, error) {
	switch v := v.(type) {
	case nil:
		return jinja.None(), nil
	case bool:
		return jinja.NewBool(v), nil
	case string:
		return jinja.NewString(v), nil
	case int:
		return jinja.NewInt(int64(v)), nil
	case int8:
		return jinja.NewInt(int64(v)), nil
	case int16:
		return jinja.NewInt(int64(v)), nil
	case int32:
		return jinja.NewInt(int64(v)), nil
	case int64:
		return jinja.NewInt(v), nil
	case uint8:
		return jinja.NewInt(int64(v)), nil
	case uint16:
		return jinja.NewInt(int64(v)), nil
	case uint32:
		return jinja.NewInt(int64(v)), nil
	case uint:
		return uintValue(uint64(v)), nil
	case uint64:
		return uintValue(v), nil
	case float32:
		return jinja.NewFloat(float64(v)), nil
	case float64:
		return jinja.NewFloat(v), nil
	case json.Number:
		if _, err := strconv.ParseFloat(string(v), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return jinja.Value{}, fmt.Errorf("invalid number %q", string(v))
		}
		return numberValue(v), nil
	case json.RawMessage:
		return parseJSON(v)
	case []any:
		items := make([]jinja.Value, len(v))
		for i, x := range v {
			item, err := goValue(x)
			if err != nil {
				return jinja.Value{}, err
			}
			items[i] = item
		}
		return jinja.NewList(items), nil
	case map[string]any:
		d := jinja.NewDict()
		for _, k := range slices.Sorted(maps.Keys(v)) {
			item, err := goValue(v[k])
			if err != nil {
				return jinja.Value{}, err
			}
			d.AsDict().Set(k, item)
		}
		return d, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return jinja.Value{}, err
	}
	return parseJSON(data)
}

func uintValue(u uint64) jinja.Value {
	if u > 1<<63-1 {
		return jinja.NewFloat(float64(u))
	}
	return jinja.NewInt(int64(u))
}
