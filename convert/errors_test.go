package convert_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferno/convert"
	"inferno/gguf"
)

// corruptHeader returns a safetensors file holding the JSON header js and
// size bytes of data.
func corruptHeader(js string, size int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	b = append(b, js...)
	return append(b, make([]byte, size)...)
}

// TestErrors checks that each kind of bad input ends the conversion with
// one line that says what is wrong, and leaves no file behind.
func TestErrors(t *testing.T) {
	const up0 = "model.layers.0.mlp.up_proj.weight"
	tests := []struct {
		name string
		edit func(c *checkpoint, dir string) // after writing the checkpoint, dir holds it
		opts convert.Options
		want string
	}{
		{"no folder", func(c *checkpoint, dir string) { os.RemoveAll(dir) }, convert.Options{}, "does not exist"},
		{"folder is a file", func(c *checkpoint, dir string) {
			os.RemoveAll(dir)
			os.WriteFile(dir, []byte("x"), 0o644)
		}, convert.Options{}, "is not a folder"},
		{"no config", func(c *checkpoint, dir string) { os.Remove(filepath.Join(dir, "config.json")) }, convert.Options{}, "config.json is missing"},
		{"bad config JSON", func(c *checkpoint, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"architectures": [`), 0o644)
		}, convert.Options{}, "config.json: bad JSON"},
		{"no tokenizer.json", func(c *checkpoint, dir string) { os.Remove(filepath.Join(dir, "tokenizer.json")) }, convert.Options{}, "tokenizer.json is missing"},
		{"no tokenizer_config.json", func(c *checkpoint, dir string) { os.Remove(filepath.Join(dir, "tokenizer_config.json")) }, convert.Options{}, "tokenizer_config.json is missing"},
		{"no weights", func(c *checkpoint, dir string) { os.Remove(filepath.Join(dir, "model.safetensors")) }, convert.Options{}, "no model.safetensors or model.safetensors.index.json in"},
		{"pytorch weights", func(c *checkpoint, dir string) {
			os.Rename(filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "pytorch_model.bin"))
		}, convert.Options{}, "PyTorch .bin checkpoints are not supported"},
		{"other architecture", func(c *checkpoint, dir string) {
			c.config["architectures"] = []string{"BertModel"}
			c.write(t, dir)
		}, convert.Options{}, `convert: architecture "BertModel" is not supported (want one of `},
		{"layout of another architecture", func(c *checkpoint, dir string) {
			c.config["architectures"] = []string{"LlamaForCausalLM"}
			c.write(t, dir)
		}, convert.Options{}, `tensor "model.layers.0.self_attn.k_norm.weight" (in model.safetensors) is not part of a Llama model with 2 layers`},
		{"no architecture", func(c *checkpoint, dir string) {
			delete(c.config, "architectures")
			c.write(t, dir)
		}, convert.Options{}, "names no architecture"},
		{"missing setting", func(c *checkpoint, dir string) {
			delete(c.config, "hidden_size")
			c.write(t, dir)
		}, convert.Options{}, "config.json: hidden_size is missing"},
		{"bad setting", func(c *checkpoint, dir string) {
			c.config["num_hidden_layers"] = "two"
			c.write(t, dir)
		}, convert.Options{}, `num_hidden_layers = "two" is not a positive integer`},
		{"heads", func(c *checkpoint, dir string) {
			c.config["num_key_value_heads"] = 3
			c.write(t, dir)
		}, convert.Options{}, "not a multiple of num_key_value_heads 3"},
		{"rope scaling", func(c *checkpoint, dir string) {
			c.config["rope_scaling"] = map[string]any{"rope_type": "yarn", "factor": 4.0}
			c.write(t, dir)
		}, convert.Options{}, `rope_scaling type "yarn" is not supported`},
		{"output type", nil, convert.Options{Type: gguf.TensorQ4_0}, "output type Q4_0 is not supported"},
		{"truncated header", func(c *checkpoint, dir string) {
			path := filepath.Join(dir, "model.safetensors")
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:100], 0o644)
		}, convert.Options{}, "model.safetensors: header length"},
		{"tiny file", func(c *checkpoint, dir string) {
			os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte{1, 2, 3}, 0o644)
		}, convert.Options{}, "model.safetensors: file is 3 bytes, too small"},
		{"header not JSON", func(c *checkpoint, dir string) {
			os.WriteFile(filepath.Join(dir, "model.safetensors"), corruptHeader(`{"a": {"dtype": "F32",`, 8), 0o644)
		}, convert.Options{}, "model.safetensors: bad header JSON"},
		{"header not an object", func(c *checkpoint, dir string) {
			os.WriteFile(filepath.Join(dir, "model.safetensors"), corruptHeader(`[1, 2]`, 8), 0o644)
		}, convert.Options{}, "model.safetensors: bad header JSON"},
		{"offsets outside", func(c *checkpoint, dir string) {
			os.WriteFile(filepath.Join(dir, "model.safetensors"),
				corruptHeader(`{"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}`, 8), 0o644)
		}, convert.Options{}, `tensor "w": data offsets [0, 16] lie outside the 8-byte data section`},
		{"size mismatch", func(c *checkpoint, dir string) {
			os.WriteFile(filepath.Join(dir, "model.safetensors"),
				corruptHeader(`{"w": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 8]}}`, 8), 0o644)
		}, convert.Options{}, `tensor "w": 8 bytes of data, shape [2 3] of BF16 needs 12`},
		{"unknown dtype", func(c *checkpoint, dir string) {
			os.WriteFile(filepath.Join(dir, "model.safetensors"),
				corruptHeader(`{"w": {"dtype": "F7", "shape": [2], "data_offsets": [0, 8]}}`, 8), 0o644)
		}, convert.Options{}, `tensor "w": unknown dtype "F7"`},
		{"shape mismatch", func(c *checkpoint, dir string) {
			c.tensor(up0).Shape = []int64{32, 64}
			c.write(t, dir)
		}, convert.Options{}, `tensor "model.layers.0.mlp.up_proj.weight" has shape [32 64], config.json implies [64 32]`},
		{"missing tensor", func(c *checkpoint, dir string) {
			c.remove("model.layers.1.self_attn.k_norm.weight")
			c.write(t, dir)
		}, convert.Options{}, `tensor "model.layers.1.self_attn.k_norm.weight" is missing`},
		{"unconvertible dtype", func(c *checkpoint, dir string) {
			ten := c.tensor("model.norm.weight")
			ten.DType = "I32"
			c.write(t, dir)
		}, convert.Options{}, `tensor "model.norm.weight" has dtype I32; only F32, F16 and BF16 can be converted`},
		{"extra tensor", func(c *checkpoint, dir string) {
			c.tensors = append(c.tensors, convert.Tensor{Name: "model.layers.0.self_attn.q_proj.bias", DType: convert.F32, Shape: []int64{32}, Data: make([]byte, 128)})
			c.write(t, dir)
		}, convert.Options{}, `tensor "model.layers.0.self_attn.q_proj.bias" (in model.safetensors) is not part of a Qwen3 model`},
		{"untied without head", func(c *checkpoint, dir string) {
			c.config["tie_word_embeddings"] = false
			c.write(t, dir)
		}, convert.Options{}, `tensor "lm_head.weight" is missing (config.json has tie_word_embeddings false)`},
		{"missing shard", func(c *checkpoint, dir string) {
			c.shards = 2
			os.RemoveAll(dir)
			c.write(t, dir)
			os.Remove(filepath.Join(dir, "model-00002-of-00002.safetensors"))
		}, convert.Options{}, "model-00002-of-00002.safetensors is missing (listed in model.safetensors.index.json)"},
		{"index disagrees", func(c *checkpoint, dir string) {
			c.shards = 2
			os.RemoveAll(dir)
			c.write(t, dir)
			os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"),
				[]byte(`{"weight_map": {"model.norm.weight": "model-00001-of-00002.safetensors"}}`), 0o644)
		}, convert.Options{}, "is not listed in model.safetensors.index.json"},
		{"index escapes", func(c *checkpoint, dir string) {
			os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"),
				[]byte(`{"weight_map": {"model.norm.weight": "../model.safetensors"}}`), 0o644)
		}, convert.Options{}, "is not a safetensors file in the folder"},
		{"pre-tokenizer", func(c *checkpoint, dir string) {
			c.files["tokenizer.json"] = []byte(strings.Replace(string(c.files["tokenizer.json"]), `\\p{N}|`, `\\p{N}{1,2}|`, 1))
			c.write(t, dir)
		}, convert.Options{}, "the pre-tokenizer is not a byte-level split that inferno and llama.cpp implement"},
		{"token beyond vocab_size", func(c *checkpoint, dir string) {
			c.config["vocab_size"] = 258
			c.write(t, dir)
		}, convert.Options{}, "tokenizer.json: token id 259 is outside the vocabulary of 258 tokens"},
		{"bad merge", func(c *checkpoint, dir string) {
			c.files["tokenizer.json"] = []byte(strings.Replace(string(c.files["tokenizer.json"]), `[["Ġ","t"]]`, `[["Ġ","t","x"]]`, 1))
			c.write(t, dir)
		}, convert.Options{}, "tokenizer.json: merge 0 is neither a string nor a pair of strings"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ckpt")
			c := smallCheckpoint(t)
			c.write(t, dir)
			if tc.edit != nil {
				tc.edit(c, dir)
			}
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.gguf")
			_, err := convert.Convert(context.Background(), dir, out, tc.opts)
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "convert: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want one line starting \"convert: \" containing %q", msg, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output written despite the error")
			}
			if l := leftovers(t, outDir); len(l) != 0 {
				t.Errorf("temporary files left: %v", l)
			}
		})
	}
}

// TestOutputIsFolder checks that a folder as output is refused.
func TestOutputIsFolder(t *testing.T) {
	dir := t.TempDir()
	smallCheckpoint(t).write(t, dir)
	_, err := convert.Convert(context.Background(), dir, t.TempDir(), convert.Options{})
	if err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("err %v, want a folder error", err)
	}
}
