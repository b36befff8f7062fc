package numfmt

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMXFP4ExponentGlibc checks floorLog2f against glibc's
// floorf(log2f(x)) at every binade's edges: testdata/ggml/log2f.txt
// (log2f.c) gives, for each binade [2^k, 2^(k+1)) of positive float32
// (subnormals included) where log2f rounds up to k+1 below 2^(k+1), the
// first such x; log2f never decreases, so the floor is k below it and
// k+1 from it on.
func TestMXFP4ExponentGlibc(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "ggml", "log2f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first := map[int]uint32{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var k int
		var b uint64
		fs := strings.Fields(line)
		if len(fs) == 2 {
			k, err = strconv.Atoi(fs[0])
			if err == nil {
				b, err = strconv.ParseUint(fs[1], 16, 32)
			}
		}
		if len(fs) != 2 || err != nil {
			t.Fatalf("log2f.txt: bad line %q", line)
		}
		first[k] = uint32(b)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(first) < 250 {
		t.Fatalf("log2f.txt has %d binades", len(first))
	}
	floor := func(b uint32) int { return int(floorLog2f(math.Float32frombits(b))) }
	checked := 0
	for k := -149; k <= 127; k++ {
		// The binade's bits: [lo, hi].
		var lo, hi uint32
		if k < -126 {
			lo, hi = 1<<(k+149), 1<<(k+150)-1
		} else {
			lo, hi = uint32(k+127)<<23, uint32(k+128)<<23-1
		}
		if got := floor(lo); got != k {
			t.Errorf("binade %d: floor(log2(%#08x)) = %d", k, lo, got)
		}
		fb, up := first[k]
		if !up {
			if got := floor(hi); got != k {
				t.Errorf("binade %d: floor(log2(%#08x)) = %d, glibc %d", k, hi, got, k)
			}
			checked++
			continue
		}
		if fb <= lo || fb > hi {
			t.Fatalf("log2f.txt: %#08x is not in binade %d", fb, k)
		}
		for _, c := range []struct {
			b    uint32
			want int
		}{{fb - 1, k}, {fb, k + 1}, {hi, k + 1}} {
			if got := floor(c.b); got != c.want {
				t.Errorf("binade %d: floor(log2(%g = %#08x)) = %d, glibc %d", k, math.Float32frombits(c.b), c.b, got, c.want)
			}
		}
		checked++
	}
	t.Logf("%d binades, %d with log2f rounding up below the next power of two", checked, len(first))
}

// refBestIndexMXFP4 is ggml's best_index_mxfp4 as written: all 16 codes.
func refBestIndexMXFP4(x, e float32) uint8 {
	best := 0
	bestErr := fabsf(float32(float32(kvaluesMXFP4[0])*e) - x)
	for i := 1; i < 16; i++ {
		err := fabsf(float32(float32(kvaluesMXFP4[i])*e) - x)
		if err < bestErr {
			best, bestErr = i, err
		}
	}
	return uint8(best)
}

// TestBestIndexMXFP4 checks the early-stopping search against the loop
// over all codes: random values at every scale relative to the block's,
// the midpoints between levels (ties) and a few ulps around them, and
// the extreme scales (subnormal, and those whose top levels overflow).
func TestBestIndexMXFP4(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 1))
	scales := []uint8{0, 1, 2, 3, 60, 100, 120, 126, 127, 128, 129, 140, 200, 250, 252, 253, 254, 255}
	mids := []float32{0, 0.5, 1.5, 2.5, 3.5, 5, 7, 10, 12, 13, 20}
	check := func(x, d float32) {
		if got, want := bestIndexMXFP4(x, d), refBestIndexMXFP4(x, d); got != want {
			t.Fatalf("x=%g (%#08x) d=%g: code %d, ggml's loop %d", x, math.Float32bits(x), d, got, want)
		}
	}
	n := 0
	for _, e := range scales {
		d := E8M0Half(e)
		for _, m := range mids {
			for _, s := range []float32{1, -1} {
				x := s * m * d
				for range 4 {
					x = math.Nextafter32(x, float32(math.Inf(-1)))
				}
				for range 9 {
					check(x, d)
					x = math.Nextafter32(x, float32(math.Inf(1)))
					n++
				}
			}
		}
		for range 2000 {
			x := float32(rng.NormFloat64()*4) * d
			if rng.IntN(10) == 0 {
				x = math.Float32frombits(rng.Uint32()) // anything, NaN and ±Inf included
			}
			check(x, d)
			n++
		}
	}
	for _, x := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32} {
		for _, e := range scales {
			check(x, E8M0Half(e))
			n++
		}
	}
	t.Logf("%d values agree", n)
}
