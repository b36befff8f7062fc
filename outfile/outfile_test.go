package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"inferno/internal/fifo"
)

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "out.bin")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("the file is in place before Commit")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // after Commit: nothing
	if data, err := os.ReadFile(path); err != nil || string(data) != "hello" {
		t.Fatalf("file %q, %v", data, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if names := entries(t, filepath.Dir(path)); len(names) != 1 {
		t.Errorf("files left: %v", names)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("Write after Commit succeeded")
	}
}

// TestTempName checks that the data written can be read back through
// TempName before Commit, from a file in the destination's folder.
func TestTempName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.bin")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	f.Write([]byte("hello"))
	tmp := f.TempName()
	if filepath.Dir(tmp) != filepath.Dir(path) {
		t.Errorf("temporary file %s, want one in %s", tmp, filepath.Dir(path))
	}
	if data, err := os.ReadFile(tmp); err != nil || string(data) != "hello" {
		t.Errorf("read back %q, %v", data, err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if f.TempName() != "" {
		t.Errorf("TempName after Commit = %q", f.TempName())
	}
}

// TestAbort checks that Abort removes the file and the folders Create
// made, and keeps the folders that were there.
func TestAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "out.bin")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	f.Abort()
	if names := entries(t, dir); len(names) != 0 {
		t.Errorf("left behind in %s: %v", dir, names)
	}
	// An existing file stays as it was.
	path = filepath.Join(dir, "old.bin")
	os.WriteFile(path, []byte("old"), 0o600)
	if f, err = Create(path); err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	f.Abort()
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("aborted write changed the file to %q", data)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("left behind in %s: %v", dir, names)
	}
}

// TestNotRegular checks that a folder or a special file is refused, not
// replaced by the renamed file.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	if _, err := Create(sub); err == nil || err.Error() != "output "+sub+" is a folder" {
		t.Errorf("folder: error %v", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	pipe := filepath.Join(dir, "fifo")
	if err := fifo.Make(pipe); err != nil {
		t.Skip(err)
	}
	if _, err := Create(pipe); err == nil || !strings.Contains(err.Error(), "is a named pipe, not a regular file") {
		t.Errorf("named pipe: error %v", err)
	}
	if st, err := os.Lstat(pipe); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced: %v, %v", st.Mode(), err)
	}
	if names := entries(t, dir); len(names) != 2 {
		t.Errorf("left behind in %s: %v", dir, names)
	}
	// A path below a file.
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Create(filepath.Join(file, "x")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("below a file: error %v", err)
	}
}

// TestSymlink checks that writing through a symbolic link replaces its
// target and keeps the link.
func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.bin")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.bin")
	if err := os.Symlink("target.bin", link); err != nil {
		t.Skip(err)
	}
	f, err := Create(link)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "new" {
		t.Errorf("target holds %q, want new", data)
	}
}

func TestReserve(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "out.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if err := f.Reserve(1 << 10); err != nil {
		t.Errorf("1 KiB: %v", err)
	}
	if _, ok := FreeSpace(dir); !ok {
		t.Skip("free space unknown")
	}
	if err := f.Reserve(1 << 61); err == nil || !strings.Contains(err.Error(), "the file needs 2.0 EiB but its file system has") {
		t.Errorf("2 EiB: error %v", err)
	}
}

// TestRemoveStale: Create removes the temporary files of writers that no
// longer run (and those of the older naming past StaleAge), and nothing
// else.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1) to get the id of a finished process:", err)
	}
	deadPID := dead.Process.Pid
	files := map[string]bool{ // name: removed
		fmt.Sprintf(".model.gguf.%d-12345.tmp", deadPID):      true,
		fmt.Sprintf(".other.bin.%d-9.tmp", deadPID):           true,
		fmt.Sprintf(".model.gguf.%d-12345.tmp", os.Getppid()): false, // its writer runs
		fmt.Sprintf(".model.gguf.%d-777.tmp", os.Getpid()):    false, // this process writes it
		".model.gguf.123456789.tmp":                           true,  // older naming, old
		".model.gguf.987654321.tmp":                           false, // older naming, recent
		".hidden.tmp":                                         false,
		"notes.123.tmp":                                       false,
		fmt.Sprintf("model.gguf.%d-1.tmp", deadPID):           false, // not hidden: not ours
	}
	old := time.Now().Add(-2 * StaleAge)
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(filepath.Join(dir, ".model.gguf.123456789.tmp"), old, old); err != nil {
		t.Fatal(err)
	}
	f, err := Create(filepath.Join(dir, "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if !strings.Contains(filepath.Base(f.TempName()), fmt.Sprintf(".%d-", os.Getpid())) {
		t.Errorf("temporary file %s does not name its process %d", f.TempName(), os.Getpid())
	}
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := errors.Is(err, fs.ErrNotExist); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
}
