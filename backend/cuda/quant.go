package cuda

// The CUDA backend's one table of weight formats (its half of ggml's
// type_traits): per block type, how a matrix is laid out on the GPU and
// which kernels multiply it. Q8_0 keeps its own layout and kernels (int8
// values and f16 scales, mvf_q8 / mmv_q8 / mm_q8, weights.go); every other
// type is re-laid into bit planes (quant_pack.go, kernels/formats.cuh) and
// multiplied by mvq_<type>_r2 (decode), mvqn_<type>_t4/_t8 (up to 8
// tokens), mmq_<type>_m<rows>_n<tokens> (int8 tensor cores; Q8_0 up to
// 127 tokens, the others up to 16: mmqMost) and mmh_<type>_b32/_b128
// (more, f16 tensor cores). Nothing is dequantized in memory.

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"inferno/backend"
	"inferno/gguf"
)

// qformat registers one block type.
type qformat struct {
	t      gguf.TensorType
	name   string // kernel suffix (q4_k)
	qk     int    // values per block
	bytes  int    // bytes per block in the file
	lo, hi int    // bits per value in the lo and hi planes
	m0, m1 int    // bytes per block of the scale planes m0 and m1
	// unpack reads one block of the file: its quants Q (qk of them, the
	// unsigned integer each value is computed from; Q8_0: the int8 bits)
	// and its scale bytes for the planes m0 and m1.
	unpack func(blk []byte, q []uint8, m0, m1 []byte)
	// kernels: decode matrix-vector (B = 1), skinny batches (up to 32
	// tokens) and prefill (matrix-matrix, more tokens).
	mv, mmSkinny, mmPrefill string
	// the decode matvec on the planes against int8 activations (the same
	// as mv but for Q8_0, whose own mvf_q8 takes float activations), and
	// its variants for up to 4 and 8 tokens (mvqn: small batches)
	mvq, mvn4, mvn8 string
	// the f16 tensor-core kernels of the type (the same as mmSkinny and
	// mmPrefill but for Q8_0, whose own are mmv_q8 and mm_q8)
	hSkinny, hPrefill string
	// float: F32, F16 or BF16, uploaded as in the file (half.go): mv, mvq
	// name mvh_<type>, mvn4 and mvn8 mvhn_<type>, the tensor-core kernels
	// mmw_<type>_b32 and _b128.
	float bool
}

// qformats is the table, in type order. Q8_0's entry names its own
// kernels (weights.go's layout); its planes view that layout (lo = the
// int8 values, m0 = the row-major scales) for the generic kernels
// (embedding; mmh_q8_0 for the prompts of larger models: q8hFor).
var qformats = []*qformat{
	{t: gguf.TensorF32, name: "f32", qk: 1, bytes: 4, float: true},
	{t: gguf.TensorF16, name: "f16", qk: 1, bytes: 2, float: true},
	{t: gguf.TensorQ4_0, name: "q4_0", qk: 32, bytes: 18, lo: 4, m0: 2, unpack: unpackQ4_0},
	{t: gguf.TensorQ4_1, name: "q4_1", qk: 32, bytes: 20, lo: 4, m0: 4, unpack: unpackQ4_1},
	{t: gguf.TensorQ5_0, name: "q5_0", qk: 32, bytes: 22, lo: 4, hi: 1, m0: 2, unpack: unpackQ5_0},
	{t: gguf.TensorQ5_1, name: "q5_1", qk: 32, bytes: 24, lo: 4, hi: 1, m0: 4, unpack: unpackQ5_1},
	{t: gguf.TensorQ8_0, name: "q8_0", qk: 32, bytes: 34, lo: 8, m0: 2, unpack: unpackQ8_0,
		mv: "mvf_q8", mmSkinny: "mmv_q8", mmPrefill: "mm_q8"},
	{t: gguf.TensorQ2_K, name: "q2_k", qk: 256, bytes: 84, lo: 2, m0: 16, m1: 4, unpack: unpackQ2_K},
	{t: gguf.TensorQ3_K, name: "q3_k", qk: 256, bytes: 110, lo: 2, hi: 1, m0: 16, unpack: unpackQ3_K},
	{t: gguf.TensorQ4_K, name: "q4_k", qk: 256, bytes: 144, lo: 4, m0: 16, unpack: unpackQ4_K},
	{t: gguf.TensorQ5_K, name: "q5_k", qk: 256, bytes: 176, lo: 4, hi: 1, m0: 16, unpack: unpackQ5_K},
	{t: gguf.TensorQ6_K, name: "q6_k", qk: 256, bytes: 210, lo: 4, hi: 2, m0: 16, m1: 2, unpack: unpackQ6_K},
	{t: gguf.TensorIQ4_NL, name: "iq4_nl", qk: 32, bytes: 18, lo: 4, m0: 2, unpack: unpackIQ4_NL},
	{t: gguf.TensorIQ4_XS, name: "iq4_xs", qk: 256, bytes: 136, lo: 4, m0: 8, unpack: unpackIQ4_XS},
	{t: gguf.TensorBF16, name: "bf16", qk: 1, bytes: 2, float: true},
	{t: gguf.TensorMXFP4, name: "mxfp4", qk: 32, bytes: 17, lo: 4, m0: 1, unpack: unpackMXFP4},
}

