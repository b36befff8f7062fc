package cuda

import (
	"errors"
	"sort"
	"time"

	"inferno/backend"
)

// timeGraph captures what build enqueues into a graph, replays it reps
// times back to back (no host synchronization between replays) and
// returns the GPU time per replay in microseconds.
func (r *Runner) timeGraph(reps int, build func(l *launcher)) (float64, error) {
	g := r.dev
	if err := g.enter(); err != nil {
		return 0, err
	}
	defer g.exit()
	if err := r.settle(); err != nil {
		return 0, err
	}
	if err := g.beginCapture(); err != nil {
		return 0, err
	}
	l := &launcher{g: g, pdl: r.tune.pdl}
	build(l)
	graph, exec, err := g.endCapture()
	if l.err != nil {
		g.destroyGraph(graph, exec)
		return 0, l.err
	}
	if err != nil {
		return 0, err
	}
	defer g.destroyGraph(graph, exec)
	a, err := g.newEvent()
	if err != nil {
		return 0, err
	}
	defer g.destroyEvent(a)
	b, err := g.newEvent()
	if err != nil {
		return 0, err
	}
	defer g.destroyEvent(b)
	if err := g.launchGraph(exec); err != nil { // warm up
		return 0, err
	}
	if err := g.record(a); err != nil {
		return 0, err
	}
	for range reps {
		if err := g.launchGraph(exec); err != nil {
			return 0, err
		}
	}
	if err := g.record(b); err != nil {
		return 0, err
	}
	ms, err := g.elapsed(a, b)
	return float64(ms) * 1000 / float64(reps), err
}

// Profile replays the decode step reps times as a graph with an event
// after every kernel, and returns the time per kernel name (largest first)
// and the whole step's time, in microseconds. The step runs at position
// Len() with token 0 and leaves the sequence as it was.
func (r *Runner) Profile(reps int) ([]backend.OpStats, float64, error) {
	if r.closed {
		return nil, 0, errors.New("cuda: runner is closed")
	}
	if r.len >= r.maxLen {
		return nil, 0, errors.New("cuda: no room to profile a step")
	}
	g := r.dev
	if err := g.enter(); err != nil {
		return nil, 0, err
	}
	defer g.exit()
	if err := r.reserve(r.len + 1); err != nil {
		return nil, 0, err
	}
	if err := r.settle(); err != nil {
		return nil, 0, err
	}
	r.valid = false
	*g.hostI32(r.paramsOff(0)) = 0
	*g.hostI32(r.paramsOff(0) + 4) = int32(r.len)
	*g.hostI32(r.paramsOff(0) + 8) = -1
	*g.hostI32(r.paramsOff(0) + 12) = 0
	return g.profileGraph(8*len(r.layers)+16, "profiled decode step", reps, func(l *launcher) error { return r.decodeOps(l, 0) })
}

// profileGraph captures the kernels build enqueues as a graph with an event
// recorded after each (events of them at most), replays it reps times and
// returns the mean time per kernel name, largest total first, and of the
// whole graph, in microseconds. Between the events no kernel is launched
// programmatically (its predecessor is an event record node).
func (g *device) profileGraph(events int, what string, reps int, build func(l *launcher) error) ([]backend.OpStats, float64, error) {
	evs := make([]uintptr, events)
	defer func() {
		for _, e := range evs {
			if e != 0 {
				g.destroyEvent(e)
			}
		}
	}()
	for i := range evs {
		var err error
		if evs[i], err = g.newEvent(); err != nil {
			return nil, 0, err
		}
	}
	if err := g.beginCapture(); err != nil {
		return nil, 0, err
	}
	l := &launcher{g: g, events: evs}
	err := g.recordExternal(evs[0])
	if err == nil {
		err = build(l)
	}
	graph, exec, err2 := g.endCapture()
	if err == nil {
		err = err2
	}
	if err != nil {
		g.destroyGraph(graph, exec)
		return nil, 0, err
	}
	defer g.destroyGraph(graph, exec)
	per := make([]float64, len(l.names))
	var total float64
	for range reps {
		if err := g.launchGraph(exec); err != nil {
			return nil, 0, err
		}
		if err := g.sync(what); err != nil {
			return nil, 0, err
		}
		for i := range l.names {
			ms, err := g.elapsed(evs[i], evs[i+1])
			if err != nil {
				return nil, 0, err
			}
			per[i] += float64(ms) * 1000 / float64(reps)
		}
		ms, err := g.elapsed(evs[0], evs[len(l.names)])
		if err != nil {
			return nil, 0, err
		}
		total += float64(ms) * 1000 / float64(reps)
	}
	at := map[string]int{}
	var res []backend.OpStats
	for i, name := range l.names {
		j, ok := at[name]
		if !ok {
			j = len(res)
			at[name] = j
			res = append(res, backend.OpStats{Name: name})
		}
		res[j].Calls++
		res[j].Total += time.Duration(per[i] * 1e3)
	}
	sort.Slice(res, func(i, j int) bool { return res[i].Total > res[j].Total })
	return res, total, nil
}
