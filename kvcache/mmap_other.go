//go:build !unix

package kvcache

// mapMemory allocates n bytes on the Go heap where anonymous mappings are
// not available (Windows, which has no unix build tag): zeroed, as a
// mapping is, and counted in the Go heap's size.
func mapMemory(n int64) ([]byte, error) { return make([]byte, n), nil }

// unmapMemory does nothing: the garbage collector frees the memory.
func unmapMemory([]byte) error { return nil }
