package cuda

import (
	"errors"
	"fmt"
)

// Staging for the runners of further sequences: each takes seqStagingBytes
// of the page-locked staging area past the logs, for its step parameters
// and results (the first runner uses hostParamsOff).
const (
	seqStagingOff   = hostErrLogOff + hostLogBytes
	seqStagingBytes = 128
	// MaxSequences is the most runners that can share one model's weights.
	MaxSequences = 128
)

// The staging area holds MaxSequences runners' parameters and results.
const _ = uint(1 + (hostStagingBytes-seqStagingOff)/seqStagingBytes - MaxSequences)

// shared is what the runners of one model's sequences share: the device
// (context, stream, kernels) and the weights. The last runner closed
// releases it.
type shared struct {
	refs  int
	slots [MaxSequences]bool // staging slots in use; slot 0 is the first runner's
}

// NewSequence returns a runner for another sequence of the same model on
// the same GPU: it shares r's weights, kernels and stream and has its own
// KV cache, scratch and decode graphs, so serving several sequences needs
// one copy of the weights. Runners that share weights must be used by one
// goroutine at a time (a scheduler interleaves their steps). Each is
// closed on its own; the weights are freed with the last.
func (r *Runner) NewSequence() (*Runner, error) {
	if r.closed {
		return nil, errors.New("cuda: runner is closed")
	}
	sh := r.shared
	slot := -1
	for i := 1; i < len(sh.slots); i++ {
		if !sh.slots[i] {
			slot = i
			break
		}
	}
	if slot < 0 {
		return nil, fmt.Errorf("cuda: at most %d sequences can share a model's weights", MaxSequences)
	}
	s := &Runner{
		m: r.m, cfg: r.cfg, opts: r.opts, tune: r.tune, shape: r.shape, maxLen: r.maxLen,
		dev: r.dev, shared: sh, hostBase: seqStagingOff + uintptr(slot-1)*seqStagingBytes,
		chunk: r.chunk, npad: r.npad,
		embed: r.embed, out: r.out, outNorm: r.outNorm, layers: r.layers, rope: r.rope,
		weightRead: r.weightRead, qkvRows: r.qkvRows,
	}
	s.stats = Stats{Device: r.stats.Device, SMs: r.stats.SMs, ComputeCap: r.stats.ComputeCap, PTX: r.stats.PTX,
		Graph: r.stats.Graph, PDL: r.stats.PDL, Upload: r.stats.Upload}
	g := r.dev
	if err := g.enter(); err != nil {
		return nil, err
	}
	defer g.exit()
	sh.refs++
	sh.slots[slot] = true
	s.seqSlot = slot
	ok := false
	defer func() {
		if !ok {
			s.closeLocked()
		}
	}()
	if err := s.allocScratch(); err != nil {
		return nil, err
	}
	if err := s.reserve(min(s.maxLen, 1024)); err != nil {
		return nil, err
	}
	if !s.opts.NoGraph {
		if err := s.capture(); err != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// release frees what the runner holds of its own (KV cache and scratch)
// and, when it is the last runner of its model, the device and weights.
// The caller has entered and destroyed the runner's graphs.
func (r *Runner) release() {
	if r.shared == nil {
		r.dev.close()
		return
	}
	if r.pending {
		_ = r.dev.sync("closing a sequence")
		r.pending = false
	}
	for i := range r.kc {
		r.dev.free(r.kc[i])
		r.dev.free(r.vc[i])
	}
	r.kc, r.vc = nil, nil
	for _, p := range r.owned {
		r.dev.free(p)
	}
	r.owned = nil
	r.shared.slots[r.seqSlot] = false
	if r.shared.refs--; r.shared.refs == 0 {
		r.dev.close()
	}
}
