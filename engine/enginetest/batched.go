package enginetest

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"inferno/batch"
)

// Batched is a scripted engine.BatchRunner: every sequence replays Script,
// as Runner does: its k-th output gets Script[k] as the winner (Fill past
// the end). A sequence is known by the first block of its table (shared
// by sequences that share a cached prefix, but by one running sequence at
// a time); a run of it continues the sequence that last ran there when it
// starts where that one stopped and is the next chunk of its prompt or,
// after an output, one token (the pick fed back, whatever it was), and
// starts the script again otherwise (so a new prompt that adds exactly
// one token to what a finished sequence held would be taken for its
// continuation). Its methods are safe for concurrent use, as far as
// counting goes.
type Batched struct {
	Script     []int32
	Fill       int32
	Vocabulary int
	Max        int // MaxLen
	Size       int // BlockSize
	Pool       int // Blocks
	// Delay is slept in every Forward, to simulate work.
	Delay time.Duration
	// PanicAt, when not 0, makes the PanicAt-th Forward panic.
	PanicAt int

	mu       sync.Mutex
	seqs     map[int32]*scriptSeq // by the first block of the table
	winners  []int32              // per output of the last Forward
	runs     []batch.Run          // Forward's, reused
	logits   []float32
	forwards int
	valid    bool
	closed   bool
}

// NewBatched returns a Batched over a vocabulary of vocab ids whose
// sequences hold up to max positions, in a pool of blocks blocks of
// blockSize positions, that replays script.
func NewBatched(script []int32, vocab, max, blocks, blockSize int) *Batched {
	return &Batched{Script: script, Vocabulary: vocab, Max: max, Pool: blocks, Size: blockSize, seqs: map[int32]*scriptSeq{}}
}

// scriptSeq is where the sequence that last ran at a first block stands.
type scriptSeq struct {
	picks int   // outputs so far
	next  int32 // the position after its last token
	out   bool  // its last run had an output
}

// Forward implements engine.BatchRunner.
func (r *Batched) Forward(b *batch.Batch) error {
	if r.Delay > 0 {
		time.Sleep(r.Delay)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.valid = false
	if r.closed {
		return errors.New("enginetest: closed")
	}
	r.forwards++
	if r.forwards == r.PanicAt {
		panic("enginetest: the scripted panic")
	}
	if err := b.Check(r.Vocabulary, r.Max, r.Size, r.Pool); err != nil {
		return fmt.Errorf("enginetest: %w", err)
	}
	r.winners = r.winners[:0]
	out := 0
	r.runs = b.Runs(r.runs)
	for _, run := range r.runs {
		key := b.Tables[run.Seq][0]
		sq := r.seqs[key]
		cont := sq != nil && int32(run.Pos) == sq.next && (!sq.out || run.N == 1)
		if !cont {
			sq = &scriptSeq{}
			r.seqs[key] = sq
		}
		sq.next = int32(run.Pos + run.N)
		last := int32(run.Start + run.N - 1)
		sq.out = out < len(b.Outputs) && b.Outputs[out] == last
		if !sq.out {
			continue
		}
		out++
		w := r.Fill
		if sq.picks < len(r.Script) {
			w = r.Script[sq.picks]
		}
		sq.picks++
		r.winners = append(r.winners, w)
	}
	if out != len(b.Outputs) {
		return fmt.Errorf("enginetest: an output that is not the last token of its run")
	}
	r.valid = true
	return nil
}

func (r *Batched) winner(i int) (int32, error) {
	if !r.valid || i < 0 || i >= len(r.winners) {
		return 0, fmt.Errorf("enginetest: no output %d", i)
	}
	return r.winners[i], nil
}

// Logits implements engine.BatchRunner: 0 everywhere but 40 at the
// winner of output i.
func (r *Batched) Logits(i int) ([]float32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, err := r.winner(i)
	if err != nil {
		return nil, err
	}
	if r.logits == nil {
		r.logits = make([]float32, r.Vocabulary)
	}
	clear(r.logits)
	r.logits[w] = 40
	return r.logits, nil
}

// Greedy implements engine.BatchRunner.
func (r *Batched) Greedy(i int) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.winner(i)
}

// CopyBlock implements engine.BatchRunner; a scripted runner stores no
// keys and values.
func (r *Batched) CopyBlock(dst, src int32) error {
	if dst < 0 || int(dst) >= r.Pool || src < 0 || int(src) >= r.Pool {
		return fmt.Errorf("enginetest: copy of block %d to %d in a pool of %d", src, dst, r.Pool)
	}
	return nil
}

// Vocab implements engine.BatchRunner.
func (r *Batched) Vocab() int { return r.Vocabulary }

// MaxLen implements engine.BatchRunner.
func (r *Batched) MaxLen() int { return r.Max }

// BlockSize implements engine.BatchRunner.
func (r *Batched) BlockSize() int { return r.Size }

// Blocks implements engine.BatchRunner.
func (r *Batched) Blocks() int { return r.Pool }

// Backend implements engine.BatchRunner.
func (r *Batched) Backend() string { return "scripted" }

// Close implements engine.BatchRunner.
func (r *Batched) Close() error { r.mu.Lock(); r.closed = true; r.mu.Unlock(); return nil }

// Forwards returns the number of Forward calls so far.
func (r *Batched) Forwards() int { r.mu.Lock(); defer r.mu.Unlock(); return r.forwards }
