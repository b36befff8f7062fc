package cuda

// The first rungs of the correctness ladder: every kernel against the CPU
// reference (backend/cpu's scalar operations) on random inputs, ragged
// sizes included. They run where a GPU is and skip elsewhere.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/scalar"
	"inferno/numfmt"
	"inferno/sampling"
)

// uploadTest packs and uploads w as Load does.
func uploadTest(t *testing.T, g *device, w *backend.Weight) gpuWeight {
	t.Helper()
	r := &Model{dev: g}
	gw, err := r.uploadWeight(w)
	if err != nil {
		t.Fatal(err)
	}
	return gw
}

// mvVariants are the matvec kernels tested: int16-plane dp4a and float
// activations, rows per warp, warps per row, 3 blocks an SM (the b3
// variants: prologue registers up to K = 2048, two passes beyond).
var mvVariants = []mvCfg{{1, 1, false, false}, {2, 1, false, false}, {1, 1, true, false}, {1, 2, true, false}, {2, 1, true, false}, {2, 2, true, false},
	{2, 1, false, true}, {4, 1, false, true}, {1, 1, true, true}, {2, 1, true, true}}

// launchMV runs a matvec on grid blocks (the kernel loops over the tiles).
func launchMV(t *testing.T, g *device, kind string, m mvCfg, grid int, w gpuWeight, x, gain uint64, eps float32, y uint64, nout int, pval, pidx uint64) {
	t.Helper()
	name := m.name(kind)
	f, err := g.fn(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.allowSmem(f, name, m.smem(w.cols)); err != nil {
		t.Fatal(err)
	}
	if err := g.launch(name, [3]uint32{uint32(grid)}, 256, uint32(m.smem(w.cols)),
		w.q, w.drow, i32(w.rows), i32(w.cols), x, gain, f32(eps), y, i32(nout), pval, pidx); err != nil {
		t.Fatal(err)
	}
	if err := g.sync(name); err != nil {
		t.Fatal(err)
	}
}

func gainVec(rng *rand.Rand, n int) []float32 {
	v := randVec(rng, n, 0.5)
	for i := range v {
		v[i] += 1
	}
	return v
}

func TestKernelEmbed(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(1, 1))
	w := randQ8(rng, "embed", 300, 96)
	gw := uploadTest(t, g, w)
	toks := []int32{0, 299, 17, 17, 150}
	dt := devBytes(t, g, i32Bytes(toks))
	x := devZeros(t, g, 4*96*len(toks))
	if err := g.launch("embed_q8", [3]uint32{uint32(len(toks))}, 256, 0, gw.q, gw.drow, i32(96), dt, x); err != nil {
		t.Fatal(err)
	}
	if err := g.sync("embed"); err != nil {
		t.Fatal(err)
	}
	got := getF32(t, g, x, 96*len(toks))
	want := make([]float32, 96)
	for i, id := range toks {
		if err := numfmt.DequantizeRow(want, w.Row(int(id)), w.Type, 96); err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if got[i*96+j] != want[j] {
				t.Fatalf("token %d value %d: got %v, want %v", id, j, got[i*96+j], want[j])
			}
		}
	}
}

