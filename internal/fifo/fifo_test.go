package fifo

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestMake(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	err := Make(path)
	if runtime.GOOS == "windows" {
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("Make on windows: error %v, want one naming %s", err, path)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s has mode %v, want a named pipe", path, st.Mode())
	}
	if err := Make(path); err == nil {
		t.Error("Make over an existing pipe succeeded")
	}
}
