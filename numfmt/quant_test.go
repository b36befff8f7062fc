package numfmt_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/gguf"
	"inferno/numfmt"
)

func f32(b uint32) float32 { return math.Float32frombits(b) }

func isNaN32(f float32) bool { return f != f }

func isF16NaN(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x03ff != 0 }

func isBF16NaN(h uint16) bool { return h&0x7f80 == 0x7f80 && h&0x007f != 0 }

// refF16ToF32 decodes a half from its definition.
func refF16ToF32(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -24)
	case 0x1f:
		if mant == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+mant/1024, exp-15)
}

// refF32ToF16 rounds f to the nearest half, ties to even, computing in
// float64 where every step is exact. f must not be NaN.
func refF32ToF16(f float32) uint16 {
	x := float64(f)
	var sign uint16
	if math.Signbit(x) {
		sign, x = 0x8000, -x
	}
	switch {
	case x >= 65520: // the midpoint between 65504 and 2^16 rounds to even: Inf
		return sign | 0x7c00
	case x < 0x1p-14: // subnormal: units of 2^-24; 1024 units is 0x0400
		return sign | uint16(math.RoundToEven(x*0x1p24))
	}
	frac, exp := math.Frexp(x) // x = frac * 2^exp, frac in [0.5, 1)
	q := math.RoundToEven((2*frac - 1) * 1024)
	return sign | (uint16(exp-1+15)<<10 + uint16(q)) // q = 1024 carries into the exponent
}

