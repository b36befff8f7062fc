//go:build !linux

package cuda

// releaseHostPages does nothing where /proc/self/maps is not there
// (macOS, Windows): the pages of the mapped model file stay in the
// process's resident set until the system trims it or the file closes.
func releaseHostPages(bufs ...[]byte) int64 { return 0 }

// residentBytes returns -1: unknown without /proc/self/status.
func residentBytes() int64 { return -1 }