func init() {
	for _, f := range qformats {
		if f.qk != f.t.BlockSize() || f.bytes != f.t.BlockBytes() {
			panic(fmt.Sprintf("cuda: the %s entry's block (%d values, %d bytes) is not gguf's", f.t, f.qk, f.bytes))
		}
		f.hSkinny, f.hPrefill, f.mvq = "mmh_"+f.name+"_b32", "mmh_"+f.name+"_b128", "mvq_"+f.name+"_r2"
		f.mvn4, f.mvn8 = "mvqn_"+f.name+"_t4", "mvqn_"+f.name+"_t8"
		if f.float {
			f.hSkinny, f.hPrefill, f.mvq = "mmw_"+f.name+"_b32", "mmw_"+f.name+"_b128", "mvh_"+f.name
			f.mvn4, f.mvn8 = "mvhn_"+f.name, "mvhn_"+f.name
		}
		if f.mv == "" {
			f.mv, f.mmSkinny, f.mmPrefill = f.mvq, f.hSkinny, f.hPrefill
		}
	}
}

// formatOf returns t's entry, or nil.
func formatOf(t gguf.TensorType) *qformat {
	for _, f := range qformats {
		if f.t == t {
			return f
		}
	}
	return nil
}

// Supports reports whether the CUDA backend multiplies weight matrices of
// type t (norms are float32 vectors and always supported).
func Supports(t gguf.TensorType) bool { return formatOf(t) != nil }

// Epilogues of the matrix kernels (kernels/common.cuh's EP_*): the gated
// activations only in the kernels that take their epilogue at run time
// (Q8_0's own are instantiated for SwiGLU: options.go).
const (
	epStore     = 0
	epAdd       = 1
	epSwiGLU    = 2
	epArgmax    = 3
	epGeGLU     = 4
	epSwiGLUOAI = 5
)

func epOf(kind string) int {
	switch kind {
	case "add":
		return epAdd
	case "swiglu":
		return epSwiGLU
	case "geglu":
		return epGeGLU
	case "swiglu_oai":
		return epSwiGLUOAI
	case "argmax":
		return epArgmax
	}
	return epStore
}

// checkWeight checks that w can be uploaded.
func checkWeight(w *backend.Weight) error {
	if w == nil {
		return fmt.Errorf("cuda: missing weight")
	}
	f := formatOf(w.Type)
	if f == nil {
		return fmt.Errorf("cuda: tensor %s is %s, which the CUDA backend does not multiply (it takes F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K, IQ4_NL, IQ4_XS and MXFP4; quantize the model, e.g. inferno quantize IN OUT --type Q8_0, or use a CPU backend)", w.Name, w.Type)
	}
	if f.float && w.Cols%32 != 0 {
		return fmt.Errorf("cuda: tensor %s has %d columns, not a multiple of 32 (the CUDA backend's %s kernels read rows in chunks of 32 values)", w.Name, w.Cols, w.Type)
	}
	if w.Cols%f.qk != 0 {
		return fmt.Errorf("cuda: tensor %s has %d columns, not a multiple of %s's block of %d", w.Name, w.Cols, w.Type, f.qk)
	}
	return nil
}

