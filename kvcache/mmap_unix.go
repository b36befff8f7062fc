//go:build unix

package kvcache

import "syscall"

// mapMemory maps n bytes of zeroed anonymous memory, which the operating
// system backs with pages as they are first written.
func mapMemory(n int64) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmapMemory(b []byte) error { return syscall.Munmap(b) }
