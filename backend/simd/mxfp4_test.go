package simd

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/internal/floatbits"
	"inferno/numfmt"
)

// TestMXFP4ScaleEdges checks MXFP4 at the edges of its E8M0 scale, which
// the kernels decode with integer arithmetic of their own (ROWE8M0): the
// subnormal scales 2^-128 and 2^-127 (e = 0, 1), the first normal ones,
// and the largest (e = 252..255, 255 being 2^127 as in ggml) against tiny
// activations, so that products stay finite. The Go decoder gives
// numfmt's values, and every kernel the Go reference's bits: the
// matrix-vector kernel, the packer, the tiles and MatMul itself.
func TestMXFP4ScaleEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 4))
	k := kernelsOf(gguf.TensorMXFP4)
	for _, c := range []struct {
		exps   []uint8
		xscale float64
	}{
		{[]uint8{0, 1, 2, 3}, 1},
		{[]uint8{0, 1, 2, 3}, 1e-30},
		{[]uint8{100, 126, 127, 128, 129, 140}, 1},
		{[]uint8{200, 252, 253, 254, 255}, 1e-33},
	} {
		const rows, cols, n = 16, 512, 8
		nb := cols / numfmt.QK_MXFP4
		rb := nb * numfmt.BlockMXFP4Bytes
		data := make([]byte, rows*rb)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for b := range rows * nb {
			data[b*numfmt.BlockMXFP4Bytes] = c.exps[(b+b/nb)%len(c.exps)]
		}
		w := &backend.Weight{Name: "edges", Type: gguf.TensorMXFP4, Rows: rows, Cols: cols, Data: data}

		// The Go decoder against numfmt.
		var q [32]int8
		want := make([]float32, 32)
		for b := range rows * nb {
			blk := data[b*numfmt.BlockMXFP4Bytes : (b+1)*numfmt.BlockMXFP4Bytes]
			numfmt.DequantizeRow(want, blk, gguf.TensorMXFP4, 32)
			d, _ := lMXFP4.decode(&q, blk)
			for i, v := range q {
				if got := float32(v) * d; math.Float32bits(got) != math.Float32bits(want[i]) {
					t.Fatalf("e=%d block %d value %d: decoded %g, numfmt %g", blk[0], b, i, got, want[i])
				}
			}
		}

		x := randVec(rng, n*cols, c.xscale)
		var a Acts
		a.Prepare(w, x, n)
		a.Quantize(0, n)
		ref := make([]float32, n*rows)
		for tk := range n {
			for r := range rows {
				ref[tk*rows+r] = a.dot(w.Row(r), tk)
				if v := ref[tk*rows+r]; math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
					t.Fatalf("exponents %v: row %d token %d is %g: the test means finite products", c.exps, r, tk, v)
				}
			}
		}
		ops := New()
		y := make([]float32, n*rows)
		ops.MatMul(y, w, x, n)
		if i := floatbits.FirstDiff(y, ref); i >= 0 {
			t.Fatalf("exponents %v: MatMul token %d row %d: %g, Go %g", c.exps, i/rows, i%rows, y[i], ref[i])
		}
		if !blockAsm() {
			continue
		}
		got := make([]float32, rows)
		for tk := range n {
			k.matVec(got, w.Data, rb, &a, tk)
			if i := floatbits.FirstDiff(got, ref[tk*rows:(tk+1)*rows]); i >= 0 {
				t.Fatalf("exponents %v: matVec token %d row %d: %g, Go %g", c.exps, tk, i, got[i], ref[tk*rows+i])
			}
		}
		goPack := make([]byte, nb*packBlockBytes)
		packQ8Go(k.l, goPack, w.Data[:8*rb], rb, nb)
		var o Ops
		o.packRows(k, w.Data[:8*rb], rb, nb)
		for i := range goPack {
			if o.pack[i] != goPack[i] {
				t.Fatalf("exponents %v: pack byte %d = %#x, Go %#x", c.exps, i, o.pack[i], goPack[i])
			}
		}
		for _, tile := range asmTiles(k) {
			tiles := make([]float32, n*rows)
			for tk := 0; tk < n; tk += 4 {
				o.tile4(tiles[tk*rows:], rows, k, &a, tk, tile)
			}
			for tk := range n {
				if i := floatbits.FirstDiff(tiles[tk*rows:tk*rows+8], ref[tk*rows:tk*rows+8]); i >= 0 {
					t.Fatalf("exponents %v: %s tile token %d row %d: %g, Go %g", c.exps, tile, tk, i, tiles[tk*rows+i], ref[tk*rows+i])
				}
			}
		}
	}
}

// TestTabFormatsShareKernels checks that the kernels IQ4_NL and MXFP4
// share take each format's table and scale: weights of both with the same
// indices and the same scale, 2^-10 (E8M0 118, float16 0x1400), multiply
// x as their own levels do, within the bound of the activations' 8-bit
// rounding (half a step of max|x|/127 per value).
func TestTabFormatsShareKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 5))
	const rows, cols = 8, 256
	nb := cols / 32
	idx := make([]byte, rows*nb*16)
	for i := range idx {
		idx[i] = byte(rng.Uint32())
	}
	x := randVec(rng, cols, 1)
	for _, typ := range []gguf.TensorType{gguf.TensorIQ4_NL, gguf.TensorMXFP4} {
		f, _ := numfmt.FormatOf(typ)
		kv := numfmt.KValuesIQ4NL
		data := make([]byte, rows*nb*f.BlockBytes)
		for b := range rows * nb {
			blk := data[b*f.BlockBytes : (b+1)*f.BlockBytes]
			if typ == gguf.TensorMXFP4 {
				blk[0], kv = 118, numfmt.KValuesMXFP4
			} else {
				blk[0], blk[1] = 0x00, 0x14
			}
			copy(blk[f.BlockBytes-16:], idx[b*16:(b+1)*16])
		}
		w := &backend.Weight{Name: typ.String(), Type: typ, Rows: rows, Cols: cols, Data: data}
		y := make([]float32, rows)
		New().MatMul(y, w, x, 1)
		for r := range rows {
			var want, bound float64
			for b := range nb {
				var amax float64
				for _, v := range x[32*b : 32*b+32] {
					amax = max(amax, math.Abs(float64(v)))
				}
				for j := range 32 {
					v := idx[(r*nb+b)*16+j%16] >> (4 * (j / 16)) & 15
					want += float64(kv[v]) * float64(x[32*b+j]) / 1024
					bound += math.Abs(float64(kv[v])) * amax / 127 * 0.501 / 1024
				}
			}
			if e := math.Abs(float64(y[r]) - want); e > bound+1e-6 {
				t.Errorf("%s row %d: %g, its levels give %g: error %.3g > %.3g", typ, r, y[r], want, e, bound)
			}
		}
	}
}
