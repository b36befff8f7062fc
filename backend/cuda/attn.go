package cuda

import "fmt"

// maxPrefillSplits bounds pattn_pre's splits; prefillPartTokens is the
// tokens x splits the attention partials hold at least (MaxBatch tokens of
// prompt take up to 4 splits each).
const (
	maxPrefillSplits  = 16
	prefillPartTokens = 4 * MaxBatch
	// prefillSplitKeys: the fewest keys a split takes on average for the
	// deepest run (shallower splits cost more in setup and combine than
	// they gain).
	prefillSplitKeys = 512
)

// preKernel names the prompt attention kernel for the model's shape (and
// options: the extended kernel for windows and sinks).
func (br *BatchRunner) preKernel() string { return br.base.attnKernel("pattn_pre") }

// prefillSplits returns how many key-range splits pattn_pre takes for
// ntiles query tiles of n tokens whose deepest run reaches keys
// positions: enough blocks for every SM's share (occ blocks an SM) when
// the tiles alone are fewer, each split at least prefillSplitKeys keys of
// the deepest run, as many as the partials hold.
func (br *BatchRunner) prefillSplits(ntiles, n, keys, occ int) int {
	if br.bt.psplit > 0 {
		return min(br.bt.psplit, max(1, br.partCap/max(n, 1)))
	}
	blocks := ntiles * br.base.shape.pblocks
	s := occ * br.dev.SMs / max(blocks, 1)
	s = min(s, keys/prefillSplitKeys, maxPrefillSplits, br.partCap/max(n, 1))
	return max(s, 1)
}

// attnPrefill enqueues layer i's attention of the ntiles prompt tiles (at
// tiles in the inputs) of a batch of n tokens over the paged cache:
// pattn_pre, split over the keys when the context is deep (and then
// pattn_comb). q holds the rotated queries; the output goes to patt. A
// local layer's tiles reach at most its window and a tile's tokens back,
// which its splits count.
func (br *BatchRunner) attnPrefill(l *launcher, i, ntiles, n int, tiles, pos, toff uint64) {
	c := &br.cfg
	w := &br.base.layers[i]
	name, smem := br.preKernel(), pattnPreSmem(c.HeadDim)
	if br.preOcc == 0 {
		occ, err := br.dev.occupancy(name, 128, smem)
		if err != nil {
			l.then(name, err)
			return
		}
		br.preOcc = occ
	}
	keys := 0
	for _, r := range br.runs {
		if r.N > 1 {
			keys = max(keys, r.Pos+r.N)
		}
	}
	if w.window > 0 {
		keys = min(keys, w.window+64)
	}
	ns := br.prefillSplits(ntiles, n, keys, br.preOcc)
	ext := br.attnExt(w)
	l.launch(name, [3]uint32{uint32(ntiles), uint32(br.base.shape.pblocks), uint32(ns)}, 128, uint32(smem),
		append([]uint64{br.pq, tiles, pos, toff, br.dmeta, i32(br.bs), i32(br.bsh), i32(c.Heads), i32(c.KVHeads), br.kc[i], br.vc[i],
			f32(c.AttentionScale()), i32(ns), br.pm, br.pl, br.pacc, br.patt}, ext...)...)
	if ns > 1 {
		l.launch(fmt.Sprintf("pattn_comb_h%d%s", c.HeadDim, br.base.wsSuffix()), [3]uint32{uint32(ntiles), uint32(c.Heads)}, 256, 0,
			append([]uint64{tiles, pos, i32(c.Heads), i32(ns), br.pm, br.pl, br.pacc, br.patt}, ext...)...)
	}
}
