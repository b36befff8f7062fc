package convert_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"inferno/gguf"
)

// archFixtures holds the reference checkpoints of tools/archfixtures
// (families.py): NAME.config.json and NAME.safetensors, the tokenizer
// files of each kind, and NAME.llamacpp.gguf, llama.cpp's
// convert_hf_to_gguf.py's F32 conversion of the checkpoint.
const archFixtures = "../testdata/arch"

// llamaCppOnly lists, by checkpoint, what inferno writes that llama.cpp's
// file lacks, and why. phi4-mini: llama.cpp's Phi3MiniModel writes
// LongRoPE's factors and attention factor only when config['rope_scaling']
// is there, which transformers 5's to_dict no longer gives; inferno writes
// them, as llama.cpp did under transformers 4 and the published
// Phi-4-mini GGUF files have them.
var llamaCppOnly = map[string][]string{
	"phi4-mini": {"rope_factors_long.weight", "rope_factors_short.weight", "phi3.rope.scaling.attn_factor"},
}

// infernoKeys are keys inferno writes and llama.cpp's converter never
// does: Gemma 3's attention scale where query_pre_attn_scalar is not the
// head size (family.Checkpoint.AttnScalar).
var infernoKeys = []string{"gemma3.attention.scale"}

// TestLlamaCppFamilies converts each reference checkpoint of
// families.logits.json that has llama.cpp's conversion beside it and
// checks that the file is llama.cpp's: every metadata key of the
// architecture and of the tokenizer with the same value and type, the
// same general.file_type, and every tensor of the same name, type, shape
// and bytes; inferno writes nothing else but llamaCppOnly and
// infernoKeys.
func TestLlamaCppFamilies(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(archFixtures, "families.logits.json"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no families.logits.json: tools/archfixtures/families.py has not been run")
	}
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Models map[string]struct {
			Kind     string `json:"kind"`
			Arch     string `json:"arch"`
			LlamaCpp struct {
				File string `json:"file"`
			} `json:"llamacpp"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, m := range fx.Models {
		if m.LlamaCpp.File != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("families.logits.json lists no llama.cpp conversion")
	}
	for _, name := range names {
		m := fx.Models[name]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			copyFixture := func(dst, src string) {
				b, err := os.ReadFile(filepath.Join(archFixtures, src))
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(dir, dst), b)
			}
			copyFixture("config.json", name+".config.json")
			copyFixture("model.safetensors", name+".safetensors")
			toks, _ := filepath.Glob(filepath.Join(archFixtures, m.Kind+".tokenizer*"))
			if len(toks) == 0 {
				t.Fatalf("no tokenizer files %s.tokenizer*", m.Kind)
			}
			for _, p := range toks {
				copyFixture(strings.TrimPrefix(filepath.Base(p), m.Kind+"."), filepath.Base(p))
			}
			theirs, err := gguf.Open(filepath.Join(archFixtures, m.LlamaCpp.File))
			if err != nil {
				t.Fatal(err)
			}
			defer theirs.Close()
			ours, err := gguf.Open(convertTo(t, dir, gguf.TensorF32))
			if err != nil {
				t.Fatal(err)
			}
			defer ours.Close()
			only := llamaCppOnly[name]
			compared := func(key string) bool {
				return key == "general.file_type" || strings.HasPrefix(key, m.Arch+".") || strings.HasPrefix(key, "tokenizer.")
			}
			for _, kv := range theirs.KVs {
				if !compared(kv.Key) {
					continue
				}
				v, ok := ours.Value(kv.Key)
				if !ok {
					t.Errorf("inferno writes no %s (llama.cpp: %v)", kv.Key, short(kv.Value.Any()))
				} else if v.Type != kv.Value.Type || !reflect.DeepEqual(v.Any(), kv.Value.Any()) {
					t.Errorf("%s is %v (%s), llama.cpp's %v (%s)", kv.Key, short(v.Any()), v.Type, short(kv.Value.Any()), kv.Value.Type)
				}
			}
			for _, kv := range ours.KVs {
				if _, ok := theirs.Value(kv.Key); !ok && compared(kv.Key) && !slices.Contains(only, kv.Key) && !slices.Contains(infernoKeys, kv.Key) {
					t.Errorf("inferno writes %s = %v, llama.cpp does not", kv.Key, short(kv.Value.Any()))
				}
			}
			for _, ti := range theirs.Tensors {
				oi, ok := ours.Tensor(ti.Name)
				switch {
				case !ok:
					t.Errorf("tensor %s: not in inferno's file", ti.Name)
				case ti.Type != oi.Type || !reflect.DeepEqual(ti.Shape, oi.Shape):
					t.Errorf("tensor %s: inferno's %s %v, llama.cpp's %s %v", ti.Name, oi.Type, oi.Shape, ti.Type, ti.Shape)
				case !bytes.Equal(ti.Data, oi.Data):
					t.Errorf("tensor %s (%s): data differ", ti.Name, ti.Type)
				}
			}
			for _, oi := range ours.Tensors {
				if _, ok := theirs.Tensor(oi.Name); !ok && !slices.Contains(only, oi.Name) {
					t.Errorf("tensor %s: inferno writes it, llama.cpp does not", oi.Name)
				}
			}
			for _, x := range only {
				_, key := ours.Value(x)
				_, tensor := ours.Tensor(x)
				if !key && !tensor {
					t.Errorf("%s: not written (llamaCppOnly lists it)", x)
				}
			}
		})
	}
}
