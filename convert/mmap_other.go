//go:build !unix && !windows

package convert

import (
	"io"
	"os"
)

// mapFile reads the file into memory where memory mapping is not available.
func mapFile(fh *os.File, size int) ([]byte, func() error, error) {
	data := make([]byte, size)
	if _, err := fh.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}

// release does nothing where files are not memory-mapped.
func release(m, b []byte) {}
