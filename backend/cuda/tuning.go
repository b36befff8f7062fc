package cuda

import "fmt"

// Launch choices. Every figure in this file was measured on one GPU, an
// NVIDIA H200 (sm_90, 132 SMs, 227 KB of shared memory a block), in the
// sessions of 2026-11-29 to 2026-12-03, and no other GPU has been
// measured: the choices are the H200's on every device. What does depend
// on the device is computed where it is used, from what device.go reads
// of it: the persistent kernels' grids (the blocks resident at once, from
// the driver's occupancy, times the SMs: residentGrid), token tiles
// narrowed while a product has fewer blocks than SMs (mmQ8Tile), mmq's
// tiles within the shared memory a block may take (mmqTile), the
// attention's splits (by SMs: BatchRunner.nsplit, prefillSplits), and by
// compute capability the sm_90 features: programmatic dependent launch
// and the cluster attention (batchTuningFor).

// mvCfg chooses a matvec kernel: rows per warp, warps splitting a row
// (float path only), float activations (mvf_q8) or int16 activation
// planes with dp4a (mv_q8), and b3: the variant bounded to 3 blocks an SM
// (fewer registers: more warps' loads in flight, and grids of up to 3
// blocks an SM in one wave).
type mvCfg struct {
	rpw, ks int
	fl, b3  bool
}

// name returns the kernel's name for epilogue kind.
func (m mvCfg) name(kind string) string {
	b := ""
	if m.b3 {
		b = "_b3"
	}
	if m.fl {
		return fmt.Sprintf("mvf_q8_%s_r%d_k%d%s", kind, m.rpw, m.ks, b)
	}
	return fmt.Sprintf("mv_q8_%s_r%d%s", kind, m.rpw, b)
}

// mvKernelNames are the matvec kernels kernels/mmvq.cuh instantiates.
var mvKernelNames = map[string]bool{
	"mv_q8_argmax_r1": true, "mv_q8_argmax_r2": true, "mv_q8_argmax_r2_b3": true, "mv_q8_argmax_r4_b3": true,
	"mvf_q8_store_r1_k1": true, "mvf_q8_store_r1_k2": true, "mvf_q8_store_r2_k1": true, "mvf_q8_store_r2_k1_b3": true,
	"mvf_q8_add_r1_k1": true, "mvf_q8_add_r1_k1_b3": true, "mvf_q8_add_r1_k2": true, "mvf_q8_add_r1_k4": true,
	"mvf_q8_swiglu_r2_k1": true, "mvf_q8_swiglu_r2_k1_b3": true,
	"mvf_q8_argmax_r1_k1": true, "mvf_q8_argmax_r2_k1": true,
}

// smem is the dynamic shared memory for width K.
func (m mvCfg) smem(K int) int {
	if m.fl {
		return 4 * K
	}
	return 2*K + K/8
}

// tiles returns the number of row tiles over rows (the largest useful grid).
func (m mvCfg) tiles(kind string, rows int) int {
	units := (rows + m.rpw - 1) / m.rpw
	if gluKind(kind) {
		units = rows / 2
	}
	per := 8
	if m.fl {
		per = 8 / m.ks
	}
	return (units + per - 1) / per
}

