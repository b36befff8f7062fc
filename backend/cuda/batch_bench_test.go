package cuda

// The batch runner's benchmarks (bench_test.go tells how to run them):
// batched decode as llama-batched-bench's S_TG, greedy and sampled on the
// GPU, and a prompt chunk at depth.

import (
	"fmt"
	"testing"
	"time"

	"inferno/arch"
	"inferno/batch"
	"inferno/sampling"
)

// batchVariants are BenchmarkBatchDecode's: the defaults and one choice
// changed each (tuning.go's batchTuning and tuning measured them): the
// block formats' batches on mmh rather than mmq, no cluster attention, no
// lookahead, no programmatic dependent launch, mmv_q8 on one block a row
// tile, mmv_q8 on quant_act's planes, the inputs read zero-copy, and the
// expert products of a mixture on one block an expert, or two taking
// pairs eight at a time.
var batchVariants = []variant{
	{name: "default"},
	{name: "mmh", set: setTune(func(t *tuning) { t.mmq, t.mmq8 = 0, 0 })},
	{name: "nocluster", set: setBatch(func(t *batchTuning) { t.cb = 0 })},
	{name: "noahead", runner: func(br *BatchRunner) { br.SetLookahead(false) }},
	{name: "nopdl", set: setBatch(func(t *batchTuning) { t.pdl, t.mvpdl = false, false })},
	{name: "ny1", set: setBatch(func(t *batchTuning) { t.ny = 1 })},
	{name: "planes", set: setBatch(func(t *batchTuning) { t.xl = false })},
	{name: "zc", set: setBatch(func(t *batchTuning) { t.zc = 128 })},
	{name: "moe-b1", set: setMoE(func(t *tuning) { t.moeB = 1 })},
	{name: "moe-b2", set: setMoE(func(t *tuning) { t.moeB, t.moeNT = 2, 0 })},
}

// setMoE is setTune for a mixture of experts; it skips other models.
func setMoE(f func(*tuning)) func(*testing.B, *arch.Loaded, *Options) {
	return func(b *testing.B, m *arch.Loaded, o *Options) {
		if m.Config.MoE.Experts == 0 {
			b.Skip("not a mixture of experts")
		}
		o.tune = f
	}
}

// batchSizes are the sequences BenchmarkBatchDecode decodes together.
var batchSizes = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

// BenchmarkBatchDecode measures the aggregate decode of B sequences on a
// BatchRunner after 128-token prompts, 128 greedy steps (as
// llama-batched-bench's S_TG), and of one sequence after 4,096 tokens
// (B=1-d4096), under each of batchVariants: tok/s of all B together and
// ms/step.
func BenchmarkBatchDecode(b *testing.B) {
	m := benchModel(b)
	const plen, steps = 128, 128
	blocks := batchSizes[len(batchSizes)-1]*((plen+steps+8+15)/16) + (4096+steps+8+15)/16 + 64
	for _, v := range batchVariants {
		b.Run(v.name, func(b *testing.B) {
			_, br := loadVariant(b, m, v, Options{MaxLen: 4096 + 1024}, blocks)
			for _, B := range batchSizes {
				b.Run(fmt.Sprintf("B=%d", B), func(b *testing.B) { benchDecode(b, br, B, plen, steps, nil) })
			}
			b.Run("B=1-d4096", func(b *testing.B) { benchDecode(b, br, 1, 4096, steps, nil) })
		})
	}
}

// benchDecode is a BenchmarkBatchDecode case: B sequences after prompts
// of plen tokens (untimed), then steps decode steps of all B together,
// their tokens greedy (p nil) or sampled on the GPU under p.
func benchDecode(b *testing.B, br *BatchRunner, B, plen, steps int, p *sampling.Params) {
	var d time.Duration
	for b.Loop() {
		b.StopTimer()
		step := decoding(b, br, B, plen, steps+2, p)
		step(2) // warm up: the graph capture
		b.StartTimer()
		start := time.Now()
		step(steps)
		d += time.Since(start)
	}
	b.ReportMetric(float64(B*steps*b.N)/d.Seconds(), "tok/s")
	b.ReportMetric(d.Seconds()*1e3/float64(steps*b.N), "ms/step")
}

