// Package kvcache holds the keys and values a transformer has computed for
// the positions of one sequence, so each new token attends to them without
// recomputing.
package kvcache

import "fmt"

// Basic is the "basic" cache: for every layer one contiguous float32 buffer
// of keys and one of values, position-major (position p's nKV*headDim values
// at p*dim). It grows by doubling, up to MaxLen positions.
type Basic struct {
	dim    int // values per position in one layer (KV heads * head dim)
	maxLen int
	n      int
	k, v   [][]float32
}

// NewBasic returns an empty cache for layers layers of dim values per
// position, holding at most maxLen positions.
func NewBasic(layers, dim, maxLen int) *Basic {
	return &Basic{dim: dim, maxLen: maxLen, k: make([][]float32, layers), v: make([][]float32, layers)}
}

// MaxLen returns the most positions the cache can hold.
func (c *Basic) MaxLen() int { return c.maxLen }

// Len returns the number of positions stored.
func (c *Basic) Len() int { return c.n }

// Reserve makes room for n positions in all, growing the buffers if needed.
// It fails when n exceeds MaxLen.
func (c *Basic) Reserve(n int) error {
	if n > c.maxLen {
		return fmt.Errorf("kvcache: %d positions exceed the context length %d", n, c.maxLen)
	}
	if n*c.dim <= cap(c.k[0]) {
		return nil
	}
	size := min(max(n, 2*cap(c.k[0])/max(c.dim, 1), 64), c.maxLen) * c.dim
	for l := range c.k {
		k, v := make([]float32, size), make([]float32, size)
		copy(k, c.k[l][:c.n*c.dim])
		copy(v, c.v[l][:c.n*c.dim])
		c.k[l], c.v[l] = k, v
	}
	return nil
}

// Layer returns layer l's key and value buffers, room for every reserved position.
func (c *Basic) Layer(l int) (k, v []float32) { return c.k[l], c.v[l] }

// SetLen records that n positions are now stored; n must have been reserved.
func (c *Basic) SetLen(n int) { c.n = n }

// Reset empties the cache, keeping its memory.
func (c *Basic) Reset() { c.n = 0 }
