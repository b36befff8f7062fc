// Package gemma3 is the Gemma 3 architecture (the text models, 270M to
// 27B): its configuration and options as read from a GGUF file, described
// for the backends by package arch (whose doc comment gives a layer's
// computation), and its entry in the registry of architectures.
//
// Gemma 3 is a dense decoder whose embedding rows are scaled by
// sqrt(hidden), with QK-norm, NeoX RoPE, norms before and after both
// attention and the feed-forward (llama.cpp's converter adds Gemma's +1 to
// every norm's gains, so they are plain RMSNorm gains in the file), a
// GELU-gated feed-forward (the tanh approximation) and an output head tied
// to the embedding. Five layers in six attend to a sliding window of the
// last 512 (1B) or 1024 positions with RoPE base 10000; the sixth attends
// to everything with base 1e6 and, from 4B on, linear RoPE scaling by 8.
// The attention logits are scaled by query_pre_attn_scalar^-0.5: the head
// size's in most models, hidden/heads in the 27B.
package gemma3

import (
	"fmt"
	"math"

	"inferno/arch"
	"inferno/gguf"
)

// Architecture is the value of general.architecture for Gemma 3 files.
const Architecture = "gemma3"

// localTheta is the RoPE base of Gemma 3's sliding-window layers
// (rope_local_base_freq), which llama.cpp's files do not state.
const localTheta = 10000

// swaPeriod: every sixth layer is global.
const swaPeriod = 6

// layers27B is the layer count by which llama.cpp recognizes Gemma 3 27B,
// whose attention scale is hidden/heads rather than the head size.
const layers27B = 62

// ConfigFromGGUF reads the configuration from f's metadata (the keys
// arch.ReadConfig reads under "gemma3.", the sliding window and its
// pattern) and sets Gemma 3's options. The attention scale is
// gemma3.attention.scale where the file states it (inferno's converter
// writes it from query_pre_attn_scalar when that is not the head size);
// otherwise llama.cpp's rule: hidden/heads for a model of 62 layers (27B),
// the head size for the others.
func ConfigFromGGUF(f *gguf.File) (arch.Config, error) {
	c, err := arch.ReadConfig(f, Architecture)
	if err != nil {
		return arch.Config{}, err
	}
	if c.MoE.Enabled() {
		return arch.Config{}, fmt.Errorf("gemma3: %d experts: Gemma 3 is dense", c.MoE.Experts)
	}
	if v, err := f.Float(Architecture + ".final_logit_softcapping"); err == nil && v != 0 {
		return arch.Config{}, fmt.Errorf("gemma3: final logit soft-capping %v, which Gemma 3 does not have and inferno does not run", v)
	}
	Options(&c)
	if err := arch.ReadSlidingWindow(f, &c, swaPeriod); err != nil {
		return arch.Config{}, err
	}
	if c.Window > 0 && c.LocalRope.Theta == 0 {
		c.LocalRope = arch.Rope{Style: c.Rope.Style, Theta: localTheta}
	}
	if s, err := f.Float(Architecture + ".attention.scale"); err == nil {
		c.AttnScale = float32(s)
	} else if _, present := f.Value(Architecture + ".attention.scale"); present {
		return arch.Config{}, fmt.Errorf("gemma3: %w", err)
	}
	return c, c.Validate()
}

// Options sets Gemma 3's options on a configuration whose hyperparameters
// are filled in: QK-norm, post-norms, NeoX RoPE, GeGLU, the embedding
// scaled by sqrt(hidden), and llama.cpp's attention scale by the number
// of layers (hidden/heads for the 27B's 62, else the default).
func Options(c *arch.Config) {
	c.QKNorm = true
	c.PostNorm = true
	c.Rope.Style = arch.RopeNeoX
	c.LocalRope.Style = arch.RopeNeoX
	c.Act = arch.GeGLU
	c.EmbedScale = float32(math.Sqrt(float64(c.Hidden)))
	c.AttnScale = 0
	if c.Layers == layers27B {
		c.AttnScale = float32(1 / math.Sqrt(float64(c.Hidden/c.Heads)))
	}
}
