package cuda

import (
	"math/rand/v2"
	"slices"
	"testing"

	"inferno/batch"
	"inferno/sampling"
)

// TestBatchMaskedLookahead decodes sequences sampled on the GPU under
// token masks that depend on the token sampled last (as a grammar's do),
// some with patches, on two batch runners, with the lookahead and
// without: the same tokens, each allowed by its mask, and the lookahead
// steps taken (their forward passes queued before the masks were known,
// their sampling launched by the Forward that sets them).
func TestBatchMaskedLookahead(t *testing.T) {
	requireGPU(t)
	m := tinyModel(t)
	r := newModel(t, m, Options{MaxLen: 512})
	const bs, blocks = 16, 128
	la := newBatchRunner(t, r, blocks, bs)
	ref := newBatchRunner(t, r, blocks, bs)
	ref.SetLookahead(false)
	V := m.Config.Vocab
	words := (V + 63) / 64
	rng := rand.New(rand.NewPCG(41, 41))
	alloc := newBlockAlloc(rng, blocks)
	params := []sampling.Params{{Temperature: 1}, {Temperature: 0.6, TopP: 0.95, TopK: 20}, {}, {Temperature: 0.9, MinP: 0.05}, {Temperature: 1}}
	n := len(params)
	tabs := make([][]int32, n)
	lens := make([]int, n)
	next := make([][]int32, n)
	masks := make([][]uint64, n)
	for i := range n {
		next[i] = randomPrompt(uint64(500+i), 5+2*i, V)
		masks[i] = make([]uint64, words)
	}
	// mask allows the ids whose residue mod 3 is the last token's, and a
	// few more; row 3 goes unmasked on even steps, row 4 never has one
	// (its row off: the argmax).
	fill := func(mask []uint64, prev int32, step int) {
		clear(mask)
		for id := int(prev) % 3; id < V; id += 3 {
			mask[id/64] |= 1 << (id % 64)
		}
		id := (int(prev)*7 + step) % V
		mask[id/64] |= 1 << (id % 64)
	}
	for step := range 24 {
		var b batch.Batch
		rows := make([]sampling.Row, n)
		for i := range n {
			tabs[i] = alloc.grow(tabs[i], lens[i]+len(next[i])+40, bs)
			b.Add(b.AddSeq(tabs[i]), next[i], lens[i], true)
			if i == 4 {
				continue
			}
			rows[i] = sampling.Row{On: true, Params: params[i], Seed: uint64(91 + i), Index: step}
			if i == 1 {
				rows[i].Patches = []sampling.Patch{{ID: next[i][len(next[i])-1], Bias: -2}}
			}
			if i != 3 || step%2 == 1 {
				fill(masks[i], next[i][len(next[i])-1], step)
				rows[i].Mask = masks[i]
			}
		}
		var got [2][]int32
		for k, br := range []*BatchRunner{la, ref} {
			if err := br.SetSamples(rows); err != nil {
				t.Fatal(err)
			}
			if err := br.Forward(&b); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for i := range n {
				var id int32
				if rows[i].On {
					tok, err := br.Sampled(i)
					if err != nil {
						t.Fatal(err)
					}
					id = tok.ID
				} else {
					var err error
					if id, err = br.Greedy(i); err != nil {
						t.Fatal(err)
					}
				}
				if mk := rows[i].Mask; mk != nil && mk[id/64]&(1<<(id%64)) == 0 {
					t.Fatalf("step %d, row %d: token %d not in its mask", step, i, id)
				}
				got[k] = append(got[k], id)
			}
		}
		if !slices.Equal(got[0], got[1]) {
			t.Fatalf("step %d: tokens %v with the lookahead, %v without", step, got[0], got[1])
		}
		for i := range n {
			lens[i] += len(next[i])
			next[i] = []int32{got[0][i]}
		}
	}
	st := la.Stats()
	t.Logf("lookahead: %d taken, %d discarded", st.LookaheadHits, st.LookaheadMisses)
	if st.LookaheadHits < 15 {
		t.Errorf("lookahead steps taken %d, want at least 15", st.LookaheadHits)
	}
}
