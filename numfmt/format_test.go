package numfmt_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"inferno/gguf"
	"inferno/numfmt"
)

// supported lists the types the table must hold, with the activation
// format of each one's dot product (ggml's vec_dot_type).
var supported = []struct {
	typ, dot gguf.TensorType
}{
	{gguf.TensorF32, gguf.TensorF32},
	{gguf.TensorF16, gguf.TensorF32},
	{gguf.TensorQ4_0, gguf.TensorQ8_0},
	{gguf.TensorQ4_1, gguf.TensorQ8_1},
	{gguf.TensorQ5_0, gguf.TensorQ8_0},
	{gguf.TensorQ5_1, gguf.TensorQ8_1},
	{gguf.TensorQ8_0, gguf.TensorQ8_0},
	{gguf.TensorQ8_1, gguf.TensorQ8_1},
	{gguf.TensorQ2_K, gguf.TensorQ8_K},
	{gguf.TensorQ3_K, gguf.TensorQ8_K},
	{gguf.TensorQ4_K, gguf.TensorQ8_K},
	{gguf.TensorQ5_K, gguf.TensorQ8_K},
	{gguf.TensorQ6_K, gguf.TensorQ8_K},
	{gguf.TensorQ8_K, gguf.TensorQ8_K},
	{gguf.TensorIQ4_NL, gguf.TensorQ8_0},
	{gguf.TensorIQ4_XS, gguf.TensorQ8_K},
	{gguf.TensorBF16, gguf.TensorF32},
	{gguf.TensorMXFP4, gguf.TensorQ8_0},
}

func TestFormatTable(t *testing.T) {
	all := numfmt.Formats()
	if len(all) != len(supported) {
		t.Fatalf("Formats() has %d formats, want %d", len(all), len(supported))
	}
	for i, s := range supported {
		f, ok := numfmt.FormatOf(s.typ)
		if !ok || f == nil {
			t.Errorf("FormatOf(%s) missing", s.typ)
			continue
		}
		if all[i] != f {
			t.Errorf("Formats()[%d] = %s, want %s (type order)", i, all[i].Type, s.typ)
		}
		if f.Type != s.typ || f.DotType != s.dot {
			t.Errorf("%s: Type %s, DotType %s, want %s", s.typ, f.Type, f.DotType, s.dot)
		}
		if f.BlockSize != s.typ.BlockSize() || f.BlockBytes != s.typ.BlockBytes() {
			t.Errorf("%s: %d values in %d bytes; gguf says %d in %d", s.typ, f.BlockSize, f.BlockBytes, s.typ.BlockSize(), s.typ.BlockBytes())
		}
		if f.Dequantize == nil || f.Quantize == nil {
			t.Errorf("%s: missing a conversion", s.typ)
		}
		// A quantized type's blocks are whole blocks of its dot type.
		if dot, ok := numfmt.FormatOf(f.DotType); !ok || f.DotType != gguf.TensorF32 && f.BlockSize%dot.BlockSize != 0 {
			t.Errorf("%s: dot type %s does not tile its blocks", s.typ, f.DotType)
		}
	}
	// Formats returns a fresh slice.
	all[0] = nil
	if numfmt.Formats()[0] == nil {
		t.Errorf("Formats() shares its slice")
	}
	// The exported geometry agrees with gguf.
	for _, c := range []struct {
		typ        gguf.TensorType
		qk, nbytes int
	}{
		{gguf.TensorQ4_0, numfmt.QK4_0, numfmt.BlockQ4_0Bytes},
		{gguf.TensorQ4_1, numfmt.QK4_1, numfmt.BlockQ4_1Bytes},
		{gguf.TensorQ5_0, numfmt.QK5_0, numfmt.BlockQ5_0Bytes},
		{gguf.TensorQ5_1, numfmt.QK5_1, numfmt.BlockQ5_1Bytes},
		{gguf.TensorQ8_0, numfmt.QK8_0, numfmt.BlockQ8_0Bytes},
		{gguf.TensorQ8_1, numfmt.QK8_1, numfmt.BlockQ8_1Bytes},
		{gguf.TensorQ2_K, numfmt.QK_K, numfmt.BlockQ2_KBytes},
		{gguf.TensorQ3_K, numfmt.QK_K, numfmt.BlockQ3_KBytes},
		{gguf.TensorQ4_K, numfmt.QK_K, numfmt.BlockQ4_KBytes},
		{gguf.TensorQ5_K, numfmt.QK_K, numfmt.BlockQ5_KBytes},
		{gguf.TensorQ6_K, numfmt.QK_K, numfmt.BlockQ6_KBytes},
		{gguf.TensorQ8_K, numfmt.QK_K, numfmt.BlockQ8_KBytes},
		{gguf.TensorIQ4_NL, numfmt.QK4_NL, numfmt.BlockIQ4_NLBytes},
		{gguf.TensorIQ4_XS, numfmt.QK_K, numfmt.BlockIQ4_XSBytes},
		{gguf.TensorMXFP4, numfmt.QK_MXFP4, numfmt.BlockMXFP4Bytes},
	} {
		if c.qk != c.typ.BlockSize() || c.nbytes != c.typ.BlockBytes() {
			t.Errorf("%s: constants say %d values in %d bytes, gguf %d in %d", c.typ, c.qk, c.nbytes, c.typ.BlockSize(), c.typ.BlockBytes())
		}
	}
}

