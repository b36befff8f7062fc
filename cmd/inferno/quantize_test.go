package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferno/gguf"
)

// TestQuantize writes a small F32 model with synth (the golden model's
// vocabulary; with -short, a byte-level one of 320 tokens), quantizes it,
// and runs the result.
func TestQuantize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "f32.gguf")
	args := []string{"synth", in, "--type", "f32", "--hidden", "256", "--ffn", "512", "--layers", "3",
		"--heads", "4", "--kv-heads", "2", "--head-dim", "64", "--untied"}
	if testing.Short() {
		args = append(args, "--vocab-size", "320")
	} else {
		// The real vocabulary: embedding and output head of 39 million
		// weights each.
		args = append(args, "--vocab-from", goldenModel)
	}
	if _, errOut, code := run(t, "", args...); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	out := filepath.Join(dir, "q", "q4_k_m.gguf")
	_, errOut, code := run(t, "", "quantize", in, out, "--type", "q4_k_m", "--threads", "2")
	if code != 0 {
		t.Fatalf("quantize: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(errOut, "Q4_K_M") || !strings.Contains(errOut, "bits per weight") ||
		!strings.Contains(errOut, "Q6_K") || !strings.Contains(errOut, "with 2 threads") {
		t.Errorf("summary %q", errOut)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	ft, _ := f.Int("general.file_type")
	head, _ := f.Tensor("output.weight")
	if ft != 15 || head.Type != gguf.TensorQ6_K {
		t.Errorf("file type %d, output.weight %s; want 15 and Q6_K", ft, head.Type)
	}
	f.Close()

	// A Q8_0 file runs on the CPU.
	out = filepath.Join(dir, "q8_0.gguf")
	if _, errOut, code := run(t, "", "quantize", in, out, "--type", "Q8_0"); code != 0 {
		t.Fatalf("quantize: exit %d: %s", code, errOut)
	}
	if text, errOut, code := run(t, "", "generate", out, "Hello", "-n", "3", "--backend", "scalar"); code != 0 || text == "" {
		t.Fatalf("generate on the quantized model: exit %d: %s", code, errOut)
	}
}

// TestQuantizeBadInput checks that bad arguments and input end the
// command with one line on stderr, a non-zero status and no output file.
func TestQuantizeBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	q8 := filepath.Join(dir, "q8.gguf")
	if _, errOut, code := run(t, "", "synth", q8, "--type", "q8_0"); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	f32 := filepath.Join(dir, "f32.gguf")
	if _, errOut, code := run(t, "", "synth", f32, "--type", "f32"); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	notGGUF := filepath.Join(dir, "bad.gguf")
	os.WriteFile(notGGUF, []byte("this is not a gguf file at all, not even close"), 0o644)
	out := filepath.Join(dir, "out", "o.gguf")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"quantize", f32, out}, "--type is required"},
		{[]string{"quantize", f32, out, "--type", "q4_k_x"}, `unknown quantization type "q4_k_x"`},
		{[]string{"quantize", f32, out, "--type", "q4_k_m", "--threads", "-1"}, "--threads -1"},
		{[]string{"quantize", f32, "--type", "q4_k_m"}, "accepts 2 arg(s)"},
		{[]string{"quantize", q8, out, "--type", "q4_k_m"}, "already quantized (Q8_0)"},
		{[]string{"quantize", notGGUF, out, "--type", "q4_k_m"}, "bad magic"},
		{[]string{"quantize", filepath.Join(dir, "missing.gguf"), out, "--type", "q4_k_m"}, "no such file"},
		// The tiny preset's rows of 64 have no Q4_K blocks; --pure allows no fallback.
		{[]string{"quantize", f32, out, "--type", "q4_k_m", "--pure"}, "not a multiple of the Q4_K block size 256"},
		{[]string{"quantize", f32, f32, "--type", "q4_k_m"}, "same file"},
		{[]string{"synth", out, "--type", "q9_9"}, `--type "q9_9"`},
		{[]string{"synth", out, "--heads", "6", "--kv-heads", "4"}, "not a multiple of 4 KV heads"},
		{[]string{"synth", out, "--type", "q4_k"}, "not a multiple of the Q4_K block size 256"},
		// Shape flags of 0 would mean the preset's value: refused, not ignored.
		{[]string{"synth", out, "--layers", "0"}, "--layers 0: want at least 1"},
		{[]string{"synth", out, "--heads", "3", "--kv-heads", "0"}, "--kv-heads 0: want at least 1"},
		{[]string{"synth", out, "--vocab-size", "100"}, "vocabulary of 100 tokens is smaller than the 259"},
		{[]string{"synth", dir}, "output " + dir + " is a folder"},
		{[]string{"quantize", f32, dir, "--type", "q8_0"}, "output " + dir + " is a folder"},
	}
	for _, tc := range tests {
		_, errOut, code := run(t, "", tc.args...)
		if code == 0 {
			t.Errorf("%v: exit status 0", tc.args)
			continue
		}
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if len(lines) != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: stderr %q, want one line containing %q", tc.args, errOut, tc.want)
		}
		if _, err := os.Stat(filepath.Dir(out)); err == nil {
			t.Errorf("%v: the output folder made for it was left behind", tc.args)
		}
	}
}

// TestSynthPresetsAndTypes checks synth's shape flags and mixtures.
func TestSynthPresetsAndTypes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	_, errOut, code := run(t, "", "synth", path, "--type", "Q4_K_M", "--layers", "8", "--hidden", "256", "--ffn", "256",
		"--heads", "6", "--kv-heads", "2", "--head-dim", "128", "--untied", "--vocab-size", "1000")
	if code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "preset tiny-custom (8 layers, hidden 256, 6/2 heads of 128), Q4_K_M weights") {
		t.Errorf("summary %q", errOut)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[gguf.TensorType]int{}
	for _, ti := range f.Tensors {
		counts[ti.Type]++
	}
	// 8 layers: attn_v and ffn_down of layers 0, 3, 6, 7 (use_more_bits)
	// and the output head get Q6_K.
	if counts[gguf.TensorQ6_K] != 9 || counts[gguf.TensorQ4_K] != 8*7-8+1 || counts[gguf.TensorF32] != 8*4+1 {
		t.Errorf("types %v", counts)
	}
}
