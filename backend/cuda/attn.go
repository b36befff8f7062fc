package cuda

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// attnTuning holds the attention's launch choices over the paged cache;
// INFERNO_CUDA_ATTN overrides them, e.g. "psplit=0,pocc=0,dcap=2":
//
//   - psplit: key-range splits of the prompt attention (pattn_pre): 0 picks
//     them from the depth and the GPU (prefillSplits), n forces n (1: none).
//   - pocc: blocks of pattn_pre an SM holds, for the split choice (0: the
//     driver's occupancy figure).
//   - dcap: the decode attention takes at most dcap blocks an SM for one
//     token (its splits: dcap*SMs/blocks a split, as split allows).
type attnTuning struct {
	psplit, pocc, dcap int
}

func defaultAttnTuning() attnTuning { return attnTuning{dcap: 2} }

func parseAttnTuning(s string) (attnTuning, error) {
	t := defaultAttnTuning()
	if s == "" {
		return t, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return t, fmt.Errorf("cuda: INFERNO_CUDA_ATTN: bad entry %q", kv)
		}
		switch k {
		case "psplit":
			t.psplit = n
		case "pocc":
			t.pocc = n
		case "dcap":
			t.dcap = n
		default:
			return t, fmt.Errorf("cuda: INFERNO_CUDA_ATTN: unknown key %q", k)
		}
	}
	if t.psplit > maxPrefillSplits || t.dcap < 1 || t.dcap > 8 {
		return t, fmt.Errorf("cuda: INFERNO_CUDA_ATTN: psplit must be at most %d, dcap 1 to 8", maxPrefillSplits)
	}
	return t, nil
}

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

// initAttn reads INFERNO_CUDA_ATTN.
func (br *BatchRunner) initAttn() error {
	at, err := parseAttnTuning(os.Getenv("INFERNO_CUDA_ATTN"))
	br.at = at
	return err
}

// preKernel names the prompt attention kernel for the model's shape.
func (br *BatchRunner) preKernel() string {
	return fmt.Sprintf("pattn_pre_h%d_g%d", br.cfg.HeadDim, br.base.shape.pg)
}

// prefillSplits returns how many key-range splits pattn_pre takes for
// ntiles query tiles of n tokens whose deepest run reaches keys
// positions: enough blocks for every SM's share (occ blocks an SM) when
// the tiles alone are fewer, each split at least prefillSplitKeys keys of
// the deepest run, as many as the partials hold.
func (br *BatchRunner) prefillSplits(ntiles, n, keys, occ int) int {
	if br.at.psplit > 0 {
		return min(br.at.psplit, max(1, br.partCap/max(n, 1)))
	}
	blocks := ntiles * br.base.shape.pblocks
	s := occ * br.dev.SMs / max(blocks, 1)
	s = min(s, keys/prefillSplitKeys, maxPrefillSplits, br.partCap/max(n, 1))
	return max(s, 1)
}

// attnPrefill enqueues layer i's attention of the ntiles prompt tiles (at
// tiles in the inputs) of a batch of n tokens over the paged cache:
// pattn_pre, split over the keys when the context is deep (and then
// pattn_comb). q holds the rotated queries; the output goes to patt.
func (br *BatchRunner) attnPrefill(l *launcher, i, ntiles, n int, tiles, pos, toff uint64, scale float32) {
	c := &br.cfg
	name, smem := br.preKernel(), pattnPreSmem(c.HeadDim)
	if br.preOcc == 0 {
		occ := br.at.pocc
		if occ == 0 {
			var err error
			if occ, err = br.dev.occupancy(name, 128, smem); err != nil {
				l.then(name, err)
				return
			}
		}
		br.preOcc = occ
	}
	keys := 0
	for _, r := range br.runs {
		if r.N > 1 {
			keys = max(keys, r.Pos+r.N)
		}
	}
	ns := br.prefillSplits(ntiles, n, keys, br.preOcc)
	l.launch(name, [3]uint32{uint32(ntiles), uint32(br.base.shape.pblocks), uint32(ns)}, 128, uint32(smem),
		br.pq, tiles, pos, toff, br.dmeta, i32(br.bs), i32(br.bsh), i32(c.Heads), i32(c.KVHeads), br.kc[i], br.vc[i], f32(scale),
		i32(ns), br.pm, br.pl, br.pacc, br.patt)
	if ns > 1 {
		l.launch(fmt.Sprintf("pattn_comb_h%d", c.HeadDim), [3]uint32{uint32(ntiles), uint32(c.Heads)}, 256, 0,
			tiles, pos, i32(c.Heads), i32(ns), br.pm, br.pl, br.pacc, br.patt)
	}
}
