package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"inferno/batch"
	"inferno/engine"
	"inferno/placement"
	"inferno/sampling"
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
	// local holds the sequences' window-pool tables (nil: tables): for a
	// model with sliding-window layers in a pool smaller than the main
	// one, each sequence a ring of that pool's blocks, as engine.Single.
	local [][]int32
	b     batch.Batch

	// Sampling (nil: greedy, the runner's argmax): per sequence a
	// Sampler, as the server keeps; on a DeviceSampler runner that
	// samples under the parameters, the rows it draws from.
	sp       *sampling.Params
	samplers []*sampling.Sampler
	ds       engine.DeviceSampler
	rows     []sampling.Row
}

// newBatchBencher opens a batched runner on be with blocks for par
// sequences of p+n positions; sp (nil: greedy) samples their tokens.
func newBatchBencher(be *placement.Backend, vocab, par, p, n int, sp *sampling.Params) (*batchBencher, error) {
	bs := be.DefaultBlockSize()
	per := (p + n + bs - 1) / bs
	br, err := be.NewBatchRunner(placement.BatchConfig{BlockSize: bs, Blocks: par * per, Sequences: par})
	if err != nil {
		return nil, err
	}
	if p+n > br.MaxLen() {
		br.Close()
		return nil, fmt.Errorf("%d prompt and %d generated tokens exceed the context of %d (raise --ctx)", p, n, br.MaxLen())
	}
	bb := &batchBencher{br: br, rng: rand.New(rand.NewPCG(1, 2)), vocab: vocab}
	if sp != nil && !(sp.Greedy() && !sp.Logprobs) {
		bb.sp = sp
		if ds, ok := br.(engine.DeviceSampler); ok && ds.CanSample(*sp) {
			bb.ds = ds
			bb.rows = make([]sampling.Row, par)
		}
	}
	for s := range par {
		t := make([]int32, per)
		for i := range t {
			t[i] = int32(s*per + i)
		}
		bb.tables = append(bb.tables, t)
	}
	if wr, ok := br.(engine.WindowRunner); ok {
		if lb, w := wr.WindowPool(); lb > 0 && lb < br.Blocks() {
			// A pass of up to benchBatchTokens positions a sequence reads
			// and writes at most this many of its ring's blocks.
			ring := lb / par
			if need := (benchBatchTokens+w-2)/bs + 2; ring < need {
				br.Close()
				return nil, fmt.Errorf("a window pool of %d blocks gives %d sequences %d blocks each, fewer than the %d a pass needs", lb, par, ring, need)
			}
			for s := range par {
				t := make([]int32, per)
				for i := range t {
					t[i] = int32(s*ring + i%ring)
				}
				bb.local = append(bb.local, t)
			}
		}
	}
	return bb, nil
}

// addSeq adds bench sequence s to the batch.
func (bb *batchBencher) addSeq(s int) int {
	if bb.local != nil {
		return bb.b.AddWindowSeq(bb.tables[s], bb.local[s])
	}
	return bb.b.AddSeq(bb.tables[s])
}

// run returns prompt and decode tokens per second, all sequences
// together, for one repetition.
func (bb *batchBencher) run(p, n int) (pp, tg float64, err error) {
	par := len(bb.tables)
	next := make([]int32, par)
	if err := bb.newSamplers(); err != nil {
		return 0, 0, err
	}
	defer bb.releaseSamplers()
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
				bb.b.Add(bb.addSeq(s), prompt[off:end], off, end == p)
				in = append(in, s)
				if bb.sp != nil {
					bb.samplers[s].SetPrompt(prompt)
				}
			}
			s++
		}
		seqOf := func(i int) int { return in[bb.b.Seq[bb.b.Outputs[i]]] }
		if err := bb.setRows(seqOf, 0); err != nil {
			return 0, 0, err
		}
		if err := bb.forward(); err != nil {
			return 0, 0, err
		}
		for i := range bb.b.Outputs {
			id, err := bb.pick(i, seqOf(i))
			if err != nil {
				return 0, 0, err
			}
			next[seqOf(i)] = id
		}
	}
	pp = float64(par*p) / time.Since(start).Seconds()
	start = time.Now()
	for step := range n {
		bb.b.Reset()
		for s := range par {
			bb.b.Add(bb.addSeq(s), next[s:s+1], p+step, true)
		}
		if err := bb.setRows(func(i int) int { return i }, step+1); err != nil {
			return 0, 0, err
		}
		if err := bb.forward(); err != nil {
			return 0, 0, err
		}
		if err := bb.pickAll(next); err != nil {
			return 0, 0, err
		}
	}
	tg = float64(par*n) / time.Since(start).Seconds()
	return pp, tg, nil
}

