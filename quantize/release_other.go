//go:build !unix

package quantize

// release does nothing where files are not memory-mapped.
func release(b []byte) {}