// decoding prefills B random prompts of plen tokens on br (in batches of
// at most MaxBatch tokens; a longer one alone, in chunks) and returns a
// function that runs n decode steps of all B together, at most steps in
// all: each row's token greedy (p nil: the argmax) or sampled on the GPU
// under p.
func decoding(tb testing.TB, br *BatchRunner, B, plen, steps int, p *sampling.Params) func(n int) {
	tb.Helper()
	bs := br.BlockSize()
	tabs := make([][]int32, B)
	next := int32(0)
	for i := range tabs {
		for range (plen + steps + 8 + bs - 1) / bs {
			tabs[i] = append(tabs[i], next)
			next++
		}
	}
	if int(next) > br.Blocks() {
		tb.Fatalf("%d blocks needed, the pool has %d", next, br.Blocks())
	}
	toks := make([]int32, B)
	rows := make([]sampling.Row, B)
	var b batch.Batch
	index := 0 // the sampled rows' step
	forward := func(n int) {
		if p != nil && n > 0 {
			for i := range n {
				rows[i] = sampling.Row{On: true, Params: *p, Seed: uint64(i + 1), Index: index}
			}
			if err := br.SetSamples(rows[:n]); err != nil {
				tb.Fatal(err)
			}
		}
		index++
		if err := br.Forward(&b); err != nil {
			tb.Fatal(err)
		}
	}
	read := func(o int) int32 {
		if p == nil {
			id, err := br.Greedy(o)
			if err != nil {
				tb.Fatal(err)
			}
			return id
		}
		tok, err := br.Sampled(o)
		if err != nil {
			tb.Fatal(err)
		}
		return tok.ID
	}
	if plen > MaxBatch { // one sequence at a time, in chunks
		for i := range B {
			prompt := randomPrompt(uint64(1000+i), plen, br.Vocab())
			for at := 0; at < plen; at += MaxBatch {
				b.Reset()
				n := min(MaxBatch, plen-at)
				b.Add(b.AddSeq(tabs[i]), prompt[at:at+n], at, at+n == plen)
				forward(len(b.Outputs))
			}
			toks[i] = read(0)
		}
	}
	per := max(MaxBatch/plen, 1)
	for i0 := 0; i0 < B && plen <= MaxBatch; i0 += per {
		b.Reset()
		for i := i0; i < min(B, i0+per); i++ {
			b.Add(b.AddSeq(tabs[i]), randomPrompt(uint64(1000+i), plen, br.Vocab()), 0, true)
		}
		forward(len(b.Outputs))
		for o := range b.Outputs {
			toks[i0+o] = read(o)
		}
	}
	pos := plen
	return func(n int) {
		if pos+n > plen+steps {
			tb.Fatalf("decode steps past the %d the tables hold", steps)
		}
		for range n {
			b.Reset()
			for i := range B {
				b.Add(b.AddSeq(tabs[i]), toks[i:i+1], pos, true)
			}
			forward(B)
			for i := range B {
				toks[i] = read(i)
			}
			pos++
		}
	}
}

// BenchmarkSampledDecode measures BenchmarkBatchDecode's decode (128
// steps after 128-token prompts) at B = 1, 8, 64 and 256 greedy, at
// temperature 1 (t1) and under Qwen3's settings (q3: 0.6, top_p 0.95,
// top_k 20), sampled on the GPU; and the sampler's slower ways, which
// the fast paths replaced (devSampler's old, apart, block).
func BenchmarkSampledDecode(b *testing.B) {
	m := benchModel(b)
	md := newModel(b, m, Options{MaxLen: 2048})
	br := newBatchRunner(b, md, 256*18+64, 16)
	t1 := &sampling.Params{Temperature: 1}
	q3 := &sampling.Params{Temperature: 0.6, TopP: 0.95, TopK: 20}
	for _, B := range []int{1, 8, 64, 256} {
		for _, s := range []struct {
			name string
			p    *sampling.Params
			mode string
		}{{"greedy", nil, ""}, {"t1", t1, ""}, {"t1-old", t1, "old"}, {"q3", q3, ""}, {"q3-old", q3, "old"}, {"q3-apart", q3, "apart"}, {"q3-block", q3, "block"}} {
			b.Run(fmt.Sprintf("B=%d/%s", B, s.name), func(b *testing.B) {
				sm := br.sampler()
				sm.old, sm.apart, sm.block = s.mode == "old", s.mode == "apart", s.mode == "block"
				defer func() { sm.old, sm.apart, sm.block = false, false, false }()
				benchDecode(b, br, B, 128, 128, s.p)
			})
		}
	}
}

// BenchmarkBatchPrefill measures a 512-token prompt chunk of one sequence
// on a BatchRunner after 0 and 4,096 tokens of context (prefilled
// untimed, in chunks of MaxBatch): tok/s.
func BenchmarkBatchPrefill(b *testing.B) {
	m := benchModel(b)
	md := newModel(b, m, Options{MaxLen: 4096 + 1024})
	br := newBatchRunner(b, md, (4096+1024)/16, 16)
	for _, depth := range []int{0, 4096} {
		b.Run(fmt.Sprintf("pp512-d%d", depth), func(b *testing.B) {
			var tab []int32
			for i := range (depth + 512 + 15) / 16 {
				tab = append(tab, int32(i))
			}
			var bt batch.Batch
			prompt := randomPrompt(77, depth+512, br.Vocab())
			for at := 0; at < depth; at += MaxBatch {
				bt.Reset()
				n := min(MaxBatch, depth-at)
				bt.Add(bt.AddSeq(tab), prompt[at:at+n], at, at+n == depth)
				if err := br.Forward(&bt); err != nil {
					b.Fatal(err)
				}
			}
			chunk := func() {
				bt.Reset()
				bt.Add(bt.AddSeq(tab), prompt[depth:], depth, true)
				if err := br.Forward(&bt); err != nil {
					b.Fatal(err)
				}
				if _, err := br.Greedy(0); err != nil {
					b.Fatal(err)
				}
			}
			chunk() // warm up
			for b.Loop() {
				chunk()
			}
			b.ReportMetric(float64(512*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
