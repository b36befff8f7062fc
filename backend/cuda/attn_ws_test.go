package cuda

// The extended attention kernels (sliding windows and sinks: the _ws
// variants of kernels/attn_paged.cuh and attn_prefill.cuh) against a
// float64 reference, on the GPU.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refAttnOpt is refAttn with a scale, a window (0: none; the query at pos
// attends to the positions pos-window+1..pos) and sinks (nil: none; a
// logit a query head in each softmax's denominator).
func (p *pagedPool) refAttnOpt(q []float32, pos int, tab []int32, h int, scale float64, window int, sinks []float32) []float32 {
	hd, group := p.hd, h/p.kvh
	out := make([]float32, h*hd)
	lo := 0
	if window > 0 {
		lo = max(0, pos-window+1)
	}
	s := make([]float64, pos+1)
	for hh := range h {
		g := hh / group
		qh := q[hh*hd : (hh+1)*hd]
		mx := math.Inf(-1)
		for j := lo; j <= pos; j++ {
			k := p.k[p.off(tab, j, g):]
			var d float64
			for i := range hd {
				d += float64(qh[i]) * float64(k[i])
			}
			s[j] = d * scale
			mx = math.Max(mx, s[j])
		}
		if sinks != nil {
			mx = math.Max(mx, float64(sinks[hh]))
		}
		var l float64
		for j := lo; j <= pos; j++ {
			s[j] = math.Exp(s[j] - mx)
			l += s[j]
		}
		if sinks != nil {
			l += math.Exp(float64(sinks[hh]) - mx)
		}
		for i := range hd {
			var o float64
			for j := lo; j <= pos; j++ {
				o += s[j] * float64(p.v[p.off(tab, j, g)+i])
			}
			out[hh*hd+i] = float32(o / l)
		}
	}
	return out
}

// poisonBefore points the entries of tab for the blocks wholly before
// position first at block poison (whose keys and values are NaN): a kernel
// that reads them, or lets them into a sum, gives NaN.
func poisonBefore(tab []int32, first, bs int, poison int32) []int32 {
	out := append([]int32(nil), tab...)
	for b := 0; b < first/bs; b++ {
		out[b] = poison
	}
	return out
}

