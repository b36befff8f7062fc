//go:build linux || darwin || freebsd

package outfile

import "golang.org/x/sys/unix"

// FreeSpace returns the bytes an unprivileged user may still write to
// the file system holding dir.
func FreeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	return int64(min(free, 1<<62)), true
}
