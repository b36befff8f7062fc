package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"inferno/batch"
	"inferno/engine"
	"inferno/gguf"
	"inferno/sampling"
	"inferno/tokenizer"
)

// nullDevice is a batch runner that computes nothing: its passes sleep
// what they would cost a GPU, it "samples on the device"
// (engine.DeviceSampler: random words) and queues decode steps ahead
// (engine.Lookaheader), so what a Batcher adds is the host's own work:
// reading the tokens, streaming them and building the next batch.
type nullDevice struct {
	vocab, maxLen, bs, blocks int
	nout                      int
	tok                       []int32 // the token drawn for each output
	rows                      []sampling.Row
	logits                    []float32
	rng                       *rand.Rand
	words                     []int32 // the ids drawn from
	// A pass takes base, plus perDecode a decode token and perPrompt a
	// prompt token (slept). With the lookahead on (SetLookahead), a pure
	// decode pass's successor starts on the device as it ends, as the
	// CUDA runner's does: the next Forward sleeps only what is left of
	// it, or, when that Forward brings another batch, waits for the
	// queued step and then runs its own. gap sums the time from the end
	// of each Forward to the start of the next.
	base, perDecode, perPrompt time.Duration
	on, queued                 bool
	queuedCost                 time.Duration
	last                       time.Time
	gap                        time.Duration
	ahead                      int // passes that queued the next ahead
	runs                       []batch.Run
}

func (d *nullDevice) SetLookahead(on bool) { d.on = on }

func (d *nullDevice) cost(b *batch.Batch) time.Duration {
	dec := 0
	d.runs = b.Runs(d.runs)
	for _, r := range d.runs {
		if r.N == 1 {
			dec++
		}
	}
	return d.base + time.Duration(dec)*d.perDecode + time.Duration(b.Len()-dec)*d.perPrompt
}

func (d *nullDevice) Forward(b *batch.Batch) error {
	t := time.Now()
	since := time.Duration(0)
	if !d.last.IsZero() {
		since = t.Sub(d.last)
		d.gap += since
	}
	c := d.cost(b)
	decode := b.Len() == len(b.Tables)
	switch {
	case d.queued && decode:
		c = max(0, d.queuedCost-since)
	case d.queued:
		c += max(0, d.queuedCost-since)
	}
	time.Sleep(c)
	if d.on && decode {
		d.ahead++
	}
	d.queued = d.on && decode
	d.queuedCost = d.cost(b)
	defer func() { d.last = time.Now() }()
	d.nout = len(b.Outputs)
	for len(d.tok) < d.nout {
		d.tok = append(d.tok, 0)
	}
	for i := range d.nout {
		d.tok[i] = d.words[d.rng.IntN(len(d.words))]
	}
	return nil
}

func (d *nullDevice) Logits(i int) ([]float32, error) { return d.logits, nil }
func (d *nullDevice) Greedy(i int) (int32, error)     { return d.tok[i], nil }
func (d *nullDevice) CopyBlock(dst, src int32) error  { return nil }
func (d *nullDevice) Vocab() int                      { return d.vocab }
func (d *nullDevice) MaxLen() int                     { return d.maxLen }
func (d *nullDevice) BlockSize() int                  { return d.bs }
func (d *nullDevice) Blocks() int                     { return d.blocks }
func (d *nullDevice) Backend() string                 { return "null" }
func (d *nullDevice) Close() error                    { return nil }

func (d *nullDevice) CanSample(sampling.Params) bool { return true }
func (d *nullDevice) SetSamples(rows []sampling.Row) error {
	d.rows = append(d.rows[:0], rows...)
	return nil
}
func (d *nullDevice) Sampled(i int) (sampling.Token, error) {
	return sampling.Token{ID: d.tok[i]}, nil
}