// TestAttentionWindowSinks checks the extended attention kernels against
// the float64 reference with a sliding window and sinks (and each alone),
// a scale other than 1/sqrt(head dim), for sequences shorter and longer
// than the window: the decode kernels (queries given, fused with the
// QK-norm, RoPE and the append, and on sm_90 the cluster variant), split
// or not, and the prompt kernel, split over the keys or not, with runs
// that start before and past the window. The table entries of the blocks
// before each query's window point at a block of NaNs: the kernels must
// neither read nor sum them.
func TestAttentionWindowSinks(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(41, 41))
	sc := newParScalar()
	const eps, theta, bs = 1e-6, 1e4, 16
	for _, sh := range []struct{ hd, h, kvh int }{{64, 16, 2}, {256, 4, 1}, {128, 8, 4}, {32, 8, 2}, {64, 6, 1}} {
		for _, opt := range []struct {
			window int
			sinks  bool
		}{{100, true}, {100, false}, {0, true}, {300, true}} {
			name := fmt.Sprintf("hd%d_h%d_kv%d_w%d_sinks%v", sh.hd, sh.h, sh.kvh, opt.window, opt.sinks)
			t.Run(name, func(t *testing.T) {
				use(t, g)
				group := decodeGroup(sh.hd, sh.h/sh.kvh, true)
				pgroup := prefillGroup(sh.h / sh.kvh)
				lens := []int{1, 40, 130, 333, 1000}
				const blocks = 200
				tabs := randomTables(rng, blocks-1, bs, append(lens, 700))
				pool := newPagedPool(rng, blocks, sh.kvh, bs, sh.hd)
				poison := int32(blocks - 1)
				for gg := range sh.kvh {
					for r := range bs {
						o := ((int(poison)*sh.kvh+gg)*bs + r) * sh.hd
						for d := range sh.hd {
							pool.k[o+d], pool.v[o+d] = float32(math.NaN()), float32(math.NaN())
						}
					}
				}
				var sinks []float32
				dsinks := uint64(0)
				if opt.sinks {
					sinks = randVec(rng, sh.h, 3)
					sinks[0] = 12 // past every score: the sink dominates the softmax
					dsinks = devF32(t, g, sinks)
				}
				scale := 0.7 / math.Sqrt(float64(sh.hd))
				first := func(pos int) int { // the first position a query at pos attends to
					if opt.window > 0 {
						return max(0, pos-opt.window+1)
					}
					return 0
				}
				dK, dV := devBytes(t, g, f16Bytes(pool.k)), devBytes(t, g, f16Bytes(pool.v))
				qd := sh.h * sh.hd
				const maxns = 16
				pm, pl := devZeros(t, g, 4*8*sh.h*maxns), devZeros(t, g, 4*8*sh.h*maxns)
				pacc, counter := devZeros(t, g, 4*8*sh.h*maxns*sh.hd), devZeros(t, g, 4*8*sh.h)
				smemDec := attnFDSmem(1, 3, 256)
				cluster := true
				for _, base := range []string{"pattn_dec", "pattn_decf", "pattn_decc"} {
					k := fmt.Sprintf("%s_h%d_g%d_ws", base, sh.hd, group)
					f, err := g.fn(k)
					if err != nil && base == "pattn_decc" && g.CC < 90 {
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

				// Decode tokens at each sequence's last position, tables
				// poisoned before the window.
				nd := len(lens)
				var meta, offs []int32
				for i, tab := range tabs[:nd] {
					offs = append(offs, int32(len(meta)))
					meta = append(meta, poisonBefore(tab, first(lens[i]-1), bs, poison)...)
				}
				pos, toks := make([]int32, nd), make([]int32, nd)
				for i := range nd {
					pos[i], toks[i] = int32(lens[i]-1), int32(i)
				}
				dmeta, dpos, doff, dtoks := devBytes(t, g, i32Bytes(meta)), devBytes(t, g, i32Bytes(pos)), devBytes(t, g, i32Bytes(offs)), devBytes(t, g, i32Bytes(toks))
				q := randVec(rng, nd*qd, 1.5)
				dq, out := devF32(t, g, q), devZeros(t, g, 4*nd*qd)
				check := func(what string, got []float32, qs [][]float32) {
					t.Helper()
					for i := range nd {
						want := pool.refAttnOpt(qs[i], lens[i]-1, tabs[i], sh.h, scale, opt.window, sinks)
						if e := relL2(got[i*qd:(i+1)*qd], want); e > 1e-3 || math.IsNaN(e) {
							t.Errorf("%s, length %d: relative L2 %.3g", what, lens[i], e)
						}
					}
				}
				qs := make([][]float32, nd)
				for i := range nd {
					qs[i] = q[i*qd : (i+1)*qd]
				}
				for _, ns := range []int{1, 6} {
					for _, minchunk := range []int{64, 16} {
						for rep := range 2 { // twice: the combine counters must have reset
							zeroDev(t, g, out, 4*nd*qd)
							if err := g.launch(fmt.Sprintf("pattn_dec_h%d_g%d_ws", sh.hd, group), [3]uint32{uint32(sh.h / group), uint32(ns), uint32(nd)}, 256, uint32(smemDec),
								dq, i32(sh.h), i32(sh.kvh), 0, 0, f32(eps), 0, dtoks, dpos, doff, dmeta, i32(bs), i32(4), dK, dV, f32(float32(scale)), i32(ns), i32(minchunk),
								pm, pl, pacc, counter, out, 0, i32(opt.window), dsinks); err != nil {
								t.Fatal(err)
							}
							check(fmt.Sprintf("decode, %d splits of at least %d, rep %d", ns, minchunk, rep), getF32(t, g, out, nd*qd), qs)
						}
					}
				}

				// Fused: QK-norm, RoPE and the append here (table entries
				// from the new position's block on are real).
				qkvw := (sh.h + 2*sh.kvh) * sh.hd
				qkv := randVec(rng, nd*qkvw, 2)
				qg, kg := gainVec(rng, sh.hd), gainVec(rng, sh.hd)
				rope := devF32(t, g, ropeTable(thetaFreqs(theta, sh.hd), 1, sh.hd/2, 4096))
				dqkv, dqg, dkg := devF32(t, g, qkv), devF32(t, g, qg), devF32(t, g, kg)
				zeroDev(t, g, out, 4*nd*qd)
				if err := g.launch(fmt.Sprintf("pattn_decf_h%d_g%d_ws", sh.hd, group), [3]uint32{uint32(sh.h / group), 6, uint32(nd)}, 256, uint32(smemDec),
					dqkv, i32(sh.h), i32(sh.kvh), dqg, dkg, f32(eps), rope, 0, dpos, doff, dmeta, i32(bs), i32(-1), dK, dV, f32(float32(scale)), i32(6), i32(32),
					pm, pl, pacc, counter, out, 0, i32(opt.window), dsinks); err != nil {
					t.Fatal(err)
				}
				got := getF32(t, g, out, nd*qd)
				gk, gv := getF16(t, g, dK, len(pool.k)), getF16(t, g, dV, len(pool.v))
				ac := attnCase{hd: sh.hd, h: sh.h, kvh: sh.kvh}
				for i := range nd {
					p := lens[i] - 1
					qi, _, _ := cpuQKV(sc.Scalar, qkv[i*qkvw:(i+1)*qkvw], ac, p, qg, kg, eps, theta)
					qs[i] = qi
					for gg := range sh.kvh {
						o := pool.off(tabs[i], p, gg)
						copy(pool.k[o:o+sh.hd], gk[o:o+sh.hd])
						copy(pool.v[o:o+sh.hd], gv[o:o+sh.hd])
					}
				}
				check("fused decode", got, qs)
				if cluster {
					for _, v := range []struct{ ns, cmin, cmax int }{{8, 32, 64}, {16, 16, 8}} {
						zeroDev(t, g, out, 4*nd*qd)
						if err := g.launch(fmt.Sprintf("pattn_decc_h%d_g%d_ws", sh.hd, group), [3]uint32{uint32(sh.h / group), uint32(v.ns), uint32(nd)}, 256, uint32(smemDec),
							dqkv, i32(sh.h), i32(sh.kvh), dqg, dkg, f32(eps), rope, 0, dpos, doff, dmeta, i32(bs), i32(4), dK, dV, f32(float32(scale)), i32(v.ns), i32(v.cmin),
							pm, pl, pacc, counter, out, 0, i32(v.cmax), i32(opt.window), dsinks); err != nil {
							t.Fatal(err)
						}
						check(fmt.Sprintf("cluster decode %+v", v), getF32(t, g, out, nd*qd), qs)
					}
				}

				// Prompt runs: sequence 2 from 0 (130 tokens: past the
				// window of 100), sequence 5 from 600 (100 tokens), its
				// table poisoned before the first query's window.
				runs := []struct{ seq, pos0, n int }{{2, 0, 130}, {5, 600, 100}}
				qt := 64 / pgroup
				var ppos, ptoff, tiles, pmeta []int32
				ntok := 0
				for _, r := range runs {
					off := int32(len(pmeta))
					pmeta = append(pmeta, poisonBefore(tabs[r.seq], first(r.pos0), bs, poison)...)
					for s := 0; s < r.n; s += qt {
						tiles = append(tiles, int32(ntok+s), int32(min(qt, r.n-s)))
					}
					for i := range r.n {
						ppos = append(ppos, int32(r.pos0+i))
						ptoff = append(ptoff, off)
					}
					ntok += r.n
				}
				pq := randVec(rng, ntok*qd, 1.5)
				dpq, dppos, dptoff, dtiles, dpmeta := devF32(t, g, pq), devBytes(t, g, i32Bytes(ppos)), devBytes(t, g, i32Bytes(ptoff)), devBytes(t, g, i32Bytes(tiles)), devBytes(t, g, i32Bytes(pmeta))
				pout := devZeros(t, g, 4*ntok*qd)
				const maxps = 16
				ppm, ppl := devZeros(t, g, 4*ntok*sh.h*maxps), devZeros(t, g, 4*ntok*sh.h*maxps)
				ppacc := devZeros(t, g, 4*ntok*sh.h*maxps*sh.hd)
				var wants [][]float32
				tok := 0
				for _, r := range runs {
					for i := range r.n {
						wants = append(wants, pool.refAttnOpt(pq[tok*qd:(tok+1)*qd], r.pos0+i, tabs[r.seq], sh.h, scale, opt.window, sinks))
						tok++
					}
				}
				k := fmt.Sprintf("pattn_pre_h%d_g%d_ws", sh.hd, pgroup)
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
						dpq, dtiles, dppos, dptoff, dpmeta, i32(bs), i32(4), i32(sh.h), i32(sh.kvh), dK, dV, f32(float32(scale)),
						i32(ps), ppm, ppl, ppacc, pout, i32(opt.window), dsinks); err != nil {
						t.Fatal(err)
					}
					if ps > 1 {
						if err := g.launch(fmt.Sprintf("pattn_comb_h%d_ws", sh.hd), [3]uint32{uint32(len(tiles) / 2), uint32(sh.h)}, 256, 0,
							dtiles, dppos, i32(sh.h), i32(ps), ppm, ppl, ppacc, pout, i32(opt.window), dsinks); err != nil {
							t.Fatal(err)
						}
					}
					got := getF32(t, g, pout, ntok*qd)
					tok := 0
					for _, r := range runs {
						var worst float64
						for i := range r.n {
							e := relL2(got[tok*qd:(tok+1)*qd], wants[tok])
							if e > 1e-3 || math.IsNaN(e) {
								t.Errorf("%d splits, prompt at depth %d, token %d: relative L2 %.3g", ps, r.pos0, i, e)
							}
							worst = max(worst, e)
							tok++
						}
						t.Logf("%d splits, prompt run of %d at depth %d: worst relative L2 %.3g", ps, r.n, r.pos0, worst)
					}
				}
			})
		}
	}
}
