package cuda

// The block formats on the GPU (the "quant" stage of devrun.sh): every
// type's kernels against dequantize-then-float64 on random blocks, and a
// Q4_K_M model (Q4_K and Q6_K matrices, runs of both in one QKV product)
// against the CPU on the same weights dequantized to float32, alone and
// batched. They skip without a GPU.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/numfmt"
	"inferno/sampling"
	"inferno/synth"
)

// dequant returns w's values, row-major.
func dequant(t *testing.T, w *backend.Weight) []float32 {
	t.Helper()
	out := make([]float32, w.Rows*w.Cols)
	for r := range w.Rows {
		if err := numfmt.DequantizeRow(out[r*w.Cols:(r+1)*w.Cols], w.Row(r), w.Type, w.Cols); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// refProduct returns y[t*rows + r] = sum_k W[r][k] x[t*K + k] in float64.
func refProduct(W []float32, rows, K int, x []float32, n int) []float32 {
	y := make([]float32, n*rows)
	for t := range n {
		xt := x[t*K : (t+1)*K]
		for r := range rows {
			var s float64
			for k, w := range W[r*K : (r+1)*K] {
				s += float64(w) * float64(xt[k])
			}
			y[t*rows+r] = float32(s)
		}
	}
	return y
}

// q8Act returns x with each block of 32 values rounded as the decode
// kernels quantize activations: s = max|v|/127, v -> round(v*127/max|v|)*s
// (ties to even), in float32.
func q8Act(x []float32) []float32 {
	out := make([]float32, len(x))
	for b := 0; b < len(x); b += 32 {
		var a float32
		for _, v := range x[b : b+32] {
			a = max(a, float32(math.Abs(float64(v))))
		}
		if a == 0 {
			continue
		}
		inv, s := float32(127)/a, a/float32(127)
		for i, v := range x[b : b+32] {
			out[b+i] = float32(math.RoundToEven(float64(v*inv))) * s
		}
	}
	return out
}

// checkQ8 checks a decode product got against ref, the product with the
// activations rounded as the kernel rounds them (q8Act), and against exact,
// the product in float64: within the error those 8-bit activations explain.
func checkQ8(t *testing.T, what string, got, ref, exact []float32) {
	t.Helper()
	if e := relL2(got, ref); e > 1e-3 || math.IsNaN(e) {
		t.Errorf("%s: relative L2 %.3g against the product with 8-bit activations", what, e)
	}
	bound := 1.5*relL2(ref, exact) + 1e-4
	if e := relL2(got, exact); e > bound || math.IsNaN(e) {
		t.Errorf("%s: relative L2 %.3g against the exact product, above the %.3g the 8-bit activations explain", what, e, bound)
	}
}

// rmsRows returns rmsnorm(x)*gain of each row of K (float64 sums).
func rmsRows(x, gain []float32, K int, eps float64) []float32 {
	out := make([]float32, len(x))
	for t := 0; t < len(x); t += K {
		var ss float64
		for _, v := range x[t : t+K] {
			ss += float64(v) * float64(v)
		}
		s := 1 / math.Sqrt(ss/float64(K)+eps)
		for k := range K {
			out[t+k] = float32(float64(x[t+k]) * s * float64(gain[k]))
		}
	}
	return out
}

func swiglu(g, u []float32) []float32 {
	o := make([]float32, len(g))
	for i := range g {
		o[i] = float32(float64(g[i]) / (1 + math.Exp(-float64(g[i]))) * float64(u[i]))
	}
	return o
}

// TestQuantKernels: per type, the embedding lookup (as numfmt dequantizes,
// to an ulp), the decode matvec (mvq) with each epilogue and grid, and
// the f16 tensor-core products (mmh b32 and b128) with each epilogue and
// ragged token counts, against float64 products of the dequantized
// weights. The matvec's int16 activations explain errors near 1e-4, the
// products' f16 weights and activations near 5e-4 (relative L2).
func TestQuantKernels(t *testing.T) {
	g := testDevice(t)
	const eps = 1e-6
	for _, typ := range issueTypes {
		f := formatOf(typ)
		shapes := []struct{ rows, K int }{{200, 768}}
		if f.qk == 32 {
			shapes = append(shapes, struct{ rows, K int }{37, 96})
		}
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("%s/%dx%d", typ, sh.rows, sh.K), func(t *testing.T) {
				use(t, g)
				rng := rand.New(rand.NewPCG(uint64(typ), uint64(sh.K)))
				w := &backend.Weight{Name: "w", Type: typ, Rows: sh.rows, Cols: sh.K, Data: randomBlocks(rng, typ, sh.rows, sh.K)}
				W := dequant(t, w)
				r := &Model{dev: g}
				gw, err := r.uploadWeight(w)
				if err != nil {
					t.Fatal(err)
				}
				// Embedding: rows 0, 5 and the last.
				toks := []int32{0, 5, int32(sh.rows - 1)}
				dt, dx := devBytes(t, g, i32Bytes(toks)), devZeros(t, g, 4*len(toks)*sh.K)
				name, args := gw.embedKernel("embed_q8")
				if err := g.launch(name, [3]uint32{uint32(len(toks))}, 256, 0, append(args, i32(sh.K), dt, dx)...); err != nil {
					t.Fatal(err)
				}
				got := getF32(t, g, dx, len(toks)*sh.K)
				for i, tok := range toks {
					for k := range sh.K {
						a, b := got[i*sh.K+k], W[int(tok)*sh.K+k]
						if a != b && math.Abs(float64(a-b)) > 1.01*math.Abs(float64(math.Nextafter32(b, float32(math.Inf(1)))-b)) {
							t.Fatalf("embedding row %d value %d: %v, want %v", tok, k, a, b)
						}
					}
				}
				x, gain := randVec(rng, 200*sh.K, 3), gainVec(rng, sh.K)
				xn := rmsRows(x, gain, sh.K, eps)
				dxv, dg := devF32(t, g, x), devF32(t, g, gain)
				testMVQ(t, g, f.mvq, gw, W, sh.rows, sh.K, x[:sh.K], xn[:sh.K], dxv, dg, eps)
				testMVQN(t, g, f, gw, W, sh.rows, sh.K, x, xn, dxv, dg, eps)
				testMMQ(t, g, typ, gw, W, sh.rows, sh.K, x, xn, dxv, dg, eps)
				// Products over n tokens, both tilings.
				xh, hs := devZeros(t, g, 2*200*sh.K), devZeros(t, g, 4*200)
				for _, n := range []int{1, 19, 32, 33, 150} {
					ref := refProduct(W, sh.rows, sh.K, xn, n)
					refRaw := refProduct(W, sh.rows, sh.K, x, n)
					for _, tl := range []struct {
						big    bool
						splits int
					}{{false, 1}, {true, 1}, {true, 3}} {
						act := func(gain uint64) {
							if err := g.launch("qact_h", [3]uint32{uint32(n)}, 256, 0, dxv, i32(sh.K), i32(sh.K), gain, f32(eps), xh, hs); err != nil {
								t.Fatal(err)
							}
						}
						mm := func(kind string, w gpuWeight, y uint64, ldy, nout int) {
							launchMMH(t, g, f, tl.big, tl.splits, w, xh, hs, n, y, ldy, nout, epOf(kind))
						}
						desc := fmt.Sprintf("n=%d b128=%v splits=%d", n, tl.big, tl.splits)
						act(dg)
						dy := devF32(t, g, randVec(rng, n*sh.rows, 1))
						mm("store", gw, dy, sh.rows, 0)
						if e := relL2(getF32(t, g, dy, n*sh.rows), ref); e > 2e-3 || math.IsNaN(e) {
							t.Errorf("%s store: relative L2 %.3g", desc, e)
						}
						act(0)
						y0 := randVec(rng, n*sh.rows, 1)
						dy = devF32(t, g, y0)
						mm("add", gw, dy, sh.rows, 0)
						want := make([]float32, len(y0))
						for i := range want {
							want[i] = y0[i] + refRaw[i]
						}
						if e := relL2(getF32(t, g, dy, n*sh.rows), want); e > 2e-3 || math.IsNaN(e) {
							t.Errorf("%s add: relative L2 %.3g", desc, e)
						}
					}
				}
				testQuantSwiGLU(t, g, r, typ, sh.K, rng, eps)
			})
		}
	}
}

