package qwen3_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"inferno/backend"
	"inferno/backend/forward"
	"inferno/backend/scalar"
	"inferno/batch"
	"inferno/internal/floatbits"
	"inferno/kvcache"
	"inferno/model/qwen3"
)

// batchSeq is one sequence of the batched test: its prompt, the tokens it
// fed, and the logits of each of its outputs.
type batchSeq struct {
	prompt []int32
	fed    int     // tokens run so far
	ids    []int32 // every token run, in order
	table  []int32
	start  int         // the step it joins at
	outs   [][]float32 // logits after the prompt and after each decode step
	outPos []int       // positions whose logits outs holds (the token run there)
}

// allBackends are every CPU backend, the scalar reference included.
func allBackends() map[string]func() backend.Ops {
	b := fastBackends()
	b["scalar"] = func() backend.Ops { return scalar.NewScalar() }
	return b
}

// TestBatchedEqualsAlone runs 8 sequences of different prompt lengths,
// joining at different steps, through one Batched runner (prompt chunks
// and decode tokens of other sequences in the same passes, blocks
// scattered over the pool), and checks every output's logits are bitwise
// those of the sequence run alone on a basic cache. With -short, the
// scalar backend (the slow one) runs 4 sequences of 6 steps.
func TestBatchedEqualsAlone(t *testing.T) {
	t.Parallel()
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	backends := allBackends()
	for _, be := range sortedKeys(backends) {
		for _, kv := range []kvcache.Type{kvcache.F32, kvcache.F16} {
			t.Run(fmt.Sprintf("%s/%v", be, kv), func(t *testing.T) {
				ops := backends[be]()
				if c, ok := ops.(interface{ Close() }); ok {
					defer c.Close()
				}
				n, steps := 8, 12
				if testing.Short() && be == "scalar" {
					n, steps = 4, 6
				}
				seqs := runBatched(t, m, ops, kv, 16, n, steps)
				for i, s := range seqs {
					alone := newSingle(t, m, ops, 0, kv)
					checkAlone(t, i, alone, s)
				}
			})
		}
	}
}

// runBatched runs n sequences through a Batched runner with blocks of bs
// positions, each decoding steps tokens after its prompt, and returns them
// with their outputs.
func runBatched(t *testing.T, m *qwen3.Model, ops backend.Ops, kv kvcache.Type, bs, n, steps int) []*batchSeq {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(bs)))
	vocab := m.Config.Vocab
	const chunk = 13
	var seqs []*batchSeq
	total := 0
	for i := range n {
		s := &batchSeq{prompt: make([]int32, 1+rng.IntN(60)), start: i * 2}
		for j := range s.prompt {
			s.prompt[j] = int32(rng.IntN(vocab))
		}
		total += (len(s.prompt) + steps + bs - 1) / bs
		seqs = append(seqs, s)
	}
	// Scatter the blocks: each sequence gets a random subset of a shuffled pool.
	perm := rng.Perm(total + 3)
	for _, s := range seqs {
		k := (len(s.prompt) + steps + bs - 1) / bs
		for _, b := range perm[:k] {
			s.table = append(s.table, int32(b))
		}
		perm = perm[k:]
	}
	br, err := forward.NewBatched(m, ops, 0, total+3, bs, kv)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	var b batch.Batch
	for step := 0; ; step++ {
		b.Reset()
		var in []*batchSeq
		for _, s := range seqs {
			if step < s.start || len(s.outs) > steps {
				continue
			}
			var ids []int32
			if s.fed < len(s.prompt) {
				ids = s.prompt[s.fed:min(len(s.prompt), s.fed+chunk)]
			} else {
				ids = []int32{s.greedy(len(s.outs) - 1)}
			}
			last := s.fed+len(ids) >= len(s.prompt)
			b.Add(b.AddSeq(s.table), ids, len(s.ids), last)
			in = append(in, s)
			s.ids = append(s.ids, ids...)
			s.fed += len(ids)
		}
		if len(in) == 0 {
			break
		}
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		for o, tok := range b.Outputs {
			s := in[b.Seq[tok]]
			l, err := br.Logits(o)
			if err != nil {
				t.Fatal(err)
			}
			s.outs = append(s.outs, append([]float32(nil), l...))
			s.outPos = append(s.outPos, int(b.Pos[tok]))
		}
	}
	return seqs
}

// greedy is the token with the largest logit of output i.
func (s *batchSeq) greedy(i int) int32 {
	best := 0
	for j, v := range s.outs[i] {
		if v > s.outs[i][best] {
			best = j
		}
	}
	return int32(best)
}

// checkAlone runs s's tokens on r alone (the prompt at once, then one
// token at a time) and compares the logits bitwise.
func checkAlone(t *testing.T, i int, r *single, s *batchSeq) {
	t.Helper()
	if len(s.outs) == 0 {
		t.Fatalf("sequence %d produced no output", i)
	}
	pos := 0
	for k, p := range s.outPos {
		if err := r.Forward(s.ids[pos : p+1]); err != nil {
			t.Fatal(err)
		}
		pos = p + 1
		got, _ := r.Logits()
		if err := floatbits.Check(s.outs[k], got); err != nil {
			t.Fatalf("sequence %d (prompt %d tokens), output %d at position %d: batched differs from alone: %v", i, len(s.prompt), k, p, err)
		}
	}
}

