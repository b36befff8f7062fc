package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"inferno/batch"
	"inferno/engine"
	"inferno/kvcache"
	"inferno/sampling"
	"inferno/tokenizer"
)

// Config sizes a Batcher.
type Config struct {
	// Parallel is the most sequences running at once (at least 1).
	Parallel int
	// BatchTokens is the most tokens one forward pass runs: every
	// decoding sequence's next token, then chunks of prompts (0: 512; at
	// least Parallel).
	BatchTokens int
	// Prefills is the most sequences whose prompt chunks join one forward
	// pass (0: 2). Embedding requests (engine.Request.Embed), whose prompt
	// is all they run, are not counted: as many join a pass as
	// BatchTokens holds.
	Prefills int
	// Queue is the most requests that wait for a place.
	Queue int
	// PrefixCache keeps the KV blocks of finished prompts and
	// generations, so a request that starts with the same tokens (a
	// system prompt, the earlier turns of a conversation) reuses them.
	// It needs a runner whose logits do not depend on how a sequence was
	// split into forward passes (engine.SplitInvariant), or accepts that
	// a reused prefix changes the logits within rounding.
	PrefixCache bool
	// Tokenizer decodes the generated text (nil: tokens only).
	Tokenizer *tokenizer.Tokenizer
	// OnStep, when not nil, is called after every forward pass from the
	// scheduler's goroutine; it must not block.
	OnStep func(StepInfo)
	// Pool turns the final normed hidden state of an embedding request's
	// last prompt token into its Event.Embedding, on the scheduler's
	// goroutine; it must not keep hidden. Nil: engine.Normalize
	// (last-token pooling). A reranker's is its classifier head
	// (model.RankHead.Score).
	Pool func(hidden []float32) ([]float32, error)
}

// StepInfo describes one forward pass of a Batcher.
type StepInfo struct {
	Sequences int // sequences in the batch
	Decode    int // of which decoding (one token each)
	Tokens    int // tokens run
	Duration  time.Duration
}

// Batcher is a Scheduler that runs continuous batching: every step is one
// forward pass over the next token of every decoding sequence and a chunk
// of the prompts of up to Config.Prefills others (chunked prefill), so a
// long prompt delays the running streams by one chunk at most; requests
// join between steps and leave as they finish or are cancelled. The
// sequences' keys and values live in the runner's pool of blocks, handed
// out by a kvcache.Manager; when the pool runs out, the newest running
// sequence is preempted (its blocks released, its tokens run again later)
// and new requests wait.
type Batcher struct {
	r   engine.BatchRunner
	cfg Config
	kv  *kvcache.Manager
	// exact: the runner's logits do not depend on how a sequence was
	// split into passes (engine.SplitInvariant), so a cached prefix gives
	// the bits of computing it again.
	exact bool

	mu      sync.Mutex
	cond    *sync.Cond
	running []*bjob // in arrival order (the oldest first)
	waiting []*bjob // preempted ones first, then arrival order
	closed  bool
	done    chan struct{}
	stats   Stats // the load, updated by the loop under mu

	// The loop's own state, reused every step.
	b       batch.Batch
	entries []entry
	outs    []output
	rows    []sampling.Row // the outputs' sampling on a DeviceSampler
	arrival int64

	masked []*engine.Sequence // the step's constrained sequences (prepareMasks)
	picks  []pick             // the step's picks on the host (preparePicks)
	help   helpers
	// hostPicks: the runner leaves every pick to the host (it is no
	// engine.DeviceSampler), whose samplers read the whole vocabulary
	hostPicks bool

	// la is the runner as an engine.Lookaheader (nil if it is none):
	// before each pass the loop tells it whether the decode step after
	// it is what runs next (setLookahead).
	la      engine.Lookaheader
	ahead   bool // the last pass let la queue the next decode step
	aheadOn bool // what la was last told
}

// bjob is one request in a Batcher.
type bjob struct {
	ctx     context.Context
	req     engine.Request
	stream  *Stream
	seq     *engine.Sequence
	kv      *kvcache.Seq // nil while waiting
	arrival int64
	stopAF  func() bool
	// linger: the request finished at a pass that let the runner queue
	// the next decode step (engine.Lookaheader) before its end was known.
	// Its last event is sent; it stays for that one step (the token it
	// picked, at the next position, its output unread) so that the batch
	// is the step the runner queued, then leaves.
	linger bool
	last   [1]int32 // its last token
	lastAt int      // that token's position
}

