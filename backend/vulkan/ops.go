package vulkan

// The forward pass's operations other than the weight products: each
// shader's push block mirrored as a Go struct (same field order: uint64
// for each buffer address, then 32-bit scalars; vulkan.PushBytes passes
// it), and the helpers the runner calls to pick workgroup shapes and
// counts and to lay out what the shaders read (the RoPE table, the block
// tables, the attention tiles). The shaders are in shaders/, one file an
// operation; each documents its push block, grid and specialization
// constants.

import (
	"fmt"
	"math"

	"inferno/arch"
	"inferno/backend"
)

// maxGroups is the number of workgroups a dispatch dimension may have on
// every device (maxComputeWorkGroupCount's required minimum).
const maxGroups = 65535

// pushRMSNorm is the push block of rms_norm.comp. Group and Stride lay
// out the rows: Group rows of D values every Stride values (1 and D for
// packed rows).
type pushRMSNorm struct {
	X, Y, Gain    uint64
	Rows, D       uint32
	Eps           float32
	Group, Stride uint32
	_             [4]byte
}

// pushRopeStore is the push block of rope_store.comp: QK-norm, RoPE and
// the cache's store of a layer in one dispatch (Flags: ropeNorm,
// ropeStore). Style is 0 for arch.RopeNeoX, 1 for arch.RopeNormal
// (ropeStyle); Stride is the values from a token's first head to the next
// token's (a fused QKV product's width).
type pushRopeStore struct {
	X, Pos, Seq, Tab, QGain, KGain, KC, VC, Tables, TabOff uint64
	Tokens, NQ, NKV, HeadDim, RotDims, Style, MaxPos       uint32
	Stride, BlockSize, Flags                               uint32
	Eps                                                    float32
	_                                                      [4]byte
}

// rope_store's flags.
const (
	ropeNorm  = 1 // normalize each query and key head with its gains
	ropeStore = 2 // store the keys and values in the cache
)

// pushAttn is the push block of attn.comp. Splits is 1 but for decode at
// depth (attnSplits), where Part receives the runs' partial results;
// QStride is the values from a token's queries to the next token's
// (NHeads*headDim when packed). It fills the 128 bytes of push constants.
type pushAttn struct {
	Q, Out, KC, VC, Pos, Seq, Tables, TabOff, Tiles, Sinks, Part, Rope uint64
	NTiles, NHeads, NKV, BlockSize                                     uint32
	Window                                                             int32
	Scale                                                              float32
	Splits, QStride                                                    uint32
}

// ropeArgs is attn.comp's RopeArgs, a layer's rope block (FUSE): the
// table and gains of rope_store's push block and its options.
type ropeArgs struct {
	Tab, QGain, KGain             uint64
	RotDims, Style, MaxPos, Flags uint32
	Eps                           float32
	_                             [4]byte
}

// ropeArgsBytes is the stride of the layers' rope blocks in their buffer.
const ropeArgsBytes = 48

// hasSinks is attn_combine's flag of a sinks address (0: none).
func hasSinks(addr uint64) uint32 {
	if addr != 0 {
		return 1
	}
	return 0
}

// pushAttnCombine is the push block of attn_combine.comp.
type pushAttnCombine struct {
	Part, Out, Sinks                        uint64
	Rows, NHeads, HeadDim, Splits, HasSinks uint32
	_                                       [4]byte
}

// pushGLU is the push block of swiglu.comp, geglu.comp and
// swiglu_oai.comp.
type pushGLU struct {
	Out, Gate, Up    uint64
	N, Width, Stride uint32 // Width 0: packed; else gate and up rows of Width values every Stride
	_                [4]byte
}

// pushAdd is the push block of add.comp.
type pushAdd struct {
	X, Y uint64
	N    uint32
	_    [4]byte
}

// pushAddBias is the push block of add_bias.comp.
type pushAddBias struct {
	X, Bias uint64
	Rows, D uint32
}

// pushArgmax is the push block of argmax.comp.
type pushArgmax struct {
	Logits, Out, Part          uint64
	Rows, Vocab, Chunks, Phase uint32
}

