//go:build !unix

package fifo

import (
	"fmt"
	"runtime"
)

// Make returns an error: Windows (and the other systems without the unix
// build tag) has no named pipes in its file system, and the tests that
// call Make skip there.
func Make(path string) error {
	return fmt.Errorf("cannot make the named pipe %s: %s has no named pipes in its file system", path, runtime.GOOS)
}
