//go:build !(linux || darwin || freebsd)

package hub

// freeSpace reports that free space is not known here.
func freeSpace(dir string) (int64, bool) { return 0, false }
