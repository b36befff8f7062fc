package simd

import (
	"fmt"

	"inferno/backend"
	"inferno/gguf"
)

// Acts is the right-hand side of a MatMul, prepared for the weight's type
// (its table entry's activation format): for Q8_0-like weights the
// activations quantized to int8 in blocks of 32 with a float32 scale each
// (and the block sums), for the K-quants in blocks of 256 (Q8_K, with the
// sums of every 16 and 32 values), for F32, F16 and BF16 weights the
// float32 activations themselves. Its buffers grow to the largest product
// seen and are reused.
//
// Tokens are stored one after another, except for Q8_0 weights on CPUs
// without VNNI: there, for the 4x4 AVX2 kernel, tokens are stored in
// groups of four, block-interleaved, so that it reads one contiguous
// stream, and the last n%4 tokens one after another.
type Acts struct {
	typ      gguf.TensorType
	k        *typeKernels
	n, cols  int
	nb       int       // activation blocks per token
	groups   int       // Q8_0 on AVX2: groups of four interleaved tokens
	x        []float32 // the activations, n*cols values
	qs       []int8    // n*cols quantized values
	ds       []float32 // n*nb scales, token-major
	cx       []int32   // blocks of 32: n*nb block sums times -128, token-major
	sx       []float32 // actQ8_1: n*nb scales times block sums
	bs       []int16   // actQ8K: n*nb*bsK sums of 16 and of 32 values
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
	k := kernelsOf(w.Type)
	if k == nil {
		panic(fmt.Sprintf("simd: weight %s has unsupported type %s", w.Name, w.Type))
	}
	a.typ, a.k, a.n, a.cols, a.x = w.Type, k, n, w.Cols, x[:n*w.Cols]
	a.prepared = true
	a.groups = 0
	switch k.act {
	case actF32:
	case actQ8_0, actQ8_1:
		if w.Cols%qk != 0 {
			panic(fmt.Sprintf("simd: %s weight %s has %d columns, not a multiple of %d", w.Type, w.Name, w.Cols, qk))
		}
		a.nb = w.Cols / qk
		if w.Type == gguf.TensorQ8_0 && !vnni {
			a.groups = n / 4
		}
		a.qs = grow(a.qs, n*w.Cols)
		a.ds = grow(a.ds, n*a.nb)
		a.cx = grow(a.cx, n*a.nb)
		a.dsx = grow(a.dsx, a.groups*a.nb*16)
		if k.act == actQ8_1 {
			a.sx = grow(a.sx, n*a.nb)
		}
	case actQ8K:
		if w.Cols%qkK != 0 {
			panic(fmt.Sprintf("simd: %s weight %s has %d columns, not a multiple of %d", w.Type, w.Name, w.Cols, qkK))
		}
		a.nb = w.Cols / qkK
		a.qs = grow(a.qs, n*w.Cols)
		a.ds = grow(a.ds, n*a.nb)
		a.bs = grow(a.bs, n*a.nb*bsK)
	}
}

// Quantized reports whether the activations are quantized (Quantize has
// work to do) rather than used as float32.
func (a *Acts) Quantized() bool { return a.k != nil && a.k.act != actF32 }

