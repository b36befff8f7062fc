//go:build !linux

package cuda

// releaseHostPages does nothing where /proc/self/maps is not there.
func releaseHostPages(bufs ...[]byte) int64 { return 0 }

// residentBytes returns -1: unknown.
func residentBytes() int64 { return -1 }