// argmaxChunks returns how many workgroups argmax cuts a row of vocab
// logits into (phase 1, then a merge; 1: one workgroup a row): rows of
// rows enough chunks of at least 4,096 logits to give the device about
// 256 workgroups, at most WG (the merge's invocations).
func argmaxChunks(rows, vocab int, wg uint32) int {
	c := min((256+rows-1)/max(rows, 1), vocab/4096, int(wg))
	return max(c, 1)
}

// groups2D returns the grid of a dispatch of n items, per to a workgroup
// (per 1: a workgroup an item, as rms_norm and argmax take rows):
// ceil(n/per) workgroups as gx*gy with gx at most 65535. The shaders read
// the grid as one dimension (ops.glsl's group_index) and skip the
// workgroups past the last item.
func groups2D(n, per int) (gx, gy uint32) {
	g := (max(n, 0) + per - 1) / per
	if g <= maxGroups {
		return uint32(max(g, 1)), 1
	}
	gy = uint32((g + maxGroups - 1) / maxGroups)
	return uint32((g + int(gy) - 1) / int(gy)), gy
}

// elementWG is the workgroup size of the element-wise shaders (swiglu,
// geglu, swiglu_oai, add, add_bias, rope_store): a multiple of every
// subgroup size, within every device's limit of 1024 invocations.
const elementWG = 256

// rowWG returns the workgroup size of a shader that gives a workgroup to
// each row of d values (rms_norm, argmax, attn_combine): 256 for wide
// rows, down to 32 (or the subgroup size, if larger) for short ones such
// as QK-norm's heads: a power of two, whole subgroups.
func rowWG(d int, subgroup uint32) uint32 {
	wg := uint32(256)
	for wg > max(subgroup, 32) && int(wg)/2 >= d {
		wg /= 2
	}
	return max(wg, subgroup)
}

// ropeStyle returns rope_store.comp's style flag for s.
func ropeStyle(s arch.RopeStyle) uint32 {
	if s == arch.RopeNormal {
		return 1
	}
	return 0
}

// RopeTable returns rope_store.comp's table for maxPos positions of a RoPE over
// rotDims values a head: for position p and pair i < rotDims/2, cos and
// sin of p * rope.Freq(i, rotDims), times rope.Mscale(), computed in
// float64 and rounded to float32 (as scalar.RoPE does), at [(p*rotDims/2
// + i)*2] and the next value: maxPos*rotDims values.
//
// The shader reads the table rather than computing the angles: a float32
// p * f has an error of half an ulp of the angle (up to 2e-3 radians at p
// = 32768, a relative error of 2e-3 in the rotated values), and GLSL's
// sin and cos are accurate only near 0. The table costs 4*rotDims bytes a
// position (16 MiB for 32768 positions of 128 rotated values), which the
// CUDA backend spends too (backend/cuda's ropeTable).
func RopeTable(rope *arch.Rope, rotDims, maxPos int) ([]float32, error) {
	if rotDims < 2 || rotDims%2 != 0 || maxPos < 0 {
		return nil, fmt.Errorf("vulkan: RoPE table of %d positions over %d values", maxPos, rotDims)
	}
	half := rotDims / 2
	freqs := rope.Freqs(rotDims)
	m := rope.Mscale()
	tab := make([]float32, maxPos*rotDims)
	for p := range maxPos {
		row := tab[p*rotDims : (p+1)*rotDims]
		for i := range half {
			s, c := math.Sincos(float64(p) * freqs[i])
			row[2*i], row[2*i+1] = float32(c*m), float32(s*m)
		}
	}
	return tab, nil
}

// BlockTables packs the block tables of seqs into rope_store's and attn's
// layout: tables holds each sequence's table in turn, sequence i's from
// tabOff[i]; pos and seq give each query token (row Token+t of the batch)
// its position and its sequence's index, for tokens rows (tokens with no
// sequence get position -1: rope_store skips them). It fails if a sequence
// names tokens outside 0..tokens-1.
func BlockTables(seqs []backend.SeqAttn, tokens int) (pos, seq, tables, tabOff []int32, err error) {
	pos, seq = make([]int32, tokens), make([]int32, tokens)
	for i := range pos {
		pos[i] = -1
	}
	tabOff = make([]int32, len(seqs))
	for i, s := range seqs {
		if s.N < 0 || s.Token < 0 || s.Token+s.N > tokens || s.Pos < 0 {
			return nil, nil, nil, nil, fmt.Errorf("vulkan: sequence %d: %d tokens from %d at position %d; the batch has %d tokens", i, s.N, s.Token, s.Pos, tokens)
		}
		tabOff[i] = int32(len(tables))
		tables = append(tables, s.Table...)
		for t := range s.N {
			pos[s.Token+t], seq[s.Token+t] = int32(s.Pos+t), int32(i)
		}
	}
	if len(tables) == 0 {
		tables = append(tables, 0) // a buffer of at least one value
	}
	return pos, seq, tables, tabOff, nil
}