// testMVQ checks mvq's store (with the norm), add (without) and argmax
// epilogues, on the full grid and on 3 blocks (the persistent loop).
func testMVQ(t *testing.T, g *device, name string, gw gpuWeight, W []float32, rows, K int, x, xn []float32, dx, dg uint64, eps float32) {
	t.Helper()
	fn, err := g.fn(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.allowSmem(fn, name, mvqSmem(K)); err != nil {
		t.Fatal(err)
	}
	// The kernels take 8-bit activations (q8Act): their products match the
	// products with those activations closely, and the exact ones within
	// the error the activations' rounding explains.
	exact, exactRaw := refProduct(W, rows, K, xn, 1), refProduct(W, rows, K, x, 1)
	ref, refRaw := refProduct(W, rows, K, q8Act(xn), 1), refProduct(W, rows, K, q8Act(x), 1)
	check := func(what string, got, ref, exact []float32) {
		t.Helper()
		checkQ8(t, what, got, ref, exact)
	}
	tiles := (rows + 15) / 16
	launch := func(ep, grid int, y uint64, gain uint64, pv, pi uint64) {
		if err := g.launch(name, [3]uint32{uint32(grid)}, 256, uint32(mvqSmem(K)),
			gw.lo, gw.hi, gw.m0, gw.m1, i32(rows), i32(K), dx, gain, f32(eps), y, i32(rows), pv, pi, i32(ep)); err != nil {
			t.Fatal(err)
		}
		if err := g.sync(name); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, uint64(K)))
	for _, grid := range []int{tiles, min(3, tiles)} {
		dy := devF32(t, g, randVec(rng, rows, 1))
		launch(epStore, grid, dy, dg, 0, 0)
		check(fmt.Sprintf("%s store grid %d", name, grid), getF32(t, g, dy, rows), ref, exact)
		y0 := randVec(rng, rows, 1)
		dy = devF32(t, g, y0)
		launch(epAdd, grid, dy, 0, 0, 0)
		got := getF32(t, g, dy, rows)
		for i := range got {
			got[i] -= y0[i]
		}
		check(fmt.Sprintf("%s add grid %d", name, grid), got, refRaw, exactRaw)
		pv, pi, res := devZeros(t, g, 4*grid), devZeros(t, g, 4*grid), devZeros(t, g, 4)
		dy = devZeros(t, g, 4*rows)
		launch(epArgmax, grid, dy, dg, pv, pi)
		if err := g.launch("argmax_final", [3]uint32{1}, 1024, 0, pv, pi, i32(grid), res, 0, 0); err != nil {
			t.Fatal(err)
		}
		logits := getF32(t, g, dy, rows)
		check(fmt.Sprintf("%s argmax grid %d logits", name, grid), logits, ref, exact)
		if got, want := getI32(t, g, res, 1)[0], sampling.Argmax(logits); got != want {
			t.Errorf("%s argmax grid %d: %d, want %d", name, grid, got, want)
		}
	}
}

