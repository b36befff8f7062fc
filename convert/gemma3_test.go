package convert_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"inferno/convert"
	"inferno/gguf"
)

// gemma3 shapes: head_dim 16 with query_pre_attn_scalar 24, a SentencePiece
// vocabulary of 267 pieces, one added token and 4 padding rows.
const (
	g3Hidden, g3FFN, g3Heads, g3KV, g3HeadDim, g3Layers = 32, 64, 2, 1, 16, 2
	g3Pieces, g3Vocab                                   = 267, 272
)

// gemma3Pieces are the SentencePiece model's pieces: control tokens, the
// unknown one, 256 byte pieces, normal ones and two user-defined ones.
func gemma3Pieces() []convert.SPMPiece {
	p := []convert.SPMPiece{{Piece: "<pad>", Type: 3}, {Piece: "<eos>", Type: 3}, {Piece: "<bos>", Type: 3}, {Piece: "<unk>", Type: 2}}
	for b := range 256 {
		p = append(p, convert.SPMPiece{Piece: fmt.Sprintf("<0x%02X>", b), Type: 6})
	}
	p = append(p, convert.SPMPiece{Piece: "▁", Score: -1}, convert.SPMPiece{Piece: "a", Score: -2}, convert.SPMPiece{Piece: "b", Score: -3},
		convert.SPMPiece{Piece: "▁a", Score: -4}, convert.SPMPiece{Piece: "ab", Score: -5},
		convert.SPMPiece{Piece: "<start_of_turn>", Type: 4}, convert.SPMPiece{Piece: "<end_of_turn>", Type: 4})
	return p
}

