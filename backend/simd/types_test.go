package simd

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/internal/floatbits"
	"inferno/numfmt"
)

// blockTypes are the quantized types of the table.
var blockTypes = []gguf.TensorType{
	gguf.TensorQ4_K, gguf.TensorQ6_K, gguf.TensorQ5_K, gguf.TensorQ3_K, gguf.TensorQ2_K, gguf.TensorIQ4_XS,
	gguf.TensorQ4_0, gguf.TensorQ5_0, gguf.TensorIQ4_NL, gguf.TensorMXFP4, gguf.TensorQ4_1, gguf.TensorQ5_1, gguf.TensorQ8_0,
}

// scaleFields returns the offsets of the float16 scales in a block of t.
func scaleFields(t gguf.TensorType) []int {
	switch t {
	case gguf.TensorQ4_K, gguf.TensorQ5_K, gguf.TensorQ4_1, gguf.TensorQ5_1:
		return []int{0, 2}
	case gguf.TensorQ6_K:
		return []int{208}
	case gguf.TensorQ3_K:
		return []int{108}
	case gguf.TensorQ2_K:
		return []int{80, 82}
	}
	return []int{0}
}

// randBlockWeight returns a rows x cols weight of type typ: normal values
// quantized by package numfmt, or (raw) random bytes whose float16 scales
// (MXFP4: E8M0 exponents) are set to random values of moderate size, so
// that every bit pattern of the values, sub-block scales and mins occurs.
func randBlockWeight(t testing.TB, rng *rand.Rand, typ gguf.TensorType, rows, cols int, raw bool) *backend.Weight {
	t.Helper()
	if !raw {
		w := randWeight(t, rng, typ, rows, cols)
		return w
	}
	f, _ := numfmt.FormatOf(typ)
	data := make([]byte, rows*cols/f.BlockSize*f.BlockBytes)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for b := 0; b < len(data); b += f.BlockBytes {
		if typ == gguf.TensorMXFP4 { // an E8M0 exponent: d = 2^-18 .. 2^-7
			data[b] = byte(110 + rng.IntN(12))
			continue
		}
		for _, o := range scaleFields(typ) {
			h := numfmt.F32ToF16(float32(rng.NormFloat64() * 1e-3))
			binary.LittleEndian.PutUint16(data[b+o:], h)
		}
	}
	return &backend.Weight{Name: fmt.Sprintf("raw%dx%d", rows, cols), Type: typ, Rows: rows, Cols: cols, Data: data}
}

// blockCols returns a column count of whole blocks of typ, about cols.
func blockCols(typ gguf.TensorType, cols int) int {
	f, _ := numfmt.FormatOf(typ)
	return max(1, cols/f.BlockSize) * f.BlockSize
}

// errorBound returns, for row r of w times token t of a (prepared and
// quantized from x), the bound on |kernel - exact| where exact is the
// float64 product of the dequantized row with x:
//
//   - the 8-bit activations: each x_i is replaced by dx*q_i, with
//     |x_i - dx*q_i| <= dx*(1/2 + 2^-16) (q rounds x*fl(1/dx), whose
//     relative error is at most 2^-23 on values up to 127), so the product
//     moves by at most sum_i |w_i| dx_i (1/2 + 2^-16);
//   - float32 rounding: per block, the integers are exact; the products by
//     d*dx (and dm*dx) and the sum into the accumulator each round once,
//     relative 2^-24, on terms bounded by S = sum_i (|d sc q_i| + |dm mn|)
//     |dx q_i| (the decoded scale structure), and numfmt's dequantization
//     rounds as often on the same terms: at most (nb+10) 2^-24 S.
func errorBound(k *typeKernels, row []byte, wrow []float32, a *Acts, t int) float64 {
	cols, nb := a.cols, a.nb
	qs := a.qs[t*cols : (t+1)*cols]
	ds := a.ds[t*nb : (t+1)*nb]
	var actErr, s float64
	bsz := cols / nb
	for i, w := range wrow {
		actErr += math.Abs(float64(w)) * float64(ds[i/bsz]) * (0.5 + 1.0/65536)
	}
	if k.k != nil {
		var kb kBlock
		bb := len(row) / nb
		sub := qkK / k.k.nsub
		for b := range nb {
			k.k.decode(&kb, row[b*bb:(b+1)*bb])
			for i := range qkK {
				j := i / sub
				xq := math.Abs(float64(ds[b]) * float64(qs[b*qkK+i]))
				s += (math.Abs(float64(kb.d)*float64(kb.sc[j])*float64(kb.q[i])) + math.Abs(float64(kb.dm)*float64(kb.mn[j]))) * xq
			}
		}
	} else {
		var q [32]int8
		for b := range nb {
			d, m := k.l.decode(&q, row[b*k.l.bytes:])
			for i, v := range q {
				xq := math.Abs(float64(ds[b]) * float64(qs[b*32+i]))
				s += (math.Abs(float64(d)*float64(v)) + math.Abs(float64(m))) * xq
			}
		}
	}
	return actErr + float64(nb+10)*math.Ldexp(s, -24)
}

