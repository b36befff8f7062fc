package convert_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"inferno/convert"
)

// TestFamilyErrors checks that malformed checkpoints of the families
// with layouts of their own are refused in one line naming the tensor or
// setting at fault.
func TestFamilyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func() *checkpoint
		want string
	}{
		{"mxfp4 scales missing", func() *checkpoint {
			c := gptOSSCheckpoint(true, convert.F32)
			c.remove("model.layers.1.mlp.experts.down_proj_scales")
			return c
		}, `tensor "model.layers.1.mlp.experts.down_proj_scales" is missing`},
		{"mxfp4 blocks shape", func() *checkpoint {
			c := gptOSSCheckpoint(true, convert.F32)
			b := c.tensor("model.layers.0.mlp.experts.down_proj_blocks")
			b.Shape = []int64{goExperts, goHidden, 16, 1}
			return c
		}, `tensor "model.layers.0.mlp.experts.down_proj_blocks" has shape [4 32 16 1], config.json implies [4 32 1 16]`},
		{"float experts not transposed", func() *checkpoint {
			c := gptOSSCheckpoint(false, convert.F32)
			c.tensor("model.layers.0.mlp.experts.gate_up_proj").Shape = []int64{goExperts, 2 * goFFN, goHidden}
			return c
		}, `tensor "model.layers.0.mlp.experts.gate_up_proj" has shape [4 64 32], config.json implies [4 32 64]`},
		{"other quantization", func() *checkpoint {
			c := gptOSSCheckpoint(true, convert.F32)
			c.config["quantization_config"] = map[string]any{"quant_method": "fp8"}
			return c
		}, `quantized checkpoints (quant_method "fp8") are not supported`},
		{"longrope factors", func() *checkpoint {
			c := phi3Checkpoint(true, cl100kSplit, false)
			c.config["rope_scaling"].(map[string]any)["long_factor"] = []float64{1, 2, 3, 4, 5}
			return c
		}, "rope_scaling.long_factor has 5 factors, want 6"},
		{"phi3 yarn", func() *checkpoint {
			c := phi3Checkpoint(false, cl100kSplit, false)
			c.config["rope_scaling"] = map[string]any{"type": "yarn", "factor": 4.0}
			return c
		}, `rope_scaling type "yarn" is not supported (Phi-3 checkpoints: unscaled RoPE or longrope)`},
		{"gemma3 stray tensor", func() *checkpoint {
			c := gemma3Checkpoint("Gemma3ForCausalLM", convert.F32)
			r := rng(1)
			c.add(&r, "model.layers.0.mlp.extra.weight", convert.F32, 0, 4)
			return c
		}, `tensor "model.layers.0.mlp.extra.weight" (in model.safetensors) is not part of a Gemma 3 model with 2 layers`},
		{"gemma3 tokenizer.model", func() *checkpoint {
			c := gemma3Checkpoint("Gemma3ForCausalLM", convert.F32)
			c.files["tokenizer.model"] = []byte{0x0a, 0x05, 0x0a}
			return c
		}, "tokenizer.model: field 1: length past the end of the message"},
		{"gemma3 norm missing", func() *checkpoint {
			c := gemma3Checkpoint("Gemma3ForCausalLM", convert.F32)
			c.remove("model.layers.1.post_feedforward_layernorm.weight")
			return c
		}, `tensor "model.layers.1.post_feedforward_layernorm.weight" is missing`},
		{"phi3 fused shape", func() *checkpoint {
			c := phi3Checkpoint(false, cl100kSplit, false)
			c.tensor("model.layers.0.self_attn.qkv_proj.weight").Shape = []int64{phiHidden, phiQKV}
			return c
		}, `tensor "model.layers.0.self_attn.qkv_proj.weight" has shape [64 128], config.json implies [128 64]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.make().write(t, dir)
			_, err := convert.Convert(context.Background(), dir, filepath.Join(t.TempDir(), "out.gguf"), convert.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line containing %q", err, tc.want)
			}
		})
	}
}