func TestF16KnownValues(t *testing.T) {
	// Exact in both directions.
	both := []struct {
		f float32
		h uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-1, 0xbc00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{1.5, 0x3e00},
		{65504, 0x7bff},
		{-65504, 0xfbff},
		{6.1035156e-05, 0x0400},  // min normal 2^-14
		{5.9604645e-08, 0x0001},  // min subnormal 2^-24
		{-5.9604645e-08, 0x8001}, // min subnormal 2^-24
		{6.0975552e-05, 0x03ff},  // max subnormal 1023 * 2^-24
		{0x1p-15, 0x0200},        // a subnormal power of two
		{0.33325195, 0x3555},     // nearest half to 1/3
		{1 + 0x1p-10, 0x3c01},    // 1 + ulp
		{2048, 0x6800},           // 2^11
		{float32(math.Inf(1)), 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
	}
	for _, c := range both {
		if got := numfmt.F32ToF16(c.f); got != c.h {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
		if got := numfmt.F16ToF32(c.h); math.Float32bits(got) != math.Float32bits(c.f) {
			t.Errorf("F16ToF32(%#04x) = %g, want %g", c.h, got, c.f)
		}
	}

	// float32 to half only: rounding, overflow, underflow.
	oneWay := []struct {
		name string
		f    float32
		h    uint16
	}{
		{"65520 rounds to +Inf", 65520, 0x7c00},
		{"-65520 rounds to -Inf", -65520, 0xfc00},
		{"just below 65520", math.Nextafter32(65520, 0), 0x7bff},
		{"65519", 65519, 0x7bff},
		{"1e10", 1e10, 0x7c00},
		{"max float32", math.MaxFloat32, 0x7c00},
		{"-max float32", -math.MaxFloat32, 0xfc00},
		{"half the min subnormal ties to 0", 2.9802322e-08, 0x0000},
		{"minus half the min subnormal", -2.9802322e-08, 0x8000},
		{"just above half the min subnormal", math.Nextafter32(2.9802322e-08, 1), 0x0001},
		{"just below half the min subnormal", math.Nextafter32(2.9802322e-08, 0), 0x0000},
		{"1.5 subnormal units ties to 2", 3 * 0x1p-25, 0x0002},
		{"2.5 subnormal units ties to 2", 5 * 0x1p-25, 0x0002},
		{"tiny", 1e-30, 0x0000},
		{"-tiny", -1e-30, 0x8000},
		{"float32 subnormal", f32(1), 0x0000},
		{"max subnormal + 1/2 unit carries to min normal", 1023.5 * 0x1p-24, 0x0400},
		{"1 + 2^-11 ties to 1", 1 + 0x1p-11, 0x3c00},
		{"1 + 3*2^-11 ties to 1 + 2^-9", 1 + 3*0x1p-11, 0x3c02},
		{"just above 1 + 2^-11", math.Nextafter32(1+0x1p-11, 2), 0x3c01},
		{"2 - 2^-12 carries into the exponent", 2 - 0x1p-12, 0x4000},
		{"1/127", 1.0 / 127, 0x2008},
		{"pi", math.Pi, 0x4248},
		{"-0.1", -0.1, 0xae66},
	}
	for _, c := range oneWay {
		if got := numfmt.F32ToF16(c.f); got != c.h {
			t.Errorf("%s: F32ToF16(%g) = %#04x, want %#04x", c.name, c.f, got, c.h)
		}
	}
}

func TestF16NaN(t *testing.T) {
	// Half NaNs decode to float32 NaNs with the payload shifted up.
	for _, c := range []struct {
		h uint16
		b uint32
	}{
		{0x7e00, 0x7fc00000},
		{0xfe00, 0xffc00000},
		{0x7c01, 0x7f802000}, // signaling, smallest payload
		{0x7fff, 0x7fffe000},
	} {
		if got := math.Float32bits(numfmt.F16ToF32(c.h)); got != c.b {
			t.Errorf("F16ToF32(%#04x) = %#08x, want %#08x", c.h, got, c.b)
		}
	}
	// float32 NaNs stay NaN (never Inf), quiet, keeping the sign and the
	// top of the payload.
	for _, c := range []struct {
		b uint32
		h uint16
	}{
		{0x7fc00000, 0x7e00},
		{0xffc00000, 0xfe00},
		{0x7f800001, 0x7e00}, // payload only in the low bits: must not become Inf
		{0xff800001, 0xfe00},
		{0x7f802000, 0x7e01},
		{0x7fd55555, 0x7eaa},
		{0x7fffffff, 0x7fff},
	} {
		got := numfmt.F32ToF16(f32(c.b))
		if got != c.h {
			t.Errorf("F32ToF16(NaN %#08x) = %#04x, want %#04x", c.b, got, c.h)
		}
		if !isF16NaN(got) {
			t.Errorf("F32ToF16(NaN %#08x) = %#04x is not NaN", c.b, got)
		}
	}
	if !isNaN32(numfmt.F16ToF32(numfmt.F32ToF16(float32(math.NaN())))) {
		t.Errorf("NaN does not survive a round trip")
	}
}

// TestF16Exhaustive checks every half: it decodes to its exact value, and
// encoding that value gives the half back (NaN gives a quiet NaN with the
// same payload).
func TestF16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := numfmt.F16ToF32(h)
		back := numfmt.F32ToF16(f)
		if isF16NaN(h) {
			if !isNaN32(f) {
				t.Fatalf("F16ToF32(%#04x) = %g, want NaN", h, f)
			}
			if back != h|0x0200 || !isF16NaN(back) {
				t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x, want quiet NaN %#04x", h, back, h|0x0200)
			}
			continue
		}
		if want := refF16ToF32(h); float64(f) != want || math.Signbit(float64(f)) != math.Signbit(want) {
			t.Fatalf("F16ToF32(%#04x) = %g, want %g", h, f, want)
		}
		if back != h {
			t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x", h, back)
		}
	}
}

// TestF16Midpoints checks rounding at and around every midpoint between two
// adjacent halves: ties go to the even one, anything off the tie goes to the
// nearer one. The midpoint above 65504 is 65520, which rounds to Inf.
func TestF16Midpoints(t *testing.T) {
	for h := uint16(0); h < 0x7c00; h++ {
		lo := float64(numfmt.F16ToF32(h))
		var mid float64
		if h == 0x7bff {
			mid = 65520
		} else {
			mid = (lo + float64(numfmt.F16ToF32(h+1))) / 2
		}
		m := float32(mid)
		if float64(m) != mid {
			t.Fatalf("midpoint above %#04x is not a float32", h)
		}
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		for _, sign := range []uint16{0, 0x8000} {
			s := float32(1)
			if sign != 0 {
				s = -1
			}
			check := func(f float32, want uint16) {
				if got := numfmt.F32ToF16(f); got != want {
					t.Fatalf("F32ToF16(%g) = %#04x, want %#04x", f, got, want)
				}
			}
			check(s*m, sign|even)
			check(s*math.Nextafter32(m, 0), sign|h)
			check(s*math.Nextafter32(m, math.MaxFloat32), sign|(h+1))
		}
	}
}

