package vulkan

// The mixture-of-experts shaders (moe.go) against Go references: the
// experts' products over several weight formats, the routing of every
// gating, the activations with and without the experts' biases, and the
// weighted sum.

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/gguf"
)

// readF32 reads n float32s of b.
func readF32(t *testing.T, d *Device, b *Buffer, n int) []float32 {
	t.Helper()
	v := make([]float32, n)
	if err := d.Read(b, 0, F32Bytes(v)); err != nil {
		t.Fatal(err)
	}
	return v
}

// normF32 is n normal values.
func normF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// mvidCase is a dispatch of TestMulMVID: mul_mv_id's input mode, the
// weighted sums of a token's pairs or not, its flags and activation, the
// pairs a row of x serves, and the grid (0: mulMVIDGroups').
type mvidCase struct {
	mode    uint32
	combine bool
	flags   uint32
	act     uint32
	xdiv    int
	gx, gy  uint32
}

var mvidCases = []mvidCase{
	{xPlain, false, 0, 0, 1, 0, 0}, {xPlain, false, mvidAdd | mvidBias, 0, 3, 0, 0}, {xPlain, false, 0, 0, 1, 2, 3},
	{xNorm, false, 0, 0, 3, 0, 0}, {xNorm, false, mvidAdd, 0, 1, 1, 2},
	{xGLU, false, 0, 0, 1, 0, 0}, {xGLU, false, mvidGLUBias, 1, 1, 0, 0}, {xGLU, false, mvidBias, 2, 1, 0, 0},
	{xGLU, true, mvidAdd | mvidBias | mvidGLUBias, 1, 1, 0, 0}, {xGLU, true, 0, 0, 1, 1, 1},
}

