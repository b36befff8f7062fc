package convert_test

import (
	"fmt"
	"math"
	"testing"

	"inferno/convert"
	"inferno/gguf"
)

// Phi-3 shapes: no head_dim in config.json (hidden / heads = 16), three
// quarters of a head rotated (12 values, 6 pairs).
const (
	phiHidden, phiFFN, phiHeads, phiKV, phiHeadDim, phiLayers, phiVocab = 64, 96, 4, 2, 16, 2, 264
	phiQKV                                                              = phiHeads*phiHeadDim + 2*phiKV*phiHeadDim
)

// phi3Checkpoint is a Phi3ForCausalLM checkpoint with fused qkv_proj and
// gate_up_proj, partial_rotary_factor 0.75, LongRoPE when longrope is
// set, and a byte-level tokenizer splitting by split.
func phi3Checkpoint(longrope bool, split string, ignoreMerges bool) *checkpoint {
	c := &checkpoint{config: map[string]any{
		"architectures": []string{"Phi3ForCausalLM"}, "model_type": "phi3",
		"hidden_size": phiHidden, "intermediate_size": phiFFN, "num_hidden_layers": phiLayers,
		"num_attention_heads": phiHeads, "num_key_value_heads": phiKV, "vocab_size": phiVocab,
		"max_position_embeddings": 1024, "original_max_position_embeddings": 256, "rms_norm_eps": 1e-5,
		"rope_theta": 10000.0, "partial_rotary_factor": 0.75, "sliding_window": nil, "tie_word_embeddings": false,
		"bos_token_id": 257, "eos_token_id": 259,
	}}
	if longrope {
		long, short := make([]float64, 6), make([]float64, 6)
		for i := range long {
			long[i], short[i] = 1+float64(i)*0.5, 1+float64(i)*0.01
		}
		c.config["rope_scaling"] = map[string]any{"type": "longrope", "long_factor": long, "short_factor": short}
		c.config["sliding_window"] = 262144
	}
	c.files = byteLevelTokenizer(split, ignoreMerges, []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"},
		map[string]any{"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>"})
	r := rng(5)
	c.add(&r, "model.embed_tokens.weight", convert.F32, 0, phiVocab, phiHidden)
	c.add(&r, "lm_head.weight", convert.F32, 0, phiVocab, phiHidden)
	c.add(&r, "model.norm.weight", convert.F32, 1, phiHidden)
	for i := range phiLayers {
		p := fmt.Sprintf("model.layers.%d.", i)
		c.add(&r, p+"input_layernorm.weight", convert.F32, 1, phiHidden)
		c.add(&r, p+"post_attention_layernorm.weight", convert.F32, 1, phiHidden)
		c.add(&r, p+"self_attn.qkv_proj.weight", convert.F32, 0, phiQKV, phiHidden)
		c.add(&r, p+"self_attn.o_proj.weight", convert.F32, 0, phiHidden, phiHeads*phiHeadDim)
		c.add(&r, p+"mlp.gate_up_proj.weight", convert.F32, 0, 2*phiFFN, phiHidden)
		c.add(&r, p+"mlp.down_proj.weight", convert.F32, 0, phiHidden, phiFFN)
	}
	return c
}

