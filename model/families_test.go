package model

import (
	"os"
	"path/filepath"
	"testing"

	"inferno/family"
	"inferno/tokenizer"
)

// references are the files that check each architecture against an
// independent implementation (transformers' logits of a random-weight
// checkpoint), relative to the repository's testdata.
var references = map[string][]string{
	"qwen3":    {"golden/tiny-q8_0.gguf", "golden/tiny-q8_0.json", "arch/embed.safetensors", "arch/embed.json"},
	"qwen3moe": {"arch/qwen3moe-norm.safetensors", "arch/qwen3moe-nonorm.safetensors", "arch/qwen3moe.logits.json"},
	"qwen2":    {"arch/qwen2.safetensors", "arch/logits.json"},
	"llama":    {"arch/llama-tied.safetensors", "arch/llama-untied.safetensors", "arch/logits.json", "arch/mistral.safetensors", "arch/families.logits.json"},
	"gpt-oss":  {"arch/gpt-oss.safetensors", "arch/gpt-oss-mxfp4.safetensors", "arch/families.logits.json"},
	"gemma3":   {"arch/gemma3.safetensors", "arch/families.logits.json"},
	"phi3":     {"arch/phi4.safetensors", "arch/phi4-mini.safetensors", "arch/families.logits.json"},
	"mistral3": {"arch/mistral3.safetensors", "arch/families.logits.json"},
}

// TestFamilies checks that every registered architecture can be made and
// checked without a download: it has synth presets, a Hugging Face
// checkpoint that convert takes, reference fixtures, end-of-generation
// tokens, and pre-tokenizers the tokenizer implements (none for a
// SentencePiece family); and that the
// registry answers for each.
func TestFamilies(t *testing.T) {
	all := family.All()
	if len(all) < 4 {
		t.Fatalf("%d families registered", len(all))
	}
	for _, f := range all {
		if g, ok := family.Lookup(f.Name); !ok || g != f {
			t.Errorf("%s: Lookup gives %v, %v", f.Name, g, ok)
		}
		if len(f.Presets) == 0 {
			t.Errorf("%s: no synth preset", f.Name)
		}
		for _, p := range f.Presets {
			if g, q, ok := family.LookupPreset(p.Name); !ok || g != f || q.Config.Arch != f.Name {
				t.Errorf("%s: preset %s not found as its own", f.Name, p.Name)
			}
		}
		if len(f.Checkpoints) == 0 {
			t.Errorf("%s: no Hugging Face checkpoint to convert", f.Name)
		}
		for _, c := range f.Checkpoints {
			if g, _, ok := family.ByCheckpoint(c.HF); !ok || g != f {
				t.Errorf("%s: checkpoint %s not found as its own", f.Name, c.HF)
			}
		}
		refs := references[f.Name]
		if len(refs) == 0 {
			t.Errorf("%s: no reference fixture listed", f.Name)
		}
		for _, r := range refs {
			if _, err := os.Stat(filepath.Join("..", "testdata", r)); err != nil {
				t.Errorf("%s: reference fixture: %v", f.Name, err)
			}
		}
		if len(f.Chat.EOG) == 0 {
			t.Errorf("%s: no end-of-generation tokens", f.Name)
		}
		for _, pre := range f.Pre {
			if _, err := tokenizer.New(tokenizer.Config{Tokens: []string{"a", "b", "ab"}, Merges: []string{"a b"}, Pre: pre}); err != nil {
				t.Errorf("%s: pre-tokenizer %q: %v", f.Name, pre, err)
			}
		}
	}
	for name := range references {
		if _, ok := family.Lookup(name); !ok {
			t.Errorf("references lists %s, which is not registered", name)
		}
	}
}
