package convert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferno/convert"
)

// FuzzReadConfig feeds config.json texts to ReadConfig: it never panics,
// fails in one line, and what it accepts has positive sizes that fit
// together.
func FuzzReadConfig(f *testing.F) {
	for _, s := range []string{
		`{"architectures": ["Qwen3ForCausalLM"], "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32}`,
		`{"architectures": ["Qwen2ForCausalLM"], "hidden_size": 96, "intermediate_size": 200, "num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 2, "rope_theta": 1000000.0, "tie_word_embeddings": true}`,
		`{"architectures": ["LlamaForCausalLM"], "hidden_size": 80, "intermediate_size": 176, "num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 2, "head_dim": 16, "rope_theta": 500000.0,
		  "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}`,
		`{"architectures": ["LlamaForCausalLM"], "hidden_size": 72, "intermediate_size": 120, "num_hidden_layers": 2, "num_attention_heads": 9, "num_key_value_heads": 3,
		  "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 256}}`,
		`{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 64, "rope_scaling": {"type": "linear", "factor": 2}}`,
		`{"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 64, "intermediate_size": 136, "num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 2, "head_dim": 16,
		  "num_local_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 40, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": []}`,
		`{"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 72, "intermediate_size": 120, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1,
		  "num_experts": 6, "num_experts_per_tok": 7, "mlp_only_layers": [1]}`,
		`{"architectures": ["Gemma3ForConditionalGeneration"], "text_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
		  "head_dim": 16, "query_pre_attn_scalar": 24, "sliding_window": 8, "rope_local_base_freq": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}}`,
		`{"architectures": ["Gemma3ForCausalLM"], "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
		  "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}`,
		`{"architectures": ["GptOssForCausalLM"], "hidden_size": 32, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
		  "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 128, "quantization_config": {"quant_method": "mxfp4"},
		  "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "original_max_position_embeddings": 4096}}`,
		`{"architectures": ["Phi3ForCausalLM"], "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
		  "partial_rotary_factor": 0.75, "max_position_embeddings": 1024, "original_max_position_embeddings": 256,
		  "rope_scaling": {"type": "longrope", "long_factor": [1, 2, 3, 4, 5, 6], "short_factor": [1, 1, 1, 1, 1, 1]}}`,
		`{"architectures": ["MistralForCausalLM"], "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32}`,
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, s string) {
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := convert.ReadConfig(dir)
		if err != nil {
			if c != nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ReadConfig: %v, %v", c, err)
			}
			return
		}
		if c.HiddenSize <= 0 || c.HeadDim <= 0 || c.HeadDim%2 != 0 || c.NumKeyValueHeads <= 0 || c.NumAttentionHeads%c.NumKeyValueHeads != 0 ||
			c.VocabSize <= 0 || c.MaxPositionEmbeddings <= 0 || !(c.RopeTheta > 0) ||
			c.NumExperts < 0 || c.NumExpertsPerTok > c.NumExperts || (c.NumExperts > 0) != (c.MoEIntermediateSize > 0) {
			t.Fatalf("accepted %+v", c)
		}
	})
}
