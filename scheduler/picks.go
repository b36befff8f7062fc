package scheduler

import (
	"errors"
	"runtime"
	"sync"

	"inferno/engine"
	"inferno/sampling"
)

// A step's picks: the outputs the sequences read, the rows a runner that
// samples on the device draws with, and the host work around the forward
// pass (token masks of constrained sequences, picks from the logits) on
// helpers that live as long as the Batcher.

// output is a row of the runner's last forward pass, read by a sequence.
type output struct {
	r engine.BatchRunner
	i int
}

func (o *output) Logits() ([]float32, error) { return o.r.Logits(o.i) }
func (o *output) Greedy() (int32, error)     { return o.r.Greedy(o.i) }

// Sampled returns the token the runner sampled itself (an
// engine.SampledOutput, for rows set by sampleOnDevice).
func (o *output) Sampled() (sampling.Token, error) {
	ds, ok := o.r.(engine.DeviceSampler)
	if !ok {
		return sampling.Token{}, errors.New("scheduler: the runner does not sample")
	}
	return ds.Sampled(o.i)
}

// sampleOnDevice hands a DeviceSampler runner the sampling of the
// outputs whose sequences it can sample (engine.Sequence.DeviceRow).
func (s *Batcher) sampleOnDevice() error {
	ds, ok := s.r.(engine.DeviceSampler)
	if !ok {
		return nil
	}
	n := len(s.b.Outputs)
	for len(s.rows) < n {
		s.rows = append(s.rows, sampling.Row{})
	}
	s.fillMasks()
	any := false
	for _, e := range s.entries {
		if e.out < 0 {
			continue
		}
		if e.j.linger {
			// The step the runner queued drew its token with the row of
			// the pass before (the same output row: the batch is that
			// pass's sequences again), one draw further.
			if r := &s.rows[e.out]; r.On {
				r.Index++
				any = true
			}
			continue
		}
		if e.j.seq.DeviceRow(&s.rows[e.out], ds.CanSample, e.j.seq.Mask()) {
			any = true
		}
	}
	if !any {
		return nil
	}
	return ds.SetSamples(s.rows[:n])
}

// fillMasks computes, before the step, the token masks of the batch's
// constrained sequences on up to GOMAXPROCS goroutines: a runner that
// samples on the device needs them with the step's rows (SetSamples). They
// overlap each other (each sequence has its own matcher; a compiled
// grammar's shared caches are safe for concurrent use) and, on a runner
// that queued this step's forward pass on the last step's sampled tokens
// before returning (the CUDA runner's lookahead, whose sampling waits for
// the rows), that forward pass. One mask is left to Sequence.Mask.
func (s *Batcher) fillMasks() {
	s.collectMasked()
	n := len(s.masked)
	if n < 2 {
		return
	}
	s.help.grow(min(runtime.GOMAXPROCS(0), n))
	for i := range s.masked {
		s.help.start(task{qs: s.masked[i : i+1]})
	}
	s.help.wg.Wait()
}

// collectMasked puts the step's constrained sequences that pick a token
// after it into s.masked.
func (s *Batcher) collectMasked() {
	s.masked = s.masked[:0]
	for _, e := range s.entries {
		if e.out >= 0 && !e.j.linger && e.j.seq.Constrained() {
			s.masked = append(s.masked, e.j.seq)
		}
	}
}

// helpers do a step's per-sequence host work on goroutines that live as
// long as the Batcher's loop, so that a step starts no goroutine and makes
// no channel: the token masks of constrained sequences
// (engine.Sequence.PrepareMask) and the picks the host makes from the
// logits (PreparePick). Only the loop's goroutine calls its methods.
type helpers struct {
	work chan task
	n    int // the helpers started
	wg   sync.WaitGroup
}

// task is a share of a step's host work: the masks of qs, or the picks.
type task struct {
	qs    []*engine.Sequence
	picks []pick
}

// pick is a sequence's pick after the step: Advance(n, out)'s.
type pick struct {
	seq *engine.Sequence
	n   int
	out engine.Output
}

// grow starts helpers until there are n.
func (h *helpers) grow(n int) {
	if h.work == nil {
		h.work = make(chan task)
	}
	for ; h.n < n; h.n++ {
		go func() {
			for t := range h.work {
				h.do(t)
			}
		}()
	}
}

// do runs t's masks or picks in turn. What it leaves undone (a panic) is
// done at the pick.
func (h *helpers) do(t task) {
	defer h.wg.Done()
	defer func() { _ = recover() }()
	for _, q := range t.qs {
		q.PrepareMask()
	}
	for _, p := range t.picks {
		p.seq.PreparePick(p.n, p.out)
	}
}

// start hands t to a helper (grow must have started one); wg.Wait waits
// for all that were started.
func (h *helpers) start(t task) {
	h.wg.Add(1)
	h.work <- t
}

// stop ends the helpers.
func (h *helpers) stop() {
	if h.work != nil {
		close(h.work)
	}
}

// preparePicks makes the step's picks on the host, from the logits of a
// runner that samples nothing itself, on up to GOMAXPROCS goroutines
// before the step's outputs are read: each sequence's pick reads its own
// logits with its own sampler (a pass over the whole vocabulary: 0.5 ms
// for Qwen3's at temperature 1), so a batch's picks take the time of one
// share, with the bits they have alone.
func (s *Batcher) preparePicks() {
	procs := runtime.GOMAXPROCS(0)
	if !s.hostPicks || procs < 2 {
		return // Advance picks, one by one
	}
	clear(s.picks[:cap(s.picks)])
	s.picks = s.picks[:0]
	for _, e := range s.entries {
		if e.out >= 0 && !e.j.linger {
			s.picks = append(s.picks, pick{seq: e.j.seq, n: e.n, out: &s.outs[e.out]})
		}
	}
	n := len(s.picks)
	w := min(procs, n)
	if w < 2 {
		return
	}
	s.help.grow(w)
	for i := range w {
		s.help.start(task{picks: s.picks[i*n/w : (i+1)*n/w]})
	}
	s.help.wg.Wait()
}

// prepareMasks computes the token masks of the constrained sequences that
// pick a token after this step on another goroutine, while the forward
// pass runs (structured output's grammar work overlaps the model's), and
// run waits for it (help.wg). A mask it leaves undone (a panic) is
// computed at the pick.
func (s *Batcher) prepareMasks() {
	s.collectMasked()
	if len(s.masked) == 0 {
		return
	}
	s.help.grow(1)
	s.help.start(task{qs: s.masked})
}