func (bb *batchBencher) forward() error { return bb.br.Forward(&bb.b) }

// newSamplers gives every sequence a Sampler under bb.sp (seeded with the
// seed plus the sequence's number when a seed is given).
func (bb *batchBencher) newSamplers() error {
	if bb.sp == nil {
		return nil
	}
	bb.samplers = bb.samplers[:0]
	for s := range bb.tables {
		p := *bb.sp
		if p.HasSeed {
			p.Seed += uint64(s)
		}
		smp, err := sampling.New(p, bb.vocab)
		if err != nil {
			return err
		}
		bb.samplers = append(bb.samplers, smp)
	}
	return nil
}

func (bb *batchBencher) releaseSamplers() {
	for _, smp := range bb.samplers {
		smp.Release()
	}
	bb.samplers = bb.samplers[:0]
}

// setRows hands a DeviceSampler the rows of the next forward pass's
// outputs: output i is sequence seqOf(i)'s token number index.
func (bb *batchBencher) setRows(seqOf func(int) int, index int) error {
	if bb.ds == nil {
		return nil
	}
	n := len(bb.b.Outputs)
	for i := range n {
		smp := bb.samplers[seqOf(i)]
		r := &bb.rows[i]
		*r = sampling.Row{On: true, Params: *bb.sp, Seed: smp.Seed(), Index: index, Patches: smp.Patches(r.Patches)}
	}
	return bb.ds.SetSamples(bb.rows[:n])
}

// pickAll sets next[s] to the token of output s, sequence s, for every
// sequence: on a runner that leaves the picks to the host (no
// engine.DeviceSampler: its argmax or a sampler reads the whole
// vocabulary), on up to GOMAXPROCS goroutines, as the server's scheduler
// picks (each sequence its own sampler, so the tokens are those of
// picking one by one).
func (bb *batchBencher) pickAll(next []int32) error {
	par := len(next)
	w := min(runtime.GOMAXPROCS(0), par)
	if _, dev := bb.br.(engine.DeviceSampler); dev || w < 2 {
		for s := range par {
			var err error
			if next[s], err = bb.pick(s, s); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, w)
	var wg sync.WaitGroup
	for i := range w {
		wg.Go(func() {
			for s := i * par / w; s < (i+1)*par/w && errs[i] == nil; s++ {
				next[s], errs[i] = bb.pick(s, s)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pick returns the token of output i, sequence s: the argmax, the
// runner's own draw, or the Sampler's from the logits.
func (bb *batchBencher) pick(i, s int) (int32, error) {
	if bb.sp == nil {
		return bb.br.Greedy(i)
	}
	var tok sampling.Token
	var err error
	if bb.ds != nil {
		tok, err = bb.ds.Sampled(i)
	}
	if bb.ds == nil || errors.Is(err, sampling.ErrNotDrawn) {
		var logits []float32
		if logits, err = bb.br.Logits(i); err == nil {
			tok, err = bb.samplers[s].Sample(logits)
		}
	}
	if err != nil {
		return 0, err
	}
	bb.samplers[s].Accept(tok.ID)
	return tok.ID, nil
}

func (bb *batchBencher) close() { bb.br.Close() }
