package simd

import (
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/backend/internal/attntest"
)

// TestAttentionPaged checks that every sequence of a batch over a paged
// cache gets the bits it gets alone in one contiguous block, for F32 and
// F16 caches, every block size and random block tables.
func TestAttentionPaged(t *testing.T) {
	attntest.CheckPaged(t, New(), 41)
}

// TestAttentionPagedUnits checks that any split of a batch's units, over
// two Ops, gives the bits of the whole call, with and without options.
func TestAttentionPagedUnits(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	ops, other := New(), New()
	for _, sh := range attntest.Shapes {
		for k, bs := range attntest.BlockSizes {
			b := attntest.NewBatch(rng, sh, bs)
			if k%2 == 1 {
				b.Opt = attntest.RandomOpts(rng, sh, k/2)
			}
			seqs := b.WindowSeqs()
			units := 0
			for _, sq := range b.Seqs {
				units += sq.N * sh.KV
			}
			for _, f16 := range []bool{false, true} {
				whole := b.Run(ops, f16)
				split := make([]float32, len(whole))
				for i := range split {
					split[i] = attntest.Sentinel
				}
				for u0, i := 0, 0; u0 < units; i++ {
					u1 := min(units, u0+1+rng.IntN(20))
					o := ops
					if i%2 == 1 {
						o = other
					}
					if f16 {
						o.AttentionUnitsF16(split, b.Q, b.KH, b.VH, seqs, bs, sh.Heads, sh.KV, sh.HeadDim, &b.Opt, u0, u1)
					} else {
						o.AttentionUnits(split, b.Q, b.K, b.V, seqs, bs, sh.Heads, sh.KV, sh.HeadDim, &b.Opt, u0, u1)
					}
					u0 = u1
				}
				b.Check(t, "split units", split, func(i int) []float32 {
					sq := b.Seqs[i]
					d := sh.Heads * sh.HeadDim
					return whole[sq.Token*d : (sq.Token+sq.N)*d]
				})
			}
		}
	}
}

// TestAttentionUnitsWrite checks that a range of units writes the output
// of its units and nothing else: units of sequence 0 first, then 1, ...,
// and in a sequence of N tokens unit u is token u%N with KV head u/N.
func TestAttentionUnitsWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	ops := New()
	for _, sh := range attntest.Shapes {
		b := attntest.NewBatch(rng, sh, 16)
		units := 0
		for _, sq := range b.Seqs {
			units += sq.N * sh.KV
		}
		group := sh.Heads / sh.KV
		for range 20 {
			u0 := rng.IntN(units + 1)
			u1 := u0 + rng.IntN(units-u0+1)
			out := make([]float32, len(b.Q))
			for i := range out {
				out[i] = attntest.Sentinel
			}
			ops.AttentionUnits(out, b.Q, b.K, b.V, b.Seqs, b.BlockSize, sh.Heads, sh.KV, sh.HeadDim, &b.Opt, u0, u1)
			base := 0
			for _, sq := range b.Seqs {
				for u := range sq.N * sh.KV {
					tok, g := sq.Token+u%sq.N, u/sq.N
					in := base+u >= u0 && base+u < u1
					for h := g * group; h < (g+1)*group; h++ {
						for i, x := range out[(tok*sh.Heads+h)*sh.HeadDim:][:sh.HeadDim] {
							if written := x != attntest.Sentinel; written != in {
								t.Fatalf("%v: units %d..%d: unit %d (row %d, head %d) value %d written %v", b, u0, u1, base+u, tok, h, i, written)
							}
						}
					}
				}
				base += sq.N * sh.KV
			}
		}
	}
}

// TestAttentionPagedAccuracy checks batches against float64 attention.
func TestAttentionPagedAccuracy(t *testing.T) {
	attntest.CheckAccuracy(t, New(), 45, 2e-5)
}

// TestAttentionPanics checks that malformed calls panic with a message.
func TestAttentionPanics(t *testing.T) {
	attntest.CheckPanics(t, New())
	rng := rand.New(rand.NewPCG(47, 48))
	b := attntest.NewBatch(rng, attntest.Shape{Heads: 4, KV: 2, HeadDim: 32}, 16)
	units := 0
	for _, sq := range b.Seqs {
		units += sq.N * b.KV
	}
	for _, r := range [][2]int{{-1, 0}, {0, units + 1}, {3, 2}} {
		func() {
			defer func() {
				if msg, _ := recover().(string); !strings.Contains(msg, "units") {
					t.Errorf("units %v of %d: panic %q", r, units, msg)
				}
			}()
			New().AttentionUnits(make([]float32, len(b.Q)), b.Q, b.K, b.V, b.Seqs, b.BlockSize, b.Heads, b.KV, b.HeadDim, &b.Opt, r[0], r[1])
		}()
	}
}

// TestRoPEPositions checks RoPE over per-token positions against calls
// over consecutive positions.
func TestRoPEPositions(t *testing.T) {
	attntest.CheckRoPE(t, New(), 49)
}
