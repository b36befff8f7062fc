//go:build !unix

package hub

import (
	"errors"
	"os"
)

// tryLock takes the lock (on Windows, and the other systems without the
// unix build tag's flock) by creating the file at path, which must not
// exist; ok is false while another process holds it. A process that
// crashes leaves the file behind, to be removed by hand.
func tryLock(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	f.Close()
	return func() { os.Remove(path) }, true, nil
}
