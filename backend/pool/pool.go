// Package pool is the multi-threaded CPU backend: the kernels of package
// simd run on all cores through a persistent pool of worker goroutines.
//
// Each operation is split into chunks (rows of a MatMul; units of
// Attention, a query token of one sequence with one KV head, over all the
// sequences of the batch; tokens of RoPE; rows or ranges of the
// element-wise operations). Each participant (the caller and the workers
// it wakes) owns an equal run of consecutive chunks and takes them in
// order, so that it streams contiguous memory and its prefetches reach
// the chunk it runs next; one that runs out takes chunks from the far end
// of another's run. Every output element is computed by exactly one of
// them with the instructions a single thread would use, so results are
// bitwise identical for every number of threads. Workers spin briefly
// between operations, then sleep.
package pool

import (
	"runtime"
	"sync"
	"sync/atomic"

	"inferno/backend"
	"inferno/backend/simd"
)

// Ops is the SIMD backend on a pool of threads. Its methods must be called
// from one goroutine at a time.
type Ops struct {
	p *pool
}

var _ backend.Ops = (*Ops)(nil)

// New returns a backend running on threads threads, the caller's included:
// it starts threads-1 workers, which live until Close. threads <= 0 means
// DefaultThreads().
func New(threads int) *Ops {
	if threads <= 0 {
		threads = DefaultThreads()
	}
	p := &pool{
		ops:  make([]*simd.Ops, threads),
		done: make(chan struct{}, 1),
	}
	for i := range p.ops {
		p.ops[i] = simd.New()
	}
	p.runs = make([]run, threads)
	p.workers = make([]*worker, threads-1)
	for i := range p.workers {
		w := &worker{wake: make(chan struct{}, 1)}
		p.workers[i] = w
		p.wg.Add(1)
		go p.worker(i+1, w)
	}
	o := &Ops{p: p}
	// Workers reference only p: an Ops dropped without Close stops them.
	runtime.AddCleanup(o, func(p *pool) { p.close() }, p)
	return o
}

// Name returns "pool".
func (o *Ops) Name() string { return "pool" }

// Threads returns the number of threads operations run on, the caller's
// included; it is 1 after Close.
func (o *Ops) Threads() int { return len(o.p.workers) + 1 }

// Close stops the workers. Later operations run on the calling goroutine
// alone.
func (o *Ops) Close() { o.p.close() }

// spinIters is how many times a waiting worker (or caller) checks for work
// (or completion) before it sleeps, some tens of microseconds: long
// enough to span the gap between two operations of a forward pass.
const spinIters = 1 << 14

// run is the chunks lo..hi-1 a participant has yet to take, packed as
// hi<<32 | lo: the owner takes lo, others take hi-1.
type run struct {
	v atomic.Uint64
	_ [56]byte // keep runs on separate cache lines
}

// worker is one pool goroutine's mailbox.
type worker struct {
	gen      atomic.Uint32 // bumped for each job the worker is to join
	sleeping atomic.Bool   // set while parked on wake, or about to be
	wake     chan struct{} // capacity 1
	_        [64]byte      // keep workers' state on separate cache lines
}

// pool is the state shared by the caller and the workers.
type pool struct {
	ops  []*simd.Ops // scratch of each participant; [0] is the caller's
	acts simd.Acts   // the activations of the current MatMul

	job     job
	runs    []run        // each participant's chunks, [0] the caller's
	pending atomic.Int32 // workers still in the current job

	mainSleeping atomic.Bool
	done         chan struct{} // capacity 1

	workers []*worker
	closing atomic.Bool
	closed  bool
	wg      sync.WaitGroup
}