// tuning holds a Model's launch choices: the matvec kernel of each matrix
// (the one-token decode graphs' products), the block formats' product
// tiles and the token counts at which the products change kernels. Load
// takes defaultTuning (and Options.tune, this package's tests' variants).
type tuning struct {
	// qkv, o, gu, down, head: the one-token matvecs (mvCfg; Q8_0's own
	// path: Q8_0 models of hidden size below 2,048). Synth 0.6B Q8_0,
	// `inferno bench -p 512 -n 128`: tg128 1,274 with head r2 and
	// gate/up, QKV without _b3; 1,378-1,380 with the head r4_b3 and
	// gate/up _b3; 1,386-1,387 with QKV _b3 too (the defaults); O and
	// down _b3 1,365, the head r2_b3 1,361, gate/up without _b3 1,316
	// (2026-12-02). Earlier (the single runner, 2026-11-29): QKV 2 rows a
	// warp +45 tok/s, O and down without split-K +30 to +40, the output
	// head on float activations no faster than dp4a's.
	qkv, o, gu, down, head mvCfg
	// q8h: the model's Q8_0 matrices run on the generic block kernels
	// (mvq_q8_0, mmh_q8_0: 8-bit activations like every other type)
	// rather than Q8_0's own (mvf_q8 on float activations, exactly the
	// CPU's inputs; mm_q8h): q8hFor, by the model's hidden size.
	q8h bool
	// h128: the fewest tokens a product of the block formats takes the
	// 128x128 mmh tiles for (fewer: 64x32, more blocks). 8B Q4_K_M,
	// `inferno bench -p 128 -n 64 --parallel 8,32,64,128` (2026-12-02):
	// from 33 tokens on, tg64 x64 2,456 and x128 4,633 tok/s; from 129 on,
	// 4,172 and 5,110 (x8 and x32 the same).
	h128 int
	mvn  int // the most tokens a product of the block formats takes mvqn for (0 to mvnMax; 0: never)
	// mmq: the most tokens a product of the block formats takes the int8
	// tensor-core tiles mmq for (more than mvn; 0: never, mmh instead);
	// mmq8 the same for Q8_0 (from mvnMax+1 tokens; fewer: mmv_q8), whose
	// rescale needs no sums. mq64: the fewest 64-row tiles of a matrix for
	// mmq's 64-row tiles (fewer rows: 32-row tiles, twice the blocks).
	// 8B, the batch runner's S_TG (2026-12-02): Q4_K_M at B = 16 1,888
	// tok/s on mmq against 1,420 on mmh, but 2,476 / 2,734 / 2,781
	// against 2,814 / 4,125 / 5,036 at B = 32 / 64 / 128 (before mmq2,
	// below); Q8_0 at B = 16 / 32 / 64 2,396 / 3,634 / 4,119 against 1,767
	// / 2,988 / 3,058 on mmv_q8, and at B = 128 7,421 on mmq2 (mmq8 128)
	// against 4,941 on mmh (mmq8 127; llama.cpp 5,556); mq64=0 (64-row
	// tiles for every matrix) 1,154 at B = 128.
	mmq, mmq8, mq64 int
	// mq2: 1 takes mmq2 (warps of 32 rows, each row's scales decoded once)
	// for mmq's products, 0 the first mmq (warps of 16 rows). mqn: the
	// most tokens of an mmq tile (16, 32, 64 or 128; more tokens take
	// several tiles). mqw: 1 takes mmq2's blocks of 16 warps for grids of
	// at most a block an SM. 8B Q4_K_M, S_TG at B = 16 / 32 / 64 / 128
	// (2026-12-02): 3,017 / 4,527 / 5,640 / 5,984 on mmq2 (mmq=128)
	// against 1,885 / 2,809 / 4,126 / 5,060 before (mmq 9-16 tokens, mmh
	// above); mqn=64 6,750 at B = 128; mqw=1 within 2% of mqw=0
	// everywhere; mvn=0 (mmq2 from 2 tokens) 1,668 at B = 8 against 945
	// on mvqn, left off: mmq2 is not tested against mvqn there.
	mq2, mqn, mqw int
	// mmn: the smallest token tile of Q8_0's own prompt product (64, 32
	// or 16): a product of fewer 64x64 tiles than SMs (a small model's O
	// and down: 16 row tiles) takes narrower ones (mmQ8Tile). Synth 0.6B
	// Q8_0 (2026-12-02): pp512 74,640 with 32-token tiles against 71,000
	// with 64 only; S_TG at B = 128 / 256 26,876 / 36,988 with tiles down
	// to 16 against 21,807 / 32,614.
	mmn int
	// mmh8: the fewest tokens Q8_0's own products take mm_q8h (qact_h's
	// f16 activations against the int8 weights turned f16 in the tile:
	// no per-block rescale) rather than mm_q8 (int16 activations as two
	// int8 planes, every block's sums rescaled); 0: never. mhw: the
	// widest token tile of mm_q8h whose warps take 16 rows each (_w4:
	// each weight turned f16 once) rather than 32 (0: none). Synth 0.6B
	// Q8_0 (2026-12-03): pp512 72,723 on mm_q8, 94,314 on mm_q8h's 32-row
	// warps, 101,165 with _w4 at every tile (93,555 up to 16-token tiles,
	// 98,711 up to 32); S_TG at B = 128 / 256 26,391 / 37,070 against
	// 33,025 / 46,074.
	mmh8, mhw int
	// hvn: the most tokens a product of F32, F16 or BF16 takes mvhn for
	// (0: never, mmw instead; half.go). Synth 0.6B F16 (2026-12-02): S_TG
	// at B = 8 3,361 with mvhn4 (a row pair over 4 warps) up to 16 tokens.
	hvn int
	// moeH: the fewest tokens of a step whose expert products take the
	// f16 tensor cores (mmhe) rather than moe_mvn. moeGate: the fewest
	// whose float router (moe_gate) runs a warp an expert, eight experts
	// a block, rather than four warps an expert, two a block: few tokens
	// spread the router's rows over many blocks (a decode step's read of
	// them is latency-bound), many fill the GPU anyway and a block
	// normalizes its token's row once for eight experts. 30B-A3B Q4_K_M
	// (2026-12-02): moeGate 32 pp512 8,554 and tg128 359.3, 1 (a warp an
	// expert always) 8,561 and 330.6, four warps always 8,002 and 359.4;
	// the tensor-core products from 8 tokens (moeH 8) 623.7 S_TG at B = 8
	// against 810.7.
	moeH, moeGate int
	// moeB: the most blocks an expert of moe_mvn and moe_mvnq (each block
	// loops over its share of the expert's tiles, the next tile's weights
	// loaded before the sums are reduced); 0: the blocks resident at once
	// shared by the step's chosen experts, at least moeBMin (moeBlocks); a
	// tile's count or more: a block a tile. moeNT: the most tokens of a
	// step whose expert products take pairs two at a time (moe_mvn2,
	// moe_mvnq2: fewer registers, more blocks an SM) rather than eight;
	// rows of 2,049 to 3,072 values take moe_mvn3 at every count below
	// moeH whatever moeNT (moeVariant).
	// 30B-A3B Q4_K_M, S_TG at B = 1 / 8 / 16 / 32 (2026-12-02): a block a
	// tile and eight pairs at a time 349 / 805 / 1,117 / 1,547; moeBMin 16
	// 379 / 984 / 1,483 / 1,547, 24 379 / 1,009 / 1,527 / 1,547, 32 379 /
	// 1,021 / 1,545 / 1,547, 48 379 / 1,017 / 1,534 / 1,547.
	moeB, moeBMin, moeNT int
}

