package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"inferno/batch"
	"inferno/engine"
	"inferno/runner"
)

// benchBatchTokens is the most tokens one prefill pass of the batched
// bench runs (several sequences' prompts share a pass).
const benchBatchTokens = 512

// batchBencher measures a batched runner as llama.cpp's
// llama-batched-bench does: B sequences prefill p random tokens each,
// then decode n tokens together, one forward pass per step over all B.
type batchBencher struct {
	br     engine.BatchRunner
	rng    *rand.Rand
	vocab  int
	tables [][]int32
	b      batch.Batch
}

// newBatchBencher opens a batched runner on be with blocks for par
// sequences of p+n positions.
func newBatchBencher(be *runner.Backend, vocab, par, p, n int) (*batchBencher, error) {
	bs := runner.DefaultBlockSize
	per := (p + n + bs - 1) / bs
	br, err := be.NewBatchRunner(runner.BatchConfig{BlockSize: bs, Blocks: par * per})
	if err != nil {
		return nil, err
	}
	if p+n > br.MaxLen() {
		br.Close()
		return nil, fmt.Errorf("%d prompt and %d generated tokens exceed the context of %d (raise --ctx)", p, n, br.MaxLen())
	}
	bb := &batchBencher{br: br, rng: rand.New(rand.NewPCG(1, 2)), vocab: vocab}
	for s := range par {
		t := make([]int32, per)
		for i := range t {
			t[i] = int32(s*per + i)
		}
		bb.tables = append(bb.tables, t)
	}
	return bb, nil
}

// run returns prompt and decode tokens per second, all sequences
// together, for one repetition.
func (bb *batchBencher) run(p, n int) (pp, tg float64, err error) {
	par := len(bb.tables)
	next := make([]int32, par)
	start := time.Now()
	// Prefill: whole prompts, as many as fit a pass; a prompt longer
	// than a pass runs in chunks.
	var in []int // the bench's sequence of each of the pass's sequences
	for s := 0; s < par; {
		bb.b.Reset()
		in = in[:0]
		for s < par && (bb.b.Len() == 0 || bb.b.Len()+p <= benchBatchTokens) {
			prompt := make([]int32, p)
			for i := range prompt {
				prompt[i] = int32(bb.rng.IntN(bb.vocab))
			}
			for off := 0; off < p; off += benchBatchTokens {
				if off > 0 {
					if err := bb.forward(); err != nil {
						return 0, 0, err
					}
					bb.b.Reset()
					in = in[:0]
				}
				end := min(p, off+benchBatchTokens)
				bb.b.Add(bb.b.AddSeq(bb.tables[s]), prompt[off:end], off, end == p)
				in = append(in, s)
			}
			s++
		}
		if err := bb.forward(); err != nil {
			return 0, 0, err
		}
		for i := range bb.b.Outputs {
			id, err := bb.br.Greedy(i)
			if err != nil {
				return 0, 0, err
			}
			next[in[bb.b.Seq[bb.b.Outputs[i]]]] = id
		}
	}
	pp = float64(par*p) / time.Since(start).Seconds()
	start = time.Now()
	for step := range n {
		bb.b.Reset()
		for s := range par {
			bb.b.Add(bb.b.AddSeq(bb.tables[s]), next[s:s+1], p+step, true)
		}
		if err := bb.forward(); err != nil {
			return 0, 0, err
		}
		for s := range par {
			if next[s], err = bb.br.Greedy(s); err != nil {
				return 0, 0, err
			}
		}
	}
	tg = float64(par*n) / time.Since(start).Seconds()
	return pp, tg, nil
}

func (bb *batchBencher) forward() error { return bb.br.Forward(&bb.b) }

func (bb *batchBencher) close() { bb.br.Close() }
