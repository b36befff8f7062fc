package numfmt

import (
	"bytes"
	"math"
	"math/rand"
	"testing"
)

// TestFitAccelSameBits checks that the scale searches give the same bits
// with and without fitAccel (the AVX2 candidates), over random rows of
// several spreads, offsets, constant and sparse blocks, for every format
// built on them.
func TestFitAccelSameBits(t *testing.T) {
	if !fitAccel {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewSource(7))
	const n = 64 * QK_K
	x := make([]float32, n)
	for blk := 0; blk < n/32; blk++ {
		kind := r.Intn(8)
		scale := float32(math.Pow(10, float64(r.Intn(9)-6)))
		off := float32(0)
		if kind == 3 {
			off = scale * float32(r.NormFloat64()) * 4
		}
		for i := 32 * blk; i < 32*blk+32; i++ {
			switch kind {
			case 0, 1, 2, 3:
				x[i] = off + scale*float32(r.NormFloat64())
			case 4:
				x[i] = scale * float32(r.Float64())
			case 5:
				x[i] = -scale * float32(r.Float64())
			case 6:
				if r.Intn(6) == 0 {
					x[i] = scale * float32(r.NormFloat64())
				}
			case 7:
				x[i] = scale
			}
		}
	}
	for _, f := range []struct {
		name  string
		bytes int
		q     func([]byte, []float32)
	}{
		{"Q2_K", BlockQ2_KBytes, quantizeQ2_K},
		{"Q4_K", BlockQ4_KBytes, quantizeQ4_K},
		{"Q5_K", BlockQ5_KBytes, quantizeQ5_K},
		{"Q6_K", BlockQ6_KBytes, quantizeQ6_K},
	} {
		got := make([]byte, n/QK_K*f.bytes)
		want := make([]byte, len(got))
		f.q(got, x)
		fitAccel = false
		f.q(want, x)
		fitAccel = true
		if !bytes.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s: block %d differs at byte %d", f.name, i/f.bytes, i%f.bytes)
					break
				}
			}
		}
	}
}
