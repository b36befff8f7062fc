//go:build !unix

package quantize

// release does nothing on Windows (and the other systems without the
// unix build tag): there is no MADV_DONTNEED for a file view, and the
// pages read leave the working set when the system trims it.
func release(b []byte) {}