// checkKernels checks, before anything is uploaded, that the device's
// kernel image has the kernels of every block type among the model's
// matrices (a type's decode matvec standing for all of them): an image
// built before a type's kernels were written (MXFP4's, until build_ptx.sh
// runs on them) lacks them, and the model is refused in one line naming a
// tensor and its type, not at a launch (nor with NaN embeddings).
func (r *Model) checkKernels() error {
	seen := map[gguf.TensorType]bool{}
	for _, w := range r.m.Tensors().Matrices() {
		if w == nil || seen[w.Type] {
			continue
		}
		seen[w.Type] = true
		f := formatOf(w.Type)
		if f == nil || f.float {
			continue // checkWeight's, at the upload
		}
		if _, err := r.dev.fn(f.mvq); err != nil {
			return fmt.Errorf("cuda: tensor %s is %s, whose kernels (%s, ...) this build's kernel image lacks: rebuild the images (backend/cuda/build_ptx.sh) or use a CPU backend", w.Name, w.Type, f.mvq)
		}
	}
	return nil
}

// A quantSeg is a run of rows of one type among weights stacked row-wise
// (Q, K and V): each run becomes a matrix of its own, the runs chained by
// gpuWeight.next (kernels run once per run, writing at its row offset).
type quantSeg struct {
	t          gguf.TensorType
	rows, row0 int
	n          int64 // file bytes
}

// mvqSmem is mvq's dynamic shared memory for width K: the int8
// activations, the block scales (an even count) and the sums of 16.
func mvqSmem(K int) int { return K + 4*roundUp(K/32, 2) + K/4 }

// mmhSmem is mmh's dynamic shared memory for the b128 and b32 tiles: two
// buffers of BM weight rows and BN tokens of BK+8 halves.
func mmhSmem(b128 bool) int {
	if b128 {
		return 2 * (128 + 128) * (64 + 8) * 2
	}
	return 2 * (64 + 32) * (128 + 8) * 2
}

// mmheTile is a tile of the grouped products (mmh.cuh's mmhe): the
// kernel's suffix, its rows (BM) and pairs (BN, a multiple of moeTile).
type mmheTile struct {
	suffix string
	bm, bn int
}

// mmheTiles are mmhe's tiles: mmh's b32 (64 rows, one tile of moeTile
// pairs), and 128 rows by 64 or 96 pairs (BN/moeTile of moe_group's
// tiles a block), which dequantize an expert's weights once for more
// pairs. (128 by 128 spills on sm_90 with two sets of prefetched
// weights.)
var mmheTiles = []mmheTile{{"", 64, 32}, {"_n64", 128, 64}, {"_n96", 128, 96}}

// smem is the tile's dynamic shared memory: two buffers of BM weight rows
// and BN pairs of BK+8 halves, BK = 8192/BM.
func (t mmheTile) smem() int { return 2 * (t.bm + t.bn) * (8192/t.bm + 8) * 2 }

// mmheFor returns mmhe's tile for pairs (token, expert) pairs over at most
// chosen experts, by the mean pairs an expert: a block's weights are
// loaded and dequantized whatever its pairs, and the wider tiles skip the
// mma of their empty columns, so the tile is the one that holds most
// experts' pairs at once (random routing spreads them by about the
// square root of the mean), the wider one from 56. Qwen3-30B-A3B's
// prompts of 512 tokens (128 experts, 8 a token: 32 an expert) keep
// mmh's b32 tile; gpt-oss-20b's (32 experts, 4 a token: 64) take 96
// pairs, most experts one tile.
func mmheFor(pairs, chosen int) mmheTile {
	switch a := pairs / max(1, chosen); {
	case a < 40:
		return mmheTiles[0]
	case a < 56:
		return mmheTiles[1]
	}
	return mmheTiles[2]
}

