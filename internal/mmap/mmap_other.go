//go:build !unix && !windows

package mmap

import (
	"io"
	"os"
)

// Map reads the file into memory where memory mapping is not available.
func Map(fh *os.File, size int, sequential bool) ([]byte, func() error, error) {
	data := make([]byte, size)
	if _, err := fh.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}

// Release does nothing where files are not memory-mapped.
func Release(m, b []byte) {}
