//go:build amd64 && !purego

package simd

import "unsafe"

//go:noescape
func prefetchRowsAVX2(k, v unsafe.Pointer, stride, rows, width int)

// prefetchRows prefetches the first hd elements of rows rows of k and v,
// kstride elements apart, which a pass over those keys and values is
// about to read: the kernels prefetch a pass's keys and values a few rows
// ahead of those they compute with, and this covers a pass's first rows.
// It reads nothing outside k and v.
func prefetchRows[E kvElem](k, v []E, hd, kstride, rows int) {
	if !accel || rows <= 0 {
		return
	}
	var e E
	size := int(unsafe.Sizeof(e))
	_, _ = k[(rows-1)*kstride+hd-1], v[(rows-1)*kstride+hd-1]
	prefetchRowsAVX2(unsafe.Pointer(&k[0]), unsafe.Pointer(&v[0]), kstride*size, rows, hd*size)
}
