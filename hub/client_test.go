package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"inferno/hub/hubtest"
)

const repoID = "Qwen/Qwen3-0.6B-GGUF"

// content returns n bytes of reproducible noise.
func content(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// fixture starts a stand-in hub holding a public repository of three GGUF
// files (3 MiB, 2 MiB and 1 KiB) and a README, and returns a client for it
// with an empty cache.
func fixture(t *testing.T) (*hubtest.Server, *Client, map[string][]byte, string) {
	t.Helper()
	srv := hubtest.New()
	t.Cleanup(srv.Close)
	files := map[string][]byte{
		"README.md":              []byte("# Qwen3-0.6B-GGUF\n"),
		"Qwen3-0.6B-Q8_0.gguf":   content(1, 3<<20),
		"Qwen3-0.6B-Q4_K_M.gguf": content(2, 2<<20),
		"mmproj-F16.gguf":        content(3, 1<<10),
	}
	commit := srv.Add(repoID, files, false)
	c := &Client{Endpoint: srv.URL(), Cache: t.TempDir(), RetryDelay: time.Millisecond}
	return srv, c, files, commit
}

func pull(t *testing.T, c *Client, ref string) ([]string, *Snapshot, error) {
	t.Helper()
	r, err := ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Resolve(context.Background(), r)
	if err != nil {
		return nil, nil, err
	}
	paths, err := c.Fetch(context.Background(), s)
	return paths, s, err
}

// incomplete is the path of the partial download of data, a file of the
// fixture's repository.
func incomplete(c *Client, data []byte) string {
	sum := sha256.Sum256(data)
	return filepath.Join(c.Cache, "models--Qwen--Qwen3-0.6B-GGUF", "blobs", hex.EncodeToString(sum[:])+".incomplete")
}

// writePartial leaves partial as the partial download of data, as an
// earlier run would.
func writePartial(t *testing.T, c *Client, data, partial []byte) {
	t.Helper()
	inc := incomplete(c, data)
	if err := os.MkdirAll(filepath.Dir(inc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inc, partial, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkPulled checks that path is the snapshot link to a blob named by
// the content's sha256 and holding it.
func checkPulled(t *testing.T, c *Client, path, commit, file string, want []byte) {
	t.Helper()
	if path != filepath.Join(c.Cache, "models--Qwen--Qwen3-0.6B-GGUF", "snapshots", commit, file) {
		t.Errorf("path = %s, not the snapshot's", path)
	}
	target, err := os.Readlink(path)
	sum := sha256.Sum256(want)
	if err != nil || target != "../../blobs/"+hex.EncodeToString(sum[:]) {
		t.Errorf("link %s -> %q (%v), want ../../blobs/<sha256>", path, target, err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s holds %d bytes (%v), not the file's %d", path, len(got), err, len(want))
	}
}

// count returns how many requests went to server with method.
func count(reqs []hubtest.Request, server, method string) int {
	n := 0
	for _, r := range reqs {
		if r.Server == server && r.Method == method {
			n++
		}
	}
	return n
}

func TestPull(t *testing.T) {
	srv, c, files, commit := fixture(t)
	var seen []int64
	c.Progress = func(file string, have, size int64) { seen = append(seen, have) }
	paths, s, err := pull(t, c, repoID+":q8_0")
	if err != nil {
		t.Fatal(err)
	}
	if s.Commit != commit || len(paths) != 1 || s.Note != "" {
		t.Fatalf("snapshot %+v, paths %q", s, paths)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
	ref, err := os.ReadFile(filepath.Join(c.Cache, "models--Qwen--Qwen3-0.6B-GGUF", "refs", "main"))
	if err != nil || string(ref) != commit {
		t.Errorf("refs/main = %q (%v), want %s", ref, err, commit)
	}
	if len(seen) < 2 || seen[0] != 0 || seen[len(seen)-1] != 3<<20 {
		t.Errorf("progress went %v, want 0 up to the size", seen)
	}
	reqs := srv.Requests()
	if count(reqs, "hub", "GET") != 1 || count(reqs, "hub", "HEAD") != 1 || count(reqs, "cdn", "GET") != 1 {
		t.Errorf("requests %+v: want the listing, one HEAD, one CDN GET", reqs)
	}
	// The file is in the cache now: a second pull costs the listing only.
	paths2, _, err := pull(t, c, repoID+":Q8_0")
	if err != nil || paths2[0] != paths[0] {
		t.Fatalf("second pull: %q, %v", paths2, err)
	}
	if reqs := srv.Requests(); len(reqs) != 1 {
		t.Errorf("second pull made requests %+v, want the listing alone", reqs)
	}
}

func TestPullDefaultAndFile(t *testing.T) {
	_, c, files, commit := fixture(t)
	paths, s, err := pull(t, c, repoID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Note, "no quantization given, taking Q4_K_M (Qwen3-0.6B-Q4_K_M.gguf)") {
		t.Errorf("note %q does not say which file was taken", s.Note)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q4_K_M.gguf", files["Qwen3-0.6B-Q4_K_M.gguf"])
	// A file outside LFS: its etag is git's blob id, checked as such.
	paths, _, err = pull(t, c, "hf://"+repoID+"/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(paths[0]); !bytes.Equal(got, files["README.md"]) {
		t.Errorf("README.md = %q", got)
	}
}

func TestPullMissingQuant(t *testing.T) {
	srv, c, _, _ := fixture(t)
	_, _, err := pull(t, c, repoID+":Q5_K_M")
	if err == nil || !strings.Contains(err.Error(), "no GGUF file for quantization Q5_K_M; available: Q4_K_M, Q8_0") {
		t.Errorf("err = %v, want the available quantizations listed", err)
	}
	if reqs := srv.Requests(); len(reqs) != 1 {
		t.Errorf("requests %+v, want the listing alone", reqs)
	}
}

func TestResumeWithinRun(t *testing.T) {
	srv, c, files, commit := fixture(t)
	srv.Cut(2, 1<<20) // two transfers break after 1 MiB each
	var notes bytes.Buffer
	c.Info = &notes
	paths, _, err := pull(t, c, repoID+":Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
	var ranges []string
	for _, r := range srv.Requests() {
		if r.Server == "cdn" {
			ranges = append(ranges, r.Range)
		}
	}
	if strings.Join(ranges, ",") != ",bytes=1048576-,bytes=2097152-" {
		t.Errorf("CDN ranges %q, want none, then from 1 MiB, then from 2 MiB", ranges)
	}
	if !strings.Contains(notes.String(), "retrying from byte 1048576") {
		t.Errorf("notes %q do not mention the retry", notes.String())
	}
}

func TestResumeAcrossRuns(t *testing.T) {
	srv, c, files, commit := fixture(t)
	// The first run is interrupted (Ctrl-C) once 1 MiB has arrived.
	ctx, cancel := context.WithCancel(context.Background())
	c.Progress = func(file string, have, size int64) {
		if have >= 1<<20 {
			cancel()
		}
	}
	s, err := c.Resolve(ctx, Ref{Repo: repoID, Quant: "Q8_0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted fetch: %v", err)
	}
	inc := incomplete(c, files["Qwen3-0.6B-Q8_0.gguf"])
	st, err := os.Stat(inc)
	if err != nil || st.Size() < 1<<20 || st.Size() >= 3<<20 {
		t.Fatalf("the interrupted run left %v (%v), want a partial .incomplete", st, err)
	}
	if _, ok := newCache(c.Cache, repoID).cached(commit, "Qwen3-0.6B-Q8_0.gguf"); ok {
		t.Fatal("the interrupted file is in the snapshot")
	}
	srv.Requests()
	// The next run continues where it stopped.
	c.Progress = nil
	paths, _, err := pull(t, c, repoID+":Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
	for _, r := range srv.Requests() {
		if r.Server == "cdn" && r.Range != "bytes="+strconv.FormatInt(st.Size(), 10)+"-" {
			t.Errorf("the second run asked the CDN for %q, want bytes=%d-", r.Range, st.Size())
		}
	}
	if _, err := os.Stat(inc); !os.IsNotExist(err) {
		t.Errorf(".incomplete left behind: %v", err)
	}
}

func TestGiveUpWithoutProgress(t *testing.T) {
	srv, c, _, _ := fixture(t)
	c.Retries = 2
	srv.Cut(100, 0)
	_, _, err := pull(t, c, repoID+":Q8_0")
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts without progress") {
		t.Errorf("err = %v", err)
	}
	if n := count(srv.Requests(), "cdn", "GET"); n != 3 {
		t.Errorf("%d CDN requests, want 3", n)
	}
}

func TestRangeIgnored(t *testing.T) {
	srv, c, files, commit := fixture(t)
	// An earlier run left half the file; this CDN answers the Range
	// request with the whole file, which replaces the partial one.
	data := files["Qwen3-0.6B-Q8_0.gguf"]
	writePartial(t, c, data, data[:1<<20])
	srv.IgnoreRange(true)
	paths, _, err := pull(t, c, repoID+":Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", data)
}

func TestStalePartialLonger(t *testing.T) {
	_, c, files, commit := fixture(t)
	// A partial file longer than the content cannot belong to it.
	data := files["Qwen3-0.6B-Q4_K_M.gguf"]
	writePartial(t, c, data, content(9, 3<<20))
	paths, _, err := pull(t, c, repoID+":Q4_K_M")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q4_K_M.gguf", data)
}

func TestChecksumMismatch(t *testing.T) {
	srv, c, files, commit := fixture(t)
	srv.Corrupt(repoID, "Qwen3-0.6B-Q8_0.gguf")
	_, _, err := pull(t, c, repoID+":Q8_0")
	sum := sha256.Sum256(files["Qwen3-0.6B-Q8_0.gguf"])
	want := hex.EncodeToString(sum[:])
	bad := bytes.Clone(files["Qwen3-0.6B-Q8_0.gguf"])
	bad[len(bad)/2] ^= 0xff
	badSum := sha256.Sum256(bad)
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), hex.EncodeToString(badSum[:])) {
		t.Fatalf("err = %v, want a checksum mismatch naming %s and %x", err, want, badSum)
	}
	dir := filepath.Join(c.Cache, "models--Qwen--Qwen3-0.6B-GGUF")
	for _, p := range []string{"blobs/" + want, "blobs/" + want + ".incomplete", "snapshots/" + commit + "/Qwen3-0.6B-Q8_0.gguf"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
}

func TestPrivate(t *testing.T) {
	srv, c, files, _ := fixture(t)
	commit := srv.Add("me/private-GGUF", map[string][]byte{"m-Q8_0.gguf": files["Qwen3-0.6B-Q8_0.gguf"]}, true)
	_, _, err := pull(t, c, "me/private-GGUF:Q8_0")
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "set HF_TOKEN") {
		t.Errorf("without a token: %v, want a 401 asking for HF_TOKEN", err)
	}
	c.Token = "wrong"
	_, _, err = pull(t, c, "me/private-GGUF:Q8_0")
	if err == nil || !strings.Contains(err.Error(), "Invalid credentials") || !strings.Contains(err.Error(), "invalid or has no access") {
		t.Errorf("with a wrong token: %v", err)
	}
	c.Token = srv.Token
	srv.Requests()
	paths, _, err := pull(t, c, "me/private-GGUF:Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(paths[0], filepath.Join("models--me--private-GGUF", "snapshots", commit, "m-Q8_0.gguf")) {
		t.Errorf("path %s", paths[0])
	}
	for _, r := range srv.Requests() {
		if want := map[string]string{"hub": "Bearer " + srv.Token, "cdn": ""}[r.Server]; r.Auth != want {
			t.Errorf("%s %s %s carried Authorization %q, want %q", r.Server, r.Method, r.Path, r.Auth, want)
		}
	}
	// A missing repository reads as missing or private.
	_, _, err = pull(t, c, "me/nothing:Q8_0")
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("missing repository with a token: %v", err)
	}
}

// TestCachedByOthers fills the cache as huggingface-cli does (blob,
// relative link, refs/main) and checks that nothing is downloaded.
func TestCachedByOthers(t *testing.T) {
	srv, c, files, commit := fixture(t)
	data := files["Qwen3-0.6B-Q8_0.gguf"]
	sum := sha256.Sum256(data)
	dir := filepath.Join(c.Cache, "models--Qwen--Qwen3-0.6B-GGUF")
	os.MkdirAll(filepath.Join(dir, "blobs"), 0o755)
	os.MkdirAll(filepath.Join(dir, "snapshots", commit), 0o755)
	os.MkdirAll(filepath.Join(dir, "refs"), 0o755)
	os.WriteFile(filepath.Join(dir, "blobs", hex.EncodeToString(sum[:])), data, 0o644)
	os.Symlink("../../blobs/"+hex.EncodeToString(sum[:]), filepath.Join(dir, "snapshots", commit, "Qwen3-0.6B-Q8_0.gguf"))
	os.WriteFile(filepath.Join(dir, "refs", "main"), []byte(commit), 0o644)

	paths, _, err := pull(t, c, repoID+":Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", data)
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Server != "hub" {
		t.Errorf("requests %+v, want the listing alone", reqs)
	}
	// Offline: no request at all, the same path.
	c.Offline = true
	offline, s, err := pull(t, c, repoID+":Q8_0")
	if err != nil || offline[0] != paths[0] || !s.Cached {
		t.Errorf("offline: %q, %v", offline, err)
	}
	// Offline, the default quantization is chosen among cached files.
	if offline, _, err = pull(t, c, repoID); err != nil || offline[0] != paths[0] {
		t.Errorf("offline default: %q, %v", offline, err)
	}
	_, _, err = pull(t, c, repoID+":Q4_K_M")
	if err == nil || !strings.Contains(err.Error(), "looking in the cache only") {
		t.Errorf("offline, a quantization not cached: %v", err)
	}
	_, _, err = pull(t, c, "other/repo:Q8_0")
	if err == nil || !strings.Contains(err.Error(), "not in the cache") || !strings.Contains(err.Error(), "offline") {
		t.Errorf("offline, a repository not cached: %v", err)
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Errorf("offline made requests %+v", reqs)
	}
	// The hub unreachable: the cached copy is used, with a note.
	c.Offline = false
	srv.Close()
	_, s, err = pull(t, c, repoID+":Q8_0")
	if err != nil || !strings.Contains(s.Note, "not reachable") {
		t.Errorf("hub down, file cached: note %q, %v", s.Note, err)
	}
	if _, _, err = pull(t, c, "other/repo:Q8_0"); err == nil {
		t.Error("hub down, nothing cached: no error")
	}
}

// TestSharedBlob checks that a blob already present (another commit's
// snapshot holds the same content) is linked, not downloaded.
func TestSharedBlob(t *testing.T) {
	srv, c, files, _ := fixture(t)
	if _, _, err := pull(t, c, repoID+":Q8_0"); err != nil {
		t.Fatal(err)
	}
	commit := srv.Add(repoID, map[string][]byte{"Qwen3-0.6B-Q8_0.gguf": files["Qwen3-0.6B-Q8_0.gguf"], "README.md": []byte("new\n")}, false)
	srv.Requests()
	paths, s, err := pull(t, c, repoID+":Q8_0")
	if err != nil || s.Commit != commit {
		t.Fatalf("%+v, %v", s, err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
	if n := count(srv.Requests(), "cdn", "GET"); n != 0 {
		t.Errorf("%d CDN requests for a blob in the cache", n)
	}
}

func TestSplit(t *testing.T) {
	srv, c, _, _ := fixture(t)
	parts := map[string][]byte{}
	for i, n := range []string{"m-Q8_0-00001-of-00003.gguf", "m-Q8_0-00002-of-00003.gguf", "m-Q8_0-00003-of-00003.gguf"} {
		parts[n] = content(uint64(10+i), 1000+i)
	}
	srv.Add("o/split", parts, false)
	paths, s, err := pull(t, c, "o/split:Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 {
		t.Fatalf("%d paths for 3 parts: %q", len(paths), paths)
	}
	for i, p := range paths {
		if got, _ := os.ReadFile(p); !bytes.Equal(got, parts[s.Files[i]]) || filepath.Base(p) != s.Files[i] {
			t.Errorf("part %d: %s", i, p)
		}
	}
}

// TestConcurrent runs two fetches of one file into one cache: the lock
// makes the second wait and take the first one's blob.
func TestConcurrent(t *testing.T) {
	srv, c, files, commit := fixture(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	paths := make([][]string, 2)
	for i := range 2 {
		wg.Go(func() {
			cc := *c
			paths[i], _, errs[i] = pull(t, &cc, repoID+":Q8_0")
		})
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		checkPulled(t, c, paths[i][0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
	}
	if n := count(srv.Requests(), "cdn", "GET"); n != 1 {
		t.Errorf("%d CDN downloads, want 1", n)
	}
}

func TestFromEnv(t *testing.T) {
	home := t.TempDir()
	for _, v := range []string{"HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE", "XDG_CACHE_HOME"} {
		t.Setenv(v, "")
	}
	t.Setenv("HF_HOME", home)
	os.WriteFile(filepath.Join(home, "token"), []byte("hf_file\n"), 0o600)
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != DefaultEndpoint || c.Cache != filepath.Join(home, "hub") || c.Token != "hf_file" || c.Offline {
		t.Errorf("HF_HOME alone: %+v", c)
	}
	t.Setenv("HF_ENDPOINT", "http://127.0.0.1:1/mirror/")
	t.Setenv("HF_TOKEN", "hf_env")
	t.Setenv("HF_HUB_CACHE", "/x/cache")
	t.Setenv("HF_HUB_OFFLINE", "yes")
	if c, err = FromEnv(); err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "http://127.0.0.1:1/mirror" || c.Cache != "/x/cache" || c.Token != "hf_env" || !c.Offline {
		t.Errorf("all set: %+v", c)
	}
	t.Setenv("HF_ENDPOINT", "huggingface.co")
	if _, err := FromEnv(); err == nil {
		t.Error("HF_ENDPOINT without a scheme accepted")
	}
}

// TestEndpoint checks that HF_ENDPOINT is where the requests go.
func TestEndpoint(t *testing.T) {
	srv, _, files, commit := fixture(t)
	t.Setenv("HF_ENDPOINT", srv.URL()+"/")
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	paths, _, err := pull(t, c, repoID+":Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
}

// TestCacheUnwritable checks that a cache that cannot be written gives an
// error naming the cache, and no panic or partial state.
func TestCacheUnwritable(t *testing.T) {
	_, c, _, _ := fixture(t)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	c.Cache = filepath.Join(file, "hub") // a path below a regular file
	_, _, err := pull(t, c, repoID+":Q8_0")
	if err == nil || !strings.Contains(err.Error(), "the hub cache") || !strings.Contains(err.Error(), file) {
		t.Errorf("err = %v, want one naming the cache", err)
	}
}

// TestRenamedAndRevision pulls from a renamed repository (the hub
// redirects with a relative Location, which keeps the token) and at a
// given commit.
func TestRenamedAndRevision(t *testing.T) {
	srv, c, files, commit := fixture(t)
	srv.Rename(repoID, "Qwen/Qwen3-0.6B-GGUF-new")
	c.Token = srv.Token
	paths, s, err := pull(t, c, repoID+":Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
	if s.Commit != commit {
		t.Errorf("commit %s, want %s", s.Commit, commit)
	}
	for _, r := range srv.Requests() {
		if r.Server == "hub" && r.Auth != "Bearer "+srv.Token {
			t.Errorf("%s %s lost the token on a relative redirect", r.Method, r.Path)
		}
	}

	_, c2, _, commit2 := fixture(t)
	r := Ref{Repo: repoID, Quant: "Q4_K_M", Revision: commit2}
	s, err = c2.Resolve(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Fetch(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c2.Cache, "models--Qwen--Qwen3-0.6B-GGUF", "refs")); !os.IsNotExist(err) {
		t.Errorf("a pull at a commit wrote refs (%v)", err)
	}
	r.Revision = "v9"
	if _, err := c2.Resolve(context.Background(), r); err == nil || !strings.Contains(err.Error(), "no such revision") {
		t.Errorf("missing revision: %v", err)
	}
}

// TestStall checks that a transfer that stops sending without closing is
// given up after StallTimeout and resumed.
func TestStall(t *testing.T) {
	srv, c, files, commit := fixture(t)
	c.StallTimeout = 200 * time.Millisecond
	var notes bytes.Buffer
	c.Info = &notes
	srv.Stall(1, 1<<20)
	paths, _, err := pull(t, c, repoID+":Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
	if !strings.Contains(notes.String(), "no data for 200ms; retrying from byte 1048576") {
		t.Errorf("notes %q", notes.String())
	}
}

// TestExpiredLocation checks that a CDN address that expires during a
// download is renewed through the hub and the download continues.
func TestExpiredLocation(t *testing.T) {
	srv, c, files, commit := fixture(t)
	srv.Cut(1, 1<<20)
	var once sync.Once
	c.Progress = func(file string, have, size int64) {
		if have >= 1<<20 {
			once.Do(srv.Expire)
		}
	}
	var notes bytes.Buffer
	c.Info = &notes
	paths, _, err := pull(t, c, repoID+":Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, c, paths[0], commit, "Qwen3-0.6B-Q8_0.gguf", files["Qwen3-0.6B-Q8_0.gguf"])
	if !strings.Contains(notes.String(), "403 Forbidden; asked the hub for a new address") {
		t.Errorf("notes %q", notes.String())
	}
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, r.Server+" "+r.Method+" "+r.Range)
	}
	if want := "hub GET ,hub HEAD ,cdn GET ,cdn GET bytes=1048576-,hub HEAD ,cdn GET bytes=1048576-"; strings.Join(got, ",") != want {
		t.Errorf("requests %q, want %q", strings.Join(got, ","), want)
	}
}

// BenchmarkFetch downloads a 64 MiB file from the stand-in over the
// loopback interface into an empty cache: the transfer, the sha256 and
// the writes, what a pull costs apart from the network.
func BenchmarkFetch(b *testing.B) {
	srv := hubtest.New()
	defer srv.Close()
	srv.Add("o/big", map[string][]byte{"m-Q8_0.gguf": content(7, 64<<20)}, false)
	b.SetBytes(64 << 20)
	for b.Loop() {
		c := &Client{Endpoint: srv.URL(), Cache: b.TempDir()}
		s, err := c.Resolve(context.Background(), Ref{Repo: "o/big", Quant: "Q8_0"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Fetch(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestShortServer checks that a CDN holding fewer bytes than the hub says
// (its Range requests then answered 416) ends in an error, not a loop, and
// leaves nothing in the cache.
func TestShortServer(t *testing.T) {
	srv, c, _, commit := fixture(t)
	c.Retries = 3
	srv.Truncate(repoID, "Qwen3-0.6B-Q8_0.gguf", 1<<20)
	_, _, err := pull(t, c, repoID+":Q8_0")
	if err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts without progress") {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, r := range srv.Requests() {
		if r.Server == "cdn" {
			got = append(got, r.Range)
		}
	}
	if want := ",bytes=1048576-,,bytes=1048576-"; strings.Join(got, ",") != want {
		t.Errorf("CDN ranges %q, want %q", strings.Join(got, ","), want)
	}
	if _, ok := newCache(c.Cache, repoID).cached(commit, "Qwen3-0.6B-Q8_0.gguf"); ok {
		t.Error("the short file is in the snapshot")
	}
}

// TestDiskFull checks that a file larger than the free space is refused
// before its download starts, with the sizes and the cache named.
func TestDiskFull(t *testing.T) {
	srv, c, _, _ := fixture(t)
	defer func(f func(string) (int64, bool)) { freeSpaceOf = f }(freeSpaceOf)
	freeSpaceOf = func(string) (int64, bool) { return 1000, true }
	_, _, err := pull(t, c, repoID+":Q8_0")
	if err == nil || !strings.Contains(err.Error(), "needs 3145728 more bytes but the file system of "+c.Cache+" has 1000 free") {
		t.Errorf("err = %v", err)
	}
	if n := count(srv.Requests(), "cdn", "GET"); n != 0 {
		t.Errorf("%d CDN requests for a file that does not fit", n)
	}
	if blobs, _ := os.ReadDir(filepath.Join(c.Cache, "models--Qwen--Qwen3-0.6B-GGUF", "blobs")); len(blobs) != 0 {
		t.Errorf("left behind: %v", blobs)
	}
}

// TestHostileListing has the hub list file names that would land outside
// the repository's snapshot (.., absolute, empty elements, backslashes):
// they are never candidates, so nothing is written outside the cache.
func TestHostileListing(t *testing.T) {
	srv, c, files, _ := fixture(t)
	good := files["Qwen3-0.6B-Q8_0.gguf"]
	hostile := map[string][]byte{
		"../../../escape-Q4_0.gguf": good,
		"/abs-Q4_0.gguf":            good,
		"a//b-Q4_0.gguf":            good,
		`..\..\win-Q4_0.gguf`:       good,
		"ok/../../up-Q4_0.gguf":     good,
	}
	srv.Add("evil/x-GGUF", hostile, false)
	_, _, err := pull(t, c, "evil/x-GGUF:Q4_0")
	if err == nil || !strings.Contains(err.Error(), "no GGUF") {
		t.Errorf("a listing of only hostile names: %v, want no GGUF model file", err)
	}
	hostile["fine-Q4_0.gguf"] = good
	commit := srv.Add("evil/y-GGUF", hostile, false)
	paths, _, err := pull(t, c, "evil/y-GGUF:Q4_0")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.Cache, "models--evil--y-GGUF", "snapshots", commit, "fine-Q4_0.gguf"); len(paths) != 1 || paths[0] != want {
		t.Errorf("paths %q, want [%s]", paths, want)
	}
	filepath.WalkDir(filepath.Dir(c.Cache), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(p, c.Cache+string(filepath.Separator)) {
			t.Errorf("%s written outside the cache", p)
		}
		return nil
	})
}
