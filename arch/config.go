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
//
// The options beyond that: the embedding rows scaled (EmbedScale); RoPE
// on the first RopeDims values of a head only; the logits scaled by
// AttnScale instead of 1/sqrt(head_dim); a learned logit per head in each
// softmax's denominator (Sinks); layers that attend to the last Window
// positions only (Local), with a RoPE of their own (LocalRope); an output
// bias (x = x + Wo att + bo); post-norms (x = x + rmsnorm(Wo att) *
// post_attention_norm, x = x + rmsnorm(Wdown act) * post_ffw_norm).
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
	// normed hidden state of a sequence's last position; PoolRank: a
	// reranker's score of it); PoolNone, the zero value, a language model.
	Pooling Pooling

	// AttnScale multiplies the attention logits q.k; 0 means
	// 1/sqrt(HeadDim). Gemma 3 27B's is 1/sqrt(Hidden/Heads).
	AttnScale float32
	// EmbedScale multiplies the token embedding rows; 0 means none.
	// Gemma's is sqrt(Hidden), rounded to float32.
	EmbedScale float32
	// PostNorm: the outputs of attention and of the feed-forward are
	// RMS-normalized and multiplied by a learned gain before they join
	// the residual stream (RoleAttnPostNorm, RoleFFNPostNorm), as Gemma
	// does.
	PostNorm bool
	// OutBias: the attention output projection adds a learned bias
	// (RoleOBias), as gpt-oss does.
	OutBias bool
	// Sinks: each query head has a learned logit (RoleSinks) that joins
	// the denominator of each of its softmaxes, attending to nothing
	// (gpt-oss).
	Sinks bool
	// Window and Local: layer i with Local[i] is a sliding-window layer,
	// whose query at position q attends only to the keys at positions p
	// with q - p < Window (llama.cpp's LLAMA_SWA_TYPE_STANDARD,
	// transformers' sliding_window). Local is nil or has one entry a
	// layer; Window is positive exactly when some layer is local.
	Window int
	Local  []bool
	// LocalRope is the RoPE of the local layers when LocalRope.Theta is
	// not 0 (Gemma 3: base 10000 and no scaling, its global layers base
	// 1e6 and linear scaling); otherwise they use Rope.
	LocalRope Rope
	// RopeDims is the number of values at the start of each query and
	// key head that RoPE rotates (in pairs within them, of the style of
	// Rope); the rest are left as they are. 0 means HeadDim (Phi-4-mini
	// rotates three quarters).
	RopeDims int
	// FusedQKV: the file holds Q, K and V as one matrix of
	// QDim+2*KVDim rows, Q's first (blk.N.attn_qkv.weight), and
	// FusedGateUp the gate and up matrices as one of 2*FFN rows, the
	// gate's first (blk.N.ffn_up.weight), as Phi-3's files do. Load
	// presents them as RoleQ, RoleK, RoleV, RoleGate and RoleUp matrices
	// viewing row ranges of the fused tensor.
	FusedQKV    bool
	FusedGateUp bool
	// TensorNames gives the GGUF base names of the roles an
	// architecture's files name otherwise than llama.cpp's usual
	// (Role.Tensor): gpt-oss's feed-forward norm is
	// {RoleFFNNorm: "post_attention_norm"}. nil for most.
	TensorNames map[Role]string
}

// RotaryDims returns the number of values of a head RoPE rotates:
// RopeDims, or HeadDim when it is 0.
func (c *Config) RotaryDims() int {
	if c.RopeDims == 0 {
		return c.HeadDim
	}
	return c.RopeDims
}

// AttentionScale returns the factor of the attention logits: AttnScale,
// or 1/sqrt(HeadDim) when it is 0.
func (c *Config) AttentionScale() float32 {
	if c.AttnScale == 0 {
		return DefaultAttnScale(c.HeadDim)
	}
	return c.AttnScale
}

// DefaultAttnScale returns 1/sqrt(headDim) in float32, the scale of the
// attention logits without Config.AttnScale.
func DefaultAttnScale(headDim int) float32 {
	return float32(1 / math.Sqrt(float64(headDim)))
}

// LayerRope returns the RoPE of layer i: LocalRope for a local layer when
// LocalRope.Theta is not 0, else Rope.
func (c *Config) LayerRope(i int) *Rope {
	if c.LayerWindow(i) > 0 && c.LocalRope.Theta != 0 {
		return &c.LocalRope
	}
	return &c.Rope
}

