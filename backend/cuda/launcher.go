package cuda

import "errors"

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
	plain  bool // events recorded on the stream (not captured into a graph)
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
		if l.plain {
			// A traced pass (promptTrace) stops timing, not running:
			// its table then lacks the kernels past the events.
			l.events = nil
			return
		}
		l.err = errors.New("cuda: profiler ran out of events")
		return
	}
	l.names = append(l.names, name)
	if l.plain {
		l.err = l.g.record(l.events[len(l.names)])
		return
	}
	l.err = l.g.recordExternal(l.events[len(l.names)])
}