// TestPhi3 converts Phi-3 checkpoints and checks the file against what
// llama.cpp's Phi3MiniModel writes (conversion/phi.py): its own keys (the
// rotated values of a head, the original context, the sliding window, 0
// when null; no key_length, no rope.scaling.type), LongRoPE's factors as
// rope_factors_long/short.weight with rope.scaling.attn_factor, the fused
// tensors kept as attn_qkv and ffn_up, and Phi-4's cl100k vocabulary
// named "dbrx" (Phi-4-mini's o200k one "gpt-4o"); and that a file without
// LongRoPE loads.
func TestPhi3(t *testing.T) {
	for _, tc := range []struct {
		name         string
		longrope     bool
		split        string
		ignoreMerges bool
		pre          string
		typ          gguf.TensorType
	}{
		{"phi4", false, cl100kSplit, false, "dbrx", gguf.TensorQ8_0},
		{"phi4-ignore-merges", false, cl100kSplit, true, "dbrx", gguf.TensorF32},
		{"phi4-mini", true, o200kSplit, true, "gpt-4o", gguf.TensorF16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := phi3Checkpoint(tc.longrope, tc.split, tc.ignoreMerges)
			dir := t.TempDir()
			c.write(t, dir)
			out := convertTo(t, dir, tc.typ)
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := map[string]any{
				"general.architecture":                      "phi3",
				"phi3.block_count":                          uint32(phiLayers),
				"phi3.context_length":                       uint32(1024),
				"phi3.rope.scaling.original_context_length": uint32(256),
				"phi3.embedding_length":                     uint32(phiHidden),
				"phi3.feed_forward_length":                  uint32(phiFFN),
				"phi3.attention.head_count":                 uint32(phiHeads),
				"phi3.attention.head_count_kv":              uint32(phiKV),
				"phi3.attention.layer_norm_rms_epsilon":     float32(1e-5),
				"phi3.rope.dimension_count":                 uint32(12),
				"phi3.rope.freq_base":                       float32(10000),
				"phi3.attention.sliding_window":             uint32(0),
				"tokenizer.ggml.model":                      "gpt2",
				"tokenizer.ggml.pre":                        tc.pre,
			}
			absent := []string{"phi3.attention.key_length", "phi3.rope.scaling.type", "phi3.vocab_size"}
			global := map[string]tensorWant{
				"token_embd.weight":  {tc.typ, []uint64{phiHidden, phiVocab}},
				"output.weight":      {tc.typ, []uint64{phiHidden, phiVocab}},
				"output_norm.weight": {gguf.TensorF32, []uint64{phiHidden}},
			}
			if tc.longrope {
				want["phi3.attention.sliding_window"] = uint32(262144)
				want["phi3.rope.scaling.attn_factor"] = float32(math.Sqrt(1 + math.Log(4)/math.Log(256)))
				global["rope_factors_long.weight"] = tensorWant{gguf.TensorF32, []uint64{6}}
				global["rope_factors_short.weight"] = tensorWant{gguf.TensorF32, []uint64{6}}
			} else {
				absent = append(absent, "phi3.rope.scaling.attn_factor")
			}
			checkKVs(t, f, want, absent...)
			checkTensors(t, f, layerTensors(phiLayers, global, map[string]tensorWant{
				"attn_norm.weight":   {gguf.TensorF32, []uint64{phiHidden}},
				"attn_qkv.weight":    {tc.typ, []uint64{phiHidden, phiQKV}},
				"attn_output.weight": {tc.typ, []uint64{phiHeads * phiHeadDim, phiHidden}},
				"ffn_norm.weight":    {gguf.TensorF32, []uint64{phiHidden}},
				"ffn_up.weight":      {tc.typ, []uint64{phiHidden, 2 * phiFFN}},
				"ffn_down.weight":    {tc.typ, []uint64{phiFFN, phiHidden}},
			}))
			if tc.longrope {
				checkData(t, f, "rope_factors_long.weight", []float32{1, 1.5, 2, 2.5, 3, 3.5})
				checkData(t, f, "rope_factors_short.weight", []float32{1, 1.01, 1.02, 1.03, 1.04, 1.05})
				return // LongRoPE does not run yet (model/phi3 refuses it)
			}
			if tc.typ == gguf.TensorF32 {
				checkData(t, f, "blk.1.attn_qkv.weight", decode(t, c.tensor("model.layers.1.self_attn.qkv_proj.weight")))
				checkData(t, f, "blk.0.ffn_up.weight", decode(t, c.tensor("model.layers.0.mlp.gate_up_proj.weight")))
			}
			if h := loadFile(t, out).Hyper(); !h.FusedQKV || !h.FusedGateUp || h.RotaryDims() != 12 {
				t.Errorf("loaded configuration: fused QKV %v, fused gate/up %v, %d rotated values", h.FusedQKV, h.FusedGateUp, h.RotaryDims())
			}
		})
	}
}