// run executes p.job: the caller wakes up to chunks-1 workers, takes chunks
// itself, and waits for the workers it woke.
func (p *pool) run() {
	j := &p.job
	j.chunks = (j.total + j.size - 1) / j.size
	nw := min(len(p.workers), j.chunks-1)
	if nw <= 0 {
		j.size, j.chunks = j.total, 1 // one call over everything
		p.do(0, 0)
		return
	}
	parts := nw + 1
	for i := range parts {
		lo, hi := uint64(i*j.chunks/parts), uint64((i+1)*j.chunks/parts)
		p.runs[i].v.Store(hi<<32 | lo)
	}
	for i := parts; i < len(p.runs); i++ {
		p.runs[i].v.Store(0)
	}
	p.pending.Store(int32(nw))
	for _, w := range p.workers[:nw] {
		w.gen.Add(1)
		if w.sleeping.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	p.work(0)
	p.waitDone()
}

// work takes and runs chunks of the current job until none are left: its
// own run first, in order, then from the ends of the others' runs. Runs of
// participants that were not woken are empty.
func (p *pool) work(id int) {
	for {
		c, ok := p.runs[id].takeFirst()
		if !ok {
			break
		}
		p.do(id, c)
	}
	for i := 1; i < len(p.runs); i++ {
		r := &p.runs[(id+i)%len(p.runs)]
		for {
			c, ok := r.takeLast()
			if !ok {
				break
			}
			p.do(id, c)
		}
	}
}

// takeFirst takes the first chunk of r.
func (r *run) takeFirst() (int, bool) {
	for {
		v := r.v.Load()
		lo, hi := v&(1<<32-1), v>>32
		if lo >= hi {
			return 0, false
		}
		if r.v.CompareAndSwap(v, hi<<32|(lo+1)) {
			return int(lo), true
		}
	}
}

// takeLast takes the last chunk of r.
func (r *run) takeLast() (int, bool) {
	for {
		v := r.v.Load()
		lo, hi := v&(1<<32-1), v>>32
		if lo >= hi {
			return 0, false
		}
		if r.v.CompareAndSwap(v, (hi-1)<<32|lo) {
			return int(hi - 1), true
		}
	}
}

func (p *pool) worker(id int, w *worker) {
	defer p.wg.Done()
	var seen uint32
	for {
		w.waitJob(seen)
		seen++
		if p.closing.Load() {
			return
		}
		p.work(id)
		if p.pending.Add(-1) == 0 && p.mainSleeping.CompareAndSwap(true, false) {
			p.done <- struct{}{}
		}
	}
}

// waitJob returns once w.gen differs from seen: it spins, then parks until
// the caller, seeing sleeping set, sends a token. A token is only a hint:
// one sent late, for a job the worker already saw while spinning, must not
// end a later wait, so the worker checks gen again after every token, and
// takes any token that is on its way before it returns.
func (w *worker) waitJob(seen uint32) {
	for i := range spinIters {
		if w.gen.Load() != seen {
			return
		}
		if i%64 == 63 {
			runtime.Gosched()
		}
	}
	for {
		// A swap, not a store: a read-modify-write orders the flag before
		// the load of gen however the atomics are implemented. Under
		// qemu's arm64 emulation a job's wake-up was lost once with a
		// store (CI, 2026-12-06: worker and caller both asleep), most
		// likely the store passing the load; not reproduced.
		w.sleeping.Swap(true)
		if w.gen.Load() != seen {
			if !w.sleeping.CompareAndSwap(true, false) {
				<-w.wake // the caller cleared the flag: its token is on the way
			}
			return
		}
		<-w.wake
		if w.gen.Load() != seen {
			return
		}
	}
}

// waitDone returns once every worker woken for the job has finished it.
// As in waitJob, a token is only a hint: a worker of the previous job may
// send one late, so pending is checked again after every token.
func (p *pool) waitDone() {
	for i := range spinIters {
		if p.pending.Load() == 0 {
			return
		}
		if i%64 == 63 {
			runtime.Gosched()
		}
	}
	for {
		p.mainSleeping.Swap(true) // as in waitJob
		if p.pending.Load() == 0 {
			if !p.mainSleeping.CompareAndSwap(true, false) {
				<-p.done // a worker cleared the flag: its token is on the way
			}
			return
		}
		<-p.done
		if p.pending.Load() == 0 {
			return
		}
	}
}

func (p *pool) close() {
	if p.closed {
		return
	}
	p.closed = true
	p.closing.Store(true)
	for _, w := range p.workers {
		w.gen.Add(1)
		if w.sleeping.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	p.wg.Wait()
	p.workers = nil
}
