//go:build unix

package mmap

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Map maps size bytes of fh read-only into memory and returns them with
// the function that unmaps them. With sequential the kernel is advised
// that the mapping will be read in order.
func Map(fh *os.File, size int, sequential bool) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	data, err := unix.Mmap(int(fh.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap: %w", err)
	}
	if sequential {
		unix.Madvise(data, unix.MADV_SEQUENTIAL) // a hint; failure is harmless
	}
	return data, func() error { return unix.Munmap(data) }, nil
}

// Release tells the kernel that the pages of the mapping m that hold b
// are not needed any more, so that they leave the process's resident set.
// m is a mapping made by Map, and b lies within it: a page used again
// after all is read back from the page cache or the file, so releasing is
// always safe. The page that holds b's end is kept when b ends inside it,
// as the data after b is likely next.
func Release(m, b []byte) {
	if len(b) == 0 || len(m) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - base
	end := start + uintptr(len(b))
	if end > uintptr(len(m)) {
		return
	}
	first, last := start&^(page-1), end&^(page-1) // m starts on a page boundary
	if last <= first {
		return
	}
	unix.Madvise(m[first:last], unix.MADV_DONTNEED) // a hint; failure is harmless
}