// TestBlockTypesAgainstDequantize checks MatMul of every block type
// against the float64 product of numfmt's dequantized weights with the
// float32 activations, within the bound errorBound derives.
func TestBlockTypesAgainstDequantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ops := New()
	for _, typ := range blockTypes {
		for _, raw := range []bool{false, true} {
			for _, sh := range []struct{ rows, cols int }{{8, 256}, {19, 512}, {40, 1024}} {
				cols := blockCols(typ, sh.cols)
				w := randBlockWeight(t, rng, typ, sh.rows, cols, raw)
				for _, n := range []int{1, 3, 4, 9} {
					x := randVec(rng, n*cols, 1)
					if n > 1 {
						clear(x[cols : cols+32]) // a zero block of activations
					}
					y := make([]float32, n*sh.rows)
					ops.MatMul(y, w, x, n)
					want, _ := refMatMul(w, x, n)
					a := &ops.acts
					k := kernelsOf(typ)
					wrow := make([]float32, cols)
					worst := 0.0
					for r := range sh.rows {
						if err := numfmt.DequantizeRow(wrow, w.Row(r), typ, cols); err != nil {
							t.Fatal(err)
						}
						for tk := range n {
							bound := errorBound(k, w.Row(r), wrow, a, tk)
							got, exact := float64(y[tk*sh.rows+r]), want[tk*sh.rows+r]
							if e := math.Abs(got - exact); !(e <= bound) {
								t.Fatalf("%s raw=%v %dx%d n=%d: row %d token %d = %g, want %g: error %.3g > bound %.3g",
									typ, raw, sh.rows, cols, n, r, tk, got, exact, e, bound)
							} else {
								worst = max(worst, e/bound)
							}
						}
					}
					if testing.Verbose() && n == 9 && sh.rows == 40 {
						t.Logf("%-7s raw=%-5v worst error %.2f of the bound", typ, raw, worst)
					}
				}
			}
		}
	}
}

// TestBlockTypesTokensAndRows checks that a product's bits do not depend
// on the tokens beside a token (each token of a product of n gives the
// bits it gives alone) nor on how rows are split (MatMulRows over ranges),
// for every block type and every kernel path (matrix-vector, tile).
func TestBlockTypesTokensAndRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ops := New()
	for _, typ := range blockTypes {
		for _, raw := range []bool{false, true} {
			rows, cols := 43, blockCols(typ, 768)
			w := randBlockWeight(t, rng, typ, rows, cols, raw)
			n := 11
			x := randVec(rng, n*cols, 1)
			y := make([]float32, n*rows)
			ops.MatMul(y, w, x, n)
			one := make([]float32, rows)
			for tk := range n {
				ops.MatMul(one, w, x[tk*cols:(tk+1)*cols], 1)
				if i := floatbits.FirstDiff(y[tk*rows:(tk+1)*rows], one); i >= 0 {
					t.Fatalf("%s raw=%v: token %d of %d, row %d: %g, alone %g", typ, raw, tk, n, i, y[tk*rows+i], one[i])
				}
			}
			// Rows split at odd places, as a pool might (and does not).
			split := make([]float32, n*rows)
			var a Acts
			a.Prepare(w, x, n)
			a.Quantize(0, n)
			for _, rr := range [][2]int{{0, 8}, {8, 11}, {11, 32}, {32, 43}} {
				ops.MatMulRows(split, w, &a, rr[0], rr[1])
			}
			if i := floatbits.FirstDiff(y, split); i >= 0 {
				t.Fatalf("%s raw=%v: split rows differ at %d: %g, whole %g", typ, raw, i, split[i], y[i])
			}
		}
	}
}

