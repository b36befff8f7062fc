package phi3

import "inferno/family"

// checkpoints is Phi3ForCausalLM (Phi-3, Phi-3.5, Phi-4, Phi-4-mini):
// the defaults of transformers' Phi3Config, its fused tensors, and what
// llama.cpp's Phi3MiniModel writes (the rotated part of a head, the
// original context, LongRoPE's factors, the sliding window). Its
// byte-level vocabularies are cl100k's (Phi-4), which llama.cpp's
// converter names "dbrx" as DBRX's, and o200k's (Phi-4-mini, "gpt-4o").
var checkpoints = []family.Checkpoint{{
	HF: "Phi3ForCausalLM", Title: "Phi-3",
	Heads: 32, MaxPos: 4096, Vocab: 32064, Eps: 1e-5,
	QKV:           family.Source{Name: "model.layers.{i}.self_attn.qkv_proj.weight"},
	GateUp:        family.Source{Name: "model.layers.{i}.mlp.gate_up_proj.weight"},
	LongRoPE:      true,
	PartialRotary: true,
	HeadDimKeys:   true,
	SlidingWindow: true,
	Pre:           map[string]string{"llama-bpe": "dbrx", "smaug-bpe": "dbrx"},
}}
