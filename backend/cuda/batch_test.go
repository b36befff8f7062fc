package cuda

// GPU tests of the BatchRunner (continuous batching over a paged KV
// cache): its kernels against float64 and scalar references, batched
// against alone, block copies and prefix reuse, memory and bad input (the
// benchmark is in batch_bench_test.go). They skip without a GPU.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/batch"
	"inferno/engine"
	"inferno/model/qwen3"
)

var _ engine.BatchRunner = (*BatchRunner)(nil)

// pagedPool is a host copy of one layer's K and V pool: [block][kv head][bs][hd].
type pagedPool struct {
	blocks, kvh, bs, hd int
	k, v                []float32 // f16-rounded values
}

func newPagedPool(rng *rand.Rand, blocks, kvh, bs, hd int) *pagedPool {
	n := blocks * kvh * bs * hd
	return &pagedPool{blocks, kvh, bs, hd, roundF16(randVec(rng, n, 1.5)), roundF16(randVec(rng, n, 1.5))}
}

func (p *pagedPool) off(tab []int32, pos, g int) int {
	return ((int(tab[pos/p.bs])*p.kvh+g)*p.bs + pos%p.bs) * p.hd
}

// refAttn is the float64 attention of query heads q (h*hd) at position
// pos over the positions 0..pos of a sequence of the pool.
func (p *pagedPool) refAttn(q []float32, pos int, tab []int32, h int) []float32 {
	hd, group := p.hd, h/p.kvh
	out := make([]float32, h*hd)
	scale := 1 / math.Sqrt(float64(hd))
	s := make([]float64, pos+1)
	for hh := range h {
		g := hh / group
		qh := q[hh*hd : (hh+1)*hd]
		mx := math.Inf(-1)
		for j := 0; j <= pos; j++ {
			k := p.k[p.off(tab, j, g):]
			var d float64
			for i := range hd {
				d += float64(qh[i]) * float64(k[i])
			}
			s[j] = d * scale
			mx = math.Max(mx, s[j])
		}
		var l float64
		for j := range s {
			s[j] = math.Exp(s[j] - mx)
			l += s[j]
		}
		for i := range hd {
			var o float64
			for j := 0; j <= pos; j++ {
				o += s[j] * float64(p.v[p.off(tab, j, g)+i])
			}
			out[hh*hd+i] = float32(o / l)
		}
	}
	return out
}

// randomTables gives each sequence of the given lengths a table of
// distinct random blocks.
func randomTables(rng *rand.Rand, blocks, bs int, lens []int) [][]int32 {
	perm := rng.Perm(blocks)
	var tabs [][]int32
	for _, n := range lens {
		nb := (n + bs - 1) / bs
		tab := make([]int32, nb)
		for i := range tab {
			tab[i] = int32(perm[0])
			perm = perm[1:]
		}
		tabs = append(tabs, tab)
	}
	return tabs
}

