package mmap

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Map maps size bytes of fh read-only into memory, as on Unix, with
// CreateFileMapping and MapViewOfFile. The view outlives fh and its
// mapping object, which are closed here and by the caller; while it is
// mapped, Windows refuses to delete or truncate the file.
func Map(fh *os.File, size int, sequential bool) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	h, err := windows.CreateFileMapping(windows.Handle(fh.Fd()), nil, windows.PAGE_READONLY, 0, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("CreateFileMapping: %w", err)
	}
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_READ, 0, 0, uintptr(size))
	windows.CloseHandle(h) // the view keeps the mapping alive
	if err != nil {
		return nil, nil, fmt.Errorf("MapViewOfFile: %w", err)
	}
	// addr is memory outside Go's heap; the copy through a pointer keeps
	// vet's unsafeptr check quiet, as the conversion is sound here.
	data := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), size)
	return data, func() error { return windows.UnmapViewOfFile(addr) }, nil
}

// Release does nothing on Windows: it has no MADV_DONTNEED for a file
// view, and the pages read leave the working set when Windows trims it
// under memory pressure.
func Release(m, b []byte) {}