// TestMistral converts a MistralForCausalLM checkpoint (Mistral Nemo's
// kind: head_dim 32, not hidden / heads = 16; the tekken split) and
// checks it is written as llama.cpp's LlamaModel writes it: architecture
// llama, vocab_size, rope.dimension_count and key_length the head size,
// Q and K rows permuted, the "tekken" pre-tokenizer, add_space_prefix from
// tokenizer_config.json; and that it loads.
func TestMistral(t *testing.T) {
	const hidden, ffn, heads, kv, hd, layers, vocab = 64, 96, 4, 2, 32, 2, 260
	c := &checkpoint{config: map[string]any{
		"architectures": []string{"MistralForCausalLM"}, "model_type": "mistral",
		"hidden_size": hidden, "intermediate_size": ffn, "num_hidden_layers": layers, "num_attention_heads": heads,
		"num_key_value_heads": kv, "head_dim": hd, "vocab_size": vocab, "max_position_embeddings": 1024,
		"rms_norm_eps": 1e-5, "rope_theta": 1e6, "sliding_window": nil, "tie_word_embeddings": false,
		"bos_token_id": 257, "eos_token_id": 258,
	}}
	c.files = byteLevelTokenizer(tekkenSplit, true, []string{"<s>", "</s>", "[INST]"},
		map[string]any{"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": true, "add_prefix_space": false})
	r := rng(9)
	c.add(&r, "model.embed_tokens.weight", convert.F32, 0, vocab, hidden)
	c.add(&r, "lm_head.weight", convert.F32, 0, vocab, hidden)
	c.add(&r, "model.norm.weight", convert.F32, 1, hidden)
	for i := range layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		c.add(&r, p+"input_layernorm.weight", convert.F32, 1, hidden)
		c.add(&r, p+"post_attention_layernorm.weight", convert.F32, 1, hidden)
		c.add(&r, p+"self_attn.q_proj.weight", convert.F32, 0, heads*hd, hidden)
		c.add(&r, p+"self_attn.k_proj.weight", convert.F32, 0, kv*hd, hidden)
		c.add(&r, p+"self_attn.v_proj.weight", convert.F32, 0, kv*hd, hidden)
		c.add(&r, p+"self_attn.o_proj.weight", convert.F32, 0, hidden, heads*hd)
		c.add(&r, p+"mlp.gate_proj.weight", convert.F32, 0, ffn, hidden)
		c.add(&r, p+"mlp.up_proj.weight", convert.F32, 0, ffn, hidden)
		c.add(&r, p+"mlp.down_proj.weight", convert.F32, 0, hidden, ffn)
	}
	dir := t.TempDir()
	c.write(t, dir)
	out := convertTo(t, dir, gguf.TensorF32)
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkKVs(t, f, map[string]any{
		"general.architecture":            "llama",
		"llama.vocab_size":                uint32(vocab),
		"llama.rope.dimension_count":      uint32(hd),
		"llama.attention.key_length":      uint32(hd),
		"llama.attention.value_length":    uint32(hd),
		"llama.embedding_length":          uint32(hidden),
		"llama.attention.head_count":      uint32(heads),
		"llama.attention.head_count_kv":   uint32(kv),
		"llama.context_length":            uint32(1024),
		"llama.rope.freq_base":            float32(1e6),
		"tokenizer.ggml.pre":              "tekken",
		"tokenizer.ggml.add_bos_token":    true,
		"tokenizer.ggml.add_space_prefix": false,
		"tokenizer.ggml.bos_token_id":     uint32(257),
		"tokenizer.ggml.eos_token_id":     uint32(258),
	}, "llama.attention.sliding_window")
	checkTensors(t, f, layerTensors(layers, map[string]tensorWant{
		"token_embd.weight":  {gguf.TensorF32, []uint64{hidden, vocab}},
		"output.weight":      {gguf.TensorF32, []uint64{hidden, vocab}},
		"output_norm.weight": {gguf.TensorF32, []uint64{hidden}},
	}, map[string]tensorWant{
		"attn_norm.weight":   {gguf.TensorF32, []uint64{hidden}},
		"attn_q.weight":      {gguf.TensorF32, []uint64{hidden, heads * hd}},
		"attn_k.weight":      {gguf.TensorF32, []uint64{hidden, kv * hd}},
		"attn_v.weight":      {gguf.TensorF32, []uint64{hidden, kv * hd}},
		"attn_output.weight": {gguf.TensorF32, []uint64{heads * hd, hidden}},
		"ffn_norm.weight":    {gguf.TensorF32, []uint64{hidden}},
		"ffn_gate.weight":    {gguf.TensorF32, []uint64{hidden, ffn}},
		"ffn_up.weight":      {gguf.TensorF32, []uint64{hidden, ffn}},
		"ffn_down.weight":    {gguf.TensorF32, []uint64{ffn, hidden}},
	}))
	// LlamaModel.permute: reshape(heads, 2, hd/2, cols).swapaxes(1, 2):
	// output row h*hd + 2i + j is row h*hd + j*hd/2 + i.
	k := decode(t, c.tensor("model.layers.1.self_attn.k_proj.weight"))
	var rows []int
	for h := range kv {
		for i := range hd / 2 {
			for j := range 2 {
				rows = append(rows, h*hd+j*hd/2+i)
			}
		}
	}
	checkData(t, f, "blk.1.attn_k.weight", hfRows(k, hidden, rows...))
	if h := loadFile(t, out).Hyper(); h.HeadDim != hd || h.Hidden != hidden {
		t.Errorf("loaded configuration: head size %d, hidden %d", h.HeadDim, h.Hidden)
	}
}