// TestMulMVID runs mul_mv_id over a stack of 5 experts of 7 rows in
// several formats (and specializations, in one case), for 6 or 7 pairs (with a clamped
// id out of range), in each input mode, with and without the weighted
// sums of a token's 3 pairs and the biases, and with fewer workgroups
// than tiles and items: within 1e-5 of the products' magnitudes, the
// padding of y untouched.
func TestMulMVID(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewPCG(21, 22))
	const E, rows, K = 5, 7, 3
	ids := []int32{3, 0, 4, 4, 1, 7, 2} // 7: clamped to 4
	ibuf := upload(t, d, I32Bytes(ids))
	wts := normF32(rng, len(ids))
	wbuf := upload(t, d, F32Bytes(wts))
	dbias := normF32(rng, E*rows)
	dbuf := upload(t, d, F32Bytes(dbias))
	for _, typ := range []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorQ4_K, gguf.TensorMXFP4} {
		t.Run(typ.String(), func(t *testing.T) {
			cols := testCols(typ)
			xstride := 2*cols + 8
			w := newWeightMatrix(t, d, rng, typ, E*rows, cols)
			x := normF32(rng, len(ids)*xstride)
			for i := range x {
				x[i] *= 4 // into swiglu_oai's clamps
			}
			gain, gb, ub := normF32(rng, cols), normF32(rng, E*cols), normF32(rng, E*cols)
			xbuf, gbuf := upload(t, d, F32Bytes(x)), upload(t, d, F32Bytes(gain))
			gbbuf, ubbuf := upload(t, d, F32Bytes(gb)), upload(t, d, F32Bytes(ub))
			const eps = 1e-5
			acts := []func(g, u float64) float64{
				func(g, u float64) float64 { return g / (1 + math.Exp(-g)) * u },
				func(g, u float64) float64 {
					g, u = min(g, 7), max(min(u, 7), -7)
					return g / (1 + math.Exp(-1.702*g)) * (u + 1)
				},
				func(g, u float64) float64 { return g / (1 + math.Exp(-2*0.7978845608028654*(g+0.044715*g*g*g))) * u },
			}
			// input is pair q's x_q of case c.
			input := func(c mvidCase, q int) []float64 {
				in := make([]float64, cols)
				e := min(int(ids[q]), E-1)
				switch c.mode {
				case xPlain, xNorm:
					row := x[(q/c.xdiv)*cols : (q/c.xdiv+1)*cols]
					var ss float64
					for i, v := range row {
						in[i] = float64(v)
						ss += float64(v) * float64(v)
					}
					if c.mode == xNorm {
						f := 1 / math.Sqrt(ss/float64(cols)+eps)
						for i := range in {
							in[i] *= f * float64(gain[i])
						}
					}
				case xGLU:
					for i := range in {
						g, u := float64(x[q*xstride+i]), float64(x[q*xstride+cols+i])
						if c.flags&mvidGLUBias != 0 {
							g += float64(gb[e*cols+i])
							u += float64(ub[e*cols+i])
						}
						in[i] = acts[c.act](g, u)
					}
				}
				return in
			}
			spec := mulMVSpecRows(d.SubgroupSize, rows, 1)
			for si, sp := range [][2]uint32{{spec[0], spec[1]}, {64, 4}, {d.SubgroupSize, 1}} {
				for ci, c := range mvidCases {
					if si > 0 && (typ != gguf.TensorQ8_0 || ci != 8) { // other shapes: one case (pipelines compile slowly on lavapipe)
						continue
					}
					n, ldy := len(ids), rows+2
					comb := uint32(0)
					if c.combine {
						n, comb = 2, 1
					}
					y0 := normF32(rng, (n+1)*ldy) // one item more: untouched
					ybuf := upload(t, d, F32Bytes(y0))
					p, err := d.Pipeline("mul_mv_id_"+weightTypes[typ], sp[0], sp[1], c.mode, comb)
					if err != nil {
						t.Fatal(err)
					}
					push := pushMulMVID{W: w.buf.Addr(), X: xbuf.Addr(), Y: ybuf.Addr(), IDs: ibuf.Addr(), Gain: gbuf.Addr(), Wts: wbuf.Addr(),
						GBias: gbbuf.Addr(), UBias: ubbuf.Addr(), DBias: dbuf.Addr(), Rows: rows, Cols: uint32(cols), N: uint32(n),
						RowBytes: uint32(w.rowBytes), XDiv: uint32(c.xdiv), LDY: uint32(ldy), Experts: E, XStride: uint32(xstride),
						Act: c.act, K: K, Flags: c.flags, Eps: eps}
					gx, gy := mulMVIDGroups(rows, n, sp[1])
					if c.gx != 0 {
						gx, gy = c.gx, c.gy
					}
					dispatchOnce(t, d, p, gx, gy, 1, PushBytes(&push))
					y := readF32(t, d, ybuf, len(y0))
					for it := range n + 1 {
						for row := range ldy {
							i := it*ldy + row
							if it == n || row >= rows {
								if y[i] != y0[i] {
									t.Fatalf("%v %+v: y[item %d, %d] (outside) changed", sp, c, it, row)
								}
								continue
							}
							var want, mag float64
							if c.flags&mvidAdd != 0 {
								want, mag = float64(y0[i]), math.Abs(float64(y0[i]))
							}
							qs, wq := []int{it}, []float64{1}
							if c.combine {
								qs, wq = []int{it * K, it*K + 1, it*K + 2}, []float64{float64(wts[it*K]), float64(wts[it*K+1]), float64(wts[it*K+2])}
							}
							for j, q := range qs {
								e := min(int(ids[q]), E-1)
								in := input(c, q)
								wr := w.values[(e*rows+row)*cols:]
								var dot float64
								for k := range cols {
									pr := float64(wr[k]) * in[k]
									dot += pr
									mag += math.Abs(pr * wq[j])
								}
								if c.flags&mvidBias != 0 {
									dot += float64(dbias[e*rows+row])
									mag += math.Abs(float64(dbias[e*rows+row]) * wq[j])
								}
								want += wq[j] * dot
							}
							if diff := math.Abs(float64(y[i]) - want); !(diff <= 1e-5*mag+1e-30) {
								t.Fatalf("%v %+v: y[item %d, row %d] = %g, want %g (error %.3g of %.3g)", sp, c, it, row, y[i], want, diff, mag)
							}
						}
					}
				}
			}
		})
	}
}

// routeRef is backend/forward's routing of one token's scores: the k
// best, the lowest index first among equals, and their weights in
// float64.
func routeRef(scores []float32, k int, norm bool) ([]int32, []float64) {
	idx := make([]int32, 0, k)
	for range k {
		best := -1
		for e, s := range scores {
			taken := false
			for _, j := range idx {
				taken = taken || int(j) == e
			}
			if !taken && (best < 0 || s > scores[best]) {
				best = e
			}
		}
		idx = append(idx, int32(best))
	}
	top := float64(scores[idx[0]])
	var total float64
	if norm {
		for _, e := range idx {
			total += math.Exp(float64(scores[e]) - top)
		}
	} else {
		for _, s := range scores {
			total += math.Exp(float64(s) - top)
		}
	}
	w := make([]float64, k)
	for j, e := range idx {
		w[j] = math.Exp(float64(scores[e])-top) / total
	}
	return idx, w
}