func TestFormatOfUnknown(t *testing.T) {
	for _, typ := range []gguf.TensorType{
		gguf.TensorIQ2_XXS, gguf.TensorIQ2_XS, gguf.TensorIQ3_XXS, gguf.TensorIQ1_S, gguf.TensorIQ3_S,
		gguf.TensorIQ2_S, gguf.TensorIQ1_M, gguf.TensorTQ1_0, gguf.TensorTQ2_0,
		gguf.TensorI8, gguf.TensorI16, gguf.TensorI32, gguf.TensorI64, gguf.TensorF64,
		4, 5, 31, 32, 33, 36, 37, 38, 40, 1000, 1 << 31, math.MaxUint32,
	} {
		if f, ok := numfmt.FormatOf(typ); ok || f != nil {
			t.Errorf("FormatOf(%s) = %v, %v; want nil, false", typ, f, ok)
		}
	}
}

// TestScaleHelpers checks the exported scale unpackers against the
// packing the quantizers do.
func TestScaleHelpers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, numfmt.QK_K)
	for trial := range 50 {
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(3, float64(i/32%5)))
			if trial%2 == 1 {
				x[i] += 2 // positive sub-blocks: mins of 0
			}
		}
		// Q4_K: dequantizing with the unpacked scales gives Dequantize.
		f, _ := numfmt.FormatOf(gguf.TensorQ4_K)
		b := make([]byte, f.BlockBytes)
		f.Quantize(b, x)
		got := make([]float32, numfmt.QK_K)
		f.Dequantize(got, b)
		d, dmin := numfmt.F16ToF32(binary.LittleEndian.Uint16(b)), numfmt.F16ToF32(binary.LittleEndian.Uint16(b[2:]))
		for i := range got {
			sc, m := numfmt.ScaleMinK4(i/32, b[4:16])
			q := b[16+i/64*32+i%32] >> (4 * (i / 32 % 2)) & 0xf
			if want := float32(d*float32(sc))*float32(q) - float32(dmin*float32(m)); got[i] != want {
				t.Fatalf("Q4_K [%d]: %g, from ScaleMinK4 %g", i, got[i], want)
			}
		}
		// Q3_K and IQ4_XS: the signed sub-block scale times d.
		for _, c := range []struct {
			typ   gguf.TensorType
			sub   int
			scale func(b []byte, j int) int
			d     func(b []byte) float32
		}{
			{gguf.TensorQ3_K, 16, func(b []byte, j int) int { return int(numfmt.Q3KScale(j, b[96:108])) },
				func(b []byte) float32 { return numfmt.F16ToF32(binary.LittleEndian.Uint16(b[108:])) }},
			{gguf.TensorIQ4_XS, 32, func(b []byte, j int) int { return numfmt.IQ4XSScale(j, b) },
				func(b []byte) float32 { return numfmt.F16ToF32(binary.LittleEndian.Uint16(b)) }},
		} {
			f, _ := numfmt.FormatOf(c.typ)
			b := make([]byte, f.BlockBytes)
			f.Quantize(b, x)
			f.Dequantize(got, b)
			for j := range numfmt.QK_K / c.sub {
				dl := c.d(b) * float32(c.scale(b, j))
				// Every value of the sub-block is dl times a small integer
				// (Q3_K: -4..3) or a level of KValuesIQ4NL.
				for _, y := range got[j*c.sub : (j+1)*c.sub] {
					ok := false
					if c.typ == gguf.TensorQ3_K {
						for q := -4; q <= 3; q++ {
							ok = ok || y == dl*float32(q)
						}
					} else {
						for _, q := range numfmt.KValuesIQ4NL {
							ok = ok || y == dl*float32(q)
						}
					}
					if !ok {
						t.Fatalf("%s sub-block %d: %g is not a level of scale %g", c.typ, j, y, dl)
					}
				}
			}
		}
	}
}