// TestBatchKernelAttention checks the paged attention kernels against a
// float64 reference on random data: decode tokens of sequences of lengths
// 1..2000 (split-K, random block tables), with the queries given and with
// the fused QK norm, RoPE and KV append; and prefill runs at depth 0 and
// 3000 (tensor cores, causal), in one launch. With -short, every shape
// takes the shorter sequences (at most 700 positions).
func TestBatchKernelAttention(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(21, 21))
	sc := newParScalar()
	const eps, theta, bs = 1e-6, 1e6, 16
	// Ratios 2, 2, 1, 4, 3, 8, 8 (256: blocks of 4 query heads, two a KV
	// head) and 7 (blocks of one); head dimensions 32 to 256.
	for ci, sh := range []struct{ hd, h, kvh int }{{128, 16, 8}, {32, 4, 2}, {64, 8, 8}, {64, 16, 4}, {128, 24, 8}, {128, 64, 8}, {256, 16, 2}, {128, 14, 2}} {
		t.Run(fmt.Sprintf("hd%d_h%d_kv%d", sh.hd, sh.h, sh.kvh), func(t *testing.T) {
			use(t, g)
			bsh := 4 // log2(bs): shifts; every other shape takes the division path
			if ci%2 == 1 {
				bsh = -1
			}
			group := decodeGroup(sh.hd, sh.h/sh.kvh, false) // query heads a decode block takes
			pgroup := prefillGroup(sh.h / sh.kvh)           // ... a prefill block
			lens := []int{1, 17, 300, 1000, 2000, 100, 3077}
			deep := 3000 // the second prefill run's first position
			// The other ratios, and every shape with -short: shorter
			// sequences (the CPU reference's time).
			if ci >= 4 || testing.Short() {
				lens, deep = []int{1, 17, 130, 300, 257, 100, 700}, 600
			}
			const blocks = 420
			tabs := randomTables(rng, blocks, bs, lens)
			pool := newPagedPool(rng, blocks, sh.kvh, bs, sh.hd)
			// meta: the tables, flattened; toff per token below.
			var meta []int32
			var offs []int32
			for _, tab := range tabs {
				offs = append(offs, int32(len(meta)))
				meta = append(meta, tab...)
			}
			qd := sh.h * sh.hd
			scale := float32(1 / math.Sqrt(float64(sh.hd)))
			dK, dV := devBytes(t, g, f16Bytes(pool.k)), devBytes(t, g, f16Bytes(pool.v))
			ns := 6
			const maxns = 16
			pm, pl := devZeros(t, g, 4*8*sh.h*maxns), devZeros(t, g, 4*8*sh.h*maxns)
			pacc, counter := devZeros(t, g, 4*8*sh.h*maxns*sh.hd), devZeros(t, g, 4*8*sh.h)
			smemDec := attnFDSmem(1, 3, 256)
			cluster := true // pattn_decc: in the sm_90 PTX only
			for _, name := range []string{"pattn_dec", "pattn_decf", "pattn_decc"} {
				k := fmt.Sprintf("%s_h%d_g%d", name, sh.hd, group)
				f, err := g.fn(k)
				if err != nil && name == "pattn_decc" && g.CC < 90 {
					cluster = false
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := g.allowSmem(f, k, smemDec); err != nil {
					t.Fatal(err)
				}
			}

			// Decode tokens, queries given: sequences 0..4, each one token at
			// its last position.
			const nd = 5
			q := randVec(rng, nd*qd, 1.5)
			pos := make([]int32, nd)
			toks := make([]int32, nd)
			for i := range nd {
				pos[i], toks[i] = int32(lens[i]-1), int32(i)
			}
			dq, dmeta := devF32(t, g, q), devBytes(t, g, i32Bytes(meta))
			dpos, doff, dtoks := devBytes(t, g, i32Bytes(pos)), devBytes(t, g, i32Bytes(offs[:nd])), devBytes(t, g, i32Bytes(toks))
			out := devZeros(t, g, 4*nd*qd)
			for _, split := range []int{1, ns} {
				for rep := range 2 { // twice: the combine counters must have reset
					if err := g.launch(fmt.Sprintf("pattn_dec_h%d_g%d", sh.hd, group), [3]uint32{uint32(sh.h / group), uint32(split), nd}, 256, uint32(smemDec),
						dq, i32(sh.h), i32(sh.kvh), 0, 0, f32(eps), 0, dtoks, dpos, doff, dmeta, i32(bs), i32(bsh), dK, dV, f32(scale), i32(split), i32(64),
						pm, pl, pacc, counter, out, 0); err != nil {
						t.Fatal(err)
					}
					if err := g.sync("pattn_dec"); err != nil {
						t.Fatal(err)
					}
					got := getF32(t, g, out, nd*qd)
					for i := range nd {
						want := pool.refAttn(q[i*qd:(i+1)*qd], lens[i]-1, tabs[i], sh.h)
						if e := relL2(got[i*qd:(i+1)*qd], want); e > 1e-3 || math.IsNaN(e) {
							t.Errorf("decode, %d splits, rep %d, length %d: relative L2 %.3g", split, rep, lens[i], e)
						} else if rep == 0 && split == ns && sh.hd == 128 {
							t.Logf("decode length %4d: relative L2 %.3g", lens[i], e)
						}
					}
				}
			}

			// Fused: QKV rows in, norm + rope + append here.
			qkvw := (sh.h + 2*sh.kvh) * sh.hd
			qkv := randVec(rng, nd*qkvw, 2)
			qg, kg := gainVec(rng, sh.hd), gainVec(rng, sh.hd)
			rope := devF32(t, g, ropeTable(thetaFreqs(theta, sh.hd), 1, sh.hd/2, 4096))
			dqkv, dqg, dkg := devF32(t, g, qkv), devF32(t, g, qg), devF32(t, g, kg)
			// The fused kernel takes token z's inputs at z: offsets of seqs 0..4.
			ac := attnCase{hd: sh.hd, h: sh.h, kvh: sh.kvh}
			if err := g.launch(fmt.Sprintf("pattn_decf_h%d_g%d", sh.hd, group), [3]uint32{uint32(sh.h / group), uint32(ns), nd}, 256, uint32(smemDec),
				dqkv, i32(sh.h), i32(sh.kvh), dqg, dkg, f32(eps), rope, 0, dpos, doff, dmeta, i32(bs), i32(bsh), dK, dV, f32(scale), i32(ns), i32(64),
				pm, pl, pacc, counter, out, 0); err != nil {
				t.Fatal(err)
			}
			if err := g.sync("pattn_decf"); err != nil {
				t.Fatal(err)
			}
			got := getF32(t, g, out, nd*qd)
			gk := getF16(t, g, dK, len(pool.k))
			gv := getF16(t, g, dV, len(pool.v))
			qis := make([][]float32, nd)
			for i := range nd {
				p := lens[i] - 1
				qi, ki, vi := cpuQKV(sc.Scalar, qkv[i*qkvw:(i+1)*qkvw], ac, p, qg, kg, eps, theta)
				qis[i] = qi
				k16, v16 := roundF16(ki), roundF16(vi)
				for gg := range sh.kvh {
					o := pool.off(tabs[i], p, gg)
					for d := range sh.hd {
						if math.Abs(float64(gk[o+d]-k16[gg*sh.hd+d])) > 4e-3 || gv[o+d] != v16[gg*sh.hd+d] {
							t.Fatalf("fused decode, length %d: appended key/value differ at head %d dim %d", lens[i], gg, d)
						}
						pool.k[o+d], pool.v[o+d] = gk[o+d], gv[o+d]
					}
				}
				want := pool.refAttn(qi, p, tabs[i], sh.h)
				if e := relL2(got[i*qd:(i+1)*qd], want); e > 1e-3 || math.IsNaN(e) {
					t.Errorf("fused decode, length %d: relative L2 %.3g", lens[i], e)
				}
			}

			// The cluster kernel (fused, splits in clusters of 8 combined
			// through distributed shared memory): one cluster (every
			// count of active blocks), two (the second full or partial,
			// combined through global memory), twice each for the counters.
			// It appends the same key and value as pattn_decf.
			for _, v := range []struct{ ns, cmin, cmax int }{{8, 32, 64}, {16, 32, 64}, {16, 96, 0}, {16, 16, 8}, {16, 64, 0}} {
				if !cluster {
					t.Log("no pattn_decc (compute capability below 9.0)")
					break
				}
				for rep := range 2 {
					zeroDev(t, g, out, 4*nd*qd)
					if err := g.launch(fmt.Sprintf("pattn_decc_h%d_g%d", sh.hd, group), [3]uint32{uint32(sh.h / group), uint32(v.ns), nd}, 256, uint32(smemDec),
						dqkv, i32(sh.h), i32(sh.kvh), dqg, dkg, f32(eps), rope, 0, dpos, doff, dmeta, i32(bs), i32(bsh), dK, dV, f32(scale), i32(v.ns), i32(v.cmin),
						pm, pl, pacc, counter, out, 0, i32(v.cmax)); err != nil {
						t.Fatal(err)
					}
					if err := g.sync("pattn_decc"); err != nil {
						t.Fatal(err)
					}
					got := getF32(t, g, out, nd*qd)
					gk2, gv2 := getF16(t, g, dK, len(pool.k)), getF16(t, g, dV, len(pool.v))
					for i := range nd {
						for gg := range sh.kvh {
							o := pool.off(tabs[i], lens[i]-1, gg)
							for d := range sh.hd {
								if gk2[o+d] != gk[o+d] || gv2[o+d] != gv[o+d] {
									t.Fatalf("cluster decode %+v, length %d: appended key/value differ from pattn_decf's at head %d dim %d", v, lens[i], gg, d)
								}
							}
						}
						want := pool.refAttn(qis[i], lens[i]-1, tabs[i], sh.h)
						if e := relL2(got[i*qd:(i+1)*qd], want); e > 1e-3 || math.IsNaN(e) {
							t.Errorf("cluster decode %+v, rep %d, length %d: relative L2 %.3g", v, rep, lens[i], e)
						} else if rep == 1 && sh.hd == 128 && i == nd-1 {
							t.Logf("cluster decode %+v, length %d: relative L2 %.3g", v, lens[i], e)
						}
					}
				}
			}

			// Prefill runs: sequence 5 (positions 0..99) and sequence 6
			// (positions 3000..3076), tiles of 64/pgroup tokens, and a decode
			// token of sequence 2 in the same batch (not in the tiles).
			runs := []struct{ seq, pos0, n int }{{5, 0, 100}, {6, deep, 77}}
			qt := 64 / pgroup
			var ppos, ptoff, tiles []int32
			ntok := 0
			for _, r := range runs {
				for s := 0; s < r.n; s += qt {
					tiles = append(tiles, int32(ntok+s), int32(min(qt, r.n-s)))
				}
				for i := range r.n {
					ppos = append(ppos, int32(r.pos0+i))
					ptoff = append(ptoff, offs[r.seq])
				}
				ntok += r.n
			}
			pq := randVec(rng, ntok*qd, 1.5)
			dpq, dppos, dptoff, dtiles := devF32(t, g, pq), devBytes(t, g, i32Bytes(ppos)), devBytes(t, g, i32Bytes(ptoff)), devBytes(t, g, i32Bytes(tiles))
			pout := devZeros(t, g, 4*ntok*qd)
			// pattn_pre whole (1 split) and split over the keys with
			// pattn_comb (3 and 16: splits without keys, rows without a key
			// in their split).
			const maxps = 16
			ppm, ppl := devZeros(t, g, 4*ntok*sh.h*maxps), devZeros(t, g, 4*ntok*sh.h*maxps)
			ppacc := devZeros(t, g, 4*ntok*sh.h*maxps*sh.hd)
			var wants [][]float32 // the CPU's, once for every variant
			tok := 0
			for _, r := range runs {
				for i := range r.n {
					wants = append(wants, pool.refAttn(pq[tok*qd:(tok+1)*qd], r.pos0+i, tabs[r.seq], sh.h))
					tok++
				}
			}
			k := fmt.Sprintf("pattn_pre_h%d_g%d", sh.hd, pgroup)
			f, err := g.fn(k)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.allowSmem(f, k, pattnPreSmem(sh.hd)); err != nil {
				t.Fatal(err)
			}
			for _, ps := range []int{1, 3, maxps} {
				zeroDev(t, g, pout, 4*ntok*qd)
				if err := g.launch(k, [3]uint32{uint32(len(tiles) / 2), uint32(sh.h / pgroup), uint32(ps)}, 128, uint32(pattnPreSmem(sh.hd)),
					dpq, dtiles, dppos, dptoff, dmeta, i32(bs), i32(bsh), i32(sh.h), i32(sh.kvh), dK, dV, f32(scale),
					i32(ps), ppm, ppl, ppacc, pout); err != nil {
					t.Fatal(err)
				}
				if ps > 1 {
					if err := g.launch(fmt.Sprintf("pattn_comb_h%d", sh.hd), [3]uint32{uint32(len(tiles) / 2), uint32(sh.h)}, 256, 0,
						dtiles, dppos, i32(sh.h), i32(ps), ppm, ppl, ppacc, pout); err != nil {
						t.Fatal(err)
					}
				}
				if err := g.sync(k); err != nil {
					t.Fatal(err)
				}
				got = getF32(t, g, pout, ntok*qd)
				tok := 0
				for _, r := range runs {
					var worst float64
					for i := range r.n {
						e := relL2(got[tok*qd:(tok+1)*qd], wants[tok])
						if e > 1e-3 || math.IsNaN(e) {
							t.Errorf("%d splits, prefill at depth %d, token %d: relative L2 %.3g", ps, r.pos0, i, e)
						}
						worst = max(worst, e)
						tok++
					}
					t.Logf("%d splits, prefill run of %d at depth %d: worst relative L2 %.3g", ps, r.n, r.pos0, worst)
				}
			}
		})
	}
}

