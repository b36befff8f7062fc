package cuda

import (
	"math"
	"testing"

	"inferno/backend/forward"
	"inferno/batch"
	"inferno/internal/floatbits"
	"inferno/kvcache"
	"inferno/model/qwen3"
)

// TestBatchHidden: a batch whose sequences list their last token in
// Hidden (embedding models' prompts, one a single token, one longer than
// a prefill tile) beside a chat sequence's output gives each sequence's
// final normed hidden state as the CPU computes it (scalar float32, an
// F32 cache), within the int8 activations' rounding, and the chat output
// the logits it has in the same batch without hidden rows, bit for bit.
func TestBatchHidden(t *testing.T) {
	requireGPU(t)
	t.Run("tiny", func(t *testing.T) { batchHidden(t, tinyModel(t)) })
	if testing.Short() {
		return
	}
	t.Run("synth-0.6b", func(t *testing.T) { batchHidden(t, synthModel(t, "0.6b")) })
}

// hiddenCosine is the cosine similarity the GPU's hidden rows keep to the
// CPU's: the GPU multiplies Q8_0 weights by 8-bit activations.
const hiddenCosine = 0.999

func batchHidden(t *testing.T, m *qwen3.Model) {
	lens := []int{1, 5, 33, 100, 129}
	const bs = 16
	md := newModel(t, m, Options{MaxLen: 512})
	fill := func(b *batch.Batch, hidden bool) {
		b.Reset()
		next := int32(0)
		for i, n := range append(lens, 40) {
			tab := make([]int32, (n+bs-1)/bs)
			for j := range tab {
				tab[j] = next
				next++
			}
			s := b.AddSeq(tab)
			p := randomPrompt(uint64(300+i), n, m.Config.Vocab)
			switch {
			case i == len(lens):
				b.Add(s, p, 0, true) // the chat sequence
			case hidden:
				b.AddHidden(s, p, 0)
			default:
				b.Add(s, p, 0, false)
			}
		}
	}
	var b batch.Batch
	fill(&b, true)
	blocks := 0
	for _, tab := range b.Tables {
		blocks += len(tab)
	}
	cpu, err := forward.NewBatched(m, newParScalar(), 512, blocks, bs, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	if err := cpu.Forward(&b); err != nil {
		t.Fatal(err)
	}
	br := newBatchRunner(t, md, blocks+1, bs)
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i := range lens {
		got, err := br.Hidden(i)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := cpu.Hidden(i)
		c := cosine32(got, want)
		worst = min(worst, c)
		if c < hiddenCosine || math.IsNaN(c) {
			t.Errorf("sequence %d (%d tokens): cosine similarity %.6f to the CPU's hidden state", i, lens[i], c)
		}
	}
	t.Logf("lowest cosine similarity to the CPU: %.7f", worst)
	if _, err := br.Hidden(len(lens)); err == nil {
		t.Error("a hidden row past the batch's")
	}
	mixed := batchLogits(t, br, 0)
	fill(&b, false)
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	plain := batchLogits(t, br, 0)
	if err := floatbits.Check(mixed, plain); err != nil {
		t.Fatalf("the chat output's logits beside hidden rows against without: %v", err)
	}
	if _, err := br.Hidden(0); err == nil {
		t.Error("a hidden row after a batch without any")
	}
}

func cosine32(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}
