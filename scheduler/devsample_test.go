package scheduler

import (
	"slices"
	"sync/atomic"
	"testing"

	"inferno/batch"
	"inferno/engine"
	"inferno/model/qwen3"
	"inferno/sampling"
)

// fakeDevice is a CPU batch runner posing as an engine.DeviceSampler: its
// "device draw" is the most likely token of sampling.Distribution over the
// output's logits, patches and mask (the lowest id among ties); rows with
// top_p alone it leaves to the host (sampling.ErrNotDrawn).
type fakeDevice struct {
	engine.BatchRunner
	rows    []sampling.Row
	set     int
	sampled int
	undrawn int
	index   map[uint64][]int // by seed: the indexes drawn
	patches map[uint64]int   // by seed: the most patches of a row
}

func (f *fakeDevice) CanSample(p sampling.Params) bool { return p.TopK != 2 }

func (f *fakeDevice) SetSamples(rows []sampling.Row) error {
	f.set++
	f.rows = append(f.rows[:0], rows...)
	return nil
}

func (f *fakeDevice) Sampled(i int) (sampling.Token, error) {
	r := f.rows[i]
	if !r.On {
		panic("Sampled of a row not On")
	}
	if r.Params.TopK == 0 && r.Params.TopP > 0 {
		f.undrawn++
		return sampling.Token{}, sampling.ErrNotDrawn
	}
	logits, err := f.BatchRunner.Logits(i)
	if err != nil {
		return sampling.Token{}, err
	}
	d := sampling.Distribution(logits, r.Params, r.Patches, r.Mask)
	best := 0
	for id, p := range d {
		if p > d[best] {
			best = id
		}
	}
	f.sampled++
	f.index[r.Seed] = append(f.index[r.Seed], r.Index)
	f.patches[r.Seed] = max(f.patches[r.Seed], len(r.Patches))
	return sampling.Token{ID: int32(best)}, nil
}

// newFakeDevice returns a fakeDevice over a CPU batch runner of m (maxLen
// tokens a sequence, 64 blocks of 16) and a Batcher over it, both closed
// when the test ends.
func newFakeDevice(t *testing.T, m *qwen3.Model, maxLen int, cfg Config) (*fakeDevice, *Batcher) {
	t.Helper()
	f := &fakeDevice{BatchRunner: cpuBatched(t, m, maxLen, 64, 16), index: map[uint64][]int{}, patches: map[uint64]int{}}
	return f, startBatcher(t, f, cfg)
}

// TestBatcherDeviceSampler: sampled requests go to a DeviceSampler runner
// (rows with their seed, the index of the token drawn and the penalties'
// patches), greedy ones to its argmax, and requests it cannot sample (or
// leaves undrawn) to the host sampler, which draws what it draws alone.
func TestBatcherDeviceSampler(t *testing.T) {
	m := tinyModel(t)
	f, s := newFakeDevice(t, m, 128, Config{Parallel: 4, BatchTokens: 64, Queue: 16})
	reqs := requests(m.Config.Vocab, 4, 9)
	reqs[0].Sampling = sampling.Params{Temperature: 1, Seed: 11, HasSeed: true}
	reqs[1].Sampling = sampling.Params{Temperature: 0.7, TopK: 20, TopP: 0.9, RepetitionPenalty: 1.5, Seed: 12, HasSeed: true}
	reqs[2].Sampling = sampling.Params{Temperature: 0.9, TopP: 0.8, Seed: 13, HasSeed: true} // left undrawn: the host's
	reqs[3].Sampling = sampling.Params{Temperature: 0.9, TopK: 2, Seed: 14, HasSeed: true}   // refused: the host's
	got, last := runAll(t, s, reqs)
	for i := range reqs {
		if last[i].Err != nil {
			t.Fatalf("request %d: %v", i, last[i].Err)
		}
	}
	want := 0
	for i, seed := range []uint64{11, 12} {
		idx := f.index[seed]
		if len(idx) != len(got[i]) {
			t.Errorf("request %d: %d tokens drawn on the device, %d generated", i, len(idx), len(got[i]))
		}
		for k, v := range idx {
			if v != k {
				t.Errorf("request %d: token %d drawn with index %d", i, k, v)
				break
			}
		}
		want += len(got[i])
	}
	if f.sampled != want || len(f.index[13]) != 0 {
		t.Errorf("%d tokens drawn on the device (want %d), %d of the top_p request's", f.sampled, want, len(f.index[13]))
	}
	// The penalized request's rows list its prompt's and generated tokens.
	if f.patches[12] == 0 || f.patches[11] != 0 {
		t.Errorf("rows' patches: at most %d for the penalized request, %d for the other", f.patches[12], f.patches[11])
	}
	if f.undrawn != len(got[2]) || f.set == 0 {
		t.Errorf("%d rows left undrawn, want %d; %d SetSamples", f.undrawn, len(got[2]), f.set)
	}
	for _, i := range []int{2, 3} {
		if want := solo(t, m, reqs[i]); !slicesEqual(got[i], want) {
			t.Errorf("request %d, sampled on the host: %v, alone %v", i, got[i], want)
		}
	}
}

// rowsDevice is a DeviceSampler that keeps the rows it is given (in a
// reused slice) and runs nothing.
type rowsDevice struct {
	engine.BatchRunner // nil: not called
	rows               []sampling.Row
}

func (d *rowsDevice) CanSample(sampling.Params) bool { return true }

func (d *rowsDevice) SetSamples(rows []sampling.Row) error {
	d.rows = append(d.rows[:0], rows...)
	return nil
}

