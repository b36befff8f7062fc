package numfmt

import (
	"math"
	"testing"
)

// refBestIndexInt8 is ggml's best_index_int8 as written: a binary search.
func refBestIndexInt8(val []int8, x float32) uint8 {
	n := len(val)
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[n-1]) {
		return uint8(n - 1)
	}
	ml, mu := 0, n-1
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(val[mu-1]) < float32(val[mu])-x {
		return uint8(mu - 1)
	}
	return uint8(mu)
}

// TestBestIndexInt8 checks the table lookup against ggml's binary search
// over a spread of all float32 bit patterns and every float near each
// level and each midpoint.
func TestBestIndexInt8(t *testing.T) {
	check := func(x float32) {
		if got, want := bestIndexInt8(x), refBestIndexInt8(kvaluesIQ4NL[:], x); got != want {
			t.Fatalf("bestIndexInt8(%g [%#08x]) = %d, ggml %d", x, math.Float32bits(x), got, want)
		}
	}
	step := uint64(997)
	if testing.Short() {
		step = 65521
	}
	for b := uint64(0); b < 1<<32; b += step {
		check(math.Float32frombits(uint32(b)))
	}
	var around []float32
	for i, v := range kvaluesIQ4NL {
		around = append(around, float32(v))
		if i > 0 {
			around = append(around, (float32(v)+float32(kvaluesIQ4NL[i-1]))/2)
		}
	}
	for _, c := range []float32{0, -128, 114, -127.5, 113.5} {
		around = append(around, c)
	}
	for _, c := range around {
		for _, dir := range []float32{-200, 200} {
			x := c
			for range 3000 {
				check(x)
				x = math.Nextafter32(x, dir)
			}
		}
	}
	check(float32(math.NaN()))
	check(float32(math.Inf(1)))
	check(float32(math.Inf(-1)))
}

// TestNearestInt checks ggml's rounding trick: ties to even within
// |f| <= 4194303.
func TestNearestInt(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want int
	}{
		{0, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.5, -2},
		{0.49999997, 0}, {0.50000006, 1}, {3.7, 4}, {-3.7, -4}, {4194303, 4194303}, {-4194303, -4194303},
	} {
		if got := nearestInt(c.f); got != c.want {
			t.Errorf("nearestInt(%g) = %d, want %d", c.f, got, c.want)
		}
	}
	for b := uint32(0); b < 0x4a800000; b += 4099 { // up to 2^22
		f := math.Float32frombits(b)
		if got, want := nearestInt(f), int(math.RoundToEven(float64(f))); got != want {
			t.Fatalf("nearestInt(%g) = %d, want %d", f, got, want)
		}
		if got, want := nearestInt(-f), -int(math.RoundToEven(float64(f))); got != want {
			t.Fatalf("nearestInt(%g) = %d, want %d", -f, got, want)
		}
	}
}
