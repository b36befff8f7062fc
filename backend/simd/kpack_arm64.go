//go:build arm64 && !purego

package simd

import "inferno/numfmt"

// The packers of the K tile (kpack_arm64.s, kpack2_arm64.s): packKGo's
// bytes.

//go:noescape
func packQ2KNEON(dst, w *byte, rb, nb int)

//go:noescape
func packQ3KNEON(dst, w *byte, rb, nb int)

//go:noescape
func packQ4KNEON(dst, w *byte, rb, nb int)

//go:noescape
func packQ5KNEON(dst, w *byte, rb, nb int)

//go:noescape
func packQ6KNEON(dst, w *byte, rb, nb int)

//go:noescape
func packIQ4XSNEON(dst, w *byte, rb, nb int, kv *[16]int8)

// kPackArgs checks the arguments of a K packer.
func kPackArgs(dst, w []byte, rb, bb, nb, nsub int) {
	_, _ = dst[nb*kPackBytes(nsub)-1], w[7*rb+nb*bb-1]
}

func packQ2K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ2_KBytes, nb, 16)
	packQ2KNEON(&dst[0], &w[0], rb, nb)
}

func packQ3K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ3_KBytes, nb, 16)
	packQ3KNEON(&dst[0], &w[0], rb, nb)
}

func packQ4K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ4_KBytes, nb, 8)
	packQ4KNEON(&dst[0], &w[0], rb, nb)
}

func packQ5K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ5_KBytes, nb, 8)
	packQ5KNEON(&dst[0], &w[0], rb, nb)
}

func packQ6K(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockQ6_KBytes, nb, 16)
	packQ6KNEON(&dst[0], &w[0], rb, nb)
}

func packIQ4XS(dst, w []byte, rb, nb int) {
	kPackArgs(dst, w, rb, numfmt.BlockIQ4_XSBytes, nb, 8)
	packIQ4XSNEON(&dst[0], &w[0], rb, nb, &tabIQ4NL.kv)
}