// BenchmarkHostStep measures what a Batcher's steps cost the host (the
// scheduler's goroutine and the clients reading their streams) on a
// nullDevice that sleeps the costs of the 0.6B on an H100, with the
// Qwen3 tokenizer decoding the text: clients streaming requests of
// 128-token prompts and 128 sampled tokens, each sending its next request
// when one ends, as `loadgen -clients N -prompt 128 -max-tokens 128`
// does. ns-between/pass is the host's time from the end of a pass to the
// start of the next (the GPU's idle time where no step was queued
// ahead), ahead/pass the share of passes that queued the next, tok/s the
// generated tokens a second.
//
//	go test ./scheduler -run '^$' -bench HostStep -benchtime 2000x
func BenchmarkHostStep(b *testing.B) {
	tk := qwen3Tokenizer(b)
	for _, clients := range []int{64, 256} {
		b.Run(fmt.Sprintf("clients%d", clients), func(b *testing.B) {
			words := wordIDs(tk, 4096)
			d := &nullDevice{vocab: tk.VocabSize(), maxLen: 4096, bs: 16, blocks: clients * 20, rng: rand.New(rand.NewPCG(1, 2)), words: words}
			d.logits = make([]float32, d.vocab)
			// The 0.6B on an H100: a decode step of 256 sequences 5.9 ms,
			// a prompt token riding in one 4.5 us (docs/PERF.md).
			d.base, d.perDecode, d.perPrompt = 1500*time.Microsecond, 17*time.Microsecond, 4500*time.Nanosecond
			var passes, tokens, gap, ahead atomic.Int64
			s, err := NewBatcher(d, Config{Parallel: clients, BatchTokens: 1024, Prefills: 8, Queue: clients, PrefixCache: true, Tokenizer: tk,
				OnStep: func(StepInfo) { passes.Add(1); gap.Store(int64(d.gap)); ahead.Store(int64(d.ahead)) }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for c := range clients {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(c), 7))
					for ctx.Err() == nil {
						p := make([]int32, 128)
						for i := range p {
							p[i] = words[rng.IntN(len(words))]
						}
						st, err := s.Submit(ctx, engine.Request{Prompt: p, MaxTokens: 128, IgnoreEOS: true,
							Sampling: sampling.Params{Temperature: 1, Seed: rng.Uint64(), HasSeed: true}})
						if err != nil {
							if ctx.Err() == nil {
								b.Error(err)
							}
							return
						}
						for {
							ev, ok := st.Next(ctx)
							if !ok {
								break
							}
							if ev.HasToken {
								tokens.Add(1)
							}
						}
					}
				})
			}
			// Warm up until every client runs, then count b.N passes.
			for passes.Load() < 300 {
				time.Sleep(time.Millisecond)
			}
			p0, t0, g0, a0 := passes.Load(), tokens.Load(), gap.Load(), ahead.Load()
			b.ResetTimer()
			for passes.Load()-p0 < int64(b.N) {
				time.Sleep(100 * time.Microsecond)
			}
			b.StopTimer()
			n, toks, g, a := passes.Load()-p0, tokens.Load()-t0, gap.Load()-g0, ahead.Load()-a0
			cancel()
			wg.Wait()
			b.ReportMetric(float64(g)/float64(n), "ns-between/pass")
			b.ReportMetric(float64(toks)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(float64(toks)/float64(n), "tokens/pass")
			b.ReportMetric(float64(a)/float64(n), "ahead/pass")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// qwen3Tokenizer returns the tokenizer of the repository's tiny golden
// model (Qwen3's vocabulary).
func qwen3Tokenizer(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	f, err := gguf.Open(filepath.Join("..", "testdata", "golden", "tiny-q8_0.gguf"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	tk, err := tokenizer.FromGGUF(f)
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}

// wordIDs returns up to n ids of the tokenizer that decode to plain
// lower-case words (no special tokens).
func wordIDs(tk *tokenizer.Tokenizer, n int) []int32 {
	var ids []int32
	for id := int32(1000); id < int32(tk.VocabSize()) && len(ids) < n; id++ {
		s := tk.Decode([]int32{id})
		ok := len(s) > 1
		for i := 0; i < len(s) && ok; i++ {
			c := s[i]
			ok = c == ' ' || c >= 'a' && c <= 'z'
		}
		if ok {
			ids = append(ids, id)
		}
	}
	return ids
}
