//go:build !amd64 || purego

package simd

// prefetchRows is a hint that rows rows of k and v, kstride elements
// apart, hd elements each, are about to be read; without a prefetch
// kernel it does nothing.
func prefetchRows[E kvElem](k, v []E, hd, kstride, rows int) {}