// TestBatchKernelMatmul checks the skinny tensor-core matmul (mmv_q8 on
// quant_act's planes and mmv_q8x on quant_actv's interleaved layout, every
// n-tile count, its passes over 1 to 3 blocks a row tile) with each
// epilogue against scalar MatMul.
func TestBatchKernelMatmul(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(22, 22))
	sc := newParScalar()
	const eps = 1e-6
	for _, sh := range []struct{ m, k, n int }{{100, 64, 5}, {4096, 1024, 8}, {1024, 3072, 13}, {70, 96, 1}, {1024, 2048, 64}, {300, 1024, 100}} {
		t.Run(fmt.Sprintf("%dx%dx%d", sh.m, sh.k, sh.n), func(t *testing.T) {
			use(t, g)
			w := randQ8(rng, "w", sh.m, sh.k)
			gw := uploadTest(t, g, w)
			x, gain := randVec(rng, sh.n*sh.k, 3), gainVec(rng, sh.k)
			xn := make([]float32, len(x))
			sc.RMSNorm(xn, x, gain, eps)
			ref := make([]float32, sh.n*sh.m)
			sc.MatMul(ref, w, xn, sh.n)
			up := randQ8(rng, "up", sh.m, sh.k)
			gu, err := (&Model{dev: g}).uploadGateUp("gu", w, up)
			if err != nil {
				t.Fatal(err)
			}
			ur := make([]float32, sh.n*sh.m)
			sc.MatMul(ur, up, xn, sh.n)
			sw := make([]float32, len(ur))
			sc.SwiGLU(sw, ref, ur)
			npad := roundUp(sh.n, 64)
			dx, dg := devF32(t, g, x), devF32(t, g, gain)
			hi, lo, sx := devZeros(t, g, npad*sh.k), devZeros(t, g, npad*sh.k), devZeros(t, g, 4*npad*sh.k/32)
			xq, sxv := devZeros(t, g, 2*npad*sh.k), devZeros(t, g, 4*npad*sh.k/32)
			if err := g.launch("quant_act", [3]uint32{uint32(sh.n)}, 256, 0, dx, i32(sh.k), i32(sh.k), dg, f32(eps), hi, lo, sx, i32(npad)); err != nil {
				t.Fatal(err)
			}
			if err := g.launch("quant_actv", [3]uint32{uint32(sh.n)}, 256, 0, dx, i32(sh.k), i32(sh.k), dg, f32(eps), xq, sxv, i32(npad)); err != nil {
				t.Fatal(err)
			}
			y0 := randVec(rng, sh.n*sh.m, 1)
			for _, ks := range []string{"mmv_q8", "mmv_q8x"} { // quant_act's planes, quant_actv's interleaved layout
				for _, c := range []struct{ nt, ny int }{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 3}, {4, 2}} {
					nt, ny := c.nt, c.ny
					run := func(kind string, w gpuWeight, y uint64, ldy, nout int) {
						name := fmt.Sprintf("%s_%s_n%d_k8", ks, kind, nt)
						xh, xl, xs := hi, lo, sx
						if ks == "mmv_q8x" {
							xh, xl, xs = xq, xq, sxv
						}
						if err := g.launch(name, [3]uint32{uint32(w.mpad / 16), uint32(ny)}, 256, 0,
							w.q, w.dcol, i32(w.rows), i32(w.mpad), i32(w.cols), xh, xl, xs, i32(sh.n), i32(npad), y, i32(ldy), i32(nout)); err != nil {
							t.Fatal(err)
						}
						if err := g.sync(name); err != nil {
							t.Fatal(err)
						}
					}
					dy := devF32(t, g, randVec(rng, sh.n*sh.m, 1))
					run("store", gw, dy, sh.m, 0)
					if e := relL2(getF32(t, g, dy, sh.n*sh.m), ref); e > 2e-4 || math.IsNaN(e) {
						t.Errorf("%s n%d y%d store: relative L2 error %.3g", ks, nt, ny, e)
					}
					dy = devF32(t, g, y0)
					run("add", gw, dy, sh.m, 0)
					want := make([]float32, len(y0))
					for i := range want {
						want[i] = y0[i] + ref[i]
					}
					if e := relL2(getF32(t, g, dy, sh.n*sh.m), want); e > 2e-4 || math.IsNaN(e) {
						t.Errorf("%s n%d y%d add: relative L2 error %.3g", ks, nt, ny, e)
					}
					dy = devZeros(t, g, 4*sh.n*sh.m)
					run("swiglu", gu, dy, sh.m, sh.m)
					if e := relL2(getF32(t, g, dy, sh.n*sh.m), sw); e > 3e-4 || math.IsNaN(e) {
						t.Errorf("%s n%d y%d swiglu: relative L2 error %.3g", ks, nt, ny, e)
					}
				}
			}
		})
	}
}

