package family

import (
	"strconv"
	"strings"

	"inferno/arch"
)

// Checkpoint is one Hugging Face architecture that convert takes: the
// defaults of transformers' configuration class for the settings a
// config.json may leave out, the layout of its tensors, and what
// llama.cpp's converter (convert_hf_to_gguf.py, whose output convert
// reproduces) writes of it beyond the keys every architecture has.
//
// Which tensors a GGUF file of the family holds is the family's
// arch.Config (its Options on the checkpoint's hyperparameters: the
// roles of Config.LayerRoles, named by Config.TensorName); the
// checkpoint says where each one's data is (Tensors, QKV, GateUp).
type Checkpoint struct {
	// HF is config.json's architectures[0] ("Qwen3ForCausalLM").
	HF string
	// Title names it in messages ("Qwen3 embedding").
	Title string
	// Defaults of transformers' configuration class. Heads 0: config.json
	// must state num_attention_heads; HeadDim 0: hidden size / heads;
	// KVHeads 0: as many as the query heads; RopeTheta 0: 10000; Eps 0:
	// 1e-6; LocalRopeTheta: the RoPE base of sliding-window layers (0:
	// none).
	Heads, HeadDim, MaxPos, Vocab, KVHeads int
	RopeTheta, Eps, LocalRopeTheta         float64

	// Tensors gives the checkpoint tensor of each role whose name or
	// layout is not the Llama layout's (LlamaTensors).
	Tensors map[arch.Role]Source
	// QKV and GateUp are the checkpoint's fused tensors of a family whose
	// files keep Q, K and V as one matrix (arch.Config.FusedQKV,
	// blk.N.attn_qkv) and the gate and up projections as one
	// (FusedGateUp, blk.N.ffn_up, the gate's rows first).
	QKV, GateUp Source

	// Permute: the rows of q_proj and k_proj are permuted so that RoPE on
	// adjacent pairs computes transformers' rotate_half (llama.cpp's
	// LlamaModel.permute).
	Permute bool
	// NormShift is added to the gains of every norm (the tensors whose
	// GGUF name ends in _norm.weight): Gemma's RMSNorm multiplies by
	// 1 + weight, and llama.cpp's converter stores 1 + weight.
	NormShift float32
	// TrimVocab: the embedding keeps only the rows of the tokenizer's
	// tokens, as llama.cpp's Gemma 3 converter removes the rows past the
	// vocabulary.
	TrimVocab bool
	// Embedding: the checkpoint is a model without a head, written with a
	// pooling type and a tied head whatever tie_word_embeddings says.
	Embedding bool
	// MoE: every layer's feed-forward is a mixture of experts.
	MoE *CheckpointMoE

	// Llama3: Llama 3's RoPE scaling is accepted and written as the
	// per-pair factors of rope_freqs.weight.
	Llama3 bool
	// RopeScaling lists the RoPE scaling types (config.json's rope_type)
	// written as llama.cpp's converter writes them for every architecture
	// (rope.scaling.type, factor, and YaRN's original context and betas):
	// "linear", "yarn". Others are refused.
	RopeScaling []string
	// LongRoPE: RoPE's keys are those of llama.cpp's Phi-3 converter:
	// rope.scaling.original_context_length always, and a LongRoPE
	// rope_scaling (type longrope or su) as the per-pair factors of
	// rope_factors_long.weight and rope_factors_short.weight with
	// rope.scaling.attn_factor, no rope.scaling.type.
	LongRoPE bool
	// PartialRotary: rope.dimension_count is written, the values of a
	// head that RoPE rotates: int(partial_rotary_factor * hidden) /
	// heads, as llama.cpp's Phi-3 converter computes it.
	PartialRotary bool
	// HeadDimKeys: attention.key_length and value_length are written only
	// when config.json has head_dim, as llama.cpp's converter does; else
	// always.
	HeadDimKeys bool
	// VocabKeys: vocab_size and rope.dimension_count (the head size) are
	// written, as llama.cpp's LlamaModel does.
	VocabKeys bool
	// SlidingWindow: attention.sliding_window is written from
	// config.json's sliding_window (Window when absent, 0 when null), but
	// not when sliding_window_pattern is 1 (every layer global).
	SlidingWindow bool
	Window        int
	// AttnScalar, when not 0, is the default of config.json's
	// query_pre_attn_scalar, whose -0.5th power scales the attention
	// logits (Gemma). When it is not the head size, convert writes
	// NAME.attention.scale, which llama.cpp's converter does not (its
	// loader assumes hidden/heads for Gemma 3 27B, the head size for the
	// others), so that inferno reads the scale from the file.
	AttnScalar int

	// SentencePiece: the vocabulary is tokenizer.model's, a SentencePiece
	// model (tokenizer.ggml.model "llama": scores and token types), when
	// the folder has one, as llama.cpp's _set_vocab_sentencepiece writes
	// it; else tokenizer.json's.
	SentencePiece bool
	// SpacePrefix says what tokenizer.ggml.add_space_prefix is written.
	SpacePrefix SpacePrefix
	// Pre maps the tokenizer.ggml.pre name of the checkpoint's
	// pre-tokenizer, as package tokenizer names it from its split
	// expression, to the name llama.cpp's converter writes for this
	// checkpoint's vocabulary, where they differ: llama.cpp names a
	// tokenizer by the ids it gives a test text, which tell apart
	// vocabularies that split alike (Phi-4's cl100k vocabulary is
	// "dbrx").
	Pre map[string]string
}

