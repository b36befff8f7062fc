//go:build !unix

package kvcache

// mapMemory allocates n bytes on the Go heap where anonymous mappings are
// not available.
func mapMemory(n int64) ([]byte, error) { return make([]byte, n), nil }

func unmapMemory([]byte) error { return nil }