// entry is one sequence's run in the step's batch.
type entry struct {
	j   *bjob
	n   int // tokens run
	out int // its output row, or -1
	hid int // its hidden row (the last chunk of an embedding request), or -1
	// decode: the run is one decode step (not a chunk of a prompt or of
	// a preempted sequence's recomputation)
	decode bool
}

// NewBatcher starts a continuous-batching scheduler over r, which the
// scheduler's goroutine uses alone from now on. Close stops it (it does
// not close r).
func NewBatcher(r engine.BatchRunner, cfg Config) (*Batcher, error) {
	if cfg.Parallel < 1 {
		return nil, fmt.Errorf("scheduler: %d parallel sequences (want at least 1)", cfg.Parallel)
	}
	if cfg.BatchTokens == 0 {
		cfg.BatchTokens = 512
	}
	if cfg.BatchTokens < cfg.Parallel {
		return nil, fmt.Errorf("scheduler: %d batch tokens cannot hold a decode step of %d sequences", cfg.BatchTokens, cfg.Parallel)
	}
	if cfg.Prefills == 0 {
		cfg.Prefills = 2
	}
	if cfg.Prefills < 1 || cfg.Queue < 0 {
		return nil, fmt.Errorf("scheduler: %d prefills a step, queue of %d", cfg.Prefills, cfg.Queue)
	}
	bs := r.BlockSize()
	if need := (r.MaxLen() + bs - 1) / bs; r.Blocks() < need {
		return nil, fmt.Errorf("scheduler: a KV pool of %d blocks of %d positions cannot hold one sequence of %d positions", r.Blocks(), bs, r.MaxLen())
	}
	s := &Batcher{r: r, cfg: cfg, done: make(chan struct{}), aheadOn: true}
	s.la, _ = r.(engine.Lookaheader)
	_, dev := r.(engine.DeviceSampler)
	s.hostPicks = !dev
	if si, ok := r.(engine.SplitInvariant); ok {
		s.exact = si.SplitInvariant()
	}
	s.kv = kvcache.NewManager(r.Blocks(), bs, cfg.PrefixCache, r)
	if wr, ok := r.(engine.WindowRunner); ok {
		if lb, w := wr.WindowPool(); lb > 0 {
			// A sequence steps on with its window and one block more.
			if need := (w+bs-1)/bs + 1; lb < need {
				return nil, fmt.Errorf("scheduler: a window pool of %d blocks of %d positions cannot hold a window of %d positions and the next", lb, bs, w)
			}
			s.kv = kvcache.NewWindowManager(r.Blocks(), bs, cfg.PrefixCache, r, kvcache.WindowPool{Blocks: lb, Window: w, Copy: wr.CopyLocalBlock})
		}
	}
	s.cond = sync.NewCond(&s.mu)
	s.updateStats()
	go s.loop()
	return s, nil
}

