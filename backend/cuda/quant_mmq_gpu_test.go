package cuda

// The block formats' int8 tensor-core products (mmq, kernels/mmq.cuh)
// on the GPU, for every type and tile: against the products with the
// activations rounded as qact8 rounds them and the exact ones (checkQ8, as
// the decode kernels), and against mvqn on the same activations (their
// speed in the batch runner: BenchmarkBatchDecode, against mmh in its mmh
// variant); without a GPU, the tiles' shared memory and choice.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/gguf"
)

// testMMQ checks mmq's store (with the norm) and add (without) epilogues
// of every tile for ragged token counts, one to two tiles of tokens, and
// its SwiGLU epilogue over an interleaved gate/up matrix. x holds at least
// 150 tokens of K values.
func testMMQ(t *testing.T, g *device, typ gguf.TensorType, gw gpuWeight, W []float32, rows, K int, x, xn []float32, dx, dg uint64, eps float32) {
	t.Helper()
	if K%256 != 0 {
		return
	}
	f := formatOf(typ)
	const most = 150
	xq, xs, xsum := devZeros(t, g, most*K), devZeros(t, g, 4*most*K/32), devZeros(t, g, 4*most*K/16)
	act := func(n int, gain uint64) {
		if err := g.launch("qact8", [3]uint32{uint32(n)}, 256, 0, dx, i32(K), i32(K), gain, f32(eps), xq, xs, xsum); err != nil {
			t.Fatal(err)
		}
	}
	run := func(k mmqKern, w gpuWeight, n int, y uint64, ldy, nout, ep int) {
		name := k.name(f)
		fn, err := g.fn(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.allowSmem(fn, name, k.smem(f)); err != nil {
			t.Fatal(err)
		}
		if err := g.launch(name, [3]uint32{uint32((w.mpad + k.bm - 1) / k.bm), uint32((n + k.bn - 1) / k.bn)}, uint32(k.threads()), uint32(k.smem(f)),
			w.lo, w.hi, w.m0, w.m1, i32(w.rows), i32(w.mpad), i32(w.cols), xq, xs, xsum, i32(n), y, i32(ldy), i32(nout), i32(ep)); err != nil {
			t.Fatal(err)
		}
		if err := g.sync(name); err != nil {
			t.Fatal(err)
		}
	}
	// The references for the most tokens; n tokens' are their first n*rows.
	refN, exactN := refProduct(W, rows, K, q8Act(xn[:most*K]), most), refProduct(W, rows, K, xn[:most*K], most)
	refRaw, exactRaw := refProduct(W, rows, K, q8Act(x[:most*K]), most), refProduct(W, rows, K, x[:most*K], most)
	rng := rand.New(rand.NewPCG(7, uint64(K)))
	for _, mk := range mmqKerns() {
		bn := mk.bn
		if mk.smem(f) > g.SmemOptin {
			continue // never launched on this GPU (mmqTile)
		}
		for _, n := range []int{1, bn/2 + 3, bn, min(bn+9, most)} {
			// Outputs token-major with a row stride of rows+5.
			rows5 := func(v []float32) []float32 {
				out := make([]float32, 0, n*rows)
				for j := range n {
					out = append(out, v[j*(rows+5):j*(rows+5)+rows]...)
				}
				return out
			}
			desc := fmt.Sprintf("%s n=%d", mk.name(f), n)
			act(n, dg)
			dy := devF32(t, g, randVec(rng, n*(rows+5), 1))
			run(mk, gw, n, dy, rows+5, 0, epStore)
			got := rows5(getF32(t, g, dy, n*(rows+5)))
			checkQ8(t, desc+" store", got, refN[:n*rows], exactN[:n*rows])
			if n <= mvnMax {
				// The same activations through mvqn: the same sums, in
				// another order.
				dm := devZeros(t, g, 4*n*(rows+5))
				name := f.mvnName(n)
				if err := g.launch(name, [3]uint32{uint32(persistentGrid(rows, 0))}, 256, 0, gw.lo, gw.hi, gw.m0, gw.m1, i32(rows), i32(K), xq, xs, xsum, i32(n), dm, i32(rows+5), i32(0), i32(epStore)); err != nil {
					t.Fatal(err)
				}
				if e := relL2(got, rows5(getF32(t, g, dm, n*(rows+5)))); e > 1e-5 || math.IsNaN(e) {
					t.Errorf("%s: relative L2 %.3g against %s on the same activations", desc, e, name)
				}
			}
			act(n, 0)
			y0 := randVec(rng, n*(rows+5), 1)
			dy = devF32(t, g, y0)
			run(mk, gw, n, dy, rows+5, 0, epAdd)
			got = getF32(t, g, dy, n*(rows+5))
			for i := range got {
				got[i] -= y0[i]
			}
			checkQ8(t, desc+" add", rows5(got), refRaw[:n*rows], exactRaw[:n*rows])
		}
	}
	// SwiGLU: a ragged FFN width of 100, outputs ffn apart.
	const ffn = 100
	gate := &backend.Weight{Name: "gate", Type: typ, Rows: ffn, Cols: K, Data: randomBlocks(rng, typ, ffn, K)}
	up := &backend.Weight{Name: "up", Type: typ, Rows: ffn, Cols: K, Data: randomBlocks(rng, typ, ffn, K)}
	gu, err := (&Model{dev: g}).uploadGateUp("gu", gate, up)
	if err != nil {
		t.Fatal(err)
	}
	G, U := dequant(t, gate), dequant(t, up)
	for _, mk := range []mmqKern{{bm: 32, bn: 64}, {bm: 64, bn: 128}, {v2: true, bm: 32, bn: 64}, {v2: true, bm: 64, bn: 128},
		{v2: true, bm: 32, bn: 16}, {v2: true, w16: true, bm: 32, bn: 32}} {
		if mk.smem(f) > g.SmemOptin {
			continue
		}
		const n = 40
		act(n, dg)
		dy := devZeros(t, g, 4*n*ffn)
		run(mk, gu, n, dy, ffn, ffn, epSwiGLU)
		xqf := q8Act(xn[:n*K])
		ref := swiglu(refProduct(G, ffn, K, xqf, n), refProduct(U, ffn, K, xqf, n))
		want := swiglu(refProduct(G, ffn, K, xn[:n*K], n), refProduct(U, ffn, K, xn[:n*K], n))
		checkQ8(t, fmt.Sprintf("%s swiglu n=%d", mk.name(f), n), getF32(t, g, dy, n*ffn), ref, want)
	}
}

// TestMMQSmem: every type's mmq tiles fit the H200's (sm_90's) 227 KB of
// shared memory a block, and the k-groups' partial sums fit in it.
func TestMMQSmem(t *testing.T) {
	t.Parallel()
	for _, typ := range issueTypes {
		f := formatOf(typ)
		if f.mmqRow()%32 != 16 {
			t.Errorf("%s: a weight row's stage takes %d bytes, not an odd number of 16-byte chunks", typ, f.mmqRow())
		}
		for _, mk := range mmqKerns() {
			smem := mk.smem(f)
			if smem > 227<<10 {
				t.Errorf("%s: %d bytes of shared memory, more than sm_90's 227 KB", mk.name(f), smem)
			}
			if red := mk.red(); red > smem {
				t.Errorf("%s: the partial sums take %d bytes, more than the %d of the stages", mk.name(f), red, smem)
			}
		}
	}
}

// TestMMQTile: mmq's tile choices, and that a GPU with less shared memory
// (sm_80: 163 KB a block; sm_86 and sm_89: 99 KB) gets smaller tiles or
// none (mmh then).
func TestMMQTile(t *testing.T) {
	t.Parallel()
	q4k, q8 := formatOf(gguf.TensorQ4_K), formatOf(gguf.TensorQ8_0)
	type tune struct {
		name string
		set  func(*tuning)
	}
	v1 := tune{"mmq (mq2 0), tiles up to 128 tokens", func(t *tuning) { t.mq2, t.mqn = 0, 128 }}
	w16 := tune{"mmq2, 16 warps (mqw 1)", func(t *tuning) { t.mqw = 1 }}
	def := tune{"the defaults", func(*tuning) {}}
	for _, c := range []struct {
		tune    tune
		smem    int
		f       *qformat
		mpad, n int
		want    mmqKern
		ok      bool
	}{
		{v1, 227 << 10, q4k, 4096, 9, mmqKern{bm: 32, bn: 16}, true},
		{v1, 227 << 10, q4k, 4096, 17, mmqKern{bm: 32, bn: 32}, true},
		{v1, 227 << 10, q4k, 4096, 100, mmqKern{bm: 32, bn: 128}, true},
		{v1, 227 << 10, q4k, 24576, 64, mmqKern{bm: 64, bn: 64}, true},
		{v1, 227 << 10, q4k, 24576, 300, mmqKern{bm: 64, bn: 128}, true},
		{v1, 227 << 10, q8, 24576, 128, mmqKern{bm: 64, bn: 128}, true},
		{v1, 163 << 10, q8, 24576, 128, mmqKern{bm: 32, bn: 128}, false},
		{v1, 163 << 10, q8, 24576, 64, mmqKern{bm: 64, bn: 64}, true},
		{v1, 163 << 10, q4k, 24576, 128, mmqKern{bm: 32, bn: 128}, true},
		{v1, 99 << 10, q8, 24576, 64, mmqKern{bm: 32, bn: 64}, false},
		{v1, 99 << 10, q8, 4096, 32, mmqKern{bm: 32, bn: 32}, true},
		{def, 227 << 10, q4k, 4096, 64, mmqKern{v2: true, bm: 32, bn: 64}, true},
		{w16, 227 << 10, q4k, 4096, 64, mmqKern{v2: true, w16: true, bm: 32, bn: 64}, true},
		{tune{"16 warps, tiles up to 128 tokens", func(t *tuning) { t.mqw, t.mqn = 1, 128 }}, 227 << 10, q4k, 4096, 128, mmqKern{v2: true, bm: 32, bn: 128}, true},
		{def, 227 << 10, q4k, 4096, 128, mmqKern{v2: true, bm: 32, bn: 64}, true},
		{tune{"16 warps, tiles up to 32 tokens", func(t *tuning) { t.mqw, t.mqn = 1, 32 }}, 227 << 10, q4k, 4096, 64, mmqKern{v2: true, bm: 32, bn: 32}, true},
		{w16, 227 << 10, q4k, 6144, 32, mmqKern{v2: true, bm: 32, bn: 32}, true},
		{w16, 227 << 10, q4k, 28672, 64, mmqKern{v2: true, bm: 64, bn: 64}, true},
		{tune{"16 warps, 64-row tiles from 999 of them", func(t *tuning) { t.mqw, t.mq64 = 1, 999 }}, 227 << 10, q4k, 28672, 64, mmqKern{v2: true, bm: 32, bn: 64}, true},
	} {
		tu := defaultTuning()
		c.tune.set(&tu)
		r := &Model{dev: &device{SmemOptin: c.smem, SMs: 132}, tune: tu}
		k, ok := r.mmqTile(c.f, c.mpad, 4096, c.n)
		if k != c.want || ok != c.ok {
			t.Errorf("%s, %s, %d KB, %d rows, %d tokens: %s (%v), want %s (%v)", c.tune.name, c.f.name, c.smem>>10, c.mpad, c.n, k.name(c.f), ok, c.want.name(c.f), c.ok)
		}
		if ok && k.smem(c.f) > c.smem {
			t.Errorf("%s: %s takes %d bytes, more than %d", c.tune.name, k.name(c.f), k.smem(c.f), c.smem)
		}
	}
}
