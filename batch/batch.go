// Package batch describes the input of one forward pass over the tokens of
// one or more sequences: which token runs at which position of which
// sequence, where each sequence keeps its keys and values, and whose
// logits are wanted. It is the shape llama.cpp's ubatch and ollama's
// input.Batch give a step; single-sequence generation is the batch of one
// sequence.
package batch

import "fmt"

// A Batch holds the tokens of one forward pass. The tokens of a sequence
// are contiguous in the batch and at consecutive positions, and a sequence
// appears in at most one such run: a decode step adds one token per
// sequence, a prompt chunk adds a run of tokens. Every token attends to
// the positions before it in its own sequence (those run earlier, found
// through the sequence's block table, and those earlier in its run).
type Batch struct {
	Tokens []int32 // token ids
	Pos    []int32 // per token: its position in its sequence
	Seq    []int32 // per token: its sequence, an index into Tables
	// Tables holds, per sequence, the KV cache blocks of its positions:
	// position p lives in row p%BlockSize of block Tables[s][p/BlockSize].
	// A table covers every position up to the sequence's last token in
	// the batch.
	Tables [][]int32
	// LocalTables is nil unless the runner keeps the keys and values of
	// the model's sliding-window layers in a pool of their own (a
	// kvcache.Manager's window pool); then it holds, per sequence, that
	// pool's blocks: position p of a sliding-window layer lives in row
	// p%BlockSize of block LocalTables[s][p/BlockSize]. The blocks of the
	// positions that the sequence's first token in the batch cannot see
	// (wholly before Pos-Window+1) are not read, and may be Hole.
	LocalTables [][]int32
	// Outputs lists, in increasing order, the tokens whose logits the
	// forward pass computes; output i is the logits of token Outputs[i].
	Outputs []int32
	// Hidden lists, in increasing order, the tokens whose final hidden
	// state (after the output norm, before the head) the forward pass
	// returns instead of logits: the last prompt token of an embedding
	// model's sequence. Row i is token Hidden[i]'s (engine.Embedder).
	Hidden []int32

	seen []bool // Check's scratch: sequences met so far
}

// Hole marks an entry of a LocalTables table whose block was freed: its
// positions have fallen out of the window.
const Hole int32 = -1

// A Run is the tokens of one sequence in a batch: Tokens[Start:Start+N],
// at positions Pos..Pos+N-1 of sequence Seq.
type Run struct {
	Seq, Start, N, Pos int
}

// Reset empties the batch, keeping its memory.
func (b *Batch) Reset() {
	b.Tokens, b.Pos, b.Seq = b.Tokens[:0], b.Pos[:0], b.Seq[:0]
	b.Tables, b.Outputs, b.Hidden = b.Tables[:0], b.Outputs[:0], b.Hidden[:0]
	b.LocalTables = b.LocalTables[:0]
}

// AddSeq appends a sequence whose blocks are table and returns its index.
func (b *Batch) AddSeq(table []int32) int {
	b.Tables = append(b.Tables, table)
	return len(b.Tables) - 1
}

// AddWindowSeq appends a sequence whose blocks are table and, in the
// sliding-window layers' pool, local (see LocalTables), and returns its
// index. A batch's sequences are all added by AddSeq or all by
// AddWindowSeq.
func (b *Batch) AddWindowSeq(table, local []int32) int {
	b.LocalTables = append(b.LocalTables, local)
	return b.AddSeq(table)
}

// Add appends tokens of sequence seq at positions pos, pos+1, ...; with
// output, the logits of the last of them are computed.
func (b *Batch) Add(seq int, tokens []int32, pos int, output bool) {
	for i, t := range tokens {
		b.Tokens = append(b.Tokens, t)
		b.Pos = append(b.Pos, int32(pos+i))
		b.Seq = append(b.Seq, int32(seq))
	}
	if output && len(tokens) > 0 {
		b.Outputs = append(b.Outputs, int32(len(b.Tokens)-1))
	}
}

// AddHidden appends tokens of sequence seq at positions pos, pos+1, ...,
// as Add without output, and lists the last of them in Hidden: the pass
// returns its final hidden state.
func (b *Batch) AddHidden(seq int, tokens []int32, pos int) {
	b.Add(seq, tokens, pos, false)
	if len(tokens) > 0 {
		b.Hidden = append(b.Hidden, int32(len(b.Tokens)-1))
	}
}

// Len returns the number of tokens.
func (b *Batch) Len() int { return len(b.Tokens) }

// Runs appends the batch's runs to dst[:0] and returns it. The batch must
// be valid.
func (b *Batch) Runs(dst []Run) []Run {
	dst = dst[:0]
	for t := 0; t < len(b.Tokens); {
		r := Run{Seq: int(b.Seq[t]), Start: t, Pos: int(b.Pos[t])}
		for t < len(b.Tokens) && int(b.Seq[t]) == r.Seq {
			t++
		}
		r.N = t - r.Start
		dst = append(dst, r)
	}
	return dst
}

