// Package arch describes the forward pass of a decoder-only transformer
// apart from any model file and any backend: the hyperparameters and
// per-architecture options (Config), the steps a forward pass runs (Plan),
// the weights each step reads by role and layer (Role, Weights), and the
// interface a loaded model exposes to backends (Model).
//
// A model package (model/qwen3) builds this description from its GGUF
// file; the backends (backend/forward on the CPU, backend/cuda on the GPU)
// execute it and import no model package. An executor says which options
// it runs (Feature) and refuses a model that needs another, in one line
// (Config.Check), before it reads a weight.
//
// One dense layer, with x the residual stream of one token:
//
//	h = rmsnorm(x) * attn_norm
//	q = Wq h (+ bq), k = Wk h (+ bk), v = Wv h (+ bv)
//	q = rope(rmsnorm_per_head(q) * q_norm), k = rope(rmsnorm_per_head(k) * k_norm)   (QK-norm, else rope(q), rope(k))
//	x = x + Wo softmax(q k^T / sqrt(head_dim), causal) v     (grouped-query: KV head = head / (heads/kv_heads))
//	h = rmsnorm(x) * ffn_norm
//	x = x + Wdown (act(Wgate h) * Wup h)
//
// and after the last layer, logits = Woutput (rmsnorm(x) * output_norm),
// where Woutput is the token embedding when the head is tied. A
// mixture-of-experts layer replaces the last two lines (MoE).
package arch

import (
	"fmt"
	"math"
)

// Config holds a model's hyperparameters and the options of its
// architecture: everything about a forward pass but the weights.
type Config struct {
	// Arch is the architecture's name, as general.architecture spells it
	// ("qwen3"); errors about the model start with it.
	Arch string

	Layers        int     // transformer blocks
	Hidden        int     // width of the residual stream
	FFN           int     // width of a dense feed-forward layer
	Heads         int     // query heads
	KVHeads       int     // key and value heads (grouped-query attention)
	HeadDim       int     // values of one head (not necessarily Hidden/Heads)
	Vocab         int     // rows of the token embedding
	ContextLength int     // positions the model was trained for
	Eps           float32 // RMSNorm epsilon

	// QKNorm: each query and key head is RMS-normalized and multiplied by
	// a learned gain (q_norm, k_norm) before RoPE, as Qwen3 does.
	QKNorm bool
	// Bias: the Q, K and V projections add a learned bias, as Qwen2 does.
	Bias bool
	// TiedOutput: the output head is the token embedding (the file has no
	// output matrix of its own).
	TiedOutput bool
	// Act is the gated feed-forward activation.
	Act Activation
	// Rope is the rotary position embedding.
	Rope Rope
	// MoE describes a mixture-of-experts feed-forward; its zero value (no
	// experts) means a dense one.
	MoE MoE
	// Pooling makes the model an embedding model (PoolLast: the final
	// normed hidden state of a sequence's last position); PoolNone, the
	// zero value, a language model.
	Pooling Pooling
}

// QDim returns the width of all query heads together.
func (c *Config) QDim() int { return c.Heads * c.HeadDim }

// KVDim returns the width of all key (or value) heads together.
func (c *Config) KVDim() int { return c.KVHeads * c.HeadDim }

// Validate checks that the hyperparameters are in range and fit together.
func (c *Config) Validate() error {
	for _, p := range []struct {
		name string
		v    int
	}{{"layers", c.Layers}, {"hidden size", c.Hidden}, {"feed-forward size", c.FFN}, {"heads", c.Heads},
		{"KV heads", c.KVHeads}, {"head dimension", c.HeadDim}, {"vocabulary", c.Vocab}, {"context length", c.ContextLength}} {
		if p.v <= 0 || p.v > 1<<24 {
			return fmt.Errorf("%s: %s %d is out of range", c.Arch, p.name, p.v)
		}
	}
	switch {
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("%s: %d query heads are not a multiple of %d KV heads", c.Arch, c.Heads, c.KVHeads)
	case c.HeadDim%2 != 0:
		return fmt.Errorf("%s: head dimension %d is odd; RoPE needs pairs", c.Arch, c.HeadDim)
	case !(c.Eps > 0) || math.IsInf(float64(c.Eps), 0):
		return fmt.Errorf("%s: RMS epsilon %v must be positive and finite", c.Arch, c.Eps)
	case c.Act != SwiGLU && c.Act != GeGLU:
		return fmt.Errorf("%s: unknown activation %v", c.Arch, c.Act)
	}
	if err := c.Rope.validate(); err != nil {
		return fmt.Errorf("%s: %w", c.Arch, err)
	}
	if n := len(c.Rope.FreqFactors); c.Rope.FreqFactors != nil && n != c.HeadDim/2 {
		return fmt.Errorf("%s: %d RoPE frequency factors for a head dimension of %d, want %d", c.Arch, n, c.HeadDim, c.HeadDim/2)
	}
	if err := c.MoE.validate(); err != nil {
		return fmt.Errorf("%s: %w", c.Arch, err)
	}
	return nil
}