// AttnTiles returns attn.comp's tiles for the query tokens of seqs: each
// sequence's tokens in runs of at most tq (first token, tokens), the
// pairs in one slice.
func AttnTiles(seqs []backend.SeqAttn, tq int) []int32 {
	var tiles []int32
	for _, s := range seqs {
		tiles = appendTiles(tiles, s.Token, s.N, tq)
	}
	return tiles
}

// appendTiles appends to dst the tiles of a run of n query tokens from
// token start: (first token, tokens) pairs of at most tq tokens.
func appendTiles(dst []int32, start, n, tq int) []int32 {
	for t := 0; t < n; t += tq {
		dst = append(dst, int32(start+t), int32(min(tq, n-t)))
	}
	return dst
}

// attnShape is attn.comp's specialization: WG invocations (keys a chunk),
// HPW query heads and TQ query tokens a workgroup, D the head size, Fuse
// 1 for decode passes that normalize, turn and store the keys themselves
// (constant ids 0 to 4).
type attnShape struct {
	WG, HPW, TQ, D, Fuse uint32
}

// fuse returns s as the decode shape that does rope_store's work (TQ 1).
func (s attnShape) fuse() attnShape {
	s.Fuse = 1
	return s
}

// exceeds reports whether s needs more shared memory than the device's.
func (s attnShape) exceeds(sharedMem uint32) bool { return s.shared() > sharedMem }

// spec returns the specialization constants in constant_id order.
func (s attnShape) spec() []uint32 {
	return []uint32{s.WG, s.HPW, s.TQ, s.D, s.Fuse, s.valuePairs()}
}

// shared returns the shared memory the shape uses, in bytes.
func (s attnShape) shared() uint32 {
	r := s.HPW * s.TQ
	b := 4 * (r*s.D + 4*((r+3)/4)*s.WG + r*s.WG + s.WG)
	if kg := s.WG / max(s.D/2/s.valuePairs(), 1); kg > 1 {
		b += 4 * kg * s.D // vred: the key groups' partial outputs of a row
	}
	if s.Fuse != 0 {
		b += 4 * (r*s.D + 2*s.D + (r+1)*s.D/2)
	}
	return b
}

// valuePairs is attn.comp's VP: the value pairs an invocation reads of a
// key, fewer as the rows (each VP accumulator pairs) grow, so that an
// invocation holds at most 32 accumulators.
func (s attnShape) valuePairs() uint32 {
	switch r := s.HPW * s.TQ; {
	case r <= 4:
		return 4
	case r <= 8:
		return 2
	}
	return 1
}

// maxAttnRows bounds the query rows (tokens times heads) of an attn
// workgroup: each invocation holds a logit, a maximum, a denominator and
// the accumulators of its value pairs for each row.
const maxAttnRows = 16