// blockAlloc hands out the blocks of a pool in a shuffled order (tables
// are never contiguous).
type blockAlloc struct{ free []int32 }

func newBlockAlloc(rng *rand.Rand, n int) *blockAlloc {
	a := &blockAlloc{}
	for _, i := range rng.Perm(n) {
		a.free = append(a.free, int32(i))
	}
	return a
}

// grow extends tab to hold n positions.
func (a *blockAlloc) grow(tab []int32, n, bs int) []int32 {
	for len(tab)*bs < n {
		tab = append(tab, a.free[0])
		a.free = a.free[1:]
	}
	return tab
}

func newBatchRunner(t testing.TB, r *Model, blocks, bs int) *BatchRunner {
	t.Helper()
	br, err := r.NewBatchRunner(blocks, bs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := br.Close(); err != nil {
			t.Error(err)
		}
	})
	return br
}

func batchLogits(t *testing.T, br *BatchRunner, i int) []float32 {
	t.Helper()
	l, err := br.Logits(i)
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), l...)
}

// TestBatchEqualsAlone runs 8 prompts of different lengths through one
// BatchRunner (prefills in one batch and in a batch mixed with decode
// tokens, then 64 decode steps of all 8 together, then 3 of them, then 1)
// and each alone, as the commands run a sequence (engine.Single on a
// BatchRunner of its own sharing the weights), fed the same tokens:
// logits within 3e-3 relative L2 and the same greedy tokens. (Products of
// 128 tokens or more, such as the 8 prompts in one pass, take f16
// activations on mm_q8h; fewer, such as a short prompt alone, int16 ones
// on mmv_q8: the two roundings put the logits up to ~2e-3 apart.)
func TestBatchEqualsAlone(t *testing.T) {
	requireGPU(t)
	t.Run("tiny", func(t *testing.T) { batchEqualsAlone(t, tinyModel(t), 64, 12) }) // blocks of 12: the kernels divide
	if testing.Short() {
		return
	}
	t.Run("synth-0.6b", func(t *testing.T) { batchEqualsAlone(t, synthModel(t, "0.6b"), 64, 16) })
}

