package cuda

// The per-row kernels of the options (kernels/rows.cuh, moe_combine_x)
// against the CPU's operations, on the GPU.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/scalar"
	"inferno/gguf"
)

// TestRowsKernels checks scale_rows (the embedding's scale), resid_rows
// (a product's output joining the residual stream: with a bias, a
// post-norm, both, and the bias alone) and glu_rows (each gated
// activation of raw interleaved gate/up rows, with and without experts'
// biases) against the scalar backend's operations, and moe_combine_x
// (down biases, store or add) against its definition.
func TestRowsKernels(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(51, 51))
	sc := scalar.NewScalar()
	const n, K, eps = 5, 544, 1e-6
	x := randVec(rng, n*K, 2)
	y := randVec(rng, n*K, 3)
	bias, gain := randVec(rng, K, 1), gainVec(rng, K)

	dx := devF32(t, g, x)
	if err := g.launch("scale_rows", [3]uint32{n}, 256, 0, dx, i32(K), f32(33.941124)); err != nil {
		t.Fatal(err)
	}
	got := getF32(t, g, dx, n*K)
	for i := range x {
		if got[i] != x[i]*33.941124 {
			t.Fatalf("scale_rows: value %d is %v, want %v", i, got[i], x[i]*33.941124)
		}
	}

	for _, c := range []struct {
		name       string
		y, b, gain bool
	}{{"bias", true, true, false}, {"post-norm", true, false, true}, {"bias and post-norm", true, true, true}, {"bias alone", false, true, false}} {
		want := append([]float32(nil), x...)
		o := make([]float32, n*K)
		if c.y {
			copy(o, y)
		}
		for tk := range n {
			row := o[tk*K : (tk+1)*K]
			if c.b {
				for i := range row {
					row[i] += bias[i]
				}
			}
			if c.gain {
				sc.RMSNorm(row, row, gain, eps)
			}
		}
		sc.Add(want, o)
		dx, dy, db, dg := devF32(t, g, x), uint64(0), uint64(0), uint64(0)
		if c.y {
			dy = devF32(t, g, y)
		}
		if c.b {
			db = devF32(t, g, bias)
		}
		if c.gain {
			dg = devF32(t, g, gain)
		}
		if err := g.launch("resid_rows", [3]uint32{n}, 256, 0, dx, dy, db, dg, f32(eps), i32(K)); err != nil {
			t.Fatal(err)
		}
		if e := relL2(getF32(t, g, dx, n*K), want); e > 1e-6 || math.IsNaN(e) {
			t.Errorf("resid_rows, %s: relative L2 %.3g vs the CPU", c.name, e)
		}
	}

	// glu_rows: F outputs of rows of R interleaved gate/up values, over 3
	// experts' biases chosen by pick.
	const F, E = 200, 3
	R := gateUpRows(F)
	raw := randVec(rng, n*R, 4)
	raw[3] = 30 // past OpenAI's clamp: gate row 3
	raw[8] = -9 // up row 0
	gb := randVec(rng, E*R, 1)
	pick := []int32{2, 0, 1, 1, 2}
	draw, dgb, dpick := devF32(t, g, raw), devF32(t, g, gb), devBytes(t, g, i32Bytes(pick))
	for _, act := range []arch.Activation{arch.SwiGLU, arch.GeGLU, arch.SwiGLUOAI} {
		for _, withBias := range []bool{false, true} {
			want := make([]float32, n*F)
			gate, up := make([]float32, F), make([]float32, F)
			for r := range n {
				for o := range F {
					gi := o/8*16 + o%8
					gate[o], up[o] = raw[r*R+gi], raw[r*R+gi+8]
					if withBias {
						e := int(pick[r])
						gate[o] += gb[e*R+gi]
						up[o] += gb[e*R+gi+8]
					}
				}
				dst := want[r*F : (r+1)*F]
				switch act {
				case arch.GeGLU:
					sc.GeGLU(dst, gate, up)
				case arch.SwiGLUOAI:
					sc.SwiGLUOAI(dst, gate, up)
				default:
					sc.SwiGLU(dst, gate, up)
				}
			}
			dact := devZeros(t, g, 4*n*F)
			b, p := uint64(0), uint64(0)
			if withBias {
				b, p = dgb, dpick
			}
			if err := g.launch("glu_rows", [3]uint32{n, (F + 255) / 256}, 256, 0, draw, i32(R), dact, i32(F), i32(F), i32(epOf(actKind(act))), b, p); err != nil {
				t.Fatal(err)
			}
			if e := relL2(getF32(t, g, dact, n*F), want); e > 1e-5 || math.IsNaN(e) {
				t.Errorf("glu_rows, %v, biases %v: relative L2 %.3g vs the CPU", act, withBias, e)
			}
		}
	}

	// moe_combine_x: 2 experts a token, their down biases.
	const k = 2
	ys := randVec(rng, n*k*K, 1)
	wts := randVec(rng, n*k, 1)
	picks := []int32{0, 2, 1, 0, 2, 1, 1, 2, 0, 1}
	db := randVec(rng, E*K, 1)
	for _, store := range []int{0, 1} {
		want := append([]float32(nil), x...)
		for tk := range n {
			for c := range K {
				var s float32
				for j := range k {
					p := tk*k + j
					s += wts[p] * (ys[p*K+c] + db[int(picks[p])*K+c])
				}
				if store == 1 {
					want[tk*K+c] = s
				} else {
					want[tk*K+c] += s
				}
			}
		}
		dx := devF32(t, g, x)
		if err := g.launch("moe_combine_x", [3]uint32{n, (K + 255) / 256}, 256, 0, dx, i32(K), i32(k), devF32(t, g, wts), devF32(t, g, ys),
			devBytes(t, g, i32Bytes(picks)), devF32(t, g, db), i32(store)); err != nil {
			t.Fatal(err)
		}
		if e := relL2(getF32(t, g, dx, n*K), want); e > 1e-6 || math.IsNaN(e) {
			t.Errorf("moe_combine_x, store %d: relative L2 %.3g", store, e)
		}
	}
}

