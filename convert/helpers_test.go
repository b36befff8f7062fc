package convert_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"inferno/convert"
	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/numfmt"
)

const (
	goldenModel  = "../testdata/golden/tiny-q8_0.gguf"
	goldenJSON   = "../testdata/golden/tiny-q8_0.json"
	tokenizerDir = "../testdata/qwen3-tokenizer"
)

// checkpoint is a Hugging Face checkpoint folder to write in a test.
type checkpoint struct {
	config  map[string]any
	tensors []convert.Tensor
	// files are written as they are: tokenizer files, generation config.
	files map[string][]byte
	// shards > 1 splits the tensors round-robin over that many files with
	// model.safetensors.index.json.
	shards int
}

// write writes c into dir (created).
func (c *checkpoint) write(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := json.MarshalIndent(c.config, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "config.json"), cfg)
	for name, data := range c.files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	if c.shards <= 1 {
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), c.tensors)
		return
	}
	parts := make([][]convert.Tensor, c.shards)
	weightMap := map[string]string{}
	for i, ten := range c.tensors {
		parts[i%c.shards] = append(parts[i%c.shards], ten)
		weightMap[ten.Name] = shardName(i%c.shards, c.shards)
	}
	for i, p := range parts {
		writeSafetensors(t, filepath.Join(dir, shardName(i, c.shards)), p)
	}
	index, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 0}, "weight_map": weightMap})
	writeFile(t, filepath.Join(dir, "model.safetensors.index.json"), index)
}

