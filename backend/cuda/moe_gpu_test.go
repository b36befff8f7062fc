package cuda

// The experts' decode products of moe.cuh on the GPU against float64
// products of the dequantized weights: every variant (moe_mvn, moe_mvn2,
// moe_mvn3 and their moe_mvnq forms) at 1 to 8 tokens, stored and through
// SwiGLU, on one block an expert and on a block a tile. They skip without
// a GPU.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"inferno/backend"
	"inferno/gguf"
)

// moeHostGroup groups pairs by expert as moe_group does (grp: nact, then
// per chosen expert in increasing order e, start, count), each expert's
// pairs in decreasing order (the kernels' results must not depend on it).
func moeHostGroup(pick []int, E int) (grp, order []int32) {
	grp = []int32{0}
	for e := range E {
		start := len(order)
		for p := len(pick) - 1; p >= 0; p-- {
			if pick[p] == e {
				order = append(order, int32(p))
			}
		}
		if c := len(order) - start; c > 0 {
			grp[0]++
			grp = append(grp, int32(e), int32(start), int32(c))
		}
	}
	return grp, order
}

// moeRef returns each pair's product with its expert's rows (R of the
// stacked W, K values each) and its token's activations x: y[p*R + r].
func moeRef(W []float32, R, K int, x []float32, pick []int, k int) []float32 {
	y := make([]float32, len(pick)*R)
	for p, e := range pick {
		copy(y[p*R:], refProduct(W[e*R*K:(e+1)*R*K], R, K, x[p/k*K:(p/k+1)*K], 1))
	}
	return y
}

// moeGLURef returns SwiGLU of the products y (R rows a pair, gate and up
// rows interleaved as mv_row pairs them: unit u's gate row 16(u/8) + u%8,
// its up row 8 further), R/2 outputs a pair.
func moeGLURef(y []float32, R int) []float32 {
	var g, u []float32
	for p := 0; p < len(y); p += R {
		for i := range R / 2 {
			row := i/8*16 + i%8
			g, u = append(g, y[p+row]), append(u, y[p+row+8])
		}
	}
	return swiglu(g, u)
}

// TestMoEExperts runs the expert products over a stack of 8 experts of 80
// rows, 3 a token, for 1, 2, 3, 4, 5, 8 and 12 tokens (every token's
// experts the same at every count; up to 12 pairs an expert, three chunks
// of moe_mvn3's four), per block type and width: the gpt-oss shape
// (MXFP4 rows of 2880, moe_mvn3's), a row of K-quant superblocks in
// moe_mvn3's range, and narrower rows. Each variant's outputs must match
// the products with the activations rounded as the kernels round them, a
// pair's bit for bit whatever the other tokens of the step.
func TestMoEExperts(t *testing.T) {
	g := testDevice(t)
	const E, k, R, maxN = 8, 3, 80, 12
	const eps = 1e-6
	shapes := []struct {
		typ gguf.TensorType
		K   int
	}{
		{gguf.TensorMXFP4, 2880}, {gguf.TensorMXFP4, 512}, {gguf.TensorIQ4_NL, 2880}, {gguf.TensorQ4_K, 2816},
		{gguf.TensorQ6_K, 2048}, {gguf.TensorQ4_0, 96},
	}
	for _, sh := range shapes {
		t.Run(fmt.Sprintf("%s/%d", sh.typ, sh.K), func(t *testing.T) {
			use(t, g)
			K := sh.K
			rng := rand.New(rand.NewPCG(uint64(sh.typ), uint64(K)))
			w := &backend.Weight{Name: "experts", Type: sh.typ, Rows: E * R, Cols: K, Data: randomBlocks(rng, sh.typ, E*R, K)}
			W := dequant(t, w)
			r := &Model{dev: g}
			gw, err := r.uploadWeight(w)
			if err != nil {
				t.Fatal(err)
			}
			x := randVec(rng, maxN*K, 1)
			dx := devF32(t, g, x)
			xq, xs, xsum := devZeros(t, g, maxN*K), devZeros(t, g, 4*maxN*K/32), devZeros(t, g, 4*maxN*K/16)
			if err := g.launch("qact8", [3]uint32{maxN}, 256, 0, dx, i32(K), i32(K), uint64(0), f32(eps), xq, xs, xsum); err != nil {
				t.Fatal(err)
			}
			var picks []int // token t's experts: picks[t*k:(t+1)*k]
			for range maxN {
				picks = append(picks, rng.Perm(E)[:k]...)
			}
			xr := q8Act(x)
			first := map[string][]float32{} // a variant's outputs at one token
			for _, n := range []int{1, 2, 3, 4, 5, 8, maxN} {
				pick := picks[:n*k]
				grp, order := moeHostGroup(pick, E)
				dgrp, dorder := devBytes(t, g, i32Bytes(grp)), devBytes(t, g, i32Bytes(order))
				ref, exact := moeRef(W, R, K, xr, pick, k), moeRef(W, R, K, x, pick, k)
				for _, v := range []string{"", "2", "3", "q", "q2", "q3"} {
					name := "moe_mvn" + v + "_" + formatOf(sh.typ).name
					smem := 0
					if v != "" && v[0] == 'q' {
						smem = moeQinSmem(K, n)
					}
					for _, ep := range []int{epStore, epSwiGLU} {
						nout, want, wantExact := R, ref, exact
						if ep == epSwiGLU {
							nout, want, wantExact = R/2, moeGLURef(ref, R), moeGLURef(exact, R)
						}
						for _, blocks := range []int{1, (R/2 + 7) / 8} {
							dy := devF32(t, g, randVec(rng, n*k*nout, 1))
							if err := g.launch(name, [3]uint32{uint32(blocks), E}, 256, uint32(smem), gw.lo, gw.hi, gw.m0, gw.m1,
								i32(R), i32(K), xq, xs, xsum, dx, i32(k), dgrp, dorder, dy, i32(nout), i32(nout), i32(ep)); err != nil {
								t.Fatal(err)
							}
							if err := g.sync(name); err != nil {
								t.Fatal(err)
							}
							got := getF32(t, g, dy, n*k*nout)
							what := fmt.Sprintf("%s ep %d n=%d blocks %d", name, ep, n, blocks)
							checkQ8(t, what, got, want, wantExact)
							key := fmt.Sprintf("%s/%d/%d", name, ep, blocks)
							if f, ok := first[key]; !ok {
								first[key] = got[:k*nout]
							} else if !slices.Equal(f, got[:k*nout]) {
								t.Errorf("%s: token 0's outputs differ from the step of one token", what)
							}
							for i, v := range got {
								if math.IsNaN(float64(v)) {
									t.Fatalf("%s: output %d is NaN", what, i)
								}
							}
						}
					}
				}
			}
		})
	}
}
