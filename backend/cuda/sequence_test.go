package cuda

// GPU tests of what sampling and serving need: top-k selection on the
// device, runners of several sequences sharing one copy of the weights,
// and the lookahead switched off for samplers.

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// topkReference returns the k best (value, id) pairs in argmax order.
func topkReference(v []float32, k int) ([]int32, []float32) {
	ids := make([]int32, len(v))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortStableFunc(ids, func(a, b int32) int {
		va, vb := v[a], v[b]
		an, bn := va != va, vb != vb
		switch {
		case an != bn:
			if an {
				return 1
			}
			return -1
		case !an && va > vb:
			return -1
		case !an && va < vb:
			return 1
		}
		return int(a - b)
	})
	ids = ids[:k]
	vals := make([]float32, k)
	for i, id := range ids {
		vals[i] = v[id]
	}
	return ids, vals
}

// TestTopK checks the device's top-k against a sort of the downloaded
// logits, on the model's own logits and on crafted ones with ties, NaN
// and infinities, for k from 1 to MaxTopK.
func TestTopK(t *testing.T) {
	m := tinyModel(t)
	r := newRunner(t, m, Options{MaxLen: 256})
	if err := r.Forward(randomPrompt(3, 20, m.Config.Vocab)); err != nil {
		t.Fatal(err)
	}
	check := func(name string, want []float32) {
		for _, k := range []int{1, 2, 20, 40, r.MaxTopK()} {
			ids, vals, err := r.TopK(k)
			if err != nil {
				t.Fatal(err)
			}
			wi, wv := topkReference(want, k)
			if !slices.Equal(ids, wi) {
				t.Fatalf("%s k=%d: ids %v, want %v", name, k, ids[:min(8, len(ids))], wi[:min(8, len(wi))])
			}
			for i := range vals {
				if math.Float32bits(vals[i]) != math.Float32bits(wv[i]) {
					t.Fatalf("%s k=%d: value %d is %v, want %v", name, k, i, vals[i], wv[i])
				}
			}
		}
	}
	check("model logits", logits(t, r))
	// Crafted logits: many ties (lower id first), NaN last, +Inf first.
	v := make([]float32, m.Config.Vocab)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range v {
		v[i] = float32(rng.IntN(50)) // ~3,000 copies of each value
	}
	v[7], v[150000], v[100] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	if err := r.dev.enter(); err != nil {
		t.Fatal(err)
	}
	err := r.dev.upload(r.logits[r.slot], f32Bytes(v))
	r.dev.exit()
	if err != nil {
		t.Fatal(err)
	}
	check("crafted logits", v)
	if _, _, err := r.TopK(r.MaxTopK() + 1); err == nil {
		t.Error("k above MaxTopK accepted")
	}
	t.Logf("top-k matches the CPU sort for k up to %d", r.MaxTopK())
}

// TestSequencesShareWeights decodes two prompts on two runners that share
// the weights, interleaved step by step, and checks each transcript and
// its logits against a runner that decodes the prompt alone; closing the
// first runner leaves the second working, and closing both gives the
// memory back.
func TestSequencesShareWeights(t *testing.T) {
	g := testDevice(t)
	free0, _ := g.memInfo()
	m := tinyModel(t)
	alone := func(p []int32, n int) ([]int32, [][]float32) {
		r, err := NewRunner(m, Options{MaxLen: 512})
		if err != nil {
			t.Fatal(err)
		}
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

	ra, err := NewRunner(m, Options{MaxLen: 512})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := ra.NewSequence()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.enter(); err != nil {
		t.Fatal(err)
	}
	mid, _ := g.memInfo()
	g.exit()
	type seq struct {
		r    *Runner
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
			t.Fatalf("step %d: logits differ from the runner alone (relative L2 %.3g)", i, e)
		}
		id, _ := s.r.Greedy()
		s.got = append(s.got, id)
		s.next = []int32{id}
	}
	for i := range n {
		if i < n/2 {
			step(a, i)
		} else if i == n/2 {
			// The first runner goes; the second keeps the weights.
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

// TestLookaheadOff: a runner told to sample queues no lookahead step, so
// feeding it tokens other than its argmax discards nothing; with the
// lookahead on, the same feed misses.
func TestLookaheadOff(t *testing.T) {
	m := tinyModel(t)
	for _, on := range []bool{true, false} {
		r := newRunner(t, m, Options{MaxLen: 256})
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
		s := r.Stats()
		t.Logf("lookahead %v: %d hits, %d misses", on, s.LookaheadHits, s.LookaheadMisses)
		if on && s.LookaheadMisses == 0 {
			t.Error("lookahead on: no misses for non-greedy tokens")
		}
		if !on && s.LookaheadHits+s.LookaheadMisses != 0 {
			t.Errorf("lookahead off: %d hits and %d misses, want none", s.LookaheadHits, s.LookaheadMisses)
		}
	}
}