// testMVQN checks the small-batch kernels (qact8, then mvqn) for 1, 3 and
// 8 tokens: store with the norm, add without, against the products with
// the activations rounded the kernels' way and the exact ones.
func testMVQN(t *testing.T, g *device, f *qformat, gw gpuWeight, W []float32, rows, K int, x, xn []float32, dx, dg uint64, eps float32) {
	t.Helper()
	xq, xs, xsum := devZeros(t, g, mvnMax*K), devZeros(t, g, 4*mvnMax*K/32), devZeros(t, g, 4*mvnMax*K/16)
	grid := persistentGrid(rows, 0)
	for _, n := range []int{1, 3, mvnMax} {
		name := f.mvnName(n)
		run := func(gain, y uint64, ep int) {
			if err := g.launch("qact8", [3]uint32{uint32(n)}, 256, 0, dx, i32(K), i32(K), gain, f32(eps), xq, xs, xsum); err != nil {
				t.Fatal(err)
			}
			if err := g.launch(name, [3]uint32{uint32(min(grid, 3))}, 256, 0, gw.lo, gw.hi, gw.m0, gw.m1, i32(rows), i32(K), xq, xs, xsum, i32(n), y, i32(rows+5), i32(0), i32(ep)); err != nil {
				t.Fatal(err)
			}
			if err := g.sync(name); err != nil {
				t.Fatal(err)
			}
		}
		// Outputs token-major with a row stride of rows+5.
		rows5 := func(v []float32) []float32 {
			out := make([]float32, 0, n*rows)
			for j := range n {
				out = append(out, v[j*(rows+5):j*(rows+5)+rows]...)
			}
			return out
		}
		dy := devZeros(t, g, 4*n*(rows+5))
		run(dg, dy, epStore)
		checkQ8(t, fmt.Sprintf("%s store n=%d", name, n), rows5(getF32(t, g, dy, n*(rows+5))),
			refProduct(W, rows, K, q8Act(xn[:n*K]), n), refProduct(W, rows, K, xn, n))
		y0 := randVec(rand.New(rand.NewPCG(3, uint64(n))), n*(rows+5), 1)
		dy = devF32(t, g, y0)
		run(0, dy, epAdd)
		got := getF32(t, g, dy, n*(rows+5))
		for i := range got {
			got[i] -= y0[i]
		}
		checkQ8(t, fmt.Sprintf("%s add n=%d", name, n), rows5(got),
			refProduct(W, rows, K, q8Act(x[:n*K]), n), refProduct(W, rows, K, x, n))
	}
}

