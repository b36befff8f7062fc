package cuda

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"inferno/backend"
	"inferno/gguf"
)

// BenchmarkMMHSplit times the b128 products of a 512-token prompt pass
// (qact_h's activations, the store epilogue) at the shapes of Mistral
// Small 3 (hidden 5,120, FFN 32,768; its Q and K rows apart from V's,
// which Q4_K_M often stores as Q6_K), Qwen3-8B and Qwen3-30B-A3B's
// attention, over Q4_K and Q6_K weights, with K cut into 1 to 8 splits (mmh_split), and reports the
// split mmhSplits picks, TFLOPS and us a product.
func BenchmarkMMHSplit(b *testing.B) {
	if err := Available(); err != nil {
		b.Skipf("no CUDA GPU: %v", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g, err := newDevice(0)
	if err != nil {
		b.Fatal(err)
	}
	defer g.close()
	const n = 512
	alloc := func(size int) uint64 {
		p, err := g.alloc(uint64(size), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := g.memsetAsync(p, uint64(size)); err != nil {
			b.Fatal(err)
		}
		return p
	}
	ws, cnt := alloc(mmhSplitMost*mmhSplitBytes), alloc(4*mmhSplitMost)
	xh, hs := alloc(2*n*32768), alloc(4*n)
	y := alloc(4 * n * 65536)
	for _, typ := range []gguf.TensorType{gguf.TensorQ4_K, gguf.TensorQ6_K} {
		f := formatOf(typ)
		r := &Model{dev: g, grids: map[string]int{}}
		slots := b128Slots(b, r, f)
		for _, sh := range []struct {
			name    string
			rows, K int
		}{
			{"mistral-qk", 5120, 5120}, {"mistral-v", 1024, 5120}, {"mistral-o", 5120, 4096},
			{"mistral-down", 5120, 32768}, {"mistral-gateup", 65536, 5120},
			{"8b-qkv", 6144, 4096}, {"8b-o", 4096, 4096}, {"8b-down", 4096, 12288}, {"8b-gateup", 24576, 4096},
			{"a3b-qkv", 5120, 2048}, {"a3b-o", 2048, 4096},
		} {
			w := &backend.Weight{Name: "w", Type: typ, Rows: sh.rows, Cols: sh.K, Data: make([]byte, sh.rows*sh.K/typ.BlockSize()*typ.BlockBytes())}
			gw, err := r.uploadWeight(w)
			if err != nil {
				b.Fatal(err)
			}
			gx, gy := (gw.mpad+127)/128, (n+127)/128
			pick := mmhSplits(gx*gy, slots, sh.K/64)
			for _, s := range []int{1, 2, 3, 4, 6, 8} {
				if s*gx*gy > mmhSplitMost {
					continue
				}
				b.Run(fmt.Sprintf("%s/%s/s%d", typ, sh.name, s), func(b *testing.B) {
					launch := func() {
						if err := g.launch(f.hPrefill, [3]uint32{uint32(gx), uint32(gy), uint32(s)}, 256, uint32(mmhSmem(true)),
							gw.lo, gw.hi, gw.m0, gw.m1, i32(gw.rows), i32(gw.mpad), i32(gw.cols), xh, hs, i32(n), y, i32(sh.rows), 0, i32(epStore), ws, cnt, i32(s)); err != nil {
							b.Fatal(err)
						}
					}
					launch()
					if err := g.sync("warm-up"); err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					for b.Loop() {
						launch()
					}
					if err := g.sync(f.hPrefill); err != nil {
						b.Fatal(err)
					}
					per := time.Since(start) / time.Duration(b.N)
					b.ReportMetric(float64(per.Nanoseconds())/1e3, "us/op")
					b.ReportMetric(2*float64(n)*float64(sh.rows)*float64(sh.K)/per.Seconds()/1e12, "TFLOPS")
					b.ReportMetric(float64(pick), "picked")
				})
			}
		}
	}
}
