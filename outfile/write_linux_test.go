package outfile

import (
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWriteError checks that a failed write names the destination and
// that nothing is left behind: RLIMIT_FSIZE makes the write fail, on
// Linux only.
func TestWriteError(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "new", "out.bin")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	lim := old
	lim.Cur = 4096
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	_, err = f.Write(make([]byte, 8192))
	unix.Setrlimit(unix.RLIMIT_FSIZE, &old)
	if err == nil {
		_, err = f.Write(make([]byte, 8192))
	}
	if err == nil || err.Error() != "writing "+path+": "+syscall.EFBIG.Error() {
		t.Errorf("error %v, want one naming %s", err, path)
	}
	f.Abort()
	if names := entries(t, dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}
