package scheduler

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"inferno/engine"
	"inferno/sampling"
)

// modConstraint allows the ids congruent to r modulo 5 for n tokens, then
// only eog; it counts the masks it filled.
type modConstraint struct {
	r, n  int
	eog   int32
	got   int
	done  bool
	fills *atomic.Int64
}

func (c *modConstraint) Active() bool { return true }

func (c *modConstraint) FillMask(mask []uint64) {
	c.fills.Add(1)
	clear(mask)
	if c.got == c.n {
		mask[c.eog/64] |= 1 << (c.eog % 64)
		return
	}
	for id := c.r; id < len(mask)*64; id += 5 {
		mask[id/64] |= 1 << (id % 64)
	}
}

func (c *modConstraint) Accept(id int32) error {
	switch {
	case c.got == c.n && id == c.eog:
		c.done = true
	case c.got < c.n && int(id)%5 == c.r:
		c.got++
	default:
		return fmt.Errorf("token %d not allowed", id)
	}
	return nil
}

func (c *modConstraint) Done() bool { return c.done }

// TestBatcherConstrained: constrained requests batched (their masks
// prepared while the forward pass runs) give the transcripts they give
// alone, and stop where the constraint ends.
func TestBatcherConstrained(t *testing.T) {
	m := tinyModel(t)
	reqs := requests(m.Config.Vocab, 9, 7)
	var fills atomic.Int64
	constrain := func(reqs []engine.Request) []engine.Request {
		out := slices.Clone(reqs)
		for i := range out {
			out[i].MaxTokens = 40
			out[i].EOG = map[int32]bool{3: true}
			out[i].Constraint = &modConstraint{r: i % 5, n: 4 + i%6, eog: 3, fills: &fills}
		}
		return out
	}
	s := newBatcher(t, m, 64, 4, 64, false)
	got, last := runAll(t, s, constrain(reqs))
	picks := 0
	for i, req := range constrain(reqs) {
		want := solo(t, m, req)
		if !slices.Equal(got[i], want) {
			t.Errorf("request %d: batched %v, alone %v", i, got[i], want)
		}
		if n := 4 + i%6; len(got[i]) != n+1 || got[i][n] != 3 || last[i].Finish != engine.FinishStop {
			t.Errorf("request %d: %v, finish %q", i, got[i], last[i].Finish)
		}
		picks += len(got[i])
	}
	// Each pick took one mask, batched and alone.
	if n := fills.Load(); n != int64(2*picks) {
		t.Errorf("%d masks filled for %d picks", n, 2*picks)
	}
}

// TestBatcherDeviceConstrained: on a runner that samples on the device,
// the masks of a step's constrained rows are computed together before the
// step (fillMasks, on several goroutines) and reach the rows; the
// transcripts are those of each request alone, one mask a pick.
func TestBatcherDeviceConstrained(t *testing.T) {
	m := tinyModel(t)
	f, s := newFakeDevice(t, m, 256, Config{Parallel: 8, BatchTokens: 128, Queue: 16})
	reqs := requests(m.Config.Vocab, 8, 5)
	var fills atomic.Int64
	constrain := func(reqs []engine.Request) []engine.Request {
		out := slices.Clone(reqs)
		for i := range out {
			out[i].MaxTokens = 40
			out[i].EOG = map[int32]bool{3: true}
			out[i].Sampling = sampling.Params{Temperature: 1, Seed: uint64(100 + i), HasSeed: true, TopK: 1}
			out[i].Constraint = &modConstraint{r: i % 5, n: 3 + i%5, eog: 3, fills: &fills}
		}
		return out
	}
	got, last := runAll(t, s, constrain(reqs))
	picks := 0
	for i := range reqs {
		if last[i].Err != nil {
			t.Fatalf("request %d: %v", i, last[i].Err)
		}
		n := 3 + i%5
		if len(got[i]) != n+1 || got[i][n] != 3 || last[i].Finish != engine.FinishStop {
			t.Fatalf("request %d: %v, finish %q", i, got[i], last[i].Finish)
		}
		for k, id := range got[i][:n] {
			if int(id)%5 != i%5 {
				t.Errorf("request %d: token %d is %d, outside its mask", i, k, id)
			}
		}
		picks += len(got[i])
	}
	if f.sampled != picks {
		t.Errorf("%d tokens drawn on the device, want %d", f.sampled, picks)
	}
	if n := fills.Load(); n != int64(picks) {
		t.Errorf("%d masks filled for %d picks", n, picks)
	}
}