// gluRef returns act(g, u) as the scalar backend computes it.
func gluRef(act arch.Activation, g, u []float32) []float32 {
	sc, out := scalar.NewScalar(), make([]float32, len(g))
	switch act {
	case arch.GeGLU:
		sc.GeGLU(out, g, u)
	case arch.SwiGLUOAI:
		sc.SwiGLUOAI(out, g, u)
	default:
		sc.SwiGLU(out, g, u)
	}
	return out
}

// TestGLUEpilogues checks the GeGLU and clamped-SwiGLU epilogues of the
// kernels that take them (options.go's gluEpilogue: mvq, mmq2 and mmh for
// the block formats, mvh, mvhn and mmw for the float ones) over an
// interleaved gate/up matrix (a ragged FFN width of 100), against the
// scalar activations of the exact products (and of the products of the
// int8 activations the dp4a kernels take).
func TestGLUEpilogues(t *testing.T) {
	g := testDevice(t)
	const eps, ffn, n, K = 1e-6, 100, 40, 768
	for _, typ := range []gguf.TensorType{gguf.TensorQ4_K, gguf.TensorQ6_K, gguf.TensorQ8_0, gguf.TensorF16, gguf.TensorBF16} {
		t.Run(typ.String(), func(t *testing.T) {
			use(t, g)
			rng := rand.New(rand.NewPCG(61, uint64(typ)))
			f := formatOf(typ)
			r := &Model{dev: g, tune: defaultTuning(), grids: map[string]int{}}
			if f.float {
				if err := r.floatSetup(f, K); err != nil {
					t.Fatal(err)
				}
			}
			var gate, up *backend.Weight
			var G, U []float32
			if f.float {
				gate, G = floatWeight(rng, typ, ffn, K, -1, 0.1)
				up, U = floatWeight(rng, typ, ffn, K, -1, 0.1)
			} else {
				gate = &backend.Weight{Name: "gate", Type: typ, Rows: ffn, Cols: K, Data: randomBlocks(rng, typ, ffn, K)}
				up = &backend.Weight{Name: "up", Type: typ, Rows: ffn, Cols: K, Data: randomBlocks(rng, typ, ffn, K)}
				G, U = dequant(t, gate), dequant(t, up)
			}
			gu, err := r.uploadGateUp("gu", gate, up)
			if err != nil {
				t.Fatal(err)
			}
			x, gain := randVec(rng, n*K, 4), gainVec(rng, K)
			xn := rmsRows(x, gain, K, eps)
			dx, dg := devF32(t, g, x), devF32(t, g, gain)
			xh, hs := devZeros(t, g, 2*n*K), devZeros(t, g, 4*n)
			if err := g.launch("qact_h", [3]uint32{n}, 256, 0, dx, i32(K), i32(K), dg, f32(eps), xh, hs); err != nil {
				t.Fatal(err)
			}
			xq, xs, xsum := devZeros(t, g, n*K), devZeros(t, g, 4*n*K/32), devZeros(t, g, 4*n*K/16)
			if err := g.launch("qact8", [3]uint32{n}, 256, 0, dx, i32(K), i32(K), dg, f32(eps), xq, xs, xsum); err != nil {
				t.Fatal(err)
			}
			for _, act := range []arch.Activation{arch.GeGLU, arch.SwiGLUOAI} {
				ep := i32(epOf(actKind(act)))
				want := gluRef(act, refProduct(G, ffn, K, xn, n), refProduct(U, ffn, K, xn, n))
				// One token: mvq (int8 activations) or mvh.
				smem := mvqSmem(K)
				if f.float {
					smem = 4 * K
				}
				fn, _ := g.fn(f.mvq)
				if err := g.allowSmem(fn, f.mvq, smem); err != nil {
					t.Fatal(err)
				}
				dy := devZeros(t, g, 4*(ffn+8))
				if f.float {
					err = g.launch(f.mvq, [3]uint32{3}, 256, uint32(smem), gu.lo, i32(gu.rows), i32(K), dx, dg, f32(eps), dy, i32(ffn), uint64(0), uint64(0), ep)
				} else {
					err = g.launch(f.mvq, [3]uint32{2}, 256, uint32(smem), gu.lo, gu.hi, gu.m0, gu.m1, i32(gu.rows), i32(K), dx, dg, f32(eps), dy, i32(ffn), uint64(0), uint64(0), ep)
				}
				if err != nil {
					t.Fatal(err)
				}
				if f.float {
					if e := relL2(getF32(t, g, dy, ffn), want[:ffn]); e > 1e-5 || math.IsNaN(e) {
						t.Errorf("%s %v: relative L2 %.3g", f.mvq, act, e)
					}
				} else {
					xq1 := q8Act(xn[:K])
					checkQ8(t, fmt.Sprintf("%s %v", f.mvq, act), getF32(t, g, dy, ffn), gluRef(act, refProduct(G, ffn, K, xq1, 1), refProduct(U, ffn, K, xq1, 1)), want[:ffn])
				}
				// More tokens: mmq2 (int8 tensor cores) and mmh, or mvhn and mmw.
				if f.float {
					for _, c := range []struct {
						kern string
						n    int
					}{{"mvhn", 11}, {"b32", n}, {"b128", n}} {
						dy := devZeros(t, g, 4*c.n*ffn)
						floatProduct(t, r, c.kern, int(epOf(actKind(act))), gu, xh, hs, dy, ffn, ffn, c.n)
						if e := relL2(getF32(t, g, dy, c.n*ffn), want[:c.n*ffn]); e > 3e-3 || math.IsNaN(e) {
							t.Errorf("%s %s %v: relative L2 %.3g", typ, c.kern, act, e)
						}
					}
					continue
				}
				mk := mmqKern{v2: true, bm: 32, bn: 64}
				name := mk.name(f)
				fn, _ = g.fn(name)
				if err := g.allowSmem(fn, name, mk.smem(f)); err != nil {
					t.Fatal(err)
				}
				dy = devZeros(t, g, 4*n*ffn)
				if err := g.launch(name, [3]uint32{uint32((gu.mpad + mk.bm - 1) / mk.bm), uint32((n + mk.bn - 1) / mk.bn)}, uint32(mk.threads()), uint32(mk.smem(f)),
					gu.lo, gu.hi, gu.m0, gu.m1, i32(gu.rows), i32(gu.mpad), i32(K), xq, xs, xsum, i32(n), dy, i32(ffn), i32(ffn), ep); err != nil {
					t.Fatal(err)
				}
				xqf := q8Act(xn)
				checkQ8(t, fmt.Sprintf("%s %v", name, act), getF32(t, g, dy, n*ffn), gluRef(act, refProduct(G, ffn, K, xqf, n), refProduct(U, ffn, K, xqf, n)), want)
				for _, tl := range []struct {
					big    bool
					splits int
				}{{false, 1}, {true, 1}, {true, 2}} {
					dy := devZeros(t, g, 4*n*ffn)
					launchMMH(t, g, f, tl.big, tl.splits, gu, xh, hs, n, dy, ffn, ffn, epOf(actKind(act)))
					if e := relL2(getF32(t, g, dy, n*ffn), want); e > 3e-3 || math.IsNaN(e) {
						t.Errorf("b128=%v splits=%d %v: relative L2 %.3g", tl.big, tl.splits, act, e)
					}
				}
			}
		})
	}
}