// TestF16Reference compares F32ToF16 with a float64 reference over a
// spread of float32 bit patterns covering every exponent.
func TestF16Reference(t *testing.T) {
	const step = 509 // prime, so the low mantissa bits vary
	for b := uint64(0); b < 1<<32; b += step {
		f := f32(uint32(b))
		if isNaN32(f) {
			continue
		}
		if got, want := numfmt.F32ToF16(f), refF32ToF16(f); got != want {
			t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, want %#04x", f, uint32(b), got, want)
		}
	}
}

func TestBF16KnownValues(t *testing.T) {
	both := []struct {
		f float32
		h uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3f80},
		{-2, 0xc000},
		{0.5, 0x3f00},
		{1 + 0x1p-7, 0x3f81},
		{f32(0x7f7f0000), 0x7f7f}, // max finite bfloat16
		{f32(0x00800000), 0x0080}, // min normal 2^-126
		{f32(0x00010000), 0x0001}, // min subnormal 2^-133
		{f32(0x807f0000), 0x807f}, // max subnormal, negative
		{float32(math.Inf(1)), 0x7f80},
		{float32(math.Inf(-1)), 0xff80},
	}
	for _, c := range both {
		if got := numfmt.F32ToBF16(c.f); got != c.h {
			t.Errorf("F32ToBF16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
		if got := numfmt.BF16ToF32(c.h); math.Float32bits(got) != math.Float32bits(c.f) {
			t.Errorf("BF16ToF32(%#04x) = %g, want %g", c.h, got, c.f)
		}
	}
	oneWay := []struct {
		name string
		f    float32
		h    uint16
	}{
		{"1 + 2^-8 ties to 1", 1 + 0x1p-8, 0x3f80},
		{"1 + 3*2^-8 ties to 1 + 2^-6", 1 + 3*0x1p-8, 0x3f82},
		{"just above 1 + 2^-8", math.Nextafter32(1+0x1p-8, 2), 0x3f81},
		{"pi", math.Pi, 0x4049},
		{"max float32 rounds to Inf", math.MaxFloat32, 0x7f80},
		{"-max float32 rounds to -Inf", -math.MaxFloat32, 0xff80},
		{"tie above max bf16 rounds to Inf", f32(0x7f7f8000), 0x7f80},
		{"tie below an even top value stays", f32(0x7f7e8000), 0x7f7e},
		{"half the min subnormal ties to 0", f32(0x00008000), 0x0000},
		{"just above half the min subnormal", f32(0x00008001), 0x0001},
		{"1.5 subnormal units ties to 2", f32(0x00018000), 0x0002},
		{"float32 min subnormal", f32(1), 0x0000},
		{"-float32 min subnormal", f32(0x80000001), 0x8000},
		{"max subnormal + 1/2 unit carries to min normal", f32(0x007f8000), 0x0080},
	}
	for _, c := range oneWay {
		if got := numfmt.F32ToBF16(c.f); got != c.h {
			t.Errorf("%s: F32ToBF16(%g) = %#04x, want %#04x", c.name, c.f, got, c.h)
		}
	}
	// NaN stays NaN, quiet, keeping sign and the top of the payload; a NaN
	// whose payload lies only in the low 16 bits must not become Inf.
	for _, c := range []struct {
		b uint32
		h uint16
	}{
		{0x7fc00000, 0x7fc0},
		{0xffc00000, 0xffc0},
		{0x7f800001, 0x7fc0},
		{0xff80ffff, 0xffc0},
		{0x7fa00000, 0x7fe0},
		{0x7fffffff, 0x7fff},
	} {
		got := numfmt.F32ToBF16(f32(c.b))
		if got != c.h || !isBF16NaN(got) {
			t.Errorf("F32ToBF16(NaN %#08x) = %#04x, want %#04x", c.b, got, c.h)
		}
	}
	if b := math.Float32bits(numfmt.BF16ToF32(0x7f81)); b != 0x7f810000 {
		t.Errorf("BF16ToF32(0x7f81) = %#08x, want the payload kept", b)
	}
}

func TestBF16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := numfmt.BF16ToF32(h)
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("BF16ToF32(%#04x) = %#08x", h, math.Float32bits(f))
		}
		back := numfmt.F32ToBF16(f)
		if isBF16NaN(h) {
			if !isNaN32(f) || back != h|0x40 || !isBF16NaN(back) {
				t.Fatalf("BF16 NaN %#04x: %g, back %#04x, want %#04x", h, f, back, h|0x40)
			}
			continue
		}
		if back != h {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x", h, back)
		}
	}
	// Around every midpoint: ties to even, off-tie to the nearer value.
	for h := uint16(0); h < 0x7f80; h++ {
		mid := uint32(h)<<16 | 0x8000
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		for _, sign := range []uint32{0, 0x80000000} {
			s := uint16(sign >> 16)
			for _, c := range []struct {
				b uint32
				h uint16
			}{{mid, even}, {mid - 1, h}, {mid + 1, h + 1}} {
				if got := numfmt.F32ToBF16(f32(sign | c.b)); got != s|c.h {
					t.Fatalf("F32ToBF16(%#08x) = %#04x, want %#04x", sign|c.b, got, s|c.h)
				}
			}
		}
	}
}

