//go:build !(linux || darwin || freebsd)

package outfile

// freeSpace reports that the free space is not known.
func freeSpace(dir string) (int64, bool) { return 0, false }
