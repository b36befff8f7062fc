package simd

import (
	"math/rand/v2"
	"testing"

	"inferno/arch"
	"inferno/backend"
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
	k := randVec(rng, 64*8*128, 1)
	v := randVec(rng, 64*8*128, 1)
	att := make([]float32, len(q))
	kh, vh := make([]uint16, len(k)), make([]uint16, len(v))
	ops.ToF16(kh, k)
	ops.ToF16(vh, v)
	g := randVec(rng, 128, 1)
	one := []backend.SeqAttn{{N: 1, Pos: 31, Table: []int32{0}}}
	eight := []backend.SeqAttn{{N: 8, Pos: 32, Table: []int32{0}}}
	// Three sequences in blocks of 16 positions.
	batch := []backend.SeqAttn{
		{Token: 0, N: 1, Pos: 20, Table: []int32{2, 0}},
		{Token: 1, N: 5, Pos: 10, Table: []int32{3}},
		{Token: 6, N: 2, Pos: 40, Table: []int32{1, 0, 3}},
	}
	pos := []int32{32, 33, 34, 35, 36, 37, 38, 39}
	pos2 := []int32{7, 1, 900, 3, 4, 5, 6, 2}
	neox := &arch.Rope{Theta: 1e6}
	llama3 := &arch.Rope{Style: arch.RopeNormal, Theta: 500000, Scaling: arch.ScaleLlama3, Factor: 8, OrigContext: 8192, LowFreqFactor: 1, HighFreqFactor: 4}
	yarn := &arch.Rope{Theta: 150000, Scaling: arch.ScaleYaRN, Factor: 32, OrigContext: 4096}
	local := &arch.Rope{Theta: 10000}
	opt := backend.AttnOpts{Scale: 0.1, Window: 9, Sinks: g[:16]}
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"MatMul n=1", func() { ops.MatMul(y, w, x, 1) }},
		{"MatMul n=8", func() { ops.MatMul(y, w, x, 8) }},
		{"MatMul BF16 n=8", func() { ops.MatMul(y, wf, x, 8) }},
		{"Attention n=1", func() { ops.Attention(att, q, k, v, one, 40, 16, 8, 128, backend.AttnOpts{}) }},
		{"Attention n=8", func() { ops.Attention(att, q, k, v, eight, 40, 16, 8, 128, backend.AttnOpts{}) }},
		{"Attention batch", func() { ops.Attention(att, q, k, v, batch, 16, 16, 8, 128, backend.AttnOpts{}) }},
		{"AttentionUnits batch", func() { ops.AttentionUnits(att, q, k, v, batch, 16, 16, 8, 128, &backend.AttnOpts{}, 3, 40) }},
		{"AttentionF16 n=1", func() { ops.AttentionF16(att, q, kh, vh, one, 40, 16, 8, 128, backend.AttnOpts{}) }},
		{"AttentionF16 n=8", func() { ops.AttentionF16(att, q, kh, vh, eight, 40, 16, 8, 128, backend.AttnOpts{}) }},
		{"AttentionF16 batch", func() { ops.AttentionF16(att, q, kh, vh, batch, 16, 16, 8, 128, backend.AttnOpts{}) }},
		{"Attention batch, options", func() { ops.Attention(att, q, k, v, batch, 16, 16, 8, 128, opt) }},
		{"AttentionF16 batch, options", func() { ops.AttentionF16(att, q, kh, vh, batch, 16, 16, 8, 128, opt) }},
		{"ToF16", func() { ops.ToF16(kh, k) }},
		{"RMSNorm", func() { ops.RMSNorm(q, q, g, 1e-6) }},
		{"RoPE", func() { ops.RoPE(q, pos, 16, 128, 128, neox) }},
		{"RoPE other positions", func() { ops.RoPE(q, pos, 16, 128, 128, neox); ops.RoPE(q, pos2, 16, 128, 128, neox) }},
		{"RoPE normal, Llama 3 factors", func() { ops.RoPE(q, pos, 16, 128, 128, llama3); ops.RoPE(q, pos2, 16, 128, 128, llama3) }},
		{"RoPE YaRN and a local RoPE, partial, alternating", func() {
			ops.RoPE(q, pos, 16, 128, 96, yarn)
			ops.RoPE(q, pos, 16, 128, 96, local)
		}},
		{"SwiGLU", func() { ops.SwiGLU(x, x, x) }},
		{"GeGLU", func() { ops.GeGLU(x, x, x) }},
		{"SwiGLUOAI", func() { ops.SwiGLUOAI(x, x, x) }},
		{"Add", func() { ops.Add(x, x) }},
	} {
		if a := testing.AllocsPerRun(20, c.f); a != 0 {
			t.Errorf("%s: %v allocations per run", c.name, a)
		}
	}
}
