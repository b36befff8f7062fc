// Package kvcache holds the keys and values a transformer has computed for
// the positions of its sequences, so each new token attends to them
// without recomputing: a pool of fixed-size blocks (Pages) and the
// manager that hands them to sequences (Manager), with a prefix cache.
package kvcache

import (
	"fmt"
	"strings"
)

// Type is the element type a cache stores keys and values in.
type Type int

const (
	// F32 stores float32 values: what the forward pass computes, unrounded.
	F32 Type = iota
	// F16 stores IEEE half-precision values (as uint16 bits), rounded to
	// nearest even: half the memory, and half the bytes attention reads
	// per token, as llama.cpp's default cache.
	F16
)

// String returns "f32" or "f16".
func (t Type) String() string {
	switch t {
	case F32:
		return "f32"
	case F16:
		return "f16"
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Size returns the bytes of one stored value.
func (t Type) Size() int {
	if t == F16 {
		return 2
	}
	return 4
}

// ParseType returns the type String spells as s ("f32" or "f16", any case).
func ParseType(s string) (Type, error) {
	switch strings.ToLower(s) {
	case "f32":
		return F32, nil
	case "f16":
		return F16, nil
	}
	return 0, fmt.Errorf("kvcache: unknown element type %q (want f32 or f16)", s)
}