// q8Block builds one Q8_0 block from a scale and 32 quants.
func q8Block(d uint16, q [32]int8) []byte {
	b := binary.LittleEndian.AppendUint16(nil, d)
	for _, x := range q {
		b = append(b, byte(x))
	}
	return b
}

func TestQ8_0KnownBlock(t *testing.T) {
	// max |x| = 127 gives d = 1 exactly (F16 0x3c00) and q = x.
	var src [32]float32
	var q [32]int8
	for i := range src {
		v := -127 + 8*i // -127, -119, ..., 121
		src[i], q[i] = float32(v), int8(v)
	}
	got, err := numfmt.QuantizeRow(nil, src[:], gguf.TensorQ8_0)
	if err != nil {
		t.Fatal(err)
	}
	if want := q8Block(0x3c00, q); !bytes.Equal(got, want) {
		t.Errorf("QuantizeRow = % x\nwant          % x", got, want)
	}
	dst := make([]float32, 32)
	if err := numfmt.DequantizeRow(dst, got, gguf.TensorQ8_0, 32); err != nil {
		t.Fatal(err)
	}
	for i := range dst {
		if dst[i] != src[i] {
			t.Errorf("dequantized[%d] = %g, want %g", i, dst[i], src[i])
		}
	}

	// Doubling the values doubles d (0x4000) and keeps q; halves round
	// away from zero as in ggml.
	for i := range src {
		src[i] *= 2
	}
	src[1], q[1] = 5, 3     // 2.5 -> 3
	src[2], q[2] = -5, -3   // -2.5 -> -3
	src[3], q[3] = 1, 1     // 0.5 -> 1
	src[4], q[4] = -1, -1   // -0.5 -> -1
	src[5], q[5] = 0.9, 0   // 0.45 -> 0
	src[6], q[6] = 253, 127 // 126.5 -> 127
	got, err = numfmt.QuantizeRow(nil, src[:], gguf.TensorQ8_0)
	if err != nil {
		t.Fatal(err)
	}
	if want := q8Block(0x4000, q); !bytes.Equal(got, want) {
		t.Errorf("QuantizeRow = % x\nwant          % x", got, want)
	}

	// A positive maximum maps to +127, a negative one to -127.
	var one [32]float32
	one[7] = -0.25
	got, _ = numfmt.QuantizeRow(nil, one[:], gguf.TensorQ8_0)
	if d := numfmt.F16ToF32(binary.LittleEndian.Uint16(got)); d != numfmt.F16ToF32(numfmt.F32ToF16(0.25/127)) || int8(got[2+7]) != -127 {
		t.Errorf("block with one -0.25: d=%g q=%d", d, int8(got[2+7]))
	}
}