// roundTripBound is the largest RMS error of dequantize(quantize(x)) for
// Gaussian x, relative to x's RMS, each type may have: about 15% above
// what TestRoundTrip measures (and logs), which is in line with the
// bits per value (a 2-bit uniform quantizer of a Gaussian has 0.34, 3
// bits 0.19, 4 bits 0.10; scales per block of 16 or 32 do better).
var roundTripBound = map[gguf.TensorType]float64{
	gguf.TensorF32:    0,
	gguf.TensorF16:    0.00026,
	gguf.TensorBF16:   0.002,
	gguf.TensorQ8_0:   0.0066,
	gguf.TensorQ8_1:   0.0066,
	gguf.TensorQ8_K:   0.0088,
	gguf.TensorQ6_K:   0.022,
	gguf.TensorQ5_0:   0.051,
	gguf.TensorQ5_1:   0.046,
	gguf.TensorQ5_K:   0.043,
	gguf.TensorQ4_0:   0.105,
	gguf.TensorQ4_1:   0.095,
	gguf.TensorQ4_K:   0.086,
	gguf.TensorIQ4_NL: 0.092,
	gguf.TensorIQ4_XS: 0.092,
	gguf.TensorMXFP4:  0.139,
	gguf.TensorQ3_K:   0.183,
	gguf.TensorQ2_K:   0.365,
}

// TestRoundTrip quantizes Gaussian rows of several scales and checks the
// error of dequantize(quantize(x)) per type, catching a wrong table entry
// or a format whose bits go to the wrong place. It also checks that
// Quantize writes exactly its blocks and Dequantize exactly len(dst).
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 4 * numfmt.QK_K
	x := make([]float32, n)
	for _, f := range numfmt.Formats() {
		bound, ok := roundTripBound[f.Type]
		if !ok {
			t.Errorf("%s: no round-trip bound", f.Type)
			continue
		}
		var worst float64
		for trial := range 40 {
			scale := math.Ldexp(1, trial%12-8) // 2^-8 .. 2^3
			for i := range x {
				x[i] = float32(scale * rng.NormFloat64())
			}
			nbytes := n / f.BlockSize * f.BlockBytes
			q := bytes.Repeat([]byte{0xa5}, nbytes+7)
			f.Quantize(q[:nbytes], x)
			if !bytes.Equal(q[nbytes:], bytes.Repeat([]byte{0xa5}, 7)) {
				t.Fatalf("%s: Quantize wrote past its blocks", f.Type)
			}
			y := make([]float32, n+3)
			y[n], y[n+1], y[n+2] = 7, 7, 7
			f.Dequantize(y[:n], q)
			if y[n] != 7 || y[n+1] != 7 || y[n+2] != 7 {
				t.Fatalf("%s: Dequantize wrote past dst", f.Type)
			}
			var se, sx float64
			for i := range x {
				e := float64(y[i]) - float64(x[i])
				se += e * e
				sx += float64(x[i]) * float64(x[i])
			}
			worst = max(worst, math.Sqrt(se/sx))
			// Quantize is a function of its input.
			q2 := make([]byte, nbytes)
			f.Quantize(q2, x)
			if !bytes.Equal(q2, q[:nbytes]) {
				t.Fatalf("%s: Quantize is not deterministic", f.Type)
			}
		}
		if worst > bound {
			t.Errorf("%s: relative RMS error %.5f > %.5f", f.Type, worst, bound)
		}
		t.Logf("%-6s relative RMS error %.5f (bound %.5f)", f.Type, worst, bound)
	}
}