// TestBlockKernelsBitwise checks each assembly kernel of every block type
// against its Go reference bit for bit: matVec against dot per row, the
// packers against the Go packers byte for byte, the tiles (AVX2 and
// VNNI, where the CPU has them, and the 512-bit K tile of sixteen rows)
// against dot per row and token.
func TestBlockKernelsBitwise(t *testing.T) {
	if !blockAsm() {
		t.Skip("no assembly kernels")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, typ := range blockTypes {
		if typ == gguf.TensorQ8_0 {
			continue // q8.go's tests
		}
		k := kernelsOf(typ)
		for _, raw := range []bool{false, true} {
			rows, cols := 16, blockCols(typ, 1024)
			w := randBlockWeight(t, rng, typ, rows, cols, raw)
			rb := w.RowBytes()
			n := 8
			x := randVec(rng, n*cols, 1)
			var a Acts
			a.Prepare(w, x, n)
			a.Quantize(0, n)
			ref := make([]float32, n*rows)
			for tk := range n {
				for r := range rows {
					ref[tk*rows+r] = a.dot(w.Row(r), tk)
				}
			}
			if k.matVec != nil {
				got := make([]float32, rows)
				for tk := range n {
					k.matVec(got, w.Data, rb, &a, tk)
					if i := floatbits.FirstDiff(got, ref[tk*rows:(tk+1)*rows]); i >= 0 {
						t.Fatalf("%s raw=%v matVec: token %d row %d: %g, Go %g", typ, raw, tk, i, got[i], ref[tk*rows+i])
					}
				}
			}
			if k.tile == tileNone {
				continue
			}
			var o Ops
			size := a.nb * packBlockBytes
			if k.tile == tileK {
				size = a.nb * kPackBytes(k.k.nsub)
			}
			goPack := make([]byte, size)
			if k.tile == tileK {
				packKGo(k.k, goPack, w.Data[:8*rb], rb, rb/a.nb, a.nb)
			} else {
				packQ8Go(k.l, goPack, w.Data[:8*rb], rb, a.nb)
			}
			if k.pack != nil {
				o.packRows(k, w.Data[:8*rb], rb, a.nb)
				for i := range goPack {
					if o.pack[i] != goPack[i] {
						t.Fatalf("%s raw=%v pack: byte %d = %#x, Go %#x", typ, raw, i, o.pack[i], goPack[i])
					}
				}
			}
			if k.tile == tileQ8 && vnni {
				// The 512-bit tile: all sixteen rows, eight tokens and then
				// four (the last four again).
				o.packRows16(k, w.Data[:16*rb], rb, a.nb)
				got := make([]float32, n*rows)
				if done := o.q8Tile16(got, rows, &a, nil, rb); done != n {
					t.Fatalf("%s: q8Tile16 did %d tokens of %d", typ, done, n)
				}
				if i := floatbits.FirstDiff(got, ref); i >= 0 {
					t.Fatalf("%s raw=%v wide tile: token %d row %d: %g, Go %g", typ, raw, i/rows, i%rows, got[i], ref[i])
				}
				clear(got)
				q8VNNI16x4(got, rows, o.pack16, a.qs[4*cols:8*cols], cols, a.ds[4*a.nb:8*a.nb], a.cx[4*a.nb:8*a.nb], a.nb, nil, 0)
				if i := floatbits.FirstDiff(got[:4*rows], ref[4*rows:]); i >= 0 {
					t.Fatalf("%s raw=%v wide tile of four tokens: token %d row %d: %g, Go %g", typ, raw, 4+i/rows, i%rows, got[i], ref[4*rows+i])
				}
			}
			if k.tile == tileK && vnni {
				// The 512-bit tile: all sixteen rows, from the packer's tiles.
				o.packRows16(k, w.Data[:16*rb], rb, a.nb)
				got := make([]float32, n*rows)
				for tk := 0; tk < n; tk += 4 {
					kTileWide(got[tk*rows:], rows, k.k, o.pack16, a.qs[tk*cols:(tk+4)*cols], cols, a.ds[tk*a.nb:(tk+4)*a.nb], a.bs[tk*a.nb*bsK:(tk+4)*a.nb*bsK], a.nb)
				}
				if i := floatbits.FirstDiff(got, ref); i >= 0 {
					t.Fatalf("%s raw=%v wide tile: token %d row %d: %g, Go %g", typ, raw, i/rows, i%rows, got[i], ref[i])
				}
			}
			o.pack = goPack
			for _, tile := range append(asmTiles(k), "go") {
				if tile == "go" && k.tile != tileK {
					continue
				}
				got := make([]float32, n*rows)
				for tk := 0; tk < n; tk += 4 {
					if tile == "go" {
						kTileGo(got[tk*rows:], rows, k.k, o.pack, a.qs[tk*cols:(tk+4)*cols], cols, a.ds[tk*a.nb:(tk+4)*a.nb], a.bs[tk*a.nb*bsK:(tk+4)*a.nb*bsK], a.nb)
					} else {
						o.tile4(got[tk*rows:], rows, k, &a, tk, tile)
					}
				}
				for tk := range n {
					if i := floatbits.FirstDiff(got[tk*rows:tk*rows+8], ref[tk*rows:tk*rows+8]); i >= 0 {
						t.Fatalf("%s raw=%v %s tile: token %d row %d: %g, Go %g", typ, raw, tile, tk, i, got[tk*rows+i], ref[tk*rows+i])
					}
				}
			}
		}
	}
}

// TestQuantizeQ8K checks the Q8_K activation quantizer: the assembly
// against Go bit for bit, and the sums.
func TestQuantizeQ8K(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, nb := range []int{1, 3, 12} {
		x := randVec(rng, nb*qkK, 1)
		clear(x[:qkK/2])
		if nb > 1 {
			clear(x[qkK : 2*qkK]) // a zero block
		}
		q1, q2 := make([]int8, nb*qkK), make([]int8, nb*qkK)
		d1, d2 := make([]float32, nb), make([]float32, nb)
		s1, s2 := make([]int16, nb*bsK), make([]int16, nb*bsK)
		quantizeQ8KGo(q1, d1, s1, x)
		quantizeQ8K(q2, d2, s2, x)
		for i := range q1 {
			if q1[i] != q2[i] {
				t.Fatalf("nb=%d: value %d = %d, Go %d", nb, i, q2[i], q1[i])
			}
		}
		if i := floatbits.FirstDiff(d1, d2); i >= 0 {
			t.Fatalf("nb=%d: scale %d = %g, Go %g", nb, i, d2[i], d1[i])
		}
		for b := range nb {
			for j := range 16 {
				var s int
				for _, v := range q1[b*qkK+16*j : b*qkK+16*j+16] {
					s += int(v)
				}
				if int(s1[b*bsK+j]) != s || int(s1[b*bsK+16+j/2]) != int(s1[b*bsK+j&^1])+int(s1[b*bsK+j|1]) {
					t.Fatalf("nb=%d: block %d sums wrong", nb, b)
				}
			}
		}
		for i := range s1 {
			if s1[i] != s2[i] {
				t.Fatalf("nb=%d: sum %d = %d, Go %d", nb, i, s2[i], s1[i])
			}
		}
	}
}

// TestBlockTypesAllocs checks that products of every block type allocate
// nothing once the buffers have grown.
func TestBlockTypesAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ops := New()
	for _, typ := range blockTypes {
		cols := blockCols(typ, 512)
		w := randBlockWeight(t, rng, typ, 24, cols, false)
		x := randVec(rng, 9*cols, 1)
		y := make([]float32, 9*24)
		for _, n := range []int{1, 9} {
			ops.MatMul(y, w, x, n)
			if a := testing.AllocsPerRun(10, func() { ops.MatMul(y, w, x, n) }); a != 0 {
				t.Errorf("%s n=%d: %v allocations per run", typ, n, a)
			}
		}
	}
}

// TestTable checks that the table covers every weight format package
// quant knows (all but the activation formats Q8_1 and Q8_K), and lists
// the kernels each type runs on this CPU.
func TestTable(t *testing.T) {
	for _, f := range numfmt.Formats() {
		if f.Type == gguf.TensorQ8_1 || f.Type == gguf.TensorQ8_K {
			if Supports(f.Type) {
				t.Errorf("%s is an activation format, not a weight type", f.Type)
			}
			continue
		}
		if !Supports(f.Type) {
			t.Errorf("%s: not in the table", f.Type)
			continue
		}
		k := kernelsOf(f.Type)
		if k.act != actF32 && blockAsm() && k.matVec == nil && f.Type != gguf.TensorQ8_0 {
			t.Errorf("%s: no assembly matrix-vector kernel", f.Type)
		}
		mv, pk, tile := Kernels(f.Type)
		t.Logf("%-7s act %d  matVec asm %-5v  pack asm %-5v  tile %q", f.Type, k.act, mv, pk, tile)
	}
}
