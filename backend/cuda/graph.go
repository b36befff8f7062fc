package cuda

import (
	"errors"
	"fmt"
	"time"
)

func (r *Runner) destroyGraphs() {
	for s := range r.exec {
		r.dev.destroyGraph(r.graph[s], r.exec[s])
		r.graph[s], r.exec[s] = 0, 0
	}
}

// capture records the decode step of each slot into a graph and
// instantiates it.
func (r *Runner) capture() error {
	start := time.Now()
	for s := range r.exec {
		if err := r.dev.beginCapture(); err != nil {
			return err
		}
		err := r.decodeLaunches(false, s)
		graph, exec, err2 := r.dev.endCapture()
		if err == nil {
			err = err2
		} else if err2 == nil {
			r.dev.destroyGraph(graph, exec)
		}
		if err != nil {
			r.destroyGraphs()
			return fmt.Errorf("capturing the decode graph: %w", err)
		}
		r.graph[s], r.exec[s] = graph, exec
	}
	r.stats.GraphCaptures++
	r.stats.Capture = time.Since(start)
	return nil
}

// Host staging offsets of a slot's step parameters (token, position,
// step number, take the token from the device) and result (id, step
// number), in the runner's own part of the staging area.
func (r *Runner) paramsOff(slot int) uintptr { return r.hostBase + 32*uintptr(slot) }
func (r *Runner) resultOff(slot int) uintptr {
	return r.hostBase + (hostResultOff - hostParamsOff) + 16*uintptr(slot)
}

// launcher issues kernels, synchronizing after each when sync is set,
// and recording an event after each when profiling.
type launcher struct {
	g      *device
	sync   bool
	pdl    bool // launch with programmatic dependent launch (not with sync)
	count  int
	err    error
	events []uintptr // when profiling: events[i+1] is recorded after op i
	names  []string
}

func (l *launcher) launch(name string, grid [3]uint32, block uint32, smem uint32, args ...uint64) {
	l.launchEx(l.pdl && !l.sync, name, grid, block, smem, args...)
}

func (l *launcher) launchEx(pdl bool, name string, grid [3]uint32, block uint32, smem uint32, args ...uint64) {
	if l.err != nil {
		return
	}
	l.count++
	if l.err = l.g.launchEx(pdl, name, grid, block, smem, args...); l.err == nil && l.sync {
		l.err = l.g.sync(name)
	}
	l.mark(name)
}

func (l *launcher) then(op string, err error) {
	if l.err != nil {
		return
	}
	if l.err = err; err == nil && l.sync {
		l.err = l.g.sync(op)
	}
	l.mark(op)
}

func (l *launcher) mark(name string) {
	if l.err != nil || l.events == nil {
		return
	}
	if len(l.names)+1 >= len(l.events) {
		l.err = errors.New("cuda: profiler ran out of events")
		return
	}
	l.names = append(l.names, name)
	l.err = l.g.recordExternal(l.events[len(l.names)])
}