// testQuantSwiGLU checks the SwiGLU epilogues of mvq and mmh over an
// interleaved gate/up matrix (a ragged FFN width of 100).
func testQuantSwiGLU(t *testing.T, g *device, r *Model, typ gguf.TensorType, K int, rng *rand.Rand, eps float32) {
	t.Helper()
	const ffn = 100
	f := formatOf(typ)
	gate := &backend.Weight{Name: "gate", Type: typ, Rows: ffn, Cols: K, Data: randomBlocks(rng, typ, ffn, K)}
	up := &backend.Weight{Name: "up", Type: typ, Rows: ffn, Cols: K, Data: randomBlocks(rng, typ, ffn, K)}
	gu, err := r.uploadGateUp("gu", gate, up)
	if err != nil {
		t.Fatal(err)
	}
	G, U := dequant(t, gate), dequant(t, up)
	const n = 40
	x, gain := randVec(rng, n*K, 3), gainVec(rng, K)
	xn := rmsRows(x, gain, K, float64(eps))
	want := swiglu(refProduct(G, ffn, K, xn, n), refProduct(U, ffn, K, xn, n))
	dx, dg := devF32(t, g, x), devF32(t, g, gain)
	{
		fn, _ := g.fn(f.mvq)
		if err := g.allowSmem(fn, f.mvq, mvqSmem(K)); err != nil {
			t.Fatal(err)
		}
		dy := devZeros(t, g, 4*(ffn+8))
		if err := g.launch(f.mvq, [3]uint32{2}, 256, uint32(mvqSmem(K)), gu.lo, gu.hi, gu.m0, gu.m1, i32(gu.rows), i32(K), dx, dg, f32(eps), dy, i32(ffn), 0, 0, i32(epSwiGLU)); err != nil {
			t.Fatal(err)
		}
		xq := q8Act(xn[:K])
		ref := swiglu(refProduct(G, ffn, K, xq, 1), refProduct(U, ffn, K, xq, 1))
		checkQ8(t, "mvq swiglu", getF32(t, g, dy, ffn), ref, want[:ffn])
	}
	for _, m := range []int{3, mvnMax} { // mvqn: m tokens, outputs ffn apart
		xq, xs, xsum := devZeros(t, g, m*K), devZeros(t, g, 4*m*K/32), devZeros(t, g, 4*m*K/16)
		if err := g.launch("qact8", [3]uint32{uint32(m)}, 256, 0, dx, i32(K), i32(K), dg, f32(eps), xq, xs, xsum); err != nil {
			t.Fatal(err)
		}
		dy := devZeros(t, g, 4*m*ffn)
		name := f.mvnName(m)
		if err := g.launch(name, [3]uint32{2}, 256, 0, gu.lo, gu.hi, gu.m0, gu.m1, i32(gu.rows), i32(K), xq, xs, xsum, i32(m), dy, i32(ffn), i32(ffn), i32(epSwiGLU)); err != nil {
			t.Fatal(err)
		}
		xqf := q8Act(xn[:m*K])
		ref := swiglu(refProduct(G, ffn, K, xqf, m), refProduct(U, ffn, K, xqf, m))
		checkQ8(t, fmt.Sprintf("%s swiglu n=%d", name, m), getF32(t, g, dy, m*ffn), ref, want[:m*ffn])
	}
	xh, hs := devZeros(t, g, 2*n*K), devZeros(t, g, 4*n)
	if err := g.launch("qact_h", [3]uint32{n}, 256, 0, dx, i32(K), i32(K), dg, f32(eps), xh, hs); err != nil {
		t.Fatal(err)
	}
	for _, tl := range []struct {
		big    bool
		splits int
	}{{false, 1}, {true, 1}, {true, 2}} {
		dy := devZeros(t, g, 4*n*ffn)
		launchMMH(t, g, f, tl.big, tl.splits, gu, xh, hs, n, dy, ffn, ffn, epSwiGLU)
		if e := relL2(getF32(t, g, dy, n*ffn), want); e > 3e-3 || math.IsNaN(e) {
			t.Errorf("%s b128=%v splits=%d swiglu: relative L2 %.3g", typ, tl.big, tl.splits, e)
		}
	}
}