// TestPrefixHitBitwise: a sequence that reuses another's first blocks
// (shared whole, and the partial one copied) gets bitwise the logits of
// computing its whole prompt.
func TestPrefixHitBitwise(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	backends := allBackends()
	for _, be := range sortedKeys(backends) {
		t.Run(be, func(t *testing.T) {
			ops := backends[be]()
			if c, ok := ops.(interface{ Close() }); ok {
				defer c.Close()
			}
			const bs = 16
			rng := rand.New(rand.NewPCG(3, 4))
			a := make([]int32, 50)
			for i := range a {
				a[i] = int32(rng.IntN(m.Config.Vocab))
			}
			// b shares a's first 40 tokens: blocks 0 and 1 whole, 8 rows of block 2.
			bp := append(append([]int32(nil), a[:40]...), 11, 12, 13, 14, 15)
			br, err := forward.NewBatched(m, ops, 0, 16, bs, kvcache.F16)
			if err != nil {
				t.Fatal(err)
			}
			defer br.Close()
			var b batch.Batch
			b.Add(b.AddSeq([]int32{5, 9, 2, 7}), a, 0, true)
			if err := br.Forward(&b); err != nil {
				t.Fatal(err)
			}
			if err := br.CopyBlock(12, 2); err != nil {
				t.Fatal(err)
			}
			b.Reset()
			b.Add(b.AddSeq([]int32{5, 9, 12, 3}), bp[40:], 40, true)
			if err := br.Forward(&b); err != nil {
				t.Fatal(err)
			}
			hit, _ := br.Logits(0)
			hit = append([]float32(nil), hit...)
			b.Reset()
			b.Add(b.AddSeq([]int32{1, 0, 4}), bp, 0, true)
			if err := br.Forward(&b); err != nil {
				t.Fatal(err)
			}
			miss, _ := br.Logits(0)
			if err := floatbits.Check(hit, miss); err != nil {
				t.Fatalf("prefix hit differs from miss: %v", err)
			}
		})
	}
}

// TestBatchedMalformed: a malformed batch is an error, not a panic.
func TestBatchedMalformed(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	br, err := forward.NewBatched(m, scalar.NewScalar(), 64, 4, 16, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	cases := map[string]func(b *batch.Batch){
		"empty":        func(b *batch.Batch) {},
		"bad token":    func(b *batch.Batch) { b.Add(b.AddSeq([]int32{0}), []int32{-1}, 0, true) },
		"past context": func(b *batch.Batch) { b.Add(b.AddSeq([]int32{0, 1, 2, 3}), []int32{1}, 64, true) },
		"short table":  func(b *batch.Batch) { b.Add(b.AddSeq([]int32{0}), []int32{1}, 16, true) },
		"bad block":    func(b *batch.Batch) { b.Add(b.AddSeq([]int32{9}), []int32{1}, 0, true) },
		"split sequence": func(b *batch.Batch) {
			s := b.AddSeq([]int32{0})
			b.Add(s, []int32{1}, 0, false)
			b.Add(b.AddSeq([]int32{1}), []int32{1}, 0, false)
			b.Add(s, []int32{1}, 1, true)
		},
		"gap": func(b *batch.Batch) {
			s := b.AddSeq([]int32{0})
			b.Add(s, []int32{1}, 0, false)
			b.Add(s, []int32{1}, 2, true)
		},
	}
	for _, name := range sortedKeys(cases) {
		var b batch.Batch
		cases[name](&b)
		if err := br.Forward(&b); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := br.Logits(0); err == nil {
			t.Errorf("%s: logits after a failed forward pass", name)
		}
	}
}

// TestBatchedDecodeAllocs: a decode step of 8 sequences allocates nothing.
func TestBatchedDecodeAllocs(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	for _, be := range sortedKeys(fastBackends()) {
		ops := fastBackends()[be]()
		br, err := forward.NewBatched(m, ops, 256, 64, 32, kvcache.F16)
		if err != nil {
			t.Fatal(err)
		}
		var b batch.Batch
		tables := make([][]int32, 8)
		for s := range tables {
			tables[s] = []int32{int32(2 * s), int32(2*s + 1)}
			b.Add(b.AddSeq(tables[s]), []int32{1, 2, 3, 4, 5}, 0, true)
		}
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		pos := 5
		step := []int32{7}
		allocs := testing.AllocsPerRun(20, func() {
			b.Reset()
			for s := range tables {
				b.Add(b.AddSeq(tables[s]), step, pos, true)
			}
			if err := br.Forward(&b); err != nil {
				t.Fatal(err)
			}
			for s := range tables {
				if _, err := br.Greedy(s); err != nil {
					t.Fatal(err)
				}
			}
			pos++
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per batched decode step", be, allocs)
		}
		br.Close()
		if c, ok := ops.(interface{ Close() }); ok {
			c.Close()
		}
	}
}