// defaultTuning returns the Model's launch choices, the H200's (above) on
// every device; Load sets q8h for the model.
func defaultTuning() tuning {
	return tuning{
		qkv: mvCfg{2, 1, true, true}, o: mvCfg{1, 1, true, false}, gu: mvCfg{2, 1, true, true}, down: mvCfg{1, 1, true, false},
		head: mvCfg{4, 1, false, true}, h128: 129, mvn: mvnMax,
		mmq: 128, mmq8: 128, mq64: 256, mq2: 1, mqn: 64, mqw: 0, mmn: 16, mmh8: 1, mhw: 64, hvn: mvhnMax, moeH: 32, moeGate: 32,
		moeB: 0, moeBMin: 32, moeNT: 16,
	}
}

// check reports a tuning whose matvecs name a kernel that is not
// instantiated (mvKernelNames), or whose gate/up matvec does not take the
// 2 rows a warp its SwiGLU epilogue pairs.
func (t tuning) check() error {
	if t.gu.rpw != 2 {
		return fmt.Errorf("cuda: tuning: the gate/up matvec takes %d rows a warp, not 2 (a gate row and its up row)", t.gu.rpw)
	}
	for _, k := range t.mvKernels() {
		if !mvKernelNames[k.name] {
			return fmt.Errorf("cuda: tuning: no matvec kernel %s (mvKernelNames lists those instantiated)", k.name)
		}
	}
	return nil
}