// TestMoERoute runs moe_route for 70 tokens (two workgroups) of 11
// experts, 3 a token, with ties, with and without the router's bias and
// the renormalization, and for 1 of 1 and 32 of 40 (its most).
func TestMoERoute(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for _, c := range []struct{ n, experts, k int }{{70, 11, 3}, {3, 1, 1}, {5, 40, 32}} {
		for flags := range uint32(4) {
			logits := normF32(rng, c.n*c.experts)
			for i := 0; i+1 < len(logits); i += 5 { // ties
				logits[i+1] = logits[i]
			}
			bias := normF32(rng, c.experts)
			lbuf, bbuf := upload(t, d, F32Bytes(logits)), upload(t, d, F32Bytes(bias))
			ibuf, wbuf := upload(t, d, make([]byte, 4*c.n*c.k)), upload(t, d, make([]byte, 4*c.n*c.k))
			p, err := d.Pipeline("moe_route", 64)
			if err != nil {
				t.Fatal(err)
			}
			push := pushMoERoute{Logits: lbuf.Addr(), Bias: bbuf.Addr(), IDs: ibuf.Addr(), Wts: wbuf.Addr(),
				N: uint32(c.n), Experts: uint32(c.experts), K: uint32(c.k), Flags: flags}
			gx, gy := groups2D(c.n, 64)
			dispatchOnce(t, d, p, gx, gy, 1, PushBytes(&push))
			ids := make([]int32, c.n*c.k)
			if err := d.Read(ibuf, 0, I32Bytes(ids)); err != nil {
				t.Fatal(err)
			}
			wts := readF32(t, d, wbuf, c.n*c.k)
			for tok := range c.n {
				s := append([]float32(nil), logits[tok*c.experts:(tok+1)*c.experts]...)
				if flags&moeRouteBias != 0 {
					for e := range s {
						s[e] += bias[e]
					}
				}
				wi, ww := routeRef(s, c.k, flags&moeRouteNorm != 0)
				for j := range c.k {
					q := tok*c.k + j
					if ids[q] != wi[j] || !(math.Abs(float64(wts[q])-ww[j]) <= 1e-6) {
						t.Fatalf("%+v flags %d: token %d slot %d: expert %d weight %g, want %d %g", c, flags, tok, j, ids[q], wts[q], wi[j], ww[j])
					}
				}
			}
		}
	}
}

