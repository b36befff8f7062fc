// Package kvcache holds the keys and values a transformer has computed for
// the positions of one sequence, so each new token attends to them without
// recomputing.
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

// Basic is the "basic" cache: for every layer one contiguous buffer of keys
// and one of values, position-major (position p's nKV*headDim values at
// p*dim), of element type F32 ([]float32) or F16 ([]uint16 half-precision
// bits). It grows by doubling, up to MaxLen positions.
type Basic struct {
	typ    Type
	dim    int // values per position in one layer (KV heads * head dim)
	maxLen int
	n      int
	room   int         // positions the buffers hold
	k, v   [][]float32 // F32 buffers, per layer
	kh, vh [][]uint16  // F16 buffers, per layer
}

// NewBasic returns an empty cache for layers layers of dim values per
// position, holding at most maxLen positions, with elements of type typ.
// It panics on an unknown type.
func NewBasic(layers, dim, maxLen int, typ Type) *Basic {
	c := &Basic{typ: typ, dim: dim, maxLen: maxLen}
	switch typ {
	case F32:
		c.k, c.v = make([][]float32, layers), make([][]float32, layers)
	case F16:
		c.kh, c.vh = make([][]uint16, layers), make([][]uint16, layers)
	default:
		panic(fmt.Sprintf("kvcache: unknown element type %v", typ))
	}
	return c
}

// Type returns the element type of the keys and values.
func (c *Basic) Type() Type { return c.typ }

// MaxLen returns the most positions the cache can hold.
func (c *Basic) MaxLen() int { return c.maxLen }

// Len returns the number of positions stored.
func (c *Basic) Len() int { return c.n }

// Room returns the positions the buffers hold now: the cache is one block
// of Room positions.
func (c *Basic) Room() int { return c.room }

// Reserve makes room for n positions in all, growing the buffers if needed.
// It fails when n exceeds MaxLen.
func (c *Basic) Reserve(n int) error {
	if n > c.maxLen {
		return fmt.Errorf("kvcache: %d positions exceed the context length %d", n, c.maxLen)
	}
	if n <= c.room {
		return nil
	}
	room := min(max(n, 2*c.room, 64), c.maxLen)
	size, keep := room*c.dim, c.n*c.dim
	regrow(c.k, size, keep)
	regrow(c.v, size, keep)
	regrow(c.kh, size, keep)
	regrow(c.vh, size, keep)
	c.room = room
	return nil
}

// regrow replaces each buffer by one of size values that starts with its
// first keep values.
func regrow[E any](bufs [][]E, size, keep int) {
	for l, b := range bufs {
		nb := make([]E, size)
		copy(nb, b[:keep])
		bufs[l] = nb
	}
}

// LayerF32 returns layer l's key and value buffers, room for every reserved
// position. It panics unless the cache is of type F32.
func (c *Basic) LayerF32(l int) (k, v []float32) {
	if c.typ != F32 {
		panic(fmt.Sprintf("kvcache: LayerF32 of a %v cache", c.typ))
	}
	return c.k[l], c.v[l]
}

// LayerF16 returns layer l's key and value buffers of half-precision bits,
// room for every reserved position. It panics unless the cache is of type
// F16.
func (c *Basic) LayerF16(l int) (k, v []uint16) {
	if c.typ != F16 {
		panic(fmt.Sprintf("kvcache: LayerF16 of a %v cache", c.typ))
	}
	return c.kh[l], c.vh[l]
}

// Bytes returns the memory the buffers hold now, keys and values of every
// layer.
func (c *Basic) Bytes() int64 {
	return int64(2*max(len(c.k), len(c.kh))) * int64(c.room*c.dim) * int64(c.typ.Size())
}

// SetLen records that n positions are now stored; n must have been reserved.
func (c *Basic) SetLen(n int) { c.n = n }

// Reset empties the cache, keeping its memory.
func (c *Basic) Reset() { c.n = 0 }
