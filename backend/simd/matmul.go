package simd

import (
	"fmt"

	"inferno/backend"
	"inferno/gguf"
)

// Acts is the right-hand side of a MatMul, prepared for the weight's type:
// for Q8_0 weights the activations quantized to int8 in blocks of 32 with a
// float32 scale each, for F32, F16 and BF16 weights the float32 activations
// themselves. Its buffers grow to the largest product seen and are reused.
//
// For the AVX2 and Go kernels, quantized tokens are stored in groups of
// four, block-interleaved, so that the 4x4 matrix-matrix kernel reads one
// contiguous stream, and the last n%4 tokens one after another; for the
// VNNI kernels every token is stored contiguously.
type Acts struct {
	typ      gguf.TensorType
	n, cols  int
	nb       int       // Q8_0 blocks per token
	groups   int       // groups of four interleaved tokens
	x        []float32 // the activations, n*cols values
	qs       []int8    // n*cols quantized values
	ds       []float32 // n*nb scales, token-major
	cx       []int32   // n*nb block sums times -128, token-major
	dsx      []float32 // for each group of four tokens and block: each token's scale 4 times
	prepared bool
}

// Prepare readies a for the product of w with n tokens of x. It quantizes
// nothing yet: call Quantize for every token (possibly split among
// workers) before MatMulRows.
func (a *Acts) Prepare(w *backend.Weight, x []float32, n int) {
	if len(x) < n*w.Cols {
		panic(fmt.Sprintf("simd: MatMul of %s (%dx%d) with %d values for %d tokens", w.Name, w.Rows, w.Cols, len(x), n))
	}
	if len(w.Data) < w.Rows*w.RowBytes() {
		panic(fmt.Sprintf("simd: weight %s holds %d bytes, want %d", w.Name, len(w.Data), w.Rows*w.RowBytes()))
	}
	a.typ, a.n, a.cols, a.x = w.Type, n, w.Cols, x[:n*w.Cols]
	a.prepared = true
	switch w.Type {
	case gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16:
	case gguf.TensorQ8_0:
		if w.Cols%qk != 0 {
			panic(fmt.Sprintf("simd: Q8_0 weight %s has %d columns, not a multiple of %d", w.Name, w.Cols, qk))
		}
		a.nb = w.Cols / qk
		a.groups = n / 4
		if vnni {
			a.groups = 0
		}
		a.qs = grow(a.qs, n*w.Cols)
		a.ds = grow(a.ds, n*a.nb)
		a.cx = grow(a.cx, n*a.nb)
		a.dsx = grow(a.dsx, a.groups*a.nb*16)
	default:
		panic(fmt.Sprintf("simd: weight %s has unsupported type %s", w.Name, w.Type))
	}
}

// Quantize quantizes tokens t0..t1-1 of the activations given to Prepare.
// Disjoint token ranges may be quantized concurrently. It does nothing for
// float weights.
func (a *Acts) Quantize(t0, t1 int) {
	if a.typ != gguf.TensorQ8_0 {
		return
	}
	cols, nb := a.cols, a.nb
	for t := t0; t < t1; t++ {
		x := a.x[t*cols : (t+1)*cols]
		ds, cx := a.ds[t*nb:(t+1)*nb], a.cx[t*nb:(t+1)*nb]
		g, j := t/4, t%4
		if g >= a.groups {
			quantizeQ8(a.qs[t*cols:(t+1)*cols], qk, ds, cx, x)
			continue
		}
		quantizeQ8(a.qs[g*4*cols+j*qk:(g+1)*4*cols], 4*qk, ds, cx, x)
		dsx := a.dsx[g*16*nb : (g+1)*16*nb]
		for b, d := range ds {
			s := dsx[b*16+j*4 : b*16+j*4+4]
			s[0], s[1], s[2], s[3] = d, d, d, d
		}
	}
}

