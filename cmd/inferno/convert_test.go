package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"inferno/arch"
	"inferno/convert"
	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/numfmt"
)

// goldenWeights is the golden model's configuration and its weights
// dequantized to F32 in a safetensors file, made once for every
// hfCheckpoint.
var goldenWeights struct {
	once        sync.Once
	cfg         arch.Config
	safetensors []byte
	err         error
}

// hfCheckpoint writes the golden model as a Hugging Face checkpoint folder
// (weights dequantized to F32, the real Qwen3 tokenizer) and returns it.
func hfCheckpoint(t *testing.T, arch string) string {
	t.Helper()
	goldenWeights.once.Do(func() {
		goldenWeights.cfg, goldenWeights.safetensors, goldenWeights.err = dequantizedGolden()
	})
	if goldenWeights.err != nil {
		t.Fatal(goldenWeights.err)
	}
	cfg := goldenWeights.cfg
	dir := filepath.Join(t.TempDir(), "Qwen3-tiny")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(map[string]any{
		"architectures": []string{arch}, "hidden_size": cfg.Hidden, "intermediate_size": cfg.FFN,
		"num_hidden_layers": cfg.Layers, "num_attention_heads": cfg.Heads, "num_key_value_heads": cfg.KVHeads,
		"head_dim": cfg.HeadDim, "max_position_embeddings": cfg.ContextLength, "rms_norm_eps": float64(cfg.Eps),
		"rope_theta": cfg.Rope.Theta, "vocab_size": cfg.Vocab, "tie_word_embeddings": true,
		"bos_token_id": 151643, "eos_token_id": 151645, "torch_dtype": "float32",
	})
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", config)
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/qwen3-tokenizer", name))
		if err != nil {
			t.Fatal(err)
		}
		write(name, data)
	}
	write("model.safetensors", goldenWeights.safetensors)
	return dir
}

// dequantizedGolden returns the golden model's configuration and its
// weights dequantized to F32, under their Hugging Face names, as a
// safetensors file.
func dequantizedGolden() (arch.Config, []byte, error) {
	f, err := gguf.Open(goldenModel)
	if err != nil {
		return arch.Config{}, nil, err
	}
	defer f.Close()
	cfg, err := qwen3.ConfigFromGGUF(f)
	if err != nil {
		return arch.Config{}, nil, err
	}
	names := map[string]string{
		"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
		"attn_norm.weight": "input_layernorm.weight", "attn_q.weight": "self_attn.q_proj.weight",
		"attn_k.weight": "self_attn.k_proj.weight", "attn_v.weight": "self_attn.v_proj.weight",
		"attn_output.weight": "self_attn.o_proj.weight", "attn_q_norm.weight": "self_attn.q_norm.weight",
		"attn_k_norm.weight": "self_attn.k_norm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
		"ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight",
	}
	block := regexp.MustCompile(`^blk\.(\d+)\.(.*)$`)
	var tensors []convert.Tensor
	for _, ti := range f.Tensors {
		name := names[ti.Name]
		if m := block.FindStringSubmatch(ti.Name); m != nil {
			name = "model.layers." + m[1] + "." + names[m[2]]
		}
		vals := make([]float32, ti.Elements())
		if err := numfmt.DequantizeRow(vals, ti.Data, ti.Type, len(vals)); err != nil {
			return cfg, nil, fmt.Errorf("%s: %w", ti.Name, err)
		}
		data, _ := numfmt.QuantizeRow(nil, vals, gguf.TensorF32)
		shape := make([]int64, len(ti.Shape))
		for i, d := range ti.Shape {
			shape[len(shape)-1-i] = int64(d)
		}
		tensors = append(tensors, convert.Tensor{Name: name, DType: convert.F32, Shape: shape, Data: data})
	}
	var buf bytes.Buffer
	if err := convert.WriteSafetensors(&buf, tensors, nil); err != nil {
		return cfg, nil, err
	}
	return cfg, buf.Bytes(), nil
}

// TestConvert converts the golden model's checkpoint to Q8_0 into folders
// that do not exist yet and checks that the result computes the same
// logits as the golden file, written by logits into new folders too.
func TestConvert(t *testing.T) {
	t.Parallel()
	dir := hfCheckpoint(t, "Qwen3ForCausalLM")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "models", "new", "tiny.gguf")
	_, errOut, code := run(t, "", "convert", dir, out, "--type", "q8_0")
	if code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "wrote "+out+": 24 tensors, Q8_0 weights") {
		t.Errorf("convert: stderr %q, want one summary line", errOut)
	}
	logits := func(model string) []byte {
		path := filepath.Join(tmp, "logits", filepath.Base(model), "last.f32") // a new folder each time
		if _, errOut, code := run(t, "", "logits", model, "--tokens", "9707,11,1879,0", "--out", path, "--backend", "scalar"); code != 0 {
			t.Fatalf("logits %s: exit %d: %s", model, code, errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if !bytes.Equal(logits(out), logits(goldenModel)) {
		t.Error("the converted model's logits differ from the golden model's")
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("%d entries in the output folder, want only the model", len(entries))
	}
}

// TestConvertBadInput checks that conversion errors end the command with
// one line on stderr and exit status 1, leaving no output.
func TestConvertBadInput(t *testing.T) {
	t.Parallel()
	bert := hfCheckpoint(t, "BertModel")
	truncated := hfCheckpoint(t, "Qwen3ForCausalLM")
	st := filepath.Join(truncated, "model.safetensors")
	data, err := os.ReadFile(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st, data[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"convert", bert, out}, `inferno: convert: architecture "BertModel" is not supported (want one of `},
		{[]string{"convert", truncated, out}, "inferno: convert: model.safetensors: header length"},
		{[]string{"convert", filepath.Join(dir, "nothing"), out}, "inferno: convert: checkpoint folder " + filepath.Join(dir, "nothing") + " does not exist"},
		{[]string{"convert", truncated, out, "--type", "q4_0"}, `--type "q4_0": want f32, f16, bf16 or q8_0`},
		{[]string{"convert", truncated}, "accepts 2 arg(s), received 1"},
	}
	for _, tc := range tests {
		_, errOut, code := run(t, "", tc.args...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and one line containing %q", tc.args, code, errOut, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left in the output folder", len(entries))
	}
}
