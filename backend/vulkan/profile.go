package vulkan

import (
	"fmt"
	"sort"
	"time"

	"inferno/engine"
)

// Profile times the last Forward's pass, a decode step of B tokens
// (engine.BatchProfiler): its command buffer recorded with a timestamp
// after each dispatch, replayed reps times; each shader's calls and time
// per step, largest first, and the step's time in microseconds.
func (r *BatchRunner) Profile(B, reps int) ([]engine.OpStats, float64, error) {
	sh := r.last
	if sh.tokens != B || sh.prompt {
		return nil, 0, fmt.Errorf("vulkan: profile of a decode step of %d tokens: the last pass was %d tokens", B, sh.tokens)
	}
	reps = max(reps, 1)
	p := &pass{r: r, sh: sh, c: r.c}
	rec, err := r.d.RecordTimed(4096)
	if err != nil {
		return nil, 0, err
	}
	defer rec.Release()
	p.rec = rec
	if err := p.record(); err != nil {
		return nil, 0, err
	}
	if err := rec.End(); err != nil {
		return nil, 0, err
	}
	total := map[string]float64{}
	calls := map[string]int{}
	var step float64
	for range reps {
		if err := r.d.Replay(rec); err != nil {
			return nil, 0, err
		}
		names, ns, err := rec.Times()
		if err != nil {
			return nil, 0, err
		}
		for i, n := range names {
			total[n] += ns[i]
			calls[n]++
			step += ns[i]
		}
	}
	ops := make([]engine.OpStats, 0, len(total))
	for n, t := range total {
		ops = append(ops, engine.OpStats{Name: n, Calls: calls[n] / reps, Total: time.Duration(t / float64(reps))})
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Total > ops[j].Total })
	return ops, step / float64(reps) / 1e3, nil
}