// TestMoEGLUCombine runs moe_glu (each activation, with and without the
// experts' biases) and moe_combine (stored and added, with and without
// the down biases) on 3 tokens of 2 slots against float64.
func TestMoEGLUCombine(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewPCG(25, 26))
	const n, k, E, F, H = 3, 2, 4, 37, 45
	pairs := n * k
	ids := []int32{2, 0, 3, 3, 1, 2}
	ibuf := upload(t, d, I32Bytes(ids))
	gu := normF32(rng, pairs*2*F)
	for i := range gu {
		gu[i] *= 4 // into swiglu_oai's clamps
	}
	gb, ub := normF32(rng, E*F), normF32(rng, E*F)
	gubuf, gbbuf, ubbuf := upload(t, d, F32Bytes(gu)), upload(t, d, F32Bytes(gb)), upload(t, d, F32Bytes(ub))
	acts := map[uint32]func(g, u float64) float64{
		0: func(g, u float64) float64 { return g / (1 + math.Exp(-g)) * u },
		1: func(g, u float64) float64 {
			g, u = min(g, 7), max(min(u, 7), -7)
			return g / (1 + math.Exp(-1.702*g)) * (u + 1)
		},
		2: func(g, u float64) float64 {
			return g / (1 + math.Exp(-2*0.7978845608028654*(g+0.044715*g*g*g))) * u
		},
	}
	for act, f := range acts {
		for hasBias := range uint32(2) {
			out := upload(t, d, make([]byte, 4*pairs*F))
			p, err := d.Pipeline("moe_glu", elementWG)
			if err != nil {
				t.Fatal(err)
			}
			push := pushMoEGLU{Out: out.Addr(), GU: gubuf.Addr(), IDs: ibuf.Addr(), GBias: gbbuf.Addr(), UBias: ubbuf.Addr(),
				N: uint32(pairs * F), Width: F, Stride: 2 * F, Act: act, HasBias: hasBias, Experts: E}
			gx, gy := groups2D(pairs*F, elementWG)
			dispatchOnce(t, d, p, gx, gy, 1, PushBytes(&push))
			got := readF32(t, d, out, pairs*F)
			for q := range pairs {
				for i := range F {
					g, u := float64(gu[q*2*F+i]), float64(gu[q*2*F+F+i])
					if hasBias != 0 {
						g += float64(gb[int(ids[q])*F+i])
						u += float64(ub[int(ids[q])*F+i])
					}
					want := f(g, u)
					if diff := math.Abs(float64(got[q*F+i]) - want); !(diff <= 1e-5*(1+math.Abs(want))) {
						t.Fatalf("act %d bias %d: pair %d value %d = %g, want %g", act, hasBias, q, i, got[q*F+i], want)
					}
				}
			}
		}
	}
	y, wts, db := normF32(rng, pairs*H), normF32(rng, pairs), normF32(rng, E*H)
	ybuf, wbuf, dbbuf := upload(t, d, F32Bytes(y)), upload(t, d, F32Bytes(wts)), upload(t, d, F32Bytes(db))
	for flags := range uint32(4) {
		x0 := normF32(rng, n*H)
		xbuf := upload(t, d, F32Bytes(x0))
		p, err := d.Pipeline("moe_combine", elementWG)
		if err != nil {
			t.Fatal(err)
		}
		push := pushMoECombine{X: xbuf.Addr(), Y: ybuf.Addr(), IDs: ibuf.Addr(), Wts: wbuf.Addr(), Bias: dbbuf.Addr(),
			N: n * H, Hidden: H, K: k, Flags: flags, Experts: E}
		gx, gy := groups2D(n*H, elementWG)
		dispatchOnce(t, d, p, gx, gy, 1, PushBytes(&push))
		got := readF32(t, d, xbuf, n*H)
		for tok := range n {
			for c := range H {
				var want, mag float64
				if flags&moeCombineAdd != 0 {
					want = float64(x0[tok*H+c])
					mag = math.Abs(want)
				}
				for j := range k {
					q := tok*k + j
					v := float64(y[q*H+c])
					if flags&moeCombineBias != 0 {
						v += float64(db[int(ids[q])*H+c])
					}
					want += float64(wts[q]) * v
					mag += math.Abs(float64(wts[q]) * v)
				}
				if diff := math.Abs(float64(got[tok*H+c]) - want); !(diff <= 1e-6*mag+1e-30) {
					t.Fatalf("combine flags %d: token %d value %d = %g, want %g", flags, tok, c, got[tok*H+c], want)
				}
			}
		}
	}
}

