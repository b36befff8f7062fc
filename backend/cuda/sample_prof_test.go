package cuda

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"inferno/sampling"
)

// TestSampleProfile measures what sampling on the GPU adds to a decode
// step of synth's 0.6B model, the sampler as it was (INFERNO_CUDA_SAMP=old:
// rows copied apart, the argmax kept, topk_fast's counting bound) against
// its fast paths launched after the step's graph (=apart), with top_k by
// samp_topk's blocks (=block) and as they are by default (captured into
// the graph, samp_topkw), in one process: per bucket B and setting, the
// decode's
// S_TG (128 steps after 128-token prompts, the settings alternated, best
// of two) and, from BatchRunner.Profile (the step's graph and its
// sampling kernels replayed with an event after each), the sampling
// kernels' GPU time:
//
//	INFERNO_CUDA_BENCH=1 INFERNO_CUDA_SAMP_B=1,256 ./cuda.test -test.run TestSampleProfile -test.v
func TestSampleProfile(t *testing.T) {
	if os.Getenv("INFERNO_CUDA_BENCH") == "" {
		t.Skip("set INFERNO_CUDA_BENCH=1 to run the CUDA benchmarks")
	}
	requireGPU(t)
	m := synthModel(t, "0.6b")
	r := newModel(t, m, Options{MaxLen: 2048})
	const bs = 16
	br := newBatchRunner(t, r, 256*18+64, bs)
	bsizes := []int{1, 8, 64, 256}
	if s := os.Getenv("INFERNO_CUDA_SAMP_B"); s != "" {
		bsizes = nil
		for _, f := range strings.Split(s, ",") {
			var b int
			if _, err := fmt.Sscan(f, &b); err != nil {
				t.Fatalf("INFERNO_CUDA_SAMP_B: %v", err)
			}
			bsizes = append(bsizes, b)
		}
	}
	type setting struct {
		name string
		p    *sampling.Params
		mode string // INFERNO_CUDA_SAMP's
	}
	t1 := &sampling.Params{Temperature: 1}
	q3 := &sampling.Params{Temperature: 0.6, TopP: 0.95, TopK: 20}
	settings := []setting{{"greedy", nil, ""}, {"T1 old", t1, "old"}, {"T1 new", t1, ""},
		{"Q3 old", q3, "old"}, {"Q3 apart", q3, "apart"}, {"Q3 block", q3, "block"}, {"Q3 new", q3, ""}}
	use := func(mode string) {
		sm := br.sampler()
		sm.old, sm.apart, sm.block = mode == "old", mode == "apart", mode == "block"
	}
	var rows []string
	for _, B := range bsizes {
		best := make([]float64, len(settings))
		for range 2 {
			for i, s := range settings {
				use(s.mode)
				best[i] = max(best[i], sampledDecode(t, br, B, 128, 128, s.p))
			}
		}
		line := fmt.Sprintf("B=%-3d S_TG", B)
		for i, s := range settings {
			line += fmt.Sprintf(" | %s %.1f", s.name, best[i])
			if i > 0 {
				line += fmt.Sprintf(" %.3fx", best[i]/best[0])
			}
		}
		rows = append(rows, line)
		t.Log(line)
		// Per kernel: the step replayed with events (sampling kernels only,
		// and the whole step).
		for _, s := range settings {
			use(s.mode)
			sampledDecode(t, br, B, 128, 4, s.p)
			ops, step, err := br.Profile(B, 20)
			if err != nil {
				t.Fatal(err)
			}
			line := fmt.Sprintf("B=%-3d %-8s step %7.1f us:", B, s.name, step)
			for _, o := range ops {
				if strings.HasPrefix(o.Name, "samp") || strings.HasPrefix(o.Name, "argmax") || strings.HasPrefix(o.Name, "sampling") {
					line += fmt.Sprintf(" %s %.1f", o.Name, float64(o.Total)/float64(time.Microsecond))
				}
			}
			rows = append(rows, line)
			t.Log(line)
		}
	}
	use("")
	fmt.Println("\nsampling on the GPU, old against new, synth 0.6B Q8_0 (S_TG tok/s, best of 2; profile us):\n" + strings.Join(rows, "\n"))
}