// SpacePrefix is what convert writes as tokenizer.ggml.add_space_prefix.
type SpacePrefix uint8

const (
	// SpacePrefixNone: the key is not written.
	SpacePrefixNone SpacePrefix = iota
	// SpacePrefixConfig: tokenizer_config.json's add_prefix_space, when
	// it has one (llama.cpp's LlamaModel).
	SpacePrefixConfig
	// SpacePrefixOff: false, after a SentencePiece vocabulary (Gemma).
	SpacePrefixOff
)

// CheckpointMoE describes a checkpoint's mixture of experts: the defaults
// of its configuration class and the keys convert writes.
type CheckpointMoE struct {
	// Experts, TopK and FFN are the defaults of the experts a layer, the
	// experts a token and an expert's width.
	Experts, TopK, FFN int
	// FFNKey is config.json's key of an expert's width:
	// "moe_intermediate_size" when empty.
	FFNKey string
	// NormKey: expert_weights_norm is written from norm_topk_prob, as
	// llama.cpp's Qwen MoE converters do.
	NormKey bool
}

// Source is where a checkpoint keeps the data of one GGUF tensor.
type Source struct {
	// Name is the checkpoint tensor's name. "{i}" stands for the layer
	// and "{e}" for an expert: a name with "{e}" is one tensor an expert,
	// which convert stacks in expert order into one (the experts of the
	// Hub's Qwen3-MoE checkpoints). Empty: the checkpoint has no such
	// tensor.
	Name string
	// Transposed: the checkpoint holds the tensor with its last two
	// dimensions swapped (gpt-oss's experts: hidden x width for each).
	Transposed bool
	// Of, when more than 1: the checkpoint tensor holds Of tensors of
	// this one's shape in its rows (the rows of each expert's matrix, the
	// values of each expert's vector), and this one is Part, from 0.
	Of, Part int
	// Interleaved: those Of tensors' rows alternate (row r of part p is
	// row r*Of+p), as gpt-oss's gate and up projections do; otherwise
	// they follow one another.
	Interleaved bool
	// MXFP4: the checkpoint holds the tensor as MXFP4 blocks, Name's
	// tensors NAME_blocks (rows x blocks x 16 bytes, value 2j in the low
	// nibble of byte j, 2j+1 in its high one) and NAME_scales (rows x
	// blocks of E8M0 exponents), written as MXFP4 tensors whatever the
	// output type, in ggml's layout (llama.cpp's
	// GptOssModel.repack_mxfp4).
	MXFP4 bool
	// Else is the tensor's place in checkpoints that lack Name's (a
	// float copy of MXFP4 experts, transformers 5's fused experts), or
	// nil.
	Else *Source
}

