package archfixtures_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend/scalar"
	"inferno/convert"
	"inferno/gguf"
	"inferno/model"
)

// llamaCppDir holds the files llama.cpp's convert_hf_to_gguf.py (commit
// 0253fb21f, ../shared/anchors; torch 2.11, transformers 5.17) wrote of
// make.py's checkpoints: NAME.f32.gguf for each, NAME.q8_0.gguf for
// llama-tied and qwen2 (its --outtype f32 and q8_0; their matrices, 72
// and 96 wide, are not whole Q8_0 blocks, so both converters write them as
// F16). llamacpp_convert.py ran it, naming the checkpoints' tiny
// tokenizers' pre-tokenizers (llama-bpe, qwen2), which the converter's
// table of tokenizer hashes does not know.
const llamaCppDir = testdata + "/llamacpp"

// TestLlamaCppConverter checks that inferno reads llama.cpp's conversions
// of the checkpoints as its own: the same configuration and tokenizer
// metadata, every tensor bit for bit what `inferno convert` writes of the
// same checkpoint at the same type (Q8_0 blocks included), and so the
// same logits, which for the float32 files are transformers' (1e-4).
//
// One difference is expected and checked: llama-untied states its
// original context (256) inside rope_parameters (rope_scaling before
// transformers 5), where transformers and inferno read it; llama.cpp's
// converter reads it only at the top of config.json and assumes 8192, so
// its rope_freqs.weight are Llama 3's factors for 8192
// (arch.Llama3FreqFactors) and its logits are not transformers'.
func TestLlamaCppConverter(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(llamaCppDir, "*.gguf"))
	if len(files) != 5 {
		t.Fatalf("%d files in %s, want 5", len(files), llamaCppDir)
	}
	data, err := os.ReadFile(filepath.Join(testdata, "logits.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Models map[string]struct {
			Kind    string `json:"kind"`
			Prompts []struct {
				IDs    []int32     `json:"ids"`
				First  int         `json:"first"`
				Logits [][]float64 `json:"logits"`
			} `json:"prompts"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		name, typ, _ := strings.Cut(strings.TrimSuffix(filepath.Base(path), ".gguf"), ".")
		t.Run(name+"."+typ, func(t *testing.T) {
			mf, ok := fx.Models[name]
			if !ok {
				t.Fatalf("no model %s in logits.json", name)
			}
			tt := gguf.TensorF32
			if typ == "q8_0" {
				tt = gguf.TensorQ8_0
			}
			dir := checkpointDir(t, mf.Kind, nil, filepath.Join(testdata, name+".config.json"), nil, filepath.Join(testdata, name+".safetensors"))
			out := filepath.Join(t.TempDir(), "inferno.gguf")
			if _, err := convert.Convert(context.Background(), dir, out, convert.Options{Type: tt, Workers: 2}); err != nil {
				t.Fatal(err)
			}
			theirs, ours := openModel(t, path), openModel(t, out)
			untied := name == "llama-untied"

			// The architecture's and the tokenizer's metadata, and the
			// tensors.
			var except []string
			if untied {
				except = append(except, "rope_freqs.weight")
				c := theirs.Arch.Hyper()
				want := arch.Llama3FreqFactors(c.Rope.Theta, c.HeadDim, untiedScaling.Factor, untiedScaling.Low, untiedScaling.High, 8192)
				if !reflect.DeepEqual(c.Rope.FreqFactors, want) {
					t.Errorf("rope_freqs.weight %v, want Llama 3's factors for an original context of 8192: %v", c.Rope.FreqFactors, want)
				}
			}
			sameFile(t, theirs, ours, mf.Kind, except...)

			// Configuration, and logits on the scalar backend.
			tc, oc := *theirs.Arch.Hyper(), *ours.Arch.Hyper()
			if untied {
				tc.Rope.FreqFactors, oc.Rope.FreqFactors = nil, nil
			}
			if !reflect.DeepEqual(tc, oc) {
				t.Errorf("configuration\n%+v\ninferno's\n%+v", tc, oc)
			}
			a, b := newSingle(t, theirs, scalar.NewScalar()), newSingle(t, ours, scalar.NewScalar())
			defer a.Close()
			defer b.Close()
			p := mf.Prompts[len(mf.Prompts)-2] // 40 tokens, every position's logits
			var worst, vsOurs float64
			for pos, tok := range p.IDs {
				if err := a.Forward([]int32{tok}); err != nil {
					t.Fatal(err)
				}
				if err := b.Forward([]int32{tok}); err != nil {
					t.Fatal(err)
				}
				la, _ := a.Logits()
				lb, _ := b.Logits()
				if !untied && !reflect.DeepEqual(la, lb) {
					t.Fatalf("position %d: logits differ from inferno's file's", pos)
				}
				if pos >= p.First {
					worst = max(worst, relErr(la, p.Logits[pos-p.First]))
				}
				lo := make([]float64, len(lb))
				for i, x := range lb {
					lo[i] = float64(x)
				}
				vsOurs = max(vsOurs, relErr(la, lo))
			}
			t.Logf("%s %s: %d tensors; logits of %d positions: vs transformers' %.2g, vs inferno's file's %.2g", name, typ, len(theirs.File.Tensors), len(p.IDs), worst, vsOurs)
			switch {
			case untied && worst < 1e-3:
				t.Errorf("llama.cpp's llama-untied is within %.2g of transformers: its frequency factors should differ", worst)
			case !untied && typ == "f32" && worst > 1e-4:
				t.Errorf("logits within %.2g of transformers', want 1e-4", worst)
			}
		})
	}
}

// sameFile checks that theirs, llama.cpp's conversion of a checkpoint,
// is ours, inferno's conversion of it, for inferno: every metadata key of
// the architecture (kind.*) and of the tokenizer that theirs holds, ours
// holds with the same value, and both hold the same tensors (names,
// types, shapes and bytes), but the tensors named in except, whose data
// the caller checks.
func sameFile(t *testing.T, theirs, ours *model.Model, kind string, except ...string) {
	t.Helper()
	prefix := kind + "."
	for _, kv := range theirs.File.KVs {
		if !strings.HasPrefix(kv.Key, prefix) && !strings.HasPrefix(kv.Key, "tokenizer.") {
			continue
		}
		v, ok := ours.File.Value(kv.Key)
		if !ok {
			t.Errorf("inferno writes no %s (llama.cpp: %v)", kv.Key, short(kv.Value.Any()))
		} else if !reflect.DeepEqual(v.Any(), kv.Value.Any()) {
			t.Errorf("%s is %v, llama.cpp's %v", kv.Key, short(v.Any()), short(kv.Value.Any()))
		}
	}
	if len(theirs.File.Tensors) != len(ours.File.Tensors) {
		t.Errorf("%d tensors, inferno's file %d", len(theirs.File.Tensors), len(ours.File.Tensors))
	}
	for _, ti := range theirs.File.Tensors {
		oi, ok := ours.File.Tensor(ti.Name)
		switch {
		case !ok:
			t.Errorf("tensor %s: not in inferno's file", ti.Name)
		case ti.Type != oi.Type || !reflect.DeepEqual(ti.Shape, oi.Shape):
			t.Errorf("tensor %s: %s %v, inferno's %s %v", ti.Name, ti.Type, ti.Shape, oi.Type, oi.Shape)
		case slices.Contains(except, ti.Name):
		case !bytes.Equal(ti.Data, oi.Data):
			t.Errorf("tensor %s (%s): data differ", ti.Name, ti.Type)
		}
	}
}

// untiedScaling is llama-untied's rope_scaling (make.py's MODELS).
var untiedScaling = struct{ Factor, Low, High float64 }{4, 1, 4}

// openModel opens a GGUF file as a model; it is closed when the test ends.
func openModel(t *testing.T, path string) *model.Model {
	t.Helper()
	m, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// short shortens a metadata value for a message: an array to its length.
func short(v any) any {
	if a, ok := v.(gguf.Array); ok {
		return fmt.Sprintf("an array of %d", a.Len())
	}
	return v
}
