package cuda

// GPU tests of what serving and sampling need of sequences: batched
// runners of several sequences sharing one copy of the weights, and the
// lookahead switched off for samplers.

import (
	"slices"
	"testing"

	"inferno/engine"
)

// TestSequencesShareWeights decodes two prompts on two sequences whose
// batched runners share one Model's weights, interleaved step by step,
// and checks each transcript and its logits, bit for bit, against the
// prompt decoded alone on a Model of its own; closing the Model and the
// first sequence leaves the second working, and closing it gives the
// memory back.
func TestSequencesShareWeights(t *testing.T) {
	g := testDevice(t)
	free0, _ := g.memInfo()
	m := tinyModel(t)
	open := func(md *Model) *engine.Single {
		br, err := md.NewBatchRunner(512/16, 16)
		if err != nil {
			t.Fatal(err)
		}
		return engine.NewSingle(br)
	}
	alone := func(p []int32, n int) ([]int32, [][]float32) {
		md, err := Load(m, Options{MaxLen: 512})
		if err != nil {
			t.Fatal(err)
		}
		defer md.Close()
		r := open(md)
		defer r.Close()
		var ids []int32
		var ls [][]float32
		next := p
		for range n {
			if err := r.Forward(next); err != nil {
				t.Fatal(err)
			}
			ls = append(ls, logits(t, r))
			id, _ := r.Greedy()
			ids = append(ids, id)
			next = []int32{id}
		}
		return ids, ls
	}
	pa, pb := randomPrompt(11, 30, m.Config.Vocab), randomPrompt(12, 7, m.Config.Vocab)
	const n = 40
	wantA, logA := alone(pa, n)
	wantB, logB := alone(pb, n)

	md, err := Load(m, Options{MaxLen: 512})
	if err != nil {
		t.Fatal(err)
	}
	ra, rb := open(md), open(md)
	if err := g.enter(); err != nil {
		t.Fatal(err)
	}
	mid, _ := g.memInfo()
	g.exit()
	type seq struct {
		r    *engine.Single
		next []int32
		got  []int32
		logs [][]float32
	}
	a, b := &seq{r: ra, next: pa, logs: logA}, &seq{r: rb, next: pb, logs: logB}
	step := func(s *seq, i int) {
		if err := s.r.Forward(s.next); err != nil {
			t.Fatal(err)
		}
		if e := relL2(logits(t, s.r), s.logs[i]); e != 0 {
			t.Fatalf("step %d: logits differ from the sequence alone (relative L2 %.3g)", i, e)
		}
		id, _ := s.r.Greedy()
		s.got = append(s.got, id)
		s.next = []int32{id}
	}
	for i := range n {
		if i < n/2 {
			step(a, i)
		} else if i == n/2 {
			// The Model and the first sequence go; the second keeps the
			// weights.
			if err := md.Close(); err != nil {
				t.Fatal(err)
			}
			if err := ra.Close(); err != nil {
				t.Fatal(err)
			}
		}
		step(b, i)
	}
	if !slices.Equal(a.got, wantA[:n/2]) || !slices.Equal(b.got, wantB) {
		t.Errorf("shared-weights transcripts %v and %v, alone %v and %v", a.got, b.got, wantA[:n/2], wantB)
	}
	if err := rb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.enter(); err != nil {
		t.Fatal(err)
	}
	free1, _ := g.memInfo()
	g.exit()
	t.Logf("two sequences held %.1f MiB; after closing both %.1f MiB of %.1f MiB free again", mib(free0-mid), mib(free1), mib(free0))
	if free1+(8<<20) < free0 {
		t.Errorf("%.1f MiB not given back", mib(free0-free1))
	}
}

// TestLookaheadOff: a sequence told to sample (the lookahead off) queues
// no lookahead step, so feeding it tokens other than its argmax discards
// nothing; with the lookahead on, the same feed misses.
func TestLookaheadOff(t *testing.T) {
	m := tinyModel(t)
	md := newModel(t, m, Options{MaxLen: 256})
	for _, on := range []bool{true, false} {
		br := newBatchRunner(t, md, 256/16, 16)
		r := engine.NewSingle(br)
		r.SetLookahead(on)
		if err := r.Forward(randomPrompt(5, 10, m.Config.Vocab)); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			id, _ := r.Greedy()
			if err := r.Forward([]int32{(id + 1 + int32(i)) % int32(m.Config.Vocab)}); err != nil {
				t.Fatal(err)
			}
		}
		s := br.Stats()
		t.Logf("lookahead %v: %d hits, %d misses", on, s.LookaheadHits, s.LookaheadMisses)
		if on && s.LookaheadMisses == 0 {
			t.Error("lookahead on: no misses for non-greedy tokens")
		}
		if !on && s.LookaheadHits+s.LookaheadMisses != 0 {
			t.Errorf("lookahead off: %d hits and %d misses, want none", s.LookaheadHits, s.LookaheadMisses)
		}
	}
}

// TestSingleSteadyState: one sequence as the commands run it (greedy,
// the lookahead on): every decode step after the first takes the step
// queued before it; Reset and Truncate wait for the queued step rather
// than leave it to delay the next Forward (no miss counted); and a decode
// step allocates nothing on the host.
func TestSingleSteadyState(t *testing.T) {
	m := tinyModel(t)
	md := newModel(t, m, Options{MaxLen: 512})
	br := newBatchRunner(t, md, 512/16, 16)
	r := engine.NewSingle(br)
	decode := func(n int) {
		t.Helper()
		tok := int32(7)
		for range n {
			if err := r.Forward([]int32{tok}); err != nil {
				t.Fatal(err)
			}
			tok, _ = r.Greedy()
		}
	}
	for rep := range 3 {
		decode(40)
		if rep == 1 {
			if err := r.Truncate(10); err != nil {
				t.Fatal(err)
			}
		} else {
			r.Reset()
		}
	}
	s := br.Stats()
	t.Logf("3 runs of 40 greedy steps, Reset or Truncate between: %d lookahead steps taken, %d discarded", s.LookaheadHits, s.LookaheadMisses)
	if s.LookaheadMisses != 0 || s.LookaheadHits < 3*38 {
		t.Errorf("%d lookahead steps taken and %d discarded, want at least %d and none", s.LookaheadHits, s.LookaheadMisses, 3*38)
	}
	tok := int32(7)
	allocs := testing.AllocsPerRun(50, func() {
		if err := r.Forward([]int32{tok}); err != nil {
			t.Fatal(err)
		}
		tok, _ = r.Greedy()
	})
	if allocs != 0 {
		t.Errorf("a decode step allocates %.1f times", allocs)
	}
}