// Check reports the first way b is malformed: a token id outside
// [0, vocab), a position outside [0, maxLen), slices of different lengths,
// a sequence whose tokens are not one run of consecutive positions, a
// table too short for blockSize-row blocks, a block id outside [0,
// blocks), or outputs (or hidden rows) out of order.
func (b *Batch) Check(vocab, maxLen, blockSize, blocks int) error {
	n := len(b.Tokens)
	if n == 0 {
		return fmt.Errorf("batch: no tokens")
	}
	if len(b.Pos) != n || len(b.Seq) != n {
		return fmt.Errorf("batch: %d tokens, %d positions, %d sequence ids", n, len(b.Pos), len(b.Seq))
	}
	if blockSize <= 0 {
		return fmt.Errorf("batch: block size %d", blockSize)
	}
	if cap(b.seen) < len(b.Tables) {
		b.seen = make([]bool, len(b.Tables))
	}
	seen := b.seen[:len(b.Tables)]
	clear(seen)
	for t := range n {
		if id := b.Tokens[t]; id < 0 || int(id) >= vocab {
			return fmt.Errorf("batch: token %d: id %d is outside the vocabulary [0, %d)", t, id, vocab)
		}
		s, p := b.Seq[t], b.Pos[t]
		if s < 0 || int(s) >= len(b.Tables) {
			return fmt.Errorf("batch: token %d: sequence %d of %d", t, s, len(b.Tables))
		}
		if p < 0 || int(p) >= maxLen {
			return fmt.Errorf("batch: token %d: position %d is outside the context [0, %d)", t, p, maxLen)
		}
		if t > 0 && b.Seq[t-1] == s {
			if b.Pos[t-1]+1 != p {
				return fmt.Errorf("batch: token %d: position %d follows %d", t, p, b.Pos[t-1])
			}
			continue
		}
		if seen[s] {
			return fmt.Errorf("batch: sequence %d appears in two runs", s)
		}
		seen[s] = true
	}
	for t := n - 1; t >= 0; t-- {
		s, p := b.Seq[t], int(b.Pos[t])
		if t+1 < n && b.Seq[t+1] == s {
			continue
		}
		tab := b.Tables[s]
		if len(tab)*blockSize <= p {
			return fmt.Errorf("batch: sequence %d: %d blocks of %d rows do not hold position %d", s, len(tab), blockSize, p)
		}
		for _, blk := range tab[:p/blockSize+1] {
			if blk < 0 || int(blk) >= blocks {
				return fmt.Errorf("batch: sequence %d: block %d of %d", s, blk, blocks)
			}
		}
	}
	if len(b.LocalTables) != 0 && len(b.LocalTables) != len(b.Tables) {
		return fmt.Errorf("batch: %d local tables for %d sequences", len(b.LocalTables), len(b.Tables))
	}
	for i, o := range b.Outputs {
		if o < 0 || int(o) >= n || (i > 0 && o <= b.Outputs[i-1]) {
			return fmt.Errorf("batch: output %d is token %d of %d (outputs must increase)", i, o, n)
		}
	}
	for i, o := range b.Hidden {
		if o < 0 || int(o) >= n || (i > 0 && o <= b.Hidden[i-1]) {
			return fmt.Errorf("batch: hidden row %d is token %d of %d (hidden rows must increase)", i, o, n)
		}
	}
	return nil
}

// CheckLocal reports the first way b's LocalTables do not fit a window
// pool of blocks blocks of blockSize positions for layers that see the
// last window positions: a missing table, or one that does not reach a
// sequence's last token in the batch, or an entry the sequence's tokens
// read (from its first token's window on) that is a Hole or outside
// [0, blocks). It checks what Check does not; call both.
func (b *Batch) CheckLocal(blockSize, blocks, window int) error {
	if len(b.LocalTables) != len(b.Tables) {
		return fmt.Errorf("batch: %d local tables for %d sequences", len(b.LocalTables), len(b.Tables))
	}
	if blockSize <= 0 || window <= 0 {
		return fmt.Errorf("batch: window pool of block size %d, window %d", blockSize, window)
	}
	n := len(b.Tokens)
	for t := 0; t < n; {
		s, first := b.Seq[t], int(b.Pos[t])
		for t < n && b.Seq[t] == s {
			t++
		}
		last := int(b.Pos[t-1])
		tab := b.LocalTables[s]
		if len(tab)*blockSize <= last {
			return fmt.Errorf("batch: sequence %d: %d local blocks of %d rows do not hold position %d", s, len(tab), blockSize, last)
		}
		for j := max(0, first-window+1) / blockSize; j <= last/blockSize; j++ {
			if blk := tab[j]; blk < 0 || int(blk) >= blocks {
				return fmt.Errorf("batch: sequence %d: local block %d (positions from %d) is %d, of %d", s, j, j*blockSize, blk, blocks)
			}
		}
	}
	return nil
}