// quantSetup prepares the kernels of every type the model's matrices use:
// shared memory limits, and mvq's persistent grids (r.grids).
func (r *Model) quantSetup() error {
	c := &r.cfg
	g := r.dev
	maxK := max(c.Hidden, c.QDim(), c.FFN)
	seen := map[gguf.TensorType]bool{}
	var walk func(w *gpuWeight)
	walk = func(w *gpuWeight) {
		for ; w != nil; w = w.next {
			seen[w.typ] = true
		}
	}
	walk(&r.embed)
	walk(&r.out)
	for i := range r.layers {
		for _, w := range r.layers[i].mats() {
			walk(w)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(seen)) { // errors in a stable order
		f := formatOf(t)
		if f == nil {
			return fmt.Errorf("cuda: no kernels for %s", t)
		}
		if r.ownQ8(t) {
			continue
		}
		if f.float {
			if err := r.floatSetup(f, maxK); err != nil {
				return err
			}
			continue
		}
		type kern struct {
			name string
			smem int
		}
		ks := []kern{{f.hSkinny, mmhSmem(false)}, {f.hPrefill, mmhSmem(true)}}
		for _, k := range mmqKerns() {
			// Tiles past the GPU's shared memory (sm_80: 163 KB a block,
			// sm_86 and sm_89: 99 KB) are never launched there (mmqTile).
			if sm := k.smem(f); sm <= g.SmemOptin {
				ks = append(ks, kern{k.name(f), sm})
			}
		}
		for _, k := range ks {
			fn, err := g.fn(k.name)
			if err != nil {
				return err
			}
			if err := g.allowSmem(fn, k.name, k.smem); err != nil {
				return err
			}
		}
		if err := r.residentGrid(f.hPrefill, mmhSmem(true)); err != nil { // mmhSplits' slots
			return err
		}
		r.mmhTiles = true
		mv := f.mvq
		fn, err := g.fn(mv)
		if err != nil {
			return err
		}
		if err := g.allowSmem(fn, mv, mvqSmem(maxK)); err != nil {
			return err
		}
		if err := r.residentGrid(mv, mvqSmem(maxK)); err != nil {
			return err
		}
		for _, name := range []string{f.mvn4, f.mvn8} {
			if err := r.residentGrid(name, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// mvnMax is the most tokens a product of the block formats takes mvqn for
// (one weight pass for all of them, against int8 activations; tune.mvn);
// more take the f16 tensor-core tiles (mmh).
const mvnMax = 8

// mvnName returns the mvqn kernel of f for n tokens (n <= mvnMax).
func (f *qformat) mvnName(n int) string {
	if n <= 4 {
		return f.mvn4
	}
	return f.mvn8
}

// persistentGrid returns the blocks of a persistent launch over rows (8
// row pairs a tile): the tiles spread evenly over at most most blocks.
func persistentGrid(rows, most int) int {
	tiles := max(1, (rows+15)/16)
	if most <= 0 {
		return tiles
	}
	per := (tiles + most - 1) / most
	return (tiles + per - 1) / per
}

// ownQ8 reports whether matrices of type t run on Q8_0's own kernels
// (mvf_q8, mmv_q8, mm_q8) rather than on the generic block kernels: Q8_0
// in models below q8hFor's size.
func (r *Model) ownQ8(t gguf.TensorType) bool { return t == gguf.TensorQ8_0 && !r.tune.q8h }

// mvqGrid returns the blocks of an mvq launch over rows: the tiles (8 row
// pairs each) spread evenly over at most the blocks that fit at once.
func (r *Model) mvqGrid(f *qformat, rows int) int { return persistentGrid(rows, r.grids[f.mvq]) }

// headGrid returns the blocks of the decode output head's matvec (and so
// the argmax partials).
func (r *Model) headGrid() int {
	if !r.ownQ8(r.out.typ) {
		return r.mvqGrid(formatOf(r.out.typ), r.out.rows)
	}
	return r.mvGrid(r.tune.head, "argmax", r.cfg.Vocab)
}

// mv enqueues a decode matvec over every run of w: mvf_q8/mv_q8 (m) for
// Q8_0 runs, mvq for the others; a run's outputs start at its row offset.
func (r *Model) mv(l *launcher, kind string, m mvCfg, w *gpuWeight, x, gain, y uint64, nout int, pval, pidx uint64) {
	if kind == "argmax" && w.next != nil {
		// The runs would write their argmax partials over each other's
		// (and their row numbers from 0): the head is one matrix of one
		// type (uploadConcat makes runs, of QKV only).
		if l.err == nil {
			l.err = errors.New("cuda: the argmax of a matrix of several runs")
		}
		return
	}
	for s := w; s != nil; s = s.next {
		ys := y + uint64(4*s.row0)
		if r.ownQ8(s.typ) {
			l.launch(m.name(kind), [3]uint32{uint32(r.mvGrid(m, kind, s.rows))}, 256, uint32(m.smem(s.cols)),
				s.q, s.drow, i32(s.rows), i32(s.cols), x, gain, f32(r.cfg.Eps), ys, i32(nout), pval, pidx)
			continue
		}
		f := formatOf(s.typ)
		if f.float {
			r.mvFloat(l, kind, s, x, gain, ys, nout, pval, pidx)
			continue
		}
		l.launch(f.mvq, [3]uint32{uint32(r.mvqGrid(f, s.rows))}, 256, uint32(mvqSmem(s.cols)),
			s.lo, s.hi, s.m0, s.m1, i32(s.rows), i32(s.cols), x, gain, f32(r.cfg.Eps), ys, i32(nout), pval, pidx, i32(epOf(kind)))
	}
}

// actBufs are the activation buffers a matrix product may use: the int16
// planes and block scales of quant_act (Q8_0), and the f16 activations and
// per-token scales of qact_h (xh holds npad*K halves; it may be hi: the
// two are never needed at once).
type actBufs struct {
	hi, lo, sx uint64
	xh, hs     uint64
	ws, cnt    uint64 // mmh's split workspace and counts (0: no splits)
	npad       int
}

// product enqueues Y = W * rmsnorm(x)*gain (or W * x when gain is 0) for n
// tokens (rows of x, w.cols apart) over every run of w: qact_h and mm_q8h
// for Q8_0 runs (quant_act and mm_q8 below tune.mmh8 tokens; the others'
// kernels for q8h models); for the others qact8 and mvqn up to
// tune.mvn tokens, mmq up to mmqMost (K a multiple of 256), else qact_h
// and mmh (b32 tiles below tune.h128 tokens, b128 from there on).
// Epilogues as the kernels' (kind); a run's outputs start at its row
// offset.
func (r *Model) product(l *launcher, kind string, w *gpuWeight, x, gain, y uint64, ldy, nout, n int, b actBufs) {
	eps := f32(r.cfg.Eps)
	K := w.cols
	have := "" // the activations computed last: "q8", "8" or "h"
	for s := w; s != nil; s = s.next {
		ys := y + uint64(4*s.row0)
		if formatOf(s.typ).float {
			have = r.productFloat(l, kind, s, x, gain, ys, ldy, nout, n, b, have)
			continue
		}
		if n <= r.tune.mvn && !r.ownQ8(s.typ) {
			// Small batches: qact8's int8 activations (xq in hi, the
			// scales in sx, the sums of 16 in lo) and one weight pass.
			if have != "8" {
				l.launch("qact8", [3]uint32{uint32(n)}, 256, 0, x, i32(K), i32(K), gain, eps, b.hi, b.sx, b.lo)
				have = "8"
			}
			f := formatOf(s.typ)
			name := f.mvnName(n)
			l.launch(name, [3]uint32{uint32(persistentGrid(s.rows, r.grids[name]))}, 256, 0,
				s.lo, s.hi, s.m0, s.m1, i32(s.rows), i32(K), b.hi, b.sx, b.lo, i32(n), ys, i32(ldy), i32(nout), i32(epOf(kind)))
			continue
		}
		if mk, ok := r.mmqTile(formatOf(s.typ), s.mpad, K, n); ok && n <= r.mmqMost(s.typ) && K%256 == 0 && !r.ownQ8(s.typ) {
			// Batches: the same activations against int8 tensor-core tiles.
			if have != "8" {
				l.launch("qact8", [3]uint32{uint32(n)}, 256, 0, x, i32(K), i32(K), gain, eps, b.hi, b.sx, b.lo)
				have = "8"
			}
			r.mmq(l, kind, s, mk, b.hi, b.sx, b.lo, ys, ldy, nout, n)
			continue
		}
		if r.ownQ8(s.typ) && !r.mmQ8f(n) {
			if have != "q8" {
				l.launch("quant_act", [3]uint32{uint32(n)}, 256, 0, x, i32(K), i32(K), gain, eps, b.hi, b.lo, b.sx, i32(b.npad))
				have = "q8"
			}
			r.mmQ8(l, kind, n, s.mpad,
				s.q, s.dcol, i32(s.rows), i32(s.mpad), i32(s.cols), b.hi, b.lo, b.sx, i32(n), i32(b.npad), ys, i32(ldy), i32(nout))
			continue
		}
		if have != "h" {
			r.qactH(l, x, gain, K, n, b.xh, b.hs)
			have = "h"
		}
		if r.ownQ8(s.typ) {
			r.mmQ8h(l, kind, s, b.xh, b.hs, ys, ldy, nout, n)
			continue
		}
		r.mmh(l, kind, s, b, ys, ldy, nout, n)
	}
}

// mmqMost is the most tokens a product of type t takes mmq for.
func (r *Model) mmqMost(t gguf.TensorType) int {
	if t == gguf.TensorQ8_0 {
		return r.tune.mmq8
	}
	return r.tune.mmq
}

// mmqTiles are mmq's and mmq2's tiles (rows, tokens), kernels/mmq.cuh's
// MMQ_INST (one template for both); mmq2's tiles of 32 rows and up
// to 64 tokens also come with two teams of 8 warps (_w16).
var mmqTiles = [][2]int{{32, 16}, {32, 32}, {32, 64}, {32, 128}, {64, 64}, {64, 128}}

// mmqKern is one mmq kernel of a type: mmq2's (v2) or mmq's, its tile of
// bm rows by bn tokens, and for mmq2 two teams of 8 warps (w16).
type mmqKern struct {
	v2, w16 bool
	bm, bn  int
}

// mmqKerns lists every mmq kernel of a type.
func mmqKerns() []mmqKern {
	var ks []mmqKern
	for _, v2 := range []bool{false, true} {
		for _, t := range mmqTiles {
			ks = append(ks, mmqKern{v2: v2, bm: t[0], bn: t[1]})
			if v2 && t[0] == 32 && t[1] <= 64 {
				ks = append(ks, mmqKern{v2: true, w16: true, bm: t[0], bn: t[1]})
			}
		}
	}
	return ks
}

// name is k's kernel name for f.
func (k mmqKern) name(f *qformat) string {
	switch {
	case k.w16:
		return fmt.Sprintf("mmq2_%s_m%d_n%d_w16", f.name, k.bm, k.bn)
	case k.v2:
		return fmt.Sprintf("mmq2_%s_m%d_n%d", f.name, k.bm, k.bn)
	}
	return fmt.Sprintf("mmq_%s_m%d_n%d", f.name, k.bm, k.bn)
}

// threads is k's block size.
func (k mmqKern) threads() int {
	if k.w16 {
		return 512
	}
	return 256
}

// smem is k's dynamic shared memory for f: NS stages (mmq: 4, 3 of 128
// tokens; mmq2: 4, 3 from 64 tokens; a team's each) of bm weight rows
// (mmqRow) and bn tokens (272 bytes of quants; mmq: 32 of scales and 64 of
// sums; mmq2: 48 and 80, kernels/mmq.cuh's mqv).
func (k mmqKern) smem(f *qformat) int {
	if k.v2 {
		ns, teams := 4, 1
		if k.bn >= 64 {
			ns = 3
		}
		if k.w16 {
			teams = 2
		}
		return teams * ns * (k.bm*f.mmqRow() + k.bn*(272+48+80))
	}
	ns := 4
	if k.bn >= 128 {
		ns = 3
	}
	return ns * (k.bm*f.mmqRow() + k.bn*(272+32+64))
}

// red is the shared memory of k's partial sums: every warp's
// accumulators (4 floats a lane of each m16n8 tile: bn/8 token tiles of
// one m-tile a warp in mmq, two in mmq2), kernels/mmq.cuh's reduction.
func (k mmqKern) red() int {
	warps, mt := 8, 1
	if k.w16 {
		warps = 16
	}
	if k.v2 {
		mt = 2
	}
	return warps * mt * (k.bn / 8) * 4 * 32 * 4
}

// mmqRow is the shared memory of a weight row's stage in mmq (256 values;
// kernels/mmq.cuh's mqw): the planes' bytes (m0 in multiples of 16
// bytes, m1 in 16), an odd number of 16-byte chunks.
func (f *qformat) mmqRow() int {
	n := 32*(f.lo+f.hi) + roundUp(f.m0*256/f.qk, 16)
	if f.m1 > 0 {
		n += 16
	}
	if n/16%2 == 0 {
		n += 16
	}
	return n
}

// mmqTile returns f's mmq kernel for n tokens over mpad rows and K
// columns: the fewest tokens of 16, 32, 64 or 128 (at most tune.mqn) that
// hold n (several tiles past it), 64 rows from tune.mq64 tiles of 64 on and
// 64 or more tokens, else 32 rows; mmq2's when tune.mq2 is 1, with two
// teams of 8 warps (w16) for tune.mqw and grids of at most a block an SM
// (K a multiple of 512); and whether the GPU's shared memory holds it (if
// not, mmh multiplies).
func (r *Model) mmqTile(f *qformat, mpad, K, n int) (mmqKern, bool) {
	k := mmqKern{v2: r.tune.mq2 == 1, bm: 32, bn: 16}
	most := 128
	if r.tune.mqn >= 16 {
		most = r.tune.mqn
	}
	for k.bn < n && k.bn < most {
		k.bn *= 2
	}
	if big := (mmqKern{v2: k.v2, bm: 64, bn: k.bn}); k.bn >= 64 && mpad/64 >= r.tune.mq64 && big.smem(f) <= r.dev.SmemOptin {
		k = big
	}
	blocks := (mpad + k.bm - 1) / k.bm * ((n + k.bn - 1) / k.bn)
	if w := (mmqKern{v2: true, w16: true, bm: 32, bn: k.bn}); k.v2 && k.bm == 32 && k.bn <= 64 && r.tune.mqw == 1 &&
		K%512 == 0 && blocks <= r.dev.SMs && w.smem(f) <= r.dev.SmemOptin {
		k = w
	}
	return k, k.smem(f) <= r.dev.SmemOptin
}

// mmq enqueues one run's int8 tensor-core product over qact8's
// activations (xq, per-32 scales xs and sums of 16 xsum) with kernel k.
func (r *Model) mmq(l *launcher, kind string, s *gpuWeight, k mmqKern, xq, xs, xsum, y uint64, ldy, nout, n int) {
	f := formatOf(s.typ)
	l.launch(k.name(f), [3]uint32{uint32((s.mpad + k.bm - 1) / k.bm), uint32((n + k.bn - 1) / k.bn)}, uint32(k.threads()), uint32(k.smem(f)),
		s.lo, s.hi, s.m0, s.m1, i32(s.rows), i32(s.mpad), i32(s.cols), xq, xs, xsum, i32(n), y, i32(ldy), i32(nout), i32(epOf(kind)))
}

// mmh enqueues one run's f16 tensor-core product over qact_h's
// activations; b128 tiles cut K into mmhSplits runs when their grid is
// small (b.ws and b.cnt: the split workspace and counts).
func (r *Model) mmh(l *launcher, kind string, s *gpuWeight, b actBufs, y uint64, ldy, nout, n int) {
	f := formatOf(s.typ)
	// b32's arguments, then b128's three more: an array, so that no launch
	// allocates (an append past the 14 would).
	args := [...]uint64{s.lo, s.hi, s.m0, s.m1, i32(s.rows), i32(s.mpad), i32(s.cols), b.xh, b.hs, i32(n), y, i32(ldy), i32(nout), i32(epOf(kind)), b.ws, b.cnt, 0}
	if n < r.tune.h128 {
		l.launch(f.hSkinny, [3]uint32{uint32((s.mpad + 63) / 64), uint32((n + 31) / 32)}, 256, uint32(mmhSmem(false)), args[:14]...)
		return
	}
	gx, gy := (s.mpad+127)/128, (n+127)/128
	splits := 1
	if b.ws != 0 {
		splits = mmhSplits(gx*gy, r.grids[f.hPrefill], (s.cols+63)/64)
	}
	args[16] = i32(splits)
	l.launch(f.hPrefill, [3]uint32{uint32(gx), uint32(gy), uint32(splits)}, 256, uint32(mmhSmem(true)), args[:]...)
}

// mmhSplitBytes is the workspace a block of a split b128 product stores its
// accumulators in (128 x 128 floats); mmhSplitMost the most blocks of one
// split product (the workspace holds that many, the counts as many tiles).
const (
	mmhSplitBytes = 128 * 128 * 4
	mmhSplitMost  = 1024
)

// mmhSplits returns into how many runs of its nk stages of K a b128 product
// of tiles blocks is cut (mmh_split), slots of which are resident on the
// GPU at once: a grid that leaves slots idle and whose blocks run at least
// mmhSplitStages stages gets more, shorter blocks where the rounds of
// resident blocks take 10% less time in all, at least 8 stages a split, at
// most 8 splits and mmhSplitMost blocks. The time, in stages: s*tiles
// blocks in rounds of slots, each block nk/s stages and about 2 more (its
// first loads, its partial sums stored), and the tile's last block reading
// the s partial sums back (about a stage each). The exchange costs more
// than that on an H100 (30 to 40 us a product whatever its size, below):
// mmhSplitStages keeps the products it would not pay for whole.
func mmhSplits(tiles, slots, nk int) int {
	cost := func(s int) float64 {
		rounds := (s*tiles + slots - 1) / slots
		return float64(rounds)*(float64(nk)/float64(s)+2) + float64(s)
	}
	if slots <= 0 || tiles >= slots || nk < mmhSplitStages {
		return 1
	}
	best, bc := 1, cost(1)
	for s := 2; s <= 8 && s*tiles <= mmhSplitMost && nk >= 8*s; s++ {
		if c := cost(s); c < 0.9*bc {
			best, bc = s, c
		}
	}
	return best
}

// mmhSplitStages is the fewest stages of K (64 values each: K of 8,192) a
// product must have to be split. Shorter products lose more to the
// exchange of partial sums than the idle slots cost them: on an H100
// (BenchmarkMMHSplit, 512 tokens, Q4_K; 2026-12-07) Qwen3-8B's O (4,096
// rows, K 4,096) took 83 us whole and 117 in two splits, 30B-A3B's QKV
// (K 2,048) 67 and 100, while Mistral Small's down (K 32,768) took 988
// whole and 722 in three. pp512 in one call, the same build with and
// without this bound: 8B 12,557-12,595 against 13,691-13,700 tok/s,
// 30B-A3B (8 layers) 55,951-56,409 against 63,185-63,571, Mistral Small
// 4,701-4,727 against 4,747-4,760.
const mmhSplitStages = 128

// allQ8 reports whether every run of w is Q8_0 (its own kernels apply).
func (w *gpuWeight) allQ8() bool {
	for s := w; s != nil; s = s.next {
		if s.typ != gguf.TensorQ8_0 {
			return false
		}
	}
	return true
}

// embedKernel returns the embedding kernel for base (embed_q8,
// bembed_step or bembed_dec) and its leading arguments, the
// weight's: Q8_0's own kernels, or the generic ones (qembed...) for any type.
func (w *gpuWeight) embedKernel(base string) (string, []uint64) {
	if w.typ == gguf.TensorQ8_0 {
		return base, []uint64{w.q, w.drow}
	}
	name := map[string]string{"embed_q8": "qembed", "bembed_step": "qbembed_step", "bembed_dec": "qbembed_dec"}[base]
	return name, []uint64{w.lo, w.hi, w.m0, w.m1, i32(int(w.typ))}
}