// gemma3Checkpoint is a Gemma 3 checkpoint of hf's kind with weights of
// dtype dt: Gemma3ForCausalLM, or the text model of
// Gemma3ForConditionalGeneration (its settings in text_config, its
// tensors under model.language_model., beside vision tensors), with
// tokenizer.model, tokenizer.json (the same vocabulary in
// transformers' form), tokenizer_config.json and added_tokens.json.
func gemma3Checkpoint(hf string, dt convert.DType) *checkpoint {
	text := map[string]any{
		"hidden_size": g3Hidden, "intermediate_size": g3FFN, "num_hidden_layers": g3Layers,
		"num_attention_heads": g3Heads, "num_key_value_heads": g3KV, "head_dim": g3HeadDim, "vocab_size": g3Vocab,
		"max_position_embeddings": 512, "rms_norm_eps": 1e-6, "rope_theta": 1e6, "rope_local_base_freq": 10000.0,
		"rope_scaling": map[string]any{"rope_type": "linear", "factor": 8.0}, "sliding_window": 8, "sliding_window_pattern": 6,
		"query_pre_attn_scalar": 24, "final_logit_softcapping": nil, "attn_logit_softcapping": nil,
		"hidden_activation": "gelu_pytorch_tanh", "model_type": "gemma3_text",
	}
	c := &checkpoint{config: map[string]any{"architectures": []string{hf}, "bos_token_id": 2, "eos_token_id": []int{1, 106}, "pad_token_id": 0}}
	prefix := "model."
	if hf == "Gemma3ForConditionalGeneration" {
		c.config["text_config"] = text
		c.config["vision_config"] = map[string]any{"hidden_size": 8}
		prefix = "model.language_model."
	} else {
		for k, v := range text {
			c.config[k] = v
		}
	}
	r := rng(7)
	c.add(&r, prefix+"embed_tokens.weight", dt, 0, g3Vocab, g3Hidden)
	for i := range g3Layers {
		p := fmt.Sprintf("%slayers.%d.", prefix, i)
		for _, n := range []string{"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"} {
			c.add(&r, p+n+".weight", dt, 0, g3Hidden)
		}
		c.add(&r, p+"self_attn.q_proj.weight", dt, 0, g3Heads*g3HeadDim, g3Hidden)
		c.add(&r, p+"self_attn.k_proj.weight", dt, 0, g3KV*g3HeadDim, g3Hidden)
		c.add(&r, p+"self_attn.v_proj.weight", dt, 0, g3KV*g3HeadDim, g3Hidden)
		c.add(&r, p+"self_attn.o_proj.weight", dt, 0, g3Hidden, g3Heads*g3HeadDim)
		c.add(&r, p+"self_attn.q_norm.weight", dt, 0, g3HeadDim)
		c.add(&r, p+"self_attn.k_norm.weight", dt, 0, g3HeadDim)
		c.add(&r, p+"mlp.gate_proj.weight", dt, 0, g3FFN, g3Hidden)
		c.add(&r, p+"mlp.up_proj.weight", dt, 0, g3FFN, g3Hidden)
		c.add(&r, p+"mlp.down_proj.weight", dt, 0, g3Hidden, g3FFN)
	}
	c.add(&r, prefix+"norm.weight", dt, 0, g3Hidden)
	if hf == "Gemma3ForConditionalGeneration" {
		c.add(&r, "model.vision_tower.vision_model.embeddings.patch_embedding.weight", dt, 0, 8, 3)
		c.add(&r, "model.multi_modal_projector.mm_input_projection_weight", dt, 0, 8, g3Hidden)
	}

	pieces := gemma3Pieces()
	vocab := map[string]int{}
	for i, p := range pieces {
		vocab[p.Piece] = i
	}
	var added []map[string]any
	dec := map[string]any{}
	for _, id := range []int{0, 1, 2, 3, 265, 266} {
		added = append(added, map[string]any{"id": id, "content": pieces[id].Piece, "special": true, "normalized": false})
		dec[fmt.Sprint(id)] = map[string]any{"content": pieces[id].Piece, "special": true}
	}
	dec["900"] = map[string]any{"content": "<beyond>", "special": true} // past vocab_size: ignored
	tj := map[string]any{
		"added_tokens": added,
		"normalizer":   map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single": []any{map[string]any{"SpecialToken": map[string]any{"id": "<bos>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": [][]string{{"▁", "a"}, {"a", "b"}},
			"unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true},
	}
	tc := map[string]any{"add_bos_token": true, "add_eos_token": false, "bos_token": "<bos>", "eos_token": "<eos>",
		"pad_token": "<pad>", "unk_token": "<unk>", "added_tokens_decoder": dec, "chat_template": "{{ bos_token }}gemma",
		"tokenizer_class": "GemmaTokenizer"}
	tjb, _ := json.Marshal(tj)
	tcb, _ := json.Marshal(tc)
	c.files = map[string][]byte{
		"tokenizer.model":       convert.SPMModel(pieces),
		"tokenizer.json":        tjb,
		"tokenizer_config.json": tcb,
		"added_tokens.json":     []byte(`{"<image_soft_token>": 267}`),
	}
	return c
}

