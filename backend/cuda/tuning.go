package cuda

import (
	"fmt"
	"strconv"
	"strings"
)

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

// mvKernelNames are the matvec kernels kernels/mv_q8.cuh instantiates.
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
	if kind == "swiglu" {
		units = rows / 2
	}
	per := 8
	if m.fl {
		per = 8 / m.ks
	}
	return (units + per - 1) / per
}

// tuning holds launch choices: the matvec kernel of each matrix (the
// one-token decode graphs' products), the block formats' product tiles,
// and the shared memory carveout. INFERNO_CUDA_TUNE overrides them, e.g.
// "qkv=2,qkvk=1,qkvb=3,o=1,ok=4,down=1,downk=4,gu=2,guk=1,head=2,headf=0,headb=0"
// (X=rows per warp, Xk=warps per row, Xf=float activations, Xb=3 the
// variant of 3 blocks an SM, 0 the other; mvKernelNames lists the kernels
// that exist).
type tuning struct {
	qkv, o, gu, down, head mvCfg
	carveout               int // shared memory carveout percent of the matvecs; -1: the driver's choice
	// h128: the fewest tokens a product of the block formats takes the
	// 128x128 mmh tiles for (fewer: 64x32, more blocks). H200, 8B Q4_K_M,
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
	// H200, 8B, the batch runner's S_TG (docs/PERF.md, 2026-12-02): Q4_K_M
	// at B = 16 1,888 tok/s on mmq against 1,420 on mmh, but 2,476 / 2,734
	// / 2,781 against 2,814 / 4,125 / 5,036 at B = 32 / 64 / 128; Q8_0 at
	// B = 16 / 32 / 64 2,396 / 3,634 / 4,119 against 1,767 / 2,988 / 3,058
	// on mmv_q8; mq64=0 (64-row tiles for every matrix) 1,154 at B = 128.
	// mmq8 reaches 128 tokens (docs/PERF.md, "Against llama.cpp in one
	// run on the H200": Q8_0 at B = 128).
	mmq, mmq8, mq64 int
	// mq2: 1 takes mmq2 (warps of 32 rows, each row's scales decoded once)
	// for mmq's products, 0 the first mmq (warps of 16 rows). mqn: the
	// most tokens of an mmq tile (16, 32, 64 or 128; more tokens take
	// several tiles). mqw: 1 takes mmq2's blocks of 16 warps for grids of
	// at most a block an SM. H200, 8B Q4_K_M, TestMMQBench (docs/PERF.md,
	// "mmq2"): S_TG at B = 16 / 32 / 64 / 128 3,017 / 4,527 / 5,640 /
	// 5,984 on mmq2 (mmq=128) against 1,885 / 2,809 / 4,126 / 5,060 before
	// (mmq 9-16, mmh above); mqn=64 6,750 at B = 128; mqw=1 within 2% of
	// mqw=0 everywhere; mvn=0 (mmq2 from 2 tokens) 1,668 at B = 8 against
	// 945 on mvqn, left off until TestQuantKernels has run mmq2 there.
	mq2, mqn, mqw int
	// mmn: the smallest token tile of Q8_0's own prompt product mm_q8 (64,
	// 32 or 16): a product of fewer 64x64 tiles than SMs (a small model's
	// O and down: 16 row tiles) takes narrower ones (mmQ8Tile).
	mmn int
	// mmh8: the fewest tokens Q8_0's own products take mm_q8h (qact_h's
	// f16 activations against the int8 weights turned f16 in the tile:
	// no per-block rescale) rather than mm_q8 (int16 activations as two
	// int8 planes, every block's sums rescaled); 0: never. mhw: the
	// widest token tile of mm_q8h whose warps take 16 rows each (_w4:
	// each weight turned f16 once) rather than 32 (0: none).
	mmh8, mhw int
	hvn       int // the most tokens a product of F32, F16 or BF16 takes mvhn for (0: never, mmw instead; half.go)
	// moeH: the fewest tokens of a step whose expert products take the
	// f16 tensor cores (mmhe) rather than moe_mvn. moeGate: the fewest
	// whose float router (moe_gate) runs a warp an expert, eight experts
	// a block, rather than four warps an expert, two a block: few tokens
	// spread the router's rows over many blocks (a decode step's read of
	// them is latency-bound), many fill the GPU anyway and a block
	// normalizes its token's row once for eight experts. The defaults'
	// measurements: docs/PERF.md, "Qwen3-MoE's prompt pass profiled".
	moeH, moeGate int
	// moeB: the most blocks an expert of moe_mvn and moe_mvnq (each block
	// loops over its share of the expert's tiles, the next tile's weights
	// loaded before the sums are reduced); 0: the blocks resident at once
	// shared by the step's chosen experts, at least moeBMin (moeBlocks); a
	// tile's count or more: a block a tile. moeNT: the most tokens of a
	// step whose expert products take pairs two at a time (moe_mvn2,
	// moe_mvnq2: fewer registers, more blocks an SM) rather than eight.
	// H200, 30B-A3B Q4_K_M, S_TG: docs/PERF.md, "Qwen3-MoE's expert
	// products in fewer blocks".
	moeB, moeBMin, moeNT int
}