// batchTuning holds a BatchRunner's launch choices; NewBatchRunner takes
// batchTuningFor its device (and Options.batchTune, this package's tests'
// variants). Synth 0.6B Q8_0 unless said otherwise; S_TG is the aggregate
// decode of B sequences after 128-token prompts, 128 steps.
type batchTuning struct {
	// mmMin: the fewest tokens a product takes mm_q8 (64x64 tiles) for,
	// rather than mmv_q8. S_TG at B = 64 / 128 / 256 and pp512
	// (2026-12-01): 15,959 / 21,634 / 32,726 and 71,192 at 128; mmv_q8
	// for every count 16,268 / 19,458 / 21,858 and 33,450; mm_q8 from 64
	// tokens 13,586 at B = 64.
	mmMin int
	// headMM: the same for the output head, whose 151,936 rows fill the
	// GPU with 64-token tiles at far fewer tokens. S_TG at B = 32 / 64
	// (2026-12-03): 14,756 / 20,440 from 32 tokens, 14,625 / 18,704 from
	// 128, 14,618 / 20,406 from 64; from 16 B = 16 lost 1%.
	headMM int
	// nt: the most 8-token n-tiles of an mmv_q8 pass (1, 2, 4 or 8). ny:
	// the most blocks a row tile of mmv_q8 takes for a matrix of fewer row
	// tiles than SMs (skinnyPasses; 1: one). 4 n-tiles a pass measured 3%
	// faster at B = 64 and the same elsewhere (2026-12-01, before ny).
	// S_TG at B = 16 / 32 / 64 (2026-12-02): ny 1 7,867 / 12,956 /
	// 16,047; 2 8,249 / 14,237 / 17,731; 4 8,254 / 14,646 / 18,722; 8
	// 8,193 / 14,530 / 18,568.
	nt, ny int
	// xl: mmv_q8 reads quant_actv's interleaved activations (mmv_q8x)
	// rather than quant_act's planes. S_TG at B = 8 / 64 (2026-12-01):
	// 4,565 / 15,959; on the planes 4,462 / 14,759.
	xl bool
	// zc: the most ints of a decode step's inputs its graph reads
	// zero-copy from page-locked host memory (bembed_step); larger ones
	// are copied first (0: always). tg128 (2026-12-02): 1,254.9 copied,
	// 1,228.7 with zc 128 (a lookahead step's tokens from the device).
	zc int
	// splitMul, dcap: the decode attention aims at splitMul*SMs blocks
	// (splits a token: that / (KV-head blocks x tokens)), at most dcap
	// blocks an SM for one token; minchunk: the fewest positions a split.
	// tg32 at depth 4,096 / 16,384 / 32,768 (2026-12-02): dcap 2 977 /
	// 696 / 517, dcap 1 950 / 591 / 417, dcap 3 and 4 (splitMul 3 and 4)
	// 982 and 988 at 4,096 but 614 and 634, 464 and 475 deeper; in a
	// later call 1,059 / 740 / 541, 16 splits (splitMul 1) 1,052 / 649 /
	// 445, minchunk 256 994 / 739 / 543.
	splitMul, dcap, minchunk int
	// psplit: pattn_pre's key-range splits (prefillSplits); 0 picks them
	// from the depth and the SMs, n forces n (1: none). pp512 at depth
	// 16,384 / 32,768 (2026-12-02): 30,245 / 19,544 picked (3 splits),
	// 17,389 / 9,939 with none, 29,118 / 19,056 with 6.
	psplit int
	// cb: decode graphs of at most cb tokens take the cluster attention
	// (pattn_decc: sm_90 only) while every sequence holds at most 8*cmax
	// positions (variantFor); 0: never. cmin: the fewest positions a
	// split of it. cmax: the positions a split up to which one cluster (8
	// splits) takes a sequence. c1: its graph variant launches one
	// cluster a token and KV head (it takes every sequence there). S_TG
	// at B = 1 / 2 / 4 / 8 (2026-12-01): 1,247.5 / 1,241.6 / 2,377 / 4,572
	// with cb 4; none 1,110 / 1,166 / 2,304 / 4,569; cb 2 2,306 at B = 4;
	// cb 8 4,324 at B = 8; cmin 64 1,206 at B = 1 (2,427 at B = 4); cmin
	// 16 with cmax 128 1,253 at B = 1, 2,306 at B = 4; c1 off 1,259
	// against 1,264.8 at B = 1.
	cb, cmin, cmax int
	c1             bool
	// pdl: the cluster attention is launched with programmatic dependent
	// launch (sm_90); mvpdl: with pdl, the one-token graphs' matvecs and
	// argmax too (and so the whole step after the embedding). S_TG at
	// B = 1 (2026-12-01): 1,247.5 with pdl, 1,238 without; 1,264.8 with
	// mvpdl, 1,248 without; after a 4,096-token prompt 1,008 against 981.
	pdl, mvpdl bool
}

