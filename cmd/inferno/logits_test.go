package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferno/internal/fifo"
)

// TestLogitsOutput checks where logits writes: a folder or a special file
// (standing for a device such as /dev/null) is refused with an error
// naming it and left as it is, a failing run removes the folders made for
// the output, and a symbolic link is written through and kept.
func TestLogitsOutput(t *testing.T) {
	t.Parallel()
	const size = 151936 * 4
	logits := func(t *testing.T, out string, tokens string) (string, int) {
		t.Helper()
		_, errOut, code := run(t, "", "logits", goldenModel, "--tokens", tokens, "--out", out, "--backend", "scalar")
		return errOut, code
	}

	t.Run("folder", func(t *testing.T) {
		out := t.TempDir()
		errOut, code := logits(t, out, "9707,11")
		if code == 0 || !strings.Contains(errOut, out+" is a folder") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("exit %d, stderr %q: want one line saying %s is a folder", code, errOut, out)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("the folder holds %v, want nothing", entries)
		}
	})

	t.Run("special file", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "pipe")
		if err := fifo.Make(out); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		errOut, code := logits(t, out, "9707,11")
		if code == 0 || !strings.Contains(errOut, out+" is a named pipe, not a regular file") {
			t.Errorf("exit %d, stderr %q: want %s refused as a named pipe", code, errOut, out)
		}
		if st, err := os.Lstat(out); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("the named pipe was replaced: %v", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("the folder holds %v, want the pipe alone", entries)
		}
	})

	t.Run("failing run", func(t *testing.T) {
		base := t.TempDir()
		out := filepath.Join(base, "new", "folder", "last.f32")
		errOut, code := logits(t, out, "999999") // outside the vocabulary: the forward pass fails
		if code == 0 || !strings.Contains(errOut, "outside the vocabulary") {
			t.Errorf("exit %d, stderr %q: want the vocabulary error", code, errOut)
		}
		if entries, _ := os.ReadDir(base); len(entries) != 0 {
			t.Errorf("left behind: %v", entries)
		}
	})

	t.Run("symbolic link", func(t *testing.T) {
		targetDir, linkDir := t.TempDir(), t.TempDir()
		target := filepath.Join(targetDir, "last.f32")
		if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(linkDir, "link.f32")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if errOut, code := logits(t, link, "9707,11"); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v", err)
		}
		if st, err := os.Stat(target); err != nil || st.Size() != size {
			t.Errorf("the link's target: %v, want %d bytes", err, size)
		}
		for _, d := range []string{targetDir, linkDir} {
			if entries, _ := os.ReadDir(d); len(entries) != 1 {
				t.Errorf("%s holds %v, want one entry", d, entries)
			}
		}
	})
}
