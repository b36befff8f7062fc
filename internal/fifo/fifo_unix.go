//go:build unix

package fifo

import "golang.org/x/sys/unix"

// Make creates a named pipe at path, readable and writable by its owner
// and readable by others.
func Make(path string) error { return unix.Mkfifo(path, 0o644) }
