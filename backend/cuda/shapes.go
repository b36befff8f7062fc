package cuda

import (
	"fmt"
	"slices"

	"inferno/arch"
)

// The attention kernels are compiled per head dimension and per number
// of query heads a block takes (its "group"): kernels/attn_*.cuh.
//
// A model's ratio of query heads to KV heads may be anything the CPU
// accepts: a decode block takes all of a KV head's query heads when a
// kernel for that many exists, else an equal share of them (the largest
// compiled group dividing the ratio; the blocks of one KV head then read
// its keys and values once each, mostly from L2, and the first appends
// the new key and value). Qwen3's ratios are 2 (0.6B, 1.7B), 4 (4B, 8B),
// 5 (14B) and 8 (32B), head dimension 128; Qwen2.5's 7 (0.5B, head
// dimension 64, and 7B, 128).
var (
	// headDims are the head dimensions with kernels.
	headDims = []int{32, 64, 128, 256}
	// decodeGroups are the query heads per block of the decode attention
	// (pattn_dec, pattn_decf, pattn_decc) per head dimension: a
	// block keeps G x HD floats per warp in shared memory (at most 8 KB a
	// warp) and G x 24 in registers.
	decodeGroups = map[int][]int{
		32:  {1, 2, 4},
		64:  {1, 2, 3, 4, 5, 6, 7, 8},
		128: {1, 2, 3, 4, 5, 6, 7, 8},
		256: {1, 2, 3, 4},
	}
	// decodeGroupsWS are the groups of the extended decode attention
	// (windows and sinks: pattn_dec*_ws), powers of two only: a ratio of
	// 6 takes 2 heads a block there, 5 one (gpt-oss: 8 of head dimension
	// 64; Gemma 3: 4 and 2 of 256, 2 of 128).
	decodeGroupsWS = map[int][]int{
		32:  {1, 2, 4},
		64:  {1, 2, 4, 8},
		128: {1, 2, 4, 8},
		256: {1, 2, 4},
	}
	// prefillGroups are pattn_pre's (64/G tokens a tile, G a power of two),
	// of its extended variant too.
	prefillGroups = []int{1, 2, 4}
)

// largestDivisor returns the largest of gs dividing n (gs holds 1).
func largestDivisor(gs []int, n int) int {
	best := 1
	for _, g := range gs {
		if n%g == 0 && g > best {
			best = g
		}
	}
	return best
}

// decodeGroup returns the query heads one decode attention block takes for
// head dimension hd and ratio query heads per KV head (ext: of the
// extended kernels).
func decodeGroup(hd, ratio int, ext bool) int {
	if ext {
		return largestDivisor(decodeGroupsWS[hd], ratio)
	}
	return largestDivisor(decodeGroups[hd], ratio)
}

// prefillGroup returns the query heads one pattn_pre block takes.
func prefillGroup(ratio int) int { return largestDivisor(prefillGroups, ratio) }

// checkShape tells whether the kernels can run a model of configuration c.
func checkShape(c *arch.Config) error {
	switch {
	case !slices.Contains(headDims, c.HeadDim):
		return fmt.Errorf("cuda: head dimension %d is not supported (32, 64, 128 or 256)", c.HeadDim)
	case c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("cuda: %d query heads are not a multiple of %d KV heads", c.Heads, c.KVHeads)
	case c.Hidden%32 != 0 || c.FFN%32 != 0:
		return fmt.Errorf("cuda: widths must be multiples of 32 (hidden %d, ffn %d)", c.Hidden, c.FFN)
	}
	return nil
}

// attnShape is how the attention kernels cut a model's heads.
type attnShape struct {
	dg, dblocks int // decode: query heads a block, blocks a token and split (Heads/dg)
	pg, pblocks int // pattn_pre: query heads a block, blocks a tile (Heads/pg)
}

// shapeOf returns how the attention kernels (ext: the extended ones)
// cut c's heads.
func shapeOf(c *arch.Config, ext bool) attnShape {
	ratio := c.Heads / c.KVHeads
	s := attnShape{dg: decodeGroup(c.HeadDim, ratio, ext), pg: prefillGroup(ratio)}
	s.dblocks, s.pblocks = c.Heads/s.dg, c.Heads/s.pg
	return s
}
