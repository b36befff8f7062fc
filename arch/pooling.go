package arch

import (
	"fmt"

	"inferno/gguf"
)

// Pooling is how an embedding model turns the hidden states of a
// sequence into one vector (llama.cpp's pooling_type). A model without
// pooling is a language model: its output rows are logits.
type Pooling uint8

const (
	// PoolNone: no pooling; the model generates text.
	PoolNone Pooling = iota
	// PoolMean averages the final hidden states of every position.
	PoolMean
	// PoolCLS takes the final hidden state of the first position.
	PoolCLS
	// PoolLast takes the final hidden state (after the output norm) of
	// the last position, as Qwen3-Embedding does; the embedding is that
	// vector L2-normalized.
	PoolLast
	// PoolRank scores the sequence with a classifier head on the final
	// normed hidden state of its last position, as llama.cpp runs
	// Qwen3-Reranker: the sequence's output is the probability of "yes"
	// against "no" (package model's RankHead).
	PoolRank
)

var poolingNames = [...]string{PoolNone: "none", PoolMean: "mean", PoolCLS: "cls", PoolLast: "last", PoolRank: "rank"}

// String names the pooling.
func (p Pooling) String() string { return enumString(p, "Pooling", poolingNames[:]) }

// readPooling reads name.pooling_type, llama.cpp's enum llama_pooling_type
// (0 none, 1 mean, 2 cls, 3 last, 4 rank; absent or -1, unspecified:
// none). Last-token pooling and rank pooling are run: a file asking for
// another is refused by name.
func readPooling(f *gguf.File, name string, c *Config) error {
	key := name + ".pooling_type"
	if _, present := f.Value(key); !present {
		return nil
	}
	v, err := f.Int(key)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	switch {
	case v == -1 || v == int64(PoolNone):
		c.Pooling = PoolNone
	case v == int64(PoolLast) || v == int64(PoolRank):
		c.Pooling = Pooling(v)
	case v > 0 && v < int64(len(poolingNames)):
		return fmt.Errorf("%s: %s pooling (%s = %d) is not run; inferno runs last-token pooling (3) and rank pooling (4)", name, Pooling(v), key, v)
	default:
		return fmt.Errorf("%s: %s = %d is not a pooling type (0 none, 1 mean, 2 cls, 3 last, 4 rank)", name, key, v)
	}
	return nil
}

// Embedding reports whether c is an embedding model (a pooling other
// than PoolNone): its output is the pooled final hidden state (a
// reranker's: its score), not logits.
func (c *Config) Embedding() bool { return c.Pooling != PoolNone }