// TestRowsAreBlocks checks that a row is its blocks: quantizing a row
// equals quantizing each block alone, through QuantizeRow's append.
func TestRowsAreBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, 3*numfmt.QK_K)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, f := range numfmt.Formats() {
		whole, err := numfmt.QuantizeRow([]byte{1, 2}, x, f.Type)
		if err != nil {
			t.Fatal(err)
		}
		var parts []byte
		for b := 0; b < len(x); b += f.BlockSize {
			if parts, err = numfmt.QuantizeRow(parts, x[b:b+f.BlockSize], f.Type); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(whole[:2], []byte{1, 2}) || !bytes.Equal(whole[2:], parts) {
			t.Errorf("%s: a row is not its blocks", f.Type)
		}
		y := make([]float32, len(x))
		if err := numfmt.DequantizeRow(y, parts, f.Type, len(x)); err != nil {
			t.Fatal(err)
		}
		z := make([]float32, len(x))
		f.Dequantize(z, parts)
		if !slices.Equal(y, z) {
			t.Errorf("%s: DequantizeRow differs from Dequantize", f.Type)
		}
	}
}

// TestShortBuffers: Quantize and Dequantize panic on a buffer shorter
// than its blocks, even when its capacity would hold them.
func TestShortBuffers(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	x := make([]float32, numfmt.QK_K)
	for _, f := range numfmt.Formats() {
		n := len(x) / f.BlockSize * f.BlockBytes
		buf := make([]byte, n)
		mustPanic(f.Type.String()+" Quantize", func() { f.Quantize(buf[:n-1], x) })
		mustPanic(f.Type.String()+" Dequantize", func() { f.Dequantize(x, buf[:n-1]) })
	}
}

// TestNoAllocations: Quantize and Dequantize allocate nothing.
func TestNoAllocations(t *testing.T) {
	x := make([]float32, 2*numfmt.QK_K)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	y := make([]float32, len(x))
	for _, f := range numfmt.Formats() {
		q := make([]byte, len(x)/f.BlockSize*f.BlockBytes)
		if a := testing.AllocsPerRun(20, func() { f.Quantize(q, x) }); a != 0 {
			t.Errorf("%s: Quantize allocates %.1f times", f.Type, a)
		}
		if a := testing.AllocsPerRun(20, func() { f.Dequantize(y, q) }); a != 0 {
			t.Errorf("%s: Dequantize allocates %.1f times", f.Type, a)
		}
	}
}

// TestNonFinite documents what NaN and infinities do: no panic; F32, F16
// and BF16 keep them; in a block format only the block holding one is
// affected (it gets what ggml's arithmetic makes of it, which the ggml
// fixtures check bit for bit), its neighbours quantize as alone.
func TestNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	clean := make([]float32, 2*numfmt.QK_K)
	for i := range clean {
		clean[i] = float32(rng.NormFloat64())
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32} {
		for _, f := range numfmt.Formats() {
			x := slices.Clone(clean)
			k := min(3, f.BlockSize-1) // in block 0
			x[k] = bad
			n := len(x) / f.BlockSize * f.BlockBytes
			got, want := make([]byte, n), make([]byte, n)
			f.Quantize(got, x)
			f.Quantize(want, clean)
			if !bytes.Equal(got[f.BlockBytes:], want[f.BlockBytes:]) {
				t.Errorf("%s: %g in block 0 changes other blocks", f.Type, bad)
			}
			y := make([]float32, len(x))
			f.Dequantize(y, got)
			if f.BlockSize == 1 && math.Float32bits(y[k]) != math.Float32bits(bad) && bad != math.MaxFloat32 {
				t.Errorf("%s: %g comes back as %g", f.Type, bad, y[k])
			}
		}
	}
}