func TestQ8_0ZeroBlock(t *testing.T) {
	// Block 0 is all zeros (one of them -0), block 1 is not: the zero block
	// gets d = 0 and q = 0 and does not disturb its neighbour.
	src := make([]float32, 64)
	src[5] = float32(math.Copysign(0, -1))
	for i := 32; i < 64; i++ {
		src[i] = float32(i - 32 - 10)
	}
	got, err := numfmt.QuantizeRow(nil, src, gguf.TensorQ8_0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 68 {
		t.Fatalf("%d bytes, want 68", len(got))
	}
	if !bytes.Equal(got[:34], make([]byte, 34)) {
		t.Errorf("zero block = % x", got[:34])
	}
	if d := binary.LittleEndian.Uint16(got[34:]); d != numfmt.F32ToF16(21.0/127) {
		t.Errorf("second block d = %#04x", d)
	}
	dst := make([]float32, 64)
	for i := range dst {
		dst[i] = 99
	}
	if err := numfmt.DequantizeRow(dst, got, gguf.TensorQ8_0, 64); err != nil {
		t.Fatal(err)
	}
	for i, x := range dst[:32] {
		if x != 0 {
			t.Fatalf("dequantized zero block [%d] = %g", i, x)
		}
	}
}

// TestQ8_0RoundTrip quantizes random rows of many scales. With the scale d
// = max|x|/127 and q = round(x/d), |x - d*q| <= d/2. The stored scale is d
// rounded to F16 (dh), so the dequantized error is at most
// dh/2 + 127*|d - dh| (the rounding error of d times |q| <= 127); dh
// is within 2^-11 of d when normal, so that is at most about 0.56 d.
func TestQ8_0RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 32 * 64
	src := make([]float32, n)
	dst := make([]float32, n)
	var worst float64 // largest error relative to d
	for trial := range 200 {
		// 2^-12 .. 2^12: small scales make d an F16 subnormal (coarser);
		// the largest keep max|x|/127 below 65504, where d would be Inf.
		scale := math.Ldexp(1, rng.IntN(25)-12)
		for i := range src {
			switch {
			case trial%5 == 0 && i%7 == 0:
				src[i] = float32(scale * 50 * rng.NormFloat64()) // outliers
			case trial%5 == 1:
				src[i] = float32(scale * float64(rng.IntN(255)-127)) // exact grid
			default:
				src[i] = float32(scale * rng.NormFloat64())
			}
		}
		row, err := numfmt.QuantizeRow([]byte("prefix"), src, gguf.TensorQ8_0)
		if err != nil {
			t.Fatal(err)
		}
		if string(row[:6]) != "prefix" || len(row) != 6+n/32*34 {
			t.Fatalf("QuantizeRow did not append: %d bytes", len(row))
		}
		row = row[6:]
		if err := numfmt.DequantizeRow(dst, row, gguf.TensorQ8_0, n); err != nil {
			t.Fatal(err)
		}
		for b := 0; b < n/32; b++ {
			blk := src[32*b : 32*b+32]
			var amax float32
			for _, x := range blk {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			d := float64(amax / 127)
			dh := float64(numfmt.F16ToF32(binary.LittleEndian.Uint16(row[34*b:])))
			if uint16(numfmt.F32ToF16(float32(d))) != binary.LittleEndian.Uint16(row[34*b:]) {
				t.Fatalf("block %d: scale is not F16(max|x|/127)", b)
			}
			for j, x := range blk {
				q := float64(int8(row[34*b+2+j]))
				// d is a float32, off from max|x|/127 by up to half an ulp,
				// which q multiplies by up to 127.
				if e := math.Abs(float64(x) - d*q); e > d/2+127*d*0x1p-23 {
					t.Fatalf("trial %d block %d [%d]: x=%g q=%g d=%g: |x-d*q| = %g > d/2", trial, b, j, x, q, d, e)
				}
				y := float64(dst[32*b+j])
				if y != float64(float32(dh)*float32(q)) {
					t.Fatalf("dequantized %g, want dh*q = %g", y, dh*q)
				}
				bound := dh/2 + 127*math.Abs(d-dh) + 127*d*0x1p-22
				e := math.Abs(float64(x) - y)
				if e > bound {
					t.Fatalf("trial %d block %d [%d]: x=%g y=%g: error %g > %g (d=%g dh=%g)", trial, b, j, x, y, e, bound, d, dh)
				}
				if dh >= 0x1p-14 { // normal: dh within 2^-11 of d
					worst = max(worst, e/d)
				}
			}
		}
	}
	if worst > 0.57 {
		t.Errorf("worst error %.3f d", worst)
	}
	t.Logf("worst error %.4f d", worst)
}

func TestQ8_0DequantizeKnown(t *testing.T) {
	var q [32]int8
	for i := range q {
		q[i] = int8(i*9 - 128) // includes -128, which ggml never writes but must decode
	}
	blk := append(q8Block(0xb800, q), q8Block(0x0001, q)...) // d = -0.5, d = 2^-24
	dst := make([]float32, 65)
	dst[64] = 42
	if err := numfmt.DequantizeRow(dst, blk, gguf.TensorQ8_0, 64); err != nil {
		t.Fatal(err)
	}
	for i, x := range q {
		if dst[i] != -0.5*float32(x) {
			t.Errorf("[%d] = %g, want %g", i, dst[i], -0.5*float32(x))
		}
		if want := float32(x) * 0x1p-24; dst[32+i] != want {
			t.Errorf("[%d] = %g, want %g", 32+i, dst[32+i], want)
		}
	}
	if dst[64] != 42 {
		t.Errorf("DequantizeRow wrote past n")
	}
}

func TestDequantizeRowErrors(t *testing.T) {
	dst := make([]float32, 64)
	src := make([]byte, 68)
	cases := []struct {
		name string
		dst  []float32
		src  []byte
		typ  gguf.TensorType
		n    int
		want string
	}{
		{"n not a multiple of 32", dst, src, gguf.TensorQ8_0, 31, "cannot decode 31 values of type Q8_0"},
		{"short src", dst, src[:67], gguf.TensorQ8_0, 64, "need 68 bytes, have 67"},
		{"empty src", dst, nil, gguf.TensorQ8_0, 32, "need 34 bytes, have 0"},
		{"short dst", dst[:63], src, gguf.TensorQ8_0, 64, "dst 63"},
		{"short F32 src", dst, src[:7], gguf.TensorF32, 2, "need 8 bytes"},
		{"short F16 src", dst, src[:3], gguf.TensorF16, 2, "need 4 bytes"},
		{"short BF16 dst", dst[:1], src, gguf.TensorBF16, 2, "dst 1"},
		{"unsupported IQ2_XXS", make([]float32, 256), make([]byte, 66), gguf.TensorIQ2_XXS, 256, "decoding IQ2_XXS is not supported"},
		{"unsupported IQ3_S", make([]float32, 256), make([]byte, 110), gguf.TensorIQ3_S, 256, "decoding IQ3_S is not supported"},
		{"Q4_K n not a multiple of 256", dst, src, gguf.TensorQ4_K, 32, "cannot decode 32 values of type Q4_K"},
		{"unsupported I8", dst, src, gguf.TensorI8, 4, "decoding I8 is not supported"},
		{"unknown type", dst, src, gguf.TensorType(77), 32, "TensorType(77)"},
		{"negative n", dst, src, gguf.TensorF32, -1 << 62, "cannot decode"},
		{"negative n Q8_0", dst, src, gguf.TensorQ8_0, -32, "cannot decode"},
	}
	for _, c := range cases {
		err := numfmt.DequantizeRow(c.dst, c.src, c.typ, c.n)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// n = 0 is fine with no data.
	for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16, gguf.TensorQ8_0} {
		if err := numfmt.DequantizeRow(nil, nil, typ, 0); err != nil {
			t.Errorf("%s with n = 0: %v", typ, err)
		}
	}
}

func TestQuantizeRowErrors(t *testing.T) {
	prefix := []byte{1, 2, 3}
	out, err := numfmt.QuantizeRow(prefix, make([]float32, 33), gguf.TensorQ8_0)
	if err == nil || !strings.Contains(err.Error(), "multiple of 32") {
		t.Errorf("Q8_0 of 33 values: %v", err)
	}
	if !bytes.Equal(out, prefix) {
		t.Errorf("Q8_0 of 33 values changed dst: % x", out)
	}
	out, err = numfmt.QuantizeRow(prefix, make([]float32, 32), gguf.TensorQ6_K)
	if err == nil || !strings.Contains(err.Error(), "Q6_K needs a multiple of 256 values, have 32") || !bytes.Equal(out, prefix) {
		t.Errorf("Q6_K of 32 values: % x, %v", out, err)
	}
	for _, typ := range []gguf.TensorType{gguf.TensorIQ2_XXS, gguf.TensorTQ1_0, gguf.TensorI8, gguf.TensorF64, gguf.TensorType(77)} {
		if _, err := numfmt.QuantizeRow(nil, make([]float32, 256), typ); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s: %v", typ, err)
		}
	}
	if out, err := numfmt.QuantizeRow(nil, nil, gguf.TensorQ8_0); err != nil || len(out) != 0 {
		t.Errorf("Q8_0 of no values: % x, %v", out, err)
	}
}