// TestGemma3 converts Gemma 3 checkpoints and checks the file against
// what llama.cpp's Gemma3Model writes (convert_hf_to_gguf.py's
// conversion/gemma.py, with TextModel's keys): the metadata, the
// SentencePiece vocabulary (_create_vocab_sentencepiece), the tensors'
// names, types and shapes, every norm's gains + 1, the multimodal
// model's text part; and that the file opens as a model.
func TestGemma3(t *testing.T) {
	for _, tc := range []struct {
		hf  string
		dt  convert.DType
		typ gguf.TensorType
	}{
		{"Gemma3ForCausalLM", convert.F32, gguf.TensorF32},
		{"Gemma3ForCausalLM", convert.F16, gguf.TensorQ8_0},
		{"Gemma3ForConditionalGeneration", convert.BF16, gguf.TensorBF16},
	} {
		t.Run(fmt.Sprintf("%s-%s-to-%s", tc.hf, tc.dt, tc.typ), func(t *testing.T) {
			c := gemma3Checkpoint(tc.hf, tc.dt)
			dir := t.TempDir()
			c.write(t, dir)
			out := convertTo(t, dir, tc.typ)
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ft := map[gguf.TensorType]uint32{gguf.TensorF32: 0, gguf.TensorQ8_0: 7, gguf.TensorBF16: 32}[tc.typ]
			checkKVs(t, f, map[string]any{
				"general.architecture":                    "gemma3",
				"general.file_type":                       ft,
				"gemma3.block_count":                      uint32(g3Layers),
				"gemma3.context_length":                   uint32(512),
				"gemma3.embedding_length":                 uint32(g3Hidden),
				"gemma3.feed_forward_length":              uint32(g3FFN),
				"gemma3.attention.head_count":             uint32(g3Heads),
				"gemma3.attention.head_count_kv":          uint32(g3KV),
				"gemma3.attention.key_length":             uint32(g3HeadDim),
				"gemma3.attention.value_length":           uint32(g3HeadDim),
				"gemma3.attention.layer_norm_rms_epsilon": float32(1e-6),
				"gemma3.rope.freq_base":                   float32(1e6),
				"gemma3.rope.freq_base_swa":               float32(10000),
				"gemma3.rope.scaling.type":                "linear",
				"gemma3.rope.scaling.factor":              float32(8),
				"gemma3.attention.sliding_window":         uint32(8),
				"gemma3.attention.scale":                  float32(1 / math.Sqrt(24)),
				"tokenizer.ggml.model":                    "llama",
				"tokenizer.ggml.pre":                      "default",
				"tokenizer.ggml.bos_token_id":             uint32(2),
				"tokenizer.ggml.eos_token_id":             uint32(1),
				"tokenizer.ggml.unknown_token_id":         uint32(3),
				"tokenizer.ggml.padding_token_id":         uint32(0),
				"tokenizer.ggml.add_bos_token":            true,
				"tokenizer.ggml.add_eos_token":            false,
				"tokenizer.ggml.add_space_prefix":         false,
				"tokenizer.chat_template":                 "{{ bos_token }}gemma",
			}, "gemma3.vocab_size", "gemma3.rope.dimension_count", "gemma3.final_logit_softcapping", "tokenizer.ggml.merges")
			checkGemma3Vocab(t, f)

			typ := tc.typ
			checkTensors(t, f, layerTensors(g3Layers, map[string]tensorWant{
				"token_embd.weight":  {typ, []uint64{g3Hidden, g3Vocab}},
				"output_norm.weight": {gguf.TensorF32, []uint64{g3Hidden}},
			}, map[string]tensorWant{
				"attn_norm.weight":           {gguf.TensorF32, []uint64{g3Hidden}},
				"attn_q.weight":              {typ, []uint64{g3Hidden, g3Heads * g3HeadDim}},
				"attn_k.weight":              {typ, []uint64{g3Hidden, g3KV * g3HeadDim}},
				"attn_v.weight":              {typ, []uint64{g3Hidden, g3KV * g3HeadDim}},
				"attn_q_norm.weight":         {gguf.TensorF32, []uint64{g3HeadDim}},
				"attn_k_norm.weight":         {gguf.TensorF32, []uint64{g3HeadDim}},
				"attn_output.weight":         {typ, []uint64{g3Heads * g3HeadDim, g3Hidden}},
				"post_attention_norm.weight": {gguf.TensorF32, []uint64{g3Hidden}},
				"ffn_norm.weight":            {gguf.TensorF32, []uint64{g3Hidden}},
				"ffn_gate.weight":            {typ, []uint64{g3Hidden, g3FFN}},
				"ffn_up.weight":              {typ, []uint64{g3Hidden, g3FFN}},
				"ffn_down.weight":            {typ, []uint64{g3FFN, g3Hidden}},
				"post_ffw_norm.weight":       {gguf.TensorF32, []uint64{g3Hidden}},
			}))

			// Every norm's gains + 1, computed in the source's type.
			prefix := "model."
			if tc.hf == "Gemma3ForConditionalGeneration" {
				prefix = "model.language_model."
			}
			for gg, hf := range map[string]string{
				"output_norm.weight":               "norm.weight",
				"blk.1.attn_norm.weight":           "layers.1.input_layernorm.weight",
				"blk.0.post_attention_norm.weight": "layers.0.post_attention_layernorm.weight",
				"blk.0.ffn_norm.weight":            "layers.0.pre_feedforward_layernorm.weight",
				"blk.1.post_ffw_norm.weight":       "layers.1.post_feedforward_layernorm.weight",
				"blk.0.attn_k_norm.weight":         "layers.0.self_attn.k_norm.weight",
			} {
				checkData(t, f, gg, plusOne(decode(t, c.tensor(prefix+hf)), tc.dt))
			}
			if tc.typ != gguf.TensorQ8_0 {
				checkData(t, f, "blk.1.attn_q.weight", decode(t, c.tensor(prefix+"layers.1.self_attn.q_proj.weight")))
			}

			if h := loadFile(t, out).Hyper(); h.AttnScale != float32(1/math.Sqrt(24)) || h.Window != 8 || !h.PostNorm {
				t.Errorf("loaded configuration: attention scale %v, window %d, post-norm %v", h.AttnScale, h.Window, h.PostNorm)
			}
		})
	}
}