// batchTuningFor returns the launch choices of a BatchRunner on g: the
// H200's (above) on every device, but the cluster attention and
// programmatic dependent launch only where g has them (compute capability
// 9.0 on: device.pdl).
func batchTuningFor(g *device) batchTuning {
	t := batchTuning{mmMin: 128, headMM: 32, nt: 8, ny: 4, xl: true, splitMul: 2, dcap: 2, minchunk: 128,
		cb: 4, cmin: 32, cmax: 64, c1: true, pdl: g.pdl, mvpdl: true}
	if g.CC < 90 {
		t.cb = 0
	}
	return t
}

// check reports a batch tuning the kernels or the scratch cannot take.
func (t batchTuning) check() error {
	if t.nt != 1 && t.nt != 2 && t.nt != 4 && t.nt != 8 || t.ny < 1 || t.splitMul < 1 || t.minchunk < 1 || t.mmMin < 1 || t.headMM < 1 || t.zc < 0 ||
		t.cb < 0 || t.cmin < 1 || t.cmax < 0 || t.dcap < 1 || t.dcap > 8 || t.psplit < 0 || t.psplit > maxPrefillSplits {
		return fmt.Errorf("cuda: batch tuning %+v: nt must be 1, 2, 4 or 8, ny, split, minchunk, mm, hmm and cmin at least 1, zc, cb and cmax at least 0, dcap 1 to 8, psplit 0 to %d", t, maxPrefillSplits)
	}
	return nil
}

type mvKernel struct {
	name string
	cfg  mvCfg
}

func (t tuning) mvKernels() []mvKernel {
	return []mvKernel{
		{t.qkv.name("store"), t.qkv}, {t.o.name("add"), t.o}, {t.gu.name("swiglu"), t.gu},
		{t.down.name("add"), t.down}, {t.head.name("argmax"), t.head},
	}
}

// mvGrid returns the blocks to launch of a matvec over rows: one per tile,
// at most as many as fit on the GPU at once (the kernel loops over tiles).
func (r *Model) mvGrid(m mvCfg, kind string, rows int) int {
	tiles := m.tiles(kind, rows)
	if n := r.grids[m.name(kind)]; n > 0 {
		return min(tiles, n)
	}
	return tiles
}

