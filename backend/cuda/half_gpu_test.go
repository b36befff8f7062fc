package cuda

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/numfmt"
	"inferno/sampling"
)

// floatTypes are the float matrix types the GPU multiplies (half.go).
var floatTypes = []gguf.TensorType{gguf.TensorF16, gguf.TensorBF16, gguf.TensorF32}

// floatWeight returns a rows x K matrix of type t of values uniform in
// [-scale, scale], its row big (if in range) scaled by 1e7 so that BF16 and F32
// tiles need mmw's power-of-two scale; and its values as float32.
func floatWeight(rng *rand.Rand, t gguf.TensorType, rows, K, big int, scale float32) (*backend.Weight, []float32) {
	W := randVec(rng, rows*K, scale)
	if big >= 0 && big < rows && t != gguf.TensorF16 {
		for k := range K {
			W[big*K+k] *= 1e7
		}
	}
	es := t.BlockBytes()
	data := make([]byte, rows*K*es)
	for i, v := range W {
		switch t {
		case gguf.TensorF16:
			h := numfmt.F32ToF16(v)
			data[2*i], data[2*i+1] = byte(h), byte(h>>8)
			W[i] = numfmt.F16ToF32(h)
		case gguf.TensorBF16:
			h := numfmt.F32ToBF16(v)
			data[2*i], data[2*i+1] = byte(h), byte(h>>8)
			W[i] = numfmt.BF16ToF32(h)
		default:
			b := math.Float32bits(v)
			data[4*i], data[4*i+1], data[4*i+2], data[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
		}
	}
	return &backend.Weight{Name: "w", Type: t, Rows: rows, Cols: K, Data: data}, W
}

// TestHalfKernels checks the float matrices' kernels against float64
// products: the embedding (exact), mvh (f32 activations: store with the
// norm, add, argmax, SwiGLU; the full grid and 3 blocks), mvhn and mmw
// (f16 activations: store, add, SwiGLU) for 1 to 150 tokens.
func TestHalfKernels(t *testing.T) {
	g := testDevice(t)
	const eps = 1e-6
	for _, typ := range floatTypes {
		for _, sh := range []struct{ rows, K, big int }{{200, 768, -1}, {37, 96, -1}, {130, 256, 77}} {
			t.Run(fmt.Sprintf("%s/%dx%d/big%d", typ, sh.rows, sh.K, sh.big), func(t *testing.T) {
				use(t, g)
				rng := rand.New(rand.NewPCG(uint64(typ), uint64(sh.K)))
				w, W := floatWeight(rng, typ, sh.rows, sh.K, sh.big, 0.05)
				r := &Model{dev: g, grids: map[string]int{}}
				r.cfg.Eps = eps
				gw, err := r.uploadWeight(w)
				if err != nil {
					t.Fatal(err)
				}
				f := formatOf(typ)
				if err := r.floatSetup(f, sh.K); err != nil {
					t.Fatal(err)
				}
				if sh.big >= 0 && typ != gguf.TensorF16 && gw.wexp == 0 {
					t.Errorf("a row of 1e7 scale: wexp 0")
				}
				// Embedding: rows 0, 5 and the last, exact.
				toks := []int32{0, 5, int32(sh.rows - 1)}
				dt, dx := devBytes(t, g, i32Bytes(toks)), devZeros(t, g, 4*len(toks)*sh.K)
				name, args := gw.embedKernel("embed_q8")
				if err := g.launch(name, [3]uint32{uint32(len(toks))}, 256, 0, append(args, i32(sh.K), dt, dx)...); err != nil {
					t.Fatal(err)
				}
				got := getF32(t, g, dx, len(toks)*sh.K)
				for i, tok := range toks {
					for k := range sh.K {
						if a, b := got[i*sh.K+k], W[int(tok)*sh.K+k]; a != b {
							t.Fatalf("embedding row %d value %d: %v, want %v", tok, k, a, b)
						}
					}
				}
				x, gain := randVec(rng, 200*sh.K, 3), gainVec(rng, sh.K)
				xn := rmsRows(x, gain, sh.K, eps)
				dxv, dg := devF32(t, g, x), devF32(t, g, gain)
				testMVH(t, g, f, gw, W, sh.rows, sh.K, x[:sh.K], xn[:sh.K], dxv, dg, eps)
				xh, hs := devZeros(t, g, 2*200*sh.K), devZeros(t, g, 4*200)
				for _, n := range []int{1, 3, 8, 13, 16, 19, 33, 150} {
					ref, refRaw := refProduct(W, sh.rows, sh.K, xn, n), refProduct(W, sh.rows, sh.K, x, n)
					for _, kern := range []string{"mvhn", "mvhn4", "b32", "b128"} {
						if strings.HasPrefix(kern, "mvhn") && n > mvhnMax {
							continue
						}
						act := func(gain uint64) {
							if err := g.launch("qact_h", [3]uint32{uint32(n)}, 256, 0, dxv, i32(sh.K), i32(sh.K), gain, f32(eps), xh, hs); err != nil {
								t.Fatal(err)
							}
						}
						desc := fmt.Sprintf("%s n=%d", kern, n)
						act(dg)
						dy := devF32(t, g, randVec(rng, n*sh.rows, 1))
						floatProduct(t, r, kern, epStore, gw, xh, hs, dy, sh.rows, 0, n)
						if e := relL2(getF32(t, g, dy, n*sh.rows), ref); e > 2e-3 || math.IsNaN(e) {
							t.Errorf("%s store: relative L2 %.3g", desc, e)
						}
						act(0)
						y0 := randVec(rng, n*sh.rows, 1)
						dy = devF32(t, g, y0)
						floatProduct(t, r, kern, epAdd, gw, xh, hs, dy, sh.rows, 0, n)
						want := make([]float32, len(y0))
						for i := range want {
							want[i] = y0[i] + refRaw[i]
						}
						if e := relL2(getF32(t, g, dy, n*sh.rows), want); e > 2e-3 || math.IsNaN(e) {
							t.Errorf("%s add: relative L2 %.3g", desc, e)
						}
					}
				}
				testHalfSwiGLU(t, g, r, typ, sh.K, rng, eps)
			})
		}
	}
}

// floatProduct launches mvhn, mvhn4, mmw_b32 or mmw_b128 (kern) over qact_h's
// activations and waits for it.
func floatProduct(t *testing.T, r *Model, kern string, ep int, w gpuWeight, xh, hs, y uint64, ldy, nout, n int) {
	t.Helper()
	g := r.dev
	f := formatOf(w.typ)
	var err error
	name := f.mvn4
	switch kern {
	case "mvhn", "mvhn4":
		rows := w.rows
		if kern == "mvhn4" {
			name, rows = mvhnSplit(f), 4*w.rows
		}
		err = g.launch(name, [3]uint32{uint32(min(3, persistentGrid(rows, 0))), uint32((n + 7) / 8)}, 256, 0,
			w.lo, i32(w.rows), i32(w.cols), xh, hs, i32(n), y, i32(ldy), i32(nout), i32(ep))
	default:
		big := kern == "b128"
		name, bm, bn := f.hSkinny, 64, 32
		if big {
			name, bm, bn = f.hPrefill, 128, 128
		}
		err = g.launch(name, [3]uint32{uint32((w.mpad + bm - 1) / bm), uint32((n + bn - 1) / bn)}, 256, uint32(mmhSmem(big)),
			w.lo, i32(w.rows), i32(w.mpad), i32(w.cols), xh, hs, i32(n), y, i32(ldy), i32(nout), i32(ep), f32(float32(math.Ldexp(1, w.wexp))))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := g.sync(name); err != nil {
		t.Fatal(err)
	}
}

// testMVH checks mvh's store (with the norm), add (without) and argmax
// epilogues, on the full grid and on 3 blocks (the persistent loop): f32
// activations and exact weights, so within 1e-5 of float64 products.
func testMVH(t *testing.T, g *device, f *qformat, gw gpuWeight, W []float32, rows, K int, x, xn []float32, dx, dg uint64, eps float32) {
	t.Helper()
	name := f.mvq
	ref, refRaw := refProduct(W, rows, K, xn, 1), refProduct(W, rows, K, x, 1)
	check := func(what string, got, want []float32) {
		t.Helper()
		if e := relL2(got, want); e > 1e-5 || math.IsNaN(e) {
			t.Errorf("%s: relative L2 %.3g against float64 products", what, e)
		}
	}
	tiles := (rows + 15) / 16
	launch := func(ep, grid int, y, gain, pv, pi uint64) {
		if err := g.launch(name, [3]uint32{uint32(grid)}, 256, uint32(4*K),
			gw.lo, i32(rows), i32(K), dx, gain, f32(eps), y, i32(rows), pv, pi, i32(ep)); err != nil {
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
		check(fmt.Sprintf("%s store grid %d", name, grid), getF32(t, g, dy, rows), ref)
		y0 := randVec(rng, rows, 1)
		dy = devF32(t, g, y0)
		launch(epAdd, grid, dy, 0, 0, 0)
		got := getF32(t, g, dy, rows)
		for i := range got {
			got[i] -= y0[i]
		}
		check(fmt.Sprintf("%s add grid %d", name, grid), got, refRaw)
		pv, pi, res := devZeros(t, g, 4*grid), devZeros(t, g, 4*grid), devZeros(t, g, 4)
		dy = devZeros(t, g, 4*rows)
		launch(epArgmax, grid, dy, dg, pv, pi)
		if err := g.launch("argmax_final", [3]uint32{1}, 1024, 0, pv, pi, i32(grid), res, 0, 0); err != nil {
			t.Fatal(err)
		}
		logits := getF32(t, g, dy, rows)
		check(fmt.Sprintf("%s argmax grid %d logits", name, grid), logits, ref)
		if got, want := getI32(t, g, res, 1)[0], sampling.Argmax(logits); got != want {
			t.Errorf("%s argmax grid %d: %d, want %d", name, grid, got, want)
		}
	}
}

// testHalfSwiGLU checks the SwiGLU epilogues of mvh, mvhn and mmw over an
// interleaved gate/up matrix (a ragged FFN width of 100).
func testHalfSwiGLU(t *testing.T, g *device, r *Model, typ gguf.TensorType, K int, rng *rand.Rand, eps float32) {
	t.Helper()
	const ffn = 100
	f := formatOf(typ)
	gate, G := floatWeight(rng, typ, ffn, K, -1, 0.1)
	up, U := floatWeight(rng, typ, ffn, K, -1, 0.1)
	gate.Name, up.Name = "gate", "up"
	gu, err := r.uploadGateUp("gu", gate, up)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	x, gain := randVec(rng, n*K, 2), gainVec(rng, K)
	xn := rmsRows(x, gain, K, float64(eps))
	want := swiglu(refProduct(G, ffn, K, xn, n), refProduct(U, ffn, K, xn, n))
	dx, dg := devF32(t, g, x), devF32(t, g, gain)
	dy := devZeros(t, g, 4*n*ffn)
	// mvh, one token.
	if err := g.launch(f.mvq, [3]uint32{3}, 256, uint32(4*K), gu.lo, i32(gu.rows), i32(K), dx, dg, f32(eps), dy, i32(ffn), uint64(0), uint64(0), i32(epSwiGLU)); err != nil {
		t.Fatal(err)
	}
	if err := g.sync(f.mvq); err != nil {
		t.Fatal(err)
	}
	if e := relL2(getF32(t, g, dy, ffn), want[:ffn]); e > 1e-5 || math.IsNaN(e) {
		t.Errorf("%s swiglu: relative L2 %.3g", f.mvq, e)
	}
	xh, hs := devZeros(t, g, 2*n*K), devZeros(t, g, 4*n)
	if err := g.launch("qact_h", [3]uint32{n}, 256, 0, dx, i32(K), i32(K), dg, f32(eps), xh, hs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kern string
		n    int
	}{{"mvhn", 11}, {"mvhn4", 11}, {"b32", n}, {"b128", n}} {
		dy := devZeros(t, g, 4*c.n*ffn)
		floatProduct(t, r, c.kern, epSwiGLU, gu, xh, hs, dy, ffn, ffn, c.n)
		if e := relL2(getF32(t, g, dy, c.n*ffn), want[:c.n*ffn]); e > 3e-3 || math.IsNaN(e) {
			t.Errorf("%s %s swiglu: relative L2 %.3g", typ, c.kern, e)
		}
	}
}

// floatModel returns quantModel's 4-layer model in a mixture, with the
// embedding and output matrices converted to typ when the name has a
// suffix "+emb-<type>" (a mixed file: float embeddings, block-quantized
// layers), and its float32 twin.
func floatModel(t *testing.T, name string) (*qwen3.Model, *qwen3.Model) {
	t.Helper()
	mix, emb, mixed := strings.Cut(name, "+emb-")
	mq, mf := quantModel(t, mix)
	if !mixed {
		return mq, mf
	}
	var typ gguf.TensorType
	switch emb {
	case "f16":
		typ = gguf.TensorF16
	case "bf16":
		typ = gguf.TensorBF16
	default:
		t.Fatalf("embedding type %q", emb)
	}
	conv := func(w *backend.Weight) (*backend.Weight, *backend.Weight) {
		v := dequant(t, w)
		data := make([]byte, 2*len(v))
		for i, x := range v {
			var h uint16
			if typ == gguf.TensorF16 {
				h = numfmt.F32ToF16(x)
				v[i] = numfmt.F16ToF32(h)
			} else {
				h = numfmt.F32ToBF16(x)
				v[i] = numfmt.BF16ToF32(h)
			}
			data[2*i], data[2*i+1] = byte(h), byte(h>>8)
		}
		return &backend.Weight{Name: w.Name, Type: typ, Rows: w.Rows, Cols: w.Cols, Data: data},
			&backend.Weight{Name: w.Name, Type: gguf.TensorF32, Rows: w.Rows, Cols: w.Cols, Data: f32Bytes(v)}
	}
	m2, f2 := *mq, *mf
	m2.Embed, f2.Embed = conv(mq.Embed)
	m2.Output, f2.Output = conv(mq.Output)
	return &m2, &f2
}

// TestHalfModel runs F16 and BF16 models, and Q8_0 and Q4_K_M models with
// F16 or BF16 embedding and output matrices, on the GPU against the CPU
// on the same weights: a 150-token prompt (mmw's b128 tiles, or the block
// formats' products), then decode steps (mvh), logits within 2e-3
// relative L2 for the float files (f16 activations in the prompt's
// products, f32 in decode) and the same greedy tokens but at near ties
// (the CPU's two logits within 1e-2); then the batch
// runner (mvhn and mmw_b32 in decode steps of 2 to 16 tokens) against
// sequences alone. With -short, the F16 and BF16 models only.
func TestHalfModel(t *testing.T) {
	requireGPU(t)
	names := []string{"F16", "BF16"}
	if !testing.Short() {
		names = append(names, "Q8_0+emb-f16", "Q4_K_M+emb-bf16")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			mq, mf := floatModel(t, name)
			types := map[gguf.TensorType]int{}
			for _, w := range mq.Matrices() {
				types[w.Type]++
			}
			t.Logf("%s: matrix types %v", name, types)
			tol := 2e-3
			if strings.HasPrefix(name, "Q4_K_M") {
				tol = 5e-2 // 8-bit activations of the block formats (TestQuantModel)
			}
			prompt := randomPrompt(11, 150, mq.Config.Vocab)
			const steps = 16
			r := gpuSingle(t, mq, Options{MaxLen: len(prompt) + steps + 1})
			c := cpuRunner(t, mf, len(prompt)+steps+1)
			var worst float64
			flips := 0
			lockstep(t, r, c, prompt, steps, func(step int, gl, cl []float32) {
				e := relL2(gl, cl)
				worst = max(worst, e)
				if e > tol || math.IsNaN(e) {
					t.Errorf("step %d: logits relative L2 %.3g vs the CPU on the same weights (want <= %.0e)", step, e, tol)
				}
				ct, _ := c.Greedy()
				if gt, _ := r.Greedy(); gt != ct {
					flips++
					// A near tie (the CPU's logits of the two within 1e-2)
					// may go either way; a wider gap is an error.
					if gap := cl[ct] - cl[gt]; gap > 1e-2 && tol == 2e-3 {
						t.Errorf("step %d: greedy %d, the CPU's %d by a logit gap of %.3g", step, gt, ct, gap)
					}
				}
			})
			t.Logf("%s: %d steps (150-token prompt, then decode): worst logits relative L2 vs the CPU %.3g; greedy differs at %d steps", name, steps, worst, flips)
			if tol == 2e-3 {
				batchEqualsAloneTol(t, mq, nil, 8, 16, 2e-3)
			}
		})
	}
}

// TestQactHVariants checks that every qact_h variant a row length may take
// (qactHKernel's, and qact_h's own three reads of long rows) writes the same
// halves and scales, bit for bit, and that those are rmsnorm*gain (or x)
// scaled by a power of two and rounded to half: rows from 1,000 to 32,768
// values, normalized and not, of small, large and all-zero tokens.
func TestQactHVariants(t *testing.T) {
	g := testDevice(t)
	rng := rand.New(rand.NewPCG(7, 11))
	const eps = 1e-6
	for _, K := range []int{1000, 4096, 5120, 8192, 12288, 32768} {
		for _, norm := range []bool{false, true} {
			name, threads := qactHKernel(K, norm)
			if K > 4096 && K <= 8192 && name != "qact_h32" || !norm && K > 8192 && name != "qact_hw" {
				t.Errorf("K %d, norm %v: qactHKernel picks %s", K, norm, name)
			}
			const n = 4
			x := randVec(rng, n*K, 3)
			for k := range K {
				x[K+k] *= 5e4 // past f16's range unless scaled
				x[3*K+k] = 0
			}
			var gain []float32
			dg := uint64(0)
			if norm {
				gain = gainVec(rng, K)
				dg = devF32(t, g, gain)
			}
			dx := devF32(t, g, x)
			run := func(kern string, threads uint32) ([]byte, []float32) {
				xh, hs := devZeros(t, g, 2*n*K), devZeros(t, g, 4*n)
				if err := g.launch(kern, [3]uint32{n}, threads, 0, dx, i32(K), i32(K), dg, f32(eps), xh, hs); err != nil {
					t.Fatal(err)
				}
				waitStream(t, g)
				b := make([]byte, 2*n*K)
				if err := g.download(b, xh); err != nil {
					t.Fatal(err)
				}
				return b, getF32(t, g, hs, n)
			}
			wantH, wantS := run("qact_h", 256)
			gotH, gotS := run(name, threads)
			if !bytes.Equal(gotH, wantH) || fmt.Sprint(gotS) != fmt.Sprint(wantS) {
				t.Errorf("K %d, norm %v: %s differs from qact_h", K, norm, name)
			}
			ref := x
			if norm {
				ref = rmsRows(x, gain, K, eps)
			}
			for tok := range n {
				var amax float64
				for _, v := range ref[tok*K : (tok+1)*K] {
					amax = max(amax, math.Abs(float64(v)))
				}
				_, e := math.Frexp(amax)
				if amax == 0 {
					e = 0
				}
				if s := float64(gotS[tok]); s != math.Ldexp(1, e-12) {
					t.Errorf("K %d, norm %v, token %d: scale %g, want 2^%d", K, norm, tok, s, e-12)
				}
				for k := range K {
					h := numfmt.F16ToF32(uint16(gotH[2*(tok*K+k)]) | uint16(gotH[2*(tok*K+k)+1])<<8)
					want := ref[tok*K+k] * float32(math.Ldexp(1, 12-e))
					if d := math.Abs(float64(h - want)); d > 1e-3*math.Abs(float64(want))+1e-4 {
						t.Fatalf("K %d, norm %v, token %d, value %d: %g, want %g", K, norm, tok, k, h, want)
					}
				}
			}
		}
	}
}