// checkGemma3Vocab checks the vocabulary against what
// _create_vocab_sentencepiece makes of gemma3Checkpoint's files: the
// pieces (user-defined ones as normal tokens), added_tokens.json's token
// as user-defined, added_tokens_decoder's special tokens as control ones
// (<unk> too), those two of score -1000, and [PADn] tokens of score
// -10000 and type unused up to vocab_size.
func checkGemma3Vocab(t *testing.T, f *gguf.File) {
	t.Helper()
	pieces := gemma3Pieces()
	tokens := make([]string, g3Vocab)
	scores := make([]float32, g3Vocab)
	types := make([]int32, g3Vocab)
	for i, p := range pieces {
		tokens[i], scores[i], types[i] = p.Piece, p.Score, max(p.Type, 1)
	}
	types[265], types[266] = 1, 1 // user-defined pieces: normal
	tokens[267], scores[267], types[267] = "<image_soft_token>", -1000, 4
	for _, id := range []int{0, 1, 2, 3, 265, 266} {
		scores[id], types[id] = -1000, 3
	}
	for i := 268; i < g3Vocab; i++ {
		tokens[i], scores[i], types[i] = fmt.Sprintf("[PAD%d]", i), -10000, 5
	}
	checkKVs(t, f, map[string]any{"tokenizer.ggml.tokens": tokens, "tokenizer.ggml.scores": scores, "tokenizer.ggml.token_type": types})
}

// TestGemma3TokenizerJSON converts a Gemma 3 checkpoint without
// tokenizer.model: the SentencePiece vocabulary comes from tokenizer.json
// (scores from the merges' ranks), and the embedding keeps the rows of
// its tokens only, as llama.cpp's Gemma3Model trims it
// (len(vocab) + len(added_tokens) rows: here 267 + 6 of 280).
func TestGemma3TokenizerJSON(t *testing.T) {
	c := gemma3Checkpoint("Gemma3ForCausalLM", convert.F32)
	delete(c.files, "tokenizer.model")
	delete(c.files, "added_tokens.json")
	const vocab = 280
	c.config["vocab_size"] = vocab
	c.remove("model.embed_tokens.weight")
	r := rng(3)
	c.add(&r, "model.embed_tokens.weight", convert.F32, 0, vocab, g3Hidden)
	dir := t.TempDir()
	c.write(t, dir)
	f, err := gguf.Open(convertTo(t, dir, gguf.TensorF32))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const rows = g3Pieces + 6
	emb, _ := f.Tensor("token_embd.weight")
	if !slices.Equal(emb.Shape, []uint64{g3Hidden, rows}) {
		t.Fatalf("token_embd.weight %v, want [%d %d]", emb.Shape, g3Hidden, rows)
	}
	checkData(t, f, "token_embd.weight", decode(t, c.tensor("model.embed_tokens.weight"))[:rows*g3Hidden])
	sv, _ := f.Value("tokenizer.ggml.scores")
	a, _ := sv.AsArray()
	scores := a.Values.([]float32)
	tv, _ := f.Value("tokenizer.ggml.token_type")
	ta, _ := tv.AsArray()
	types := ta.Values.([]int32)
	// ▁a is made by merge 0, ab by merge 1; "a" by none; <0x41> a byte.
	for id, want := range map[int]float32{263: 0, 264: -1, 261: float32(math.Inf(-1)), 2: -1000, 275: -10000} {
		if scores[id] != want {
			t.Errorf("token %d: score %v, want %v", id, scores[id], want)
		}
	}
	for id, want := range map[int]int32{3: 3, 4 + 0x41: 6, 261: 1, 266: 3, 275: 5} {
		if types[id] != want {
			t.Errorf("token %d: type %d, want %d", id, types[id], want)
		}
	}
	checkKVs(t, f, map[string]any{"tokenizer.ggml.model": "llama", "tokenizer.ggml.add_space_prefix": false})
}