// attnFDSmem is the split-K decode attention's dynamic shared memory
// (pattn_dec, pattn_decf, pattn_decc, launched with ar 1, ast 3, at 256):
// at/32 warps x ast stages of a tile (2 x ar x 512/hd positions x hd f16
// values = 2 KB x ar).
func attnFDSmem(ar, ast, at int) int { return at / 32 * ast * 2048 * ar }

// mmQ8Tile returns mm_q8's kernel name suffix and token tile for n tokens
// over a matrix of mpad rows: 64-token tiles, halved (down to tune.mmn)
// while the blocks number fewer than the SMs.
func (r *Model) mmQ8Tile(n, mpad int) (string, int) {
	ntl := 64
	for ntl > r.tune.mmn && mpad/64*((n+ntl-1)/ntl) < r.dev.SMs {
		ntl /= 2
	}
	switch ntl {
	case 32:
		return "_n32", ntl
	case 16:
		return "_n16", ntl
	}
	return "", ntl
}

// mmQ8 enqueues mm_q8 (epilogue kind) for n tokens over a matrix of mpad
// rows, its token tile by mmQ8Tile; args are the kernel's (MM_ARGS).
func (r *Model) mmQ8(l *launcher, kind string, n, mpad int, args ...uint64) {
	suf, ntl := r.mmQ8Tile(n, mpad)
	l.launch("mm_q8_"+kind+suf, [3]uint32{uint32(mpad / 64), uint32((n + ntl - 1) / ntl)}, 128, 0, args...)
}

// mmQ8f reports whether Q8_0's own product of n tokens takes mm_q8h.
func (r *Model) mmQ8f(n int) bool { return r.tune.mmh8 > 0 && n >= r.tune.mmh8 }

// qactH enqueues qact_h: n rows of x (K values, K apart; rmsnorm*gain
// when gain is not 0) to f16 in xh, their per-token scales in hs, on the
// variant qactHKernel picks (the same halves and scales from each).
func (r *Model) qactH(l *launcher, x, gain uint64, K, n int, xh, hs uint64) {
	name, threads := qactHKernel(K, gain != 0)
	l.launch(name, [3]uint32{uint32(n)}, threads, 0, x, i32(K), i32(K), gain, f32(r.cfg.Eps), xh, hs)
}

// qactHKernel returns the qact_h variant for rows of K values (normalized
// or not) and its block size: each reads a row once where it fits its
// registers (qact_h up to 4,096 values, qact_h32 up to 8,192, qact_hw up to
// 32,768 without a norm, K a multiple of 4); longer rows take qact_h's
// three reads.
func qactHKernel(K int, norm bool) (string, uint32) {
	switch {
	case K <= 4096:
		return "qact_h", 256
	case K <= 8192:
		return "qact_h32", 256
	case !norm && K%4 == 0 && K <= qactHWMost:
		return "qact_hw", 1024
	}
	return "qact_h", 256
}

// qactHWMost is the longest row qact_hw takes (its QHW_J*4*1024).
const qactHWMost = 8 * 4 * 1024

// mmQ8h enqueues mm_q8h (epilogue kind, mm_q8's tiles) for n tokens of
// qact_h's activations (xh, hs) over w's Q8_0 rows.
func (r *Model) mmQ8h(l *launcher, kind string, w *gpuWeight, xh, hs, y uint64, ldy, nout, n int) {
	suf, ntl := r.mmQ8Tile(n, w.mpad)
	if ntl <= r.tune.mhw {
		suf += "_w4"
	}
	l.launch("mm_q8h_"+kind+suf, [3]uint32{uint32(w.mpad / 64), uint32((n + ntl - 1) / ntl)}, 128, 0,
		w.q, w.dcol, i32(w.rows), i32(w.mpad), i32(w.cols), xh, hs, i32(n), y, i32(ldy), i32(nout))
}