// MatMulRows computes rows r0..r1-1 of y = W x for the activations a was
// prepared with: y[t*w.Rows+r] for every token t. Each output element is
// computed the same way whatever the range, so disjoint row ranges may be
// computed concurrently, each on its own Ops, and give the bits of a single
// call. The arguments are checked even for an empty range.
func (o *Ops) MatMulRows(y []float32, w *backend.Weight, a *Acts, r0, r1 int) {
	if !a.prepared || a.typ != w.Type || a.cols != w.Cols {
		panic(fmt.Sprintf("simd: activations not prepared for weight %s", w.Name))
	}
	if r0 < 0 || r1 > w.Rows || r0 > r1 {
		panic(fmt.Sprintf("simd: rows %d..%d of weight %s with %d rows", r0, r1, w.Name, w.Rows))
	}
	if len(y) < a.n*w.Rows {
		panic(fmt.Sprintf("simd: MatMul of %s for %d tokens into %d values", w.Name, a.n, len(y)))
	}
	if r0 == r1 {
		return
	}
	switch {
	case w.Type != gguf.TensorQ8_0:
		matMulFloat(y, w, a, r0, r1)
	case a.groups == 0 && vnni && a.n >= 4:
		o.matMulQ8VNNI(y, w, a, r0, r1)
	default:
		matMulQ8(y, w, a, r0, r1)
	}
}

// matMulQ8 computes rows r0..r1-1 for Q8_0 weights: full groups of four
// tokens with the 4x4 tile kernel, the remaining tokens with the 8-row
// matrix-vector kernel, leftover rows in Go. Rows go in chunks that stay
// in L1 while every group of tokens streams past them.
func matMulQ8(y []float32, w *backend.Weight, a *Acts, r0, r1 int) {
	rows, cols, nb, n := w.Rows, w.Cols, a.nb, a.n
	rb := nb * blockBytes
	groups := a.groups
	chunk := r1 - r0
	if groups > 0 {
		chunk = max(8, (24<<10)/rb&^7)
	}
	for c0 := r0; c0 < r1; c0 += chunk {
		c1 := min(c0+chunk, r1)
		for g := range groups {
			qs := a.qs[g*4*cols : (g+1)*4*cols]
			dsx := a.dsx[g*16*nb : (g+1)*16*nb]
			yg := y[4*g*rows : (4*g+4)*rows]
			r := c0
			for ; r+4 <= c1; r += 4 {
				q8Tile(yg[r:], rows, w.Data[r*rb:(r+4)*rb], rb, qs, dsx, nb)
			}
			for ; r < c1; r++ {
				row := w.Data[r*rb : (r+1)*rb]
				for j := range 4 {
					yg[j*rows+r] = q8DotGo(row, qs[j*qk:], 4*qk, dsx[j*4:], 16, nb)
				}
			}
		}
		for t := 4 * groups; t < n; t++ {
			qs := a.qs[t*cols : (t+1)*cols]
			ds := a.ds[t*nb : (t+1)*nb]
			yt := y[t*rows : (t+1)*rows]
			r := c0
			if m := (c1 - c0) &^ 7; m > 0 {
				q8MatVec(yt[r:r+m], w.Data[r*rb:(r+m)*rb], rb, qs, ds, nb)
				r += m
			}
			for ; r < c1; r++ {
				yt[r] = q8DotGo(w.Data[r*rb:(r+1)*rb], qs, qk, ds, 1, nb)
			}
		}
	}
}

// matMulFloat computes rows r0..r1-1 for F32, F16 and BF16 weights, four
// rows at a time, for blocks of tokens whose activations stay in L2.
func matMulFloat(y []float32, w *backend.Weight, a *Acts, r0, r1 int) {
	const tokenBlock = 32
	rows, cols, n := w.Rows, w.Cols, a.n
	rb := w.RowBytes()
	var tmp [4]float32
	for t0 := 0; t0 < n; t0 += tokenBlock {
		t1 := min(t0+tokenBlock, n)
		r := r0
		for ; r+4 <= r1; r += 4 {
			wr := w.Data[r*rb : (r+4)*rb]
			for t := t0; t < t1; t++ {
				dot4(y[t*rows+r:t*rows+r+4], wr, rb, w.Type, a.x[t*cols:(t+1)*cols])
			}
		}
		for ; r < r1; r++ {
			wr := w.Data[r*rb : (r+1)*rb]
			for t := t0; t < t1; t++ {
				dot4(tmp[:], wr, 0, w.Type, a.x[t*cols:(t+1)*cols])
				y[t*rows+r] = tmp[0]
			}
		}
	}
}

// grow returns b resized to n values, reallocating only when it is too small.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n, max(n, 2*cap(b)))
	}
	return b[:n]
}