// b128Slots readies f's b128 kernel for r as quantSetup does (its shared
// memory, its resident blocks in r.grids) and returns those slots.
func b128Slots(tb testing.TB, r *Model, f *qformat) int {
	tb.Helper()
	fn, err := r.dev.fn(f.hPrefill)
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.dev.allowSmem(fn, f.hPrefill, mmhSmem(true)); err != nil {
		tb.Fatal(err)
	}
	if err := r.residentGrid(f.hPrefill, mmhSmem(true)); err != nil {
		tb.Fatal(err)
	}
	return r.grids[f.hPrefill]
}

// launchMMH runs mmh's b32 or b128 tiles (big) of f over w's rows for n
// tokens of qact_h's activations (xh, hs) into y (epilogue ep), b128 with
// K cut into splits (mmh_split): the split workspace and counters are its
// own, and it fails the test unless the product leaves every count at 0.
func launchMMH(t *testing.T, g *device, f *qformat, big bool, splits int, w gpuWeight, xh, hs uint64, n int, y uint64, ldy, nout, ep int) {
	t.Helper()
	name, bm, bn := f.hSkinny, 64, 32
	if big {
		name, bm, bn = f.hPrefill, 128, 128
	}
	fn, err := g.fn(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.allowSmem(fn, name, mmhSmem(big)); err != nil {
		t.Fatal(err)
	}
	grid := [3]uint32{uint32((w.mpad + bm - 1) / bm), uint32((n + bn - 1) / bn), uint32(splits)}
	args := []uint64{w.lo, w.hi, w.m0, w.m1, i32(w.rows), i32(w.mpad), i32(w.cols), xh, hs, i32(n), y, i32(ldy), i32(nout), i32(ep)}
	tiles := int(grid[0] * grid[1])
	var cnt uint64
	if big {
		ws := uint64(0)
		if splits > 1 {
			ws = devZeros(t, g, splits*tiles*mmhSplitBytes)
		}
		cnt = devZeros(t, g, 4*tiles)
		args = append(args, ws, cnt, i32(splits))
	}
	if err := g.launch(name, grid, 256, uint32(mmhSmem(big)), args...); err != nil {
		t.Fatal(err)
	}
	if err := g.sync(name); err != nil {
		t.Fatal(err)
	}
	if big {
		for i, c := range getI32(t, g, cnt, tiles) {
			if c != 0 {
				t.Fatalf("%s splits %d: tile %d's count left at %d", name, splits, i, c)
			}
		}
	}
}

// quantModels caches the synthetic test models of a mixture: the
// quantized model and the same weights dequantized to float32.
var quantModels = map[string][2]*qwen3.Model{}

// quantModel returns a 4-layer model (hidden 256, FFN 768, 4 query and 2
// KV heads of 64, an untied head) in the given llama-quantize mixture, as
// synth writes it, and its float32 twin (every matrix dequantized).
func quantModel(t *testing.T, mixture string) (*qwen3.Model, *qwen3.Model) {
	t.Helper()
	synthMu.Lock()
	defer synthMu.Unlock()
	if m, ok := quantModels[mixture]; ok {
		return m[0], m[1]
	}
	var buf bytes.Buffer
	opts := synth.Options{Preset: "tiny", Shape: synth.Shape{Layers: 4, Hidden: 256, FFN: 768, Heads: 4, KVHeads: 2, HeadDim: 64, Untied: true},
		Mixture: mixture, Seed: 3}
	if err := synth.Write(&buf, opts); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	mq, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	mf := *mq
	f32w := func(w *backend.Weight) *backend.Weight {
		return &backend.Weight{Name: w.Name, Type: gguf.TensorF32, Rows: w.Rows, Cols: w.Cols, Data: f32Bytes(dequant(t, w))}
	}
	mf.Embed = f32w(mq.Embed)
	mf.Output = f32w(mq.Output)
	mf.Layers = append([]arch.Layer(nil), mq.Layers...)
	for i := range mf.Layers {
		l := &mf.Layers[i]
		for _, r := range []arch.Role{arch.RoleQ, arch.RoleK, arch.RoleV, arch.RoleO, arch.RoleGate, arch.RoleUp, arch.RoleDown} {
			l.SetMatrix(r, f32w(l.Matrix(r)))
		}
	}
	quantModels[mixture] = [2]*qwen3.Model{mq, &mf}
	return mq, &mf
}

// TestQuantModel runs Q4_K_M (and, unless -short, Q5_K_M, Q6_K, Q4_0,
// Q5_0, Q3_K_M, IQ4_XS and Q2_K) models on the GPU against the CPU
// running the same weights dequantized to float32: a 70-token prompt
// (b128 products), then decode steps (mvq), logits compared at every step;
// then for Q4_K_M the batch runner against runners alone.
func TestQuantModel(t *testing.T) {
	requireGPU(t)
	// Q8_0+q8h: Q8_0 on the generic kernels (mvq_q8_0, mmh_q8_0), as
	// models from a hidden size of 2048 run it (q8hFor).
	mixes := []string{"Q4_K_M", "Q8_0+q8h"}
	if !testing.Short() {
		mixes = append(mixes, "Q5_K_M", "Q6_K", "Q4_0", "Q5_0", "Q3_K_M", "IQ4_XS", "Q2_K", "Q4_1", "Q5_1", "IQ4_NL")
	}
	for _, name := range mixes {
		t.Run(name, func(t *testing.T) {
			mix, q8h := strings.CutSuffix(name, "+q8h")
			var tune func(*tuning)
			if q8h {
				tune = func(t *tuning) { t.q8h = true }
			}
			mq, mf := quantModel(t, mix)
			types := map[gguf.TensorType]int{}
			for _, w := range mq.Matrices() {
				types[w.Type]++
			}
			t.Logf("%s: matrix types %v", mix, types)
			prompt := randomPrompt(11, 70, mq.Config.Vocab)
			const steps = 16
			r := gpuSingle(t, mq, Options{MaxLen: len(prompt) + steps + 1, tune: tune})
			c := cpuRunner(t, mf, len(prompt)+steps+1)
			next := prompt
			var worst float64
			flips := 0
			for step := range steps {
				if err := c.Forward(next); err != nil {
					t.Fatal(err)
				}
				if err := r.Forward(next); err != nil {
					t.Fatal(err)
				}
				cl, _ := c.Logits()
				gl := logits(t, r)
				e := relL2(gl, cl)
				worst = max(worst, e)
				if e > 5e-2 || math.IsNaN(e) { // 8-bit activations: ~2e-2 (docs/QUANT.md: the CPU's and llama.cpp's too)
					t.Errorf("step %d: logits relative L2 %.3g vs the CPU on the dequantized weights", step, e)
				}
				ct, _ := c.Greedy()
				if gt, _ := r.Greedy(); gt != ct {
					flips++
				}
				next = []int32{ct} // both follow the CPU
			}
			t.Logf("%s: %d steps (70-token prompt, then decode): worst logits relative L2 vs the CPU on dequantized float32 weights %.3g; greedy differs at %d steps", mix, steps, worst, flips)
		})
	}
	// The batch runner against runners alone. Alone, decode steps use mvq
	// (int8 activations, the weights exact: ~5e-3 relative a product);
	// batched decode steps of 2 or more tokens and every prompt use mmh
	// (f16 weights and activations: ~4e-4 relative a product); on this
	// small model the logits then differ by ~1e-2 (the same-shape Q8_0
	// model, int16 activations on both sides, gives the attention paths'
	// own share: logged first).
	t.Run("batch-Q8_0-same-shape", func(t *testing.T) {
		m8, _ := quantModel(t, "Q8_0")
		batchEqualsAloneTol(t, m8, nil, 16, 16, 4e-3)
	})
	t.Run("batch-Q4_K_M", func(t *testing.T) {
		mq, _ := quantModel(t, "Q4_K_M")
		batchEqualsAloneTol(t, mq, nil, 16, 16, 4e-2)
	})
}

// TestProductSplits runs Model.product's prompt path (qact_h, then mmh's
// b128 tiles) over a matrix whose grid leaves most of the GPU idle, with
// and without the split workspace: mmhSplits cuts K, and the outputs
// agree with the unsplit ones within float32's rounding of the sums' order,
// and with float64 products within the f16 activations' error; every
// count is back at 0 for the next product.
func TestProductSplits(t *testing.T) {
	g := testDevice(t)
	const rows, K, n, eps = 384, 8192, 300, 1e-6 // K long enough to split (mmhSplitStages)
	typ := gguf.TensorQ4_K
	f := formatOf(typ)
	rng := rand.New(rand.NewPCG(5, 9))
	w := &backend.Weight{Name: "w", Type: typ, Rows: rows, Cols: K, Data: randomBlocks(rng, typ, rows, K)}
	r := &Model{dev: g, grids: map[string]int{}, tune: defaultTuning()}
	r.cfg.Eps = eps
	gw, err := r.uploadWeight(w)
	if err != nil {
		t.Fatal(err)
	}
	tiles := (gw.mpad + 127) / 128 * ((n + 127) / 128)
	splits := mmhSplits(tiles, b128Slots(t, r, f), K/64)
	if splits < 2 || n < r.tune.h128 || n <= r.mmqMost(typ) {
		t.Fatalf("the product would not split (%d splits, %d tokens; b128 from %d, mmq up to %d)", splits, n, r.tune.h128, r.mmqMost(typ))
	}
	x, gain := randVec(rng, n*K, 3), gainVec(rng, K)
	dx, dg := devF32(t, g, x), devF32(t, g, gain)
	b := actBufs{xh: devZeros(t, g, 2*n*K), hs: devZeros(t, g, 4*n)}
	run := func(b actBufs) []float32 {
		dy := devZeros(t, g, 4*n*rows)
		l := &launcher{g: g}
		r.product(l, "store", &gw, dx, dg, dy, rows, 0, n, b)
		if l.err != nil {
			t.Fatal(l.err)
		}
		return getF32(t, g, dy, n*rows)
	}
	whole := run(b)
	b.ws, b.cnt = devZeros(t, g, mmhSplitMost*mmhSplitBytes), devZeros(t, g, 4*mmhSplitMost)
	split := run(b)
	// The splits' float32 partial sums add K's terms in another order:
	// about sqrt(K)*2^-24 apart (5.4e-6 at K = 8,192; 4.2e-6 measured on
	// an H100 with 6 splits at K = 4,096).
	if e := relL2(split, whole); e > 2e-5 || math.IsNaN(e) {
		t.Errorf("%d splits against none: relative L2 %.3g", splits, e)
	}
	ref := refProduct(dequant(t, w), rows, K, rmsRows(x, gain, K, eps), n)
	if e := relL2(split, ref); e > 2e-3 || math.IsNaN(e) {
		t.Errorf("%d splits against float64: relative L2 %.3g", splits, e)
	}
	for i, c := range getI32(t, g, b.cnt, tiles) {
		if c != 0 {
			t.Fatalf("tile %d's count left at %d", i, c)
		}
	}
}
