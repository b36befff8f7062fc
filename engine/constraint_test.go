package engine_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"inferno/engine"
	"inferno/engine/enginetest"
	"inferno/sampling"
)

// seqConstraint allows exactly the ids of want, in order, then only eog
// (Done once eog is accepted). With after >= 0 it is inactive until that
// id has been generated.
type seqConstraint struct {
	want   []int32
	eog    int32
	after  int32
	active bool
	pos    int
	done   bool
	fills  int
}

func (c *seqConstraint) Active() bool { return c.active }

func (c *seqConstraint) FillMask(mask []uint64) {
	c.fills++
	clear(mask)
	id := c.eog
	if c.pos < len(c.want) {
		id = c.want[c.pos]
	}
	mask[id/64] |= 1 << (id % 64)
}

func (c *seqConstraint) Accept(id int32) error {
	if !c.active {
		c.active = id == c.after
		return nil
	}
	switch {
	case c.pos < len(c.want) && id == c.want[c.pos]:
		c.pos++
	case c.pos == len(c.want) && id == c.eog:
		c.done = true
	default:
		return fmt.Errorf("token %d not allowed", id)
	}
	return nil
}

func (c *seqConstraint) Done() bool { return c.done }

func TestSequenceConstraint(t *testing.T) {
	const vocab = 300
	eog := int32(299)
	want := []int32{5, 200, 64, 63, 7}
	for _, tc := range []struct {
		name string
		p    sampling.Params
	}{
		{"greedy", sampling.Params{}},
		{"sampled", sampling.Params{Temperature: 1.5, TopP: 0.9, HasSeed: true, Seed: 3}},
		{"penalties", sampling.Params{Temperature: 1, RepetitionPenalty: 1.3, PresencePenalty: 1, LogitBias: map[int32]float32{5: -100, 9: 100}}},
		{"logprobs", sampling.Params{Temperature: 0, Logprobs: true, TopLogprobs: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The script's winners are never what the constraint allows.
			r := enginetest.New([]int32{1, 2, 3, 4, 6, 8, 9}, vocab, 64)
			r.Fill = 9
			c := &seqConstraint{want: want, eog: eog, after: -1, active: true}
			seq, err := engine.NewSequence(r, nil, engine.Request{Prompt: []int32{1, 2}, MaxTokens: 20, Sampling: tc.p,
				EOG: map[int32]bool{eog: true}, Constraint: c})
			if err != nil {
				t.Fatal(err)
			}
			var got []int32
			for !seq.Done() {
				st, err := seq.Step()
				if err != nil {
					t.Fatal(err)
				}
				if st.HasToken {
					got = append(got, st.Token.ID)
				}
			}
			if !slices.Equal(got, append(want, eog)) || seq.Finish() != engine.FinishStop || !c.Done() {
				t.Errorf("generated %v finish %q done %v; want %v then %d", got, seq.Finish(), c.Done(), want, eog)
			}
		})
	}
}

func TestSequenceConstraintAfter(t *testing.T) {
	// Inactive until token 50 (the end of reasoning): the script runs
	// freely until then, the constraint afterwards.
	const vocab = 128
	eog := int32(100)
	r := enginetest.New([]int32{10, 11, 50, 12, 13, 14}, vocab, 64)
	r.Fill = 12
	c := &seqConstraint{want: []int32{70, 71}, eog: eog, after: 50}
	seq, err := engine.NewSequence(r, nil, engine.Request{Prompt: []int32{1}, EOG: map[int32]bool{eog: true}, Constraint: c})
	if err != nil {
		t.Fatal(err)
	}
	seq.PrepareMask() // inactive: nothing to do
	var got []int32
	for !seq.Done() {
		if seq.Constrained() {
			if m := seq.Mask(); m == nil || m[1]&(1<<(70-64)) == 0 && m[1]&(1<<(71-64)) == 0 && m[1]&(1<<(eog-64)) == 0 {
				t.Fatalf("mask %x before pick %d", m, len(got))
			}
		} else if seq.Mask() != nil {
			t.Fatal("a mask while inactive")
		}
		st, err := seq.Step()
		if err != nil {
			t.Fatal(err)
		}
		if st.HasToken {
			got = append(got, st.Token.ID)
		}
	}
	if want := []int32{10, 11, 50, 70, 71, eog}; !slices.Equal(got, want) {
		t.Errorf("generated %v, want %v", got, want)
	}
	if c.fills != 3 {
		t.Errorf("%d masks filled, want 3 (Mask's mask reused by the pick)", c.fills)
	}
}

