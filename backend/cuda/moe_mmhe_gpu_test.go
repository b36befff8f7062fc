package cuda

// The experts' prompt products (mmh.cuh's mmhe, every tile of
// mmheTiles) on the GPU against float64 products of the dequantized
// weights: uneven routing (experts with no pairs, with one, with more
// than a tile's), pair counts that are no multiple of a tile, stacks whose
// rows and widths are no multiple of a block's, stored and through
// SwiGLU; each pair's values the same in every tile shape and in a batch
// of half the tokens. They skip without a GPU.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/gguf"
)

// mmheHostGroup groups pairs by expert as moe_group does: grp (nact, then
// per chosen expert in increasing order e, start, count), order (each
// expert's pairs, in decreasing order: the results must not depend on
// it) and tiles (their count, then a | y << 16 for tile y of moeTile
// pairs of chosen expert a).
func mmheHostGroup(pick []int, E int) (grp, order, tiles []int32) {
	grp, tiles = []int32{0}, []int32{0}
	for e := range E {
		start := len(order)
		for p := len(pick) - 1; p >= 0; p-- {
			if pick[p] == e {
				order = append(order, int32(p))
			}
		}
		c := len(order) - start
		if c == 0 {
			continue
		}
		for y := 0; y < (c+moeTile-1)/moeTile; y++ {
			tiles = append(tiles, grp[0]|int32(y)<<16)
		}
		grp[0]++
		grp = append(grp, int32(e), int32(start), int32(c))
	}
	tiles[0] = int32(len(tiles) - 1)
	return grp, order, tiles
}

// skewedPicks returns k distinct experts of E for each of n tokens,
// expert e drawn with weight 1/(1+e)^skew (0: uniform).
func skewedPicks(rng *rand.Rand, n, E, k int, skew float64) []int {
	pick := make([]int, 0, n*k)
	w := make([]float64, E)
	for range n {
		sum := 0.0
		for e := range w {
			w[e] = math.Pow(1/float64(1+e), skew)
			sum += w[e]
		}
		for range k {
			r := rng.Float64() * sum
			e := 0
			for ; e < E-1 && (w[e] == 0 || r >= w[e]); e++ {
				r -= w[e]
			}
			for w[e] == 0 {
				e = (e + E - 1) % E
			}
			pick = append(pick, e)
			sum -= w[e]
			w[e] = 0
		}
	}
	return pick
}

