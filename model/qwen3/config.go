// Package qwen3 is the Qwen3 architecture: its configuration, its weights as
// read from a GGUF file, and its forward pass on the CPU.
//
// One layer, with x the residual stream of one token:
//
//	h = rmsnorm(x) * attn_norm
//	q = rope(rmsnorm_per_head(Wq h) * q_norm); k = rope(rmsnorm_per_head(Wk h) * k_norm); v = Wv h
//	x = x + Wo softmax(q k^T / sqrt(head_dim), causal) v     (grouped-query: KV head = head / (heads/kv_heads))
//	h = rmsnorm(x) * ffn_norm
//	x = x + Wdown (silu(Wgate h) * Wup h)
//
// and after the last layer, logits = Woutput (rmsnorm(x) * output_norm),
// where Woutput is the token embedding when the file has no output.weight.
package qwen3

import (
	"fmt"
	"math"

	"inferno/gguf"
)

// Architecture is the value of general.architecture for Qwen3 files.
const Architecture = "qwen3"

// Config holds the hyperparameters of a Qwen3 model, read from GGUF metadata.
type Config struct {
	Layers        int     // qwen3.block_count
	Hidden        int     // qwen3.embedding_length
	FFN           int     // qwen3.feed_forward_length
	Heads         int     // qwen3.attention.head_count
	KVHeads       int     // qwen3.attention.head_count_kv
	HeadDim       int     // qwen3.attention.key_length (not Hidden/Heads)
	Vocab         int     // rows of token_embd.weight
	ContextLength int     // qwen3.context_length
	RopeTheta     float64 // qwen3.rope.freq_base
	Eps           float32 // qwen3.attention.layer_norm_rms_epsilon
}

// QDim returns the width of all query heads together.
func (c *Config) QDim() int { return c.Heads * c.HeadDim }

// KVDim returns the width of all key (or value) heads together.
func (c *Config) KVDim() int { return c.KVHeads * c.HeadDim }

// ConfigFromGGUF reads the configuration from f's metadata. The vocabulary
// size comes from the token embedding's shape.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	arch, err := f.String("general.architecture")
	if err != nil {
		return Config{}, fmt.Errorf("qwen3: %w", err)
	}
	if arch != Architecture {
		return Config{}, fmt.Errorf("qwen3: unsupported architecture %q (inferno runs %q models)", arch, Architecture)
	}
	var c Config
	ints := []struct {
		key string
		dst *int
	}{
		{"block_count", &c.Layers},
		{"embedding_length", &c.Hidden},
		{"feed_forward_length", &c.FFN},
		{"attention.head_count", &c.Heads},
		{"attention.head_count_kv", &c.KVHeads},
		{"attention.key_length", &c.HeadDim},
		{"context_length", &c.ContextLength},
	}
	for _, p := range ints {
		n, err := f.Int(Architecture + "." + p.key)
		if err != nil {
			return Config{}, fmt.Errorf("qwen3: %w", err)
		}
		if n <= 0 || n > 1<<24 {
			return Config{}, fmt.Errorf("qwen3: %s.%s = %d is out of range", Architecture, p.key, n)
		}
		*p.dst = int(n)
	}
	if v, err := f.Int(Architecture + ".attention.value_length"); err == nil && int(v) != c.HeadDim {
		return Config{}, fmt.Errorf("qwen3: attention.value_length %d differs from key_length %d, which Qwen3 does not do", v, c.HeadDim)
	}
	if c.RopeTheta, err = f.Float(Architecture + ".rope.freq_base"); err != nil {
		return Config{}, fmt.Errorf("qwen3: %w", err)
	}
	eps, err := f.Float(Architecture + ".attention.layer_norm_rms_epsilon")
	if err != nil {
		return Config{}, fmt.Errorf("qwen3: %w", err)
	}
	c.Eps = float32(eps)
	emb, ok := f.Tensor("token_embd.weight")
	if !ok {
		return Config{}, fmt.Errorf("qwen3: missing tensor %q", "token_embd.weight")
	}
	if len(emb.Shape) != 2 || emb.Shape[1] == 0 || emb.Shape[1] > 1<<24 {
		return Config{}, fmt.Errorf("qwen3: tensor %q: shape %v, want [%d vocab]", emb.Name, emb.Shape, c.Hidden)
	}
	c.Vocab = int(emb.Shape[1])
	return c, c.Validate()
}

// Validate checks that the hyperparameters are in range and fit together.
func (c *Config) Validate() error {
	for _, p := range []struct {
		name string
		v    int
	}{{"layers", c.Layers}, {"hidden size", c.Hidden}, {"feed-forward size", c.FFN}, {"heads", c.Heads},
		{"KV heads", c.KVHeads}, {"head dimension", c.HeadDim}, {"vocabulary", c.Vocab}, {"context length", c.ContextLength}} {
		if p.v <= 0 || p.v > 1<<24 {
			return fmt.Errorf("qwen3: %s %d is out of range", p.name, p.v)
		}
	}
	switch {
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("qwen3: %d query heads are not a multiple of %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim%2 != 0:
		return fmt.Errorf("qwen3: head dimension %d is odd; RoPE needs pairs", c.HeadDim)
	case !(c.RopeTheta > 0) || math.IsInf(c.RopeTheta, 0):
		return fmt.Errorf("qwen3: RoPE base %v must be positive and finite", c.RopeTheta)
	case !(c.Eps > 0) || math.IsInf(float64(c.Eps), 0):
		return fmt.Errorf("qwen3: RMS epsilon %v must be positive and finite", c.Eps)
	}
	return nil
}