// Submit implements Scheduler.
func (s *Batcher) Submit(ctx context.Context, req engine.Request) (*Stream, error) {
	if len(req.Prompt) == 0 {
		return nil, errors.New("scheduler: empty prompt")
	}
	if err := engine.CheckRequest(s.r.Vocab(), s.r.MaxLen(), s.cfg.Tokenizer, req); err != nil {
		return nil, err
	}
	if _, ok := s.r.(engine.Embedder); req.Embed && !ok {
		return nil, fmt.Errorf("scheduler: the %s runner does not return hidden states (no embeddings)", s.r.Backend())
	}
	// The sequence (its sampler's vocabulary-sized buffers) is prepared
	// when the request starts, not while it waits.
	j := &bjob{ctx: ctx, req: req, stream: newStream()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if len(s.waiting) >= s.cfg.Queue+max(0, s.cfg.Parallel-len(s.running)) {
		return nil, ErrQueueFull
	}
	s.arrival++
	j.arrival = s.arrival
	s.waiting = append(s.waiting, j)
	s.stats.Waiting = len(s.waiting)
	// A request cancelled while it waits leaves the queue at once; one
	// that runs is dropped by the loop before its next step.
	j.stopAF = context.AfterFunc(ctx, func() {
		s.mu.Lock()
		if i := slices.Index(s.waiting, j); i >= 0 {
			s.waiting = slices.Delete(s.waiting, i, i+1)
			s.stats.Waiting = len(s.waiting)
			j.stream.push(Event{Err: ctx.Err()}, true)
		}
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	s.cond.Broadcast()
	return j.stream, nil
}

// Stats implements Scheduler.
func (s *Batcher) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Close implements Scheduler.
func (s *Batcher) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		for _, j := range s.waiting {
			s.end(j, Event{Err: ErrClosed})
		}
		s.waiting = nil
		s.cond.Broadcast()
	}
	s.mu.Unlock()
	<-s.done
}

// updateStats copies the load into s.stats. The caller holds s.mu.
func (s *Batcher) updateStats() {
	k := s.kv.Stats()
	s.stats = Stats{
		Slots: s.cfg.Parallel, Running: len(s.running), Waiting: len(s.waiting),
		KVUsed: k.Used * k.BlockSize, KVCapacity: k.Blocks * k.BlockSize,
		KV: k, KVWindow: s.kv.LocalStats(), Preemptions: s.stats.Preemptions,
	}
}

// loop runs steps until Close.
func (s *Batcher) loop() {
	defer close(s.done)
	defer s.help.stop()
	for {
		s.mu.Lock()
		for !s.closed && len(s.waiting) == 0 && len(s.running) == 0 {
			s.cond.Wait()
		}
		if s.closed {
			for _, j := range s.running {
				s.end(j, Event{Err: ErrClosed})
			}
			s.running = nil
			s.updateStats()
			s.mu.Unlock()
			return
		}
		s.dropCancelled()
		// Requests that came while the runner may have queued the next
		// step join the pass after it.
		if !s.ahead {
			s.admit()
		}
		s.build()
		s.updateStats()
		s.setLookahead()
		s.mu.Unlock()
		if len(s.entries) == 0 {
			// Nothing could run (every running sequence waits for KV
			// blocks that a finishing one will free): wait for a change.
			time.Sleep(time.Millisecond)
			continue
		}
		s.run()
	}
}

// setLookahead tells a Lookaheader runner whether to queue the decode
// step after this pass: only when the pass is a decode step whose
// sequences all go on and no waiting request could join the next one.
func (s *Batcher) setLookahead() {
	if s.la == nil {
		return
	}
	on := len(s.waiting) == 0 || len(s.running) >= s.cfg.Parallel
	for _, e := range s.entries {
		if !on {
			break
		}
		on = e.decode && !e.j.linger && !e.j.seq.Last()
	}
	s.ahead = on
	if on != s.aheadOn {
		s.la.SetLookahead(on)
		s.aheadOn = on
	}
}

// dropCancelled ends the running requests whose context is done (a
// lingering one stays for its step). The batch then differs from a step
// the runner may have queued. The caller holds s.mu.
func (s *Batcher) dropCancelled() {
	s.running = slices.DeleteFunc(s.running, func(j *bjob) bool {
		if err := j.ctx.Err(); err != nil && !j.linger {
			s.end(j, Event{Err: err})
			s.ahead = false
			return true
		}
		return false
	})
}

// end releases j's blocks and sends its last event. The caller holds s.mu.
func (s *Batcher) end(j *bjob, last Event) {
	if j.kv != nil {
		s.kv.Release(j.kv)
		j.kv = nil
	}
	if j.linger {
		j.seq.Release()
		return
	}
	if j.seq != nil {
		last.Metrics = j.seq.Metrics()
		j.seq.Release()
	}
	j.stopAF()
	j.stream.push(last, true)
}

// admit starts waiting requests, oldest first (a preempted one before
// any new one), while fewer than Parallel run and the KV pool can take
// the rest of the prompt with a block to spare for every running
// sequence. The caller holds s.mu.
func (s *Batcher) admit() {
	for len(s.waiting) > 0 && len(s.running) < s.cfg.Parallel {
		j := s.waiting[0]
		if j.seq == nil {
			seq, err := engine.NewBatchSequence(s.r.Vocab(), s.r.MaxLen(), s.cfg.Tokenizer, j.req)
			if err != nil {
				s.waiting[0], s.waiting = nil, s.waiting[1:]
				s.end(j, Event{Err: err})
				continue
			}
			j.seq = seq
		}
		ids := j.seq.Pending()
		if len(s.running) > 0 && !s.kv.Admits(len(ids), len(s.running)) {
			return
		}
		// A seeded request asks for the same text every time: where a
		// reused prefix would round differently, it computes its prompt.
		var kv *kvcache.Seq
		var err error
		if s.exact || !j.req.Sampling.HasSeed {
			kv, err = s.kv.Start(ids)
		} else {
			kv = s.kv.StartNew(ids)
		}
		s.waiting[0], s.waiting = nil, s.waiting[1:]
		if err != nil {
			s.end(j, Event{Err: fmt.Errorf("scheduler: %w", err)})
			continue
		}
		j.kv = kv
		j.seq.Resume(kv.Cached())
		s.running = append(s.running, j)
	}
}

// build fills the step's batch: the next token of every decoding
// sequence, oldest first (when the pool runs out of blocks, the newest
// running sequence gives its blocks back), then chunks of up to Prefills
// prompts within BatchTokens. The caller holds s.mu.
func (s *Batcher) build() {
	s.b.Reset()
	// Drop the last step's jobs entirely, so that finished ones (their
	// samplers' vocabulary-sized buffers) are not kept alive.
	clear(s.entries[:cap(s.entries)])
	s.entries = s.entries[:0]
	budget := s.cfg.BatchTokens
	for i := 0; i < len(s.running); i++ {
		j := s.running[i]
		if j.linger {
			s.addLinger(j)
			budget--
			continue
		}
		if j.seq.Prefilling() || len(j.seq.Pending()) != 1 {
			continue
		}
		ok := s.kv.Reserve(j.kv, j.seq.Len()+1)
		for !ok && s.preemptNewest(j) {
			if j.kv == nil {
				break
			}
			ok = s.kv.Reserve(j.kv, j.seq.Len()+1)
		}
		if j.kv == nil { // j was the newest: it waits in the queue now
			i--
			continue
		}
		if ok {
			// The block of the position after this step's too, where one
			// is free: a runner that queues the next decode step before
			// this one's token is read (engine.Lookaheader) needs the
			// table to reach it already.
			if next := j.seq.Len() + 2; s.la != nil && !j.seq.Last() && next <= s.r.MaxLen() && s.kv.Free() > 0 {
				s.kv.Reserve(j.kv, next)
			}
			s.add(j, 1, true)
			budget--
		}
	}
	prefills := 0
	for _, j := range s.running {
		if budget <= 0 {
			break
		}
		if j.linger || prefills >= s.cfg.Prefills && !j.req.Embed {
			continue
		}
		ids := j.seq.Pending()
		if !j.seq.Prefilling() && len(ids) == 1 {
			continue
		}
		// A chunk takes what the pool can give, short of preempting.
		room := s.kv.Room(j.kv) - j.seq.Len()
		n := min(len(ids), budget, room)
		if n <= 0 || !s.kv.Reserve(j.kv, j.seq.Len()+n) {
			continue
		}
		s.add(j, n, false)
		budget -= n
		if !j.req.Embed {
			prefills++
		}
	}
}

// add puts the next n pending ids of j into the batch.
func (s *Batcher) add(j *bjob, n int, decode bool) {
	ids := j.seq.Pending()
	last := n == len(ids)
	seq := s.addSeq(j)
	out, hid := -1, -1
	switch {
	case last && j.req.Embed:
		s.b.AddHidden(seq, ids[:n], j.seq.Len())
		hid = len(s.b.Hidden) - 1
	case last:
		s.b.Add(seq, ids[:n], j.seq.Len(), true)
		out = len(s.b.Outputs) - 1
	default:
		s.b.Add(seq, ids[:n], j.seq.Len(), false)
	}
	s.entries = append(s.entries, entry{j: j, n: n, out: out, hid: hid, decode: decode})
}

// addSeq adds j's sequence to the batch, with its window-pool blocks when
// the runner has a window pool.
func (s *Batcher) addSeq(j *bjob) int {
	if w, _ := s.kv.Window(); w > 0 {
		return s.b.AddWindowSeq(j.kv.Table(), j.kv.LocalTable())
	}
	return s.b.AddSeq(j.kv.Table())
}

// addLinger puts the step a lingering request stays for into the batch.
func (s *Batcher) addLinger(j *bjob) {
	seq := s.addSeq(j)
	s.b.Add(seq, j.last[:], j.lastAt, true)
	s.entries = append(s.entries, entry{j: j, n: 1, out: len(s.b.Outputs) - 1, hid: -1, decode: true})
}

// preemptNewest gives back the blocks of the newest running sequence not
// yet in the batch (possibly keep itself) and puts it first in the queue,
// to run its ids again later. It reports false when there is none. The
// caller holds s.mu.
func (s *Batcher) preemptNewest(keep *bjob) bool {
	for i := len(s.running) - 1; i >= 0; i-- {
		j := s.running[i]
		if j.linger || j != keep && slices.ContainsFunc(s.entries, func(e entry) bool { return e.j == j }) {
			continue
		}
		if j == keep && i != len(s.running)-1 {
			return false
		}
		s.kv.Release(j.kv)
		j.kv = nil
		j.seq.Preempt()
		s.running = slices.Delete(s.running, i, i+1)
		s.waiting = slices.Insert(s.waiting, 0, j)
		s.stats.Preemptions++
		return true
	}
	return false
}

// run runs the batch and hands every sequence its output. A failed
// forward pass (or a panic: a bug) ends the requests of the batch.
func (s *Batcher) run() {
	t0 := time.Now()
	err := s.sampleOnDevice()
	if err == nil {
		s.prepareMasks()
		err = s.forward()
		s.help.wg.Wait()
	}
	d := time.Since(t0)
	if s.cfg.OnStep != nil {
		info := StepInfo{Sequences: len(s.entries), Tokens: s.b.Len(), Duration: d}
		for _, e := range s.entries {
			if e.decode {
				info.Decode++
			}
		}
		s.cfg.OnStep(info)
	}
	for len(s.outs) < len(s.b.Outputs) {
		s.outs = append(s.outs, output{r: s.r, i: len(s.outs)})
	}
	if err == nil {
		s.preparePicks()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ahead := s.ahead // the runner may have queued the next step
	for _, e := range s.entries {
		j := e.j
		if j.linger {
			s.remove(j, Event{})
			continue
		}
		if err != nil {
			s.remove(j, Event{Err: err})
			continue
		}
		s.kv.Commit(j.kv, j.seq.Pending()[:e.n])
		var out engine.Output
		if e.out >= 0 {
			out = &s.outs[e.out]
		}
		st, err := j.seq.Advance(e.n, out)
		if err != nil {
			s.remove(j, Event{Err: err})
			continue
		}
		if e.hid >= 0 {
			s.remove(j, s.embedding(e.hid))
			continue
		}
		if !st.HasToken {
			continue
		}
		ev := Event{HasToken: true, Token: st.Token, Text: st.Text, Finish: st.Finish}
		ev.Token.Top = slices.Clone(st.Token.Top)
		if st.Finish == "" {
			j.stream.push(ev, false)
			continue
		}
		if ahead && !j.seq.Constrained() && len(j.kv.Table())*s.kv.BlockSize() > j.seq.Len() {
			s.lingerFor(j, ev, st.Token.ID)
			continue
		}
		s.ahead = false
		s.remove(j, ev)
	}
	s.updateStats()
}

// lingerFor sends the last event of j, which finished at a pass that let
// the runner queue the next step, and keeps it for that step (bjob.linger).
func (s *Batcher) lingerFor(j *bjob, last Event, tok int32) {
	last.Metrics = j.seq.Metrics()
	j.stopAF()
	j.stream.push(last, true)
	j.linger = true
	j.last[0] = tok
	j.lastAt = j.seq.Len()
}

// embedding returns the last event of an embedding request whose prompt
// ended at hidden row i of the last forward pass: its final hidden state
// pooled by Config.Pool (L2-normalized by default: last-token pooling).
func (s *Batcher) embedding(i int) Event {
	ev := Event{Finish: engine.FinishStop}
	pool := s.cfg.Pool
	if pool == nil {
		pool = engine.Normalize
	}
	h, err := s.r.(engine.Embedder).Hidden(i) // Submit checked the runner
	if err == nil {
		ev.Embedding, err = pool(h)
	}
	if err != nil {
		return Event{Err: fmt.Errorf("scheduler: embedding: %w", err)}
	}
	return ev
}

// forward runs the batch, turning a panic into an error.
func (s *Batcher) forward() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("scheduler: internal error: %v", p)
		}
	}()
	return s.r.Forward(&s.b)
}

// remove ends running request j. The caller holds s.mu.
func (s *Batcher) remove(j *bjob, last Event) {
	if i := slices.Index(s.running, j); i >= 0 {
		s.running = slices.Delete(s.running, i, i+1)
	}
	s.end(j, last)
}