// Quantize quantizes tokens t0..t1-1 of the activations given to Prepare.
// Disjoint token ranges may be quantized concurrently. It does nothing for
// float weights.
func (a *Acts) Quantize(t0, t1 int) {
	cols, nb := a.cols, a.nb
	switch a.k.act {
	case actQ8K:
		for t := t0; t < t1; t++ {
			quantizeQ8K(a.qs[t*cols:(t+1)*cols], a.ds[t*nb:(t+1)*nb], a.bs[t*nb*bsK:(t+1)*nb*bsK], a.x[t*cols:(t+1)*cols])
		}
		return
	case actF32:
		return
	}
	for t := t0; t < t1; t++ {
		x := a.x[t*cols : (t+1)*cols]
		ds, cx := a.ds[t*nb:(t+1)*nb], a.cx[t*nb:(t+1)*nb]
		g, j := t/4, t%4
		if g >= a.groups {
			quantizeQ8(a.qs[t*cols:(t+1)*cols], qk, ds, cx, x)
			if a.k.act == actQ8_1 {
				sx := a.sx[t*nb : (t+1)*nb]
				for b, c := range cx {
					sx[b] = ds[b] * float32(-c/128)
				}
			}
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
	case a.k.act == actF32:
		matMulFloat(y, w, a, r0, r1)
	case w.Type != gguf.TensorQ8_0:
		o.matMulBlocks(y, w, a, r0, r1)
	case a.groups == 0 && vnni && a.n >= 4:
		o.matMulQ8VNNI(y, w, a, r0, r1)
	default:
		matMulQ8(y, w, a, r0, r1)
	}
}

// minTileTokens is the fewest tokens for which a product packs its rows
// into tiles for the multi-token kernel rather than running the
// matrix-vector kernel once per token.
const minTileTokens = 8

// matMulBlocks computes rows r0..r1-1 for the block formats other than
// Q8_0. With a tile kernel and enough tokens, each group of eight rows is
// packed once and multiplied by four tokens at a time (the last n%4 tokens
// by the matrix-vector kernel); otherwise the matrix-vector kernel runs
// token by token over chunks of rows that stay in L1. Rows beyond a
// multiple of eight go to the Go reference.
func (o *Ops) matMulBlocks(y []float32, w *backend.Weight, a *Acts, r0, r1 int) {
	k := a.k
	rows, n := w.Rows, a.n
	rb := w.RowBytes()
	r := r0
	if tile := tileName(k); tile != "" && n >= minTileTokens {
		if tile == "vnni" && k.tile == tileQ8 {
			for ; r+16 <= r1; r += 16 {
				wr := w.Data[r*rb : (r+16)*rb]
				o.packRows16(k, wr, rb, a.nb)
				for t := o.q8Tile16(y[r:], rows, a, w.Data[(r+16)*rb:], rb); t < n; t++ {
					matVec(k, y[t*rows+r:t*rows+r+16], wr, rb, a, t)
				}
			}
		}
		if tile == "vnni" && k.tile == tileK {
			for ; r+16 <= r1; r += 16 {
				wr := w.Data[r*rb : (r+16)*rb]
				o.packRows16(k, wr, rb, a.nb)
				t := 0
				for ; t+4 <= n; t += 4 {
					kTileWide(y[t*rows+r:], rows, k.k, o.pack16, a.qs[t*a.cols:(t+4)*a.cols], a.cols, a.ds[t*a.nb:(t+4)*a.nb], a.bs[t*a.nb*bsK:(t+4)*a.nb*bsK], a.nb)
				}
				for ; t < n; t++ {
					matVec(k, y[t*rows+r:t*rows+r+16], wr, rb, a, t)
				}
			}
		}
		for ; r+8 <= r1; r += 8 {
			wr := w.Data[r*rb : (r+8)*rb]
			o.packRows(k, wr, rb, a.nb)
			t := 0
			for ; t+4 <= n; t += 4 {
				o.tile4(y[t*rows+r:], rows, k, a, t, tile)
			}
			for ; t < n; t++ {
				matVec(k, y[t*rows+r:t*rows+r+8], wr, rb, a, t)
			}
		}
	} else {
		chunk := (r1 - r0) &^ 7
		if n > 1 {
			chunk = max(8, (24<<10)/rb&^7)
		}
		for r+8 <= r1 {
			m := min(chunk, (r1-r)&^7)
			wr := w.Data[r*rb : (r+m)*rb]
			for t := range n {
				matVec(k, y[t*rows+r:t*rows+r+m], wr, rb, a, t)
			}
			r += m
		}
	}
	for ; r < r1; r++ {
		row := w.Data[r*rb : (r+1)*rb]
		for t := range n {
			y[t*rows+r] = a.dot(row, t)
		}
	}
}

// dot returns the Go reference product of one weight row with token t.
func (a *Acts) dot(row []byte, t int) float32 {
	cols, nb := a.cols, a.nb
	if a.k.act == actQ8K {
		return dotK(a.k.k, row, len(row)/nb, a.qs[t*cols:(t+1)*cols], a.ds[t*nb:(t+1)*nb], a.bs[t*nb*bsK:(t+1)*nb*bsK], nb)
	}
	var sx []float32
	if a.k.act == actQ8_1 {
		sx = a.sx[t*nb : (t+1)*nb]
	}
	return dot32(a.k.l, row, a.qs[t*cols:(t+1)*cols], a.ds[t*nb:(t+1)*nb], sx, nb)
}

// matVec computes len(y) rows (a multiple of 8) of w times token t: the
// type's assembly kernel, or the Go reference row by row.
func matVec(k *typeKernels, y []float32, w []byte, rb int, a *Acts, t int) {
	if blockAsm() && k.matVec != nil {
		k.matVec(y, w, rb, a, t)
		return
	}
	for r := range y {
		y[r] = a.dot(w[r*rb:(r+1)*rb], t)
	}
}

// packRows packs eight rows of w into o.pack for the type's tile kernel.
func (o *Ops) packRows(k *typeKernels, w []byte, rb, nb int) {
	if k.tile == tileK {
		o.pack = grow(o.pack, nb*kPackBytes(k.k.nsub))
		if k.pack != nil {
			k.pack(o.pack, w, rb, nb)
		} else {
			packKGo(k.k, o.pack, w, rb, rb/nb, nb)
		}
		return
	}
	o.pack = grow(o.pack, nb*packBlockBytes)
	if k.pack != nil {
		k.pack(o.pack, w, rb, nb)
	} else {
		packQ8Go(k.l, o.pack, w, rb, nb)
	}
}

// packRows16 packs sixteen rows of w into o.pack16 for the wide K tile:
// the tiles of rows 0..7 and 8..15 interleaved by 32-byte pieces (see
// kPackBytes), so that a 64-byte vector holds one piece of each.
func (o *Ops) packRows16(k *typeKernels, w []byte, rb, nb int) {
	pb := nb * packBlockBytes
	if k.tile == tileK {
		pb = nb * kPackBytes(k.k.nsub)
	}
	o.pack16 = grow(o.pack16, 2*pb)
	for h := range 2 {
		o.packRows(k, w[8*h*rb:(8*h+8)*rb], rb, nb)
		for i := 0; i < pb; i += 32 {
			*(*[32]byte)(o.pack16[2*i+32*h:]) = *(*[32]byte)(o.pack[i:])
		}
	}
}

// q8Tile16 multiplies the sixteen rows packed in o.pack16 for the
// Q8_0-like tile by the tokens of a, eight at a time and then four, token
// t's results going to y[t*ldy:][:16]; it returns the number of tokens
// done (the rest are fewer than four). Meanwhile it prefetches the weight
// rows that come next (sixteen rows from next on, rb bytes each).
func (o *Ops) q8Tile16(y []float32, ldy int, a *Acts, next []byte, rb int) int {
	cols, nb, n := a.cols, a.nb, a.n
	t := 0
	for ; t+8 <= n; t += 8 {
		q8VNNI16x8(y[t*ldy:], ldy, o.pack16, a.qs[t*cols:(t+8)*cols], cols, a.ds[t*nb:(t+8)*nb], a.cx[t*nb:(t+8)*nb], nb, next, 16*rb/nb)
	}
	if t+4 <= n {
		if t > 0 {
			next = nil // prefetched already
		}
		q8VNNI16x4(y[t*ldy:], ldy, o.pack16, a.qs[t*cols:(t+4)*cols], cols, a.ds[t*nb:(t+4)*nb], a.cx[t*nb:(t+4)*nb], nb, next, 16*rb/nb)
		t += 4
	}
	return t
}

// tile4 multiplies the packed rows in o.pack by tokens t..t+3 of a, token
// j's eight results going to y[j*ldy:][:8].
func (o *Ops) tile4(y []float32, ldy int, k *typeKernels, a *Acts, t int, tile string) {
	cols, nb := a.cols, a.nb
	if k.tile == tileQ8 {
		q8VNNI8x4(y, ldy, o.pack, a.qs[t*cols:(t+4)*cols], cols, a.ds[t*nb:(t+4)*nb], a.cx[t*nb:(t+4)*nb], nb)
		return
	}
	kTile(y, ldy, k.k, o.pack, a.qs[t*cols:(t+4)*cols], cols, a.ds[t*nb:(t+4)*nb], a.bs[t*nb*bsK:(t+4)*nb*bsK], nb, tile == "vnni")
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
