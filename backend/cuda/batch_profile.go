package cuda

import (
	"errors"
	"fmt"
	"inferno/engine"
)

// Profile replays the decode graph of the bucket of B tokens reps times
// with an event after every kernel, and returns the GPU time per kernel
// name (largest first) and the whole step's, in microseconds. It reruns
// the inputs of the last Forward, which must have been a decode batch of
// that bucket (its keys and values are written again, unchanged), with
// the kernels of its sampling on the GPU when it sampled; a queued
// lookahead step is waited for and discarded.
func (br *BatchRunner) Profile(B, reps int) ([]engine.OpStats, float64, error) {
	if br.closed {
		return nil, 0, errors.New("cuda: batch runner is closed")
	}
	bi := -1
	for i, b := range batchBuckets {
		if b == B {
			bi = i
		}
	}
	if bi < 0 || !br.valid || br.lastB != B {
		return nil, 0, fmt.Errorf("cuda: profile of bucket %d after a batch of %d outputs", B, br.nout)
	}
	g := br.dev
	if err := g.enter(); err != nil {
		return nil, 0, err
	}
	defer g.exit()
	if err := br.settle(); err != nil {
		return nil, 0, err
	}
	// The last step's inputs (a lookahead step's had no token ids) back
	// on the device: a lookahead step may have replaced them.
	s := br.slot
	m := hostInts(br.hmetaSlot(s), br.metaCap)
	copy(m[4:4+len(br.lastTok)], br.lastTok)
	m[3] = 0
	if br.metaLen[s] <= br.bt.zc {
		m[0] = int32(br.metaLen[s])
	} else if err := br.copyMeta(s, br.metaLen[s]); err != nil {
		return nil, 0, err
	}
	return g.profileGraph(12*len(br.base.layers)+32, "profiled batch step", reps, func(l *launcher) error {
		br.decodeOps(l, B, s, br.lastV)
		switch {
		case br.sampIn: // the step's sampling, captured with it
			br.samp.launch(l, s, br.rowsDev(B), br.logitsSlot(s), B, br.dres, br.hresDSlot(s), 0, br.dmeta)
		case br.sampledLast: // launched after its graph
			br.samp.launch(l, s, br.samp.rowsAt[s], br.logitsSlot(s), br.nout, br.dres, br.hresDSlot(s), 0, 0)
		}
		return l.err
	})
}

// promptTrace accumulates the kernels' times of the passes general runs
// (Options.TracePrompts): an event recorded on the stream after each
// kernel, read once the pass has synchronized.
type promptTrace struct {
	events []uintptr
	ops    opTable
	micros float64
	passes int
	tokens int
}

// start gives l the trace's events (created at the first pass: 24 a
// layer and 64 more, past the kernels a pass launches) and records the
// first; nil t does nothing.
func (t *promptTrace) start(g *device, l *launcher, layers int) error {
	if t == nil {
		return nil
	}
	if t.events == nil {
		evs, err := g.newEvents(24*layers + 64)
		if err != nil {
			return err
		}
		t.events = evs
	}
	l.events, l.plain = t.events, true
	return g.record(t.events[0])
}

// add reads the times of the pass l launched (synchronized) over n tokens.
func (t *promptTrace) add(g *device, l *launcher, n int) error {
	if t == nil {
		return nil
	}
	us, err := g.kernelTimes(t.events, len(l.names), func(i int, us float64) { t.ops.add(l.names[i], us) })
	if err != nil {
		return err
	}
	t.micros += us
	t.passes++
	t.tokens += n
	return nil
}

// close destroys the trace's events.
func (t *promptTrace) close(g *device) {
	if t == nil {
		return
	}
	g.destroyEvents(t.events)
	t.events = nil
}

// PromptProfile returns the GPU time per kernel name (largest total
// first, over every pass) of the passes that were no decode step since
// the runner opened with Options.TracePrompts, their total time in
// microseconds, their number and their tokens.
func (br *BatchRunner) PromptProfile() (ops []engine.OpStats, micros float64, passes, tokens int, err error) {
	t := br.prompts
	if t == nil {
		return nil, 0, 0, 0, errors.New("cuda: the runner was opened without TracePrompts")
	}
	return t.ops.sorted(), t.micros, t.passes, t.tokens, nil
}