func defaultTuning() tuning {
	return tuning{
		qkv: mvCfg{2, 1, true, true}, o: mvCfg{1, 1, true, false}, gu: mvCfg{2, 1, true, true}, down: mvCfg{1, 1, true, false},
		head: mvCfg{4, 1, false, true}, carveout: -1, h128: 129, mvn: mvnMax,
		mmq: 128, mmq8: 128, mq64: 256, mq2: 1, mqn: 64, mqw: 0, mmn: 16, mmh8: 1, mhw: 64, hvn: mvhnMax, moeH: 32, moeGate: 32,
		moeB: 0, moeBMin: 32, moeNT: 16,
	}
}

func parseTuning(s string) (tuning, error) {
	t := defaultTuning()
	if s == "" {
		return t, nil
	}
	mats := map[string]*mvCfg{"qkv": &t.qkv, "o": &t.o, "gu": &t.gu, "down": &t.down, "head": &t.head}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: bad entry %q", kv)
		}
		switch {
		case k == "carveout":
			t.carveout = n
		case k == "h128":
			t.h128 = n
		case k == "mvn" && n >= 0 && n <= mvnMax:
			t.mvn = n
		case k == "mmq" && n >= 0:
			t.mmq = n
		case k == "mmq8" && n >= 0:
			t.mmq8 = n
		case k == "mq64" && n >= 0:
			t.mq64 = n
		case k == "mq2" && (n == 0 || n == 1):
			t.mq2 = n
		case k == "mqn" && (n == 16 || n == 32 || n == 64 || n == 128):
			t.mqn = n
		case k == "mqw" && (n == 0 || n == 1):
			t.mqw = n
		case k == "mmn" && (n == 16 || n == 32 || n == 64):
			t.mmn = n
		case k == "mmh8" && n >= 0:
			t.mmh8 = n
		case k == "mhw" && (n == 0 || n == 16 || n == 32 || n == 64):
			t.mhw = n
		case k == "hvn" && n >= 0:
			t.hvn = n
		case k == "moeh" && n >= 1:
			t.moeH = n
		case k == "moegate" && n >= 1:
			t.moeGate = n
		case k == "moeb" && n >= 0:
			t.moeB = n
		case k == "moebmin" && n >= 0:
			t.moeBMin = n
		case k == "moent" && n >= 0:
			t.moeNT = n
		case mats[k] != nil:
			mats[k].rpw = n
		case strings.HasSuffix(k, "k") && mats[strings.TrimSuffix(k, "k")] != nil:
			mats[strings.TrimSuffix(k, "k")].ks = n
		case strings.HasSuffix(k, "f") && mats[strings.TrimSuffix(k, "f")] != nil:
			mats[strings.TrimSuffix(k, "f")].fl = n != 0
		case strings.HasSuffix(k, "b") && mats[strings.TrimSuffix(k, "b")] != nil && (n == 0 || n == 3):
			mats[strings.TrimSuffix(k, "b")].b3 = n == 3
		default:
			return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: unknown key %q", k)
		}
	}
	if t.gu.rpw != 2 {
		return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: gu must be 2 (a gate row and its up row)")
	}
	for _, k := range t.mvKernels() {
		if !mvKernelNames[k.name] {
			return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: no matvec kernel %s (the rows per warp, warps per row, float activations and blocks an SM of those tuning.go's mvKernelNames lists)", k.name)
		}
	}
	return t, nil
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
// when gain is not 0) to f16 in xh, their per-token scales in hs.
func (r *Model) qactH(l *launcher, x, gain uint64, K, n int, xh, hs uint64) {
	l.launch("qact_h", [3]uint32{uint32(n)}, 256, 0, x, i32(K), i32(K), gain, f32(r.cfg.Eps), xh, hs)
}

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
