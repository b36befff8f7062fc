package cuda

import (
	"inferno/engine"
	"sort"
	"time"
)

// newEvents creates n events; on an error it destroys those it made.
func (g *device) newEvents(n int) ([]uintptr, error) {
	evs := make([]uintptr, n)
	for i := range evs {
		e, err := g.newEvent()
		if err != nil {
			g.destroyEvents(evs[:i])
			return nil, err
		}
		evs[i] = e
	}
	return evs, nil
}

// destroyEvents destroys the events of evs (zeros skipped).
func (g *device) destroyEvents(evs []uintptr) {
	for _, e := range evs {
		if e != 0 {
			g.destroyEvent(e)
		}
	}
}

// kernelTimes reads the times of n kernels timed with an event after
// each (evs[i+1] recorded after kernel i, evs[0] before the first):
// each(i, microseconds) for every kernel, then the whole span's
// microseconds.
func (g *device) kernelTimes(evs []uintptr, n int, each func(i int, us float64)) (float64, error) {
	for i := range n {
		ms, err := g.elapsed(evs[i], evs[i+1])
		if err != nil {
			return 0, err
		}
		each(i, float64(ms)*1000)
	}
	ms, err := g.elapsed(evs[0], evs[n])
	if err != nil {
		return 0, err
	}
	return float64(ms) * 1000, nil
}

// opTable sums kernels' calls and times by name, in the order the names
// first came.
type opTable struct {
	at  map[string]int
	ops []engine.OpStats
}

// add counts a call of name that took us microseconds.
func (t *opTable) add(name string, us float64) {
	j, ok := t.at[name]
	if !ok {
		if t.at == nil {
			t.at = map[string]int{}
		}
		j = len(t.ops)
		t.at[name] = j
		t.ops = append(t.ops, engine.OpStats{Name: name})
	}
	t.ops[j].Calls++
	t.ops[j].Total += time.Duration(us * 1e3)
}

// sorted returns a copy of the table, largest total first (names of equal
// totals in their first order).
func (t *opTable) sorted() []engine.OpStats {
	ops := append([]engine.OpStats(nil), t.ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Total > ops[j].Total })
	return ops
}

// profileGraph captures the kernels build enqueues as a graph with an event
// recorded after each (events of them at most), replays it reps times and
// returns the mean time per kernel name, largest total first, and of the
// whole graph, in microseconds. Between the events no kernel is launched
// programmatically (its predecessor is an event record node).
func (g *device) profileGraph(events int, what string, reps int, build func(l *launcher) error) ([]engine.OpStats, float64, error) {
	evs, err := g.newEvents(events)
	if err != nil {
		return nil, 0, err
	}
	defer g.destroyEvents(evs)
	if err := g.beginCapture(); err != nil {
		return nil, 0, err
	}
	l := &launcher{g: g, events: evs}
	err = g.recordExternal(evs[0])
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
		us, err := g.kernelTimes(evs, len(l.names), func(i int, us float64) { per[i] += us / float64(reps) })
		if err != nil {
			return nil, 0, err
		}
		total += us / float64(reps)
	}
	var t opTable
	for i, name := range l.names {
		t.add(name, per[i])
	}
	return t.sorted(), total, nil
}
