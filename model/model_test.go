package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/text/unicode/norm"

	"inferno/family"
	"inferno/gguf"
)

// TestOpenGolden opens the golden model and checks the tokenizer built from
// its GGUF metadata against Hugging Face tokenizers on every public case.
func TestOpenGolden(t *testing.T) {
	m, err := Open("../testdata/golden/tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, id := range []int32{151643, 151645} {
		if !m.EOG[id] {
			t.Errorf("end-of-generation ids %v lack %d", m.EOG, id)
		}
	}
	if m.ChatTemplate == "" {
		t.Error("no chat template")
	}
	b, err := os.ReadFile("../testdata/golden/tokenizer_public.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases struct {
		Cases []struct {
			Text    string  `json:"text"`
			IDs     []int32 `json:"ids"`
			Decoded string  `json:"decoded"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases.Cases {
		got := m.Tokenizer.Encode(c.Text)
		if len(got) != len(c.IDs) {
			t.Errorf("Encode(%q) = %v, want %v", c.Text, got, c.IDs)
			continue
		}
		for i := range got {
			if got[i] != c.IDs[i] {
				t.Errorf("Encode(%q) = %v, want %v", c.Text, got, c.IDs)
				break
			}
		}
		if d := m.Tokenizer.Decode(c.IDs); d != c.Decoded || d != norm.NFC.String(c.Text) {
			t.Errorf("Decode(%v) = %q, want %q", c.IDs, d, c.Decoded)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open("../testdata/golden/tokenizer_public.json"); err == nil {
		t.Error("opened a JSON file as a model")
	}
	if _, err := Open("no/such/model.gguf"); err == nil {
		t.Error("opened a missing file")
	}
}

// TestOpenArchitecture: a file of an architecture inferno does not run is
// refused in one line naming it and those it runs.
func TestOpenArchitecture(t *testing.T) {
	src, err := gguf.Open("../testdata/golden/tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := gguf.NewWriter()
	for _, kv := range src.KVs {
		v := kv.Value
		if kv.Key == "general.architecture" {
			if v, err = gguf.MakeValue("mamba"); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Set(kv.Key, v); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "mamba.gguf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(out); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	want := `model: unsupported architecture "mamba" (inferno runs ` + family.Names() + `) (file ` + path + ")"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	m, err := Open("../testdata/golden/tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if c := m.Arch.Hyper(); c.Arch != "qwen3" || !c.QKNorm || c.Bias || len(m.Arch.Plan()) != 5*c.Layers {
		t.Errorf("configuration %+v, %d steps", c, len(m.Arch.Plan()))
	}
}