// TestKernelMatvec checks the decode matvec with its RMSNorm prologue and
// each epilogue against scalar RMSNorm + MatMul, on ragged shapes.
func TestKernelMatvec(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(2, 2))
	sc := scalar.NewScalar()
	const eps = 1e-6
	for _, sh := range []struct{ rows, K int }{{1000, 1024}, {37, 64}, {4096, 1024}, {1024, 3072}, {33, 96}, {5, 2048}, {1030, 160}, {300, 6144}} {
		w := randQ8(rng, "w", sh.rows, sh.K)
		gw := uploadTest(t, g, w)
		x := randVec(rng, sh.K, 3)
		gain := gainVec(rng, sh.K)
		xn := make([]float32, sh.K)
		sc.RMSNorm(xn, x, gain, eps)
		ref := make([]float32, sh.rows)
		sc.MatMul(ref, w, xn, 1)
		refRaw := make([]float32, sh.rows)
		sc.MatMul(refRaw, w, x, 1)
		dx, dg := devF32(t, g, x), devF32(t, g, gain)
		for _, m := range mvVariants {
			for _, kind := range []string{"store", "add", "argmax"} {
				mk := m
				if kind != "add" && mk.ks > 1 && kind == "argmax" {
					mk.ks = 1 // no split-K argmax kernels
				}
				if !mvKernelNames[mk.name(kind)] {
					continue // not instantiated
				}
				for _, grid := range []int{mk.tiles(kind, sh.rows), 3} {
					grid = min(grid, mk.tiles(kind, sh.rows))
					desc := fmt.Sprintf("%dx%d %s grid %d", sh.rows, sh.K, mk.name(kind), grid)
					switch kind {
					case "store": // with the norm
						dy := devF32(t, g, randVec(rng, sh.rows, 1))
						launchMV(t, g, kind, mk, grid, gw, dx, dg, eps, dy, sh.rows, 0, 0)
						if e := relL2(getF32(t, g, dy, sh.rows), ref); e > 2e-4 {
							t.Errorf("%s: relative L2 error %.3g", desc, e)
						}
					case "add": // without the norm
						y0 := randVec(rng, sh.rows, 1)
						dy := devF32(t, g, y0)
						launchMV(t, g, kind, mk, grid, gw, dx, 0, eps, dy, sh.rows, 0, 0)
						want := make([]float32, sh.rows)
						for i := range want {
							want[i] = y0[i] + refRaw[i]
						}
						if e := relL2(getF32(t, g, dy, sh.rows), want); e > 2e-4 {
							t.Errorf("%s: relative L2 error %.3g", desc, e)
						}
					case "argmax": // logits as store, and the argmax of those logits
						pv, pi, res := devZeros(t, g, 4*grid), devZeros(t, g, 4*grid), devZeros(t, g, 4)
						dy := devZeros(t, g, 4*sh.rows)
						launchMV(t, g, kind, mk, grid, gw, dx, dg, eps, dy, sh.rows, pv, pi)
						if err := g.launch("argmax_final", [3]uint32{1}, 1024, 0, pv, pi, i32(grid), res, 0, 0); err != nil {
							t.Fatal(err)
						}
						logits := getF32(t, g, dy, sh.rows)
						if e := relL2(logits, ref); e > 2e-4 {
							t.Errorf("%s logits: relative L2 error %.3g", desc, e)
						}
						if got, want := getI32(t, g, res, 1)[0], sampling.Argmax(logits); got != want {
							t.Errorf("%s: got %d, want %d", desc, got, want)
						}
					}
				}
			}
		}
	}
}

// TestKernelSwiGLU checks the gate/up matvec with its SwiGLU epilogue
// (interleaved rows, a ragged FFN width; K = 3,072 takes the b3 variant's
// two-pass prologue).
func TestKernelSwiGLU(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(3, 3))
	sc := scalar.NewScalar()
	const eps = 1e-6
	for _, sh := range []struct{ ffn, K int }{{3072, 1024}, {196, 64}, {8, 32}, {300, 3072}} {
		gate, up := randQ8(rng, "gate", sh.ffn, sh.K), randQ8(rng, "up", sh.ffn, sh.K)
		r := &Model{dev: g}
		gw, err := r.uploadGateUp("gate_up", gate, up)
		if err != nil {
			t.Fatal(err)
		}
		x, gain := randVec(rng, sh.K, 3), gainVec(rng, sh.K)
		xn := make([]float32, sh.K)
		sc.RMSNorm(xn, x, gain, eps)
		gr, ur := make([]float32, sh.ffn), make([]float32, sh.ffn)
		sc.MatMul(gr, gate, xn, 1)
		sc.MatMul(ur, up, xn, 1)
		sc.SwiGLU(gr, gr, ur)
		dx, dg := devF32(t, g, x), devF32(t, g, gain)
		for _, m := range []mvCfg{{2, 1, true, false}, {2, 1, true, true}} {
			for _, grid := range []int{m.tiles("swiglu", gw.rows), 2} {
				dy := devF32(t, g, randVec(rng, sh.ffn+8, 1))
				launchMV(t, g, "swiglu", m, grid, gw, dx, dg, eps, dy, sh.ffn, 0, 0)
				if e := relL2(getF32(t, g, dy, sh.ffn), gr); e > 3e-4 {
					t.Errorf("ffn %d K %d %s grid %d: relative L2 error %.3g", sh.ffn, sh.K, m.name("swiglu"), grid, e)
				}
			}
		}
	}
}

