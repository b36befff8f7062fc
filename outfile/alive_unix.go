//go:build unix

package outfile

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process pid runs on this machine (as far
// as can be told: one that exists but belongs to another user counts).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