func shardName(i, n int) string { return fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, n) }

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeSafetensors(t testing.TB, path string, tensors []convert.Tensor) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := convert.WriteSafetensors(w, tensors, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// tensor returns the tensor named name of c.
func (c *checkpoint) tensor(name string) *convert.Tensor {
	for i := range c.tensors {
		if c.tensors[i].Name == name {
			return &c.tensors[i]
		}
	}
	return nil
}

// remove drops the tensor named name.
func (c *checkpoint) remove(name string) {
	for i := range c.tensors {
		if c.tensors[i].Name == name {
			c.tensors = append(c.tensors[:i], c.tensors[i+1:]...)
			return
		}
	}
}

// encode stores vals as dtype.
func encode(vals []float32, dtype convert.DType) []byte {
	var b []byte
	for _, v := range vals {
		switch dtype {
		case convert.F32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		case convert.F16:
			b = binary.LittleEndian.AppendUint16(b, numfmt.F32ToF16(v))
		case convert.BF16:
			b = binary.LittleEndian.AppendUint16(b, numfmt.F32ToBF16(v))
		}
	}
	return b
}

// decode reads a tensor's values as float32.
func decode(t testing.TB, ten *convert.Tensor) []float32 {
	t.Helper()
	typ := map[convert.DType]gguf.TensorType{convert.F32: gguf.TensorF32, convert.F16: gguf.TensorF16, convert.BF16: gguf.TensorBF16}[ten.DType]
	vals := make([]float32, ten.Elements())
	if err := numfmt.DequantizeRow(vals, ten.Data, typ, len(vals)); err != nil {
		t.Fatal(err)
	}
	return vals
}

// hfNames maps GGUF tensor names to Hugging Face ones, written out here
// independently of the converter's own table.
var hfNames = map[string]string{
	"token_embd.weight":  "model.embed_tokens.weight",
	"output_norm.weight": "model.norm.weight",
	"output.weight":      "lm_head.weight",
	"attn_norm.weight":   "input_layernorm.weight",
	"attn_q.weight":      "self_attn.q_proj.weight",
	"attn_k.weight":      "self_attn.k_proj.weight",
	"attn_v.weight":      "self_attn.v_proj.weight",
	"attn_output.weight": "self_attn.o_proj.weight",
	"attn_q_norm.weight": "self_attn.q_norm.weight",
	"attn_k_norm.weight": "self_attn.k_norm.weight",
	"ffn_norm.weight":    "post_attention_layernorm.weight",
	"ffn_gate.weight":    "mlp.gate_proj.weight",
	"ffn_up.weight":      "mlp.up_proj.weight",
	"ffn_down.weight":    "mlp.down_proj.weight",
}

var blockName = regexp.MustCompile(`^blk\.(\d+)\.(.*)$`)

func hfName(t testing.TB, gguf string) string {
	if m := blockName.FindStringSubmatch(gguf); m != nil {
		return "model.layers." + m[1] + "." + hfNames[m[2]]
	}
	if n, ok := hfNames[gguf]; ok {
		return n
	}
	t.Fatalf("no Hugging Face name for %s", gguf)
	return ""
}

// goldenCheckpoint builds a checkpoint from the golden GGUF: every tensor
// dequantized to float32 and stored as dtype, a config.json with the
// model's settings as Qwen3-0.6B's config.json spells them, and the real
// Qwen3 tokenizer files.
func goldenCheckpoint(t testing.TB, dtype convert.DType) *checkpoint {
	t.Helper()
	f, err := gguf.Open(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := qwen3.ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	c := &checkpoint{
		config: map[string]any{
			"architectures":           []string{"Qwen3ForCausalLM"},
			"attention_bias":          false,
			"attention_dropout":       0.0,
			"bos_token_id":            151643,
			"eos_token_id":            151645,
			"head_dim":                cfg.HeadDim,
			"hidden_act":              "silu",
			"hidden_size":             cfg.Hidden,
			"initializer_range":       0.02,
			"intermediate_size":       cfg.FFN,
			"max_position_embeddings": cfg.ContextLength,
			"max_window_layers":       cfg.Layers,
			"model_type":              "qwen3",
			"num_attention_heads":     cfg.Heads,
			"num_hidden_layers":       cfg.Layers,
			"num_key_value_heads":     cfg.KVHeads,
			"rms_norm_eps":            float64(cfg.Eps),
			"rope_scaling":            nil,
			"rope_theta":              cfg.Rope.Theta,
			"sliding_window":          nil,
			"tie_word_embeddings":     true,
			"torch_dtype":             map[convert.DType]string{convert.F32: "float32", convert.F16: "float16", convert.BF16: "bfloat16"}[dtype],
			"transformers_version":    "4.51.0",
			"use_cache":               true,
			"use_sliding_window":      false,
			"vocab_size":              cfg.Vocab,
		},
		files: tokenizerFiles(t),
	}
	for _, ti := range f.Tensors {
		n := int(ti.Elements())
		vals := make([]float32, n)
		if err := numfmt.DequantizeRow(vals, ti.Data, ti.Type, n); err != nil {
			t.Fatal(err)
		}
		shape := make([]int64, len(ti.Shape))
		for i, d := range ti.Shape {
			shape[len(shape)-1-i] = int64(d) // PyTorch order
		}
		c.tensors = append(c.tensors, convert.Tensor{Name: hfName(t, ti.Name), DType: dtype, Shape: shape, Data: encode(vals, dtype)})
	}
	return c
}

// tokenizerFiles returns the real Qwen3 tokenizer files and a
// generation_config.json as Qwen3-0.6B ships it.
func tokenizerFiles(t testing.TB) map[string][]byte {
	files := map[string][]byte{
		"generation_config.json": []byte(`{"bos_token_id": 151643, "do_sample": true, "eos_token_id": [151645, 151643],
 "pad_token_id": 151643, "temperature": 0.6, "top_k": 20, "top_p": 0.95, "transformers_version": "4.51.0"}`),
	}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(tokenizerDir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	return files
}

// smallCheckpoint returns a 2-layer Qwen3 checkpoint with random F32
// weights, hidden size 32 and a small byte-level vocabulary of 320 tokens:
// quick to write and convert.
func smallCheckpoint(t testing.TB) *checkpoint {
	const (
		hidden, ffn, heads, kvHeads, headDim, layers, vocab = 32, 64, 2, 1, 16, 2, 320
	)
	c := &checkpoint{
		config: map[string]any{
			"architectures":           []string{"Qwen3ForCausalLM"},
			"hidden_size":             hidden,
			"intermediate_size":       ffn,
			"num_hidden_layers":       layers,
			"num_attention_heads":     heads,
			"num_key_value_heads":     kvHeads,
			"head_dim":                headDim,
			"max_position_embeddings": 512,
			"rms_norm_eps":            1e-6,
			"rope_theta":              1e6,
			"vocab_size":              vocab,
			"tie_word_embeddings":     true,
			"bos_token_id":            257,
			"eos_token_id":            259,
		},
		files: smallTokenizer(),
	}
	seed := uint32(1)
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			seed = seed*1664525 + 1013904223
			v[i] = (float32(seed>>8)/float32(1<<24) - 0.5) * 0.2
		}
		return v
	}
	ones := func(n int) []float32 {
		v := rnd(n)
		for i := range v {
			v[i] += 1
		}
		return v
	}
	add := func(name string, vals []float32, shape ...int64) {
		c.tensors = append(c.tensors, convert.Tensor{Name: name, DType: convert.F32, Shape: shape, Data: encode(vals, convert.F32)})
	}
	add("model.embed_tokens.weight", rnd(vocab*hidden), vocab, hidden)
	for i := range layers {
		p := "model.layers." + strconv.Itoa(i) + "."
		add(p+"input_layernorm.weight", ones(hidden), hidden)
		add(p+"self_attn.q_proj.weight", rnd(heads*headDim*hidden), heads*headDim, hidden)
		add(p+"self_attn.k_proj.weight", rnd(kvHeads*headDim*hidden), kvHeads*headDim, hidden)
		add(p+"self_attn.v_proj.weight", rnd(kvHeads*headDim*hidden), kvHeads*headDim, hidden)
		add(p+"self_attn.o_proj.weight", rnd(hidden*heads*headDim), hidden, heads*headDim)
		add(p+"self_attn.q_norm.weight", ones(headDim), headDim)
		add(p+"self_attn.k_norm.weight", ones(headDim), headDim)
		add(p+"post_attention_layernorm.weight", ones(hidden), hidden)
		add(p+"mlp.gate_proj.weight", rnd(ffn*hidden), ffn, hidden)
		add(p+"mlp.up_proj.weight", rnd(ffn*hidden), ffn, hidden)
		add(p+"mlp.down_proj.weight", rnd(hidden*ffn), hidden, ffn)
	}
	add("model.norm.weight", ones(hidden), hidden)
	return c
}

// smallTokenizer returns tokenizer.json and tokenizer_config.json for a
// byte-level vocabulary: the 256 byte tokens, "Ġt" (256) with its merge,
// and three added tokens (257 to 259).
func smallTokenizer() map[string][]byte {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(byteRune(byte(b)))] = b
	}
	vocab["Ġt"] = 256
	added := []map[string]any{}
	for i, s := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"} {
		added = append(added, map[string]any{"id": 257 + i, "content": s, "special": true, "normalized": false,
			"lstrip": false, "rstrip": false, "single_word": false})
	}
	tj := map[string]any{
		"version":      "1.0",
		"added_tokens": added,
		"normalizer":   map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwen2Split}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": [][]string{{"Ġ", "t"}}},
	}
	tc := map[string]any{
		"add_bos_token": false,
		"bos_token":     nil,
		"eos_token":     "<|im_end|>",
		"pad_token":     "<|endoftext|>",
		"chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}",
	}
	a, _ := json.Marshal(tj)
	b, _ := json.Marshal(tc)
	return map[string][]byte{"tokenizer.json": a, "tokenizer_config.json": b}
}

