package engine_test

import (
	"testing"

	"inferno/engine"
	"inferno/engine/enginetest"
	"inferno/sampling"
)

// devBatched is a scripted batch runner posing as an engine.DeviceSampler:
// its "device draw" is the script's token.
type devBatched struct {
	*enginetest.Batched
	row   sampling.Row
	draws int
}

func (d *devBatched) CanSample(sampling.Params) bool { return true }

func (d *devBatched) SetSamples(rows []sampling.Row) error {
	d.row = rows[0]
	return nil
}

func (d *devBatched) Sampled(i int) (sampling.Token, error) {
	id, err := d.Greedy(i)
	d.draws++
	return sampling.Token{ID: id}, err
}

// TestSingleDeviceStepAllocs: in steady state, a decode step of a
// penalized request sampled on the device through Single (the row, its
// patches, the forward pass, the pick) allocates nothing.
func TestSingleDeviceStepAllocs(t *testing.T) {
	d := &devBatched{Batched: enginetest.NewBatched(nil, 64, 1024, 64, 16)}
	d.Fill = 7
	req := engine.Request{
		Prompt: []int32{1, 2, 3}, MaxTokens: 500,
		Sampling: sampling.Params{Temperature: 1, RepetitionPenalty: 1.3, Seed: 5, HasSeed: true},
	}
	seq, err := engine.NewSequence(engine.NewSingle(d), nil, req)
	if err != nil {
		t.Fatal(err)
	}
	step := func() {
		st, err := seq.Step()
		if err != nil || st.Finish != "" {
			t.Fatalf("step: %+v, %v", st, err)
		}
	}
	for range 4 {
		step()
	}
	if a := testing.AllocsPerRun(50, step); a != 0 {
		t.Errorf("%v allocations a step", a)
	}
	if d.draws != 55 || !d.row.On || len(d.row.Patches) == 0 {
		t.Errorf("%d draws on the device (want 55), last row on %v with %d patches", d.draws, d.row.On, len(d.row.Patches))
	}
}
