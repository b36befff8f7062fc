package engine

import "inferno/batch"

// A BatchRunner runs a model on some backend for many sequences at once.
// Their keys and values live in one pool of fixed-size blocks that the
// runner owns (the storage); which block holds which positions is the
// caller's business (a kvcache.Manager), told to Forward through each
// batch's block tables. A BatchRunner must be used by one goroutine at a
// time.
type BatchRunner interface {
	// Forward runs the tokens of b through the model, storing their keys
	// and values in their sequences' blocks, and computes the logits of
	// b's outputs. b must pass b.Check with the runner's Vocab, MaxLen,
	// BlockSize and Blocks; Forward returns that error otherwise.
	Forward(b *batch.Batch) error
	// Logits returns the logits of output i of the last Forward; the
	// slice is reused by the next Forward.
	Logits(i int) ([]float32, error)
	// Greedy returns the id of output i's largest logit, the lowest id
	// among ties.
	Greedy(i int) (int32, error)
	// CopyBlock copies every row of block src into block dst, keys and
	// values of every layer (a kvcache.Copier: copy-on-write of a shared
	// partial block).
	CopyBlock(dst, src int32) error
	// Vocab returns the number of logits a position has.
	Vocab() int
	// MaxLen returns the most positions one sequence may hold.
	MaxLen() int
	// BlockSize returns the positions a block holds.
	BlockSize() int
	// Blocks returns the number of blocks in the pool.
	Blocks() int
	// Backend names what the runner computes on ("pool", "cuda", ...).
	Backend() string
	// Close releases the runner's resources.
	Close() error
}

// A WindowRunner is a BatchRunner of a model with sliding-window layers
// that keeps those layers' keys and values in a pool of their own, of
// BlockSize-position blocks like the main pool, which then holds only the
// other layers'. A sequence needs, in the window pool, only the blocks of
// the last window positions (a kvcache.Manager with a window pool frees
// the others), so a long context costs what its global layers need.
// Batches name the window pool's blocks in LocalTables (batch.Batch);
// a batch without them uses Tables for both pools. CopyBlock copies a
// block of the main pool only.
type WindowRunner interface {
	BatchRunner
	// WindowPool returns the number of blocks of the window pool and the
	// window of its layers, in positions.
	WindowPool() (blocks, window int)
	// CopyLocalBlock copies every row of the window pool's block src into
	// its block dst.
	CopyLocalBlock(dst, src int32) error
}

// A PoolSizer tells the memory its KV pools take (for a WindowRunner the
// main pool and the window pool together), and what the main pool would
// take with every layer's keys and values in it (full attention's cost).
type PoolSizer interface {
	PoolBytes() (pool, full int64)
}