func batchEqualsAlone(t *testing.T, m *qwen3.Model, steps, bs int) {
	batchEqualsAloneTol(t, m, nil, steps, bs, 3e-3)
}

// batchEqualsAloneTol is batchEqualsAlone with logits within tol relative
// L2 (quant_gpu_test.go: f16 tensor-core tiles against int8 matvecs), the
// Model loaded with tune's launch choices (nil: the defaults).
func batchEqualsAloneTol(t *testing.T, m *qwen3.Model, tune func(*tuning), steps, bs int, tol float64) {
	lens := []int{5, 12, 33, 64, 70, 100, 129, 200}
	rng := rand.New(rand.NewPCG(23, 23))
	md := newModel(t, m, Options{MaxLen: 512, tune: tune})
	var alone []*engine.Single
	for range lens {
		alone = append(alone, newSingle(t, md))
	}
	br := newBatchRunner(t, md, 256, bs)
	alloc := newBlockAlloc(rng, br.Blocks())
	type seq struct {
		prompt []int32
		tab    []int32
		len    int
		next   int32 // the alone runner's greedy token: the next input of both
		want   []float32
	}
	seqs := make([]*seq, len(lens))
	for i, n := range lens {
		seqs[i] = &seq{prompt: randomPrompt(uint64(100+i), n, m.Config.Vocab)}
	}
	var worst float64
	mismatches := 0
	// aloneStep runs the same input on sequence i's own runner.
	aloneStep := func(i int, in []int32) {
		s := seqs[i]
		if err := alone[i].Forward(in); err != nil {
			t.Fatal(err)
		}
		s.want = logits(t, alone[i])
		s.next, _ = alone[i].Greedy()
	}
	check := func(what string, i, out int) {
		s := seqs[i]
		got := batchLogits(t, br, out)
		e := relL2(got, s.want)
		worst = max(worst, e)
		if e > tol || math.IsNaN(e) {
			t.Errorf("%s: sequence %d: logits relative L2 %.3g vs alone", what, i, e)
		}
		id, _ := br.Greedy(out)
		if id != s.next {
			// A flip needs the alone runner's two candidates within a few
			// times the logit error (relative error e of rms(logits)).
			mismatches++
			var rms float64
			for _, v := range s.want {
				rms += float64(v) * float64(v)
			}
			rms = math.Sqrt(rms / float64(len(s.want)))
			gap := float64(s.want[s.next] - s.want[id])
			if gap > 20*e*rms+1e-3 {
				t.Errorf("%s: sequence %d: greedy %d, alone %d: gap %.3g not explained by the logit error %.3g", what, i, id, s.next, gap, e*rms)
			} else {
				t.Logf("%s: sequence %d: greedy %d, alone %d: a near tie (gap %.3g, logit error about %.3g)", what, i, id, s.next, gap, e*rms)
			}
		}
	}
	var b batch.Batch
	// add appends sequence i's input (its prompt, or its next token).
	add := func(i int, in []int32) {
		s := seqs[i]
		s.tab = alloc.grow(s.tab, s.len+len(in), bs)
		b.Add(b.AddSeq(s.tab), in, s.len, true)
		s.len += len(in)
	}
	forward := func(what string, order []int, inputs map[int][]int32) {
		b.Reset()
		for _, i := range order {
			add(i, inputs[i])
			aloneStep(i, inputs[i])
		}
		if err := br.Forward(&b); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for o, i := range order {
			check(what, i, o)
		}
	}
	// Prefill 7 prompts in one batch.
	in := map[int][]int32{}
	for i := range 7 {
		in[i] = seqs[i].prompt
	}
	forward("prefill of 7", []int{0, 1, 2, 3, 4, 5, 6}, in)
	// A mixed batch: the 8th prompt and a decode token of the others.
	in = map[int][]int32{7: seqs[7].prompt}
	for i := range 7 {
		in[i] = []int32{seqs[i].next}
	}
	forward("mixed", []int{3, 7, 0, 1, 2, 4, 5, 6}, in)
	decode := func(what string, order []int, n int) {
		for step := range n {
			in := map[int][]int32{}
			for _, i := range order {
				in[i] = []int32{seqs[i].next}
			}
			forward(fmt.Sprintf("%s step %d", what, step), order, in)
		}
	}
	decode("decode of 8", []int{0, 1, 2, 3, 4, 5, 6, 7}, steps)
	decode("decode of 3", []int{6, 0, 3}, 8)
	decode("decode of 1", []int{5}, 4)
	s := br.Stats()
	t.Logf("%d layers, blocks of %d: worst logits relative L2 vs alone %.3g over %d steps; greedy mismatches %d; %d graph steps, %d other; %d graph captures",
		m.Config.Layers, bs, worst, 2+steps+12, mismatches, s.GraphSteps, s.Steps, s.GraphCaptures)
	if s.GraphSteps != int64(steps+12) || s.Steps != 2 {
		t.Errorf("%d graph steps and %d others, want %d and 2", s.GraphSteps, s.Steps, steps+12)
	}
}