func (d *rowsDevice) Sampled(int) (sampling.Token, error) { return sampling.Token{}, nil }

// TestBatcherDeviceStepAllocs: in steady state, a step's work before and
// around the forward pass for constrained, penalized rows sampled on the
// device (the rows, their masks computed on the mask workers before the
// step and during it) allocates nothing.
func TestBatcherDeviceStepAllocs(t *testing.T) {
	const vocab, n = 1000, 4
	d := &rowsDevice{}
	s := &Batcher{r: d}
	defer s.help.stop()
	var fills atomic.Int64
	for i := range n {
		req := engine.Request{
			Prompt: []int32{1, 2, 3}, MaxTokens: 8,
			Sampling:   sampling.Params{Temperature: 1, RepetitionPenalty: 1.2, Seed: uint64(i), HasSeed: true},
			Constraint: &modConstraint{r: i % 5, n: 3, eog: 3, fills: &fills},
		}
		seq, err := engine.NewBatchSequence(vocab, 64, nil, req)
		if err != nil {
			t.Fatal(err)
		}
		s.b.Outputs = append(s.b.Outputs, int32(i))
		s.entries = append(s.entries, entry{j: &bjob{seq: seq}, n: 1, out: i, decode: true})
	}
	step := func() {
		if err := s.sampleOnDevice(); err != nil {
			t.Fatal(err)
		}
		s.prepareMasks()
		s.help.wg.Wait()
	}
	step()
	if a := testing.AllocsPerRun(50, step); a != 0 {
		t.Errorf("%v allocations a step", a)
	}
	if len(d.rows) != n || fills.Load() != n {
		t.Fatalf("%d rows, %d masks filled, want %d", len(d.rows), fills.Load(), n)
	}
	for i, r := range d.rows {
		if !r.On || r.Mask == nil || len(r.Patches) == 0 {
			t.Errorf("row %d: on %v, mask %v, %d patches", i, r.On, r.Mask != nil, len(r.Patches))
		}
	}
}

// aheadDevice is a fakeDevice that takes lookahead hints
// (engine.Lookaheader) and records, for each pass, the hint, the
// sequences (the first block of each table) and the sampling rows.
type aheadDevice struct {
	*fakeDevice
	on     bool
	passes []rowsPass
	set    int // fakeDevice.set at the last pass
}

type rowsPass struct {
	on   bool
	seqs []int32
	rows []sampling.Row
}

func (a *aheadDevice) SetLookahead(on bool) { a.on = on }

func (a *aheadDevice) Forward(b *batch.Batch) error {
	p := rowsPass{on: a.on}
	if a.fakeDevice.set != a.set { // a pass without SetSamples samples nothing
		p.rows = slices.Clone(a.rows)
		a.set = a.fakeDevice.set
	}
	for _, tab := range b.Tables {
		p.seqs = append(p.seqs, tab[0])
	}
	a.passes = append(a.passes, p)
	return a.fakeDevice.Forward(b)
}

// TestBatcherLookaheadRows: after every pass that let the runner queue
// the next decode step, the next pass is that step as the runner drew it:
// the same sequences with the same sampling rows one draw further, also
// when some of them ended at an end-of-generation id in between (they
// stay for the step, bjob.linger).
func TestBatcherLookaheadRows(t *testing.T) {
	t.Parallel()
	m := tinyModel(t)
	a := &aheadDevice{fakeDevice: &fakeDevice{BatchRunner: cpuBatched(t, m, 128, 64, 16), index: map[uint64][]int{}, patches: map[uint64]int{}}, on: true}
	s := startBatcher(t, a, Config{Parallel: 6, BatchTokens: 64, Queue: 16})
	eog := map[int32]bool{}
	for id := range int32(m.Config.Vocab / 16) {
		eog[id*16] = true
	}
	reqs := requests(m.Config.Vocab, 6, 5)
	for i := range reqs {
		reqs[i].Sampling = sampling.Params{Temperature: 1, Seed: uint64(20 + i), HasSeed: true}
		reqs[i].MaxTokens = 24
		reqs[i].EOG = eog
		reqs[i].IgnoreEOS = false
	}
	_, last := runAll(t, s, reqs)
	stops := 0
	for i, ev := range last {
		if ev.Err != nil {
			t.Fatalf("request %d: %v", i, ev.Err)
		}
		if ev.Finish == engine.FinishStop {
			stops++
		}
	}
	if stops == 0 || stops == len(reqs) {
		t.Fatalf("%d of %d requests ended at an end-of-generation id: the run does not mix both ends", stops, len(reqs))
	}
	on := 0
	for k, p := range a.passes[:len(a.passes)-1] {
		if !p.on {
			continue
		}
		on++
		q := a.passes[k+1]
		if !slices.Equal(p.seqs, q.seqs) || len(p.rows) != len(q.rows) {
			t.Errorf("pass %d queued the next step, pass %d runs sequences %v with %d rows (want %v, %d)", k, k+1, q.seqs, len(q.rows), p.seqs, len(p.rows))
			continue
		}
		for i, r := range p.rows {
			w := r
			w.Index++
			if !r.On || q.rows[i].Index != w.Index || q.rows[i].Seed != w.Seed || q.rows[i].Params.Temperature != w.Params.Temperature || !q.rows[i].On {
				t.Errorf("pass %d, row %d: %+v, then %+v (want the same row, one draw further)", k, i, r, q.rows[i])
			}
		}
	}
	if on == 0 {
		t.Error("no pass let the runner queue the next step")
	}
	t.Logf("%d passes, %d with the lookahead on; %d requests stopped at an end-of-generation id", len(a.passes), on, stops)
}