// TestKernelArgmaxTies checks that ties go to the lowest index, within a
// block and across blocks, and that NaN never wins over a number.
func TestKernelArgmaxTies(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(4, 4))
	const rows, K = 1000, 64
	w := randQ8(rng, "w", rows, K)
	rb := w.RowBytes()
	// Small rows everywhere, then rows 999, 50, 5, 3 equal and large.
	for r := range rows {
		for b := 0; b < K/32; b++ {
			w.Data[r*rb+b*34], w.Data[r*rb+b*34+1] = 0x00, 0x04 // tiny scale
		}
	}
	for _, r := range []int{999, 50, 5, 3} {
		copy(w.Data[r*rb:(r+1)*rb], w.Data[7*rb:8*rb])
		for b := 0; b < K/32; b++ {
			w.Data[r*rb+b*34], w.Data[r*rb+b*34+1] = 0x00, 0x3c // scale 1
		}
	}
	x := make([]float32, K)
	if err := numfmt.DequantizeRow(x, w.Row(3), w.Type, K); err != nil {
		t.Fatal(err)
	}
	gw := uploadTest(t, g, w)
	dx := devF32(t, g, x)
	for _, m := range []mvCfg{{1, 1, false, false}, {2, 1, false, false}, {1, 1, true, false}, {2, 1, true, false}, {2, 1, false, true}, {4, 1, false, true}} {
		rpw := m.name("argmax")
		nb := m.tiles("argmax", rows)
		pv, pi, res, dy := devZeros(t, g, 4*nb), devZeros(t, g, 4*nb), devZeros(t, g, 4), devZeros(t, g, 4*rows)
		launchMV(t, g, "argmax", m, nb, gw, dx, 0, 1e-6, dy, rows, pv, pi)
		if err := g.launch("argmax_final", [3]uint32{1}, 1024, 0, pv, pi, i32(nb), res, 0, 0); err != nil {
			t.Fatal(err)
		}
		logits := getF32(t, g, dy, rows)
		if logits[3] != logits[999] || logits[3] != logits[5] {
			t.Fatalf("tied rows differ: %v %v %v", logits[3], logits[5], logits[999])
		}
		if got := getI32(t, g, res, 1)[0]; got != 3 {
			t.Errorf("%s: argmax %d, want 3 (lowest of tied 3, 5, 50, 999)", rpw, got)
		}
	}
	// argmax_final alone, with NaNs and ties among unordered candidates.
	n := 3000
	vals := randVec(rng, n, 1)
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(n - i) // descending ids
	}
	vals[0] = float32(math.NaN())
	for _, i := range []int{2000, 17, 2999} {
		vals[i] = 5
	}
	pv, pi, res := devF32(t, g, vals), devBytes(t, g, i32Bytes(ids)), devZeros(t, g, 4)
	if err := g.launch("argmax_final", [3]uint32{1}, 1024, 0, pv, pi, i32(n), res, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := getI32(t, g, res, 1)[0]; got != ids[2999] {
		t.Errorf("argmax_final: got id %d, want %d (lowest id among ties)", got, ids[2999])
	}
	for i := range vals {
		vals[i] = float32(math.NaN())
	}
	pv = devF32(t, g, vals)
	if err := g.launch("argmax_final", [3]uint32{1}, 1024, 0, pv, pi, i32(n), res, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := getI32(t, g, res, 1)[0]; got != 1 {
		t.Errorf("argmax_final all NaN: got id %d, want 1 (lowest)", got)
	}
}

// attnCase is one attention configuration.
type attnCase struct {
	hd, h, kvh, pos, nsplit, cap int
}

// cpuQKV normalizes and rotates one token's q and k (qkv row) as the CPU
// forward pass does, and returns q, k, v.
func cpuQKV(sc *scalar.Scalar, row []float32, c attnCase, pos int, qg, kg []float32, eps float32, theta float64) (q, k, v []float32) {
	qd, kd := c.h*c.hd, c.kvh*c.hd
	q = append([]float32(nil), row[:qd]...)
	k = append([]float32(nil), row[qd:qd+kd]...)
	v = append([]float32(nil), row[qd+kd:qd+2*kd]...)
	sc.RMSNorm(q, q, qg, eps)
	sc.RMSNorm(k, k, kg, eps)
	sc.RoPE(q, []int32{int32(pos)}, c.h, c.hd, c.hd, &arch.Rope{Theta: theta})
	sc.RoPE(k, []int32{int32(pos)}, c.kvh, c.hd, c.hd, &arch.Rope{Theta: theta})
	return q, k, v
}

// TestKernelPrefillMatmul checks Q8_0's prompt products against scalar
// MatMul, ragged shapes: quant_act's int16 activations on mm_q8 and
// qact_h's f16 activations on mm_q8h, token tiles of 64, 32 and 16
// (mmQ8Tile), each epilogue.
func TestKernelPrefillMatmul(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(6, 6))
	sc := newParScalar()
	const eps = 1e-6
	for _, sh := range []struct{ m, k, n int }{{100, 64, 77}, {4096, 1024, 130}, {1024, 3072, 64}, {70, 96, 1}, {1024, 2048, 512}} {
		t.Run(fmt.Sprintf("%dx%dx%d", sh.m, sh.k, sh.n), func(t *testing.T) {
			use(t, g)
			w := randQ8(rng, "w", sh.m, sh.k)
			gw := uploadTest(t, g, w)
			x, gain := randVec(rng, sh.n*sh.k, 3), gainVec(rng, sh.k)
			xn := make([]float32, len(x))
			sc.RMSNorm(xn, x, gain, eps)
			ref := make([]float32, sh.n*sh.m)
			sc.MatMul(ref, w, xn, sh.n)
			npad := roundUp(sh.n, 64)
			dx, dg := devF32(t, g, x), devF32(t, g, gain)
			hi, lo, sx := devZeros(t, g, npad*sh.k), devZeros(t, g, npad*sh.k), devZeros(t, g, 4*npad*sh.k/32)
			xh, hs := devZeros(t, g, 2*npad*sh.k), devZeros(t, g, 4*npad)
			// The int16 activations' rounding is 1/32512 of a block's
			// largest value; f16 weights and activations round each to
			// 11 bits.
			for _, v := range []struct {
				kern string
				tol  float64
			}{{"mm_q8_", 2e-4}, {"mm_q8h_", 2e-3}} {
				quantize := func() {
					if v.kern == "mm_q8_" {
						if err := g.launch("quant_act", [3]uint32{uint32(sh.n)}, 256, 0, dx, i32(sh.k), i32(sh.k), dg, f32(eps), hi, lo, sx, i32(npad)); err != nil {
							t.Fatal(err)
						}
						return
					}
					if err := g.launch("qact_h", [3]uint32{uint32(sh.n)}, 256, 0, dx, i32(sh.k), i32(sh.k), dg, f32(eps), xh, hs); err != nil {
						t.Fatal(err)
					}
				}
				for _, tile := range []struct {
					suf string
					ntl int
				}{{"", 64}, {"_n32", 32}, {"_n16", 16}, {"_w4", 64}, {"_n32_w4", 32}, {"_n16_w4", 16}} {
					if v.kern == "mm_q8_" && strings.HasSuffix(tile.suf, "_w4") {
						continue
					}
					name := v.kern + "%s" + tile.suf
					mm := func(kind string, w gpuWeight, y uint64, ldy, nout int) {
						args := []uint64{w.q, w.dcol, i32(w.rows), i32(w.mpad), i32(w.cols), hi, lo, sx, i32(sh.n), i32(npad), y, i32(ldy), i32(nout)}
						if v.kern == "mm_q8h_" {
							args = []uint64{w.q, w.dcol, i32(w.rows), i32(w.mpad), i32(w.cols), xh, hs, i32(sh.n), y, i32(ldy), i32(nout)}
						}
						if err := g.launch(fmt.Sprintf(name, kind), [3]uint32{uint32(w.mpad / 64), uint32((sh.n + tile.ntl - 1) / tile.ntl)}, 128, 0, args...); err != nil {
							t.Fatal(err)
						}
						if err := g.sync(kind); err != nil {
							t.Fatal(err)
						}
					}
					quantize()
					dy := devF32(t, g, randVec(rng, sh.n*sh.m, 1))
					mm("store", gw, dy, sh.m, 0)
					if e := relL2(getF32(t, g, dy, sh.n*sh.m), ref); e > v.tol || math.IsNaN(e) {
						t.Errorf("%s: relative L2 error %.3g", fmt.Sprintf(name, "store"), e)
					}
					y0 := randVec(rng, sh.n*sh.m, 1)
					dy = devF32(t, g, y0)
					mm("add", gw, dy, sh.m, 0)
					want := make([]float32, len(y0))
					for i := range want {
						want[i] = y0[i] + ref[i]
					}
					if e := relL2(getF32(t, g, dy, sh.n*sh.m), want); e > v.tol || math.IsNaN(e) {
						t.Errorf("%s: relative L2 error %.3g", fmt.Sprintf(name, "add"), e)
					}
					// SwiGLU over gate = w, up = a second matrix.
					ffn := sh.m
					up := randQ8(rng, "up", ffn, sh.k)
					r := &Model{dev: g}
					gu, err := r.uploadGateUp("gu", w, up)
					if err != nil {
						t.Fatal(err)
					}
					ur := make([]float32, sh.n*ffn)
					sc.MatMul(ur, up, xn, sh.n)
					sw := make([]float32, len(ur))
					sc.SwiGLU(sw, ref, ur)
					dy = devZeros(t, g, 4*sh.n*ffn)
					mm("swiglu", gu, dy, ffn, ffn)
					if e := relL2(getF32(t, g, dy, sh.n*ffn), sw); e > 1.5*v.tol || math.IsNaN(e) {
						t.Errorf("%s: relative L2 error %.3g", fmt.Sprintf(name, "swiglu"), e)
					}
				}
			}
		})
	}
}

// TestErrors checks that an impossible allocation and a bad launch give
// clear errors and leave the device usable.
func TestErrors(t *testing.T) {
	g := testDevice(t)
	_, err := g.alloc(1<<50, "a petabyte")
	if err == nil || !IsOutOfMemory(err) {
		t.Fatalf("huge allocation: %v", err)
	}
	t.Logf("allocation error: %v", err)
	err = g.launch("noop", [3]uint32{1}, 4096, 0, 0)
	if err == nil {
		t.Fatal("launch of 4096 threads a block succeeded")
	}
	t.Logf("launch error: %v", err)
	p := devZeros(t, g, 64)
	if err := g.memsetAsync(p, 64); err != nil {
		t.Fatal(err)
	}
	if err := g.sync("after errors"); err != nil {
		t.Fatalf("device unusable after errors: %v", err)
	}
}