// TestMulMMID groups 150 pairs of 6 experts (one never chosen, one id out
// of range) with moe_group and runs mul_mm_id over the tiles in several
// formats, each token's input serving 3 pairs, with its grid and with
// fewer workgroups (they stride): every pair listed once in a tile of its
// expert, and the products within 1e-5 of their magnitudes, with
// mulMMSpec's tiles and, in Q8_0, mulMMIDSpec's halved ones; and so
// mul_mv_idg over tiles of 7 pairs (checkMulMVIDG).
func TestMulMMID(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewPCG(27, 28))
	const E, rows, pairs, xdiv = 6, 19, 150, 3
	ids := make([]int32, pairs)
	for i := range ids {
		ids[i] = int32([]int{0, 1, 1, 3, 4, 5, 5, 5}[rng.IntN(8)])
	}
	ids[7] = 9 // clamped to 5
	ibuf := upload(t, d, I32Bytes(ids))
	full := mulMMSpec(d.SubgroupSize, d.SharedMemory)
	half := full
	half[mmBN], half[mmLocal] = half[mmBN]/2, half[mmLocal]/2 // mulMMIDSpec's smaller tiles
	for _, c := range []struct {
		avg  int
		want [6]uint32
	}{{int(full[mmBN]) / 2, half}, {int(full[mmBN])/2 + 1, full}} {
		if got := mulMMIDSpec(d, c.avg*E, E); got != c.want {
			t.Errorf("mulMMIDSpec for %d pairs an expert: %v, want %v", c.avg, got, c.want)
		}
	}
	for _, tile := range []int{int(full[mmBN]), int(half[mmBN]), 7} {
		spec := full
		if tile == int(half[mmBN]) {
			spec = half
		}
		nt := moeTileBound(pairs, E, tile)
		obuf, tbuf := upload(t, d, make([]byte, 4*pairs)), upload(t, d, I32Bytes(make([]int32, 3*nt)))
		p, err := d.Pipeline("moe_group", 256)
		if err != nil {
			t.Fatal(err)
		}
		push := pushMoEGroup{IDs: ibuf.Addr(), Order: obuf.Addr(), Tiles: tbuf.Addr(), Pairs: pairs, Experts: E, Tile: uint32(tile), NTiles: uint32(nt)}
		dispatchOnce(t, d, p, 1, 1, 1, PushBytes(&push))
		order, tiles := make([]int32, pairs), make([]int32, 3*nt)
		if err := d.Read(obuf, 0, I32Bytes(order)); err != nil {
			t.Fatal(err)
		}
		if err := d.Read(tbuf, 0, I32Bytes(tiles)); err != nil {
			t.Fatal(err)
		}
		seen := make([]int, pairs)
		for k := range nt {
			e, first, n := tiles[3*k], int(tiles[3*k+1]), int(tiles[3*k+2])
			if n < 0 || n > tile || first < 0 || first+n > pairs {
				t.Fatalf("tile %d: %d pairs from %d (tiles of %d)", k, n, first, tile)
			}
			for _, q := range order[first : first+n] {
				seen[q]++
				if min(ids[q], E-1) != e {
					t.Fatalf("tile %d of expert %d lists pair %d of expert %d", k, e, q, ids[q])
				}
			}
		}
		for q, c := range seen {
			if c != 1 {
				t.Fatalf("tiles of %d: pair %d listed %d times", tile, q, c)
			}
		}
		if tile == 7 {
			checkMulMVIDG(t, d, rng, ibuf, obuf, tbuf, ids, E, nt)
			continue
		}
		types := []gguf.TensorType{gguf.TensorQ8_0, gguf.TensorQ4_K, gguf.TensorMXFP4}
		if spec == half {
			types = types[:1]
		}
		for _, typ := range types {
			cols := testCols(typ)
			w := newWeightMatrix(t, d, rng, typ, E*rows, cols)
			x := normF32(rng, pairs/xdiv*cols)
			xbuf := upload(t, d, F32Bytes(x))
			pl, err := d.Pipeline("mul_mm_id_"+weightTypes[typ], spec[:]...)
			if err != nil {
				t.Fatal(err)
			}
			for _, grid := range [][2]uint32{{groups(rows, int(spec[mmBM])), uint32(nt)}, {1, 2}} {
				ldy := rows + 1
				y0 := normF32(rng, pairs*ldy)
				ybuf := upload(t, d, F32Bytes(y0))
				push := pushMulMMID{W: w.buf.Addr(), X: xbuf.Addr(), Y: ybuf.Addr(), Order: obuf.Addr(), Tiles: tbuf.Addr(), Rows: rows,
					Cols: uint32(cols), RowBytes: uint32(w.rowBytes), XDiv: xdiv, LDY: uint32(ldy), NTiles: uint32(nt), Experts: E}
				dispatchOnce(t, d, pl, grid[0], grid[1], 1, PushBytes(&push))
				y := readF32(t, d, ybuf, len(y0))
				for q := range pairs {
					e := min(int(ids[q]), E-1)
					xr := x[(q/xdiv)*cols : (q/xdiv+1)*cols]
					for row := range ldy {
						i := q*ldy + row
						if row >= rows {
							if y[i] != y0[i] {
								t.Fatalf("%s %v: y[pair %d, %d] (padding) changed", typ, grid, q, row)
							}
							continue
						}
						var want, mag float64
						wr := w.values[(e*rows+row)*cols:]
						for k := range cols {
							pr := float64(wr[k]) * float64(xr[k])
							want += pr
							mag += math.Abs(pr)
						}
						if diff := math.Abs(float64(y[i]) - want); !(diff <= 1e-5*mag+1e-30) {
							t.Fatalf("%s %v: y[pair %d, row %d] = %g, want %g (error %.3g of %.3g)", typ, grid, q, row, y[i], want, diff, mag)
						}
					}
				}
			}
		}
	}
}

