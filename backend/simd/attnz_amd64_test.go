//go:build amd64 && !purego

package simd

import (
	"math/rand/v2"
	"testing"

	"inferno/internal/floatbits"
)

// TestAttnScoresF16AVX512 checks that the 512-bit scores give the bits of
// the 256-bit ones, for head sizes of 32 to 256, strided keys and 8 to 64
// keys.
func TestAttnScoresF16AVX512(t *testing.T) {
	if !zmm {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(43, 44))
	for _, hd := range []int{32, 64, 128, 256} {
		for _, nk := range []int{8, 16, 64} {
			const sstride = 72
			kstride := 3*hd + 16
			k, _ := toHalves(randVec(rng, (nk-1)*kstride+hd, 2))
			v, _ := toHalves(randVec(rng, (nk-1)*kstride+hd, 1))
			q := randVec(rng, 2*hd, 1)
			scale := float32(0.088)
			want, got := make([]float32, sstride+nk), make([]float32, sstride+nk)
			attnScores2F16AVX2(&want[0], sstride*4, &q[0], &k[0], &v[0], kstride*2, nk, hd, scale)
			attnScores2F16AVX512(&got[0], sstride*4, &q[0], &k[0], &v[0], kstride*2, nk, hd, scale)
			if i := floatbits.FirstDiff(got, want); i >= 0 {
				t.Fatalf("hd %d, %d keys: score %d = %g, want %g", hd, nk, i, got[i], want[i])
			}
		}
	}
}

// TestAttnAccumF16AVX512 checks that the 512-bit accumulation gives the
// bits of the 256-bit one, for head sizes of 128 and 256, strided values,
// one key to a chunk's 64 and corrections of 0, 1 and others.
func TestAttnAccumF16AVX512(t *testing.T) {
	if !zmm {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for _, hd := range []int{128, 256} {
		for _, nk := range []int{1, 3, 17, 64} {
			for _, corr := range [][2]float32{{0, 0}, {1, 1}, {0.375, 0.9}} {
				const pstride = 64
				vstride := 3*hd + 8 // values apart as in a cache of several KV heads
				v, _ := toHalves(randVec(rng, (nk-1)*vstride+hd, 1))
				p := randVec(rng, pstride+nk, 1)
				o := randVec(rng, 2*hd, 1)
				want, got := append([]float32(nil), o...), append([]float32(nil), o...)
				attnAccum2F16AVX2(&want[0], hd*4, &p[0], pstride*4, &v[0], vstride*2, nk, hd, corr[0], corr[1])
				attnAccum2F16AVX512(&got[0], hd*4, &p[0], pstride*4, &v[0], vstride*2, nk, hd, corr[0], corr[1])
				if i := floatbits.FirstDiff(got, want); i >= 0 {
					t.Fatalf("hd %d, %d keys, corrections %v: element %d = %g, want %g", hd, nk, corr, i, got[i], want[i])
				}
			}
		}
	}
}
