//go:build unix

package quantize

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// release tells the kernel that the pages wholly inside b, a part of a
// read-only file mapping, are not needed any more, so that they leave the
// process's resident set. A page used again after all is read back from
// the page cache or the file, so releasing is always safe.
func release(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first := (start + page - 1) &^ (page - 1)
	last := (start + uintptr(len(b))) &^ (page - 1)
	if last <= first {
		return
	}
	unix.Madvise(b[first-start:last-start], unix.MADV_DONTNEED) // a hint; failure is harmless
}
