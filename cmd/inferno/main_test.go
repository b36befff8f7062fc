package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"inferno/gguf"
)

const goldenModel = "../../testdata/golden/tiny-q8_0.gguf"

var (
	binFlag     = flag.String("inferno-bin", "", "run this inferno binary, built beforehand, instead of building one (on a GPU machine without Go)")
	backendFlag = flag.String("backend", "simd", "the backend the generate, serve and bench tests run on (cuda on a GPU machine)")
)

// inferno is the path of the binary under test.
var inferno string

// testBackend is the backend the tests that take one run on: -backend.
func testBackend() string { return *backendFlag }

// TestMain builds the inferno binary once; the tests run it as a user
// would. -inferno-bin names a binary built beforehand instead.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "inferno-cli")
	if err != nil {
		panic(err)
	}
	inferno = filepath.Join(dir, "inferno")
	if *binFlag != "" {
		if inferno, err = filepath.Abs(*binFlag); err != nil {
			panic(err)
		}
	} else if out, err := exec.Command("go", "build", "-o", inferno, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the binary with stdin and returns its output streams and exit code.
func run(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runWith(t, nil, stdin, args...)
}

// runWith is run with the environment env (nil: the test's own).
func runWith(t testing.TB, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(inferno, args...)
	cmd.Env = env
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new", "folder", "m.gguf") // folders that do not exist yet
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
	t.Parallel()
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
		{[]string{"generate", goldenModel, "hi", "-n", "0"}, "want at least 1 token"},
		{[]string{"generate", goldenModel, "hi", "--ctx", "50000"}, "exceeds the model's context length 40960"},
		{[]string{"generate", goldenModel, "hi", "--threads", "100000"}, "--threads 100000"},
		{[]string{"generate", goldenModel, "hi", "--backend", "pool", "--no-graph"}, "--no-graph applies to the GPU backends"},
		{[]string{"generate", goldenModel, "one two three four", "--ctx", "3"}, "do not fit the context of 3"},
		{[]string{"generate", hugeLayers(t, dir), "hi"}, "block_count 16777216 needs"},
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

// hugeLayers writes a copy of the golden model that claims 2^24 layers.
func hugeLayers(t *testing.T, dir string) string {
	t.Helper()
	src, err := gguf.Open(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := gguf.NewWriter()
	for _, kv := range src.KVs {
		v := kv.Value
		if kv.Key == "qwen3.block_count" {
			v, _ = gguf.MakeValue(uint32(1 << 24))
		}
		if err := w.Set(kv.Key, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range src.Tensors {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, ti.Data); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "huge-layers.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInterrupt checks that Ctrl-C stops a long prompt promptly, with exit
// status 130.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(inferno, "generate", goldenModel, "-", "--backend", "scalar", "-n", "5")
	cmd.Stdin = strings.NewReader(strings.Repeat("hello world ", 6000))
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 130 {
			t.Errorf("exit: %v, want status 130; stderr %q", err, e.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still running 20 s after Ctrl-C")
	}
}
