package archfixtures_test

// The architectures of issue 31 (gpt-oss, Gemma 3, Mistral, Phi-4)
// against transformers, from the checkpoints families.py writes to
// testdata/arch: each converted by inferno (package convert) and run on
// every CPU backend and, where a GPU is, on cuda; and each as llama.cpp's
// convert_hf_to_gguf.py wrote it (NAME.llamacpp.gguf), run the same way.
// A checkpoint whose architecture no family registers yet (package
// family: the Hugging Face name for convert, the GGUF name for llama.cpp's
// file) is skipped, saying so; any other error fails.
//
// The cuda check runs where the driver sees a GPU; a machine without Go
// runs a test binary built here, from the repository root:
//
//	CGO_ENABLED=0 go test -c -o bin/archfixtures.test ./tools/archfixtures
//	cd tools/archfixtures && ../../bin/archfixtures.test -test.run TestFamilies -test.v

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend/cuda"
	"inferno/backend/forward/forwardtest"
	"inferno/backend/scalar"
	"inferno/convert"
	"inferno/engine"
	"inferno/family"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model"
	"inferno/placement"
)

// familyPrompt is one prompt of families.logits.json: its ids, the
// transformers float32 logits of positions First.. and the greedy tokens
// after it (full recomputation).
type familyPrompt struct {
	IDs    []int32     `json:"ids"`
	First  int         `json:"first"`
	Logits [][]float64 `json:"logits"`
	Greedy []int32     `json:"greedy"`
}

// familyModel is one checkpoint of families.logits.json.
type familyModel struct {
	Kind   string `json:"kind"`    // its tokenizer: testdata/arch/KIND.tokenizer*
	Arch   string `json:"arch"`    // general.architecture of its GGUF files
	HFArch string `json:"hf_arch"` // config.json's architectures[0]
	Quant  string `json:"quant"`   // "mxfp4": the Hub's MXFP4 expert tensors
	// LogitsOf names the checkpoint whose prompts are this one's too (the
	// same model stored otherwise: gpt-oss-mxfp4 is gpt-oss).
	LogitsOf string         `json:"logits_of"`
	Prompts  []familyPrompt `json:"prompts"`
	// LlamaCpp is llama.cpp's conversion of the checkpoint. Where its file
	// means another model than config.json (Note says why), Prompts holds
	// that model's logits, or, empty, those of LogitsOf's LlamaCpp.
	LlamaCpp *struct {
		File    string         `json:"file"`
		Note    string         `json:"note"`
		Prompts []familyPrompt `json:"prompts"`
	} `json:"llamacpp"`
}

type familyFixtures struct {
	Transformers string                 `json:"transformers"`
	Models       map[string]familyModel `json:"models"`
	Failed       map[string]string      `json:"failed"`
}

// readFamilies reads testdata/arch/families.logits.json, skipping the
// test where families.py has not been run yet.
func readFamilies(t *testing.T) *familyFixtures {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "families.logits.json"))
	if os.IsNotExist(err) {
		t.Skip("no testdata/arch/families.logits.json: run tools/archfixtures/families.py on a machine with transformers (see its doc)")
	}
	if err != nil {
		t.Fatal(err)
	}
	var fx familyFixtures
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	for name := range fx.Failed {
		t.Errorf("families.py failed on %s", name)
	}
	if len(fx.Models) == 0 {
		t.Fatal("no models in families.logits.json")
	}
	return &fx
}

