package cuda

// The batched decode benchmark (llama-batched-bench's S_TG on synth's 0.6B
// model) and the batched prefill at depth.

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"inferno/batch"
	"inferno/engine"
)

// TestBatchBench prints aggregate decode speed on synth's 0.6B model
// (Qwen3-0.6B shapes, Q8_0) for batches of B sequences with 128-token
// prompts, 128 decode steps (as llama-batched-bench's S_TG), and the
// prefill speed of a 512-token chunk after 0 and 4,096 tokens of context:
//
//	INFERNO_CUDA_BENCH=1 ./cuda.test -test.run TestBatchBench -test.v
//
// INFERNO_CUDA_BATCH_SWEEP="mm=64;cb=0,ahead=0" also times each listed
// tuning (see INFERNO_CUDA_BATCH) at B = 1, 2, 4, 8, 16, 64 and 256 and
// B = 1 after a 4,096-token prompt (64 steps).
func TestBatchBench(t *testing.T) {
	if os.Getenv("INFERNO_CUDA_BENCH") == "" {
		t.Skip("set INFERNO_CUDA_BENCH=1 to run the CUDA benchmarks")
	}
	requireGPU(t)
	m := synthModel(t, "0.6b")
	r := newModel(t, m, Options{MaxLen: 4096 + 1024})
	one := newSingle(t, r) // a sequence as the commands run one
	tg(t, one, 0, 16, 1)
	single0 := tg(t, one, 0, 128, 3)
	single := tg(t, one, 128, 128, 3)
	t.Logf("one sequence (engine.Single): tg128 %.1f tok/s; after a 128-token prompt %.1f tok/s", 1/single0.Seconds(), 1/single.Seconds())
	one.Reset()
	if err := one.Forward(randomPrompt(5, 128, r.cfg.Vocab)); err != nil {
		t.Fatal(err)
	}
	if err := one.Forward([]int32{5}); err != nil {
		t.Fatal(err)
	}
	logProfile(t, "one sequence (engine.Single), decode step at context 129", func() ([]engine.OpStats, float64, error) { return one.Profile(20) })
	const bs = 16
	br := newBatchRunner(t, r, 256*256/bs+(4096+1024)/bs+64, bs)
	var rows []string
	tps, _ := batchDecode(t, br, 1, 1, 128)
	rows = append(rows, fmt.Sprintf("B=1 from a 1-token prompt: %.1f tok/s (engine.Single tg128: %.1f, after 128: %.1f)", tps, 1/single0.Seconds(), 1/single.Seconds()))
	for _, B := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256} {
		st0 := br.Stats()
		tps, pre := batchDecode(t, br, B, 128, 128)
		st := br.Stats()
		rows = append(rows, fmt.Sprintf("B=%-4d S_TG %9.1f tok/s  (%.2f ms/step; prompts %.0f tok/s; lookahead %d taken, %d discarded)",
			B, tps, 1000*float64(B)/tps, pre, st.LookaheadHits-st0.LookaheadHits, st.LookaheadMisses-st0.LookaheadMisses))
		t.Log(rows[len(rows)-1])
		if B == 1 || B == 8 || B == 64 || B == 256 {
			logProfile(t, fmt.Sprintf("batch decode step of %d at context ~256", B), func() ([]engine.OpStats, float64, error) { return br.Profile(B, 5) })
		}
	}
	tps, _ = batchDecode(t, br, 1, 4096, 64)
	rows = append(rows, fmt.Sprintf("B=1 after a 4096-token prompt: %.1f tok/s (64 steps)", tps))
	logProfile(t, "batch decode step of 1 at context ~4160", func() ([]engine.OpStats, float64, error) { return br.Profile(1, 5) })
	pp0, pp4k := batchPrefill(t, br, 0), batchPrefill(t, br, 4096)
	rows = append(rows, fmt.Sprintf("pp512 %.0f tok/s, pp512 @ d4096 %.0f tok/s", pp0, pp4k))
	if sweep := os.Getenv("INFERNO_CUDA_BATCH_SWEEP"); sweep != "" {
		for _, tu := range strings.Split(sweep, ";") {
			old := os.Getenv("INFERNO_CUDA_BATCH")
			os.Setenv("INFERNO_CUDA_BATCH", tu)
			bs2, err := r.NewBatchRunner(256*256/bs+(4096+1024)/bs+64, bs)
			os.Setenv("INFERNO_CUDA_BATCH", old)
			if err != nil {
				t.Logf("sweep %q: %v", tu, err)
				continue
			}
			var s []string
			for _, B := range []int{1, 2, 4, 8, 16, 64, 256} {
				tps, _ := batchDecode(t, bs2, B, 128, 128)
				s = append(s, fmt.Sprintf("B=%d %.0f", B, tps))
			}
			tps, _ := batchDecode(t, bs2, 1, 4096, 64)
			s = append(s, fmt.Sprintf("B=1@d4096 %.0f", tps))
			rows = append(rows, fmt.Sprintf("sweep %-24q %s", tu, strings.Join(s, ", ")))
			t.Log(rows[len(rows)-1])
			bs2.Close()
		}
	}
	fmt.Println("\nbatched decode, synth 0.6B Q8_0, 128-token prompts, 128 steps:\n" + strings.Join(rows, "\n"))
}

