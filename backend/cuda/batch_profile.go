package cuda

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"inferno/backend"
)

// Profile replays the decode graph of the bucket of B tokens reps times
// with an event after every kernel, and returns the GPU time per kernel
// name (largest first) and the whole step's, in microseconds. It reruns
// the inputs of the last Forward, which must have been a decode batch of
// that bucket (its keys and values are written again, unchanged); a
// queued lookahead step is waited for and discarded.
func (br *BatchRunner) Profile(B, reps int) ([]backend.OpStats, float64, error) {
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
	events := make([]uintptr, 12*len(br.base.layers)+16)
	defer func() {
		for _, e := range events {
			if e != 0 {
				g.destroyEvent(e)
			}
		}
	}()
	for i := range events {
		var err error
		if events[i], err = g.newEvent(); err != nil {
			return nil, 0, err
		}
	}
	if err := g.beginCapture(); err != nil {
		return nil, 0, err
	}
	l := &launcher{g: g, events: events}
	err := g.recordExternal(events[0])
	if err == nil {
		br.decodeOps(l, B, s, br.lastV)
		err = l.err
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
		if err := g.sync("profiled batch step"); err != nil {
			return nil, 0, err
		}
		for i := range l.names {
			ms, err := g.elapsed(events[i], events[i+1])
			if err != nil {
				return nil, 0, err
			}
			per[i] += float64(ms) * 1000 / float64(reps)
		}
		ms, err := g.elapsed(events[0], events[len(l.names)])
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
