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

// TestMulMVID runs mul_mv_id over a stack of 5 experts of 7 rows in
// several formats, for 7 pairs (with a clamped id out of range), each
// token's input serving 1 or 3 pairs, and with fewer workgroups than
// tiles and pairs: within 1e-5 of the products' magnitudes, the padding
// of y untouched.
func TestMulMVID(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewPCG(21, 22))
	const E, rows, pairs = 5, 7, 7
	for _, typ := range []gguf.TensorType{gguf.TensorF16, gguf.TensorQ8_0, gguf.TensorQ4_K, gguf.TensorMXFP4, gguf.TensorQ6_K} {
		t.Run(typ.String(), func(t *testing.T) {
			cols := testCols(typ)
			w := newWeightMatrix(t, d, rng, typ, E*rows, cols)
			x := normF32(rng, pairs*cols)
			xbuf := upload(t, d, F32Bytes(x))
			ids := []int32{3, 0, 4, 4, 1, 7, 2} // 7: clamped to 4
			ibuf := upload(t, d, I32Bytes(ids))
			spec := mulMVSpecRows(d.SubgroupSize, rows, 1)
			for _, sp := range [][2]uint32{{spec[0], spec[1]}, {64, 4}, {d.SubgroupSize, 1}} {
				for _, c := range []struct {
					xdiv   int
					gx, gy uint32
				}{{1, 0, 0}, {3, 0, 0}, {1, 2, 3}} {
					ldy := rows + 2
					y0 := normF32(rng, pairs*ldy)
					ybuf := upload(t, d, F32Bytes(y0))
					p, err := d.Pipeline("mul_mv_id_"+weightTypes[typ], sp[0], sp[1])
					if err != nil {
						t.Fatal(err)
					}
					push := pushMulMVID{W: w.buf.Addr(), X: xbuf.Addr(), Y: ybuf.Addr(), IDs: ibuf.Addr(), Rows: rows, Cols: uint32(cols),
						Pairs: pairs, RowBytes: uint32(w.rowBytes), XDiv: uint32(c.xdiv), LDY: uint32(ldy), Experts: E}
					gx, gy := mulMVIDGroups(rows, pairs, sp[1])
					if c.gx != 0 {
						gx, gy = c.gx, c.gy
					}
					r, err := d.Begin()
					if err != nil {
						t.Fatal(err)
					}
					r.Dispatch(p, gx, gy, 1, PushBytes(&push))
					if err := d.Submit(r); err != nil {
						t.Fatal(err)
					}
					y := readF32(t, d, ybuf, len(y0))
					for q := range pairs {
						e := min(int(ids[q]), E-1)
						xr := x[(q/c.xdiv)*cols : (q/c.xdiv+1)*cols]
						for row := range ldy {
							i := q*ldy + row
							if row >= rows {
								if y[i] != y0[i] {
									t.Fatalf("%v %+v: y[pair %d, %d] (padding) changed", sp, c, q, row)
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
								t.Fatalf("%v %+v: y[pair %d, row %d] = %g, want %g (error %.3g of %.3g)", sp, c, q, row, y[i], want, diff, mag)
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
			r, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			gx, gy := groups2D(c.n, 64)
			r.Dispatch(p, gx, gy, 1, PushBytes(&push))
			if err := d.Submit(r); err != nil {
				t.Fatal(err)
			}
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
			r, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			gx, gy := groups2D(pairs*F, elementWG)
			r.Dispatch(p, gx, gy, 1, PushBytes(&push))
			if err := d.Submit(r); err != nil {
				t.Fatal(err)
			}
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
		r, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		gx, gy := groups2D(n*H, elementWG)
		r.Dispatch(p, gx, gy, 1, PushBytes(&push))
		if err := d.Submit(r); err != nil {
			t.Fatal(err)
		}
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
// expert, and the products within 1e-5 of their magnitudes.
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
	spec := mulMMSpec(d.SubgroupSize, d.SharedMemory)
	for _, tile := range []int{int(spec[mmBN]), 7} {
		nt := moeTileBound(pairs, E, tile)
		obuf, tbuf := upload(t, d, make([]byte, 4*pairs)), upload(t, d, I32Bytes(make([]int32, 3*nt)))
		p, err := d.Pipeline("moe_group", 256)
		if err != nil {
			t.Fatal(err)
		}
		push := pushMoEGroup{IDs: ibuf.Addr(), Order: obuf.Addr(), Tiles: tbuf.Addr(), Pairs: pairs, Experts: E, Tile: uint32(tile), NTiles: uint32(nt)}
		r, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		r.Dispatch(p, 1, 1, 1, PushBytes(&push))
		if err := d.Submit(r); err != nil {
			t.Fatal(err)
		}
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
		if tile != int(spec[mmBN]) {
			continue
		}
		for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorQ8_0, gguf.TensorQ4_K, gguf.TensorMXFP4} {
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
				r, err := d.Begin()
				if err != nil {
					t.Fatal(err)
				}
				r.Dispatch(pl, grid[0], grid[1], 1, PushBytes(&push))
				if err := d.Submit(r); err != nil {
					t.Fatal(err)
				}
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