// pickAttnShape returns attn.comp's shape for heads of headDim values,
// group query heads a KV head, on a device of the given subgroup size and
// shared memory (bytes): with prompt, tiles of several query tokens (up
// to maxAttnRows rows with the group's heads), else one token (decode)
// with as many of the group's heads as fit. The invocations number the
// head's value pairs (one pair each), at least 32, rounded up to whole
// subgroups; decode workgroups take attnDecodeInvocations where the shared
// memory allows.
func pickAttnShape(headDim, group int, subgroup, sharedMem uint32, prompt bool) (attnShape, error) {
	if headDim <= 0 || headDim%8 != 0 || headDim > 512 || group <= 0 {
		return attnShape{}, fmt.Errorf("vulkan: attention with heads of %d values (want a multiple of 8 up to 512), %d query heads a KV head", headDim, group)
	}
	sub := max(subgroup, 1)
	wg := (max(uint32(headDim/2), 32) + sub - 1) / sub * sub
	s := attnShape{WG: wg, HPW: 1, TQ: 1, D: uint32(headDim)}
	for h := min(group, maxAttnRows); h >= 1; h-- {
		if group%h == 0 {
			s.HPW = uint32(h)
			break
		}
	}
	if prompt {
		s.TQ = max(1, maxAttnRows/s.HPW)
	}
	for s.shared() > sharedMem {
		switch {
		case s.TQ > 1:
			s.TQ /= 2
		case s.HPW > 1:
			h := s.HPW - 1
			for group%int(h) != 0 {
				h--
			}
			s.HPW = h
		default:
			return attnShape{}, fmt.Errorf("vulkan: attention on heads of %d values needs %d bytes of shared memory; the device has %d", headDim, s.shared(), sharedMem)
		}
	}
	if w := s; !prompt {
		w.WG = max(w.WG, (attnDecodeInvocations+sub-1)/sub*sub)
		if w.shared() <= sharedMem {
			s = w
		}
	}
	return s, nil
}

// attnDecodeInvocations is the fewest invocations of a decode workgroup of
// attn, which are the keys of a chunk. A decode step's attention is a few
// workgroups a layer (a KV head's, times the splits at depth), each
// waiting on memory a few times a chunk (the keys' block table and rows,
// then their values), so chunks wider than the head's value pairs wait
// fewer times: on an H100 (2026-12-07), 256 invocations against 64 (heads
// of 128) took the 0.6B's attn from 19.7 to 13.6 us a layer at position
// 64, its tg128 from 579-581 to 657-677 tok/s and tg32 at depth 4,096
// from 397 to 503 (docs/PERF.md).
const attnDecodeInvocations = 256

// setOpts sets the scale and the window of p from opt for heads of
// headDim values, and clears p.Sinks (set apart) when opt has none.
func (p *pushAttn) setOpts(opt *backend.AttnOpts, headDim int) {
	p.Scale = opt.Scale
	if p.Scale == 0 {
		p.Scale = arch.DefaultAttnScale(headDim)
	}
	p.Window = int32(max(opt.Window, 0))
	if opt.Sinks == nil {
		p.Sinks = 0
	}
}

// attnGroups returns attn.comp's grid for nTiles tiles, nHeads query heads
// and splits runs of keys: (x, nHeads/HPW, splits*zt) with the tiles over
// x and zt, x at most 65535.
func attnGroups(nTiles, nHeads int, s attnShape, splits int) (gx, gy, gz uint32) {
	gx, zt := groups2D(nTiles, 1)
	return gx, uint32(nHeads) / s.HPW, zt * uint32(max(splits, 1))
}

// attnTargetGroups is the number of workgroups attnSplits aims an attn
// dispatch at: enough to occupy a large GPU (132 multiprocessors of an
// H100, 96 compute units of a large AMD GPU) twice over.
const attnTargetGroups = 256

// attnMinSplitKeys is the fewest keys attnSplits gives a run: below it the
// partial results cost more than the parallelism brings.
const attnMinSplitKeys = 256

// attnSplits returns the runs of keys attn.comp cuts each tile's keys
// into, for nTiles tiles and nHeads query heads of shape s attending to
// up to keys positions: 1 (no partial results, no attn_combine) when the
// tiles and head groups are attnTargetGroups workgroups or more, or the
// keys too few; else enough runs, each of at least attnMinSplitKeys keys,
// to come near attnTargetGroups, at most 64. The partial results then
// take nTokens*nHeads*splits*(headDim+2) float32 values. A decode step
// recorded once may keep the runs of the longest context it will meet:
// a run past a shorter sequence's keys costs a workgroup that writes m =
// -inf, which attn_combine skips.
func attnSplits(nTiles, nHeads, keys int, s attnShape) int {
	groups := nTiles * nHeads / int(s.HPW)
	if groups <= 0 || groups >= attnTargetGroups {
		return 1
	}
	return max(1, min((attnTargetGroups+groups-1)/groups, keys/attnMinSplitKeys, 64))
}