// TestBatchPrefixCopy runs a prompt on one sequence, then lets a second
// sequence reuse its prefix (the full blocks shared, the partial block
// copied with CopyBlock) and run only the remainder: its logits match a
// third sequence that ran the whole prompt, and stay matched after the
// first sequence writes other tokens into its (uncopied) partial block.
func TestBatchPrefixCopy(t *testing.T) {
	requireGPU(t)
	m := tinyModel(t)
	const bs = 16
	r := newModel(t, m, Options{MaxLen: 512})
	br := newBatchRunner(t, r, 64, bs)
	prompt := randomPrompt(31, 65, m.Config.Vocab)
	const cut = 45 // blocks 0, 1 full, block 2 partial
	a := []int32{10, 3, 20, 7, 50}
	c := []int32{a[0], a[1], 33, 41, 60}
	w := []int32{5, 6, 8, 9, 11}
	run := func(seqs []struct {
		tab []int32
		in  []int32
		pos int
	}) [][]float32 {
		var b batch.Batch
		for _, s := range seqs {
			b.Add(b.AddSeq(s.tab), s.in, s.pos, true)
		}
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for i := range seqs {
			out = append(out, batchLogits(t, br, i))
		}
		return out
	}
	type in = struct {
		tab []int32
		in  []int32
		pos int
	}
	run([]in{{a, prompt[:cut], 0}})
	if err := br.CopyBlock(c[2], a[2]); err != nil {
		t.Fatal(err)
	}
	got := run([]in{{c, prompt[cut:], cut}, {w, prompt, 0}})
	if e := relL2(got[0], got[1]); e > 1e-3 {
		t.Errorf("prefix reuse: relative L2 %.3g vs the whole prompt", e)
	} else {
		t.Logf("prefix reuse (2 shared blocks, 1 copied): relative L2 %.3g vs the whole prompt", e)
	}
	// The first sequence writes other tokens at positions cut.. (block
	// a[2]); the copy must not see them.
	run([]in{{a, randomPrompt(32, 10, m.Config.Vocab), cut}})
	got = run([]in{{c, []int32{77}, len(prompt)}, {w, []int32{77}, len(prompt)}})
	if e := relL2(got[0], got[1]); e > 1e-3 {
		t.Errorf("after the source block changed: relative L2 %.3g", e)
	}
	if err := br.CopyBlock(64, 0); err == nil {
		t.Error("CopyBlock to a block past the pool accepted")
	}
}