// TestMoEGroupedTiles checks mmhe_<type> and its _n64 and _n96 tiles for
// the expert types of gpt-oss-20b (MXFP4) and Qwen3-30B-A3B (Q4_K, Q6_K;
// Q8_0), against float64 products of the dequantized
// experts and the tokens' activations: f16 weights and activations, so
// within 2e-3 (relative L2) as TestQuantKernels' mmh.
func TestMoEGroupedTiles(t *testing.T) {
	g := testDevice(t)
	const eps = 1e-6
	cases := []struct {
		E, k, n int
		skew    float64
	}{
		{4, 2, 100, 1.5},  // 200 pairs, most to expert 0: tiles of 1 to 5 of 32
		{32, 4, 200, 2.5}, // 800 pairs: idle experts, experts of one pair, of 200
		{8, 8, 150, 0},    // every expert every token: 150 pairs each
	}
	for _, typ := range []gguf.TensorType{gguf.TensorMXFP4, gguf.TensorQ4_K, gguf.TensorQ6_K, gguf.TensorQ8_0} {
		// M (an expert's rows) a multiple of 16 (SwiGLU's row groups), not
		// of 128; K not of 128 for the formats of 32 values a block.
		M, K := 160, 320
		if formatOf(typ).qk == 256 {
			K = 512
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/E%d_k%d_n%d", typ, c.E, c.k, c.n), func(t *testing.T) {
				use(t, g)
				rng := rand.New(rand.NewPCG(uint64(typ), uint64(c.E*1000+c.n)))
				data := randomBlocks(rng, typ, c.E*M, K)
				odd := 0 // each expert's first odd rows: MXFP4 blocks of other exponents
				if typ == gguf.TensorMXFP4 {
					// Large exponents (mmh_deq_h's two products) and small
					// ones (subnormal halves, which q_deq_h flushed), in
					// rows of their own: their products dwarf the others'.
					odd = 16
					bs, nb := formatOf(typ).bytes, K/32
					for r := 0; r < c.E*M; r++ {
						for b := 0; b < nb && r%M < odd; b++ {
							if e := &data[(r*nb+b)*bs]; b%3 == 0 {
								*e = byte(129 + b%4)
							} else if b%3 == 1 {
								*e = byte(89 + b%15)
							}
						}
					}
				}
				w := &backend.Weight{Name: "experts", Type: typ, Rows: c.E * M, Cols: K, Data: data}
				W := dequant(t, w)
				r := &Model{dev: g}
				gw, err := r.uploadWeight(w)
				if err != nil {
					t.Fatal(err)
				}
				x := randVec(rng, c.n*K, 2)
				dx := devF32(t, g, x)
				xh, hs := devZeros(t, g, 2*c.n*K), devZeros(t, g, 4*c.n)
				if err := g.launch("qact_h", [3]uint32{uint32(c.n)}, 256, 0, dx, i32(K), i32(K), uint64(0), f32(eps), xh, hs); err != nil {
					t.Fatal(err)
				}
				pick := skewedPicks(rng, c.n, c.E, c.k, c.skew)
				ref := make([]float32, len(pick)*M)
				for p, e := range pick {
					copy(ref[p*M:], refProduct(W[e*M*K:(e+1)*M*K], M, K, x[p/c.k*K:(p/c.k+1)*K], 1))
				}
				glu := make([]float32, len(pick)*M/2)
				for i := range glu {
					p, o := i/(M/2), i%(M/2)
					row := p*M + o/8*16 + o%8
					glu[i] = swiglu(ref[row:row+1], ref[row+8:row+9])[0]
				}
				// run multiplies the pairs of the first n tokens with tile tl,
				// storing (or SwiGLU) into a fresh Y, and returns it.
				run := func(tl mmheTile, n int, kind string) []float32 {
					t.Helper()
					grp, order, tiles := mmheHostGroup(pick[:n*c.k], c.E)
					ldy := M
					if kind == "swiglu" {
						ldy = M / 2
					}
					nan := make([]byte, 4*n*c.k*ldy)
					for i := range nan {
						nan[i] = 0xff
					}
					dy, dgrp, dorder, dtiles := devBytes(t, g, nan), devBytes(t, g, i32Bytes(grp)), devBytes(t, g, i32Bytes(order)), devBytes(t, g, i32Bytes(tiles))
					name := "mmhe_" + formatOf(typ).name + tl.suffix
					fn, err := g.fn(name)
					if err != nil {
						t.Fatal(err)
					}
					if err := g.allowSmem(fn, name, tl.smem()); err != nil {
						t.Fatal(err)
					}
					grid := [3]uint32{uint32((M + tl.bm - 1) / tl.bm), uint32((n*c.k+moeTile-1)/moeTile + min(c.E, n*c.k))}
					if err := g.launch(name, grid, 256, uint32(tl.smem()), gw.lo, gw.hi, gw.m0, gw.m1, i32(M), i32(M), i32(K), xh, hs, i32(n),
						dy, i32(ldy), i32(ldy), i32(epOf(kind)), dgrp, dtiles, dorder, i32(c.k)); err != nil {
						t.Fatal(err)
					}
					if err := g.sync(name); err != nil {
						t.Fatal(err)
					}
					return getF32(t, g, dy, n*c.k*ldy)
				}
				// check compares the rows (of ld a pair) below lim and the
				// others apart.
				check := func(what string, got, want []float32, ld, lim int) {
					t.Helper()
					var g, w [2][]float32
					for i := range want {
						j := 0
						if i%ld < lim {
							j = 1
						}
						g[j], w[j] = append(g[j], got[i]), append(w[j], want[i])
					}
					for j, part := range []string{"", fmt.Sprintf(" (rows below %d)", lim)} {
						if e := relL2(g[j], w[j]); len(w[j]) > 0 && (e > 2e-3 || math.IsNaN(e)) {
							t.Errorf("%s%s: relative L2 %.3g", what, part, e)
						}
					}
				}
				var first []float32
				for _, tl := range mmheTiles {
					desc := "mmhe" + tl.suffix
					y := run(tl, c.n, "store")
					check(desc+" store", y, ref, M, odd)
					if first == nil {
						first = y
					} else if e := relL2(y, first); e > 1e-6 || math.IsNaN(e) {
						t.Errorf("%s store: relative L2 %.3g from mmhe's: a pair's values depend on the tile", desc, e)
					}
					check(desc+" swiglu", run(tl, c.n, "swiglu"), glu, M/2, odd/2)
					// Half the tokens: other tiles, other places in them.
					h := c.n / 2
					if e := relL2(run(tl, h, "store"), y[:h*c.k*M]); e > 1e-6 || math.IsNaN(e) {
						t.Errorf("%s store, %d of the %d tokens: relative L2 %.3g from the whole batch's", desc, h, c.n, e)
					}
				}
			})
		}
	}
}

// TestMMHEFor checks, without a GPU, mmhe's tiles and the choice among
// them: BN a multiple of moe_group's tiles, shared memory within a
// Hopper block's 227 KiB, mmh's b32 tile for the first, gpt-oss-20b's and
// Qwen3-30B-A3B's prompts of 512 tokens on the tiles their comments name,
// and never a narrower tile for more pairs an expert.
func TestMMHEFor(t *testing.T) {
	t.Parallel()
	for _, tl := range mmheTiles {
		if tl.bn%moeTile != 0 || tl.bm%16 != 0 || tl.smem() > 227<<10 {
			t.Errorf("tile %+v: BN not a multiple of %d, BM of 16, or shared memory %d past 227 KiB", tl, moeTile, tl.smem())
		}
	}
	if mmheTiles[0].smem() != mmhSmem(false) {
		t.Errorf("mmhe's b32 tile takes %d bytes of shared memory, mmh's %d", mmheTiles[0].smem(), mmhSmem(false))
	}
	for _, c := range []struct {
		n, E, k int
		want    string
	}{{512, 32, 4, "_n96"}, {512, 128, 8, ""}, {32, 32, 4, ""}, {384, 32, 4, "_n64"}, {2048, 32, 4, "_n96"}, {2048, 128, 8, "_n96"}} {
		if got := mmheFor(c.n*c.k, min(c.E, c.n*c.k)); got.suffix != c.want {
			t.Errorf("%d tokens, %d of %d experts: mmhe%s, want mmhe%s", c.n, c.k, c.E, got.suffix, c.want)
		}
	}
	prev := 0
	for pairs := 1; pairs <= 32*1024; pairs *= 2 {
		if bn := mmheFor(pairs, min(32, pairs)).bn; bn < prev {
			t.Errorf("%d pairs over 32 experts: %d pairs a tile, fewer than %d for fewer pairs", pairs, bn, prev)
		} else {
			prev = bn
		}
	}
}