// evenConstraint allows every even id (more tokens than a pick samples
// as candidates): the pick masks the logits.
type evenConstraint struct{ n int }

func (*evenConstraint) Active() bool { return true }
func (*evenConstraint) FillMask(mask []uint64) {
	for i := range mask {
		mask[i] = 0x5555555555555555
	}
}
func (c *evenConstraint) Accept(id int32) error {
	if id%2 != 0 {
		return fmt.Errorf("odd token %d", id)
	}
	c.n++
	return nil
}
func (*evenConstraint) Done() bool { return false }

func TestSequenceConstraintDense(t *testing.T) {
	const vocab = 20000
	for _, p := range []sampling.Params{{}, {Temperature: 1, TopK: 50, Seed: 1, HasSeed: true}, {Temperature: 2}} {
		r := enginetest.New([]int32{1, 3, 5, 7, 9, 11}, vocab, 64)
		r.Fill = 13
		c := &evenConstraint{}
		_, finish, n := generate(t, r, nil, engine.Request{Prompt: []int32{1}, MaxTokens: 10, Sampling: p, Constraint: c})
		if finish != engine.FinishLength || n != 10 || c.n != 10 {
			t.Errorf("%+v: finish %q, %d tokens, %d accepted", p, finish, n, c.n)
		}
	}
}

// badConstraint allows nothing.
type badConstraint struct{}

func (badConstraint) Active() bool           { return true }
func (badConstraint) FillMask(mask []uint64) { clear(mask) }
func (badConstraint) Accept(int32) error     { return errors.New("no") }
func (badConstraint) Done() bool             { return false }

func TestSequenceConstraintNoToken(t *testing.T) {
	r := enginetest.New([]int32{3}, 64, 16)
	seq, err := engine.NewSequence(r, nil, engine.Request{Prompt: []int32{1}, Constraint: badConstraint{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seq.Step(); !errors.Is(err, engine.ErrNoAllowedToken) || !seq.Done() {
		t.Errorf("err %v done %v, want ErrNoAllowedToken", err, seq.Done())
	}
}

func TestMaskLogits(t *testing.T) {
	for _, n := range []int{1, 63, 64, 65, 130} {
		logits := make([]float32, n)
		mask := make([]uint64, engine.MaskWords(n))
		for i := 0; i < n; i += 3 {
			mask[i/64] |= 1 << (i % 64)
		}
		if !engine.MaskLogits(logits, mask) {
			t.Fatalf("n=%d: no token allowed", n)
		}
		for i, v := range logits {
			if masked := math.IsInf(float64(v), -1); masked != (i%3 != 0) {
				t.Errorf("n=%d: logit %d = %v", n, i, v)
			}
		}
		clear(mask)
		if engine.MaskLogits(logits, mask) {
			t.Errorf("n=%d: an empty mask allows a token", n)
		}
	}
	// A short mask leaves the tail disallowed.
	logits := []float32{1, 2, 3}
	if engine.MaskLogits(logits, nil) || !math.IsInf(float64(logits[2]), -1) {
		t.Errorf("nil mask: %v", logits)
	}
}

func BenchmarkMaskLogits(b *testing.B) {
	const vocab = 151936
	logits := make([]float32, vocab)
	mask := make([]uint64, engine.MaskWords(vocab))
	for _, bc := range []struct {
		name string
		fill func(i int) uint64
	}{
		{"sparse", func(i int) uint64 { return uint64(i%7) & 1 << 5 }}, // a few tokens: JSON punctuation
		{"mixed", func(int) uint64 { return 0x0123456789abcdef }},
		{"all", func(int) uint64 { return 1<<64 - 1 }}, // inside a string
	} {
		for i := range mask {
			mask[i] = bc.fill(i)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(vocab * 4)
			for b.Loop() {
				engine.MaskLogits(logits, mask)
			}
		})
	}
}
