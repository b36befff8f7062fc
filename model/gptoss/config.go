// Package gptoss is OpenAI's gpt-oss architecture (gpt-oss-20b and
// gpt-oss-120b): its configuration and options as read from a GGUF file,
// described for the backends by package arch (whose doc comment gives a
// layer's computation), and its entry in the registry of architectures.
//
// gpt-oss is a mixture-of-experts decoder with Q, K, V and output biases,
// a learned sink logit per query head in every softmax, NeoX RoPE with
// YaRN scaling (factor 32 over 4096 positions, transformers' untruncated
// correction range), alternate layers attending to a sliding window of
// 128 positions, and in every layer a router with a bias whose top 4
// logits are softmaxed into the weights of 4 of 32 (20b) or 128 (120b)
// experts, each a gated feed-forward with biases and OpenAI's clamped
// SwiGLU. Its files keep the experts in the MXFP4 block format.
// llama.cpp's files name the feed-forward's norm post_attention_norm.
package gptoss

import (
	"fmt"

	"inferno/arch"
	"inferno/gguf"
)

// Architecture is the value of general.architecture for gpt-oss files.
const Architecture = "gpt-oss"

// swaPeriod: every other layer is global, the first local.
const swaPeriod = 2

// ConfigFromGGUF reads the configuration from f's metadata (the keys
// arch.ReadConfig reads under "gpt-oss.", the experts and the sliding
// window) and sets gpt-oss's options.
func ConfigFromGGUF(f *gguf.File) (arch.Config, error) {
	c, err := arch.ReadConfig(f, Architecture)
	if err != nil {
		return arch.Config{}, err
	}
	if !c.MoE.Enabled() {
		return arch.Config{}, fmt.Errorf("gpt-oss: no experts (%s.expert_count)", Architecture)
	}
	Options(&c)
	if err := arch.ReadSlidingWindow(f, &c, swaPeriod); err != nil {
		return arch.Config{}, err
	}
	return c, c.Validate()
}

// Options sets gpt-oss's options on a configuration whose hyperparameters
// are filled in.
func Options(c *arch.Config) {
	c.Bias = true
	c.OutBias = true
	c.Sinks = true
	c.Rope.Style = arch.RopeNeoX
	// transformers computes YaRN's correction range of gpt-oss without
	// rounding it to whole pairs (rope_scaling's truncate: false);
	// llama.cpp rounds it.
	c.Rope.NoTruncate = true
	c.Act = arch.SwiGLUOAI
	c.MoE.Gating = arch.GateSoftmaxTopK
	c.MoE.Bias = true
	c.MoE.NormTopK = false
	c.TensorNames = map[arch.Role]string{arch.RoleFFNNorm: "post_attention_norm"}
}
