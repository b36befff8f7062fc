// Package mmap maps files read-only into memory, where the system has
// memory mapping (Unix: mmap; Windows: CreateFileMapping and
// MapViewOfFile), and reads them into memory elsewhere. The GGUF reader
// and the checkpoint converter read their files through it.
package mmap
