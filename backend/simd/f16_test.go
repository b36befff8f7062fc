package simd

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/internal/floatbits"
	"inferno/numfmt"
)

// toHalves rounds x to half precision: the bits, and the values widened.
func toHalves(x []float32) (h []uint16, f []float32) {
	h, f = make([]uint16, len(x)), make([]float32, len(x))
	for i, v := range x {
		h[i] = numfmt.F32ToF16(v)
		f[i] = numfmt.F16ToF32(h[i])
	}
	return h, f
}

// f16Probes are float32 bit patterns where half-precision rounding is
// delicate: around every half exponent's ties and carries, the largest
// finite half and overflow, subnormals and the underflow to zero, signed
// zeros, infinities and NaNs (quiet and signalling, with payloads).
func f16Probes() []uint32 {
	var p []uint32
	for e := uint32(90); e <= 160; e++ { // float32 exponents around half's range
		for _, m := range []uint32{0, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x7fe000, 0x7fefff, 0x7ff000, 0x7ff001, 0x7fffff} {
			p = append(p, e<<23|m, 1<<31|e<<23|m)
		}
	}
	return append(p, 0, 1<<31, 1, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0x7fbfffff, 0xff812345, 0x477fefff, 0x477ff000)
}

// TestToF16 checks that ToF16 gives the bits of numfmt.F32ToF16 on the
// probes and on a sweep of every 65537th float32 bit pattern, for every
// alignment of the kernel's 8-value groups.
func TestToF16(t *testing.T) {
	var src []float32
	for _, b := range f16Probes() {
		src = append(src, math.Float32frombits(b))
	}
	for b := uint64(0); b < 1<<32; b += 65537 {
		src = append(src, math.Float32frombits(uint32(b)))
	}
	ops := New()
	dst := make([]uint16, len(src))
	for _, off := range []int{0, 3} {
		clear(dst)
		ops.ToF16(dst[off:], src[off:])
		for i := off; i < len(src); i++ {
			if want := numfmt.F32ToF16(src[i]); dst[i] != want {
				t.Fatalf("offset %d: %#08x (%g) gives %#04x, want %#04x", off, math.Float32bits(src[i]), src[i], dst[i], want)
			}
		}
	}
}

// TestAttentionF16 checks that attention over half-precision keys and
// values gives the bits of Attention over the widened values, for the
// whole call and for any split into units.
func TestAttentionF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	ops, other := New(), New()
	// Besides attnCases: groups of 3 (a two-head and a one-head kernel
	// call), with keys of 48 and 128 bytes (the 16- and 64-byte loops).
	cases := append([]attnCase{{1, 300, 16, 8, 128}, {2, 67, 6, 2, 24}, {3, 40, 3, 1, 64}}, attnCases...)
	for _, c := range cases {
		q, k, v := randAttn(rng, c)
		kh, kf := toHalves(k)
		vh, vf := toHalves(v)
		seqs, bs := c.seqs()
		want := make([]float32, len(q))
		ops.Attention(want, q, kf, vf, seqs, bs, c.nHeads, c.nKV, c.headDim, backend.AttnOpts{})
		got := make([]float32, len(q))
		ops.AttentionF16(got, q, kh, vh, seqs, bs, c.nHeads, c.nKV, c.headDim, backend.AttnOpts{})
		if i := floatbits.FirstDiff(got, want); i >= 0 {
			t.Fatalf("%+v: element %d = %g, want %g", c, i, got[i], want[i])
		}
		clear(got)
		units := c.n * c.nKV
		for u0 := 0; u0 < units; u0 += 3 {
			o := ops
			if u0%2 == 1 {
				o = other
			}
			o.AttentionUnitsF16(got, q, kh, vh, seqs, bs, c.nHeads, c.nKV, c.headDim, &backend.AttnOpts{}, u0, min(u0+3, units))
		}
		if i := floatbits.FirstDiff(got, want); i >= 0 {
			t.Fatalf("%+v: split units differ at %d", c, i)
		}
	}
}

// TestAttentionF16Accuracy checks the F16 attention against float64
// attention on the unrounded keys and values: the error is that of
// rounding them to half precision.
func TestAttentionF16Accuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	c := attnCase{1, 299, 16, 8, 128}
	q, k, v := randAttn(rng, c)
	kh, _ := toHalves(k)
	vh, _ := toHalves(v)
	got := make([]float32, len(q))
	seqs, bs := c.seqs()
	New().AttentionF16(got, q, kh, vh, seqs, bs, c.nHeads, c.nKV, c.headDim, backend.AttnOpts{})
	want := refAttention(q, k, v, c.n, c.pos, c.nHeads, c.nKV, c.headDim)
	if e := relL2(got, want); e > 2e-3 {
		t.Errorf("relative L2 error %.3g > 2e-3", e)
	}
}
