package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"inferno/hub/hubtest"
)

const hubRepo = "Qwen/Qwen3-0.6B-GGUF"

// hubFixture starts a stand-in hub whose repository Qwen/Qwen3-0.6B-GGUF
// holds the golden model as its Q8_0 file, and returns it with the
// environment that points the binary at it and at an empty cache.
func hubFixture(t *testing.T) (srv *hubtest.Server, env []string, cache string, model []byte) {
	t.Helper()
	model, err := os.ReadFile(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	srv = hubtest.New()
	t.Cleanup(srv.Close)
	srv.Add(hubRepo, map[string][]byte{
		"README.md":            []byte("# stand-in\n"),
		"Qwen3-0.6B-Q8_0.gguf": model,
		"Qwen3-0.6B-F16.gguf":  []byte("not used"),
	}, false)
	home := t.TempDir()
	cache = filepath.Join(home, "hub")
	env = append(os.Environ(), "HF_ENDPOINT="+srv.URL(), "HF_HOME="+home, "HF_HUB_CACHE=", "HUGGINGFACE_HUB_CACHE=",
		"HF_TOKEN=", "HUGGING_FACE_HUB_TOKEN=", "HF_TOKEN_PATH=", "HF_HUB_OFFLINE=")
	return srv, env, cache, model
}

// runEnv runs the binary with the environment env.
func runEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runWith(t, env, "", args...)
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func TestPullCommand(t *testing.T) {
	t.Parallel()
	srv, env, cache, model := hubFixture(t)
	out, errOut, code := runEnv(t, env, "pull", hubRepo+":q8_0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := lastLine(out)
	if !strings.HasPrefix(path, filepath.Join(cache, "models--Qwen--Qwen3-0.6B-GGUF", "snapshots")+"/") || !strings.HasSuffix(path, "/Qwen3-0.6B-Q8_0.gguf") {
		t.Errorf("last line %q is not the cached snapshot path", path)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, model) {
		t.Errorf("%s does not hold the model (%v)", path, err)
	}
	srv.Requests()
	// REPO FILE, and --offline, find the same file without a download.
	out, errOut, code = runEnv(t, env, "pull", hubRepo, "Qwen3-0.6B-Q8_0.gguf")
	if code != 0 || lastLine(out) != path {
		t.Errorf("pull REPO FILE: exit %d, %q, %s", code, out, errOut)
	}
	out, errOut, code = runEnv(t, env, "pull", "--offline", hubRepo+":Q8_0")
	if code != 0 || lastLine(out) != path {
		t.Errorf("pull --offline: exit %d, %q, %s", code, out, errOut)
	}
	for _, r := range srv.Requests() {
		if r.Method != "GET" || r.Server != "hub" {
			t.Errorf("a cached file cost %s %s %s", r.Server, r.Method, r.Path)
		}
	}
	// Errors: a missing quantization, a bad reference, too many arguments.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pull", hubRepo + ":Q4_K_M"}, "no GGUF file for quantization Q4_K_M; available: F16, Q8_0"},
		{[]string{"pull", "--offline", hubRepo + ":F16"}, "looking in the cache only"},
		{[]string{"pull", "Qwen/../x:Q8_0"}, "repository"},
		{[]string{"pull", hubRepo + ":Q8_0", "file.gguf"}, "either REPO FILE or REPO:QUANT"},
		{[]string{"pull", "me/private:Q8_0"}, "HTTP 401"},
	} {
		_, errOut, code := runEnv(t, env, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, %q; want exit 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestPullChecksum(t *testing.T) {
	t.Parallel()
	srv, env, cache, _ := hubFixture(t)
	srv.Corrupt(hubRepo, "Qwen3-0.6B-Q8_0.gguf")
	_, errOut, code := runEnv(t, env, "pull", hubRepo+":Q8_0")
	if code != 1 || !strings.Contains(errOut, "checksum mismatch") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	blobs, _ := os.ReadDir(filepath.Join(cache, "models--Qwen--Qwen3-0.6B-GGUF", "blobs"))
	snaps, _ := os.ReadDir(filepath.Join(cache, "models--Qwen--Qwen3-0.6B-GGUF", "snapshots"))
	if len(blobs) != 0 || len(snaps) != 0 {
		t.Errorf("left behind: blobs %v, snapshots %v", blobs, snaps)
	}
}

// TestPullInterrupted stops a pull with SIGINT or SIGTERM halfway and
// checks that the next run continues from the bytes the first one left.
func TestPullInterrupted(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { testPullInterrupted(t, sig) })
	}
}

func testPullInterrupted(t *testing.T, sig syscall.Signal) {
	srv, env, cache, model := hubFixture(t)
	srv.SetRate(int64(len(model)) / 4) // about four seconds
	cmd := exec.Command(inferno, "pull", hubRepo+":Q8_0")
	cmd.Env = env
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(model)
	inc := filepath.Join(cache, "models--Qwen--Qwen3-0.6B-GGUF", "blobs", hex.EncodeToString(sum[:])+".incomplete")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, err := os.Stat(inc); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no partial download after 20 s: %s", e.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(sig)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+int(sig) || !strings.Contains(e.String(), "continues it") {
		t.Fatalf("interrupted pull: %v, %s", err, e.String())
	}
	st, err := os.Stat(inc)
	if err != nil || st.Size() == 0 || st.Size() >= int64(len(model)) {
		t.Fatalf("the interrupted pull left %v (%v)", st, err)
	}
	srv.SetRate(0)
	srv.Requests()
	out, errOut, code := runEnv(t, env, "pull", hubRepo+":Q8_0")
	if code != 0 || !strings.Contains(errOut, "resuming Qwen3-0.6B-Q8_0.gguf") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, err := os.ReadFile(lastLine(out)); err != nil || !bytes.Equal(got, model) {
		t.Errorf("the resumed file differs (%v)", err)
	}
	for _, r := range srv.Requests() {
		if r.Server == "cdn" && !strings.HasPrefix(r.Range, "bytes=") {
			t.Errorf("the second run asked for the whole file (Range %q)", r.Range)
		}
	}
}

// TestGenerateFromHub runs generate on REPO:QUANT end to end: pulled from
// the stand-in, the same output as from the file itself; then offline.
func TestGenerateFromHub(t *testing.T) {
	t.Parallel()
	srv, env, _, _ := hubFixture(t)
	args := []string{"The quick brown fox", "-n", "5", "--backend", "scalar"}
	want, errOut, code := runEnv(t, env, append([]string{"generate", goldenModel}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, errOut, code := runEnv(t, env, append([]string{"generate", hubRepo + ":Q8_0"}, args...)...)
	if code != 0 || got != want {
		t.Fatalf("generate REPO:QUANT: exit %d, %q, want %q: %s", code, got, want, errOut)
	}
	srv.Requests()
	got, errOut, code = runEnv(t, env, append([]string{"generate", "--offline", "hf://" + hubRepo + "/Qwen3-0.6B-Q8_0.gguf"}, args...)...)
	if code != 0 || got != want {
		t.Fatalf("generate --offline hf://: exit %d, %q: %s", code, got, errOut)
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Errorf("--offline made requests: %+v", reqs)
	}
	_, errOut, code = runEnv(t, env, append([]string{"generate", "--offline", "other/model:Q8_0"}, args...)...)
	if code != 1 || !strings.Contains(errOut, "not in the cache") {
		t.Errorf("generate --offline, not cached: exit %d, %s", code, errOut)
	}
	// A model in parts is refused before anything is downloaded.
	srv.Add("o/split", map[string][]byte{"m-Q8_0-00001-of-00002.gguf": []byte("a"), "m-Q8_0-00002-of-00002.gguf": []byte("b")}, false)
	srv.Requests()
	_, errOut, code = runEnv(t, env, append([]string{"generate", "o/split:Q8_0"}, args...)...)
	if code != 1 || !strings.Contains(errOut, "split into 2 files") {
		t.Errorf("generate on a split model: exit %d, %s", code, errOut)
	}
	for _, r := range srv.Requests() {
		if r.Server == "cdn" || r.Method == "HEAD" {
			t.Errorf("a refused split model cost %s %s %s", r.Server, r.Method, r.Path)
		}
	}
}

// TestPullConcurrent runs two pulls of one file at once: the second waits
// on the first one's lock and then finds the file in the cache.
func TestPullConcurrent(t *testing.T) {
	t.Parallel()
	srv, env, cache, model := hubFixture(t)
	srv.SetRate(int64(len(model))) // about a second
	first := exec.Command(inferno, "pull", hubRepo+":Q8_0")
	first.Env = env
	var o1, e1 bytes.Buffer
	first.Stdout, first.Stderr = &o1, &e1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(model)
	inc := filepath.Join(cache, "models--Qwen--Qwen3-0.6B-GGUF", "blobs", hex.EncodeToString(sum[:])+".incomplete")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(inc); err == nil {
			break
		}
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatalf("the first pull did not start: %s", e1.String())
		}
	}
	out, errOut, code := runEnv(t, env, "pull", hubRepo+":Q8_0")
	if err := first.Wait(); err != nil {
		t.Fatalf("first pull: %v: %s", err, e1.String())
	}
	if code != 0 || !strings.Contains(errOut, "waiting for another process downloading Qwen3-0.6B-Q8_0.gguf") {
		t.Fatalf("second pull: exit %d: %s", code, errOut)
	}
	if lastLine(out) != lastLine(o1.String()) {
		t.Errorf("paths %q and %q differ", lastLine(out), lastLine(o1.String()))
	}
	if got, err := os.ReadFile(lastLine(out)); err != nil || !bytes.Equal(got, model) {
		t.Errorf("the pulled file differs (%v)", err)
	}
	n := 0
	for _, r := range srv.Requests() {
		if r.Server == "cdn" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
}

// TestTokenizeFromHub checks the model argument of another command.
func TestTokenizeFromHub(t *testing.T) {
	t.Parallel()
	_, env, _, _ := hubFixture(t)
	out, errOut, code := runEnv(t, env, "tokenize", "hf://"+hubRepo+"/Qwen3-0.6B-Q8_0.gguf", "Hello, world!<|im_end|>")
	if code != 0 || strings.TrimSpace(out) != "[9707,11,1879,0,151645]" {
		t.Errorf("exit %d, %q: %s", code, out, errOut)
	}
}