// TestBatchMemoryAndErrors: malformed batches give errors (and the runner
// still works), and closing gives all memory back, an auto-sized pool
// included.
func TestBatchMemoryAndErrors(t *testing.T) {
	g := testDevice(t)
	free0, _ := g.memInfo()
	m := tinyModel(t)
	r, err := Load(m, Options{MaxLen: 512})
	if err != nil {
		t.Fatal(err)
	}
	// A pool past the free memory is refused, in one line, before
	// anything is allocated.
	before, _ := g.memInfo()
	if _, err := r.NewBatchRunner(int(before/(2*uint64(m.Config.Layers*m.Config.KVDim())*2*16)), 16); err == nil ||
		!strings.Contains(err.Error(), "free") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a pool as large as the free memory: %v", err)
	}
	if after, _ := g.memInfo(); after+(1<<20) < before {
		t.Errorf("the refused pool left %.1f MiB allocated", mib(before-after))
	}
	br, err := r.NewBatchRunner(32, 16)
	if err != nil {
		t.Fatal(err)
	}
	auto, err := r.NewBatchRunner(0, 16)
	if err != nil {
		t.Fatal(err)
	}
	if want := 256 * 512 / 16; auto.Blocks() != want {
		t.Errorf("auto-sized pool of %d blocks, want the cap %d", auto.Blocks(), want)
	}
	t.Logf("auto-sized pool: %d blocks (%.1f MiB)", auto.Blocks(), mib(auto.Stats().PoolBytes))
	V := int32(m.Config.Vocab)
	good := func() *batch.Batch {
		var b batch.Batch
		b.Add(b.AddSeq([]int32{3, 4}), []int32{1, 2, 3}, 0, true)
		b.Add(b.AddSeq([]int32{5}), []int32{9}, 0, true)
		return &b
	}
	bad := map[string]func(b *batch.Batch){
		"token past the vocabulary": func(b *batch.Batch) { b.Tokens[1] = V },
		"negative token":            func(b *batch.Batch) { b.Tokens[0] = -1 },
		"position past MaxLen":      func(b *batch.Batch) { b.Pos[3] = 512 },
		"table too short":           func(b *batch.Batch) { b.Pos[3] = 16 },
		"block past the pool":       func(b *batch.Batch) { b.Tables[1][0] = 32 },
		"negative block":            func(b *batch.Batch) { b.Tables[0][0] = -1 },
		"sequence in two runs":      func(b *batch.Batch) { b.Seq[3] = 0 },
		"positions not consecutive": func(b *batch.Batch) { b.Pos[2] = 5 },
		"outputs out of order":      func(b *batch.Batch) { b.Outputs[0], b.Outputs[1] = b.Outputs[1], b.Outputs[0] },
		"output past the batch":     func(b *batch.Batch) { b.Outputs[1] = 4 },
		"unknown sequence":          func(b *batch.Batch) { b.Seq[3] = 7 },
		"empty":                     func(b *batch.Batch) { b.Reset() },
	}
	for name, f := range bad {
		b := good()
		f(b)
		if err := br.Forward(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	var big batch.Batch
	tab := make([]int32, 32)
	for i := range tab {
		tab[i] = int32(i)
	}
	big.Add(big.AddSeq(tab), make([]int32, 300), 0, true)
	big.Add(big.AddSeq(tab), make([]int32, 300), 0, true)
	big.Add(big.AddSeq(tab), make([]int32, 300), 0, true)
	big.Add(big.AddSeq(tab), make([]int32, 300), 0, true)
	if err := br.Forward(&big); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a batch of 1200 tokens: %v", err)
	}
	if err := br.Forward(good()); err != nil {
		t.Fatalf("a good batch after the bad ones: %v", err)
	}
	if _, err := br.Logits(2); err == nil {
		t.Error("Logits of output 2 of 2 accepted")
	}
	if _, err := br.Greedy(-1); err == nil {
		t.Error("Greedy of output -1 accepted")
	}
	if err := r.Close(); err != nil { // the batch runners keep the weights
		t.Fatal(err)
	}
	if err := br.Forward(good()); err != nil {
		t.Fatalf("after the runner closed: %v", err)
	}
	id, _ := br.Greedy(1)
	if err := g.enter(); err != nil {
		t.Fatal(err)
	}
	mid, _ := g.memInfo()
	g.exit()
	if err := auto.Close(); err != nil {
		t.Fatal(err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if err := br.Forward(good()); err == nil {
		t.Error("Forward after Close succeeded")
	}
	if err := g.enter(); err != nil {
		t.Fatal(err)
	}
	free1, _ := g.memInfo()
	t.Logf("model + 2 batch runners held %.1f MiB (greedy %d); free before %.1f MiB, after close %.1f MiB", mib(free0-mid), id, mib(free0), mib(free1))
	if free1+(8<<20) < free0 {
		t.Errorf("%.1f MiB not given back", mib(free0-free1))
	}
}

// zeroDev clears n bytes of device memory (on the stream).
func zeroDev(t *testing.T, g *device, p uint64, n int) {
	t.Helper()
	if err := g.memsetAsync(p, uint64(n)); err != nil {
		t.Fatal(err)
	}
}

// TestBatchLookahead feeds the same batches to two batch runners, one
// with the lookahead (the default) and one without: greedy decoding
// (lookahead steps taken) and deviations that discard a queued step: a
// token other than the argmax, a sequence dropped and its blocks reused
// by a new prompt, a sequence whose table gets its next block only when
// it needs it (no lookahead at a block boundary), a copied block (copy on
// write), logits read while a lookahead step runs (a sampler; the
// lookahead pauses for a step), buckets 4 and 1. The argmax ids and the
// logits read must be identical: the same kernels on the same inputs, and
// a discarded step only wrote rows that are rewritten before anything
// reads them.
func TestBatchLookahead(t *testing.T) {
	requireGPU(t)
	m := tinyModel(t)
	r := newModel(t, m, Options{MaxLen: 512})
	const bs, blocks = 12, 128
	la := newBatchRunner(t, r, blocks, bs)
	ref := newBatchRunner(t, r, blocks, bs)
	ref.SetLookahead(false)
	rng := rand.New(rand.NewPCG(24, 24))
	alloc := newBlockAlloc(rng, blocks)
	V := int32(m.Config.Vocab)
	type seq struct {
		tab  []int32
		len  int
		next int32
		lazy bool // its table gets a block only when a step needs it
	}
	var steps, logitsChecked int
	run := func(what string, seqs []*seq, in [][]int32, readLogits bool) {
		t.Helper()
		var b batch.Batch
		for i, s := range seqs {
			ahead := 40
			if s.lazy {
				ahead = 0
			}
			s.tab = alloc.grow(s.tab, s.len+len(in[i])+ahead, bs)
			b.Add(b.AddSeq(s.tab), in[i], s.len, true)
		}
		for _, br := range []*BatchRunner{la, ref} {
			if err := br.Forward(&b); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		steps++
		for i, s := range seqs {
			a, _ := la.Greedy(i)
			w, _ := ref.Greedy(i)
			if a != w {
				t.Fatalf("%s: output %d: argmax %d with the lookahead, %d without", what, i, a, w)
			}
			if readLogits {
				got, want := batchLogits(t, la, i), batchLogits(t, ref, i)
				if e := relL2(got, want); e != 0 {
					t.Errorf("%s: output %d: logits differ with the lookahead (relative L2 %.3g)", what, i, e)
				}
				logitsChecked++
			}
			s.next = a
			s.len += len(in[i])
		}
	}
	seqs := []*seq{{}, {}, {}, {lazy: true}}
	prompts := [][]int32{randomPrompt(200, 5, int(V)), randomPrompt(201, 30, int(V)), randomPrompt(202, 11, int(V)), randomPrompt(203, 50, int(V))}
	run("prefill", seqs, prompts, false)
	greedy := func(seqs []*seq) [][]int32 {
		in := make([][]int32, len(seqs))
		for i, s := range seqs {
			in[i] = []int32{s.next}
		}
		return in
	}
	for step := range 16 {
		in := greedy(seqs)
		if step == 8 {
			in[1][0] = (seqs[1].next + 1) % V // not the argmax: the queued step is discarded
		}
		run(fmt.Sprintf("decode of 4, step %d", step), seqs, in, step == 3 || step == 4 || step == 10)
	}
	// Sequence 2 ends (its last lookahead step wrote past its length); a
	// new prompt gets its blocks, in a batch with the others' next tokens.
	alloc.free = append(seqs[2].tab, alloc.free...)
	s4 := &seq{}
	seqs = []*seq{seqs[0], seqs[1], seqs[3], s4}
	in := greedy(seqs)
	in[3] = randomPrompt(204, 3*bs+5, int(V))
	run("mixed, a new prompt in a freed sequence's blocks", seqs, in, false)
	for step := range 12 {
		if step == 5 {
			// Copy on write: sequence 0's partial block copied to a new one
			// while a lookahead step is queued.
			s := seqs[0]
			last := (s.len - 1) / bs
			dst := alloc.free[0]
			alloc.free = alloc.free[1:]
			for _, br := range []*BatchRunner{la, ref} {
				if err := br.CopyBlock(dst, s.tab[last]); err != nil {
					t.Fatal(err)
				}
			}
			s.tab = append(append([]int32(nil), s.tab[:last]...), dst)
		}
		run(fmt.Sprintf("decode of 4 after, step %d", step), seqs, greedy(seqs), step == 8)
	}
	// Three of them (bucket 4, one padding token), then one (bucket 1).
	seqs = seqs[1:]
	for step := range 6 {
		run(fmt.Sprintf("decode of 3, step %d", step), seqs, greedy(seqs), step == 4)
	}
	seqs = seqs[:1]
	for step := range 10 {
		run(fmt.Sprintf("decode of 1, step %d", step), seqs, greedy(seqs), step == 6)
	}
	st, sr := la.Stats(), ref.Stats()
	t.Logf("%d batches; lookahead: %d taken, %d discarded; logits compared %d times; graph steps %d (without: %d)",
		steps, st.LookaheadHits, st.LookaheadMisses, logitsChecked, st.GraphSteps, sr.GraphSteps)
	if st.GraphSteps != sr.GraphSteps || sr.LookaheadHits+sr.LookaheadMisses != 0 {
		t.Errorf("graph steps %d and %d; the runner without lookahead counted %d/%d", st.GraphSteps, sr.GraphSteps, sr.LookaheadHits, sr.LookaheadMisses)
	}
	if st.LookaheadHits < 20 || st.LookaheadMisses < 2 {
		t.Errorf("lookahead steps taken %d, discarded %d: want at least 20 and 2", st.LookaheadHits, st.LookaheadMisses)
	}
}