// TestGemma3RealTokenizer converts the metadata of a checkpoint with the
// real Gemma 3 tokenizer.json (testdata/gemma3-tokenizer, no
// tokenizer.model).
func TestGemma3RealTokenizer(t *testing.T) {
	dir := t.TempDir()
	c := gemma3Checkpoint("Gemma3ForCausalLM", convert.F32)
	c.config["vocab_size"] = 262144
	c.tensors = nil
	c.files = map[string][]byte{
		"tokenizer.json":        gunzip(t, "../testdata/gemma3-tokenizer/tokenizer.json.gz"),
		"tokenizer_config.json": gunzip(t, "../testdata/gemma3-tokenizer/tokenizer_config.json.gz"),
	}
	c.write(t, dir)
	kvs, err := convert.Metadata(dir, convert.Options{Type: gguf.TensorBF16})
	if err != nil {
		t.Fatal(err)
	}
	get := func(key string) any {
		for _, kv := range kvs {
			if kv.Key == key {
				if a, ok := kv.Value.AsArray(); ok {
					return a.Values
				}
				return kv.Value.Any()
			}
		}
		return nil
	}
	tokens, _ := get("tokenizer.ggml.tokens").([]string)
	types, _ := get("tokenizer.ggml.token_type").([]int32)
	if len(tokens) != 262144 || len(types) != len(tokens) {
		t.Fatalf("%d tokens, %d types; want 262144", len(tokens), len(types))
	}
	for id, want := range map[int]struct {
		text string
		typ  int32
	}{2: {"<bos>", 3}, 105: {"<start_of_turn>", 3}, 106: {"<end_of_turn>", 3}, 107: {"\n", 4}, 3: {"<unk>", 3}, 303: {"<0x41>", 6}} {
		if tokens[id] != want.text || types[id] != want.typ {
			t.Errorf("token %d: %q type %d, want %q type %d", id, tokens[id], types[id], want.text, want.typ)
		}
	}
	if get("tokenizer.ggml.bos_token_id") != uint32(2) || get("tokenizer.ggml.add_bos_token") != true {
		t.Errorf("bos %v, add_bos %v", get("tokenizer.ggml.bos_token_id"), get("tokenizer.ggml.add_bos_token"))
	}
	if tmpl, _ := get("tokenizer.chat_template").(string); !strings.Contains(tmpl, "<start_of_turn>") {
		t.Errorf("chat template %.60q", tmpl)
	}
}

// TestGemma3Defaults converts the metadata of a Gemma3ForConditionalGeneration
// checkpoint whose text_config states only what Gemma 3 4B's does: the
// rest takes the defaults of transformers' Gemma3TextConfig, which
// llama.cpp's converter reads (8 heads, 4 KV heads of 256, RoPE bases 1e6
// and 10000, 131072 positions, query_pre_attn_scalar 256: no
// attention.scale).
func TestGemma3Defaults(t *testing.T) {
	c := gemma3Checkpoint("Gemma3ForConditionalGeneration", convert.F32)
	c.config["text_config"] = map[string]any{"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
		"num_hidden_layers": 34, "rope_scaling": map[string]any{"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024, "vocab_size": g3Vocab}
	c.tensors = nil
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
	for key, want := range map[string]any{
		"gemma3.attention.head_count": uint32(8), "gemma3.attention.head_count_kv": uint32(4), "gemma3.attention.key_length": uint32(256),
		"gemma3.rope.freq_base": float32(1e6), "gemma3.rope.freq_base_swa": float32(10000), "gemma3.context_length": uint32(131072),
		"gemma3.attention.sliding_window": uint32(1024), "gemma3.rope.scaling.factor": float32(8), "gemma3.block_count": uint32(34),
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	if v, ok := got["gemma3.attention.scale"]; ok {
		t.Errorf("gemma3.attention.scale = %v written; query_pre_attn_scalar is the head size", v)
	}
}
