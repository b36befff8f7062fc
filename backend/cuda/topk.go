package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// Limits of the top-k kernels (TOPK_MAX and TOPK_SMEM in kernels.cu).
const (
	topkMax  = 128
	topkSmem = 4096
)

// topkState is a runner's top-k scratch: the partial lists of the first
// stage and the final k values and ids, and their host copy.
type topkState struct {
	pval, pidx, out uint64
	host            []byte
	ids             []int32
	vals            []float32
}

// topkGrid returns the first stage's blocks for k: enough that each chunk
// fits a block's shared memory, as many as the GPU has SMs when the
// partial lists still fit the second stage.
func (r *Runner) topkGrid(k int) int {
	g := (r.cfg.Vocab + topkSmem - 1) / topkSmem
	return max(g, min(r.dev.SMs, topkSmem/k))
}

// MaxTopK returns the largest k that TopK accepts for the model's
// vocabulary. It implements engine.TopKer.
func (r *Runner) MaxTopK() int {
	return min(topkMax, topkSmem/((r.cfg.Vocab+topkSmem-1)/topkSmem))
}

// TopK returns the k largest logits of the last position and their ids,
// largest first and the lower id first among ties, selected on the GPU: a
// sampler with top_k set reads back 8k bytes instead of the whole
// vocabulary's logits. The slices are reused by the next call. It
// implements engine.TopKer.
func (r *Runner) TopK(k int) ([]int32, []float32, error) {
	if r.closed {
		return nil, nil, errors.New("cuda: runner is closed")
	}
	if !r.valid {
		return nil, nil, errors.New("cuda: no logits: run Forward first")
	}
	if k < 1 || k > r.MaxTopK() {
		return nil, nil, fmt.Errorf("cuda: top-k of %d: want 1 to %d", k, r.MaxTopK())
	}
	g := r.dev
	if err := g.enter(); err != nil {
		return nil, nil, err
	}
	defer g.exit()
	t := &r.topk
	if t.out == 0 {
		var err error
		alloc := func(dst *uint64, n int, what string) {
			if err == nil {
				if *dst, err = g.alloc(uint64(n), what); err == nil {
					r.owned = append(r.owned, *dst)
				}
			}
		}
		alloc(&t.pval, 4*topkSmem, "top-k partials")
		alloc(&t.pidx, 4*topkSmem, "top-k partials")
		alloc(&t.out, 8*topkMax, "top-k")
		if err != nil {
			return nil, nil, err
		}
		t.host = make([]byte, 8*topkMax)
		t.ids = make([]int32, topkMax)
		t.vals = make([]float32, topkMax)
	}
	// The slot's logits are complete once its argmax is (the step was
	// waited for); a queued lookahead step writes the other slot.
	grid := r.topkGrid(k)
	if err := g.launch("topk_partial", [3]uint32{uint32(grid)}, 256, 0, r.logits[r.slot], i32(r.cfg.Vocab), i32(k), t.pval, t.pidx); err != nil {
		return nil, nil, err
	}
	if err := g.launch("topk_final", [3]uint32{1}, 256, 0, t.pval, t.pidx, i32(grid*k), i32(k), t.out); err != nil {
		return nil, nil, err
	}
	if err := g.sync("top-k"); err != nil {
		return nil, nil, err
	}
	if err := g.download(t.host[:8*k], t.out); err != nil {
		return nil, nil, err
	}
	vals := unsafe.Slice((*float32)(unsafe.Pointer(&t.host[0])), k)
	ids := unsafe.Slice((*int32)(unsafe.Pointer(&t.host[4*k])), k)
	n := 0
	for i := range k {
		if ids[i] < 0 {
			break
		}
		t.ids[n], t.vals[n] = ids[i], vals[i]
		n++
	}
	return t.ids[:n], t.vals[:n], nil
}