// TestPlainRows: F32 rows pass through bit for bit; F16 and BF16 rows use
// the scalar conversions.
func TestPlainRows(t *testing.T) {
	src := []float32{0, float32(math.Copysign(0, -1)), 1, -2.5, math.MaxFloat32, f32(1), f32(0x7fc01234), f32(0x7f800001), float32(math.Inf(-1)), 1e-6, 65520, 3.14159}
	n := len(src)

	b, err := numfmt.QuantizeRow(nil, src, gguf.TensorF32)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range src {
		if got := binary.LittleEndian.Uint32(b[4*i:]); got != math.Float32bits(x) {
			t.Errorf("F32 [%d]: %#08x, want %#08x", i, got, math.Float32bits(x))
		}
	}
	dst := make([]float32, n)
	if err := numfmt.DequantizeRow(dst, b, gguf.TensorF32, n); err != nil {
		t.Fatal(err)
	}
	for i := range src {
		if math.Float32bits(dst[i]) != math.Float32bits(src[i]) {
			t.Errorf("F32 [%d]: %#08x after a round trip, want %#08x", i, math.Float32bits(dst[i]), math.Float32bits(src[i]))
		}
	}

	for _, c := range []struct {
		typ  gguf.TensorType
		to   func(float32) uint16
		from func(uint16) float32
	}{
		{gguf.TensorF16, numfmt.F32ToF16, numfmt.F16ToF32},
		{gguf.TensorBF16, numfmt.F32ToBF16, numfmt.BF16ToF32},
	} {
		b, err := numfmt.QuantizeRow(nil, src, c.typ)
		if err != nil || len(b) != 2*n {
			t.Fatalf("%s: %d bytes, %v", c.typ, len(b), err)
		}
		if err := numfmt.DequantizeRow(dst, b, c.typ, n); err != nil {
			t.Fatal(err)
		}
		for i, x := range src {
			h := binary.LittleEndian.Uint16(b[2*i:])
			if h != c.to(x) {
				t.Errorf("%s [%d]: %#04x, want %#04x", c.typ, i, h, c.to(x))
			}
			if math.Float32bits(dst[i]) != math.Float32bits(c.from(h)) {
				t.Errorf("%s [%d]: decoded %g, want %g", c.typ, i, dst[i], c.from(h))
			}
		}
	}
}

// TestGoldenQ8_0 decodes Q8_0 weights of the golden model and quantizes
// them again: ggml's Q8_0 quantizer is idempotent, so the bytes come back.
func TestGoldenQ8_0(t *testing.T) {
	f, err := gguf.Open("../testdata/golden/tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{"blk.0.attn_q.weight", "blk.1.ffn_down.weight", "token_embd.weight"} {
		ti, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("no tensor %s", name)
		}
		rowLen := int(ti.Shape[0])
		rowBytes := rowLen / 32 * 34
		rows := min(int(ti.Elements())/rowLen, 512)
		vals := make([]float32, rowLen)
		var out []byte
		for r := range rows {
			src := ti.Data[r*rowBytes : (r+1)*rowBytes]
			if err := numfmt.DequantizeRow(vals, src, ti.Type, rowLen); err != nil {
				t.Fatal(err)
			}
			for _, x := range vals {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("%s row %d: %g", name, r, x)
				}
			}
			out, err = numfmt.QuantizeRow(out[:0], vals, ti.Type)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, src) {
				t.Fatalf("%s row %d: requantized bytes differ", name, r)
			}
		}
	}
}