// names returns the checkpoints of fx, sorted.
func (fx *familyFixtures) names() []string {
	names := make([]string, 0, len(fx.Models))
	for name := range fx.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// prompts returns the reference of checkpoint name.
func (fx *familyFixtures) prompts(t *testing.T, name string) []familyPrompt {
	t.Helper()
	m := fx.Models[name]
	if m.LogitsOf != "" {
		m = fx.Models[m.LogitsOf]
	}
	if len(m.Prompts) == 0 {
		t.Fatalf("%s: no prompts in families.logits.json", name)
	}
	return m.Prompts
}

// llamaCppPrompts returns the reference of llama.cpp's file of checkpoint
// name.
func (fx *familyFixtures) llamaCppPrompts(t *testing.T, name string) []familyPrompt {
	t.Helper()
	lc := fx.Models[name].LlamaCpp
	switch {
	case len(lc.Prompts) > 0:
		return lc.Prompts
	case lc.Note == "":
		return fx.prompts(t, name)
	}
	of := fx.Models[fx.Models[name].LogitsOf].LlamaCpp
	if of == nil || len(of.Prompts) == 0 {
		t.Fatalf("%s: llama.cpp's file means another model (%s), whose logits families.logits.json lacks", name, lc.Note)
	}
	return of.Prompts
}

// familyDir assembles checkpoint name's folder from testdata/arch:
// NAME.config.json, NAME.safetensors and KIND's tokenizer files.
func familyDir(t *testing.T, name string, mf familyModel) string {
	t.Helper()
	dir := checkpointDir(t, mf.Kind, nil, filepath.Join(testdata, name+".config.json"), nil, filepath.Join(testdata, name+".safetensors"))
	sp := filepath.Join(testdata, mf.Kind+".tokenizer.model")
	if b, err := os.ReadFile(sp); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "tokenizer.model"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return dir
}

// openFamily opens the GGUF file at path, checking its architecture.
func openFamily(t *testing.T, path string, mf familyModel) *model.Model {
	t.Helper()
	m, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if got := m.Arch.Hyper().Arch; got != mf.Arch {
		t.Fatalf("architecture %q, want %q", got, mf.Arch)
	}
	return m
}

// convertFamily converts families.py's checkpoint name with inferno and
// opens the file, skipping the test when no family converts it yet.
func convertFamily(t *testing.T, name string, mf familyModel) *model.Model {
	t.Helper()
	if _, _, ok := family.ByCheckpoint(mf.HFArch); !ok {
		t.Skipf("no family converts %s yet (registered: %s)", mf.HFArch, family.CheckpointNames())
	}
	out := filepath.Join(t.TempDir(), "model.gguf")
	if _, err := convert.Convert(context.Background(), familyDir(t, name, mf), out, convert.Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	return openFamily(t, out, mf)
}

// TestFamilies converts each checkpoint of families.py with inferno and
// checks it against transformers: every backend's logits (scalar within
// 1e-4, simd and pool 5e-2 with the same top token; check), 100 greedy
// tokens on scalar, and on a GPU, when there is one, cuda within 2e-3
// (checkCUDA). The MXFP4 checkpoint must keep its expert tensors MXFP4,
// byte for byte as llama.cpp's converter writes them.
func TestFamilies(t *testing.T) {
	fx := readFamilies(t)
	for _, name := range fx.names() {
		mf := fx.Models[name]
		t.Run(name, func(t *testing.T) {
			m := convertFamily(t, name, mf)
			if mf.Quant == "mxfp4" {
				checkMXFP4(t, m, mf)
			}
			prompts := fx.prompts(t, name)
			for _, p := range prompts {
				check(t, m, p.IDs, p.First, p.Logits, p.Greedy)
			}
			checkCUDA(t, m, prompts)
		})
	}
}

// TestFamiliesF16Cache runs each family's conversion on the scalar
// backend with the KV cache in half precision, as the GPU backends and
// llama.cpp keep it, everything else exact: the cache's rounding alone,
// the part of checkCUDA's 2e-3 that no kernel can give back. Measured
// (2026-12-07): 1.9e-4 to 7.8e-4 for every family but gpt-oss, which is
// 3.0e-3 off (the 26-token prompt's position 14; 2.0e-3 at 15): the GPU's
// 2e-3 is out of its reach with a half-precision cache. The allowance
// here for it is f16GptOssTol.
func TestFamiliesF16Cache(t *testing.T) {
	fx := readFamilies(t)
	for _, name := range fx.names() {
		mf := fx.Models[name]
		t.Run(name, func(t *testing.T) {
			m := convertFamily(t, name, mf)
			tol := 1e-3
			if mf.Arch == "gpt-oss" {
				tol = f16GptOssTol
			}
			for _, p := range fx.prompts(t, name) {
				ops := scalar.NewScalar()
				r := forwardtest.Single(t, m.Arch, ops, 256, kvcache.F16)
				checkRun(t, "scalar, f16 cache", r, tol, p.IDs, p.First, p.Logits, nil)
				r.Close()
			}
		})
	}
}

// f16GptOssTol bounds gpt-oss's logits with a half-precision cache
// (TestFamiliesF16Cache): 3.0e-3 measured.
const f16GptOssTol = 4e-3

// TestFamiliesLlamaCpp opens each file llama.cpp's convert_hf_to_gguf.py
// made of families.py's checkpoints and checks it as TestFamilies checks
// inferno's conversion, against the model the file means (llamaCppPrompts).
func TestFamiliesLlamaCpp(t *testing.T) {
	fx := readFamilies(t)
	for _, name := range fx.names() {
		mf := fx.Models[name]
		t.Run(name, func(t *testing.T) {
			if _, ok := family.Lookup(mf.Arch); !ok {
				t.Skipf("no family runs architecture %q yet (registered: %s)", mf.Arch, family.Names())
			}
			if mf.LlamaCpp == nil {
				t.Fatalf("families.py has no llama.cpp conversion of %s (checks: see families.logits.json)", name)
			}
			m := openFamily(t, filepath.Join(testdata, mf.LlamaCpp.File), mf)
			if mf.LlamaCpp.Note != "" {
				t.Logf("llama.cpp's file: %s", mf.LlamaCpp.Note)
			}
			prompts := fx.llamaCppPrompts(t, name)
			for _, p := range prompts {
				check(t, m, p.IDs, p.First, p.Logits, p.Greedy)
			}
			checkCUDA(t, m, prompts)
		})
	}
}

// checkMXFP4 checks that m, inferno's conversion of an MXFP4 checkpoint,
// holds its expert tensors as MXFP4, and that every MXFP4 tensor of
// llama.cpp's conversion is in m with the same shape and bytes.
func checkMXFP4(t *testing.T, m *model.Model, mf familyModel) {
	t.Helper()
	n := 0
	for _, ti := range m.File.Tensors {
		if strings.Contains(ti.Name, "_exps.") && strings.HasSuffix(ti.Name, ".weight") {
			if ti.Type != gguf.TensorMXFP4 {
				t.Errorf("%s is %s, want MXFP4 as the checkpoint", ti.Name, ti.Type)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no expert tensors (blk.N.ffn_*_exps.weight)")
	}
	if mf.LlamaCpp == nil {
		t.Fatal("no llama.cpp conversion to compare the MXFP4 tensors with")
	}
	theirs, err := gguf.Open(filepath.Join(testdata, mf.LlamaCpp.File))
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	same := 0
	for _, ti := range theirs.Tensors {
		if ti.Type != gguf.TensorMXFP4 {
			continue
		}
		oi, ok := m.File.Tensor(ti.Name)
		switch {
		case !ok:
			t.Errorf("%s: in llama.cpp's file, not in inferno's", ti.Name)
		case oi.Type != ti.Type || !slices.Equal(oi.Shape, ti.Shape):
			t.Errorf("%s: %s %v, llama.cpp's %s %v", ti.Name, oi.Type, oi.Shape, ti.Type, ti.Shape)
		case !bytes.Equal(oi.Data, ti.Data):
			t.Errorf("%s: MXFP4 blocks differ from llama.cpp's", ti.Name)
		default:
			same++
		}
	}
	if same != n {
		t.Errorf("%d of inferno's %d expert tensors are llama.cpp's MXFP4 tensors byte for byte", same, n)
	}
}

// checkCUDA runs prompts on the GPU, where there is one, as the commands
// run a model there (placement's cuda backend, a context of 256, a batch
// of one): logits within 2e-3 of the reference, the same top token.
func checkCUDA(t *testing.T, m *model.Model, prompts []familyPrompt) {
	t.Helper()
	if err := cuda.Available(); err != nil {
		t.Logf("cuda: not checked (%v)", err)
		return
	}
	if w := m.Arch.Tensors().Layers[0].Matrix(arch.RoleExpertGate); w != nil && (w.Type == gguf.TensorF32 || w.Type == gguf.TensorF16 || w.Type == gguf.TensorBF16) {
		// By design: the GPU multiplies experts in the block formats only,
		// and refuses this conversion's float experts in one line.
		t.Logf("cuda: not checked: its experts are %s", w.Type)
		return
	}
	b, err := placement.Open(m, placement.Config{Backend: "cuda", Context: 256})
	if err != nil {
		t.Errorf("cuda: %v", err)
		return
	}
	defer b.Close()
	for _, p := range prompts {
		br, err := b.NewBatchRunner(placement.BatchConfig{Sequences: 1})
		if err != nil {
			t.Fatalf("cuda: %v", err)
		}
		s := engine.NewSingle(br)
		checkRun(t, "cuda", s, 2e-3, p.IDs, p.First, p.Logits, nil)
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}
