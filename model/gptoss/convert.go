package gptoss

import (
	"inferno/arch"
	"inferno/family"
)

// experts is where a gpt-oss checkpoint keeps the part (0 gate, 1 up) of
// layer i's experts' gate_up_proj, or its down_proj (part -1): MXFP4
// blocks as OpenAI released them, each expert's gate and up rows
// interleaved, or a float copy (a dequantized or newly made checkpoint)
// whose matrices are transposed (hidden x width).
func experts(proj string, part int) family.Source {
	s := family.Source{Name: "model.layers.{i}.mlp.experts." + proj}
	if part >= 0 {
		s.Of, s.Part, s.Interleaved = 2, part, true
	}
	float := s
	float.Transposed = true
	s.MXFP4, s.Else = true, &float
	return s
}

// expertBias is the part (as experts) of layer i's experts' biases.
func expertBias(proj string, part int) family.Source {
	s := family.Source{Name: "model.layers.{i}.mlp.experts." + proj + "_bias"}
	if part >= 0 {
		s.Of, s.Part, s.Interleaved = 2, part, true
	}
	return s
}

// checkpoints is GptOssForCausalLM: the defaults of transformers'
// GptOssConfig and its tensors, written as llama.cpp's GptOssModel does
// (MXFP4 experts repacked, gate and up de-interleaved, the sliding
// window, YaRN).
var checkpoints = []family.Checkpoint{{
	HF: "GptOssForCausalLM", Title: "gpt-oss",
	Heads: 64, HeadDim: 64, MaxPos: 131072, Vocab: 201088, KVHeads: 8, RopeTheta: 150000, Eps: 1e-5,
	Tensors: map[arch.Role]family.Source{
		arch.RoleSinks:          {Name: "model.layers.{i}.self_attn.sinks"},
		arch.RoleRouter:         {Name: "model.layers.{i}.mlp.router.weight"},
		arch.RoleRouterBias:     {Name: "model.layers.{i}.mlp.router.bias"},
		arch.RoleExpertGate:     experts("gate_up_proj", 0),
		arch.RoleExpertUp:       experts("gate_up_proj", 1),
		arch.RoleExpertDown:     experts("down_proj", -1),
		arch.RoleExpertGateBias: expertBias("gate_up_proj", 0),
		arch.RoleExpertUpBias:   expertBias("gate_up_proj", 1),
		arch.RoleExpertDownBias: expertBias("down_proj", -1),
	},
	MoE:           &family.CheckpointMoE{Experts: 128, TopK: 4, FFN: 2880, FFNKey: "intermediate_size"},
	RopeScaling:   []string{"yarn"},
	SlidingWindow: true,
	Window:        128,
}}