// LayerWindow returns the positions a query of layer i attends to at most:
// Window for a local layer, 0 (all of them) for a global one.
func (c *Config) LayerWindow(i int) int {
	if i >= 0 && i < len(c.Local) && c.Local[i] {
		return c.Window
	}
	return 0
}

// SWAPattern returns Local for layers layers of which, in each period of
// n, all but the last are local, as llama.cpp's set_swa_pattern(n): layer
// i is local when i%n < n-1 (Gemma 3: 6, gpt-oss: 2). A period of 0
// makes every layer local, as llama.cpp's does; of 1 (or less), none.
func SWAPattern(layers, n int) []bool {
	local := make([]bool, layers)
	for i := range local {
		local[i] = n == 0 || n > 1 && i%n < n-1
	}
	return local
}

// TensorName returns the GGUF name of role r's tensor in layer i, as the
// files of c's architecture name it: TensorNames' base name where it has
// one, else r.Tensor(i).
func (c *Config) TensorName(r Role, i int) string {
	if name, ok := c.TensorNames[r]; ok && r < numRoles {
		return r.tensorNamed(name, i)
	}
	return r.Tensor(i)
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
	case c.Act > SwiGLUOAI:
		return fmt.Errorf("%s: unknown activation %v", c.Arch, c.Act)
	case c.RopeDims < 0 || c.RopeDims > c.HeadDim || c.RopeDims%2 != 0:
		return fmt.Errorf("%s: RoPE on %d of a head's %d values; want an even number up to it", c.Arch, c.RopeDims, c.HeadDim)
	case !(c.AttnScale >= 0) || math.IsInf(float64(c.AttnScale), 0):
		return fmt.Errorf("%s: attention scale %v must be finite and not negative", c.Arch, c.AttnScale)
	case !(c.EmbedScale >= 0) || math.IsInf(float64(c.EmbedScale), 0):
		return fmt.Errorf("%s: embedding scale %v must be finite and not negative", c.Arch, c.EmbedScale)
	case c.FusedGateUp && c.MoE.Enabled():
		return fmt.Errorf("%s: a fused gate and up matrix in a mixture of experts", c.Arch)
	}
	if err := c.validateRope(&c.Rope, ""); err != nil {
		return err
	}
	if err := c.validateWindow(); err != nil {
		return err
	}
	if err := c.MoE.validate(); err != nil {
		return fmt.Errorf("%s: %w", c.Arch, err)
	}
	for r, name := range c.TensorNames {
		if r >= numRoles || name == "" {
			return fmt.Errorf("%s: tensor name %q for role %v", c.Arch, name, r)
		}
	}
	return nil
}

// validateRope checks r, the RoPE of the layers that which names ("" for
// the global ones).
func (c *Config) validateRope(r *Rope, which string) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("%s: %s%w", c.Arch, which, err)
	}
	d := c.RotaryDims()
	for _, f := range []struct {
		name    string
		factors []float32
	}{{"frequency", r.FreqFactors}, {"long", r.LongFactors}, {"short", r.ShortFactors}} {
		if n := len(f.factors); f.factors != nil && n != d/2 {
			return fmt.Errorf("%s: %s%d RoPE %s factors for %d rotated values of a head, want %d", c.Arch, which, n, f.name, d, d/2)
		}
	}
	return nil
}

// validateWindow checks the sliding-window options: Local has an entry a
// layer (or none), Window is positive exactly when a layer is local, and
// LocalRope, when set, has Rope's style.
func (c *Config) validateWindow() error {
	if c.Local != nil && len(c.Local) != c.Layers {
		return fmt.Errorf("%s: %d sliding-window flags for %d layers", c.Arch, len(c.Local), c.Layers)
	}
	local := 0
	for _, l := range c.Local {
		if l {
			local++
		}
	}
	switch {
	case c.Window < 0 || c.Window > 1<<24:
		return fmt.Errorf("%s: sliding window %d is out of range", c.Arch, c.Window)
	case c.Window > 0 && local == 0:
		return fmt.Errorf("%s: a sliding window of %d positions and no layer that uses it", c.Arch, c.Window)
	case c.Window == 0 && local > 0:
		return fmt.Errorf("%s: %d sliding-window layers and no window", c.Arch, local)
	}
	if c.LocalRope.Theta == 0 {
		return nil
	}
	if c.LocalRope.Style != c.Rope.Style {
		return fmt.Errorf("%s: the local layers' RoPE style %v differs from the global layers' %v", c.Arch, c.LocalRope.Style, c.Rope.Style)
	}
	return c.validateRope(&c.LocalRope, "local layers: ")
}