const qwen2Split = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// byteRune is GPT-2's bytes_to_unicode.
func byteRune(b byte) rune {
	switch {
	case b >= '!' && b <= '~', b >= 0xa1 && b <= 0xac, b >= 0xae:
		return rune(b)
	}
	n := 0
	for c := 0; c < int(b); c++ {
		cb := byte(c)
		if !(cb >= '!' && cb <= '~' || cb >= 0xa1 && cb <= 0xac || cb >= 0xae) {
			n++
		}
	}
	return rune(256 + n)
}

// relL2 returns |a-b| / |b|.
func relL2(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}

// goldenPrompts returns the prompts of tiny-q8_0.json with the reference
// logits of their last position, sorted by name.
func goldenPrompts(t testing.TB) (names []string, ids map[string][]int32, ref map[string][]float32) {
	t.Helper()
	var g struct {
		Prompts map[string]struct {
			IDs            []int32 `json:"ids"`
			LastLogitsFile string  `json:"last_logits_file"`
		} `json:"prompts"`
	}
	b, err := os.ReadFile(goldenJSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	ids, ref = map[string][]int32{}, map[string][]float32{}
	for name, p := range g.Prompts {
		names = append(names, name)
		ids[name] = p.IDs
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(goldenJSON), p.LastLogitsFile))
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		ref[name] = v
	}
	sort.Strings(names)
	return names, ids, ref
}

// leftovers returns the names of temporary files Convert left in dir.
func leftovers(t testing.TB, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}
