package cuda

import (
	"fmt"
	"strconv"
	"strings"
)

// mvCfg chooses a matvec kernel: rows per warp, warps splitting a row
// (float path only), and float activations (mvf_q8) or int16 activation
// planes with dp4a (mv_q8).
type mvCfg struct {
	rpw, ks int
	fl      bool
}

// name returns the kernel's name for epilogue kind.
func (m mvCfg) name(kind string) string {
	if m.fl {
		return fmt.Sprintf("mvf_q8_%s_r%d_k%d", kind, m.rpw, m.ks)
	}
	return fmt.Sprintf("mv_q8_%s_r%d", kind, m.rpw)
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

// tuning holds launch choices: the matvec kernel of each matrix, the
// decode attention's splits and tiles, whether decode kernels use
// programmatic dependent launch, and the shared memory carveout.
// INFERNO_CUDA_TUNE overrides them, e.g.
// "qkv=1,qkvk=1,o=1,ok=4,down=1,downk=4,gu=2,guk=1,head=2,headf=0,pdl=0"
// (X=rows per warp, Xk=warps per row, Xf=float activations).
//
// Decode attention is the flash-decoding kernel attn_fd: asplit splits (0:
// as many as make one block per SM, SMs/KV heads), tiles of ar scoring
// passes, ast cp.async stages, at threads a block, at least minchunk
// positions a split.
type tuning struct {
	qkv, o, gu, down, head mvCfg
	minchunk               int  // fewest positions per attention split (one split, no combine, below it)
	asplit, ar, ast, at    int  // attn_fd: splits (0: SMs/KV heads), passes per tile, stages, threads
	ahead                  bool // queue the next decode step on the device's own argmax (lookahead)
	pdl                    bool
	carveout               int // shared memory carveout percent for every kernel; -1: the driver's choice
	// h128: the fewest tokens a product of the block formats takes the
	// 128x128 mmh tiles for (fewer: 64x32, more blocks). H200, 8B Q4_K_M,
	// `inferno bench -p 128 -n 64 --parallel 8,32,64,128` (2026-12-02):
	// from 33 tokens on, tg64 x64 2,456 and x128 4,633 tok/s; from 129 on,
	// 4,172 and 5,110 (x8 and x32 the same).
	h128 int
	mvn  int // the most tokens a product of the block formats takes mvqn for (0 to mvnMax; 0: never)
}

func defaultTuning() tuning {
	return tuning{
		qkv: mvCfg{2, 1, true}, o: mvCfg{1, 1, true}, gu: mvCfg{2, 1, true}, down: mvCfg{1, 1, true},
		head: mvCfg{2, 1, false}, minchunk: 128, ahead: true, carveout: -1, h128: 129, mvn: mvnMax,
		ar: 1, ast: 3, at: 256,
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
		case k == "pdl":
			t.pdl = n != 0
		case k == "minchunk":
			t.minchunk = n
		case k == "ahead":
			t.ahead = n != 0
		case k == "carveout":
			t.carveout = n
		case k == "asplit":
			t.asplit = n
		case k == "ar":
			t.ar = n
		case k == "ast":
			t.ast = n
		case k == "at":
			t.at = n
		case k == "h128":
			t.h128 = n
		case k == "mvn" && n >= 0 && n <= mvnMax:
			t.mvn = n
		case mats[k] != nil:
			mats[k].rpw = n
		case strings.HasSuffix(k, "k") && mats[strings.TrimSuffix(k, "k")] != nil:
			mats[strings.TrimSuffix(k, "k")].ks = n
		case strings.HasSuffix(k, "f") && mats[strings.TrimSuffix(k, "f")] != nil:
			mats[strings.TrimSuffix(k, "f")].fl = n != 0
		default:
			return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: unknown key %q", k)
		}
	}
	for name, m := range mats {
		if m.rpw != 1 && m.rpw != 2 || m.ks != 1 && m.ks != 2 && m.ks != 4 {
			return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: %s: rows per warp must be 1 or 2, warps per row 1, 2 or 4", name)
		}
	}
	if t.gu.rpw != 2 {
		return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: gu must be 2 (a gate row and its up row)")
	}
	if t.asplit < 0 || t.asplit > 1024 || t.ar < 1 || t.ast < 2 || t.at != 256 && t.at != 512 || t.minchunk < 1 {
		return t, fmt.Errorf("cuda: INFERNO_CUDA_TUNE: asplit, ar, ast, at or minchunk out of range")
	}
	return t, nil
}

type mvKernel struct {
	name string
	cfg  mvCfg
}

func (r *Runner) mvKernels() []mvKernel {
	t := r.tune
	return []mvKernel{
		{t.qkv.name("store"), t.qkv}, {t.o.name("add"), t.o}, {t.gu.name("swiglu"), t.gu},
		{t.down.name("add"), t.down}, {t.head.name("argmax"), t.head},
	}
}

// mvGrid returns the blocks to launch of a matvec over rows: one per tile,
// at most as many as fit on the GPU at once (the kernel loops over tiles).
func (r *Runner) mvGrid(m mvCfg, kind string, rows int) int {
	tiles := m.tiles(kind, rows)
	if n := r.grids[m.name(kind)]; n > 0 {
		return min(tiles, n)
	}
	return tiles
}

// attnSplits returns the decode attention's splits (a fixed number,
// maxSplit, whatever the context) and the score capacity argument attn_fd
// takes and ignores (0).
func (r *Runner) attnSplits() (nsplit, chcap int) {
	return r.maxSplit, 0
}

// attnKernel returns the decode attention kernel's name and its dynamic
// shared memory (the same for every KV capacity).
func (r *Runner) attnKernel(kvCap int) (string, int) {
	return attnFDName(r.cfg.HeadDim, r.shape.dg, r.tune.ar, r.tune.ast, r.tune.at), attnFDSmem(r.tune.ar, r.tune.ast, r.tune.at)
}

// attnFDName is the name of attn_fd for a head dimension, query heads per
// KV head, scoring passes per tile, pipeline stages and threads a block.
func attnFDName(hd, group, ar, ast, at int) string {
	return fmt.Sprintf("attn_fd_h%d_g%d_r%d_s%d_t%d", hd, group, ar, ast, at)
}

// attnFDSmem is attn_fd's dynamic shared memory: at/32 warps x ast stages
// of a tile (2 x ar x 512/hd positions x hd f16 values = 2 KB x ar).
func attnFDSmem(ar, ast, at int) int { return at / 32 * ast * 2048 * ar }