// FuzzDequantize decodes arbitrary bytes as every format: it must not
// panic, and DequantizeRow must refuse what does not fit.
func FuzzDequantize(f *testing.F) {
	f.Add([]byte{0x00, 0x3c, 1, 2, 3}, uint8(3), 32)
	f.Add(bytes.Repeat([]byte{0xff}, 300), uint8(10), 256)
	f.Add(bytes.Repeat([]byte{0x7c, 0x00}, 150), uint8(12), 256)
	formats := numfmt.Formats()
	f.Fuzz(func(t *testing.T, data []byte, which uint8, n int) {
		ft := formats[int(which)%len(formats)]
		nb := len(data) / ft.BlockBytes
		y := make([]float32, nb*ft.BlockSize)
		ft.Dequantize(y, data)
		// Every block decodes alone as within the row.
		if nb > 0 {
			z := make([]float32, ft.BlockSize)
			last := nb - 1
			ft.Dequantize(z, data[last*ft.BlockBytes:])
			for i := range z {
				if math.Float32bits(z[i]) != math.Float32bits(y[last*ft.BlockSize+i]) {
					t.Fatalf("%s: block %d decodes differently alone", ft.Type, last)
				}
			}
		}
		n = n % (1 << 16)
		dst := make([]float32, max(n, 0))
		err := numfmt.DequantizeRow(dst, data, ft.Type, n)
		need, ok := ft.Type.RowBytes(uint64(max(n, 0)))
		if fits := n >= 0 && ok && uint64(len(data)) >= need; fits != (err == nil) {
			t.Fatalf("%s: DequantizeRow(n=%d, %d bytes) = %v", ft.Type, n, len(data), err)
		}
	})
}

// FuzzQuantize encodes arbitrary float32 bit patterns (NaN and infinities
// included) as every format: no panic, deterministic, and for finite
// inputs of magnitude at most 60000 the decoded values are finite.
func FuzzQuantize(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f}, uint8(11))
	f.Add([]byte{0, 0, 0x80, 0x7f, 1, 2, 3, 4, 0xde, 0xad, 0xbe, 0xef}, uint8(13))
	f.Add(bytes.Repeat([]byte{0x12, 0x34, 0x56, 0x00}, 64), uint8(15))
	formats := numfmt.Formats()
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		ft := formats[int(which)%len(formats)]
		if len(data) < 4 {
			return
		}
		// Tile the input up to whole blocks (at least one).
		nv := len(data) / 4
		n := (nv + ft.BlockSize - 1) / ft.BlockSize * ft.BlockSize
		x := make([]float32, n)
		tame := true
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*(i%nv):]))
			if !(math.Abs(float64(x[i])) <= 60000) {
				tame = false
			}
		}
		q := make([]byte, n/ft.BlockSize*ft.BlockBytes)
		ft.Quantize(q, x)
		q2 := make([]byte, len(q))
		ft.Quantize(q2, x)
		if !bytes.Equal(q, q2) {
			t.Fatalf("%s: Quantize is not deterministic", ft.Type)
		}
		y := make([]float32, n)
		ft.Dequantize(y, q)
		if tame {
			for i, v := range y {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s: finite input %g decodes to %g", ft.Type, x[i], v)
				}
			}
		}
	})
}

func benchRow() []float32 {
	rng := rand.New(rand.NewPCG(11, 12))
	x := make([]float32, 16*numfmt.QK_K)
	for i := range x {
		x[i] = float32(0.02 * rng.NormFloat64())
	}
	return x
}

// BenchmarkQuantize reports each format's quantization speed (bytes are
// input float32 bytes).
func BenchmarkQuantize(b *testing.B) {
	x := benchRow()
	for _, f := range numfmt.Formats() {
		b.Run(f.Type.String(), func(b *testing.B) {
			q := make([]byte, len(x)/f.BlockSize*f.BlockBytes)
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				f.Quantize(q, x)
			}
		})
	}
}

// BenchmarkDequantize reports each format's dequantization speed (bytes
// are output float32 bytes).
func BenchmarkDequantize(b *testing.B) {
	x := benchRow()
	y := make([]float32, len(x))
	for _, f := range numfmt.Formats() {
		b.Run(f.Type.String(), func(b *testing.B) {
			q := make([]byte, len(x)/f.BlockSize*f.BlockBytes)
			f.Quantize(q, x)
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				f.Dequantize(y, q)
			}
		})
	}
}
