package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/internal/floatbits"
)

// refAttention is causal grouped-query attention in float64 with a plain
// softmax, over keys and values in one block of pos+n positions.
func refAttention(q, k, v []float32, n, pos, nHeads, nKV, headDim int) []float64 {
	out := make([]float64, n*nHeads*headDim)
	group := nHeads / nKV
	at := func(j, g int) int { return backend.KVIndex(j, g, pos+n, nKV, headDim) }
	scale := 1 / math.Sqrt(float64(headDim))
	for t := range n {
		seq := pos + t + 1
		for h := range nHeads {
			qh := q[(t*nHeads+h)*headDim:][:headDim]
			s := make([]float64, seq)
			m := math.Inf(-1)
			for j := range seq {
				var d float64
				for i, x := range qh {
					d += float64(x) * float64(k[at(j, h/group)+i])
				}
				s[j] = d * scale
				m = max(m, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = math.Exp(s[j] - m)
				sum += s[j]
			}
			o := out[(t*nHeads+h)*headDim:][:headDim]
			for j, p := range s {
				for i := range o {
					o[i] += p / sum * float64(v[at(j, h/group)+i])
				}
			}
		}
	}
	return out
}

type attnCase struct{ n, pos, nHeads, nKV, headDim int }

// seqs returns the call of the case: one sequence in one contiguous block
// of pos+n positions, the layout of a cache before paging.
func (c attnCase) seqs() (seqs []backend.SeqAttn, blockSize int) {
	return []backend.SeqAttn{{N: c.n, Pos: c.pos, Table: []int32{0}}}, c.pos + c.n
}

var attnCases = []attnCase{
	{1, 0, 4, 2, 32}, {1, 6, 4, 2, 32}, {1, 299, 4, 2, 32}, {7, 0, 4, 2, 32}, {300, 0, 4, 2, 32},
	{1, 0, 16, 8, 128}, {1, 6, 16, 8, 128}, {1, 299, 16, 8, 128}, {5, 295, 16, 8, 128}, {7, 0, 16, 8, 128},
	{3, 64, 8, 1, 128}, {2, 70, 4, 4, 64}, {4, 9, 6, 3, 48}, {3, 130, 4, 2, 24},
}

func randAttn(rng *rand.Rand, c attnCase) (q, k, v []float32) {
	// Scaled so that the softmax is neither flat nor one-hot.
	q = randVec(rng, c.n*c.nHeads*c.headDim, 1)
	k = randVec(rng, (c.pos+c.n)*c.nKV*c.headDim, 2)
	v = randVec(rng, (c.pos+c.n)*c.nKV*c.headDim, 1)
	return q, k, v
}

func TestAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	ops := New()
	for _, c := range attnCases {
		q, k, v := randAttn(rng, c)
		out := make([]float32, len(q))
		seqs, bs := c.seqs()
		ops.Attention(out, q, k, v, seqs, bs, c.nHeads, c.nKV, c.headDim, backend.AttnOpts{})
		want := refAttention(q, k, v, c.n, c.pos, c.nHeads, c.nKV, c.headDim)
		for i, w := range want {
			if e := math.Abs(float64(out[i]) - w); e > 2e-5 {
				t.Fatalf("%+v: element %d = %g, want %g", c, i, out[i], w)
			}
		}
	}
}

// TestAttentionBitwise checks that any split into units, and computing
// the tokens one call at a time, give the bits of one whole call.
func TestAttentionBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	ops, other := New(), New()
	for _, c := range attnCases {
		if c.n == 1 {
			continue
		}
		q, k, v := randAttn(rng, c)
		whole := make([]float32, len(q))
		seqs, bs := c.seqs()
		ops.Attention(whole, q, k, v, seqs, bs, c.nHeads, c.nKV, c.headDim, backend.AttnOpts{})
		split := make([]float32, len(q))
		units := c.n * c.nKV
		for u0 := 0; u0 < units; u0 += 3 {
			o := ops
			if u0%2 == 1 {
				o = other
			}
			o.AttentionUnits(split, q, k, v, seqs, bs, c.nHeads, c.nKV, c.headDim, &backend.AttnOpts{}, u0, min(u0+3, units))
		}
		if i := floatbits.FirstDiff(split, whole); i >= 0 {
			t.Fatalf("%+v: split units differ at %d", c, i)
		}
		qd := c.nHeads * c.headDim
		one := make([]float32, qd)
		for tok := range c.n {
			ops.Attention(one, q[tok*qd:(tok+1)*qd], k, v, []backend.SeqAttn{{N: 1, Pos: c.pos + tok, Table: []int32{0}}}, bs, c.nHeads, c.nKV, c.headDim, backend.AttnOpts{})
			if i := floatbits.FirstDiff(one, whole[tok*qd:(tok+1)*qd]); i >= 0 {
				t.Fatalf("%+v: token %d alone differs at %d", c, tok, i)
			}
		}
	}
}

func TestAttentionLargeScores(t *testing.T) {
	// Scores far apart: the online softmax must rescale without overflow.
	c := attnCase{1, 199, 2, 1, 32}
	rng := rand.New(rand.NewPCG(23, 24))
	q, k, v := randAttn(rng, c)
	for i := range k {
		k[i] *= 40
	}
	out := make([]float32, len(q))
	seqs, bs := c.seqs()
	New().Attention(out, q, k, v, seqs, bs, c.nHeads, c.nKV, c.headDim, backend.AttnOpts{})
	want := refAttention(q, k, v, c.n, c.pos, c.nHeads, c.nKV, c.headDim)
	for i, w := range want {
		if e := math.Abs(float64(out[i]) - w); e > 1e-4 || math.IsNaN(float64(out[i])) {
			t.Fatal(fmt.Sprintf("element %d = %g, want %g", i, out[i], w))
		}
	}
}
