package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const goldenModel = "../../testdata/golden/tiny-q8_0.gguf"

var inferno string

// TestMain builds the inferno binary once; the tests run it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "inferno-cli")
	if err != nil {
		panic(err)
	}
	inferno = filepath.Join(dir, "inferno")
	if out, err := exec.Command("go", "build", "-o", inferno, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the binary with stdin and returns its output streams and exit code.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(inferno, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestTokenize(t *testing.T) {
	out, errOut, code := run(t, "", "tokenize", goldenModel, "Hello, world!<|im_end|>")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, want := strings.TrimSpace(out), "[9707,11,1879,0,151645]"; got != want {
		t.Errorf("tokenize = %s, want %s", got, want)
	}
	// "-" reads standard input verbatim, trailing newline included.
	out, _, _ = run(t, "Hello\n", "tokenize", goldenModel, "-")
	var ids []int
	if err := json.Unmarshal([]byte(out), &ids); err != nil || len(ids) != 2 || ids[1] != 198 {
		t.Errorf("tokenize - = %s (err %v), want 2 ids ending in 198 (newline)", out, err)
	}
}

func TestGenerate(t *testing.T) {
	out, errOut, code := run(t, "", "generate", goldenModel, "The quick brown fox", "-n", "5", "--backend", "scalar")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out == "" {
		t.Error("no text generated")
	}
	for _, key := range []string{"metrics:", "time_to_first_token_ms:", "decode_tokens_per_second:", "per_forward_ms: min", "(n=5)"} {
		if !strings.Contains(errOut, key) {
			t.Errorf("metrics lack %q:\n%s", key, errOut)
		}
	}
}

func TestLogits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logits.f32")
	out, errOut, code := run(t, "", "logits", goldenModel, "--tokens", "9707,11,1879", "--out", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() != 151936*4 {
		t.Fatalf("logits file: %v, size %d, want %d", err, st.Size(), 151936*4)
	}
	if !strings.Contains(out, "top 5:") {
		t.Errorf("output lacks the top 5:\n%s", out)
	}
}

func TestSynthRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if _, errOut, code := run(t, "", "synth", path, "--preset", "tiny", "--type", "f16", "--seed", "7", "--vocab-from", goldenModel); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	out, errOut, code := run(t, "", "generate", path, "Hello", "-n", "3")
	if code != 0 || out == "" {
		t.Fatalf("generate on synth model: exit %d: %s", code, errOut)
	}
}

// TestBadInput checks that bad models and arguments end the command with
// one line on stderr and a non-zero status.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "bad.gguf")
	os.WriteFile(notGGUF, []byte("this is not a gguf file at all, not even close"), 0o644)
	truncated := filepath.Join(dir, "trunc.gguf")
	data, _ := os.ReadFile(goldenModel)
	os.WriteFile(truncated, data[:len(data)/2], 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"generate", filepath.Join(dir, "missing.gguf"), "hi"}, "no such file"},
		{[]string{"generate", notGGUF, "hi"}, "bad magic"},
		{[]string{"generate", truncated, "hi"}, "past the end of the file"},
		{[]string{"logits", notGGUF, "--tokens", "1", "--out", filepath.Join(dir, "x")}, "bad magic"},
		{[]string{"tokenize", truncated, "hi"}, "past the end of the file"},
		{[]string{"logits", goldenModel, "--tokens", "1,x", "--out", filepath.Join(dir, "x")}, `"x" is not a token id`},
		{[]string{"logits", goldenModel, "--tokens", "999999", "--out", filepath.Join(dir, "x")}, "outside the vocabulary"},
		{[]string{"generate", goldenModel, "hi", "--backend", "quantum"}, `unknown backend "quantum"`},
		{[]string{"synth", filepath.Join(dir, "y.gguf"), "--preset", "70b"}, `unknown preset "70b"`},
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
	}
}
