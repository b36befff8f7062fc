package cuda

import (
	"sort"
	"time"

	"inferno/backend"
)

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