// checkMulMVIDG runs mul_mv_idg (tiles of 8) over moe_group's tiles of 7
// of ids's pairs (order, tiles) in Q4_K, with the input of each
// pair's token (3 pairs a token) as it is and normalized, and with its
// grid and fewer workgroups: within 1e-5 of the products' magnitudes.
func checkMulMVIDG(t *testing.T, d *Device, rng *rand.Rand, ibuf, obuf, tbuf *Buffer, ids []int32, E, nt int) {
	t.Helper()
	const rows, xdiv, eps = 13, 3, 1e-5
	pairs := len(ids)
	for _, typ := range []gguf.TensorType{gguf.TensorQ4_K} {
		cols := testCols(typ)
		w := newWeightMatrix(t, d, rng, typ, E*rows, cols)
		x, gain := normF32(rng, pairs/xdiv*cols), normF32(rng, cols)
		xbuf, gbuf := upload(t, d, F32Bytes(x)), upload(t, d, F32Bytes(gain))
		spec := mulMVSpecRows(d.SubgroupSize, rows, moeMVTile)
		for _, mode := range []uint32{xPlain, xNorm} {
			pl, err := d.Pipeline("mul_mv_idg_"+weightTypes[typ], spec[0], spec[1], mode, moeMVTile)
			if err != nil {
				t.Fatal(err)
			}
			for _, grid := range [][2]uint32{{groups(rows, int(spec[1])), uint32(nt)}, {2, 3}} {
				ldy := rows + 1
				y0 := normF32(rng, pairs*ldy)
				ybuf := upload(t, d, F32Bytes(y0))
				push := pushMulMVIDG{W: w.buf.Addr(), X: xbuf.Addr(), Y: ybuf.Addr(), Order: obuf.Addr(), Tiles: tbuf.Addr(), Gain: gbuf.Addr(),
					GBias: gbuf.Addr(), UBias: gbuf.Addr(), Rows: rows, Cols: uint32(cols), RowBytes: uint32(w.rowBytes), XDiv: xdiv,
					LDY: uint32(ldy), NTiles: uint32(nt), Experts: uint32(E), Eps: eps}
				dispatchOnce(t, d, pl, grid[0], grid[1], 1, PushBytes(&push))
				y := readF32(t, d, ybuf, len(y0))
				for q := range pairs {
					e := min(int(ids[q]), E-1)
					xr := x[(q/xdiv)*cols : (q/xdiv+1)*cols]
					f, ss := 1.0, 0.0
					if mode == xNorm {
						for _, v := range xr {
							ss += float64(v) * float64(v)
						}
						f = 1 / math.Sqrt(ss/float64(cols)+eps)
					}
					for row := range ldy {
						i := q*ldy + row
						if row >= rows {
							if y[i] != y0[i] {
								t.Fatalf("mul_mv_idg %s mode %d %v: y[pair %d, %d] (padding) changed", typ, mode, grid, q, row)
							}
							continue
						}
						var want, mag float64
						wr := w.values[(e*rows+row)*cols:]
						for k := range cols {
							in := float64(xr[k])
							if mode == xNorm {
								in *= f * float64(gain[k])
							}
							pr := float64(wr[k]) * in
							want += pr
							mag += math.Abs(pr)
						}
						if diff := math.Abs(float64(y[i]) - want); !(diff <= 1e-5*mag+1e-30) {
							t.Fatalf("mul_mv_idg %s mode %d %v: y[pair %d, row %d] = %g, want %g (error %.3g of %.3g)", typ, mode, grid, q, row, y[i], want, diff, mag)
						}
					}
				}
			}
		}
	}
}

// TestMoEPushBlocks checks, without a device, the mixture-of-experts
// shaders' push blocks (one variant of each weight shader) against the Go
// structs that mirror them, as TestOpsPushBlocks checks the others'.
func TestMoEPushBlocks(t *testing.T) {
	for _, c := range []struct {
		shader string
		push   any
	}{
		{"moe_route", pushMoERoute{}},
		{"moe_group", pushMoEGroup{}},
		{"moe_glu", pushMoEGLU{}},
		{"moe_combine", pushMoECombine{}},
		{"mul_mv_id_q8_0", pushMulMVID{}},
		{"mul_mv_idg_q8_0", pushMulMVIDG{}},
		{"mul_mm_id_q8_0", pushMulMMID{}},
	} {
		checkPushBlock(t, c.shader, c.push)
	}
}
