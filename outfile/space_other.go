//go:build !(linux || darwin || freebsd || windows)

package outfile

// FreeSpace reports that the free space is not known (ok false).
func FreeSpace(dir string) (int64, bool) { return 0, false }