// Layer returns s with "{i}" replaced by layer i.
func (s Source) Layer(i int) Source {
	s.Name = strings.ReplaceAll(s.Name, "{i}", strconv.Itoa(i))
	if s.Else != nil {
		e := s.Else.Layer(i)
		s.Else = &e
	}
	return s
}

// Stacked reports whether s is one tensor an expert ("{e}" in Name).
func (s Source) Stacked() bool { return strings.Contains(s.Name, "{e}") }

// Expert returns the name of expert e's tensor of a stacked source.
func (s Source) Expert(e int) string { return strings.ReplaceAll(s.Name, "{e}", strconv.Itoa(e)) }

// LlamaTensors is the Llama layout of transformers' checkpoints, which
// most architectures share: the tensor of each role, "{i}" standing for
// the layer. The experts are Qwen-MoE's: one tensor an expert, or
// transformers 5's fused tensors (gate_up_proj: the gate's rows, then
// up's, for each expert).
var LlamaTensors = map[arch.Role]Source{
	arch.RoleEmbed:      {Name: "model.embed_tokens.weight"},
	arch.RoleOutputNorm: {Name: "model.norm.weight"},
	arch.RoleOutput:     {Name: "lm_head.weight"},
	arch.RoleAttnNorm:   {Name: "model.layers.{i}.input_layernorm.weight"},
	arch.RoleQ:          {Name: "model.layers.{i}.self_attn.q_proj.weight"},
	arch.RoleK:          {Name: "model.layers.{i}.self_attn.k_proj.weight"},
	arch.RoleV:          {Name: "model.layers.{i}.self_attn.v_proj.weight"},
	arch.RoleQBias:      {Name: "model.layers.{i}.self_attn.q_proj.bias"},
	arch.RoleKBias:      {Name: "model.layers.{i}.self_attn.k_proj.bias"},
	arch.RoleVBias:      {Name: "model.layers.{i}.self_attn.v_proj.bias"},
	arch.RoleQNorm:      {Name: "model.layers.{i}.self_attn.q_norm.weight"},
	arch.RoleKNorm:      {Name: "model.layers.{i}.self_attn.k_norm.weight"},
	arch.RoleO:          {Name: "model.layers.{i}.self_attn.o_proj.weight"},
	arch.RoleOBias:      {Name: "model.layers.{i}.self_attn.o_proj.bias"},
	arch.RoleFFNNorm:    {Name: "model.layers.{i}.post_attention_layernorm.weight"},
	arch.RoleGate:       {Name: "model.layers.{i}.mlp.gate_proj.weight"},
	arch.RoleUp:         {Name: "model.layers.{i}.mlp.up_proj.weight"},
	arch.RoleDown:       {Name: "model.layers.{i}.mlp.down_proj.weight"},
	arch.RoleRouter:     {Name: "model.layers.{i}.mlp.gate.weight"},
	arch.RoleExpertGate: {Name: "model.layers.{i}.mlp.experts.{e}.gate_proj.weight",
		Else: &Source{Name: "model.layers.{i}.mlp.experts.gate_up_proj", Of: 2, Part: 0}},
	arch.RoleExpertUp: {Name: "model.layers.{i}.mlp.experts.{e}.up_proj.weight",
		Else: &Source{Name: "model.layers.{i}.mlp.experts.gate_up_proj", Of: 2, Part: 1}},
	arch.RoleExpertDown: {Name: "model.layers.{i}.mlp.experts.{e}.down_proj.weight",
		Else: &Source{Name: "model.layers.{i}.mlp.experts.down_proj"}},
}

// Tensor returns the source of role r's tensor in layer i of the
// checkpoint: Tensors' entry, else LlamaTensors'. ok is false when
// neither has one.
func (c *Checkpoint) Tensor(r arch.Role, i int) (s Source, ok bool) {
	if s, ok = c.Tensors[r]; !ok {
		s, ok = LlamaTensors[r]
	}
	if !ok || s.Name == "" {
		return Source{}, false
	}
	return s.Layer(i), true
}
