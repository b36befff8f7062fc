package scalar

import (
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/backend/internal/attntest"
	"inferno/backend/internal/glutest"
	"inferno/numfmt"
)

func randHalves(rng *rand.Rand, n int, scale float64) (h []uint16, f []float32) {
	h, f = make([]uint16, n), make([]float32, n)
	for i := range h {
		h[i] = numfmt.F32ToF16(float32(rng.NormFloat64() * scale))
		f[i] = numfmt.F16ToF32(h[i])
	}
	return h, f
}

// TestAttentionF16 checks that attention over half-precision keys and
// values gives the bits of Attention over the same values widened.
func TestAttentionF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := NewScalar()
	for _, c := range []struct{ n, pos, heads, kv, dim int }{{1, 0, 4, 2, 32}, {1, 70, 4, 2, 32}, {5, 3, 6, 3, 16}} {
		q := make([]float32, c.n*c.heads*c.dim)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
		}
		kh, kf := randHalves(rng, (c.pos+c.n)*c.kv*c.dim, 2)
		vh, vf := randHalves(rng, (c.pos+c.n)*c.kv*c.dim, 1)
		want := make([]float32, len(q))
		got := make([]float32, len(q))
		seqs := []backend.SeqAttn{{N: c.n, Pos: c.pos, Table: []int32{0}}}
		s.Attention(want, q, kf, vf, seqs, c.pos+c.n, c.heads, c.kv, c.dim, backend.AttnOpts{})
		s.AttentionF16(got, q, kh, vh, seqs, c.pos+c.n, c.heads, c.kv, c.dim, backend.AttnOpts{})
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: element %d = %g, want %g", c, i, got[i], want[i])
			}
		}
	}
}

func TestToF16(t *testing.T) {
	src := []float32{0, -1, 1.5, 65504, 65520, 1e-8, -6e-8, float32(math.Inf(-1)), float32(math.NaN())}
	dst := make([]uint16, len(src)+1)
	NewScalar().ToF16(dst, src)
	for i, x := range src {
		if dst[i] != numfmt.F32ToF16(x) {
			t.Errorf("%g: %#04x, want %#04x", x, dst[i], numfmt.F32ToF16(x))
		}
	}
}

// TestAttentionPaged checks that every sequence of a batch over a paged
// cache gets the bits it gets alone in one contiguous block, for F32 and
// F16 caches, every block size and random block tables.
func TestAttentionPaged(t *testing.T) {
	attntest.CheckPaged(t, NewScalar(), 51)
}

// TestAttentionPagedAccuracy checks batches against float64 attention.
func TestAttentionPagedAccuracy(t *testing.T) {
	attntest.CheckAccuracy(t, NewScalar(), 53, 2e-5)
}

// TestAttentionPanics checks that malformed calls panic with a message.
func TestAttentionPanics(t *testing.T) {
	attntest.CheckPanics(t, NewScalar())
}

// TestRoPEPositions checks RoPE over per-token positions against calls
// over consecutive positions.
func TestRoPEPositions(t *testing.T) {
	attntest.CheckRoPE(t, NewScalar(), 55)
}

// TestGatedActivations checks GeGLU and SwiGLUOAI against float64.
func TestGatedActivations(t *testing.T) {
	glutest.Check(t, NewScalar(), 57)
}
