package quantize

import (
	"context"
	"io"
	"sync"
)

// A Job computes one piece of output: it appends its bytes to dst (an
// empty buffer the pipeline reuses) and returns the result.
type Job func(dst []byte) ([]byte, error)

// Ordered runs jobs on several goroutines and writes their outputs to a
// writer in the order they were submitted, so the output does not depend
// on the number of workers. At most a window of jobs is in flight, so
// memory stays bounded by the window times a job's output.
type Ordered struct {
	ctx     context.Context
	w       io.Writer
	work    chan *task
	order   chan *task
	pool    sync.Pool
	wg      sync.WaitGroup // workers
	written chan struct{}  // closed when the writer has finished
	onWrite func(n int64)

	mu  sync.Mutex
	err error
}

type task struct {
	job   Job
	after func()
	out   []byte
	err   error
	done  chan struct{}
}

// NewOrdered starts workers goroutines (at least 1) and a writer to w.
// onWrite, when not nil, is called by the writer after each write with the
// number of bytes written.
func NewOrdered(ctx context.Context, w io.Writer, workers int, onWrite func(n int64)) *Ordered {
	workers = max(workers, 1)
	window := 4 * workers
	o := &Ordered{
		ctx: ctx, w: w, onWrite: onWrite,
		work:    make(chan *task, window),
		order:   make(chan *task, window),
		written: make(chan struct{}),
	}
	for range workers {
		o.wg.Add(1)
		go o.worker()
	}
	go o.writer()
	return o
}

func (o *Ordered) worker() {
	defer o.wg.Done()
	for t := range o.work {
		if o.Err() == nil {
			if err := o.ctx.Err(); err != nil {
				t.err = err
			} else {
				buf, _ := o.pool.Get().(*[]byte)
				var dst []byte
				if buf != nil {
					dst = (*buf)[:0]
				}
				t.out, t.err = t.job(dst)
			}
		}
		close(t.done)
	}
}

func (o *Ordered) writer() {
	defer close(o.written)
	for t := range o.order {
		<-t.done
		if t.err != nil {
			o.fail(t.err)
		}
		if o.Err() == nil && len(t.out) > 0 {
			if _, err := o.w.Write(t.out); err != nil {
				o.fail(err)
			} else if o.onWrite != nil {
				o.onWrite(int64(len(t.out)))
			}
		}
		if t.out != nil {
			b := t.out[:0]
			o.pool.Put(&b)
			t.out = nil
		}
		if t.after != nil && o.Err() == nil {
			t.after()
		}
	}
}

func (o *Ordered) fail(err error) {
	o.mu.Lock()
	if o.err == nil {
		o.err = err
	}
	o.mu.Unlock()
}

// Err returns the first error a job, the writer or the context gave.
func (o *Ordered) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Submit queues job; after, when not nil, runs on the writer's goroutine
// once the job's output is written. Submit blocks while the window is
// full, and returns the first error so far (the job is then dropped).
func (o *Ordered) Submit(job Job, after func()) error {
	if err := o.Err(); err != nil {
		return err
	}
	if err := o.ctx.Err(); err != nil {
		o.fail(err)
		return err
	}
	t := &task{job: job, after: after, done: make(chan struct{})}
	select {
	case o.order <- t:
	case <-o.ctx.Done():
		o.fail(o.ctx.Err())
		return o.ctx.Err()
	}
	o.work <- t // never blocks for long: the workers drain it
	return nil
}

// Close waits for every submitted job to be written and returns the first
// error. The Ordered must not be used afterwards.
func (o *Ordered) Close() error {
	close(o.order)
	close(o.work)
	o.wg.Wait()
	<-o.written
	return o.Err()
}
