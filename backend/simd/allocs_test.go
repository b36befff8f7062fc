package simd

import (
	"math/rand/v2"
	"testing"

	"inferno/gguf"
)

// TestAllocs checks that, once the scratch buffers have grown, no
// operation allocates (package pool checks the same with workers).
func TestAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	ops := New()
	w := randWeight(t, rng, gguf.TensorQ8_0, 64, 256)
	wf := randWeight(t, rng, gguf.TensorBF16, 64, 256)
	x := randVec(rng, 8*256, 1)
	y := make([]float32, 8*64)
	q := randVec(rng, 8*16*128, 1)
	k := randVec(rng, 40*8*128, 1)
	v := randVec(rng, 40*8*128, 1)
	att := make([]float32, len(q))
	kh, vh := make([]uint16, len(k)), make([]uint16, len(v))
	ops.ToF16(kh, k)
	ops.ToF16(vh, v)
	g := randVec(rng, 128, 1)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"MatMul n=1", func() { ops.MatMul(y, w, x, 1) }},
		{"MatMul n=8", func() { ops.MatMul(y, w, x, 8) }},
		{"MatMul BF16 n=8", func() { ops.MatMul(y, wf, x, 8) }},
		{"Attention n=1", func() { ops.Attention(att, q, k, v, 1, 31, 16, 8, 128) }},
		{"Attention n=8", func() { ops.Attention(att, q, k, v, 8, 32, 16, 8, 128) }},
		{"AttentionF16 n=1", func() { ops.AttentionF16(att, q, kh, vh, 1, 31, 16, 8, 128) }},
		{"AttentionF16 n=8", func() { ops.AttentionF16(att, q, kh, vh, 8, 32, 16, 8, 128) }},
		{"ToF16", func() { ops.ToF16(kh, k) }},
		{"RMSNorm", func() { ops.RMSNorm(q, q, g, 1e-6) }},
		{"RoPE", func() { ops.RoPE(q, 8, 16, 128, 32, 1e6) }},
		{"SwiGLU", func() { ops.SwiGLU(x, x, x) }},
		{"Add", func() { ops.Add(x, x) }},
	} {
		if a := testing.AllocsPerRun(20, c.f); a != 0 {
			t.Errorf("%s: %v allocations per run", c.name, a)
		}
	}
}