// logProfile logs a per-kernel profile.
func logProfile(t *testing.T, what string, prof func() ([]engine.OpStats, float64, error)) {
	t.Helper()
	p, total, err := prof()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, profiled with events: %.1f us\n", what, total)
	for _, k := range p {
		us := k.Total.Seconds() * 1e6
		fmt.Fprintf(&b, "  %-26s %4d calls %8.1f us %5.1f%%\n", k.Name, k.Calls, us, 100*us/total)
	}
	t.Log(b.String())
}

// batchDecode prefills B random prompts of plen tokens (in batches of at
// most MaxBatch tokens, untimed), then times steps greedy decode steps of
// all B together; it returns the aggregate tokens/s of the decode and of
// the prompts.
func batchDecode(t *testing.T, br *BatchRunner, B, plen, steps int) (float64, float64) {
	t.Helper()
	bs := br.BlockSize()
	tabs := make([][]int32, B)
	next := int32(0)
	for i := range tabs {
		n := (plen + steps + 8 + bs - 1) / bs
		for range n {
			tabs[i] = append(tabs[i], next)
			next++
		}
	}
	if int(next) > br.Blocks() {
		t.Fatalf("%d blocks needed, the pool has %d", next, br.Blocks())
	}
	toks := make([]int32, B)
	var b batch.Batch
	start := time.Now()
	if plen > MaxBatch { // one sequence at a time, in chunks
		for i := range B {
			prompt := randomPrompt(uint64(1000+i), plen, br.Vocab())
			for p := 0; p < plen; p += MaxBatch {
				b.Reset()
				n := min(MaxBatch, plen-p)
				b.Add(b.AddSeq(tabs[i]), prompt[p:p+n], p, p+n == plen)
				if err := br.Forward(&b); err != nil {
					t.Fatal(err)
				}
			}
			toks[i], _ = br.Greedy(0)
		}
	}
	per := max(MaxBatch/plen, 1)
	for i0 := 0; i0 < B && plen <= MaxBatch; i0 += per {
		b.Reset()
		for i := i0; i < min(B, i0+per); i++ {
			b.Add(b.AddSeq(tabs[i]), randomPrompt(uint64(1000+i), plen, br.Vocab()), 0, true)
		}
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		for o := range b.Outputs {
			toks[i0+o], _ = br.Greedy(o)
		}
	}
	pre := float64(B*plen) / time.Since(start).Seconds()
	step := func(pos int) {
		b.Reset()
		for i := range B {
			b.Add(b.AddSeq(tabs[i]), toks[i:i+1], pos, true)
		}
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		for i := range B {
			toks[i], _ = br.Greedy(i)
		}
	}
	step(plen) // warm up (the graph capture)
	step(plen + 1)
	start = time.Now()
	for s := range steps {
		step(plen + 2 + s)
	}
	return float64(B*steps) / time.Since(start).Seconds(), pre
}

// batchPrefill times a 512-token chunk of one sequence after depth tokens
// of context (prefilled untimed, in chunks of 1024); median of 3.
func batchPrefill(t *testing.T, br *BatchRunner, depth int) float64 {
	t.Helper()
	bs := br.BlockSize()
	var tab []int32
	for i := range (depth + 512 + bs - 1) / bs {
		tab = append(tab, int32(i))
	}
	var b batch.Batch
	prompt := randomPrompt(77, depth+512, br.Vocab())
	for p := 0; p < depth; p += MaxBatch {
		b.Reset()
		n := min(MaxBatch, depth-p)
		b.Add(b.AddSeq(tab), prompt[p:p+n], p, p+n == depth)
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
	}
	var ds []time.Duration
	for range 4 {
		b.Reset()
		b.Add(b.AddSeq(tab), prompt[depth:], depth, true)
		start := time.Now()
		if err := br.Forward(&b); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	return 512 / median(ds[1:]).Seconds()
}
