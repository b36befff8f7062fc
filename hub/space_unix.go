//go:build linux || darwin || freebsd

package hub

import "golang.org/x/sys/unix"

// freeSpace returns the bytes an unprivileged user may still write to
// the file system holding dir.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(min(uint64(st.Bavail)*uint64(st.Bsize), 1<<62)), true
}
