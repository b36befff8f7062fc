package convert_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferno/convert"
	"inferno/gguf"
	"inferno/internal/fifo"
)

// TestOutputFolderUntouched checks that a folder as output is refused with
// an error naming it, and that nothing is written into it.
func TestOutputFolderUntouched(t *testing.T) {
	dir := t.TempDir()
	smallCheckpoint(t).write(t, dir)
	out := t.TempDir()
	_, err := convert.Convert(context.Background(), dir, out, convert.Options{})
	if err == nil || !strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("err %v, want one naming %s as a folder", err, out)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the output folder holds %d entries, want none", len(entries))
	}
}

// TestOutputSpecialFile checks that a named pipe, standing for a device
// such as /dev/null, is refused rather than replaced by the renamed file.
func TestOutputSpecialFile(t *testing.T) {
	dir := t.TempDir()
	smallCheckpoint(t).write(t, dir)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "pipe")
	if err := fifo.Make(out); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := convert.Convert(context.Background(), dir, out, convert.Options{})
	if err == nil || !strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err %v, want one naming %s as not a regular file", err, out)
	}
	if st, err := os.Lstat(out); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced: %v, mode %v", err, st.Mode())
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 1 {
		t.Errorf("the output folder holds %d entries, want the pipe alone", len(entries))
	}
}

// TestOutputFoldersRemoved checks that a conversion failing part way
// removes the folders it made for the output along with the temporary
// file.
func TestOutputFoldersRemoved(t *testing.T) {
	dir := t.TempDir()
	smallCheckpoint(t).write(t, dir)
	base := t.TempDir()
	out := filepath.Join(base, "new", "folder", "out.gguf")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := false
	opts := convert.Options{Progress: func(done, total int64) {
		started = true
		cancel() // fail once writing has begun
	}}
	_, err := convert.Convert(ctx, dir, out, opts)
	if err == nil || !started {
		t.Fatalf("err %v, progress reported %v: want a cancelled conversion", err, started)
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("left behind in %s: %v", base, entries)
	}
}

// TestOutputSymlink checks that a symbolic link as output is written
// through: the file it points to gets the model and the link stays.
func TestOutputSymlink(t *testing.T) {
	dir := t.TempDir()
	smallCheckpoint(t).write(t, dir)
	targetDir, linkDir := t.TempDir(), t.TempDir()
	target := filepath.Join(targetDir, "model.gguf")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(linkDir, "link.gguf")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := convert.Convert(context.Background(), dir, link, convert.Options{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if got, err := os.Readlink(link); err != nil || got != target {
		t.Errorf("link points to %q (%v), want %q", got, err, target)
	}
	f, err := gguf.Open(target)
	if err != nil {
		t.Fatalf("the link's target: %v", err)
	}
	f.Close()
	for _, d := range []string{targetDir, linkDir} {
		if l := leftovers(t, d); len(l) != 0 {
			t.Errorf("temporary files left in %s: %v", d, l)
		}
	}
}
